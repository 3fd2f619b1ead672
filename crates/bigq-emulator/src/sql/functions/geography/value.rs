//! A GEOGRAPHY value: WKT text (the column's Arrow type is Utf8, as BigQuery sends GEOGRAPHY
//! on the wire) parsed into points, lines and polygons, and written back as BigQuery writes
//! WKT and GeoJSON.

use std::str::FromStr;

use datafusion::common::{DataFusionError, Result as DfResult};
use wkt::Wkt;
use wkt::types::{Coord, LineString, Polygon};

use super::sphere::distance;

/// A geography, parsed. `POINT EMPTY` and every other empty input become the empty
/// collection, as in BigQuery.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Geo {
    Point(Coord),
    LineString(Vec<Coord>),
    Polygon(Vec<Vec<Coord>>),
    MultiPoint(Vec<Coord>),
    MultiLineString(Vec<Vec<Coord>>),
    MultiPolygon(Vec<Vec<Vec<Coord>>>),
    Collection(Vec<Geo>),
}

fn line(l: &LineString) -> Vec<Coord> {
    l.coords().to_vec()
}

fn rings(p: &Polygon) -> Vec<Vec<Coord>> {
    p.rings().iter().map(line).collect()
}

impl Geo {
    pub(super) fn parse(text: &str) -> Result<Geo, String> {
        let wkt = Wkt::<f64>::from_str(text.trim()).map_err(|e| e.to_string())?;
        Ok(Geo::from_wkt(&wkt))
    }

    pub(super) fn from_wkt(w: &Wkt<f64>) -> Geo {
        let g = match w {
            Wkt::Point(p) => match p.coord() {
                Some(c) => Geo::Point(*c),
                None => Geo::Collection(vec![]),
            },
            Wkt::LineString(l) => Geo::LineString(line(l)),
            Wkt::Polygon(p) => Geo::Polygon(rings(p)),
            Wkt::MultiPoint(m) => Geo::MultiPoint(
                m.points()
                    .iter()
                    .filter_map(|p| p.coord().copied())
                    .collect(),
            ),
            Wkt::MultiLineString(m) => {
                Geo::MultiLineString(m.line_strings().iter().map(line).collect())
            }
            Wkt::MultiPolygon(m) => Geo::MultiPolygon(m.polygons().iter().map(rings).collect()),
            Wkt::GeometryCollection(c) => {
                Geo::Collection(c.geometries().iter().map(Geo::from_wkt).collect())
            }
        };
        if g.is_empty() {
            Geo::Collection(vec![])
        } else {
            g
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        match self {
            Geo::Point(_) => false,
            Geo::LineString(c) | Geo::MultiPoint(c) => c.is_empty(),
            Geo::Polygon(r) | Geo::MultiLineString(r) => r.iter().all(Vec::is_empty),
            Geo::MultiPolygon(p) => p.iter().all(|r| r.iter().all(Vec::is_empty)),
            Geo::Collection(g) => g.iter().all(Geo::is_empty),
        }
    }

    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Geo::Point(_) => "ST_Point",
            Geo::LineString(_) => "ST_LineString",
            Geo::Polygon(_) => "ST_Polygon",
            Geo::MultiPoint(_) => "ST_MultiPoint",
            Geo::MultiLineString(_) => "ST_MultiLineString",
            Geo::MultiPolygon(_) => "ST_MultiPolygon",
            Geo::Collection(_) => "ST_GeometryCollection",
        }
    }

    /// 0 for points, 1 for lines, 2 for polygons, the highest of a collection's parts, -1
    /// for the empty geography.
    pub(super) fn dimension(&self) -> i64 {
        match self {
            Geo::Point(_) | Geo::MultiPoint(_) => 0,
            Geo::LineString(_) | Geo::MultiLineString(_) => 1,
            Geo::Polygon(_) | Geo::MultiPolygon(_) => 2,
            Geo::Collection(g) => g.iter().map(Geo::dimension).max().unwrap_or(-1),
        }
    }

    /// Vertices, a polygon ring's closing one included.
    pub(super) fn points(&self) -> i64 {
        let n = match self {
            Geo::Point(_) => 1,
            Geo::LineString(c) | Geo::MultiPoint(c) => c.len(),
            Geo::Polygon(r) | Geo::MultiLineString(r) => r.iter().map(Vec::len).sum(),
            Geo::MultiPolygon(p) => p.iter().flatten().map(Vec::len).sum(),
            Geo::Collection(g) => return g.iter().map(Geo::points).sum(),
        };
        n as i64
    }

    /// Points, lines and polygons in all.
    pub(super) fn parts(&self) -> usize {
        match self {
            Geo::Point(_) | Geo::LineString(_) | Geo::Polygon(_) => 1,
            Geo::MultiPoint(c) => c.len(),
            Geo::MultiLineString(r) => r.len(),
            Geo::MultiPolygon(p) => p.len(),
            Geo::Collection(g) => g.iter().map(Geo::parts).sum(),
        }
    }

    pub(super) fn wkt(&self) -> String {
        let (kind, body) = match self {
            Geo::Point(c) => ("POINT", format!("({})", coord_text(c))),
            Geo::LineString(c) => ("LINESTRING", coords_text(c)),
            Geo::MultiPoint(c) => ("MULTIPOINT", coords_text(c)),
            Geo::Polygon(r) => ("POLYGON", list_text(r, |r| coords_text(r))),
            Geo::MultiLineString(r) => ("MULTILINESTRING", list_text(r, |r| coords_text(r))),
            Geo::MultiPolygon(p) => (
                "MULTIPOLYGON",
                list_text(p, |r| list_text(r, |c| coords_text(c))),
            ),
            Geo::Collection(g) if g.is_empty() => return "GEOMETRYCOLLECTION EMPTY".to_string(),
            Geo::Collection(g) => ("GEOMETRYCOLLECTION", list_text(g, Geo::wkt)),
        };
        format!("{kind}{body}")
    }

    /// GeoJSON spaced as BigQuery writes it (`{ "type": "Point", "coordinates": [1, 2] }`).
    pub(super) fn geojson(&self) -> String {
        let (kind, body) = match self {
            Geo::Point(c) => ("Point", coord_json(c)),
            Geo::LineString(c) => ("LineString", coords_json(c)),
            Geo::MultiPoint(c) => ("MultiPoint", coords_json(c)),
            Geo::Polygon(r) => ("Polygon", list_json(r, |r| coords_json(r))),
            Geo::MultiLineString(r) => ("MultiLineString", list_json(r, |r| coords_json(r))),
            Geo::MultiPolygon(p) => (
                "MultiPolygon",
                list_json(p, |r| list_json(r, |c| coords_json(c))),
            ),
            Geo::Collection(g) => {
                let parts = if g.is_empty() {
                    "[ ]".to_string()
                } else {
                    list_json(g, Geo::geojson)
                };
                return format!("{{ \"type\": \"GeometryCollection\", \"geometries\": {parts} }}");
            }
        };
        format!("{{ \"type\": \"{kind}\", \"coordinates\": {body} }}")
    }

    /// The length of the lines, in metres (0 for points and polygons, as in BigQuery).
    pub(super) fn length(&self) -> f64 {
        let polyline = |c: &[Coord]| c.windows(2).map(|w| distance(&w[0], &w[1])).sum::<f64>();
        match self {
            Geo::LineString(c) => polyline(c),
            Geo::MultiLineString(r) => r.iter().map(|c| polyline(c)).sum(),
            Geo::Collection(g) => g.iter().map(Geo::length).sum(),
            _ => 0.0,
        }
    }

    pub(super) fn as_point(&self, function: &str) -> DfResult<&Coord> {
        match self {
            Geo::Point(c) => Ok(c),
            other => Err(unsupported(&format!(
                "{function} of a {} (bigq-emulator computes it for points only)",
                other.type_name()
            ))),
        }
    }
}

/// A number as BigQuery prints a coordinate (C's `%.15g`): at most 15 significant digits, no
/// trailing zeros, an exponent of at least two digits below 1e-4 (`4.76633008714216e-06`,
/// as in BigQuery's buffers around the origin) and from 1e15.
pub(super) fn number(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let trim = |mut s: String| {
        if s.contains('.') {
            while s.ends_with('0') {
                s.pop();
            }
            if s.ends_with('.') {
                s.pop();
            }
        }
        s
    };
    // The exponent after rounding to 15 digits.
    let sci = format!("{v:.14e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..15).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mantissa.to_string()), exp.abs());
    }
    let decimals = (14 - exp).max(0) as usize;
    trim(format!("{v:.decimals$}"))
}

fn coord_text(c: &Coord) -> String {
    format!("{} {}", number(c.x), number(c.y))
}

fn coords_text(cs: &[Coord]) -> String {
    list_text(cs, coord_text)
}

/// `(a, b, ...)`: WKT's list of parts.
fn list_text<T>(items: &[T], each: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = items.iter().map(each).collect();
    format!("({})", parts.join(", "))
}

fn coord_json(c: &Coord) -> String {
    format!("[{}, {}]", number(c.x), number(c.y))
}

fn coords_json(cs: &[Coord]) -> String {
    list_json(cs, coord_json)
}

fn list_json<T>(items: &[T], each: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = items.iter().map(each).collect();
    format!("[ {} ]", parts.join(", "))
}

pub(super) fn unsupported(what: &str) -> DataFusionError {
    DataFusionError::Execution(format!("Unsupported by bigq-emulator: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wkt(s: &str) -> String {
        Geo::parse(s).unwrap().wkt()
    }

    #[test]
    fn wkt_is_written_as_bigquery_does() {
        assert_eq!(wkt("POINT(1 2)"), "POINT(1 2)");
        assert_eq!(wkt("POINT (-122.4 37.8)"), "POINT(-122.4 37.8)");
        assert_eq!(wkt("LINESTRING(0 0,1 1, 2 2)"), "LINESTRING(0 0, 1 1, 2 2)");
        assert_eq!(
            wkt("POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))"),
            "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))"
        );
        assert_eq!(wkt("POINT EMPTY"), "GEOMETRYCOLLECTION EMPTY");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(1.49988573656168), "1.49988573656168");
        assert_eq!(number(-1e-7), "-1e-07");
        assert_eq!(number(0.0001), "0.0001");
        // BigQuery: ST_BUFFER(ST_GEOGPOINT(0, 0), 100)'s first vertex.
        assert_eq!(number(4.766_330_087_142_16e-6), "4.76633008714216e-06");
        assert_eq!(number(-8.993_075_636_486_53e-5), "-8.99307563648653e-05");
        assert_eq!(number(9.999_999_999_999_999e-5), "0.0001");
        assert_eq!(number(123.456), "123.456");
        assert_eq!(number(2e15), "2e+15");
        assert!(Geo::parse("POINT(1)").is_err());
    }

    #[test]
    fn geojson_is_spaced_as_bigquery_does() {
        let g = |s: &str| Geo::parse(s).unwrap().geojson();
        assert_eq!(
            g("POINT(3 4)"),
            r#"{ "type": "Point", "coordinates": [3, 4] }"#
        );
        assert_eq!(
            g("MULTIPOINT((0 0), (1 1))"),
            r#"{ "type": "MultiPoint", "coordinates": [ [0, 0], [1, 1] ] }"#
        );
        assert_eq!(
            g("POINT EMPTY"),
            r#"{ "type": "GeometryCollection", "geometries": [ ] }"#
        );
    }
}

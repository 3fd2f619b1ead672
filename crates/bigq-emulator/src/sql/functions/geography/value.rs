//! A GEOGRAPHY value: WKT text on the wire (the column's Arrow type is Utf8, as BigQuery sends
//! GEOGRAPHY), held as a [`geo_types::Geometry`] while a function computes on it.
//!
//! Reading goes through the georust crates: WKT with `wkt`, WKB with `wkb` (both through
//! [`from_traits`]), GeoJSON with `geojson`. Writing WKT and GeoJSON stays here, because
//! BigQuery's text is its own: `%.15g` numbers (`0.3`, `4.76633008714216e-06`, where `wkt`
//! writes Rust's shortest round trip) and `, ` between coordinates.

use std::str::FromStr;

use datafusion::common::{DataFusionError, Result as DfResult};
use geo::{CoordsIter, HasDimensions, Length};
use geo_traits::{
    CoordTrait, GeometryCollectionTrait, GeometryTrait, GeometryType, LineStringTrait,
    MultiLineStringTrait, MultiPointTrait, MultiPolygonTrait, PointTrait, PolygonTrait,
};
use geo_types::{
    Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon,
    Point, Polygon,
};
use wkt::Wkt;

use super::sphere::S2_EARTH;

/// A geography, parsed. `POINT EMPTY` and every other empty input become the empty
/// collection, as in BigQuery.
pub(super) type Geo = Geometry<f64>;

/// The empty geography, `GEOMETRYCOLLECTION EMPTY`.
pub(super) fn empty() -> Geo {
    Geometry::GeometryCollection(GeometryCollection(vec![]))
}

pub(super) fn point(c: Coord) -> Geo {
    Geometry::Point(Point(c))
}

pub(super) fn linestring(c: Vec<Coord>) -> Geo {
    Geometry::LineString(LineString(c))
}

pub(super) fn multipoint(c: Vec<Coord>) -> Geo {
    Geometry::MultiPoint(c.into_iter().map(Point).collect())
}

pub(super) fn multilinestring(l: Vec<Vec<Coord>>) -> Geo {
    Geometry::MultiLineString(MultiLineString(l.into_iter().map(LineString).collect()))
}

/// A polygon of a shell and its holes (`geo_types` closes any ring left open).
pub(super) fn polygon_of(rings: Vec<Vec<Coord>>) -> Polygon {
    let mut rings = rings.into_iter().map(LineString);
    let shell = rings.next().unwrap_or_else(|| LineString(vec![]));
    Polygon::new(shell, rings.collect())
}

pub(super) fn polygon(rings: Vec<Vec<Coord>>) -> Geo {
    Geometry::Polygon(polygon_of(rings))
}

pub(super) fn multipolygon(p: Vec<Vec<Vec<Coord>>>) -> Geo {
    Geometry::MultiPolygon(MultiPolygon(p.into_iter().map(polygon_of).collect()))
}

pub(super) fn collection(g: Vec<Geo>) -> Geo {
    Geometry::GeometryCollection(GeometryCollection(g))
}

/// A polygon's rings, shell first.
pub(super) fn rings(p: &Polygon) -> Vec<Vec<Coord>> {
    std::iter::once(p.exterior())
        .chain(p.interiors())
        .map(|r| r.0.clone())
        .collect()
}

/// The geography of a geometry read by `wkt` or `wkb`: empty points are left out of
/// multipoints and collections, and an empty whole is the empty collection.
pub(super) fn from_traits<G: GeometryTrait<T = f64>>(g: &G) -> Result<Geo, String> {
    as_given(g).map(normalized)
}

/// [`from_traits`] with each polygon's rings as the input runs them.
pub(super) fn as_given<G: GeometryTrait<T = f64>>(g: &G) -> Result<Geo, String> {
    fn coords(l: &impl LineStringTrait<T = f64>) -> Vec<Coord> {
        l.coords().map(|c| Coord { x: c.x(), y: c.y() }).collect()
    }
    fn shape(p: &impl PolygonTrait<T = f64>) -> Polygon {
        let shell = p.exterior().map(|r| coords(&r)).unwrap_or_default();
        let holes = p.interiors().map(|r| LineString(coords(&r))).collect();
        Polygon::new(LineString(shell), holes)
    }
    fn at(p: &impl PointTrait<T = f64>) -> Option<Point> {
        p.coord().map(|c| Point::new(c.x(), c.y()))
    }
    let g = match g.as_type() {
        GeometryType::Point(p) => at(p).map_or_else(empty, Geometry::Point),
        GeometryType::LineString(l) => linestring(coords(l)),
        GeometryType::Polygon(p) => Geometry::Polygon(shape(p)),
        GeometryType::MultiPoint(m) => {
            Geometry::MultiPoint(MultiPoint(m.points().filter_map(|p| at(&p)).collect()))
        }
        GeometryType::MultiLineString(m) => Geometry::MultiLineString(MultiLineString(
            m.line_strings().map(|l| LineString(coords(&l))).collect(),
        )),
        GeometryType::MultiPolygon(m) => {
            Geometry::MultiPolygon(MultiPolygon(m.polygons().map(|p| shape(&p)).collect()))
        }
        GeometryType::GeometryCollection(c) => collection(
            c.geometries()
                .map(|g| as_given(&g))
                .filter(|g| g.as_ref().map_or(true, |g| !g.is_empty()))
                .collect::<Result<_, _>>()?,
        ),
        GeometryType::Rect(_) | GeometryType::Triangle(_) | GeometryType::Line(_) => {
            return Err("neither WKT nor WKB has rectangles, triangles or lone segments".into());
        }
    };
    Ok(if g.is_empty() { empty() } else { g })
}

/// `g` with each polygon ring counterclockwise, as BigQuery keeps a polygon: a ring given
/// clockwise (its interior, the smaller region, on its right) has its vertices reversed
/// (`POLYGON((0 0, 0 2, 2 2, 2 0, 0 0))` is `POLYGON((2 0, 2 2, 0 2, 0 0, 2 0))`).
pub(super) fn normalized(g: Geo) -> Geo {
    fn ring(r: &LineString) -> LineString {
        let c = &r.0;
        let open = match c.split_last() {
            Some((last, rest)) if c.len() > 1 && last == &c[0] => rest,
            _ => c.as_slice(),
        };
        // On the sphere, so that a ring across the antimeridian is read right.
        if super::sphere::signed_ring_area(open) >= 0.0 {
            return r.clone();
        }
        let mut v: Vec<Coord> = open.iter().rev().copied().collect();
        if let Some(first) = v.first().copied() {
            v.push(first);
        }
        LineString(v)
    }
    fn polygon(p: &Polygon) -> Polygon {
        Polygon::new(ring(p.exterior()), p.interiors().iter().map(ring).collect())
    }
    match g {
        Geometry::Polygon(p) => Geometry::Polygon(polygon(&p)),
        Geometry::MultiPolygon(m) => {
            Geometry::MultiPolygon(MultiPolygon(m.0.iter().map(polygon).collect()))
        }
        Geometry::GeometryCollection(c) => collection(c.0.into_iter().map(normalized).collect()),
        other => other,
    }
}

/// Whether each polygon of `g` is one BigQuery takes: each ring of at least three distinct
/// vertices, no edge crossing another of its ring or of another ring (a bow tie
/// `POLYGON((0 -1, 2 1, 2 -1, 0 1, 0 -1))` is refused); the error names the edges.
pub(super) fn validate(g: &Geo) -> Result<(), String> {
    use super::sphere::{arcs_cross, closed};
    fn polygon(p: &Polygon) -> Result<(), String> {
        let rings: Vec<Vec<super::sphere::V3>> = rings(p).iter().map(|r| closed(r)).collect();
        for (k, r) in rings.iter().enumerate() {
            if r.len() < 4 {
                return Err(format!("Loop {k} has fewer than 3 vertices"));
            }
        }
        let edges: Vec<(usize, usize, super::sphere::V3, super::sphere::V3)> = rings
            .iter()
            .enumerate()
            .flat_map(|(k, r)| {
                r.windows(2)
                    .enumerate()
                    .map(move |(i, w)| (k, i, w[0], w[1]))
            })
            .collect();
        for (x, &(k1, i, a, b)) in edges.iter().enumerate() {
            for &(k2, j, c, d) in &edges[x + 1..] {
                if arcs_cross(a, b, c, d) {
                    return Err(if k1 == k2 {
                        format!("Loop {k1} is not valid: Edge {i} crosses edge {j}")
                    } else {
                        format!("Loop {k1} edge {i} crosses loop {k2} edge {j}")
                    });
                }
            }
        }
        Ok(())
    }
    match g {
        Geometry::Polygon(p) => polygon(p),
        Geometry::MultiPolygon(m) => m.0.iter().try_for_each(polygon),
        Geometry::GeometryCollection(c) => c.0.iter().try_for_each(validate),
        _ => Ok(()),
    }
}

/// Whether each polygon ring of `g` runs counterclockwise as given (its interior on its left).
pub(super) fn counterclockwise(g: &Geo) -> bool {
    match g {
        Geometry::Polygon(_) | Geometry::MultiPolygon(_) | Geometry::GeometryCollection(_) => {
            normalized(g.clone()) == *g
        }
        _ => true,
    }
}

/// `geo_types`' shapes that no GEOGRAPHY text holds (segments, rectangles, triangles) as the
/// linestring or polygon they are.
pub(super) fn canonical(g: &Geo) -> Option<Geo> {
    match g {
        Geometry::Line(l) => Some(linestring(vec![l.start, l.end])),
        Geometry::Rect(r) => Some(Geometry::Polygon(r.to_polygon())),
        Geometry::Triangle(t) => Some(Geometry::Polygon(t.to_polygon())),
        _ => None,
    }
}

/// What BigQuery says and computes of a geography, on [`Geo`].
pub(super) trait Geography: Sized {
    fn parse(text: &str) -> Result<Self, String>;
    fn type_name(&self) -> &'static str;
    /// 0 for points, 1 for lines, 2 for polygons, the highest of a collection's parts, -1
    /// for the empty geography.
    fn dimension(&self) -> i64;
    /// Vertices, a polygon ring's closing one included.
    fn points(&self) -> i64;
    /// Points, lines and polygons in all.
    fn parts(&self) -> usize;
    fn wkt(&self) -> String;
    /// GeoJSON spaced as BigQuery writes it (`{ "type": "Point", "coordinates": [1, 2] }`).
    fn geojson(&self) -> String;
    /// The length of the lines, in metres (0 for points and polygons, as in BigQuery).
    fn length(&self) -> f64;
    fn as_point(&self, function: &str) -> DfResult<&Coord>;
}

impl Geography for Geo {
    fn parse(text: &str) -> Result<Geo, String> {
        let wkt = Wkt::<f64>::from_str(text.trim()).map_err(|e| e.to_string())?;
        from_traits(&wkt)
    }

    fn type_name(&self) -> &'static str {
        match self {
            Geometry::Point(_) => "ST_Point",
            Geometry::LineString(_) | Geometry::Line(_) => "ST_LineString",
            Geometry::Polygon(_) | Geometry::Rect(_) | Geometry::Triangle(_) => "ST_Polygon",
            Geometry::MultiPoint(_) => "ST_MultiPoint",
            Geometry::MultiLineString(_) => "ST_MultiLineString",
            Geometry::MultiPolygon(_) => "ST_MultiPolygon",
            Geometry::GeometryCollection(_) => "ST_GeometryCollection",
        }
    }

    fn dimension(&self) -> i64 {
        match self {
            Geometry::Point(_) | Geometry::MultiPoint(_) => 0,
            Geometry::LineString(_) | Geometry::MultiLineString(_) | Geometry::Line(_) => 1,
            Geometry::Polygon(_)
            | Geometry::MultiPolygon(_)
            | Geometry::Rect(_)
            | Geometry::Triangle(_) => 2,
            Geometry::GeometryCollection(g) => g.iter().map(Geo::dimension).max().unwrap_or(-1),
        }
    }

    fn points(&self) -> i64 {
        match canonical(self) {
            Some(g) => g.points(),
            None => self.coords_count() as i64,
        }
    }

    fn parts(&self) -> usize {
        match self {
            Geometry::MultiPoint(c) => c.0.len(),
            Geometry::MultiLineString(l) => l.0.len(),
            Geometry::MultiPolygon(p) => p.0.len(),
            Geometry::GeometryCollection(g) => g.iter().map(Geo::parts).sum(),
            _ => 1,
        }
    }

    fn wkt(&self) -> String {
        let (kind, body) = match self {
            Geometry::Point(p) => ("POINT", format!("({})", coord_text(&p.0))),
            Geometry::LineString(l) => ("LINESTRING", coords_text(&l.0)),
            Geometry::MultiPoint(m) => ("MULTIPOINT", list_text(&m.0, |p| coord_text(&p.0))),
            Geometry::Polygon(p) => ("POLYGON", list_text(&rings(p), |r| coords_text(r))),
            Geometry::MultiLineString(m) => {
                ("MULTILINESTRING", list_text(&m.0, |l| coords_text(&l.0)))
            }
            Geometry::MultiPolygon(m) => (
                "MULTIPOLYGON",
                list_text(&m.0, |p| list_text(&rings(p), |r| coords_text(r))),
            ),
            Geometry::GeometryCollection(g) if g.0.is_empty() => {
                return "GEOMETRYCOLLECTION EMPTY".to_string();
            }
            Geometry::GeometryCollection(g) => ("GEOMETRYCOLLECTION", list_text(&g.0, Geo::wkt)),
            other => return canonical(other).map(|g| g.wkt()).unwrap_or_default(),
        };
        format!("{kind}{body}")
    }

    fn geojson(&self) -> String {
        let (kind, body) = match self {
            Geometry::Point(p) => ("Point", coord_json(&p.0)),
            Geometry::LineString(l) => ("LineString", coords_json(&l.0)),
            Geometry::MultiPoint(m) => ("MultiPoint", list_json(&m.0, |p| coord_json(&p.0))),
            Geometry::Polygon(p) => ("Polygon", list_json(&rings(p), |r| coords_json(r))),
            Geometry::MultiLineString(m) => {
                ("MultiLineString", list_json(&m.0, |l| coords_json(&l.0)))
            }
            Geometry::MultiPolygon(m) => (
                "MultiPolygon",
                list_json(&m.0, |p| list_json(&rings(p), |r| coords_json(r))),
            ),
            Geometry::GeometryCollection(g) => {
                let parts = if g.0.is_empty() {
                    "[ ]".to_string()
                } else {
                    list_json(&g.0, Geo::geojson)
                };
                return format!("{{ \"type\": \"GeometryCollection\", \"geometries\": {parts} }}");
            }
            other => return canonical(other).map(|g| g.geojson()).unwrap_or_default(),
        };
        format!("{{ \"type\": \"{kind}\", \"coordinates\": {body} }}")
    }

    fn length(&self) -> f64 {
        // Great-circle edges measured by `geo`'s haversine on S2's Earth.
        match self {
            Geometry::LineString(l) => S2_EARTH.length(l),
            Geometry::MultiLineString(m) => S2_EARTH.length(m),
            Geometry::Line(l) => S2_EARTH.length(l),
            Geometry::GeometryCollection(g) => g.iter().map(Geo::length).sum(),
            _ => 0.0,
        }
    }

    fn as_point(&self, function: &str) -> DfResult<&Coord> {
        match self {
            Geometry::Point(p) => Ok(&p.0),
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
    fn empty_parts_are_left_out() {
        assert_eq!(
            wkt("GEOMETRYCOLLECTION(POINT EMPTY, LINESTRING EMPTY)"),
            "GEOMETRYCOLLECTION EMPTY"
        );
        assert_eq!(wkt("MULTIPOLYGON(EMPTY)"), "GEOMETRYCOLLECTION EMPTY");
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

//! GEOGRAPHY: values kept as WKT text (the column's Arrow type is Utf8, as BigQuery sends
//! GEOGRAPHY on the wire), and the `ST_` functions that need no spherical geometry beyond
//! great-circle distances, as DataFusion scalar UDFs: text and GeoJSON output, type,
//! dimension, point counts, emptiness, `ST_LENGTH` of lines, and `ST_DISTANCE`,
//! `ST_DWITHIN`, `ST_INTERSECTS`, `ST_EQUALS`, `ST_DISJOINT`, `ST_INTERSECTSBOX` of points
//! (other shapes are refused by name rather than measured on a plane).
//!
//! What BigQuery computes on the sphere with S2 is in `more` (predicates, areas, centroids,
//! simplification, intersections and differences of polygons, buffers of points, the extra
//! vertices `ST_ASGEOJSON` adds along long edges); what is not served there (buffers of
//! lines and polygons, overlays of lines) is refused by name rather than given planar
//! answers.

use std::str::FromStr;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, BooleanBuilder, Float64Array, Float64Builder, Int64Builder, StringArray,
    StringBuilder,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility, create_udf};
use datafusion::prelude::SessionContext;
use wkt::Wkt;

use super::udf::{arrays, result};
use wkt::types::{Coord, LineString, Polygon};

/// The radius of the sphere BigQuery measures distances on, in metres (S2's
/// `S2Earth::RadiusMeters`; with the IUGG mean radius, 6371008.8 m, New York to Los Angeles
/// comes out 0.74 m short of BigQuery's figure).
const EARTH_RADIUS_M: f64 = 6_371_010.0;

/// A geography, parsed. `POINT EMPTY` and every other empty input become the empty
/// collection, as in BigQuery.
#[derive(Debug, Clone, PartialEq)]
enum Geo {
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
    fn parse(text: &str) -> Result<Geo, String> {
        let wkt = Wkt::<f64>::from_str(text.trim()).map_err(|e| e.to_string())?;
        Ok(Geo::from_wkt(&wkt))
    }

    fn from_wkt(w: &Wkt<f64>) -> Geo {
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

    fn is_empty(&self) -> bool {
        match self {
            Geo::Point(_) => false,
            Geo::LineString(c) | Geo::MultiPoint(c) => c.is_empty(),
            Geo::Polygon(r) | Geo::MultiLineString(r) => r.iter().all(Vec::is_empty),
            Geo::MultiPolygon(p) => p.iter().all(|r| r.iter().all(Vec::is_empty)),
            Geo::Collection(g) => g.iter().all(Geo::is_empty),
        }
    }

    fn type_name(&self) -> &'static str {
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
    fn dimension(&self) -> i64 {
        match self {
            Geo::Point(_) | Geo::MultiPoint(_) => 0,
            Geo::LineString(_) | Geo::MultiLineString(_) => 1,
            Geo::Polygon(_) | Geo::MultiPolygon(_) => 2,
            Geo::Collection(g) => g.iter().map(Geo::dimension).max().unwrap_or(-1),
        }
    }

    /// Vertices, a polygon ring's closing one included.
    fn points(&self) -> i64 {
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
    fn parts(&self) -> usize {
        match self {
            Geo::Point(_) | Geo::LineString(_) | Geo::Polygon(_) => 1,
            Geo::MultiPoint(c) => c.len(),
            Geo::MultiLineString(r) => r.len(),
            Geo::MultiPolygon(p) => p.len(),
            Geo::Collection(g) => g.iter().map(Geo::parts).sum(),
        }
    }

    fn wkt(&self) -> String {
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
    fn geojson(&self) -> String {
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
    fn length(&self) -> f64 {
        let polyline = |c: &[Coord]| c.windows(2).map(|w| distance(&w[0], &w[1])).sum::<f64>();
        match self {
            Geo::LineString(c) => polyline(c),
            Geo::MultiLineString(r) => r.iter().map(|c| polyline(c)).sum(),
            Geo::Collection(g) => g.iter().map(Geo::length).sum(),
            _ => 0.0,
        }
    }

    fn as_point(&self, function: &str) -> DfResult<&Coord> {
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
fn number(v: f64) -> String {
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

/// The great-circle distance between two points, in metres.
fn distance(a: &Coord, b: &Coord) -> f64 {
    let (lat1, lat2) = (a.y.to_radians(), b.y.to_radians());
    let dlat = lat2 - lat1;
    let dlon = (b.x - a.x).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

fn unsupported(what: &str) -> DataFusionError {
    DataFusionError::Execution(format!("Unsupported by bigq-emulator: {what}"))
}

fn strings<'a>(a: &'a ArrayRef, function: &str) -> DfResult<&'a StringArray> {
    a.as_any().downcast_ref::<StringArray>().ok_or_else(|| {
        DataFusionError::Internal(format!("{function}: GEOGRAPHY as {}", a.data_type()))
    })
}

fn floats<'a>(a: &'a ArrayRef, function: &str) -> DfResult<&'a Float64Array> {
    a.as_any().downcast_ref::<Float64Array>().ok_or_else(|| {
        DataFusionError::Internal(format!("{function}: FLOAT64 as {}", a.data_type()))
    })
}

/// The geography in row `i` of `a`, or `None` for NULL.
fn geo_at(a: &StringArray, i: usize, function: &str) -> DfResult<Option<Geo>> {
    if a.is_null(i) {
        return Ok(None);
    }
    Geo::parse(a.value(i)).map(Some).map_err(|e| {
        DataFusionError::Execution(format!(
            "{function} failed: Invalid WKT {:?}: {e}",
            a.value(i)
        ))
    })
}

/// A one-geography function returning what `f` makes of it.
macro_rules! unary {
    ($name:literal, $ret:expr, $builder:ty, $f:expr) => {{
        let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
            let (a, rows) = arrays(args)?;
            let g = strings(&a[0], $name)?;
            let mut out = <$builder>::new();
            for i in 0..rows {
                match geo_at(g, i, $name)? {
                    Some(geo) => out.append_value($f(&geo)),
                    None => out.append_null(),
                }
            }
            result(Arc::new(out.finish()), args)
        };
        create_udf(
            $name,
            vec![DataType::Utf8],
            $ret,
            Volatility::Immutable,
            Arc::new(fun),
        )
    }};
}

fn st_geogpoint() -> ScalarUDF {
    let fun = |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let (x, y) = (
            floats(&a[0], "ST_GEOGPOINT")?,
            floats(&a[1], "ST_GEOGPOINT")?,
        );
        let mut out = StringBuilder::new();
        for i in 0..rows {
            if x.is_null(i) || y.is_null(i) {
                out.append_null();
                continue;
            }
            let (lon, lat) = (x.value(i), y.value(i));
            if !(-90.0..=90.0).contains(&lat) || !lon.is_finite() {
                return Err(DataFusionError::Execution(format!(
                    "ST_GeogPoint failed: Latitude must be between -90 and 90 degrees: {lat}"
                )));
            }
            // Longitudes wrap into [-180, 180].
            let lon = if (-180.0..=180.0).contains(&lon) {
                lon
            } else {
                (lon + 180.0).rem_euclid(360.0) - 180.0
            };
            out.append_value(
                Geo::Point(Coord {
                    x: lon,
                    y: lat,
                    z: None,
                    m: None,
                })
                .wkt(),
            );
        }
        result(Arc::new(out.finish()), args)
    };
    create_udf(
        "st_geogpoint",
        vec![DataType::Float64, DataType::Float64],
        DataType::Utf8,
        Volatility::Immutable,
        Arc::new(fun),
    )
}

/// What a function of two points computes.
#[derive(Clone, Copy)]
enum PointPair {
    /// `ST_DISTANCE`: metres.
    Distance,
    /// `ST_DWITHIN`: within the third argument's metres.
    Within,
    /// `ST_EQUALS`: the same point.
    Same,
}

/// A function of two points; other shapes are refused by name.
fn two_points(name: &'static str, pair: PointPair) -> ScalarUDF {
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let (g1, g2) = (strings(&a[0], name)?, strings(&a[1], name)?);
        let limit = match pair {
            PointPair::Within => Some(floats(&a[2], name)?),
            _ => None,
        };
        let mut metres = Float64Array::builder(rows);
        let mut truth = BooleanBuilder::with_capacity(rows);
        for i in 0..rows {
            let (Some(p), Some(q)) = (geo_at(g1, i, name)?, geo_at(g2, i, name)?) else {
                metres.append_null();
                truth.append_null();
                continue;
            };
            if p.is_empty() || q.is_empty() {
                metres.append_null();
                truth.append_null();
                continue;
            }
            let (p, q) = (p.as_point(name)?, q.as_point(name)?);
            let same = p.x == q.x && p.y == q.y;
            match pair {
                PointPair::Distance => metres.append_value(distance(p, q)),
                PointPair::Within => match limit {
                    Some(l) if !l.is_null(i) => truth.append_value(distance(p, q) <= l.value(i)),
                    _ => truth.append_null(),
                },
                PointPair::Same => truth.append_value(same),
            }
        }
        let array: ArrayRef = match pair {
            PointPair::Distance => Arc::new(metres.finish()),
            _ => Arc::new(truth.finish()),
        };
        result(array, args)
    };
    let mut inputs = vec![DataType::Utf8, DataType::Utf8];
    if matches!(pair, PointPair::Within) {
        inputs.push(DataType::Float64);
    }
    let ret = match pair {
        PointPair::Distance => DataType::Float64,
        _ => DataType::Boolean,
    };
    create_udf(name, inputs, ret, Volatility::Immutable, Arc::new(fun))
}

/// `ST_INTERSECTSBOX(point, lng1, lat1, lng2, lat2)`: whether the point lies in the
/// latitude/longitude rectangle (across the antimeridian when `lng1 > lng2`).
fn st_intersectsbox() -> ScalarUDF {
    let name = "st_intersectsbox";
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let g = strings(&a[0], name)?;
        let b = (1..5)
            .map(|k| floats(&a[k], name))
            .collect::<DfResult<Vec<_>>>()?;
        let mut out = BooleanBuilder::with_capacity(rows);
        for i in 0..rows {
            let geo = geo_at(g, i, name)?;
            if geo.is_none() || b.iter().any(|x| x.is_null(i)) {
                out.append_null();
                continue;
            }
            let Some(geo) = geo.filter(|g| !g.is_empty()) else {
                out.append_value(false);
                continue;
            };
            let p = geo.as_point(name)?;
            let (lng1, lat1, lng2, lat2) =
                (b[0].value(i), b[1].value(i), b[2].value(i), b[3].value(i));
            let lat_in = (lat1..=lat2).contains(&p.y);
            let lng_in = if lng1 <= lng2 {
                (lng1..=lng2).contains(&p.x)
            } else {
                p.x >= lng1 || p.x <= lng2
            };
            out.append_value(lat_in && lng_in);
        }
        result(Arc::new(out.finish()), args)
    };
    let f = DataType::Float64;
    create_udf(
        name,
        vec![DataType::Utf8, f.clone(), f.clone(), f.clone(), f],
        DataType::Boolean,
        Volatility::Immutable,
        Arc::new(fun),
    )
}

/// Registers the GEOGRAPHY functions on `ctx`.
pub fn register(ctx: &SessionContext) {
    let udfs = [
        unary!("st_geogfromtext", DataType::Utf8, StringBuilder, Geo::wkt),
        unary!("st_astext", DataType::Utf8, StringBuilder, Geo::wkt),
        unary!(
            "st_asgeojson",
            DataType::Utf8,
            StringBuilder,
            |g: &Geo| format!("{} ", more::tessellate::densified(g).geojson())
        ),
        unary!(
            "st_geometrytype",
            DataType::Utf8,
            StringBuilder,
            Geo::type_name
        ),
        unary!(
            "st_dimension",
            DataType::Int64,
            Int64Builder,
            Geo::dimension
        ),
        unary!("st_npoints", DataType::Int64, Int64Builder, Geo::points),
        unary!("st_numpoints", DataType::Int64, Int64Builder, Geo::points),
        unary!(
            "st_isempty",
            DataType::Boolean,
            BooleanBuilder,
            Geo::is_empty
        ),
        unary!(
            "st_iscollection",
            DataType::Boolean,
            BooleanBuilder,
            |g: &Geo| g.parts() > 1
        ),
        st_geogpoint(),
        unary!("st_length", DataType::Float64, Float64Builder, Geo::length),
        two_points("st_distance", PointPair::Distance),
        two_points("st_dwithin", PointPair::Within),
        two_points("st_equals", PointPair::Same),
        st_intersectsbox(),
    ];
    for udf in udfs {
        ctx.register_udf(udf);
    }
    more::register(ctx);
}

mod more;

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

    #[test]
    fn measures() {
        let g = |s: &str| Geo::parse(s).unwrap();
        assert_eq!(g("POLYGON((0 0,4 0,4 4,0 4,0 0))").points(), 5);
        assert_eq!(
            g("GEOMETRYCOLLECTION(POINT(0 0), LINESTRING(1 1,2 2))").parts(),
            2
        );
        assert_eq!(
            g("GEOMETRYCOLLECTION(POINT(0 0), LINESTRING(1 1,2 2))").dimension(),
            1
        );
        let ny = Coord {
            x: -74.0060,
            y: 40.7128,
            z: None,
            m: None,
        };
        let la = Coord {
            x: -118.2437,
            y: 34.0522,
            z: None,
            m: None,
        };
        // BigQuery: 3935752.4322054763 m for the line, 0 for a point.
        let l = g("LINESTRING(-74.0060 40.7128, -118.2437 34.0522)").length();
        assert!((l - 3_935_752.432_205_476).abs() < 1e-3, "{l}");
        assert_eq!(g("POINT(1 2)").length(), 0.0);
        // BigQuery: 3935752.432205476 m.
        assert!(
            (distance(&ny, &la) - 3_935_752.43).abs() < 20.0,
            "{}",
            distance(&ny, &la)
        );
    }
}

//! Geography constructors: `ST_GEOGPOINT`, `ST_MAKELINE`, `ST_MAKEPOLYGON` and
//! `ST_MAKEPOLYGONORIENTED`.

use std::sync::Arc;

use datafusion::arrow::array::{Array, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility, create_udf};
use geo_types::{Coord, Geometry};

use super::rows::{Arg, Out, exec, fail, floats, geo, geos, line_of};
use super::sphere::{close_ring, coord, same};
use super::value::{Geography, empty, linestring, point, polygon};
use crate::sql::functions::udf::{arrays, result};

pub(super) fn st_geogpoint() -> ScalarUDF {
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
            out.append_value(point(coord(lon, lat)).wkt());
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

pub(super) fn st_makeline(n: &str, a: &[Arg]) -> DfResult<Out> {
    let parts = match a {
        [one] => geos(n, one)?,
        [x, y] => vec![geo(n, x)?, geo(n, y)?],
        _ => return Err(exec(format!("{n}: arguments"))),
    };
    let mut line: Vec<Coord> = Vec::new();
    for p in parts {
        let cs = match p {
            Geometry::Point(p) => vec![p.0],
            Geometry::LineString(l) => l.0,
            other => {
                return Err(fail(
                    n,
                    &format!("it takes points and linestrings, not {}", other.type_name()),
                ));
            }
        };
        for c in cs {
            if line.last().is_none_or(|l| !same(l, &c)) {
                line.push(c);
            }
        }
    }
    if line.len() < 2 {
        return Err(fail(n, "a line needs at least two distinct points"));
    }
    Ok(Out::Geo(linestring(line)))
}

fn ring_of(n: &str, g: &Geometry) -> DfResult<Vec<Coord>> {
    let r = close_ring(&line_of(n, g)?);
    if r.len() < 4 {
        return Err(fail(
            n,
            "a polygon ring needs at least three distinct points",
        ));
    }
    Ok(r)
}

pub(super) fn st_makepolygon(n: &str, a: &[Arg]) -> DfResult<Out> {
    let mut rings = vec![ring_of(n, &geo(n, &a[0])?)?];
    if let Some(holes) = a.get(1) {
        for h in geos(n, holes)? {
            rings.push(ring_of(n, &h)?);
        }
    }
    Ok(Out::Geo(polygon(rings)))
}

pub(super) fn st_makepolygonoriented(n: &str, a: &[Arg]) -> DfResult<Out> {
    let rings = geos(n, &a[0])?
        .iter()
        .map(|g| ring_of(n, g))
        .collect::<DfResult<Vec<_>>>()?;
    if rings.is_empty() {
        return Ok(Out::Geo(empty()));
    }
    Ok(Out::Geo(polygon(rings)))
}

//! Geography predicates on the sphere, as BigQuery computes them: edges are great-circle arcs,
//! a point is in a ring by its winding number seen from the point, two edges cross by the
//! signs of triple products: `ST_INTERSECTS`, `ST_DISJOINT`, `ST_CONTAINS`, `ST_WITHIN`,
//! `ST_COVERS`, `ST_COVEREDBY`, `ST_TOUCHES`, and `ST_INTERSECTSBOX` of a point
//! (`ST_DWITHIN` and `ST_EQUALS` of points are [`super::rows::two_points`]).

use std::sync::Arc;

use datafusion::arrow::array::{Array, BooleanBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility, create_udf};

use geo::HasDimensions;

use super::parts::Sphere;
use super::rows::{Arg, Out, floats, geo, geo_at, strings};
use super::sphere::{Place, arcs_meet, place_in_polygon};
use super::value::Geography;
use crate::sql::functions::udf::{arrays, result};

fn intersects(a: &Sphere, b: &Sphere) -> bool {
    a.arcs
        .iter()
        .any(|&(p, q)| b.arcs.iter().any(|&(r, s)| arcs_meet(p, q, r, s)))
        || a.vertices.iter().any(|&v| b.place(v) != Place::Outside)
        || b.vertices.iter().any(|&v| a.place(v) != Place::Outside)
}

/// Whether every point of `b` is in `a` (its interior or boundary).
fn covers(a: &Sphere, b: &Sphere) -> bool {
    !b.vertices.is_empty()
        && b.vertices.iter().all(|&v| a.place(v) != Place::Outside)
        && !b.arcs_cross(a)
        && b.interior.iter().all(|&v| a.place(v) != Place::Outside)
}

/// Covers, and some point of `b` is in `a`'s interior (not only on its boundary).
fn contains(a: &Sphere, b: &Sphere) -> bool {
    covers(a, b)
        && b.vertices
            .iter()
            .chain(&b.interior)
            .any(|&v| a.place(v) == Place::Inside)
}

/// They meet, but only on boundaries.
fn touches(a: &Sphere, b: &Sphere) -> bool {
    if a.is_points() && b.is_points() {
        // Points have no boundary.
        return false;
    }
    let strictly_in = |x: &Sphere, y: &Sphere| {
        x.vertices.iter().chain(&x.interior).any(|&v| {
            y.polygons
                .iter()
                .any(|p| place_in_polygon(v, p) == Place::Inside)
        })
    };
    intersects(a, b) && !strictly_in(a, b) && !strictly_in(b, a) && !a.arcs_cross(b)
}

fn two(n: &str, a: &[Arg]) -> DfResult<(Sphere, Sphere, bool)> {
    let (x, y) = (geo(n, &a[0])?, geo(n, &a[1])?);
    let empty = x.is_empty() || y.is_empty();
    Ok((Sphere::of(&x), Sphere::of(&y), empty))
}

pub(super) fn st_intersects(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && intersects(&x, &y)))
}

pub(super) fn st_disjoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(empty || !intersects(&x, &y)))
}

pub(super) fn st_contains(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && contains(&x, &y)))
}

pub(super) fn st_within(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && contains(&y, &x)))
}

pub(super) fn st_covers(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && covers(&x, &y)))
}

pub(super) fn st_coveredby(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && covers(&y, &x)))
}

pub(super) fn st_touches(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && touches(&x, &y)))
}

/// `ST_INTERSECTSBOX(point, lng1, lat1, lng2, lat2)`: whether the point lies in the
/// latitude/longitude rectangle (across the antimeridian when `lng1 > lng2`).
pub(super) fn st_intersectsbox() -> ScalarUDF {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::sphere::{arcs_cross, coord, xyz};
    use crate::sql::functions::geography::value::Geo;

    fn parts(s: &str) -> Sphere {
        Sphere::of(&Geo::parse(s).unwrap())
    }

    #[test]
    fn predicates_on_the_sphere() {
        let square = parts("POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))");
        assert!(contains(&square, &parts("POINT(2 2)")));
        assert!(!contains(&square, &parts("POINT(10 10)")));
        // On the edge: covered, not contained.
        assert!(covers(&square, &parts("POINT(0 2)")));
        assert!(!contains(&square, &parts("POINT(0 2)")));
        // The northern edge is a great circle bowing towards the pole: a point just north
        // of latitude 4 in the middle is inside on the sphere (outside on a plane).
        assert!(contains(&square, &parts("POINT(2 4.001)")));
        assert!(intersects(
            &parts("LINESTRING(0 0, 2 2)"),
            &parts("LINESTRING(0 2, 2 0)")
        ));
        assert!(!intersects(
            &parts("LINESTRING(0 0, 1 1)"),
            &parts("LINESTRING(0 2, 1 3)")
        ));
        // A meridian crossing the equator.
        assert!(arcs_cross(
            xyz(&coord(0.0, 0.0)),
            xyz(&coord(4.0, 0.0)),
            xyz(&coord(2.0, -1.0)),
            xyz(&coord(2.0, 2.0))
        ));
        let a = parts("POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))");
        let b = parts("POLYGON((1 0, 2 0, 2 1, 1 1, 1 0))");
        assert!(touches(&a, &b));
        assert!(!touches(&a, &a));
        assert!(!touches(&parts("POINT(0 0)"), &parts("POINT(0 0)")));
        let overlapping = parts("POLYGON((1 1, 3 1, 3 3, 1 3, 1 1))");
        assert!(intersects(
            &parts("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))"),
            &overlapping
        ));
        assert!(!touches(
            &parts("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))"),
            &overlapping
        ));
    }
}

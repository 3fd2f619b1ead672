//! Geography transformations: `ST_BOUNDARY`, `ST_SNAPTOGRID`, `ST_UNION` of points (and
//! `ST_UNION_AGG`), `ST_CONVEXHULL` (taken in the gnomonic projection, which keeps great
//! circles straight) and `ST_CLOSESTPOINT` of a point; `ST_BUFFER`, `ST_CENTROID`,
//! `ST_INTERSECTION`, `ST_DIFFERENCE` and `ST_SIMPLIFY` have files of their own.

use datafusion::common::Result as DfResult;
use datafusion::sql::sqlparser::ast::{self, Expr};
use geo::{HasDimensions, MapCoords};
use geo_types::{Coord, Geometry};

use super::accessors::closed_line;
use super::parts::Parts;
use super::rows::{Arg, Out, exec, geo, geos};
use super::sphere::{V3, coord, cross, dot, same, xyz};
use super::value::{
    Geo, Geography, empty, linestring, multilinestring, multipoint, point, polygon, unsupported,
};
use crate::error::BqResult;
use crate::sql::ast::{call, function_args};

/// The convex hull of the vertices, in the gnomonic projection about their mean.
fn convex_hull(g: &Geo) -> DfResult<Geo> {
    let pts = Parts::of(g).vertices();
    if pts.is_empty() {
        return Ok(empty());
    }
    let vs: Vec<V3> = pts.iter().map(xyz).collect();
    let m = vs
        .iter()
        .fold([0.0; 3], |a, v| [a[0] + v[0], a[1] + v[1], a[2] + v[2]]);
    let norm = dot(m, m).sqrt();
    if norm < 1e-9 || vs.iter().any(|v| dot(*v, m) <= 0.0) {
        return Err(unsupported(
            "ST_CONVEXHULL of points spread over more than a hemisphere",
        ));
    }
    let c = [m[0] / norm, m[1] / norm, m[2] / norm];
    // A tangent-plane basis at c.
    let up = if c[2].abs() < 0.9 {
        [0.0, 0.0, 1.0]
    } else {
        [1.0, 0.0, 0.0]
    };
    let e1 = {
        let x = cross(up, c);
        let n = dot(x, x).sqrt();
        [x[0] / n, x[1] / n, x[2] / n]
    };
    let e2 = cross(c, e1);
    let mut plane: Vec<(f64, f64, usize)> = vs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let k = dot(*v, c);
            (dot(*v, e1) / k, dot(*v, e2) / k, i)
        })
        .collect();
    plane.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    plane.dedup_by(|a, b| (a.0 - b.0).abs() < 1e-15 && (a.1 - b.1).abs() < 1e-15);
    let turn = |o: &(f64, f64, usize), a: &(f64, f64, usize), b: &(f64, f64, usize)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut hull: Vec<(f64, f64, usize)> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &(f64, f64, usize)>> = if pass == 0 {
            Box::new(plane.iter())
        } else {
            Box::new(plane.iter().rev())
        };
        for p in iter {
            while hull.len() >= start + 2
                && turn(&hull[hull.len() - 2], &hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(*p);
        }
        hull.pop();
    }
    let ring: Vec<Coord> = hull.iter().map(|h| pts[h.2]).collect();
    Ok(match ring.len() {
        0 | 1 => point(pts[plane[0].2]),
        2 => linestring(ring),
        _ => {
            let mut ring = ring;
            ring.push(ring[0]);
            polygon(vec![ring])
        }
    })
}

pub(super) fn st_boundary(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    let p = Parts::of(&g);
    if !p.polygons.is_empty() {
        let mut rings: Vec<Vec<Coord>> = p.polygons.into_iter().flatten().collect();
        return Ok(Out::Geo(if rings.len() == 1 {
            linestring(rings.remove(0))
        } else {
            multilinestring(rings)
        }));
    }
    // A line's boundary is its ends (none when closed); a point has none.
    let ends: Vec<Coord> = p
        .lines
        .iter()
        .filter(|l| !closed_line(l))
        .flat_map(|l| [l[0], l[l.len() - 1]])
        .collect();
    Ok(Out::Geo(match ends.len() {
        0 => empty(),
        _ => multipoint(ends),
    }))
}

pub(super) fn st_snaptogrid(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Float(size) = a[1] else {
        return Err(exec(format!("{n}: grid size")));
    };
    let snap = |c: &Coord| {
        if size <= 0.0 {
            *c
        } else {
            coord((c.x / size).round() * size, (c.y / size).round() * size)
        }
    };
    Ok(Out::Geo(geo(n, &a[0])?.map_coords(|c| snap(&c))))
}

/// `ST_UNION` of two geographies or of an array (what `ST_UNION_AGG` becomes): points only.
pub(super) fn st_union(n: &str, a: &[Arg]) -> DfResult<Out> {
    let parts = match a {
        [one] => geos(n, one)?,
        [x, y] => vec![geo(n, x)?, geo(n, y)?],
        _ => return Err(exec(format!("{n}: arguments"))),
    };
    let mut pts: Vec<Coord> = Vec::new();
    for g in &parts {
        let p = Parts::of(g);
        if !p.lines.is_empty() || !p.polygons.is_empty() {
            return Err(unsupported(&format!(
                "{n} of lines or polygons (bigq-emulator unites points only)"
            )));
        }
        for c in p.points {
            if !pts.iter().any(|q| same(q, &c)) {
                pts.push(c);
            }
        }
    }
    Ok(Out::Geo(match pts.len() {
        0 => empty(),
        1 => point(pts[0]),
        _ => multipoint(pts),
    }))
}

pub(super) fn st_convexhull(n: &str, a: &[Arg]) -> DfResult<Out> {
    convex_hull(&geo(n, &a[0])?).map(Out::Geo)
}

/// `ST_CLOSESTPOINT` where the first geography is a point (it is its own closest point).
pub(super) fn st_closestpoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y) = (geo(n, &a[0])?, geo(n, &a[1])?);
    if x.is_empty() || y.is_empty() {
        return Ok(Out::Geo(empty()));
    }
    match x {
        Geometry::Point(p) => Ok(Out::Geo(Geometry::Point(p))),
        other => Err(unsupported(&format!(
            "{n} on a {} (bigq-emulator computes it on points only)",
            other.type_name()
        ))),
    }
}

/// `ST_UNION_AGG(geography)`, an aggregate, as `ST_UNION` of the array of its inputs.
pub(crate) fn st_union_agg(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f)
        .filter(|a| a.len() == 1)
        .map(|args| call("st_union", vec![call("array_agg", args)])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::accessors::st_isring;

    #[test]
    fn hulls_and_rings() {
        let h = convex_hull(&Geo::parse("MULTIPOINT(0 0, 4 0, 4 4, 0 4, 2 2)").unwrap()).unwrap();
        assert_eq!(h.type_name(), "ST_Polygon");
        assert_eq!(h.points(), 5);
        let ring = |s: &str| match st_isring("st_isring", &[Arg::Text(s.into())]).unwrap() {
            Out::Bool(b) => b,
            _ => unreachable!(),
        };
        assert!(ring("LINESTRING(0 0, 1 0, 1 1, 0 1, 0 0)"));
        assert!(
            !ring("LINESTRING(0 0, 1 1, 1 0, 0 1, 0 0)"),
            "a bow tie crosses itself"
        );
        assert!(!ring("LINESTRING(0 0, 1 0, 1 1)"), "not closed");
    }
}

//! `ST_SIMPLIFY(geography, tolerance_meters)`: lines and polygon rings lose the vertices
//! that lie within the tolerance of the arc that replaces them (Douglas-Peucker on the
//! sphere: the vertex farthest from the arc between the kept ends is kept when it is
//! farther than the tolerance, and each side is simplified the same way). Points stay. A
//! line whose ends come within the tolerance of each other becomes a point, and a ring left
//! with fewer than three vertices is dropped (a polygon whose shell goes, goes whole), as
//! BigQuery's snapping merges vertices closer than the tolerance.
//!
//! BigQuery simplifies with S2's builder (vertices snapped together, then edge chains
//! simplified), so the vertices it keeps can differ from these where several choices keep
//! within the tolerance.

use geo_types::{Coord, Geometry, Polygon};

use datafusion::common::Result as DfResult;

use super::centroid::angle;
use super::rows::{Arg, Out, fail, geo};
use super::sphere::{EARTH_RADIUS_M, V3, close_ring, cross, dot, xyz};
use super::value::{
    Geo, canonical, collection, empty, linestring, multipolygon, point, polygon, rings,
};

/// How far `p` is from the arc `ab` (radians).
fn from_arc(p: V3, a: V3, b: V3) -> f64 {
    let n = cross(a, b);
    let norm = dot(n, n).sqrt();
    if norm < 1e-300 {
        return angle(p, a);
    }
    if dot(cross(a, p), n) >= 0.0 && dot(cross(p, b), n) >= 0.0 {
        (dot(p, n) / norm).abs().min(1.0).asin()
    } else {
        angle(p, a).min(angle(p, b))
    }
}

/// Marks in `keep` the vertices strictly between `i` and `j` that must stay.
fn douglas_peucker(v: &[V3], i: usize, j: usize, tolerance: f64, keep: &mut [bool]) {
    if j <= i + 1 {
        return;
    }
    let (k, d) = (i + 1..j)
        .map(|k| (k, from_arc(v[k], v[i], v[j])))
        .fold((i, -1.0), |best, x| if x.1 > best.1 { x } else { best });
    if d > tolerance {
        keep[k] = true;
        douglas_peucker(v, i, k, tolerance, keep);
        douglas_peucker(v, k, j, tolerance, keep);
    }
}

/// A line's vertices that stay (the ends always do).
fn simplify_line(c: &[Coord], tolerance: f64) -> Vec<Coord> {
    if c.len() < 3 {
        return c.to_vec();
    }
    let v: Vec<V3> = c.iter().map(xyz).collect();
    let mut keep = vec![false; v.len()];
    keep[0] = true;
    keep[v.len() - 1] = true;
    douglas_peucker(&v, 0, v.len() - 1, tolerance, &mut keep);
    c.iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(*c))
        .collect()
}

/// A ring's vertices that stay, closed, or `None` when fewer than three would: the ring is
/// cut at its first vertex and at the vertex farthest from it, and each half simplified.
fn simplify_ring(ring: &[Coord], tolerance: f64) -> Option<Vec<Coord>> {
    let closed = close_ring(ring);
    let v: Vec<V3> = closed.iter().map(xyz).collect();
    let n = v.len();
    if n < 4 {
        return None;
    }
    let far = (1..n - 1).fold(1, |best, k| {
        if angle(v[0], v[k]) > angle(v[0], v[best]) {
            k
        } else {
            best
        }
    });
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[far] = true;
    keep[n - 1] = true;
    douglas_peucker(&v, 0, far, tolerance, &mut keep);
    douglas_peucker(&v, far, n - 1, tolerance, &mut keep);
    let out: Vec<Coord> = closed
        .iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(*c))
        .collect();
    // Three distinct vertices at least, none within the tolerance of the others' arc.
    (out.len() >= 4 && from_arc(xyz(&out[1]), xyz(&out[0]), xyz(&out[2])) > tolerance)
        .then_some(out)
}

fn simplify(g: &Geo, tolerance: f64) -> Option<Geo> {
    let line = |c: &[Coord]| -> Geo {
        let l = simplify_line(c, tolerance);
        match l.as_slice() {
            [a, .., b] if l.len() == 2 && angle(xyz(a), xyz(b)) <= tolerance => point(*a),
            [a] => point(*a),
            _ => linestring(l),
        }
    };
    let shape = |p: &Polygon| -> Option<Vec<Vec<Coord>>> {
        let rings = rings(p);
        let (shell, holes) = rings.split_first()?;
        let mut out = vec![simplify_ring(shell, tolerance)?];
        out.extend(holes.iter().filter_map(|h| simplify_ring(h, tolerance)));
        Some(out)
    };
    let some = |parts: Vec<Geo>| -> Option<Geo> {
        match parts.len() {
            0 => None,
            1 => parts.into_iter().next(),
            _ => Some(collection(parts)),
        }
    };
    match g {
        Geometry::Point(_) | Geometry::MultiPoint(_) => Some(g.clone()),
        Geometry::LineString(l) => Some(line(&l.0)),
        Geometry::MultiLineString(m) => {
            let parts: Vec<Geo> = m.iter().map(|l| line(&l.0)).collect();
            if parts.iter().all(|p| matches!(p, Geometry::LineString(_))) {
                Some(Geometry::MultiLineString(
                    parts
                        .into_iter()
                        .filter_map(|p| match p {
                            Geometry::LineString(l) => Some(l),
                            _ => None,
                        })
                        .collect(),
                ))
            } else {
                some(parts)
            }
        }
        Geometry::Polygon(p) => shape(p).map(polygon),
        Geometry::MultiPolygon(m) => {
            let kept: Vec<_> = m.iter().filter_map(shape).collect();
            match kept.len() {
                0 => None,
                1 => kept.into_iter().next().map(polygon),
                _ => Some(multipolygon(kept)),
            }
        }
        Geometry::GeometryCollection(parts) => some(
            parts
                .iter()
                .filter_map(|p| simplify(p, tolerance))
                .collect(),
        ),
        other => simplify(&canonical(other)?, tolerance),
    }
}

/// `ST_SIMPLIFY`.
pub(super) fn st_simplify(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    let metres = match a[1] {
        Arg::Float(f) => f,
        Arg::Int(i) => i as f64,
        _ => return Err(fail(n, "the tolerance must be a number of metres")),
    };
    if !metres.is_finite() || metres < 0.0 {
        return Err(fail(
            n,
            &format!("tolerance_meters must be a non-negative finite number, not {metres}"),
        ));
    }
    let tolerance = metres / EARTH_RADIUS_M;
    Ok(Out::Geo(simplify(&g, tolerance).unwrap_or_else(empty)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::value::Geography;

    fn simplified(s: &str, metres: f64) -> DfResult<String> {
        match st_simplify("st_simplify", &[Arg::Text(s.into()), Arg::Float(metres)])? {
            Out::Geo(g) => Ok(g.wkt()),
            _ => unreachable!(),
        }
    }

    #[test]
    fn simplifies_within_the_tolerance() {
        // BigQuery (fixture st_simplify_planar): still a linestring, the middle vertex on
        // the equator's arc gone.
        assert_eq!(
            simplified("LINESTRING(0 0, 1 0, 2 0)", 1.0).unwrap(),
            "LINESTRING(0 0, 2 0)"
        );
        // 0.001 degrees off the arc is 111 m: kept under 100 m, dropped over 200 m.
        assert_eq!(
            simplified("LINESTRING(0 0, 1 0.001, 2 0)", 100.0).unwrap(),
            "LINESTRING(0 0, 1 0.001, 2 0)"
        );
        assert_eq!(
            simplified("LINESTRING(0 0, 1 0.001, 2 0)", 200.0).unwrap(),
            "LINESTRING(0 0, 2 0)"
        );
        assert_eq!(
            simplified("POLYGON((0 0, 1 0, 2 0, 2 2, 0 2, 0 0))", 10.0).unwrap(),
            "POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))"
        );
        // A polygon narrower than the tolerance goes; a short line becomes a point.
        assert_eq!(
            simplified("POLYGON((0 0, 1 0, 1 0.0001, 0 0.0001, 0 0))", 100.0).unwrap(),
            "GEOMETRYCOLLECTION EMPTY"
        );
        assert_eq!(
            simplified("LINESTRING(0 0, 0.0001 0)", 100.0).unwrap(),
            "POINT(0 0)"
        );
        assert_eq!(simplified("POINT(1 2)", 1e6).unwrap(), "POINT(1 2)");
        assert!(simplified("POINT(1 2)", -1.0).is_err());
        assert!(simplified("POINT(1 2)", f64::NAN).is_err());
    }
}

//! Geography measures on the sphere: `ST_AREA`, `ST_PERIMETER`, `ST_MAXDISTANCE` (of
//! points), `ST_AZIMUTH` and `ST_ANGLE`; `ST_LENGTH` is [`Geography::length`], `ST_DISTANCE`
//! of points [`super::rows::two_points`].

use datafusion::common::Result as DfResult;
use geo::HasDimensions;
use geo_types::Coord;

use super::parts::Parts;
use super::rows::{Arg, Out, fail, geo};
use super::sphere::{EARTH_RADIUS_M, close_ring, closed, cross, distance, dot};
use super::value::{Geography, linestring, unsupported};

/// The area of one ring on the sphere, in steradians: the sum of the signed areas of the
/// triangles fanned from its first vertex (Girard's excess through the vector formula
/// `2 atan2(a . (b x c), 1 + a.b + b.c + c.a)`), taken as the smaller side of the ring.
fn ring_area(ring: &[Coord]) -> f64 {
    let v = closed(ring);
    if v.len() < 4 {
        return 0.0;
    }
    let o = v[0];
    let mut sum = 0.0;
    for w in v[1..].windows(2) {
        let (b, c) = (w[0], w[1]);
        sum += 2.0 * dot(o, cross(b, c)).atan2(1.0 + dot(o, b) + dot(b, c) + dot(c, o));
    }
    let a = sum.abs();
    if a > 2.0 * std::f64::consts::PI {
        4.0 * std::f64::consts::PI - a
    } else {
        a
    }
}

/// `ST_AREA`: square metres of the polygons (holes taken out); 0 for points and lines.
pub(super) fn st_area(n: &str, a: &[Arg]) -> DfResult<Out> {
    let p = Parts::of(&geo(n, &a[0])?);
    if a.len() > 1 && matches!(a[1], Arg::Bool(true)) {
        return Err(unsupported(&format!(
            "{n} on the spheroid (bigq-emulator measures on the sphere)"
        )));
    }
    let r2 = EARTH_RADIUS_M * EARTH_RADIUS_M;
    let area: f64 = p
        .polygons
        .iter()
        .map(|rings| {
            let (shell, holes) = rings.split_first().map_or((0.0, 0.0), |(s, h)| {
                (ring_area(s), h.iter().map(|h| ring_area(h)).sum::<f64>())
            });
            (shell - holes).max(0.0)
        })
        .sum();
    Ok(Out::Float(area * r2))
}

/// `ST_PERIMETER`: metres of the polygons' rings (holes too); 0 for points and lines.
pub(super) fn st_perimeter(n: &str, a: &[Arg]) -> DfResult<Out> {
    let p = Parts::of(&geo(n, &a[0])?);
    if a.len() > 1 && matches!(a[1], Arg::Bool(true)) {
        return Err(unsupported(&format!(
            "{n} on the spheroid (bigq-emulator measures on the sphere)"
        )));
    }
    // Each ring, closed, measured as a line.
    let total = p
        .polygons
        .iter()
        .flatten()
        .map(|ring| linestring(close_ring(ring)).length())
        .sum();
    Ok(Out::Float(total))
}

/// `ST_MAXDISTANCE` of points: the largest distance between two of them.
pub(super) fn st_maxdistance(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y) = (geo(n, &a[0])?, geo(n, &a[1])?);
    if x.is_empty() || y.is_empty() {
        return Err(fail(n, "empty geography"));
    }
    let (x, y) = (Parts::of(&x), Parts::of(&y));
    if !(x.lines.is_empty() && x.polygons.is_empty() && y.lines.is_empty() && y.polygons.is_empty())
    {
        return Err(unsupported(&format!(
            "{n} of lines or polygons (bigq-emulator measures points only)"
        )));
    }
    let d = x
        .points
        .iter()
        .flat_map(|p| y.points.iter().map(move |q| distance(p, q)))
        .fold(0.0, f64::max);
    Ok(Out::Float(d))
}

/// The initial bearing of the great circle from `a` to `b`, in radians clockwise from north
/// in `[0, 2pi)`; `None` where there is no one direction (the same point, or antipodes).
fn bearing(a: &Coord, b: &Coord) -> Option<f64> {
    let (pa, pb) = (super::sphere::xyz(a), super::sphere::xyz(b));
    let d = dot(pa, pb);
    if d >= 1.0 - 1e-15 || d <= -1.0 + 1e-15 {
        return None;
    }
    let (la, lb) = (a.y.to_radians(), b.y.to_radians());
    let dl = (b.x - a.x).to_radians();
    let y = dl.sin() * lb.cos();
    let x = la.cos() * lb.sin() - la.sin() * lb.cos() * dl.cos();
    let t = y.atan2(x);
    Some(if t < 0.0 {
        t + 2.0 * std::f64::consts::PI
    } else {
        t
    })
}

/// `ST_AZIMUTH(a, b)`: the bearing from point `a` to point `b`; NULL for one point twice or
/// antipodes.
pub(super) fn st_azimuth(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (p, q) = (point(n, &a[0])?, point(n, &a[1])?);
    Ok(bearing(&p, &q).map_or(Out::Null, |t| Out::Float(t.max(0.0))))
}

/// `ST_ANGLE(a, b, c)`: the angle at `b` clockwise from the line to `a` to the line to `c`,
/// in `[0, 2pi)`; NULL where either line has no direction.
pub(super) fn st_angle(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (p, q, r) = (point(n, &a[0])?, point(n, &a[1])?, point(n, &a[2])?);
    let (Some(first), Some(second)) = (bearing(&q, &p), bearing(&q, &r)) else {
        return Ok(Out::Null);
    };
    let t = (second - first).rem_euclid(2.0 * std::f64::consts::PI);
    Ok(Out::Float(if t >= 2.0 * std::f64::consts::PI {
        0.0
    } else {
        t
    }))
}

fn point(n: &str, a: &Arg) -> DfResult<Coord> {
    match geo(n, a)? {
        geo_types::Geometry::Point(p) => Ok(p.0),
        other => Err(fail(
            n,
            &format!("the geography must be a point, not {}", other.type_name()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::sphere::coord;
    use crate::sql::functions::geography::value::Geo;

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
        let (ny, la) = (coord(-74.0060, 40.7128), coord(-118.2437, 34.0522));
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

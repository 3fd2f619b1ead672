//! `ST_CENTROID` as BigQuery's S2 computes it: the centroid of the parts of the highest
//! dimension, each weighted by its size on the sphere. Points count as their unit vectors;
//! an edge as the vector to its midpoint scaled to its length; a polygon ring as the sum,
//! over a fan of triangles from its first vertex, of each spherical triangle's true (mass)
//! centroid scaled by its signed area. The sum, made unit, is the centroid. Following the
//! same arithmetic as S2 gives the same last digits BigQuery prints.

use geo_types::Coord;

use datafusion::common::Result as DfResult;

use super::parts::Parts;
use super::rows::{Arg, Out, geo};
use super::sphere::{V3, close_ring, cross, dot, lnglat, xyz};
use super::value::{Geo, empty, point};

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(k: f64, a: V3) -> V3 {
    [k * a[0], k * a[1], k * a[2]]
}

/// The angle between two vectors, accurate for small angles too.
pub(super) fn angle(a: V3, b: V3) -> f64 {
    let c = cross(a, b);
    dot(c, c).sqrt().atan2(dot(a, b))
}

/// The true centroid of the spherical triangle `abc` times its signed area (positive
/// counter-clockwise): the point `m` with `a.m = det/2 * |bc|/sin|bc|` and likewise for `b`
/// and `c`, solved by Cramer's rule on the rows `a`, `b - a`, `c - a` (less cancellation
/// for small triangles).
fn triangle_centroid(a: V3, b: V3, c: V3) -> V3 {
    let ratio = |t: f64| if t == 0.0 { 1.0 } else { t / t.sin() };
    let (ra, rb, rc) = (ratio(angle(b, c)), ratio(angle(c, a)), ratio(angle(a, b)));
    let x = [a[0], b[0] - a[0], c[0] - a[0]];
    let y = [a[1], b[1] - a[1], c[1] - a[1]];
    let z = [a[2], b[2] - a[2], c[2] - a[2]];
    let r = [ra, rb - ra, rc - ra];
    scale(
        0.5,
        [
            dot(cross(y, z), r),
            dot(cross(z, x), r),
            dot(cross(x, y), r),
        ],
    )
}

/// The centroid of the arc `ab` times its length: towards its midpoint, `2 sin(t/2)` long
/// for an arc of angle `t` (nothing for antipodal ends).
fn edge_centroid(a: V3, b: V3) -> V3 {
    let (d, s) = (sub(a, b), add(a, b));
    let (sin2, cos2) = (dot(d, d), dot(s, s));
    if cos2 == 0.0 {
        return [0.0; 3];
    }
    scale((sin2 / cos2).sqrt(), s)
}

/// The signed area of a ring (vertices without the closing repeat), positive when it turns
/// counter-clockwise around its interior.
pub(super) fn signed_area(v: &[V3]) -> f64 {
    if v.len() < 3 {
        return 0.0;
    }
    v[1..]
        .windows(2)
        .map(|w| {
            let (o, b, c) = (v[0], w[0], w[1]);
            2.0 * dot(o, cross(b, c)).atan2(1.0 + dot(o, b) + dot(b, c) + dot(c, o))
        })
        .sum()
}

/// The fan of triangles from the first vertex, centroids summed. A ring has at most a
/// hemisphere in BigQuery (the smaller side is the interior), so no fan edge comes near
/// 180 degrees, where S2 would move the fan's origin.
fn ring_centroid(v: &[V3]) -> V3 {
    v[1..].windows(2).fold([0.0; 3], |sum, w| {
        add(sum, triangle_centroid(v[0], w[0], w[1]))
    })
}

/// A polygon ring as unit vectors, the closing vertex left out, oriented with the interior
/// on the left for a shell (counter-clockwise) and on the right for a hole.
fn oriented(ring: &[Coord], hole: bool) -> Vec<V3> {
    let closed = close_ring(ring);
    let mut v: Vec<V3> = closed[..closed.len().saturating_sub(1)]
        .iter()
        .map(xyz)
        .collect();
    if v.len() >= 3 && (signed_area(&v) < 0.0) != hole {
        v.reverse();
    }
    v
}

/// The centroid's direction (not unit length), or `None` for an empty geography.
fn centroid(g: &Geo) -> Option<V3> {
    let p = Parts::of(g);
    let sum = if !p.polygons.is_empty() {
        p.polygons
            .iter()
            .flat_map(|rings| rings.iter().enumerate().map(|(i, r)| oriented(r, i > 0)))
            .filter(|v| v.len() >= 3)
            .fold([0.0; 3], |sum, v| add(sum, ring_centroid(&v)))
    } else if !p.lines.is_empty() {
        p.lines
            .iter()
            .flat_map(|l| {
                let v: Vec<V3> = l.iter().map(xyz).collect();
                v.windows(2)
                    .map(|w| edge_centroid(w[0], w[1]))
                    .collect::<Vec<_>>()
            })
            .fold([0.0; 3], add)
    } else if !p.points.is_empty() {
        p.points.iter().map(xyz).fold([0.0; 3], add)
    } else {
        return None;
    };
    Some(sum)
}

/// `ST_CENTROID`: a point, or the empty geography for an empty input or parts whose
/// weights cancel out (antipodal points).
pub(super) fn st_centroid(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    Ok(Out::Geo(match centroid(&g) {
        Some(v) if dot(v, v) > 0.0 => point(lnglat(v)),
        _ => empty(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::value::Geography;
    use geo_types::{Geometry, Point};

    fn wkt(s: &str) -> String {
        match st_centroid("st_centroid", &[Arg::Text(s.into())]).unwrap() {
            Out::Geo(g) => g.wkt(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn centroids_as_bigquery_computes_them() {
        // BigQuery: ST_CENTROID of the 4-degree square (fixture st_centroid_polygon), to
        // the last digit.
        assert_eq!(
            wkt("POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))"),
            "POINT(2.00000000000004 2.00040218892024)"
        );
        // The same square written clockwise is the same polygon.
        let cw = wkt("POLYGON((0 0, 0 4, 4 4, 4 0, 0 0))");
        assert!(cw.starts_with("POINT(2.0000000000000"), "{cw}");
        // A hole pulls the centroid away from it.
        let holed = Geo::parse(&wkt(
            "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (0.5 0.5, 1.5 0.5, 1.5 1.5, 0.5 1.5, 0.5 0.5))",
        ))
        .unwrap();
        let Geometry::Point(Point(c)) = holed else {
            panic!()
        };
        assert!(c.x > 2.05 && c.y > 2.05, "{c:?}");
        // Points: the mean direction; lines: the middle by length.
        assert_eq!(wkt("MULTIPOINT(0 0, 0 0)"), "POINT(0 0)");
        let l = wkt("LINESTRING(0 0, 2 0)");
        assert_eq!(l, "POINT(1 0)");
        assert_eq!(wkt("POINT EMPTY"), "GEOMETRYCOLLECTION EMPTY");
        assert!(st_centroid("st_centroid", &[Arg::Text("POLYGON((0 0".into())]).is_err());
    }
}

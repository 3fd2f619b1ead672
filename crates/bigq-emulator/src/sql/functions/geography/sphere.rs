//! Points on the sphere BigQuery computes on: unit vectors, great-circle distances and arcs,
//! and where a point lies relative to a ring (by its winding number seen from the point).
//!
//! BigQuery keeps a point as an S2 unit vector, so what it hands back as numbers (WKB,
//! `ST_X`) is the coordinate after a round trip through that vector (1 becomes
//! 0.9999999999999998): [`s2_round_trip`] does the same.

use geo::{Distance, HaversineMeasure, Point};
use geo_types::Coord;

/// The radius of the sphere BigQuery measures distances on, in metres (S2's
/// `S2Earth::RadiusMeters`; with the IUGG mean radius, 6371008.8 m, `geo`'s default, New
/// York to Los Angeles comes out 0.74 m short of BigQuery's figure).
pub(super) const EARTH_RADIUS_M: f64 = 6_371_010.0;

/// `geo`'s haversine measures on S2's Earth.
pub(super) const S2_EARTH: HaversineMeasure = HaversineMeasure::new(EARTH_RADIUS_M);

/// The great-circle distance between two points, in metres.
pub(super) fn distance(a: &Coord, b: &Coord) -> f64 {
    let d = S2_EARTH.distance(Point(*a), Point(*b));
    // Near-antipodal points can round the haversine past 1, whose arcsine is NaN: they are
    // half a turn apart.
    if d.is_nan() && [a.x, a.y, b.x, b.y].iter().all(|v| v.is_finite()) {
        std::f64::consts::PI * EARTH_RADIUS_M
    } else {
        d
    }
}

pub(super) fn coord(x: f64, y: f64) -> Coord {
    Coord { x, y }
}

pub(super) type V3 = [f64; 3];

pub(super) fn xyz(c: &Coord) -> V3 {
    let (lat, lng) = (c.y.to_radians(), c.x.to_radians());
    [lat.cos() * lng.cos(), lat.cos() * lng.sin(), lat.sin()]
}

pub(super) fn lnglat(v: V3) -> Coord {
    let lat = v[2].atan2((v[0] * v[0] + v[1] * v[1]).sqrt());
    let lng = v[1].atan2(v[0]);
    coord(lng.to_degrees(), lat.to_degrees())
}

/// A coordinate as BigQuery hands it back after keeping it as an S2 point.
pub(super) fn s2_round_trip(c: &Coord) -> Coord {
    lnglat(xyz(c))
}

pub(super) fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(super) fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Below this a triple product is taken as zero (about 6 mm on the Earth).
pub(super) const EPS: f64 = 1e-15;

pub(super) fn same(a: &Coord, b: &Coord) -> bool {
    let (p, q) = (xyz(a), xyz(b));
    dot(p, q) > 1.0 - EPS
}

/// Whether `p` lies on the arc from `a` to `b`.
pub(super) fn on_arc(p: V3, a: V3, b: V3) -> bool {
    let n = cross(a, b);
    let norm = dot(n, n).sqrt();
    if norm < EPS {
        return dot(p, a) > 1.0 - EPS;
    }
    (dot(p, n) / norm).abs() < 1e-12 && dot(cross(a, p), n) >= -EPS && dot(cross(p, b), n) >= -EPS
}

/// Whether the arcs `ab` and `cd` cross at a point inside both (not at an end, not along a
/// shared piece).
pub(super) fn arcs_cross(a: V3, b: V3, c: V3, d: V3) -> bool {
    let ab = cross(a, b);
    let cd = cross(c, d);
    let (sc, sd) = (dot(ab, c), dot(ab, d));
    let (sa, sb) = (dot(cd, a), dot(cd, b));
    if sc.abs() < EPS || sd.abs() < EPS || sa.abs() < EPS || sb.abs() < EPS {
        return false;
    }
    // Opposite sides both ways, and on the same hemisphere (not the antipodal crossing).
    // (Perpendicular great circles, a meridian and the equator, cross too: their normals'
    // dot product is 0 but their cross product is not.)
    sc.signum() != sd.signum() && sa.signum() != sb.signum() && {
        let x = cross(ab, cd);
        let s = if dot(x, a) + dot(x, b) > 0.0 {
            1.0
        } else {
            -1.0
        };
        let x = [x[0] * s, x[1] * s, x[2] * s];
        dot(x, c) + dot(x, d) > 0.0
    }
}

/// Whether the arcs meet anywhere (crossing, or an end of one on the other).
pub(super) fn arcs_meet(a: V3, b: V3, c: V3, d: V3) -> bool {
    arcs_cross(a, b, c, d)
        || on_arc(a, c, d)
        || on_arc(b, c, d)
        || on_arc(c, a, b)
        || on_arc(d, a, b)
}

/// Where a point is relative to a polygon.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Place {
    Inside,
    Boundary,
    Outside,
}

/// The winding number of a closed ring around `p` (the sum of the angles its edges make
/// at `p`, over a full turn).
pub(super) fn winding(p: V3, ring: &[V3]) -> i64 {
    let mut total = 0.0;
    for w in ring.windows(2) {
        let (a, b) = (w[0], w[1]);
        let y = dot(p, cross(a, b));
        let x = dot(a, b) - dot(p, a) * dot(p, b);
        total += y.atan2(x);
    }
    (total / std::f64::consts::TAU).round() as i64
}

/// A ring with its first vertex repeated at the end, if it was not already.
pub(super) fn close_ring(ring: &[Coord]) -> Vec<Coord> {
    let mut r = ring.to_vec();
    if let (Some(f), Some(l)) = (ring.first(), ring.last())
        && !same(f, l)
    {
        r.push(*f);
    }
    r
}

/// A closed ring as unit vectors.
pub(super) fn closed(ring: &[Coord]) -> Vec<V3> {
    close_ring(ring).iter().map(xyz).collect()
}

pub(super) fn place_in_polygon(p: V3, rings: &[Vec<V3>]) -> Place {
    if rings
        .iter()
        .any(|r| r.windows(2).any(|w| on_arc(p, w[0], w[1])))
    {
        return Place::Boundary;
    }
    let Some((shell, holes)) = rings.split_first() else {
        return Place::Outside;
    };
    if winding(p, shell) == 0 || holes.iter().any(|h| winding(p, h) != 0) {
        Place::Outside
    } else {
        Place::Inside
    }
}

/// The signed area of a ring on the unit sphere: positive when it runs counterclockwise
/// around the region on its left (the sum of the signed areas of the triangles fanned from
/// its first vertex).
pub(super) fn signed_ring_area(ring: &[Coord]) -> f64 {
    let v = closed(ring);
    if v.len() < 4 {
        return 0.0;
    }
    let o = v[0];
    v[1..]
        .windows(2)
        .map(|w| {
            let (b, c) = (w[0], w[1]);
            2.0 * dot(o, cross(b, c)).atan2(1.0 + dot(o, b) + dot(b, c) + dot(c, o))
        })
        .sum()
}

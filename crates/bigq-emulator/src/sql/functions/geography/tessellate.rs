//! The extra vertices BigQuery writes in `ST_ASGEOJSON`: GeoJSON's edges are straight in
//! longitude/latitude (the plate carrée projection) while a GEOGRAPHY's edges are great-circle
//! arcs, so each edge is split at its midpoint on the sphere, again and again, until the
//! straight edge between two vertices keeps within a tolerance of the arc.
//!
//! The error of a straight edge is estimated as S2's edge tessellator does: the arc and the
//! straight edge, each followed at the same fraction of the way, are compared at two
//! fractions, about a third in from either end (where a curve bending one way and one
//! crossing the arc are both caught), and the larger gap, scaled by a constant that bounds
//! the gap over the whole edge, must stay within the tolerance. Edges over a quarter turn
//! are always split.

use geo_types::{Coord, Geometry, LineString, Polygon};

use super::centroid::angle;
use super::sphere::{EARTH_RADIUS_M, V3, coord, cross, dot, lnglat, xyz};
use super::value::{Geo, canonical};

/// How far (as a chord of the unit sphere, squared) a written edge may stray from the
/// arc, as BigQuery draws it: 10 metres. The recorded outputs bound it: a 1-degree edge
/// along latitude 2, estimated 8.7 m off, is written whole; along latitude 3 (13 m) it is
/// split; from (1 1) to (2 2) (15 m) it is split once.
fn tolerance() -> f64 {
    let radians = SCALE * 10.0 / EARTH_RADIUS_M;
    let chord = 2.0 * (0.5 * radians).sin();
    chord * chord
}

/// Where along an edge the two points compared lie (and one minus it): the fraction at
/// which a parabola-shaped and a cubic-shaped error, each scaled to a peak of 1, are equal.
const FRACTION: f64 = 0.312_156_910_822_483_1;

/// What the error there is, at most, of the error's peak over the edge (the tolerance is
/// scaled by it rather than the error by its inverse).
const SCALE: f64 = 0.838_299_925_698_885_1;

fn normalize(v: V3) -> V3 {
    let n = dot(v, v).sqrt();
    let k = if n == 0.0 { 0.0 } else { 1.0 / n };
    [v[0] * k, v[1] * k, v[2] * k]
}

/// The point a fraction `t` of the way along the arc from `a` to `b`.
fn along_arc(a: V3, b: V3, t: f64) -> V3 {
    let r = t * angle(a, b);
    let towards = normalize(cross(cross(a, b), a));
    normalize([
        r.cos() * a[0] + r.sin() * towards[0],
        r.cos() * a[1] + r.sin() * towards[1],
        r.cos() * a[2] + r.sin() * towards[2],
    ])
}

/// The point a fraction `t` of the way along the straight edge from `p` to `q` (degrees).
fn along_line(p: &Coord, q: &Coord, t: f64) -> V3 {
    xyz(&coord((1.0 - t) * p.x + t * q.x, (1.0 - t) * p.y + t * q.y))
}

/// `q`'s longitude moved by a whole turn to within half a turn of `p`'s, so that the
/// straight edge takes the short way round.
fn wrap_towards(p: &Coord, q: Coord) -> Coord {
    let dx = q.x - p.x;
    if dx > 180.0 {
        coord(q.x - 360.0, q.y)
    } else if dx < -180.0 {
        coord(q.x + 360.0, q.y)
    } else {
        q
    }
}

/// The squared chord between the arc and the straight edge at the two fractions (infinite
/// for an edge over a quarter turn).
fn error(p: &Coord, a: V3, q: &Coord, b: V3) -> f64 {
    if dot(a, b) < -1e-14 {
        return f64::INFINITY;
    }
    [FRACTION, 1.0 - FRACTION]
        .iter()
        .map(|&t| {
            let (on_arc, on_line) = (along_arc(a, b, t), along_line(p, q, t));
            let d = [
                on_arc[0] - on_line[0],
                on_arc[1] - on_line[1],
                on_arc[2] - on_line[2],
            ];
            dot(d, d)
        })
        .fold(0.0, f64::max)
}

/// Appends the vertices after `p` (`a` on the sphere) up to `q` (`b`), splitting the edge
/// at its midpoint on the sphere while it strays too far.
fn split(p: &Coord, a: V3, q: &Coord, b: V3, tolerance: f64, out: &mut Vec<Coord>, depth: u32) {
    let q = wrap_towards(p, *q);
    if depth >= 48 || error(p, a, &q, b) <= tolerance {
        out.push(q);
        return;
    }
    let mid = normalize([a[0] + b[0], a[1] + b[1], a[2] + b[2]]);
    let m = wrap_towards(p, lnglat(mid));
    split(p, a, &m, mid, tolerance, out, depth + 1);
    split(&m, mid, &q, b, tolerance, out, depth + 1);
}

/// Longitudes taken back into [-180, 180] after wrapping.
fn unwrap(c: Coord) -> Coord {
    if (-180.0..=180.0).contains(&c.x) {
        c
    } else {
        coord((c.x + 180.0).rem_euclid(360.0) - 180.0, c.y)
    }
}

/// A chain of vertices with the vertices GeoJSON needs added, each as BigQuery keeps it (after
/// the round trip through a unit vector).
fn chain(vertices: &[Coord], tolerance: f64) -> Vec<Coord> {
    let Some(first) = vertices.first() else {
        return Vec::new();
    };
    let mut out = vec![lnglat(xyz(first))];
    for w in vertices.windows(2) {
        let (a, b) = (xyz(&w[0]), xyz(&w[1]));
        let p = *out.last().unwrap_or(first);
        split(&p, a, &lnglat(b), b, tolerance, &mut out, 0);
    }
    out.into_iter().map(unwrap).collect()
}

/// `g` with the extra vertices of its lines' and polygons' edges, for GeoJSON.
pub(super) fn densified(g: &Geo) -> Geo {
    let t = tolerance();
    let line = |l: &LineString| LineString(chain(&l.0, t));
    // A ring ends on the very coordinate it starts with, whatever the longitude wrapping did.
    let ring = |l: &LineString| {
        let mut c = chain(&l.0, t);
        if let Some(&first) = c.first()
            && let Some(last) = c.last_mut()
        {
            *last = first;
        }
        LineString(c)
    };
    let shape =
        |p: &Polygon| Polygon::new(ring(p.exterior()), p.interiors().iter().map(ring).collect());
    match g {
        Geometry::Point(_) | Geometry::MultiPoint(_) => g.clone(),
        Geometry::LineString(l) => Geometry::LineString(line(l)),
        Geometry::Polygon(p) => Geometry::Polygon(shape(p)),
        Geometry::MultiLineString(m) => Geometry::MultiLineString(m.iter().map(line).collect()),
        Geometry::MultiPolygon(m) => Geometry::MultiPolygon(m.iter().map(shape).collect()),
        Geometry::GeometryCollection(c) => {
            Geometry::GeometryCollection(c.iter().map(densified).collect())
        }
        other => canonical(other).map_or_else(|| other.clone(), |g| densified(&g)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::value::Geography;

    fn geojson(s: &str) -> String {
        densified(&Geo::parse(s).unwrap()).geojson()
    }

    #[test]
    fn long_edges_get_the_vertices_bigquery_adds() {
        // BigQuery's ST_ASGEOJSON outputs (fixtures st_asgeojson_*), digit for digit.
        assert_eq!(
            geojson("LINESTRING(0 0, 1 1, 2 2)"),
            r#"{ "type": "LineString", "coordinates": [ [0, 0], [1, 1], [1.49988573656168, 1.5000570914792], [2, 2] ] }"#
        );
        assert_eq!(
            geojson("MULTILINESTRING((0 0, 1 1), (2 2, 3 3))"),
            r#"{ "type": "MultiLineString", "coordinates": [ [ [0, 0], [1, 1] ], [ [2, 2], [2.49980948352557, 2.5000950751632], [3, 3] ] ] }"#
        );
        assert_eq!(
            geojson("MULTIPOLYGON(((0 0, 1 0, 1 1, 0 1, 0 0)), ((2 2, 3 2, 3 3, 2 3, 2 2)))"),
            r#"{ "type": "MultiPolygon", "coordinates": [ [ [ [0, 0], [1, 0], [1, 1], [0, 1], [0, 0] ] ], [ [ [2, 2], [3, 2], [3, 3], [2.5, 3.00011402647166], [2, 3], [2, 2] ] ] ] }"#
        );
        // Meridians are straight in longitude/latitude: not split, unless over a quarter
        // turn long.
        assert_eq!(
            geojson("LINESTRING(5 -40, 5 40)"),
            r#"{ "type": "LineString", "coordinates": [ [5, -40], [5, 40] ] }"#
        );
        assert_eq!(
            geojson("LINESTRING(5 -60, 5 60)"),
            r#"{ "type": "LineString", "coordinates": [ [5, -60], [5, 0], [5, 60] ] }"#
        );
        // A long edge is split until every piece keeps within 10 m.
        let Geometry::LineString(LineString(c)) =
            densified(&Geo::parse("LINESTRING(-100 40, 100 40)").unwrap())
        else {
            panic!()
        };
        assert!(c.len() > 50, "{}", c.len());
        assert!(c.iter().all(|c| (-180.0..=180.0).contains(&c.x)));
        // Across the antimeridian the short way, longitudes kept in range.
        let Geometry::LineString(LineString(c)) =
            densified(&Geo::parse("LINESTRING(170 60, -170 60)").unwrap())
        else {
            panic!()
        };
        assert!(c.iter().all(|c| c.x.abs() >= 170.0), "{c:?}");
    }
}

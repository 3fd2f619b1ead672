//! `ST_INTERSECTION` and `ST_DIFFERENCE` of polygons (and of points with anything), on the
//! sphere: every edge of either side is cut where it crosses or touches the other side's
//! boundary, each piece is kept or not by where its midpoint lies in the other side (inside,
//! outside, or along its boundary in the same or the opposite direction), and the kept
//! pieces are linked into rings, turning as far left as possible where several continue.
//!
//! The rings come out as BigQuery's S2 builder writes them: shells counter-clockwise, holes
//! clockwise, each ring rotated so that the pieces of the last input edge (the first
//! geography's edges numbered before the second's, in ring order) come last, and the rings
//! ordered by their first piece's input edge.
//!
//! Not served: lines (refused by name), and the lower-dimensional part of a result (two
//! polygons meeting only along an edge or at a corner give the empty geography here, where
//! BigQuery gives the shared line or point).

use geo_types::Coord;

use datafusion::common::Result as DfResult;

use super::centroid::{angle, signed_area};
use super::parts::{Parts, Sphere};
use super::rows::{Arg, Out, fail, geo};
use super::sphere::{
    Place, V3, arcs_cross, close_ring, cross, dot, lnglat, on_arc, place_in_polygon, same, xyz,
};
use super::value::{Geo, collection, multipoint, multipolygon, point, polygon, unsupported};

/// Which boolean operation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Intersection,
    Difference,
}

fn normalize(v: V3) -> V3 {
    let n = dot(v, v).sqrt();
    [v[0] / n, v[1] / n, v[2] / n]
}

/// A polygon's rings as unit vectors without the closing repeat, the shell
/// counter-clockwise and the holes clockwise (as S2 keeps them).
fn oriented(rings: &[Vec<Coord>]) -> Vec<Vec<V3>> {
    rings
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let closed = close_ring(r);
            let mut v: Vec<V3> = closed[..closed.len().saturating_sub(1)]
                .iter()
                .map(xyz)
                .collect();
            if v.len() < 3 {
                return None;
            }
            if (signed_area(&v) < 0.0) != (i > 0) {
                v.reverse();
            }
            Some(v)
        })
        .collect()
}

/// One side of the operation: its polygons' oriented rings, and the same rings closed for
/// the point-in-polygon test.
struct Side {
    polygons: Vec<Vec<Vec<V3>>>,
    closed: Vec<Vec<Vec<V3>>>,
}

impl Side {
    fn of(polygons: &[Vec<Vec<Coord>>]) -> Side {
        let polygons: Vec<Vec<Vec<V3>>> = polygons.iter().map(|p| oriented(p)).collect();
        let closed = polygons
            .iter()
            .map(|p| {
                p.iter()
                    .map(|r| {
                        let mut r = r.clone();
                        r.push(r[0]);
                        r
                    })
                    .collect()
            })
            .collect();
        Side { polygons, closed }
    }

    fn place(&self, v: V3) -> Place {
        let mut place = Place::Outside;
        for p in &self.closed {
            match place_in_polygon(v, p) {
                Place::Inside => return Place::Inside,
                Place::Boundary => place = Place::Boundary,
                Place::Outside => {}
            }
        }
        place
    }

    /// Every edge, numbered in ring order.
    fn edges(&self) -> Vec<(V3, V3)> {
        self.polygons
            .iter()
            .flatten()
            .flat_map(|r| (0..r.len()).map(move |i| (r[i], r[(i + 1) % r.len()])))
            .collect()
    }
}

/// A piece of an input edge: its ends' vertex numbers and the input edge's number.
#[derive(Clone, Copy, Debug)]
struct Piece {
    from: usize,
    to: usize,
    edge: usize,
}

/// Whether two unit vectors are the same point up to rounding (a micrometre or so apart: a
/// crossing is computed once and handed to both edges, so the same point has the same bits).
fn near(v: V3, w: V3) -> bool {
    let d = [v[0] - w[0], v[1] - w[1], v[2] - w[2]];
    dot(d, d) < 1e-26
}

/// The vertices met so far; a point within rounding of one of them is that vertex.
#[derive(Default)]
struct Vertices(Vec<V3>);

impl Vertices {
    fn id(&mut self, v: V3) -> usize {
        if let Some(i) = self.0.iter().position(|&w| near(v, w)) {
            return i;
        }
        self.0.push(v);
        self.0.len() - 1
    }
}

/// Where the great circles of `ab` and `cd` meet, on the side of the two arcs.
fn crossing(a: V3, b: V3, c: V3, d: V3) -> V3 {
    let x = normalize(cross(cross(a, b), cross(c, d)));
    let s = [
        a[0] + b[0] + c[0] + d[0],
        a[1] + b[1] + c[1] + d[1],
        a[2] + b[2] + c[2] + d[2],
    ];
    if dot(x, s) < 0.0 {
        [-x[0], -x[1], -x[2]]
    } else {
        x
    }
}

/// The edges of `mine` cut where `theirs` crosses or touches them, as pieces numbered from
/// `first` on.
fn pieces(
    mine: &[(V3, V3)],
    theirs: &[(V3, V3)],
    first: usize,
    vertices: &mut Vertices,
) -> Vec<Piece> {
    let mut out = Vec::new();
    for (k, &(a, b)) in mine.iter().enumerate() {
        let mut cuts: Vec<V3> = Vec::new();
        for &(c, d) in theirs {
            if arcs_cross(a, b, c, d) {
                // The same point whichever edge it is computed for.
                let x = if first == 0 {
                    crossing(a, b, c, d)
                } else {
                    crossing(c, d, a, b)
                };
                cuts.push(x);
            }
            for p in [c, d] {
                if on_arc(p, a, b) && !near(p, a) && !near(p, b) {
                    cuts.push(p);
                }
            }
        }
        cuts.sort_by(|x, y| angle(a, *x).total_cmp(&angle(a, *y)));
        let mut at = vertices.id(a);
        for x in cuts.into_iter().chain([b]) {
            let next = vertices.id(x);
            if next != at {
                out.push(Piece {
                    from: at,
                    to: next,
                    edge: first + k,
                });
                at = next;
            }
        }
    }
    out
}

/// The pieces the result's boundary is made of.
fn select(op: Op, a: &Side, b: &Side, pa: &[Piece], pb: &[Piece], v: &Vertices) -> Vec<Piece> {
    let mid = |p: &Piece| {
        normalize([
            v.0[p.from][0] + v.0[p.to][0],
            v.0[p.from][1] + v.0[p.to][1],
            v.0[p.from][2] + v.0[p.to][2],
        ])
    };
    let along = |p: &Piece, others: &[Piece]| {
        others
            .iter()
            .find(|q| (q.from, q.to) == (p.from, p.to))
            .map(|_| true)
            .or_else(|| {
                others
                    .iter()
                    .find(|q| (q.from, q.to) == (p.to, p.from))
                    .map(|_| false)
            })
    };
    let mut out = Vec::new();
    for p in pa {
        let keep = match (b.place(mid(p)), op) {
            (Place::Inside, Op::Intersection) | (Place::Outside, Op::Difference) => true,
            (Place::Boundary, _) => {
                // Shared with the other side: once, where both interiors (intersection) or
                // only this side's (difference) lie to its left.
                along(p, pb) == Some(op == Op::Intersection)
            }
            _ => false,
        };
        if keep {
            out.push(*p);
        }
    }
    for p in pb {
        if a.place(mid(p)) == Place::Inside {
            out.push(match op {
                Op::Intersection => *p,
                // The second side's boundary inside the first bounds the difference the
                // other way round.
                Op::Difference => Piece {
                    from: p.to,
                    to: p.from,
                    edge: p.edge,
                },
            });
        }
    }
    out
}

/// The turn from the direction `a -> b` to `b -> c`, positive to the left.
fn turn(a: V3, b: V3, c: V3) -> f64 {
    let n1 = cross(a, b);
    let n2 = cross(b, c);
    dot(cross(n1, n2), b).atan2(dot(n1, n2))
}

/// The pieces linked into rings (each a list of pieces).
fn rings(pieces: &[Piece], v: &Vertices) -> Vec<Vec<Piece>> {
    let mut used = vec![false; pieces.len()];
    let mut out = Vec::new();
    for start in 0..pieces.len() {
        if used[start] {
            continue;
        }
        used[start] = true;
        let mut ring = vec![pieces[start]];
        loop {
            let last = ring[ring.len() - 1];
            if last.to == ring[0].from {
                break;
            }
            let next = (0..pieces.len())
                .filter(|&k| !used[k] && pieces[k].from == last.to)
                .max_by(|&x, &y| {
                    let t = |k: usize| turn(v.0[last.from], v.0[last.to], v.0[pieces[k].to]);
                    t(x).total_cmp(&t(y))
                });
            match next {
                Some(k) => {
                    used[k] = true;
                    ring.push(pieces[k]);
                }
                None => break,
            }
        }
        if ring.len() >= 3 && ring[ring.len() - 1].to == ring[0].from {
            out.push(ring);
        }
    }
    for ring in &mut out {
        // The last run of the highest input edge goes last.
        let top = ring.iter().map(|p| p.edge).max().unwrap_or(0);
        let n = ring.len();
        if let Some(end) = (0..n).find(|&i| ring[i].edge == top && ring[(i + 1) % n].edge != top) {
            ring.rotate_left((end + 1) % n);
        }
    }
    out.sort_by_key(|r| r[0].edge);
    out
}

/// Polygons from rings: a counter-clockwise ring is a shell, a clockwise one a hole of the
/// shell it lies in.
fn polygons(rings: Vec<Vec<Piece>>, v: &Vertices) -> Vec<Vec<Vec<Coord>>> {
    let points = |r: &Vec<Piece>| r.iter().map(|p| v.0[p.from]).collect::<Vec<V3>>();
    let (shells, holes): (Vec<_>, Vec<_>) = rings
        .into_iter()
        .map(|r| points(&r))
        .partition(|r| signed_area(r) > 0.0);
    let mut out: Vec<Vec<Vec<V3>>> = shells.into_iter().map(|s| vec![s]).collect();
    for h in holes {
        let inside = out.iter_mut().find(|p| {
            let mut shell = p[0].clone();
            shell.push(shell[0]);
            let probe = normalize([h[0][0] + h[1][0], h[0][1] + h[1][1], h[0][2] + h[1][2]]);
            place_in_polygon(probe, &[shell]) != Place::Outside
        });
        if let Some(p) = inside {
            p.push(h);
        }
    }
    out.into_iter()
        .map(|p| {
            p.into_iter()
                .map(|r| {
                    let mut c: Vec<Coord> = r.into_iter().map(lnglat).collect();
                    c.push(c[0]);
                    c
                })
                .collect()
        })
        .collect()
}

/// The polygons of `x` op `y`.
fn overlay(op: Op, x: &[Vec<Vec<Coord>>], y: &[Vec<Vec<Coord>>]) -> Vec<Vec<Vec<Coord>>> {
    let (a, b) = (Side::of(x), Side::of(y));
    let (ea, eb) = (a.edges(), b.edges());
    let mut v = Vertices::default();
    let pa = pieces(&ea, &eb, 0, &mut v);
    let pb = pieces(&eb, &ea, ea.len(), &mut v);
    let kept = select(op, &a, &b, &pa, &pb, &v);
    polygons(rings(&kept, &v), &v)
}

fn geography(points: Vec<Coord>, polygons: Vec<Vec<Vec<Coord>>>) -> Geo {
    let mut parts = Vec::new();
    match points.len() {
        0 => {}
        1 => parts.push(point(points[0])),
        _ => parts.push(multipoint(points)),
    }
    match polygons.len() {
        0 => {}
        1 => parts.push(polygon(polygons.into_iter().next().unwrap_or_default())),
        _ => parts.push(multipolygon(polygons)),
    }
    match parts.len() {
        1 => parts.remove(0),
        _ => collection(parts),
    }
}

fn run(op: Op, n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y) = (geo(n, &a[0])?, geo(n, &a[1])?);
    let (px, py) = (Parts::of(&x), Parts::of(&y));
    if !px.lines.is_empty() || !py.lines.is_empty() {
        return Err(unsupported(&format!(
            "{n} of lines (bigq-emulator overlays points and polygons)"
        )));
    }
    let (sx, sy) = (Sphere::of(&x), Sphere::of(&y));
    // Points: kept where the other side covers them (intersection) or does not
    // (difference); the points of the second side meeting the first's polygons too.
    let covered = |s: &Sphere, c: &Coord| s.place(xyz(c)) != Place::Outside;
    let mut points: Vec<Coord> = px
        .points
        .iter()
        .filter(|c| covered(&sy, c) == (op == Op::Intersection))
        .copied()
        .collect();
    if op == Op::Intersection {
        for c in &py.points {
            if covered(&sx, c) && !points.iter().any(|p| same(p, c)) {
                points.push(*c);
            }
        }
    }
    let polys = match op {
        Op::Intersection if px.polygons.is_empty() || py.polygons.is_empty() => Vec::new(),
        Op::Difference if py.polygons.is_empty() => px
            .polygons
            .iter()
            .map(|p| p.iter().map(|r| close_ring(r)).collect())
            .collect(),
        _ => overlay(op, &px.polygons, &py.polygons),
    };
    if polys
        .iter()
        .flatten()
        .flatten()
        .any(|c| !c.x.is_finite() || !c.y.is_finite())
    {
        return Err(fail(n, "the polygons' boundaries could not be overlaid"));
    }
    // A point on a polygon of the result is part of it already.
    let in_result = Side::of(&polys);
    points.retain(|c| polys.is_empty() || in_result.place(xyz(c)) == Place::Outside);
    Ok(Out::Geo(geography(points, polys)))
}

/// `ST_INTERSECTION`.
pub(super) fn st_intersection(n: &str, a: &[Arg]) -> DfResult<Out> {
    run(Op::Intersection, n, a)
}

/// `ST_DIFFERENCE`.
pub(super) fn st_difference(n: &str, a: &[Arg]) -> DfResult<Out> {
    run(Op::Difference, n, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::value::{Geography, rings};
    use geo_types::Geometry;

    fn wkt(f: fn(&str, &[Arg]) -> DfResult<Out>, x: &str, y: &str) -> String {
        match f("st_op", &[Arg::Text(x.into()), Arg::Text(y.into())]).unwrap() {
            Out::Geo(g) => g.wkt(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn intersections_as_bigquery_writes_them() {
        // BigQuery (fixture st_intersection_polygons): the crossings on the bowed edges, the
        // ring starting where S2's builder starts it.
        assert_eq!(
            wkt(
                st_intersection,
                "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))",
                "POLYGON((2 2, 6 2, 6 6, 2 6, 2 2))"
            ),
            "POLYGON((2 2, 4 2.00121809765277, 4 4, 2 4.00243025545118, 2 2))"
        );
        // One inside the other, apart, and points.
        assert_eq!(
            wkt(
                st_intersection,
                "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))",
                "POLYGON((1 1, 2 1, 2 2, 1 2, 1 1))"
            ),
            "POLYGON((1 1, 2 1, 2 2, 1 2, 1 1))"
        );
        assert_eq!(
            wkt(
                st_intersection,
                "POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))",
                "POLYGON((5 5, 6 5, 6 6, 5 6, 5 5))"
            ),
            "GEOMETRYCOLLECTION EMPTY"
        );
        assert_eq!(
            wkt(
                st_intersection,
                "MULTIPOINT(0.5 0.5, 9 9)",
                "POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))"
            ),
            "POINT(0.5 0.5)"
        );
    }

    #[test]
    fn differences() {
        // BigQuery (fixture st_difference_planar): a polygon (an L here).
        let l = wkt(
            st_difference,
            "POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))",
            "POLYGON((0.5 0.5, 1.5 0.5, 1.5 1.5, 0.5 1.5, 0.5 0.5))",
        );
        let g = Geo::parse(&l).unwrap();
        assert_eq!(g.type_name(), "ST_Polygon", "{l}");
        assert_eq!(g.points(), 7, "{l}");
        // A hole where the second lies inside the first; nothing where it covers it.
        let holed = Geo::parse(&wkt(
            st_difference,
            "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))",
            "POLYGON((1 1, 2 1, 2 2, 1 2, 1 1))",
        ))
        .unwrap();
        let Geometry::Polygon(p) = &holed else {
            panic!("{holed:?}")
        };
        assert_eq!(rings(p).len(), 2);
        assert_eq!(
            wkt(
                st_difference,
                "POLYGON((1 1, 2 1, 2 2, 1 2, 1 1))",
                "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))"
            ),
            "GEOMETRYCOLLECTION EMPTY"
        );
        // Cut in two by a strip crossing it (meridians across the equator).
        assert_eq!(
            wkt(
                st_difference,
                "POLYGON((0 0, 4 0, 4 1, 0 1, 0 0))",
                "POLYGON((1 -1, 2 -1, 2 2, 1 2, 1 -1))"
            ),
            "MULTIPOLYGON(((2 0, 4 0, 4 1, 2 1.00060942040799, 2 0)), \
             ((1 1.00045705372412, 0 1, 0 0, 1 0, 1 1.00045705372412)))"
        );
        // Metre-sized squares overlap as the big ones do.
        let small = Geo::parse(&wkt(
            st_intersection,
            "POLYGON((0 0, 0.00001 0, 0.00001 0.00001, 0 0.00001, 0 0))",
            "POLYGON((0.000005 0.000005, 0.00002 0.000005, 0.00002 0.00002, 0.000005 0.00002, \
             0.000005 0.000005))",
        ))
        .unwrap();
        assert_eq!(small.points(), 5, "{}", small.wkt());
        // Sharing an edge: the rest of the first.
        let rest = Geo::parse(&wkt(
            st_difference,
            "POLYGON((0 0, 2 0, 2 1, 0 1, 0 0))",
            "POLYGON((1 0, 2 0, 2 1, 1 1, 1 0))",
        ))
        .unwrap();
        assert_eq!(rest.type_name(), "ST_Polygon", "{}", rest.wkt());
        assert!(
            st_difference(
                "st_difference",
                &[
                    Arg::Text("LINESTRING(0 0, 1 1)".into()),
                    Arg::Text("POINT(0 0)".into())
                ]
            )
            .is_err()
        );
    }
}

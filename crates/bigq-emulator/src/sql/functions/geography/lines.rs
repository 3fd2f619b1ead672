//! Geography functions along a linestring, on the sphere: `ST_LINEINTERPOLATEPOINT`,
//! `ST_LINELOCATEPOINT` and `ST_LINESUBSTRING`. A fraction of a linestring is of its length
//! along its great-circle edges; a point on an edge is found as S2 finds it, by turning from
//! the edge's start toward its end by the angle wanted.

use datafusion::common::Result as DfResult;
use geo_types::Coord;

use super::rows::{Arg, Out, exec, fail, geo, line_of, point_of};
use super::sphere::{V3, cross, dot, lnglat, xyz};
use super::value::{linestring, point};

fn norm(v: V3) -> V3 {
    let n = dot(v, v).sqrt();
    if n == 0.0 {
        v
    } else {
        [v[0] / n, v[1] / n, v[2] / n]
    }
}

/// The angle between two unit vectors, in radians.
fn angle(a: V3, b: V3) -> f64 {
    let c = cross(a, b);
    dot(c, c).sqrt().atan2(dot(a, b))
}

/// The point `r` radians from `a` along the great circle toward `b`.
fn toward(a: V3, b: V3, r: f64) -> V3 {
    let dir = norm(cross(norm(cross(a, b)), a));
    if dot(dir, dir) == 0.0 {
        return a;
    }
    norm([
        r.cos() * a[0] + r.sin() * dir[0],
        r.cos() * a[1] + r.sin() * dir[1],
        r.cos() * a[2] + r.sin() * dir[2],
    ])
}

/// A linestring's vertices as unit vectors, with each edge's angle.
struct Line {
    coords: Vec<Coord>,
    points: Vec<V3>,
    edges: Vec<f64>,
    total: f64,
}

impl Line {
    fn new(coords: Vec<Coord>) -> Line {
        let points: Vec<V3> = coords.iter().map(xyz).collect();
        let edges: Vec<f64> = points.windows(2).map(|w| angle(w[0], w[1])).collect();
        let total = edges.iter().sum();
        Line {
            coords,
            points,
            edges,
            total,
        }
    }

    /// The point at `fraction` of the length, and the index of the edge it is on (the
    /// vertices before it are `0..=index`).
    fn at(&self, fraction: f64) -> (Coord, usize) {
        if fraction <= 0.0 || self.total == 0.0 {
            return (self.coords[0], 0);
        }
        let mut left = fraction * self.total;
        for (i, e) in self.edges.iter().enumerate() {
            if left < *e {
                let p = toward(self.points[i], self.points[i + 1], left);
                return (lnglat(p), i);
            }
            left -= e;
        }
        let last = self.coords.len() - 1;
        (self.coords[last], last.saturating_sub(1))
    }
}

fn line(n: &str, a: &Arg) -> DfResult<Line> {
    let coords = line_of(n, &geo(n, a)?)?;
    if coords.is_empty() {
        return Err(fail(n, "the linestring is empty"));
    }
    Ok(Line::new(coords))
}

fn fraction(n: &str, a: &Arg, what: &str) -> DfResult<f64> {
    let f = match a {
        Arg::Float(f) => *f,
        Arg::Int(i) => *i as f64,
        _ => return Err(exec(format!("{n}: {what}"))),
    };
    if !(0.0..=1.0).contains(&f) {
        return Err(fail(n, &format!("{what} must be between 0 and 1, not {f}")));
    }
    Ok(f)
}

/// `ST_LINEINTERPOLATEPOINT(line, fraction)`.
pub(super) fn st_lineinterpolatepoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let l = line(n, &a[0])?;
    let f = fraction(n, &a[1], "the fraction")?;
    Ok(Out::Geo(point(l.at(f).0)))
}

/// `ST_LINELOCATEPOINT(line, point)`: the fraction of the line's length at which its
/// closest point to `point` lies.
pub(super) fn st_linelocatepoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let l = line(n, &a[0])?;
    let p = xyz(&point_of(n, &geo(n, &a[1])?)?);
    if l.total == 0.0 {
        return Ok(Out::Float(0.0));
    }
    let (mut best, mut at) = (f64::INFINITY, 0.0);
    let mut before = 0.0;
    for (i, e) in l.edges.iter().enumerate() {
        let (s, t) = (l.points[i], l.points[i + 1]);
        // The closest point of the edge: the foot on its great circle when that lies
        // within the edge, else the nearer end.
        let normal = norm(cross(s, t));
        let foot = norm([
            p[0] - dot(p, normal) * normal[0],
            p[1] - dot(p, normal) * normal[1],
            p[2] - dot(p, normal) * normal[2],
        ]);
        let along = angle(s, foot);
        let within = dot(cross(s, foot), normal) >= 0.0 && along <= *e;
        let candidates = if within && dot(normal, normal) > 0.0 {
            vec![(angle(p, foot), along)]
        } else {
            vec![(angle(p, s), 0.0), (angle(p, t), *e)]
        };
        for (d, along) in candidates {
            if d < best {
                best = d;
                at = before + along;
            }
        }
        before += e;
    }
    Ok(Out::Float((at / l.total).clamp(0.0, 1.0)))
}

/// `ST_LINESUBSTRING(line, start, end)`: the part between the two fractions (a point when
/// they meet).
pub(super) fn st_linesubstring(n: &str, a: &[Arg]) -> DfResult<Out> {
    let l = line(n, &a[0])?;
    let start = fraction(n, &a[1], "the start fraction")?;
    let end = fraction(n, &a[2], "the end fraction")?;
    if start > end {
        return Err(fail(
            n,
            "the start fraction must not be past the end fraction",
        ));
    }
    let (from, i) = l.at(start);
    if start == end {
        return Ok(Out::Geo(point(from)));
    }
    let (to, j) = l.at(end);
    let mut coords = vec![from];
    coords.extend(l.coords[i + 1..=j].iter().copied());
    if coords.last() != Some(&to) {
        coords.push(to);
    }
    coords.dedup();
    Ok(Out::Geo(linestring(coords)))
}

//! `ST_BUFFER` of a point, as BigQuery's S2 buffer operation draws it: a regular polygon with
//! its vertices on the circle of the buffer radius, `4 * num_seg_quarter_circle` of them (8
//! per quarter by default), the first in the direction S2 takes as orthogonal to the point,
//! counter-clockwise.
//!
//! The arithmetic follows S2's, step for step, because the vertices are printed to 15
//! digits: angles are kept as squared chord lengths (adding two of them through the sine
//! sum formula), the step between vertices comes from the error fraction the segment count
//! stands for, each vertex is the point moved along a ray (`cos r * p + sin r * dir`, made
//! unit by multiplying by the reciprocal of its norm). Done so, the 32 vertices of the
//! recorded buffers (10 m, 100 m and 100 km around (0 0), 100 km around (-100 40)) match
//! BigQuery's digit for digit.
//!
//! Buffers of lines and polygons (S2's winding-number sweep) are not served; they are refused
//! by name.

use datafusion::common::Result as DfResult;

use super::rows::{Arg, Out, fail, geo};
use super::sphere::{EARTH_RADIUS_M, V3, cross, dot, lnglat, xyz};
use geo_types::Geometry;

use super::value::{Geography, empty, polygon, unsupported};

/// Half the distance from 1 to the next double, S2's `DBL_ERR`.
const DBL_ERR: f64 = f64::EPSILON / 2.0;

/// A squared chord length: the angle `a` as S2's `S1ChordAngle` keeps it.
fn chord(radians: f64) -> f64 {
    let length = 2.0 * (0.5 * radians.min(std::f64::consts::PI)).sin();
    length * length
}

/// The sum of two chord angles (at most a half turn).
fn chord_add(a2: f64, b2: f64) -> f64 {
    if b2 == 0.0 {
        return a2;
    }
    if a2 + b2 >= 4.0 {
        return 4.0;
    }
    let x = a2 * (1.0 - 0.25 * b2);
    let y = b2 * (1.0 - 0.25 * a2);
    (x + y + 2.0 * (x * y).sqrt()).min(4.0)
}

/// The difference of two chord angles (zero at least).
fn chord_sub(a2: f64, b2: f64) -> f64 {
    if b2 == 0.0 {
        return a2;
    }
    if a2 <= b2 {
        return 0.0;
    }
    let x = a2 * (1.0 - 0.25 * b2);
    let y = b2 * (1.0 - 0.25 * a2);
    let c = (x.sqrt() - y.sqrt()).max(0.0);
    c * c
}

/// `v` times the reciprocal of its norm.
fn unit(v: V3) -> V3 {
    let n = dot(v, v).sqrt();
    let k = if n == 0.0 { 0.0 } else { 1.0 / n };
    [v[0] * k, v[1] * k, v[2] * k]
}

/// The point at the chord angle `r2` from `origin` towards `dir` (perpendicular to it).
fn on_ray(origin: V3, dir: V3, r2: f64) -> V3 {
    let (cos, sin) = (1.0 - 0.5 * r2, (r2 * (1.0 - 0.25 * r2)).sqrt());
    unit([
        cos * origin[0] + sin * dir[0],
        cos * origin[1] + sin * dir[1],
        cos * origin[2] + sin * dir[2],
    ])
}

/// A unit vector orthogonal to `p`, chosen as S2 chooses it (`S2::Ortho`): `p` crossed with
/// a fixed vector whose component along `p`'s largest axis's predecessor is 1.
fn ortho(p: V3) -> V3 {
    let (x, y, z) = (p[0].abs(), p[1].abs(), p[2].abs());
    // Ties resolved as S2's LargestAbsComponent resolves them.
    let largest = if x > y {
        if x > z { 0 } else { 2 }
    } else if y > z {
        1
    } else {
        2
    };
    let k = if largest == 0 { 2 } else { largest - 1 };
    let mut temp = [0.012, 0.0053, 0.00457];
    temp[k] = 1.0;
    unit(cross(p, temp))
}

/// The largest angle one edge of a circle of `radius` may span and stay within `error` of
/// it (at least three edges to a circle).
fn max_edge_span(radius: f64, error: f64) -> f64 {
    let step = 2.0 * std::f64::consts::PI / 3.0 + 1e-15;
    let min_radius = radius - error;
    if radius < std::f64::consts::FRAC_PI_2 {
        step.min(2.0 * (min_radius.tan() / radius.tan()).acos())
    } else if min_radius > std::f64::consts::FRAC_PI_2 {
        step.min(2.0 * (radius.tan() / min_radius.tan()).acos())
    } else {
        step
    }
}

/// What buffering a point gives.
#[derive(Debug, PartialEq)]
enum Disc {
    /// The point itself (a radius within the arithmetic's error of zero).
    Point,
    /// Nothing (a negative radius).
    Empty,
    /// The polygon's vertices, counter-clockwise.
    Polygon(Vec<V3>),
}

/// The buffer of the point `p` by `radius` radians with `segments` edges to the circle.
fn disc(p: V3, radius: f64, segments: f64) -> Result<Disc, String> {
    if radius < 0.0 {
        return Ok(Disc::Empty);
    }
    let segments = segments.clamp(2.0, 1e6);
    // The error fraction the segment count stands for (vertices on the circle).
    let fraction = (1.0 - (std::f64::consts::PI / segments).cos() + 1e-15).clamp(1e-6, 1.0);
    let requested = (fraction * radius).max(2.0 * DBL_ERR);
    // The interpolation error S2 allows for on top (its GetPointOnLine and GetPointOnRay
    // bounds), about 10 nanometres on the Earth.
    let slack = (4.0 + 2.0 / 3f64.sqrt()) * DBL_ERR + 6.0 * DBL_ERR + 3.0 * DBL_ERR;
    if radius <= slack + requested {
        return Ok(Disc::Point);
    }
    if radius + slack + requested >= std::f64::consts::PI {
        return Err("a buffer covering the whole sphere".into());
    }
    let step = max_edge_span(radius, requested);
    let tau = 2.0 * std::f64::consts::PI;
    let point_step = chord(tau / (tau / step).ceil() + 1e-15);
    let r2 = chord(radius);
    let mut start = ortho(p);
    let mut angle = 0.0;
    let mut out = Vec::new();
    // A chord angle holds at most a half turn: a quarter at a time.
    for _ in 0..4 {
        let rotate = unit(cross(p, start));
        while angle < 2.0 {
            let dir = on_ray(start, rotate, angle);
            out.push(on_ray(p, dir, r2));
            angle = chord_add(angle, point_step);
        }
        angle = chord_sub(angle, 2.0);
        start = rotate;
    }
    Ok(Disc::Polygon(out))
}

/// `ST_BUFFER(geography, buffer_radius [, num_seg_quarter_circle])` of a point.
pub(super) fn st_buffer(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    let number = |arg: Option<&Arg>, what: &str| -> DfResult<Option<f64>> {
        match arg {
            None => Ok(None),
            Some(Arg::Float(f)) => Ok(Some(*f)),
            Some(Arg::Int(i)) => Ok(Some(*i as f64)),
            Some(_) => Err(fail(n, &format!("{what} must be a number"))),
        }
    };
    let metres = number(a.get(1), "buffer_radius")?.unwrap_or(0.0);
    let quarter = number(a.get(2), "num_seg_quarter_circle")?.unwrap_or(8.0);
    if !metres.is_finite() {
        return Err(fail(
            n,
            &format!("buffer_radius must be finite, not {metres}"),
        ));
    }
    if !quarter.is_finite() || quarter < 1.0 {
        return Err(fail(
            n,
            &format!("num_seg_quarter_circle must be at least 1, not {quarter}"),
        ));
    }
    let c = match &g {
        Geometry::Point(p) => p.0,
        Geometry::GeometryCollection(parts) if parts.0.is_empty() => return Ok(Out::Geo(g)),
        other => {
            return Err(unsupported(&format!(
                "{n} of a {} (bigq-emulator buffers single points)",
                other.type_name()
            )));
        }
    };
    let radius = metres / EARTH_RADIUS_M;
    let out = match disc(xyz(&c), radius, 4.0 * quarter).map_err(|e| unsupported(&e))? {
        Disc::Point => g,
        Disc::Empty => empty(),
        Disc::Polygon(v) => {
            let mut ring: Vec<_> = v.into_iter().map(lnglat).collect();
            ring.push(ring[0]);
            polygon(vec![ring])
        }
    };
    Ok(Out::Geo(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::value::Geo;

    fn buffer(args: Vec<Arg>) -> DfResult<String> {
        match st_buffer("st_buffer", &args)? {
            Out::Geo(g) => Ok(g.wkt()),
            _ => unreachable!(),
        }
    }

    fn point(x: f64, y: f64, metres: f64) -> String {
        buffer(vec![
            Arg::Text(format!("POINT({x} {y})")),
            Arg::Float(metres),
        ])
        .unwrap()
    }

    #[test]
    fn point_buffers_match_bigquery_digit_for_digit() {
        // BigQuery (fixture spheroidal_buffer_street_match): 10 m around (0 0).
        let street = point(0.0, 0.0, 10.0);
        assert!(
            street.starts_with(
                "POLYGON((-8.99307563648653e-05 4.76633008733591e-07, \
                 -8.8295748585349e-05 -1.70771455792485e-05, "
            ),
            "{street}"
        );
        assert!(
            street.ends_with(
                "-8.81097756110351e-05 1.80120948574862e-05, \
                 -8.99307563648653e-05 4.76633008733591e-07))"
            ),
            "{street}"
        );
        assert_eq!(Geo::parse(&street).unwrap().points(), 33);
        // BigQuery (fixture st_buffer_continental): 100 km around (-100 40).
        let continental = point(-100.0, 40.0, 100_000.0);
        assert!(
            continental.starts_with(
                "POLYGON((-100.142221859014 40.8927839860851, \
                 -100.369696352225 40.8541555745566, "
            ),
            "{continental}"
        );
        assert!(
            continental.contains("-99.9090630170796 40.8966538744241, "),
            "{continental}"
        );
        // Fewer segments; nothing for a negative radius; the point for zero.
        let coarse = buffer(vec![
            Arg::Text("POINT(0 0)".into()),
            Arg::Float(1000.0),
            Arg::Int(2),
        ])
        .unwrap();
        assert_eq!(Geo::parse(&coarse).unwrap().points(), 9, "{coarse}");
        assert_eq!(point(1.0, 2.0, -5.0), "GEOMETRYCOLLECTION EMPTY");
        assert_eq!(point(1.0, 2.0, 0.0), "POINT(1 2)");
    }

    #[test]
    fn bad_buffers_are_errors() {
        assert!(
            buffer(vec![
                Arg::Text("LINESTRING(0 0, 1 1)".into()),
                Arg::Float(10.0)
            ])
            .is_err()
        );
        assert!(
            buffer(vec![
                Arg::Text("POINT(0 0)".into()),
                Arg::Float(f64::INFINITY)
            ])
            .is_err()
        );
        assert!(
            buffer(vec![
                Arg::Text("POINT(0 0)".into()),
                Arg::Float(10.0),
                Arg::Int(0)
            ])
            .is_err()
        );
        // Half the Earth's circumference and more: the whole sphere.
        assert!(buffer(vec![Arg::Text("POINT(0 0)".into()), Arg::Float(2.1e7)]).is_err());
    }
}

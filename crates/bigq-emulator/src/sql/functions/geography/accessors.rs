//! Geography accessors: `ST_X`, `ST_Y`, `ST_POINTN`, `ST_STARTPOINT`, `ST_ENDPOINT`,
//! `ST_ISCLOSED`, `ST_ISRING`, `ST_DUMP`, `ST_EXTERIORRING` and `ST_INTERIORRINGS` (the ones
//! of a parsed value alone, `ST_DIMENSION`, `ST_NUMGEOMETRIES`,
//! `ST_GEOMETRYTYPE`, `ST_NPOINTS`, ..., are methods of [`super::value::Geography`]).

use datafusion::common::Result as DfResult;

use super::rows::{Arg, Out, exec, fail, geo, line_of, point_of};
use super::sphere::{V3, arcs_meet, s2_round_trip, same, xyz};
use geo::HasDimensions;
use geo_types::{Coord, Geometry, LineString};

use super::value::{Geo, Geography, empty, point};

pub(super) fn st_x(n: &str, a: &[Arg]) -> DfResult<Out> {
    Ok(Out::Float(s2_round_trip(&point_of(n, &geo(n, &a[0])?)?).x))
}

pub(super) fn st_y(n: &str, a: &[Arg]) -> DfResult<Out> {
    Ok(Out::Float(s2_round_trip(&point_of(n, &geo(n, &a[0])?)?).y))
}

pub(super) fn st_pointn(n: &str, a: &[Arg]) -> DfResult<Out> {
    let line = line_of(n, &geo(n, &a[0])?)?;
    let Arg::Int(k) = a[1] else {
        return Err(exec(format!("{n}: index")));
    };
    let len = line.len() as i64;
    let at = if k > 0 { k - 1 } else { len + k };
    if k == 0 || !(0..len).contains(&at) {
        return Err(fail(
            n,
            &format!("index {k} is out of range for a linestring of {len} points"),
        ));
    }
    Ok(Out::Geo(point(line[at as usize])))
}

pub(super) fn st_startpoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let line = line_of(n, &geo(n, &a[0])?)?;
    Ok(Out::Geo(line.first().map_or_else(empty, |c| point(*c))))
}

pub(super) fn st_endpoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let line = line_of(n, &geo(n, &a[0])?)?;
    Ok(Out::Geo(line.last().map_or_else(empty, |c| point(*c))))
}

/// Whether a line ends where it starts.
pub(super) fn closed_line(c: &[Coord]) -> bool {
    c.len() > 1 && same(&c[0], &c[c.len() - 1])
}

pub(super) fn is_closed(g: &Geo) -> bool {
    match g {
        Geometry::LineString(l) => closed_line(&l.0),
        Geometry::MultiLineString(m) => m.0.iter().all(|l| closed_line(&l.0)),
        Geometry::GeometryCollection(g) => g.iter().all(is_closed),
        _ => true,
    }
}

pub(super) fn st_isclosed(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    Ok(Out::Bool(!g.is_empty() && is_closed(&g)))
}

/// A closed linestring whose edges meet only where they follow each other.
pub(super) fn st_isring(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    let Geometry::LineString(LineString(c)) = &g else {
        return Ok(Out::Bool(false));
    };
    if !is_closed(&g) || c.len() < 4 {
        return Ok(Out::Bool(false));
    }
    let v: Vec<V3> = c.iter().map(xyz).collect();
    let edges: Vec<(V3, V3)> = v.windows(2).map(|w| (w[0], w[1])).collect();
    let k = edges.len();
    for i in 0..k {
        for j in i + 1..k {
            let adjacent = j == i + 1 || (i == 0 && j == k - 1);
            let (a, b) = edges[i];
            let (c, d) = edges[j];
            if !adjacent && arcs_meet(a, b, c, d) {
                return Ok(Out::Bool(false));
            }
        }
    }
    Ok(Out::Bool(true))
}

fn dump(g: Geo, out: &mut Vec<Geo>) {
    match g {
        Geometry::MultiPoint(m) => out.extend(m.0.into_iter().map(Geometry::Point)),
        Geometry::MultiLineString(m) => out.extend(m.0.into_iter().map(Geometry::LineString)),
        Geometry::MultiPolygon(m) => out.extend(m.0.into_iter().map(Geometry::Polygon)),
        Geometry::GeometryCollection(g) => g.0.into_iter().for_each(|g| dump(g, out)),
        simple => out.push(simple),
    }
}

pub(super) fn st_dump(n: &str, a: &[Arg]) -> DfResult<Out> {
    let mut out = Vec::new();
    dump(geo(n, &a[0])?, &mut out);
    Ok(Out::Geos(out))
}

/// `ST_DUMP(g, dimension)`: the simple parts of that dimension.
pub(super) fn st_dump_dimension(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Int(dimension) = a[1] else {
        return Err(exec(format!("{n}: dimension")));
    };
    if !(0..=2).contains(&dimension) {
        return Err(fail(n, "the dimension must be 0, 1 or 2"));
    }
    let mut out = Vec::new();
    dump(geo(n, &a[0])?, &mut out);
    out.retain(|g| g.dimension() == dimension);
    Ok(Out::Geos(out))
}

/// `ST_EXTERIORRING`: a polygon's shell as a closed linestring.
pub(super) fn st_exteriorring(n: &str, a: &[Arg]) -> DfResult<Out> {
    match geo(n, &a[0])? {
        Geometry::Polygon(p) => Ok(Out::Geo(Geometry::LineString(p.exterior().clone()))),
        other => Err(fail(n, &not_a_polygon(&other))),
    }
}

/// `ST_INTERIORRINGS`: a polygon's holes as closed linestrings.
pub(super) fn st_interiorrings(n: &str, a: &[Arg]) -> DfResult<Out> {
    match geo(n, &a[0])? {
        Geometry::Polygon(p) => Ok(Out::Geos(
            p.interiors()
                .iter()
                .map(|r| Geometry::LineString(r.clone()))
                .collect(),
        )),
        other => Err(fail(n, &not_a_polygon(&other))),
    }
}

fn not_a_polygon(g: &Geo) -> String {
    format!("the geography must be a polygon, not {}", g.type_name())
}

//! More GEOGRAPHY functions: accessors and constructors that only move coordinates (`ST_X`,
//! `ST_Y`, `ST_POINTN`, `ST_STARTPOINT`, `ST_ENDPOINT`, `ST_ISCLOSED`, `ST_ISRING`,
//! `ST_MAKELINE`, `ST_MAKEPOLYGON`, `ST_MAKEPOLYGONORIENTED`, `ST_DUMP`, `ST_BOUNDARY`,
//! `ST_SNAPTOGRID`, `ST_UNION` of points), GeoJSON and WKB in and out, and the predicates
//! (`ST_INTERSECTS`, `ST_DISJOINT`, `ST_CONTAINS`, `ST_WITHIN`, `ST_COVERS`,
//! `ST_COVEREDBY`, `ST_TOUCHES`) and `ST_CONVEXHULL` computed on the sphere as BigQuery
//! does: edges are great-circle arcs, a point is in a ring by its winding number seen from
//! the point, two edges cross by the signs of triple products, and the convex hull is taken
//! in the gnomonic projection (which keeps great circles straight). `ST_CENTROID` is in
//! `centroid`, `ST_SIMPLIFY` in `simplify`, `ST_INTERSECTION` and `ST_DIFFERENCE` in
//! `overlay`, `ST_BUFFER` of points in `buffer`, the vertices GeoJSON adds along long edges in
//! `tessellate`.
//!
//! BigQuery keeps a point as an S2 unit vector, so what it hands back as numbers (WKB,
//! `ST_X`) is the coordinate after a round trip through that vector (1 becomes
//! 0.9999999999999998): [`s2_round_trip`] does the same.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Float64Array, ListBuilder, StringArray,
    StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use datafusion::prelude::SessionContext;
use wkt::types::Coord;

use super::{Geo, unsupported};
use crate::sql::udf::{arrays, result};

fn coord(x: f64, y: f64) -> Coord {
    Coord {
        x,
        y,
        z: None,
        m: None,
    }
}

fn exec(msg: String) -> DataFusionError {
    DataFusionError::Execution(msg)
}

// ---------------------------------------------------------------------------------------
// The sphere.

type V3 = [f64; 3];

fn xyz(c: &Coord) -> V3 {
    let (lat, lng) = (c.y.to_radians(), c.x.to_radians());
    [lat.cos() * lng.cos(), lat.cos() * lng.sin(), lat.sin()]
}

fn lnglat(v: V3) -> Coord {
    let lat = v[2].atan2((v[0] * v[0] + v[1] * v[1]).sqrt());
    let lng = v[1].atan2(v[0]);
    coord(lng.to_degrees(), lat.to_degrees())
}

/// A coordinate as BigQuery hands it back after keeping it as an S2 point.
fn s2_round_trip(c: &Coord) -> Coord {
    lnglat(xyz(c))
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Below this a triple product is taken as zero (about 6 mm on the Earth).
const EPS: f64 = 1e-15;

fn same(a: &Coord, b: &Coord) -> bool {
    let (p, q) = (xyz(a), xyz(b));
    dot(p, q) > 1.0 - EPS
}

/// Whether `p` lies on the arc from `a` to `b`.
fn on_arc(p: V3, a: V3, b: V3) -> bool {
    let n = cross(a, b);
    let norm = dot(n, n).sqrt();
    if norm < EPS {
        return dot(p, a) > 1.0 - EPS;
    }
    (dot(p, n) / norm).abs() < 1e-12 && dot(cross(a, p), n) >= -EPS && dot(cross(p, b), n) >= -EPS
}

/// Whether the arcs `ab` and `cd` cross at a point inside both (not at an end, not along a
/// shared piece).
fn arcs_cross(a: V3, b: V3, c: V3, d: V3) -> bool {
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
fn arcs_meet(a: V3, b: V3, c: V3, d: V3) -> bool {
    arcs_cross(a, b, c, d)
        || on_arc(a, c, d)
        || on_arc(b, c, d)
        || on_arc(c, a, b)
        || on_arc(d, a, b)
}

/// Where a point is relative to a polygon.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    Inside,
    Boundary,
    Outside,
}

/// The winding number of a closed ring around `p` (the sum of the angles its edges make
/// at `p`, over a full turn).
fn winding(p: V3, ring: &[V3]) -> i64 {
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
fn close_ring(ring: &[Coord]) -> Vec<Coord> {
    let mut r = ring.to_vec();
    if let (Some(f), Some(l)) = (ring.first(), ring.last())
        && !same(f, l)
    {
        r.push(*f);
    }
    r
}

/// A closed ring as unit vectors.
fn closed(ring: &[Coord]) -> Vec<V3> {
    close_ring(ring).iter().map(xyz).collect()
}

fn place_in_polygon(p: V3, rings: &[Vec<V3>]) -> Place {
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

/// A geography as points, lines and polygons.
#[derive(Default)]
struct Parts {
    points: Vec<Coord>,
    lines: Vec<Vec<Coord>>,
    polygons: Vec<Vec<Vec<Coord>>>,
}

impl Parts {
    fn of(g: &Geo) -> Parts {
        let mut p = Parts::default();
        p.add(g);
        p
    }

    fn add(&mut self, g: &Geo) {
        match g {
            Geo::Point(c) => self.points.push(*c),
            Geo::MultiPoint(c) => self.points.extend(c.iter().copied()),
            Geo::LineString(c) => self.lines.push(c.clone()),
            Geo::MultiLineString(l) => self.lines.extend(l.iter().cloned()),
            Geo::Polygon(r) => self.polygons.push(r.clone()),
            Geo::MultiPolygon(p) => self.polygons.extend(p.iter().cloned()),
            Geo::Collection(g) => g.iter().for_each(|g| self.add(g)),
        }
    }

    /// Every vertex.
    fn vertices(&self) -> Vec<Coord> {
        let mut v = self.points.clone();
        v.extend(self.lines.iter().flatten().copied());
        v.extend(self.polygons.iter().flatten().flatten().copied());
        v
    }
}

/// A geography's parts as unit vectors, converted once for the predicates.
struct Sphere {
    points: Vec<V3>,
    lines: Vec<Vec<V3>>,
    /// The polygons' rings, closed.
    polygons: Vec<Vec<Vec<V3>>>,
    /// Every vertex.
    vertices: Vec<V3>,
    /// Every edge: the lines' and the polygons' rings'.
    arcs: Vec<(V3, V3)>,
    /// A point inside each polygon (its shell's vertex mean, for the convex shapes
    /// predicates meet in practice), to tell overlapping polygons from touching ones.
    interior: Vec<V3>,
}

impl Sphere {
    fn of(g: &Geo) -> Sphere {
        let p = Parts::of(g);
        let points: Vec<V3> = p.points.iter().map(xyz).collect();
        let lines: Vec<Vec<V3>> = p
            .lines
            .iter()
            .map(|l| l.iter().map(xyz).collect())
            .collect();
        let polygons: Vec<Vec<Vec<V3>>> = p
            .polygons
            .iter()
            .map(|rings| rings.iter().map(|r| closed(r)).collect())
            .collect();
        let vertices = p.vertices().iter().map(xyz).collect();
        let arcs = lines
            .iter()
            .chain(polygons.iter().flatten())
            .flat_map(|v| v.windows(2).map(|w| (w[0], w[1])))
            .collect();
        let interior = polygons
            .iter()
            .filter_map(|rings| rings.first())
            .filter_map(|shell| {
                let open = &shell[..shell.len().saturating_sub(1)];
                let s = open.iter().fold([0.0; 3], |acc, p| {
                    [acc[0] + p[0], acc[1] + p[1], acc[2] + p[2]]
                });
                let n = dot(s, s).sqrt();
                (n > 0.0).then(|| [s[0] / n, s[1] / n, s[2] / n])
            })
            .collect();
        Sphere {
            points,
            lines,
            polygons,
            vertices,
            arcs,
            interior,
        }
    }

    fn is_points(&self) -> bool {
        self.polygons.is_empty() && self.lines.is_empty()
    }

    /// Where a point is: inside a polygon, on a polygon's boundary, a line or a point of
    /// this geography, or outside all of it.
    fn place(&self, v: V3) -> Place {
        let mut place = Place::Outside;
        for poly in &self.polygons {
            match place_in_polygon(v, poly) {
                Place::Inside => return Place::Inside,
                Place::Boundary => place = Place::Boundary,
                Place::Outside => {}
            }
        }
        let on_line = self.lines.iter().any(|w| {
            w.windows(2).any(|s| on_arc(v, s[0], s[1]))
                || (w.len() == 1 && dot(v, w[0]) > 1.0 - EPS)
        });
        if on_line || self.points.iter().any(|&q| dot(v, q) > 1.0 - EPS) {
            // A line's or point's "inside" for the predicates below: it is covered.
            return Place::Inside;
        }
        place
    }

    /// Whether an edge of `self` crosses an edge of `other` inside both.
    fn arcs_cross(&self, other: &Sphere) -> bool {
        self.arcs
            .iter()
            .any(|&(p, q)| other.arcs.iter().any(|&(r, s)| arcs_cross(p, q, r, s)))
    }
}

fn intersects(a: &Sphere, b: &Sphere) -> bool {
    a.arcs
        .iter()
        .any(|&(p, q)| b.arcs.iter().any(|&(r, s)| arcs_meet(p, q, r, s)))
        || a.vertices.iter().any(|&v| b.place(v) != Place::Outside)
        || b.vertices.iter().any(|&v| a.place(v) != Place::Outside)
}

/// Whether every point of `b` is in `a` (its interior or boundary).
fn covers(a: &Sphere, b: &Sphere) -> bool {
    !b.vertices.is_empty()
        && b.vertices.iter().all(|&v| a.place(v) != Place::Outside)
        && !b.arcs_cross(a)
        && b.interior.iter().all(|&v| a.place(v) != Place::Outside)
}

/// Covers, and some point of `b` is in `a`'s interior (not only on its boundary).
fn contains(a: &Sphere, b: &Sphere) -> bool {
    covers(a, b)
        && b.vertices
            .iter()
            .chain(&b.interior)
            .any(|&v| a.place(v) == Place::Inside)
}

/// They meet, but only on boundaries.
fn touches(a: &Sphere, b: &Sphere) -> bool {
    if a.is_points() && b.is_points() {
        // Points have no boundary.
        return false;
    }
    let strictly_in = |x: &Sphere, y: &Sphere| {
        x.vertices.iter().chain(&x.interior).any(|&v| {
            y.polygons
                .iter()
                .any(|p| place_in_polygon(v, p) == Place::Inside)
        })
    };
    intersects(a, b) && !strictly_in(a, b) && !strictly_in(b, a) && !a.arcs_cross(b)
}

/// The convex hull of the vertices, in the gnomonic projection about their mean.
fn convex_hull(g: &Geo) -> DfResult<Geo> {
    let pts = Parts::of(g).vertices();
    if pts.is_empty() {
        return Ok(Geo::Collection(vec![]));
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
        0 | 1 => Geo::Point(pts[plane[0].2]),
        2 => Geo::LineString(ring),
        _ => {
            let mut ring = ring;
            ring.push(ring[0]);
            Geo::Polygon(vec![ring])
        }
    })
}

// ---------------------------------------------------------------------------------------
// WKB and GeoJSON.

fn wkb(g: &Geo, out: &mut Vec<u8>) {
    let head = |out: &mut Vec<u8>, kind: u32| {
        out.push(1);
        out.extend_from_slice(&kind.to_le_bytes());
    };
    let pt = |out: &mut Vec<u8>, c: &Coord| {
        let c = s2_round_trip(c);
        out.extend_from_slice(&c.x.to_le_bytes());
        out.extend_from_slice(&c.y.to_le_bytes());
    };
    let pts = |out: &mut Vec<u8>, cs: &[Coord]| {
        out.extend_from_slice(&(cs.len() as u32).to_le_bytes());
        cs.iter().for_each(|c| pt(out, c));
    };
    let rings = |out: &mut Vec<u8>, rs: &[Vec<Coord>]| {
        out.extend_from_slice(&(rs.len() as u32).to_le_bytes());
        rs.iter().for_each(|r| pts(out, r));
    };
    match g {
        Geo::Point(c) => {
            head(out, 1);
            pt(out, c);
        }
        Geo::LineString(c) => {
            head(out, 2);
            pts(out, c);
        }
        Geo::Polygon(r) => {
            head(out, 3);
            rings(out, r);
        }
        Geo::MultiPoint(c) => {
            head(out, 4);
            out.extend_from_slice(&(c.len() as u32).to_le_bytes());
            c.iter().for_each(|c| wkb(&Geo::Point(*c), out));
        }
        Geo::MultiLineString(l) => {
            head(out, 5);
            out.extend_from_slice(&(l.len() as u32).to_le_bytes());
            l.iter().for_each(|l| wkb(&Geo::LineString(l.clone()), out));
        }
        Geo::MultiPolygon(p) => {
            head(out, 6);
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            p.iter().for_each(|p| wkb(&Geo::Polygon(p.clone()), out));
        }
        Geo::Collection(g) => {
            head(out, 7);
            out.extend_from_slice(&(g.len() as u32).to_le_bytes());
            g.iter().for_each(|g| wkb(g, out));
        }
    }
}

/// Reads one WKB geometry (either byte order, 2D) from `b` at `*at`.
fn from_wkb(b: &[u8], at: &mut usize) -> Result<Geo, String> {
    let take = |at: &mut usize, n: usize| -> Result<&[u8], String> {
        let s = b.get(*at..*at + n).ok_or("truncated WKB")?;
        *at += n;
        Ok(s)
    };
    let little = match take(at, 1)?[0] {
        0 => false,
        1 => true,
        o => return Err(format!("bad byte order {o}")),
    };
    let u32_at = |at: &mut usize| -> Result<u32, String> {
        let s: [u8; 4] = take(at, 4)?.try_into().map_err(|_| "truncated WKB")?;
        Ok(if little {
            u32::from_le_bytes(s)
        } else {
            u32::from_be_bytes(s)
        })
    };
    let f64_at = |at: &mut usize| -> Result<f64, String> {
        let s: [u8; 8] = take(at, 8)?.try_into().map_err(|_| "truncated WKB")?;
        Ok(if little {
            f64::from_le_bytes(s)
        } else {
            f64::from_be_bytes(s)
        })
    };
    let pt = |at: &mut usize| -> Result<Coord, String> { Ok(coord(f64_at(at)?, f64_at(at)?)) };
    let pts = |at: &mut usize| -> Result<Vec<Coord>, String> {
        (0..u32_at(at)?).map(|_| pt(at)).collect()
    };
    let kind = u32_at(at)?;
    let many = |at: &mut usize| -> Result<Vec<Geo>, String> {
        (0..u32_at(at)?).map(|_| from_wkb(b, at)).collect()
    };
    Ok(match kind {
        1 => {
            let c = pt(at)?;
            if c.x.is_nan() && c.y.is_nan() {
                Geo::Collection(vec![])
            } else {
                Geo::Point(c)
            }
        }
        2 => Geo::LineString(pts(at)?),
        3 => Geo::Polygon(
            (0..u32_at(at)?)
                .map(|_| pts(at))
                .collect::<Result<_, _>>()?,
        ),
        4 => Geo::MultiPoint(
            many(at)?
                .into_iter()
                .filter_map(|g| match g {
                    Geo::Point(c) => Some(c),
                    _ => None,
                })
                .collect(),
        ),
        5 => Geo::MultiLineString(
            many(at)?
                .into_iter()
                .filter_map(|g| match g {
                    Geo::LineString(c) => Some(c),
                    _ => None,
                })
                .collect(),
        ),
        6 => Geo::MultiPolygon(
            many(at)?
                .into_iter()
                .filter_map(|g| match g {
                    Geo::Polygon(r) => Some(r),
                    _ => None,
                })
                .collect(),
        ),
        7 => Geo::Collection(many(at)?),
        other => return Err(format!("unsupported WKB geometry type {other}")),
    })
}

fn from_geojson(v: &serde_json::Value) -> Result<Geo, String> {
    use serde_json::Value;
    let kind = v.get("type").and_then(Value::as_str).ok_or("no \"type\"")?;
    let c = |v: &Value| -> Result<Coord, String> {
        match v.as_array().map(Vec::as_slice) {
            Some([x, y, ..]) => Ok(coord(
                x.as_f64().ok_or("bad coordinate")?,
                y.as_f64().ok_or("bad coordinate")?,
            )),
            _ => Err("a position needs two numbers".into()),
        }
    };
    let list = |v: &Value| -> Result<Vec<Coord>, String> {
        v.as_array()
            .ok_or("bad coordinates")?
            .iter()
            .map(c)
            .collect()
    };
    let lists = |v: &Value| -> Result<Vec<Vec<Coord>>, String> {
        v.as_array()
            .ok_or("bad coordinates")?
            .iter()
            .map(list)
            .collect()
    };
    let coords = v.get("coordinates");
    let need = || coords.ok_or_else(|| format!("{kind} without \"coordinates\""));
    Ok(match kind {
        "Point" => Geo::Point(c(need()?)?),
        "LineString" => Geo::LineString(list(need()?)?),
        "Polygon" => Geo::Polygon(lists(need()?)?),
        "MultiPoint" => Geo::MultiPoint(list(need()?)?),
        "MultiLineString" => Geo::MultiLineString(lists(need()?)?),
        "MultiPolygon" => Geo::MultiPolygon(
            need()?
                .as_array()
                .ok_or("bad coordinates")?
                .iter()
                .map(lists)
                .collect::<Result<_, _>>()?,
        ),
        "GeometryCollection" => Geo::Collection(
            v.get("geometries")
                .and_then(Value::as_array)
                .ok_or("GeometryCollection without \"geometries\"")?
                .iter()
                .map(from_geojson)
                .collect::<Result<_, _>>()?,
        ),
        other => return Err(format!("unknown GeoJSON type {other:?}")),
    })
}

// ---------------------------------------------------------------------------------------
// The functions.

/// One row's argument.
enum Arg {
    Text(String),
    Float(f64),
    Int(i64),
    Bool(bool),
    Bytes(Vec<u8>),
    Texts(Vec<String>),
}

/// One row's result.
enum Out {
    Geo(Geo),
    Float(f64),
    Bool(bool),
    Bytes(Vec<u8>),
    Geos(Vec<Geo>),
}

type Fun = fn(&str, &[Arg]) -> DfResult<Out>;

/// A GEOGRAPHY function: NULL in, NULL out; each row's arguments handed to `fun`.
#[derive(Debug)]
struct GeoFn {
    name: &'static str,
    signature: Signature,
    ret: DataType,
    fun: Fun,
}

impl PartialEq for GeoFn {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
    }
}
impl Eq for GeoFn {}
impl std::hash::Hash for GeoFn {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

fn geo_list() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

fn udf(name: &'static str, inputs: Vec<Vec<DataType>>, ret: DataType, fun: Fun) -> ScalarUDF {
    let signature = Signature::one_of(
        inputs.into_iter().map(TypeSignature::Exact).collect(),
        Volatility::Immutable,
    );
    ScalarUDF::new_from_impl(GeoFn {
        name,
        signature,
        ret,
        fun,
    })
}

fn arg_at(a: &ArrayRef, i: usize) -> DfResult<Option<Arg>> {
    if a.is_null(i) {
        return Ok(None);
    }
    Ok(Some(match a.data_type() {
        DataType::Utf8 => Arg::Text(a.as_string::<i32>().value(i).to_string()),
        DataType::Float64 => Arg::Float(
            a.as_primitive::<datafusion::arrow::datatypes::Float64Type>()
                .value(i),
        ),
        DataType::Int64 => Arg::Int(
            a.as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .value(i),
        ),
        DataType::Boolean => Arg::Bool(a.as_boolean().value(i)),
        DataType::Binary => Arg::Bytes(a.as_binary::<i32>().value(i).to_vec()),
        DataType::List(_) => {
            let items = a.as_list::<i32>().value(i);
            let s = items.as_string::<i32>();
            Arg::Texts(
                (0..s.len())
                    .filter(|&k| s.is_valid(k))
                    .map(|k| s.value(k).to_string())
                    .collect(),
            )
        }
        other => return Err(exec(format!("GEOGRAPHY function argument of type {other}"))),
    }))
}

impl ScalarUDFImpl for GeoFn {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(self.ret.clone())
    }
    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let args = &call.args;
        let (a, rows) = arrays(args)?;
        let mut outs = Vec::with_capacity(rows);
        for i in 0..rows {
            let row = a
                .iter()
                .map(|c| arg_at(c, i))
                .collect::<DfResult<Option<Vec<_>>>>()?;
            outs.push(match row {
                Some(row) => Some((self.fun)(self.name, &row)?),
                None => None,
            });
        }
        let out: ArrayRef = match &self.ret {
            DataType::Utf8 => Arc::new(StringArray::from_iter(outs.into_iter().map(|o| match o {
                Some(Out::Geo(g)) => Some(g.wkt()),
                _ => None,
            }))),
            DataType::Float64 => {
                Arc::new(Float64Array::from_iter(outs.into_iter().map(|o| match o {
                    Some(Out::Float(f)) => Some(f),
                    _ => None,
                })))
            }
            DataType::Boolean => {
                Arc::new(BooleanArray::from_iter(outs.into_iter().map(|o| match o {
                    Some(Out::Bool(v)) => Some(v),
                    _ => None,
                })))
            }
            DataType::Binary => {
                Arc::new(BinaryArray::from_iter(outs.into_iter().map(|o| match o {
                    Some(Out::Bytes(v)) => Some(v),
                    _ => None,
                })))
            }
            _ => {
                let mut b = ListBuilder::new(StringBuilder::new());
                for o in outs {
                    match o {
                        Some(Out::Geos(g)) => {
                            for g in g {
                                b.values().append_value(g.wkt());
                            }
                            b.append(true);
                        }
                        _ => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
        };
        result(out, args)
    }
}

/// The geography in a text argument.
fn geo(name: &str, a: &Arg) -> DfResult<Geo> {
    match a {
        Arg::Text(t) => Geo::parse(t).map_err(|e| {
            exec(format!(
                "{} failed: Invalid WKT {t:?}: {e}",
                name.to_ascii_uppercase()
            ))
        }),
        _ => Err(exec(format!("{name}: expected a GEOGRAPHY"))),
    }
}

fn geos(name: &str, a: &Arg) -> DfResult<Vec<Geo>> {
    match a {
        Arg::Texts(t) => t.iter().map(|t| geo(name, &Arg::Text(t.clone()))).collect(),
        _ => Err(exec(format!("{name}: expected an ARRAY<GEOGRAPHY>"))),
    }
}

fn fail(name: &str, why: &str) -> DataFusionError {
    exec(format!("{} failed: {why}", name.to_ascii_uppercase()))
}

fn point_of(name: &str, g: &Geo) -> DfResult<Coord> {
    match g {
        Geo::Point(c) => Ok(*c),
        other => Err(fail(
            name,
            &format!("the geography must be a point, not {}", other.type_name()),
        )),
    }
}

fn line_of(name: &str, g: &Geo) -> DfResult<Vec<Coord>> {
    match g {
        Geo::LineString(c) => Ok(c.clone()),
        other => Err(fail(
            name,
            &format!(
                "the geography must be a linestring, not {}",
                other.type_name()
            ),
        )),
    }
}

fn st_x(n: &str, a: &[Arg]) -> DfResult<Out> {
    Ok(Out::Float(s2_round_trip(&point_of(n, &geo(n, &a[0])?)?).x))
}

fn st_y(n: &str, a: &[Arg]) -> DfResult<Out> {
    Ok(Out::Float(s2_round_trip(&point_of(n, &geo(n, &a[0])?)?).y))
}

fn st_pointn(n: &str, a: &[Arg]) -> DfResult<Out> {
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
    Ok(Out::Geo(Geo::Point(line[at as usize])))
}

fn st_startpoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let line = line_of(n, &geo(n, &a[0])?)?;
    Ok(Out::Geo(
        line.first()
            .map_or(Geo::Collection(vec![]), |c| Geo::Point(*c)),
    ))
}

fn st_endpoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let line = line_of(n, &geo(n, &a[0])?)?;
    Ok(Out::Geo(
        line.last()
            .map_or(Geo::Collection(vec![]), |c| Geo::Point(*c)),
    ))
}

fn is_closed(g: &Geo) -> bool {
    match g {
        Geo::LineString(c) => c.len() > 1 && same(&c[0], &c[c.len() - 1]),
        Geo::MultiLineString(l) => l.iter().all(|c| is_closed(&Geo::LineString(c.clone()))),
        Geo::Collection(g) => g.iter().all(is_closed),
        _ => true,
    }
}

fn st_isclosed(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    Ok(Out::Bool(!g.is_empty() && is_closed(&g)))
}

/// A closed linestring whose edges meet only where they follow each other.
fn st_isring(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    let Geo::LineString(c) = &g else {
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

fn st_makeline(n: &str, a: &[Arg]) -> DfResult<Out> {
    let parts = match a {
        [one] => geos(n, one)?,
        [x, y] => vec![geo(n, x)?, geo(n, y)?],
        _ => return Err(exec(format!("{n}: arguments"))),
    };
    let mut line: Vec<Coord> = Vec::new();
    for p in parts {
        let cs = match p {
            Geo::Point(c) => vec![c],
            Geo::LineString(c) => c,
            other => {
                return Err(fail(
                    n,
                    &format!("it takes points and linestrings, not {}", other.type_name()),
                ));
            }
        };
        for c in cs {
            if line.last().is_none_or(|l| !same(l, &c)) {
                line.push(c);
            }
        }
    }
    if line.len() < 2 {
        return Err(fail(n, "a line needs at least two distinct points"));
    }
    Ok(Out::Geo(Geo::LineString(line)))
}

fn ring_of(n: &str, g: &Geo) -> DfResult<Vec<Coord>> {
    let r = close_ring(&line_of(n, g)?);
    if r.len() < 4 {
        return Err(fail(
            n,
            "a polygon ring needs at least three distinct points",
        ));
    }
    Ok(r)
}

fn st_makepolygon(n: &str, a: &[Arg]) -> DfResult<Out> {
    let mut rings = vec![ring_of(n, &geo(n, &a[0])?)?];
    if let Some(holes) = a.get(1) {
        for h in geos(n, holes)? {
            rings.push(ring_of(n, &h)?);
        }
    }
    Ok(Out::Geo(Geo::Polygon(rings)))
}

fn st_makepolygonoriented(n: &str, a: &[Arg]) -> DfResult<Out> {
    let rings = geos(n, &a[0])?
        .iter()
        .map(|g| ring_of(n, g))
        .collect::<DfResult<Vec<_>>>()?;
    if rings.is_empty() {
        return Ok(Out::Geo(Geo::Collection(vec![])));
    }
    Ok(Out::Geo(Geo::Polygon(rings)))
}

fn dump(g: Geo, out: &mut Vec<Geo>) {
    match g {
        Geo::MultiPoint(c) => out.extend(c.into_iter().map(Geo::Point)),
        Geo::MultiLineString(l) => out.extend(l.into_iter().map(Geo::LineString)),
        Geo::MultiPolygon(p) => out.extend(p.into_iter().map(Geo::Polygon)),
        Geo::Collection(g) => g.into_iter().for_each(|g| dump(g, out)),
        simple => out.push(simple),
    }
}

fn st_dump(n: &str, a: &[Arg]) -> DfResult<Out> {
    let mut out = Vec::new();
    dump(geo(n, &a[0])?, &mut out);
    Ok(Out::Geos(out))
}

fn st_boundary(n: &str, a: &[Arg]) -> DfResult<Out> {
    let g = geo(n, &a[0])?;
    let p = Parts::of(&g);
    if !p.polygons.is_empty() {
        let mut rings: Vec<Vec<Coord>> = p.polygons.into_iter().flatten().collect();
        return Ok(Out::Geo(if rings.len() == 1 {
            Geo::LineString(rings.remove(0))
        } else {
            Geo::MultiLineString(rings)
        }));
    }
    // A line's boundary is its ends (none when closed); a point has none.
    let ends: Vec<Coord> = p
        .lines
        .iter()
        .filter(|l| !is_closed(&Geo::LineString((*l).clone())))
        .flat_map(|l| [l[0], l[l.len() - 1]])
        .collect();
    Ok(Out::Geo(match ends.len() {
        0 => Geo::Collection(vec![]),
        _ => Geo::MultiPoint(ends),
    }))
}

fn st_snaptogrid(n: &str, a: &[Arg]) -> DfResult<Out> {
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
    fn map(g: &Geo, f: &dyn Fn(&Coord) -> Coord) -> Geo {
        let r = |r: &Vec<Coord>| r.iter().map(f).collect::<Vec<_>>();
        match g {
            Geo::Point(c) => Geo::Point(f(c)),
            Geo::LineString(c) => Geo::LineString(r(c)),
            Geo::MultiPoint(c) => Geo::MultiPoint(r(c)),
            Geo::Polygon(p) => Geo::Polygon(p.iter().map(r).collect()),
            Geo::MultiLineString(l) => Geo::MultiLineString(l.iter().map(r).collect()),
            Geo::MultiPolygon(p) => {
                Geo::MultiPolygon(p.iter().map(|p| p.iter().map(r).collect()).collect())
            }
            Geo::Collection(g) => Geo::Collection(g.iter().map(|g| map(g, f)).collect()),
        }
    }
    Ok(Out::Geo(map(&geo(n, &a[0])?, &snap)))
}

/// `ST_UNION` of two geographies or of an array (what `ST_UNION_AGG` becomes): points only.
fn st_union(n: &str, a: &[Arg]) -> DfResult<Out> {
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
        0 => Geo::Collection(vec![]),
        1 => Geo::Point(pts[0]),
        _ => Geo::MultiPoint(pts),
    }))
}

fn st_convexhull(n: &str, a: &[Arg]) -> DfResult<Out> {
    convex_hull(&geo(n, &a[0])?).map(Out::Geo)
}

fn st_geogfromgeojson(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Text(t) = &a[0] else {
        return Err(exec(format!("{n}: text")));
    };
    let v: serde_json::Value =
        serde_json::from_str(t).map_err(|e| fail(n, &format!("invalid GeoJSON: {e}")))?;
    from_geojson(&v)
        .map(Out::Geo)
        .map_err(|e| fail(n, &format!("invalid GeoJSON: {e}")))
}

fn st_geogfromwkb(n: &str, a: &[Arg]) -> DfResult<Out> {
    let bytes = match &a[0] {
        Arg::Bytes(b) => b.clone(),
        // Hex text is accepted too.
        Arg::Text(t) => (0..t.len() / 2)
            .map(|i| u8::from_str_radix(t.get(2 * i..2 * i + 2).unwrap_or("zz"), 16))
            .collect::<Result<_, _>>()
            .map_err(|_| fail(n, "invalid hex WKB"))?,
        _ => return Err(exec(format!("{n}: bytes"))),
    };
    let mut at = 0;
    from_wkb(&bytes, &mut at)
        .map(Out::Geo)
        .map_err(|e| fail(n, &format!("invalid WKB: {e}")))
}

fn st_asbinary(n: &str, a: &[Arg]) -> DfResult<Out> {
    let mut out = Vec::new();
    wkb(&geo(n, &a[0])?, &mut out);
    Ok(Out::Bytes(out))
}

fn two(n: &str, a: &[Arg]) -> DfResult<(Sphere, Sphere, bool)> {
    let (x, y) = (geo(n, &a[0])?, geo(n, &a[1])?);
    let empty = x.is_empty() || y.is_empty();
    Ok((Sphere::of(&x), Sphere::of(&y), empty))
}

fn st_intersects(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && intersects(&x, &y)))
}

fn st_disjoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(empty || !intersects(&x, &y)))
}

fn st_contains(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && contains(&x, &y)))
}

fn st_within(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && contains(&y, &x)))
}

fn st_covers(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && covers(&x, &y)))
}

fn st_coveredby(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && covers(&y, &x)))
}

fn st_touches(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y, empty) = two(n, a)?;
    Ok(Out::Bool(!empty && touches(&x, &y)))
}

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
fn st_area(n: &str, a: &[Arg]) -> DfResult<Out> {
    let p = Parts::of(&geo(n, &a[0])?);
    if a.len() > 1 && matches!(a[1], Arg::Bool(true)) {
        return Err(unsupported(&format!(
            "{n} on the spheroid (bigq-emulator measures on the sphere)"
        )));
    }
    let r2 = super::EARTH_RADIUS_M * super::EARTH_RADIUS_M;
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
fn st_perimeter(n: &str, a: &[Arg]) -> DfResult<Out> {
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
        .map(|ring| Geo::LineString(close_ring(ring)).length())
        .sum();
    Ok(Out::Float(total))
}

/// `ST_MAXDISTANCE` of points: the largest distance between two of them.
fn st_maxdistance(n: &str, a: &[Arg]) -> DfResult<Out> {
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
        .flat_map(|p| y.points.iter().map(move |q| super::distance(p, q)))
        .fold(0.0, f64::max);
    Ok(Out::Float(d))
}

/// `ST_CLOSESTPOINT` where the first geography is a point (it is its own closest point).
fn st_closestpoint(n: &str, a: &[Arg]) -> DfResult<Out> {
    let (x, y) = (geo(n, &a[0])?, geo(n, &a[1])?);
    if x.is_empty() || y.is_empty() {
        return Ok(Out::Geo(Geo::Collection(vec![])));
    }
    match x {
        Geo::Point(c) => Ok(Out::Geo(Geo::Point(c))),
        other => Err(unsupported(&format!(
            "{n} on a {} (bigq-emulator computes it on points only)",
            other.type_name()
        ))),
    }
}

/// Registers these functions on `ctx`.
pub(super) fn register(ctx: &SessionContext) {
    let g = || DataType::Utf8;
    let one = || vec![vec![g()]];
    let pair = || vec![vec![g(), g()]];
    let f = DataType::Float64;
    let b = DataType::Boolean;
    for u in [
        udf("st_x", one(), f.clone(), st_x),
        udf("st_y", one(), f.clone(), st_y),
        udf(
            "st_pointn",
            vec![vec![g(), DataType::Int64]],
            g(),
            st_pointn,
        ),
        udf("st_startpoint", one(), g(), st_startpoint),
        udf("st_endpoint", one(), g(), st_endpoint),
        udf("st_isclosed", one(), b.clone(), st_isclosed),
        udf("st_isring", one(), b.clone(), st_isring),
        udf(
            "st_makeline",
            vec![vec![g(), g()], vec![geo_list()]],
            g(),
            st_makeline,
        ),
        udf(
            "st_makepolygon",
            vec![vec![g()], vec![g(), geo_list()]],
            g(),
            st_makepolygon,
        ),
        udf(
            "st_makepolygonoriented",
            vec![vec![geo_list()]],
            g(),
            st_makepolygonoriented,
        ),
        udf("st_dump", one(), geo_list(), st_dump),
        udf("st_boundary", one(), g(), st_boundary),
        udf(
            "st_snaptogrid",
            vec![vec![g(), f.clone()]],
            g(),
            st_snaptogrid,
        ),
        udf(
            "st_union",
            vec![vec![g(), g()], vec![geo_list()]],
            g(),
            st_union,
        ),
        udf("st_convexhull", one(), g(), st_convexhull),
        udf("st_geogfromgeojson", one(), g(), st_geogfromgeojson),
        udf(
            "st_geogfromwkb",
            vec![vec![DataType::Binary], vec![g()]],
            g(),
            st_geogfromwkb,
        ),
        udf("st_asbinary", one(), DataType::Binary, st_asbinary),
        udf("st_intersects", pair(), b.clone(), st_intersects),
        udf("st_disjoint", pair(), b.clone(), st_disjoint),
        udf("st_contains", pair(), b.clone(), st_contains),
        udf("st_within", pair(), b.clone(), st_within),
        udf("st_covers", pair(), b.clone(), st_covers),
        udf("st_coveredby", pair(), b.clone(), st_coveredby),
        udf("st_touches", pair(), b, st_touches),
        udf("st_maxdistance", pair(), f.clone(), st_maxdistance),
        udf(
            "st_area",
            vec![vec![g()], vec![g(), DataType::Boolean]],
            f.clone(),
            st_area,
        ),
        udf(
            "st_perimeter",
            vec![vec![g()], vec![g(), DataType::Boolean]],
            f,
            st_perimeter,
        ),
        udf("st_closestpoint", pair(), g(), st_closestpoint),
        udf("st_centroid", one(), g(), centroid::st_centroid),
        udf(
            "st_buffer",
            {
                let (x, i) = (DataType::Float64, DataType::Int64);
                vec![
                    vec![g(), x.clone()],
                    vec![g(), i.clone()],
                    vec![g(), x.clone(), i.clone()],
                    vec![g(), x.clone(), x.clone()],
                    vec![g(), i.clone(), i.clone()],
                    vec![g(), i, x],
                ]
            },
            g(),
            buffer::st_buffer,
        ),
        udf("st_intersection", pair(), g(), overlay::st_intersection),
        udf("st_difference", pair(), g(), overlay::st_difference),
        udf(
            "st_simplify",
            vec![vec![g(), DataType::Float64], vec![g(), DataType::Int64]],
            g(),
            simplify::st_simplify,
        ),
    ] {
        ctx.register_udf(u);
    }
}

mod buffer;
mod centroid;
mod overlay;
mod simplify;
pub(super) mod tessellate;

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(s: &str) -> Sphere {
        Sphere::of(&Geo::parse(s).unwrap())
    }

    #[test]
    fn points_come_back_as_bigquery_keeps_them() {
        assert_eq!(s2_round_trip(&coord(1.0, 1.0)).x, 0.999_999_999_999_999_8);
        assert_eq!(s2_round_trip(&coord(1.25, 2.5)).x, 1.25);
        let mut b = Vec::new();
        wkb(&Geo::parse("POINT(1 1)").unwrap(), &mut b);
        // BigQuery's ST_ASBINARY(ST_GEOGPOINT(1, 1)).
        assert_eq!(
            b,
            [
                1, 1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x3f, 0, 0, 0, 0, 0, 0,
                0xf0, 0x3f
            ]
        );
        let mut at = 0;
        assert_eq!(from_wkb(&b, &mut at).unwrap().wkt(), "POINT(1 1)");
        assert!(from_wkb(&b[..7], &mut 0).is_err());
    }

    #[test]
    fn predicates_on_the_sphere() {
        let square = parts("POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))");
        assert!(contains(&square, &parts("POINT(2 2)")));
        assert!(!contains(&square, &parts("POINT(10 10)")));
        // On the edge: covered, not contained.
        assert!(covers(&square, &parts("POINT(0 2)")));
        assert!(!contains(&square, &parts("POINT(0 2)")));
        // The northern edge is a great circle bowing towards the pole: a point just north
        // of latitude 4 in the middle is inside on the sphere (outside on a plane).
        assert!(contains(&square, &parts("POINT(2 4.001)")));
        assert!(intersects(
            &parts("LINESTRING(0 0, 2 2)"),
            &parts("LINESTRING(0 2, 2 0)")
        ));
        assert!(!intersects(
            &parts("LINESTRING(0 0, 1 1)"),
            &parts("LINESTRING(0 2, 1 3)")
        ));
        // A meridian crossing the equator.
        assert!(arcs_cross(
            xyz(&coord(0.0, 0.0)),
            xyz(&coord(4.0, 0.0)),
            xyz(&coord(2.0, -1.0)),
            xyz(&coord(2.0, 2.0))
        ));
        let a = parts("POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))");
        let b = parts("POLYGON((1 0, 2 0, 2 1, 1 1, 1 0))");
        assert!(touches(&a, &b));
        assert!(!touches(&a, &a));
        assert!(!touches(&parts("POINT(0 0)"), &parts("POINT(0 0)")));
        let overlapping = parts("POLYGON((1 1, 3 1, 3 3, 1 3, 1 1))");
        assert!(intersects(
            &parts("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))"),
            &overlapping
        ));
        assert!(!touches(
            &parts("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))"),
            &overlapping
        ));
    }

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

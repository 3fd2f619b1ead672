//! A geography as its points, lines and polygons: in degrees ([`Parts`]) and as unit vectors
//! converted once for the predicates ([`Sphere`]).

use geo_types::{Coord, Geometry};

use super::sphere::{EPS, Place, V3, arcs_cross, closed, dot, on_arc, place_in_polygon, xyz};
use super::value::{Geo, rings};

/// A geography as points, lines and polygons.
#[derive(Default)]
pub(super) struct Parts {
    pub(super) points: Vec<Coord>,
    pub(super) lines: Vec<Vec<Coord>>,
    pub(super) polygons: Vec<Vec<Vec<Coord>>>,
}

impl Parts {
    pub(super) fn of(g: &Geo) -> Parts {
        let mut p = Parts::default();
        p.add(g);
        p
    }

    fn add(&mut self, g: &Geo) {
        match g {
            Geometry::Point(p) => self.points.push(p.0),
            Geometry::MultiPoint(m) => self.points.extend(m.iter().map(|p| p.0)),
            Geometry::LineString(l) => self.lines.push(l.0.clone()),
            Geometry::MultiLineString(m) => self.lines.extend(m.iter().map(|l| l.0.clone())),
            Geometry::Polygon(p) => self.polygons.push(rings(p)),
            Geometry::MultiPolygon(m) => self.polygons.extend(m.iter().map(rings)),
            Geometry::GeometryCollection(g) => g.iter().for_each(|g| self.add(g)),
            Geometry::Line(l) => self.lines.push(vec![l.start, l.end]),
            Geometry::Rect(r) => self.polygons.push(rings(&r.to_polygon())),
            Geometry::Triangle(t) => self.polygons.push(rings(&t.to_polygon())),
        }
    }

    /// Every vertex.
    pub(super) fn vertices(&self) -> Vec<Coord> {
        let mut v = self.points.clone();
        v.extend(self.lines.iter().flatten().copied());
        v.extend(self.polygons.iter().flatten().flatten().copied());
        v
    }
}

/// A geography's parts as unit vectors, converted once for the predicates.
pub(super) struct Sphere {
    pub(super) points: Vec<V3>,
    pub(super) lines: Vec<Vec<V3>>,
    /// The polygons' rings, closed.
    pub(super) polygons: Vec<Vec<Vec<V3>>>,
    /// Every vertex.
    pub(super) vertices: Vec<V3>,
    /// Every edge: the lines' and the polygons' rings'.
    pub(super) arcs: Vec<(V3, V3)>,
    /// A point inside each polygon (its shell's vertex mean, for the convex shapes
    /// predicates meet in practice), to tell overlapping polygons from touching ones.
    pub(super) interior: Vec<V3>,
}

impl Sphere {
    pub(super) fn of(g: &Geo) -> Sphere {
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

    pub(super) fn is_points(&self) -> bool {
        self.polygons.is_empty() && self.lines.is_empty()
    }

    /// Where a point is: inside a polygon, on a polygon's boundary, a line or a point of
    /// this geography, or outside all of it.
    pub(super) fn place(&self, v: V3) -> Place {
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
    pub(super) fn arcs_cross(&self, other: &Sphere) -> bool {
        self.arcs
            .iter()
            .any(|&(p, q)| other.arcs.iter().any(|&(r, s)| arcs_cross(p, q, r, s)))
    }
}

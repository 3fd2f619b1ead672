//! `ST_BOUNDINGBOX` and `ST_EXTENT`: the smallest longitude/latitude rectangle holding a
//! geography (all the geographies of a group), as BigQuery gives it: a STRUCT of `xmin`,
//! `ymin`, `xmax`, `ymax`, with `xmax` past 180 when the rectangle crosses the antimeridian
//! (`xmin` 172, `xmax` 230). Edges are great-circle arcs, so an edge's highest (lowest)
//! latitude may lie between its ends; a polygon around a pole reaches it and every longitude.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Builder, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility, create_udf};
use datafusion::sql::sqlparser::ast::{self, Expr};
use geo::HasDimensions;
use geo_types::{Coord, Geometry};

use super::rows::geo_at;
use super::sphere::{V3, closed, cross, dot, winding, xyz};
use super::value::{Geo, rings};
use crate::error::BqResult;
use crate::sql::ast::{call, function_args};
use crate::sql::functions::udf::{arrays, result};

/// The rectangle's type: BigQuery's `STRUCT<xmin, ymin, xmax, ymax>` of FLOAT64.
fn box_type() -> DataType {
    DataType::Struct(Fields::from(
        ["xmin", "ymin", "xmax", "ymax"]
            .map(|n| Field::new(n, DataType::Float64, true))
            .to_vec(),
    ))
}

/// What is known of a rectangle while it grows: the longitude arcs its edges and points
/// cover (start, length in degrees) and its latitudes.
#[derive(Default)]
struct Bounds {
    arcs: Vec<(f64, f64)>,
    lat: Option<(f64, f64)>,
    all_longitudes: bool,
}

impl Bounds {
    fn lat(&mut self, y: f64) {
        self.lat = Some(match self.lat {
            Some((lo, hi)) => (lo.min(y), hi.max(y)),
            None => (y, y),
        });
    }

    fn point(&mut self, c: &Coord) {
        self.arcs.push((c.x, 0.0));
        self.lat(c.y);
    }

    /// The great-circle edge from `a` to `b`.
    fn edge(&mut self, a: &Coord, b: &Coord) {
        self.point(a);
        self.point(b);
        let d = (b.x - a.x).rem_euclid(360.0);
        if d <= 180.0 {
            self.arcs.push((a.x, d));
        } else {
            self.arcs.push((b.x, 360.0 - d));
        }
        // The circle's highest and lowest points, where they lie within the edge.
        let (p, q) = (xyz(a), xyz(b));
        let n = cross(p, q);
        let nn = dot(n, n);
        if nn <= 1e-30 {
            return;
        }
        for pole in [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]] {
            let k = dot(pole, n) / nn;
            let m = [pole[0] - k * n[0], pole[1] - k * n[1], pole[2] - k * n[2]];
            let len = dot(m, m).sqrt();
            if len <= 1e-15 {
                continue;
            }
            let m: V3 = [m[0] / len, m[1] / len, m[2] / len];
            if dot(cross(p, m), n) > 0.0 && dot(cross(m, q), n) > 0.0 {
                self.lat(m[2].clamp(-1.0, 1.0).asin().to_degrees());
            }
        }
    }

    fn add(&mut self, g: &Geo) {
        match g {
            Geometry::Point(p) => self.point(&p.0),
            Geometry::MultiPoint(m) => m.0.iter().for_each(|p| self.point(&p.0)),
            Geometry::LineString(l) => self.line(&l.0),
            Geometry::MultiLineString(m) => m.0.iter().for_each(|l| self.line(&l.0)),
            Geometry::Polygon(p) => self.polygon(&rings(p)),
            Geometry::MultiPolygon(m) => m.0.iter().for_each(|p| self.polygon(&rings(p))),
            Geometry::GeometryCollection(c) => c.0.iter().for_each(|g| self.add(g)),
            other => {
                if let Some(g) = super::value::canonical(other) {
                    self.add(&g);
                }
            }
        }
    }

    fn line(&mut self, c: &[Coord]) {
        if let [only] = c {
            self.point(only);
        }
        for w in c.windows(2) {
            self.edge(&w[0], &w[1]);
        }
    }

    fn polygon(&mut self, rings: &[Vec<Coord>]) {
        for r in rings {
            self.line(r);
        }
        let Some(shell) = rings.first() else {
            return;
        };
        let shell = closed(shell);
        for (pole, lat) in [([0.0, 0.0, 1.0], 90.0), ([0.0, 0.0, -1.0], -90.0)] {
            if winding(pole, &shell) != 0 {
                self.lat(lat);
                self.all_longitudes = true;
            }
        }
    }

    /// `[xmin, ymin, xmax, ymax]`, or `None` for nothing at all.
    fn rectangle(&self) -> Option<[f64; 4]> {
        let (ymin, ymax) = self.lat?;
        if self.all_longitudes {
            return Some([-180.0, ymin, 180.0, ymax]);
        }
        // The longitudes covered are the circle less its widest gap between the arcs.
        let mut arcs: Vec<(f64, f64)> = self
            .arcs
            .iter()
            .map(|&(s, l)| ((s + 180.0).rem_euclid(360.0) - 180.0, l))
            .collect();
        arcs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::new();
        for (s, l) in arcs {
            match merged.last_mut() {
                Some((ms, ml)) if s <= *ms + *ml => *ml = ml.max(s + l - *ms),
                _ => merged.push((s, l)),
            }
        }
        // The last arc may wrap over the first ones.
        while merged.len() > 1 {
            let (ls, ll) = merged[merged.len() - 1];
            let (fs, fl) = merged[0];
            if ls + ll >= fs + 360.0 {
                merged.remove(0);
                let end = (fs + fl + 360.0).max(ls + ll);
                if let Some(last) = merged.last_mut() {
                    last.1 = end - last.0;
                }
            } else {
                break;
            }
        }
        let (mut best_gap, mut start) = (-1.0, merged[0].0);
        for (i, &(s, l)) in merged.iter().enumerate() {
            let (ns, _) = merged[(i + 1) % merged.len()];
            let next = if i + 1 == merged.len() {
                ns + 360.0
            } else {
                ns
            };
            let gap = next - (s + l);
            if gap > best_gap {
                best_gap = gap;
                start = if i + 1 == merged.len() { ns } else { next };
            }
        }
        if best_gap <= 0.0 {
            return Some([-180.0, ymin, 180.0, ymax]);
        }
        let start = (start + 180.0).rem_euclid(360.0) - 180.0;
        Some([start, ymin, start + 360.0 - best_gap, ymax])
    }
}

fn rectangles(rows: impl Iterator<Item = Option<[f64; 4]>>) -> ArrayRef {
    let mut cols: [Float64Builder; 4] = Default::default();
    let mut valid = Vec::new();
    for r in rows {
        valid.push(r.is_some());
        for (k, b) in cols.iter_mut().enumerate() {
            match r {
                Some(v) => b.append_value(v[k]),
                None => b.append_null(),
            }
        }
    }
    let DataType::Struct(fields) = box_type() else {
        unreachable!("a struct type")
    };
    let arrays: Vec<ArrayRef> = cols
        .iter_mut()
        .map(|b| Arc::new(b.finish()) as ArrayRef)
        .collect();
    Arc::new(StructArray::new(fields, arrays, Some(valid.into())))
}

pub(super) fn st_boundingbox() -> ScalarUDF {
    let name = "st_boundingbox";
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let g = super::rows::strings(&a[0], name)?;
        let boxes = (0..rows)
            .map(|i| {
                Ok(geo_at(g, i, name)?.filter(|g| !g.is_empty()).and_then(|g| {
                    let mut b = Bounds::default();
                    b.add(&g);
                    b.rectangle()
                }))
            })
            .collect::<DfResult<Vec<_>>>()?;
        result(rectangles(boxes.into_iter()), args)
    };
    create_udf(
        name,
        vec![DataType::Utf8],
        box_type(),
        Volatility::Immutable,
        Arc::new(fun),
    )
}

/// `bigq_st_extent(array)`: the rectangle of an array of geographies (NULLs and empty ones
/// left out), for `ST_EXTENT`.
pub(super) fn st_extent_of() -> ScalarUDF {
    let name = "bigq_st_extent";
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let lists = a[0].as_list::<i32>();
        let boxes = (0..rows)
            .map(|i| {
                if lists.is_null(i) {
                    return Ok(None);
                }
                let items = lists.value(i);
                let g = super::rows::strings(&items, name)?;
                let mut b = Bounds::default();
                for k in 0..g.len() {
                    if let Some(geo) = geo_at(g, k, name)?.filter(|g| !g.is_empty()) {
                        b.add(&geo);
                    }
                }
                Ok(b.rectangle())
            })
            .collect::<DfResult<Vec<_>>>()?;
        result(rectangles(boxes.into_iter()), args)
    };
    create_udf(
        name,
        vec![super::rows::geo_list()],
        box_type(),
        Volatility::Immutable,
        Arc::new(fun),
    )
}

/// `ST_EXTENT(geography)`, an aggregate, as the rectangle of the array of its inputs.
pub(super) fn st_extent(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f)
        .filter(|a| a.len() == 1)
        .map(|args| call("bigq_st_extent", vec![call("array_agg", args)])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::value::Geography;

    fn bbox(wkt: &str) -> Option<[f64; 4]> {
        let mut b = Bounds::default();
        b.add(&Geo::parse(wkt).unwrap());
        b.rectangle()
    }

    #[test]
    fn rectangles_cross_the_antimeridian_and_reach_poles() {
        assert_eq!(
            bbox("POLYGON((-125 48, -124 46, -117 46, -117 49, -125 48))"),
            Some([-125.0, 46.0, -117.0, 49.0])
        );
        assert_eq!(
            bbox("POLYGON((172 53, -130 55, -141 70, 172 53))"),
            Some([172.0, 53.0, 230.0, 70.0])
        );
        // An edge along a parallel bulges toward the pole on the sphere.
        let b = bbox("LINESTRING(-10 60, 10 60)").unwrap();
        assert!(b[3] > 60.3 && b[1] == 60.0, "{b:?}");
        assert_eq!(bbox("POINT(1 2)"), Some([1.0, 2.0, 1.0, 2.0]));
    }
}

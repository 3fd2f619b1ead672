//! Geography parsers beyond WKT text (which [`Geo::parse`] reads): `ST_GEOGFROMGEOJSON` and
//! `ST_GEOGFROMWKB`.

use datafusion::common::Result as DfResult;
use wkt::types::Coord;

use super::rows::{Arg, Out, exec, fail};
use super::sphere::coord;
use super::value::Geo;

/// Reads one WKB geometry (either byte order, 2D) from `b` at `*at`.
pub(super) fn from_wkb(b: &[u8], at: &mut usize) -> Result<Geo, String> {
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

pub(super) fn st_geogfromgeojson(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Text(t) = &a[0] else {
        return Err(exec(format!("{n}: text")));
    };
    let v: serde_json::Value =
        serde_json::from_str(t).map_err(|e| fail(n, &format!("invalid GeoJSON: {e}")))?;
    from_geojson(&v)
        .map(Out::Geo)
        .map_err(|e| fail(n, &format!("invalid GeoJSON: {e}")))
}

pub(super) fn st_geogfromwkb(n: &str, a: &[Arg]) -> DfResult<Out> {
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

//! Geography parsers beyond WKT text (which [`Geography::parse`] reads with `wkt`):
//! `ST_GEOGFROMGEOJSON` with `geojson`, `ST_GEOGFROMWKB` with `wkb`, `ST_GEOGFROM` of any of
//! the three, and `ST_GEOGPOINTFROMGEOHASH` with `geohash`.

use std::str::FromStr;

use datafusion::common::Result as DfResult;
use geo::HasDimensions;

use super::rows::{Arg, Out, exec, fail};
use super::value::{Geo, empty, normalized};
#[cfg(test)]
use super::value::{Geography, from_traits};

/// One WKB (or EWKB) geometry, either byte order; Z and M values are dropped.
#[cfg(test)]
pub(super) fn from_wkb(b: &[u8]) -> Result<Geo, String> {
    let wkb = wkb::reader::read_wkb(b).map_err(|e| e.to_string())?;
    from_traits(&wkb)
}

/// A GeoJSON geometry object (not a Feature: BigQuery takes geometries only).
fn from_geojson(text: &str) -> Result<Geo, String> {
    let geometry = geojson::Geometry::from_str(text).map_err(|e| e.to_string())?;
    let g = Geo::try_from(geometry).map_err(|e| e.to_string())?;
    Ok(if g.is_empty() { empty() } else { normalized(g) })
}

pub(super) fn st_geogfromgeojson(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Text(t) = &a[0] else {
        return Err(exec(format!("{n}: text")));
    };
    let o = options(n, &a[1..], &["make_valid"])?;
    read_checked(
        n,
        from_geojson(t).map_err(|e| format!("invalid GeoJSON: {e}")),
        &o,
    )
}

pub(super) fn st_geogfromwkb(n: &str, a: &[Arg]) -> DfResult<Out> {
    let bytes = match &a[0] {
        Arg::Bytes(b) => b.clone(),
        // Hex text is accepted too, in either case.
        Arg::Text(t) => data_encoding::HEXLOWER_PERMISSIVE
            .decode(t.as_bytes())
            .map_err(|e| fail(n, &format!("invalid hex WKB: {e}")))?,
        _ => return Err(exec(format!("{n}: bytes"))),
    };
    let o = options(n, &a[1..], &["oriented", "planar", "make_valid"])?;
    let g = wkb::reader::read_wkb(&bytes)
        .map_err(|e| format!("invalid WKB: {e}"))
        .and_then(|w| super::value::as_given(&w));
    read_checked(n, g, &o)
}

/// The options of ST_GEOGFROMTEXT, ST_GEOGFROMWKB and ST_GEOGFROMGEOJSON after the input:
/// `oriented`, `planar` and `make_valid` (each FALSE when left out), for the functions
/// that take them.
struct Options {
    oriented: bool,
    planar: bool,
    make_valid: bool,
}

fn options(n: &str, rest: &[Arg], names: &[&str]) -> DfResult<Options> {
    let mut o = Options {
        oriented: false,
        planar: false,
        make_valid: false,
    };
    for (a, name) in rest.iter().zip(names) {
        let Arg::Bool(v) = a else {
            return Err(exec(format!("{n}: {name} is a BOOL")));
        };
        match *name {
            "oriented" => o.oriented = *v,
            "planar" => o.planar = *v,
            _ => o.make_valid = *v,
        }
    }
    Ok(o)
}

/// A geography read (as the input runs its rings), checked as BigQuery checks it and with
/// the options applied: `planar => TRUE` and an `oriented => TRUE` polygon given clockwise
/// (its interior the rest of the globe) are refused, as is `make_valid => TRUE` of an invalid
/// geography (bigq-emulator does not repair geographies).
fn read_checked(n: &str, g: Result<Geo, String>, o: &Options) -> DfResult<Out> {
    let g = g.map_err(|e| fail(n, &e))?;
    let upper = n.to_ascii_uppercase();
    if o.planar {
        return Err(super::value::unsupported(&format!(
            "{upper} with planar => TRUE (edges as straight lines on the plane)"
        )));
    }
    if o.oriented && !super::value::counterclockwise(&g) {
        return Err(super::value::unsupported(&format!(
            "{upper} with oriented => TRUE of a clockwise ring (a polygon larger than a hemisphere)"
        )));
    }
    let g = normalized(g);
    if let Err(e) = super::value::validate(&g) {
        if o.make_valid {
            return Err(super::value::unsupported(&format!(
                "{upper} with make_valid => TRUE of an invalid geography ({e}): bigq-emulator does not repair geographies"
            )));
        }
        return Err(fail(n, &e));
    }
    Ok(Out::Geo(g))
}

/// `ST_GEOGFROMTEXT(wkt[, oriented][, planar][, make_valid])`.
pub(super) fn st_geogfromtext(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Text(t) = &a[0] else {
        return Err(exec(format!("{n}: text")));
    };
    let o = options(n, &a[1..], &["oriented", "planar", "make_valid"])?;
    let g = wkt::Wkt::<f64>::from_str(t.trim())
        .map_err(|e| format!("Invalid WKT {t:?}: {e}"))
        .and_then(|w| super::value::as_given(&w));
    read_checked(n, g, &o)
}

/// `ST_GEOGFROM`: BYTES as WKB; text as GeoJSON (an object), hexadecimal WKB or WKT.
pub(super) fn st_geogfrom(n: &str, a: &[Arg]) -> DfResult<Out> {
    match &a[0] {
        Arg::Bytes(_) => st_geogfromwkb(n, &a[..1]),
        Arg::Text(t) => {
            let text = t.trim();
            if text.starts_with('{') {
                st_geogfromgeojson(n, a)
            } else if !text.is_empty() && text.bytes().all(|c| c.is_ascii_hexdigit()) {
                st_geogfromwkb(n, &[Arg::Text(text.to_string())])
            } else {
                st_geogfromtext(n, &a[..1])
            }
        }
        _ => Err(exec(format!("{n}: text or bytes"))),
    }
}

/// `ST_GEOGPOINTFROMGEOHASH`: the centre of the geohash's cell.
pub(super) fn st_geogpointfromgeohash(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Text(t) = &a[0] else {
        return Err(exec(format!("{n}: text")));
    };
    let (c, _, _) =
        geohash::decode(t).map_err(|e| fail(n, &format!("invalid geohash {t:?}: {e}")))?;
    Ok(Out::Geo(super::value::point(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geojson_and_wkb_are_read_by_the_georust_crates() {
        let g = from_geojson(r#"{"type": "LineString", "coordinates": [[1, 2], [3, 4.5]]}"#);
        assert_eq!(g.unwrap().wkt(), "LINESTRING(1 2, 3 4.5)");
        let g = from_geojson(r#"{"type": "GeometryCollection", "geometries": []}"#);
        assert_eq!(g.unwrap().wkt(), "GEOMETRYCOLLECTION EMPTY");
        assert!(from_geojson(r#"{"type": "Point", "coordinates": [1]}"#).is_err());
        assert!(from_geojson(r#"{"type": "Circle", "coordinates": [1, 2]}"#).is_err());
        // POINT(1 2), big-endian.
        let be = [
            0, 0, 0, 0, 1, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(from_wkb(&be).unwrap().wkt(), "POINT(1 2)");
        // POINT EMPTY is NaN, NaN.
        let mut nan = vec![1, 1, 0, 0, 0];
        nan.extend(f64::NAN.to_le_bytes());
        nan.extend(f64::NAN.to_le_bytes());
        assert_eq!(from_wkb(&nan).unwrap().wkt(), "GEOMETRYCOLLECTION EMPTY");
        // ISO WKB POINT Z (type 1001): the height is dropped.
        let mut z = vec![1, 0xe9, 0x03, 0, 0];
        for v in [3.5, -1.0, 100.0f64] {
            z.extend(v.to_le_bytes());
        }
        assert_eq!(from_wkb(&z).unwrap().wkt(), "POINT(3.5 -1)");
        assert!(from_wkb(&be[..7]).is_err());
        assert!(from_wkb(&[1, 99, 0, 0, 0]).is_err());
    }
}

//! Geography parsers beyond WKT text (which [`Geography::parse`] reads with `wkt`):
//! `ST_GEOGFROMGEOJSON` with `geojson`, `ST_GEOGFROMWKB` with `wkb`.

use std::str::FromStr;

use datafusion::common::Result as DfResult;
use geo::HasDimensions;

use super::rows::{Arg, Out, exec, fail};
use super::value::{Geo, empty, from_traits};

#[cfg(test)]
use super::value::Geography;

/// One WKB (or EWKB) geometry, either byte order; Z and M values are dropped.
pub(super) fn from_wkb(b: &[u8]) -> Result<Geo, String> {
    let wkb = wkb::reader::read_wkb(b).map_err(|e| e.to_string())?;
    from_traits(&wkb)
}

/// A GeoJSON geometry object (not a Feature: BigQuery takes geometries only).
fn from_geojson(text: &str) -> Result<Geo, String> {
    let geometry = geojson::Geometry::from_str(text).map_err(|e| e.to_string())?;
    let g = Geo::try_from(geometry).map_err(|e| e.to_string())?;
    Ok(if g.is_empty() { empty() } else { g })
}

pub(super) fn st_geogfromgeojson(n: &str, a: &[Arg]) -> DfResult<Out> {
    let Arg::Text(t) = &a[0] else {
        return Err(exec(format!("{n}: text")));
    };
    from_geojson(t)
        .map(Out::Geo)
        .map_err(|e| fail(n, &format!("invalid GeoJSON: {e}")))
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
    from_wkb(&bytes)
        .map(Out::Geo)
        .map_err(|e| fail(n, &format!("invalid WKB: {e}")))
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

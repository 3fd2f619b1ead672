//! Geography formatters beyond WKT and GeoJSON text (which [`Geography`] writes): `ST_ASBINARY`,
//! WKB written by the `wkb` crate with the coordinates BigQuery hands back, and `ST_GEOHASH`
//! with the `geohash` crate.

use datafusion::common::Result as DfResult;
use geo::MapCoords;

use super::rows::{Arg, Out, fail, geo};
use super::sphere::s2_round_trip;
use super::value::Geo;

#[cfg(test)]
use super::value::Geography;

/// Little-endian WKB of `g`, each coordinate after BigQuery's round trip through S2.
pub(super) fn wkb(g: &Geo) -> Result<Vec<u8>, String> {
    let kept = g.map_coords(|c| s2_round_trip(&c));
    let mut out = Vec::new();
    wkb::writer::write_geometry(&mut out, &kept, &Default::default()).map_err(|e| e.to_string())?;
    Ok(out)
}

pub(super) fn st_asbinary(n: &str, a: &[Arg]) -> DfResult<Out> {
    wkb(&geo(n, &a[0])?)
        .map(Out::Bytes)
        .map_err(|e| fail(n, &e))
}

/// `ST_GEOHASH(point[, maxchars])`: the point's geohash of `maxchars` characters (20 when
/// left out, at most 20); NULL for a geography that is not one point.
pub(super) fn st_geohash(n: &str, a: &[Arg]) -> DfResult<Out> {
    let len = match a.get(1) {
        Some(Arg::Int(k)) if (1..=20).contains(k) => *k as usize,
        Some(Arg::Int(k)) => {
            return Err(fail(
                n,
                &format!("maxchars must be between 1 and 20, not {k}"),
            ));
        }
        _ => 20,
    };
    let geo_types::Geometry::Point(p) = geo(n, &a[0])? else {
        return Ok(Out::Null);
    };
    geohash::encode(s2_round_trip(&p.0), len)
        .map(Out::Text)
        .map_err(|e| fail(n, &e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::functions::geography::parsers::from_wkb;
    use crate::sql::functions::geography::sphere::coord;

    #[test]
    fn points_come_back_as_bigquery_keeps_them() {
        assert_eq!(s2_round_trip(&coord(1.0, 1.0)).x, 0.999_999_999_999_999_8);
        assert_eq!(s2_round_trip(&coord(1.25, 2.5)).x, 1.25);
        let b = wkb(&Geo::parse("POINT(1 1)").unwrap()).unwrap();
        // BigQuery's ST_ASBINARY(ST_GEOGPOINT(1, 1)).
        assert_eq!(
            b,
            [
                1, 1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x3f, 0, 0, 0, 0, 0, 0,
                0xf0, 0x3f
            ]
        );
        assert_eq!(from_wkb(&b).unwrap().wkt(), "POINT(1 1)");
        assert!(from_wkb(&b[..7]).is_err());
        // The empty geography is an empty collection (type 7, no parts).
        assert_eq!(
            wkb(&Geo::parse("POINT EMPTY").unwrap()).unwrap(),
            [1, 7, 0, 0, 0, 0, 0, 0, 0]
        );
    }
}

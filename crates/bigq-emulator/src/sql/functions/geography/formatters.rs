//! Geography formatters beyond WKT and GeoJSON text (which [`Geo`] writes): `ST_ASBINARY`, in
//! WKB with the coordinates BigQuery hands back.

use datafusion::common::Result as DfResult;
use wkt::types::Coord;

use super::rows::{Arg, Out, geo};
use super::sphere::s2_round_trip;
use super::value::Geo;

pub(super) fn wkb(g: &Geo, out: &mut Vec<u8>) {
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

pub(super) fn st_asbinary(n: &str, a: &[Arg]) -> DfResult<Out> {
    let mut out = Vec::new();
    wkb(&geo(n, &a[0])?, &mut out);
    Ok(Out::Bytes(out))
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
}

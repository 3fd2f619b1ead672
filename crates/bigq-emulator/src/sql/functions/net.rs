//! The `NET.` functions: IP addresses as BYTES in network order (`NET.IP_FROM_STRING`,
//! `NET.SAFE_IP_FROM_STRING`, `NET.IP_TO_STRING`, `NET.IP_NET_MASK`, `NET.IP_TRUNC`,
//! `NET.IPV4_FROM_INT64`, `NET.IPV4_TO_INT64`) and the parts of a URL's host (`NET.HOST`,
//! `NET.PUBLIC_SUFFIX`, `NET.REG_DOMAIN`, the suffix from the ICANN section of the public
//! suffix list, as BigQuery leaves out its private section). Each is a UDF `net_x` that the
//! call `NET.X(...)` is rewritten to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use datafusion::common::{Result as DfResult, ScalarValue};
use datafusion::sql::sqlparser::ast::{self, Expr};
use psl::Psl;

use super::registry::{Family, Function};
use super::row::{Call, bytes, bytes_value, fail, int, int_value, string_value, text, udf};
use crate::error::BqResult;
use crate::sql::ast::{call, function_args};

/// `NET.X(args)` as `net_x(args)`.
fn net(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let udf = name.to_ascii_lowercase().replace('.', "_");
    Ok(function_args(f).map(|args| call(&udf, args)))
}

fn parse_ip(s: &str) -> Option<Vec<u8>> {
    match s.parse::<IpAddr>().ok()? {
        IpAddr::V4(a) => Some(a.octets().to_vec()),
        IpAddr::V6(a) => Some(a.octets().to_vec()),
    }
}

fn ip_from_string(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    parse_ip(s).map(bytes_value).ok_or_else(|| {
        fail(
            "NET.IP_FROM_STRING()",
            format!("encountered an unparseable IP-address: {s}"),
        )
    })
}

fn safe_ip_from_string(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    Ok(ScalarValue::Binary(parse_ip(s)))
}

fn ip_to_string(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let b = bytes(&a[0]).unwrap_or_default();
    if let Ok(v4) = <[u8; 4]>::try_from(b) {
        return Ok(string_value(Ipv4Addr::from(v4).to_string()));
    }
    if let Ok(v6) = <[u8; 16]>::try_from(b) {
        return Ok(string_value(Ipv6Addr::from(v6).to_string()));
    }
    Err(fail(
        "NET.IP_TO_STRING()",
        format!("expected 4 or 16 bytes, got {}", b.len()),
    ))
}

/// `bits` leading one bits in `len` bytes.
fn mask(len: usize, bits: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            let ones = bits.saturating_sub(i * 8).min(8);
            if ones == 0 { 0 } else { 0xffu8 << (8 - ones) }
        })
        .collect()
}

/// A prefix length within `0..=bits`, or `name`'s complaint.
fn prefix(name: &str, v: i64, bits: usize) -> DfResult<usize> {
    usize::try_from(v)
        .ok()
        .filter(|p| *p <= bits)
        .ok_or_else(|| {
            fail(
                name,
                format!("the prefix length must be in [0, {bits}], got {v}"),
            )
        })
}

fn ip_net_mask(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (len, bits) = (
        int(&a[0]).unwrap_or_default(),
        int(&a[1]).unwrap_or_default(),
    );
    if len != 4 && len != 16 {
        return Err(fail(
            "NET.IP_NET_MASK()",
            format!("the number of output bytes must be 4 or 16, got {len}"),
        ));
    }
    let len = len as usize;
    let bits = prefix("NET.IP_NET_MASK()", bits, len * 8)?;
    Ok(bytes_value(mask(len, bits)))
}

fn ip_trunc(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let b = bytes(&a[0]).unwrap_or_default();
    if b.len() != 4 && b.len() != 16 {
        return Err(fail(
            "NET.IP_TRUNC()",
            format!("expected 4 or 16 bytes, got {}", b.len()),
        ));
    }
    let bits = prefix(
        "NET.IP_TRUNC()",
        int(&a[1]).unwrap_or_default(),
        b.len() * 8,
    )?;
    let m = mask(b.len(), bits);
    Ok(bytes_value(
        b.iter().zip(m).map(|(x, m)| x & m).collect::<Vec<_>>(),
    ))
}

fn ipv4_from_int64(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let v = int(&a[0]).unwrap_or_default();
    if !(-0x8000_0000..=0xFFFF_FFFF).contains(&v) {
        return Err(fail(
            "NET.IPV4_FROM_INT64()",
            format!("{v} is not in [-0x80000000, 0xFFFFFFFF]"),
        ));
    }
    Ok(bytes_value((v as u32).to_be_bytes().to_vec()))
}

fn ipv4_to_int64(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let b = bytes(&a[0]).unwrap_or_default();
    let v4 = <[u8; 4]>::try_from(b).map_err(|_| {
        fail(
            "NET.IPV4_TO_INT64()",
            format!("expected 4 bytes, got {}", b.len()),
        )
    })?;
    Ok(int_value(i64::from(u32::from_be_bytes(v4))))
}

/// The host of a URL, as BigQuery reads one leniently: surrounding spaces, a `scheme://`,
/// user info and port dropped; `None` when nothing is left.
fn host_of(url: &str) -> Option<&str> {
    let mut s = url.trim();
    if let Some(i) = s.find("://") {
        let scheme = &s[..i];
        let is_scheme = scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if is_scheme {
            s = &s[i + 3..];
        }
    }
    if let Some(rest) = s.strip_prefix("//") {
        s = rest;
    }
    let end = s.find(['/', '?', '#', '\\']).unwrap_or(s.len());
    s = &s[..end];
    if let Some(i) = s.rfind('@') {
        s = &s[i + 1..];
    }
    if s.starts_with('[') {
        if let Some(i) = s.find(']') {
            s = &s[..=i];
        }
    } else if let Some(i) = s.find(':') {
        s = &s[..i];
    }
    (!s.is_empty()).then_some(s)
}

/// The byte length of the ICANN public suffix ending `host`, if it has one and is a name
/// (no empty label, not an IP address).
fn suffix_len(host: &str) -> Option<usize> {
    if host.starts_with('[') || host.parse::<IpAddr>().is_ok() {
        return None;
    }
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty() || host.split('.').any(str::is_empty) {
        return None;
    }
    let lower = host.to_lowercase();
    if lower.len() != host.len() {
        return None;
    }
    let mut name = lower.as_str();
    loop {
        let info = psl::List.find(name.as_bytes().rsplit(|b| *b == b'.'));
        match info.typ {
            Some(psl::Type::Icann) if info.len > 0 => return Some(info.len),
            // A private rule: look again at the name without that suffix's first label.
            Some(psl::Type::Private) => {
                let suffix = &name[name.len() - info.len..];
                name = suffix.split_once('.')?.1;
            }
            _ => return None,
        }
    }
}

fn host(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    Ok(ScalarValue::Utf8(
        host_of(text(&a[0]).unwrap_or_default()).map(str::to_string),
    ))
}

fn public_suffix(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let out = host_of(text(&a[0]).unwrap_or_default())
        .and_then(|h| suffix_len(h).map(|n| h[h.len() - n..].to_string()));
    Ok(ScalarValue::Utf8(out))
}

fn reg_domain(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let out = host_of(text(&a[0]).unwrap_or_default()).and_then(|h| {
        let h = h.strip_suffix('.').unwrap_or(h);
        let n = suffix_len(h)?;
        let rest = h[..h.len() - n].strip_suffix('.')?;
        let label = rest.rsplit('.').next()?;
        Some(h[h.len() - n - 1 - label.len()..].to_string())
    });
    Ok(ScalarValue::Utf8(out))
}

const IP_FROM_STRING: &[&str] = &["net_ip_from_string(STRING) -> BYTES"];
const SAFE_IP_FROM_STRING: &[&str] = &["net_safe_ip_from_string(STRING) -> BYTES"];
const IP_TO_STRING: &[&str] = &["net_ip_to_string(BYTES) -> STRING"];
const IP_NET_MASK: &[&str] = &["net_ip_net_mask(INT64, INT64) -> BYTES"];
const IP_TRUNC: &[&str] = &["net_ip_trunc(BYTES, INT64) -> BYTES"];
const IPV4_FROM_INT64: &[&str] = &["net_ipv4_from_int64(INT64) -> BYTES"];
const IPV4_TO_INT64: &[&str] = &["net_ipv4_to_int64(BYTES) -> INT64"];
const HOST: &[&str] = &["net_host(STRING) -> STRING"];
const PUBLIC_SUFFIX: &[&str] = &["net_public_suffix(STRING) -> STRING"];
const REG_DOMAIN: &[&str] = &["net_reg_domain(STRING) -> STRING"];

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Net, &["NET.IP_FROM_STRING(STRING) -> BYTES"], net),
    Function::rewrite(Family::Net, &["NET.SAFE_IP_FROM_STRING(STRING) -> BYTES"], net),
    Function::rewrite(Family::Net, &["NET.IP_TO_STRING(BYTES) -> STRING"], net),
    Function::rewrite(Family::Net, &["NET.IP_NET_MASK(INT64, INT64) -> BYTES"], net),
    Function::rewrite(Family::Net, &["NET.IP_TRUNC(BYTES, INT64) -> BYTES"], net),
    Function::rewrite(Family::Net, &["NET.IPV4_FROM_INT64(INT64) -> BYTES"], net),
    Function::rewrite(Family::Net, &["NET.IPV4_TO_INT64(BYTES) -> INT64"], net),
    Function::rewrite(Family::Net, &["NET.HOST(STRING) -> STRING"], net),
    Function::rewrite(Family::Net, &["NET.PUBLIC_SUFFIX(STRING) -> STRING"], net),
    Function::rewrite(Family::Net, &["NET.REG_DOMAIN(STRING) -> STRING"], net),
    Function::udf(Family::Net, IP_FROM_STRING, || udf(IP_FROM_STRING, ip_from_string)),
    Function::udf(Family::Net, SAFE_IP_FROM_STRING, || udf(SAFE_IP_FROM_STRING, safe_ip_from_string)),
    Function::udf(Family::Net, IP_TO_STRING, || udf(IP_TO_STRING, ip_to_string)),
    Function::udf(Family::Net, IP_NET_MASK, || udf(IP_NET_MASK, ip_net_mask)),
    Function::udf(Family::Net, IP_TRUNC, || udf(IP_TRUNC, ip_trunc)),
    Function::udf(Family::Net, IPV4_FROM_INT64, || udf(IPV4_FROM_INT64, ipv4_from_int64)),
    Function::udf(Family::Net, IPV4_TO_INT64, || udf(IPV4_TO_INT64, ipv4_to_int64)),
    Function::udf(Family::Net, HOST, || udf(HOST, host)),
    Function::udf(Family::Net, PUBLIC_SUFFIX, || udf(PUBLIC_SUFFIX, public_suffix)),
    Function::udf(Family::Net, REG_DOMAIN, || udf(REG_DOMAIN, reg_domain)),
];

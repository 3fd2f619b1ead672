//! Timestamp functions: the TIMESTAMP constructor (from a string, DATE or DATETIME in a time
//! zone), the Unix epoch both ways, and the UDFs the shared rewrites of [`super::date`] call
//! for TIMESTAMP (`_TRUNC`, `_ADD`, `_SUB`, `_DIFF`, `FORMAT_`, `PARSE_`).

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::ScalarUDF;

use super::civil::ops::{self, shown};
use super::civil::{
    DATE, DATETIME, INT64, RowUdf, STRING, V, Zone, check_ts, err, is, is_ts, timestamp_type,
    typed, zone_arg,
};
use super::date::{add_or_sub, diff_in_part, trunc};
use super::{Family, Function};

/// Digits at the start of `s` (at most `max`): their value and the rest.
fn digits(s: &str, max: usize) -> Option<(u32, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// A timestamp's canonical text (`2008-12-25 15:30:00.123+05:30`, `...T...Z`, `... UTC`,
/// `... America/Los_Angeles`, a date alone): the civil value and the zone it names, if any.
pub(crate) fn parse_text(s: &str) -> Option<(NaiveDateTime, Option<Zone>)> {
    let s = s.trim();
    let (y, r) = digits(s, 4)?;
    let r = r.strip_prefix('-')?;
    let (mo, r) = digits(r, 2)?;
    let r = r.strip_prefix('-')?;
    let (d, mut r) = digits(r, 2)?;
    let date = NaiveDate::from_ymd_opt(y as i32, mo, d)?;
    let mut time = NaiveTime::MIN;
    if let Some(rest) = r
        .strip_prefix(['T', 't', ' '])
        .filter(|x| x.starts_with(|c: char| c.is_ascii_digit()))
    {
        let (h, t) = digits(rest, 2)?;
        let t = t.strip_prefix(':')?;
        let (mi, mut t) = digits(t, 2)?;
        let (mut sec, mut nanos) = (0, 0);
        if let Some(x) = t.strip_prefix(':') {
            let (sv, x) = digits(x, 2)?;
            sec = sv;
            t = x;
            if let Some(x) = t.strip_prefix('.') {
                let n = x.bytes().take_while(u8::is_ascii_digit).count();
                if n == 0 || n > 9 {
                    return None;
                }
                let mut f = x[..n].to_string();
                while f.len() < 9 {
                    f.push('0');
                }
                nanos = f.parse::<u32>().ok()? / 1000 * 1000;
                t = &x[n..];
            }
        }
        time = NaiveTime::from_hms_nano_opt(h, mi, sec, nanos)?;
        r = t;
    }
    let z = r.trim();
    let zone = if z.is_empty() {
        None
    } else {
        Some(Zone::parse(z).ok()?)
    };
    Some((date.and_time(time), zone))
}

/// `TIMESTAMP(string[, zone])`, `TIMESTAMP(date[, zone])`, `TIMESTAMP(datetime[, zone])`,
/// `TIMESTAMP(timestamp)`.
fn timestamp_ctor_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = match args {
        [x] => is(x, &STRING) || is(x, &DATE) || is(x, &DATETIME) || is_ts(x),
        [x, z] => (is(x, &STRING) || is(x, &DATE) || is(x, &DATETIME)) && is(z, &STRING),
        _ => false,
    };
    typed(ok, timestamp_type(), name, args)
}

fn timestamp_value(_: &str, args: &[V]) -> DfResult<V> {
    let zone = zone_arg(args, 1)?;
    let m = match &args[0] {
        V::Str(s) => {
            let (at, named) = parse_text(s)
                .ok_or_else(|| err(format!("TIMESTAMP: invalid timestamp string \"{s}\"")))?;
            if named.is_some() && args.len() > 1 {
                return Err(err(format!(
                    "TIMESTAMP: \"{s}\" names a time zone, and a time zone argument is given too"
                )));
            }
            named.unwrap_or(zone).instant(at)
        }
        V::Date(d) => zone.instant(d.and_time(NaiveTime::MIN)),
        V::Datetime(dt) => zone.instant(*dt),
        V::Ts(m) => *m,
        other => return Err(err(format!("TIMESTAMP: {}", other.type_name()))),
    };
    Ok(V::Ts(check_ts("TIMESTAMP", Some(m))?))
}

fn unix_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    typed(args.len() == 1 && is_ts(&args[0]), INT64, name, args)
}

fn unix_value(name: &str, args: &[V]) -> DfResult<V> {
    let V::Ts(m) = args[0] else {
        return Err(err(format!("{} takes a TIMESTAMP", shown(name))));
    };
    Ok(V::Int(match name {
        "unix_seconds" => m.div_euclid(1_000_000),
        "unix_millis" => m.div_euclid(1_000),
        _ => m,
    }))
}

fn from_unix_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    typed(
        args.len() == 1 && is(&args[0], &INT64),
        timestamp_type(),
        name,
        args,
    )
}

fn from_unix_value(name: &str, args: &[V]) -> DfResult<V> {
    let V::Int(n) = args[0] else {
        return Err(err(format!("{} takes an INT64", shown(name))));
    };
    let m = match name {
        "timestamp_seconds" => n.checked_mul(1_000_000),
        "timestamp_millis" => n.checked_mul(1_000),
        _ => Some(n),
    };
    Ok(V::Ts(check_ts(name, m)?))
}

macro_rules! udfs {
    (@make $name:literal, $typer:path, $eval:path) => {
        RowUdf::make($name, $typer, $eval)
    };
    (@make $name:literal, $typer:path, $eval:path, coerced) => {
        RowUdf::coerced($name, $typer, $eval, ops::coerce_strings)
    };
    ($($f:ident = $name:literal, $typer:path, $eval:path $(, $c:ident)?;)*) => {
        $(fn $f() -> ScalarUDF {
            udfs!(@make $name, $typer, $eval $(, $c)?)
        })*
    };
}

udfs! {
    timestamp_ctor = "timestamp", timestamp_ctor_type, timestamp_value;
    unix_seconds = "unix_seconds", unix_type, unix_value;
    unix_millis = "unix_millis", unix_type, unix_value;
    unix_micros = "unix_micros", unix_type, unix_value;
    timestamp_seconds = "timestamp_seconds", from_unix_type, from_unix_value;
    timestamp_millis = "timestamp_millis", from_unix_type, from_unix_value;
    timestamp_micros = "timestamp_micros", from_unix_type, from_unix_value;
    timestamp_trunc = "bigq_timestamp_trunc", ops::trunc_type, ops::trunc, coerced;
    timestamp_add = "bigq_timestamp_add", ops::add_type, ops::add, coerced;
    timestamp_sub = "bigq_timestamp_sub", ops::add_type, ops::add, coerced;
    timestamp_diff = "bigq_timestamp_diff", ops::diff_type, ops::diff, coerced;
    format_timestamp = "format_timestamp", ops::format_type, ops::format_value;
    parse_timestamp = "parse_timestamp", ops::parse_type, ops::parse_value;
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Timestamp, &["TIMESTAMP(STRING[, STRING]) -> TIMESTAMP", "TIMESTAMP(DATE[, STRING]) -> TIMESTAMP",
        "TIMESTAMP(DATETIME[, STRING]) -> TIMESTAMP", "TIMESTAMP(TIMESTAMP) -> TIMESTAMP"], timestamp_ctor),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_ADD(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], add_or_sub),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_SUB(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], add_or_sub),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_DIFF(TIMESTAMP, TIMESTAMP, part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_TRUNC(TIMESTAMP, part[, STRING]) -> TIMESTAMP"], trunc),
    Function::udf(Family::Timestamp, &["bigq_timestamp_add(TIMESTAMP, INT64, STRING) -> TIMESTAMP"], timestamp_add),
    Function::udf(Family::Timestamp, &["bigq_timestamp_sub(TIMESTAMP, INT64, STRING) -> TIMESTAMP"], timestamp_sub),
    Function::udf(Family::Timestamp, &["bigq_timestamp_diff(TIMESTAMP, TIMESTAMP, STRING) -> INT64"], timestamp_diff),
    Function::udf(Family::Timestamp, &["bigq_timestamp_trunc(TIMESTAMP, STRING[, STRING]) -> TIMESTAMP"], timestamp_trunc),
    Function::udf(Family::Timestamp, &["FORMAT_TIMESTAMP(STRING, TIMESTAMP[, STRING]) -> STRING"], format_timestamp),
    Function::udf(Family::Timestamp, &["PARSE_TIMESTAMP(STRING, STRING[, STRING]) -> TIMESTAMP"], parse_timestamp),
    Function::udf(Family::Timestamp, &["TIMESTAMP_MICROS(INT64) -> TIMESTAMP"], timestamp_micros),
    Function::udf(Family::Timestamp, &["TIMESTAMP_MILLIS(INT64) -> TIMESTAMP"], timestamp_millis),
    Function::udf(Family::Timestamp, &["TIMESTAMP_SECONDS(INT64) -> TIMESTAMP"], timestamp_seconds),
    Function::udf(Family::Timestamp, &["UNIX_MICROS(TIMESTAMP) -> INT64"], unix_micros),
    Function::udf(Family::Timestamp, &["UNIX_MILLIS(TIMESTAMP) -> INT64"], unix_millis),
    Function::udf(Family::Timestamp, &["UNIX_SECONDS(TIMESTAMP) -> INT64"], unix_seconds),
];

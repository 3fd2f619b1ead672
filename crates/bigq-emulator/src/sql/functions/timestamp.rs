//! Timestamp functions: the TIMESTAMP constructor (from a string, DATE or DATETIME in a time
//! zone), the Unix epoch both ways, and the UDFs the shared rewrites of [`super::date`] call
//! for TIMESTAMP (`_TRUNC`, `_ADD`, `_SUB`, `_DIFF`, `FORMAT_`, `PARSE_`).

use chrono::NaiveTime;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;

use super::civil::format::{self, Civil};
use super::civil::literal::{self, parse_text};
use super::civil::ops::row_udfs;
use super::civil::ops::{self, shown};
use super::civil::{
    DATE, DATETIME, INT64, STRING, V, check_ts, err, is, is_ts, timestamp_type, typed, zone_arg,
};
use super::date::{add_or_sub, diff_in_part, trunc};
use super::registry::{Family, Function};
use crate::sql::ast::{call, string};
use datafusion::sql::sqlparser::ast::{self, Expr, Value};

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
                .ok_or_else(|| err(format!("TIMESTAMP: Invalid timestamp string \"{s}\"")))?;
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

/// `STRING(timestamp[, zone])`: BigQuery's canonical text in the zone (UTC by default),
/// `2008-12-25 07:30:00-08`, the fraction only as long as it needs, minutes in the offset
/// only when it has them. `STRING(json)` (JSON is kept as text, and STRING has no STRING
/// signature, so a text argument is JSON): the JSON string's value.
fn string_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = match args {
        [x] => is_ts(x) || is(x, &STRING),
        [x, z] => is_ts(x) && is(z, &STRING),
        _ => false,
    };
    typed(ok, STRING, name, args)
}

fn string_value(_: &str, args: &[V]) -> DfResult<V> {
    let m = match &args[0] {
        V::Ts(m) => *m,
        V::Str(json) => {
            return match serde_json::from_str::<serde_json::Value>(json) {
                Ok(serde_json::Value::String(s)) => Ok(V::Str(s)),
                Ok(_) => Err(err("The provided JSON input is not a string")),
                Err(e) => Err(err(format!("STRING: invalid JSON: {e}"))),
            };
        }
        _ => return Err(err("STRING takes a TIMESTAMP or a JSON value")),
    };
    let zone = zone_arg(args, 1)?;
    let civil = Civil {
        at: zone.local(m)?,
        offset: zone.offset_at(m),
    };
    let mut out = format::format("%E4Y-%m-%d %H:%M:%E*S", &civil);
    let o = civil.offset;
    out.push(if o < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", o.abs() / 3600));
    if o.abs() % 3600 != 0 {
        out.push_str(&format!(":{:02}", o.abs() / 60 % 60));
    }
    Ok(V::Str(out))
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

row_udfs! {
    timestamp_ctor = "timestamp", timestamp_ctor_type, timestamp_value;
    string_udf = "string", string_type, string_value;
    date_literal = "bigq_date_literal", literal::literal_type, literal::literal;
    datetime_literal = "bigq_datetime_literal", literal::literal_type, literal::literal;
    time_literal = "bigq_time_literal", literal::literal_type, literal::literal;
    timestamp_literal = "bigq_timestamp_literal", literal::literal_type, literal::literal;
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

/// The UDF that reads a string as BigQuery reads the text of a value of `to` (DATE,
/// DATETIME, TIME or TIMESTAMP), for `CAST(s AS type)`; `None` for another type.
pub(crate) fn civil_cast_udf(
    to: &datafusion::arrow::datatypes::DataType,
) -> Option<datafusion::logical_expr::ScalarUDF> {
    use datafusion::arrow::datatypes::DataType;
    Some(match to {
        DataType::Date32 => date_literal(),
        DataType::Timestamp(_, None) => datetime_literal(),
        DataType::Timestamp(_, Some(_)) => timestamp_literal(),
        DataType::Time64(_) | DataType::Time32(_) => time_literal(),
        _ => return None,
    })
}

/// `DATE '...'` and the other temporal literals as the `bigq_*_literal` UDF of the text;
/// `None` for any other typed literal.
pub(crate) fn typed_literal(ts: &ast::TypedString) -> Option<Expr> {
    let name = match &ts.data_type {
        ast::DataType::Date => "bigq_date_literal",
        ast::DataType::Datetime(_) => "bigq_datetime_literal",
        ast::DataType::Time(_, _) => "bigq_time_literal",
        ast::DataType::Timestamp(_, _) => "bigq_timestamp_literal",
        _ => return None,
    };
    match &ts.value.value {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
            Some(call(name, vec![string(s)]))
        }
        _ => None,
    }
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Timestamp, &["TIMESTAMP(STRING[, STRING]) -> TIMESTAMP", "TIMESTAMP(DATE[, STRING]) -> TIMESTAMP",
        "TIMESTAMP(DATETIME[, STRING]) -> TIMESTAMP", "TIMESTAMP(TIMESTAMP) -> TIMESTAMP"], timestamp_ctor),
    Function::udf(Family::Timestamp, &["STRING(TIMESTAMP[, STRING]) -> STRING", "STRING(JSON) -> STRING"], string_udf),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_ADD(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], add_or_sub),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_SUB(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], add_or_sub),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_DIFF(TIMESTAMP, TIMESTAMP, part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_TRUNC(TIMESTAMP, part[, STRING]) -> TIMESTAMP"], trunc),
    Function::udf(Family::Timestamp, &["bigq_timestamp_add(TIMESTAMP, INT64, STRING) -> TIMESTAMP"], timestamp_add),
    Function::udf(Family::Timestamp, &["bigq_timestamp_sub(TIMESTAMP, INT64, STRING) -> TIMESTAMP"], timestamp_sub),
    Function::udf(Family::Timestamp, &["bigq_timestamp_diff(TIMESTAMP, TIMESTAMP, STRING) -> INT64"], timestamp_diff),
    Function::udf(Family::Timestamp, &["bigq_timestamp_trunc(TIMESTAMP, STRING[, STRING]) -> TIMESTAMP"], timestamp_trunc),
    Function::udf(Family::Timestamp, &["FORMAT_TIMESTAMP(STRING, TIMESTAMP[, STRING]) -> STRING",
        "FORMAT_TIMESTAMP(STRING, STRING[, STRING]) -> STRING"], format_timestamp),
    Function::udf(Family::Timestamp, &["PARSE_TIMESTAMP(STRING, STRING[, STRING]) -> TIMESTAMP"], parse_timestamp),
    Function::udf(Family::Timestamp, &["TIMESTAMP_MICROS(INT64) -> TIMESTAMP"], timestamp_micros),
    Function::udf(Family::Timestamp, &["TIMESTAMP_MILLIS(INT64) -> TIMESTAMP"], timestamp_millis),
    Function::udf(Family::Timestamp, &["TIMESTAMP_SECONDS(INT64) -> TIMESTAMP"], timestamp_seconds),
    Function::udf(Family::Timestamp, &["UNIX_MICROS(TIMESTAMP) -> INT64"], unix_micros),
    Function::udf(Family::Timestamp, &["UNIX_MILLIS(TIMESTAMP) -> INT64"], unix_millis),
    Function::udf(Family::Timestamp, &["UNIX_SECONDS(TIMESTAMP) -> INT64"], unix_seconds),
    Function::udf(Family::Date, &["bigq_date_literal(STRING) -> DATE"], date_literal),
    Function::udf(Family::Datetime, &["bigq_datetime_literal(STRING) -> DATETIME"], datetime_literal),
    Function::udf(Family::Time, &["bigq_time_literal(STRING) -> TIME"], time_literal),
    Function::udf(Family::Timestamp, &["bigq_timestamp_literal(STRING) -> TIMESTAMP"], timestamp_literal),
];

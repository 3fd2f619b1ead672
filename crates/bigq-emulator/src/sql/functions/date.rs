//! Date functions, and the rewrites the DATE, DATETIME, TIME and TIMESTAMP families share
//! (their registry rows point here): a date part written as a bare word (`MONTH`,
//! `WEEK(MONDAY)`) becomes a string for the UDFs of [`super::civil`], `INTERVAL n PART` the
//! count and the part, and `EXTRACT` and `CURRENT_*` calls of those UDFs.

use chrono::{Datelike, NaiveDate};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::ScalarUDF;
use datafusion::sql::sqlparser::ast::{self, Expr, Value};

use super::civil::cast_format;
use super::civil::literal::date_of_text;
use super::civil::ops::row_udfs;
use super::civil::ops::{self, shown};
use super::civil::{
    DATE, DATETIME, INT64, RowUdf, STRING, V, check_date, date_of_days, days_of_date, err, is,
    is_ts, typed, zone_arg,
};
use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, cast, function_args, function_name, string};

/// A date part given as a bare word (`MONTH`), a call (`WEEK(MONDAY)`) or a string.
pub(crate) fn part_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(id) => Some(id.value.to_ascii_uppercase()),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                Some(s.to_ascii_uppercase())
            }
            _ => None,
        },
        Expr::Function(f) => {
            let name = function_name(f)?;
            let args = function_args(f)?;
            match args.as_slice() {
                [Expr::Identifier(day)] => {
                    Some(format!("{name}({})", day.value.to_ascii_uppercase()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn part_error(name: &str, e: &Expr) -> BqError {
    BqError::invalid_query(format!("{name}: {e} is not a date part"))
}

/// The UDF a call of `name` becomes (`DATE_TRUNC` is `bigq_date_trunc`).
fn udf_name(name: &str) -> String {
    format!("bigq_{}", name.to_ascii_lowercase())
}

/// `DATE_TRUNC(x, part[, zone])` and the other `_TRUNC`.
pub(crate) fn trunc(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(mut args) = function_args(f).filter(|a| (2..=3).contains(&a.len())) else {
        return Ok(None);
    };
    let part = part_name(&args[1]).ok_or_else(|| part_error(name, &args[1]))?;
    args[1] = string(&part);
    Ok(Some(call(&udf_name(name), args)))
}

/// `DATE_ADD(x, INTERVAL n part)` and the other `_ADD` and `_SUB`.
pub(crate) fn add_or_sub(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 2) else {
        return Ok(None);
    };
    let Expr::Interval(iv) = &args[1] else {
        return Err(BqError::invalid_query(format!(
            "{name} takes INTERVAL n part as its second argument"
        )));
    };
    let Some(field) = iv
        .leading_field
        .as_ref()
        .filter(|_| iv.last_field.is_none())
    else {
        return Err(BqError::invalid_query(format!(
            "{name} takes INTERVAL n part with one date part"
        )));
    };
    let n = cast(iv.value.as_ref().clone(), ast::DataType::BigInt(None));
    let part = field.to_string().to_ascii_uppercase();
    Ok(Some(call(
        &udf_name(name),
        vec![args[0].clone(), n, string(&part)],
    )))
}

/// `DATE_DIFF(a, b, part)` and the other `_DIFF`.
pub(crate) fn diff_in_part(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(mut args) = function_args(f).filter(|a| a.len() == 3) else {
        return Ok(None);
    };
    let part = part_name(&args[2]).ok_or_else(|| part_error(name, &args[2]))?;
    args[2] = string(&part);
    Ok(Some(call(&udf_name(name), args)))
}

/// `LAST_DAY(x[, part])`, the part MONTH when left out.
pub(crate) fn last_day(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(mut args) = function_args(f).filter(|a| (1..=2).contains(&a.len())) else {
        return Ok(None);
    };
    let part = match args.get(1) {
        Some(p) => part_name(p).ok_or_else(|| part_error(name, p))?,
        None => "MONTH".into(),
    };
    args.truncate(1);
    args.push(string(&part));
    Ok(Some(call("bigq_last_day", args)))
}

/// `CURRENT_DATE([zone])`, `CURRENT_DATETIME` and `CURRENT_TIME`: the constructor of the
/// query's `now()` (one instant for the whole query, as in BigQuery).
pub(crate) fn current(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(mut args) = function_args(f).filter(|a| a.len() <= 1) else {
        return Ok(None);
    };
    let ctor = name.trim_start_matches("CURRENT_").to_ascii_lowercase();
    args.insert(0, call("now", vec![]));
    Ok(Some(call(&ctor, args)))
}

/// `EXTRACT(part FROM x [AT TIME ZONE zone])` as `bigq_extract` (or, for the DATE, TIME and
/// DATETIME parts, the constructor of that type); `None` for any other expression.
pub(crate) fn extract(e: &Expr) -> BqResult<Option<Expr>> {
    let Expr::Extract { field, expr, .. } = e else {
        return Ok(None);
    };
    let part = match field {
        ast::DateTimeField::Week(Some(day)) => format!("WEEK({})", day.value.to_ascii_uppercase()),
        ast::DateTimeField::Custom(id) => id.value.to_ascii_uppercase(),
        other => other.to_string().to_ascii_uppercase(),
    };
    let (x, zone) = match expr.as_ref() {
        Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => (timestamp.as_ref().clone(), Some(time_zone.as_ref().clone())),
        other => (other.clone(), None),
    };
    let mut args = vec![x];
    Ok(Some(match part.as_str() {
        "DATE" | "TIME" | "DATETIME" => {
            args.extend(zone);
            call(&part.to_ascii_lowercase(), args)
        }
        _ => {
            args.push(string(&part));
            args.extend(zone);
            call("bigq_extract", args)
        }
    }))
}

/// `CAST(x AS STRING FORMAT f [AT TIME ZONE z])` and `CAST(s AS DATE FORMAT f)` (DATETIME,
/// TIME, TIMESTAMP) as the `bigq_cast_` UDFs; `None` for a cast without a format.
pub(crate) fn cast_format(e: &Expr) -> BqResult<Option<Expr>> {
    let Expr::Cast {
        kind,
        expr,
        data_type,
        format: Some(format),
        ..
    } = e
    else {
        return Ok(None);
    };
    let (fmt, zone) = match format {
        ast::CastFormat::Value(v) => (Expr::value(v.clone()), string("")),
        ast::CastFormat::ValueAtTimeZone(v, z) => (Expr::value(v.clone()), Expr::value(z.clone())),
    };
    let safe = Expr::value(Value::Boolean(matches!(
        kind,
        ast::CastKind::SafeCast | ast::CastKind::TryCast
    )));
    let name = match data_type {
        ast::DataType::String(_) | ast::DataType::Varchar(_) | ast::DataType::Text => {
            "bigq_cast_format"
        }
        ast::DataType::Date => "bigq_cast_parse_date",
        ast::DataType::Datetime(_) => "bigq_cast_parse_datetime",
        ast::DataType::Time(..) => "bigq_cast_parse_time",
        ast::DataType::Timestamp(..) => "bigq_cast_parse_timestamp",
        other => return Err(BqError::unsupported(format!("CAST AS {other} with FORMAT"))),
    };
    Ok(Some(call(
        name,
        vec![expr.as_ref().clone(), fmt, zone, safe],
    )))
}

// -- constructors and the Unix epoch ---------------------------------------------------------

/// `DATE(y, m, d)`, `DATE(timestamp[, zone])`, `DATE(datetime)`, `DATE(date)`.
fn date_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = match args {
        [y, m, d] => [y, m, d].iter().all(|t| is(t, &INT64)),
        [x] => is(x, &DATE) || is(x, &DATETIME) || is_ts(x) || is(x, &STRING),
        [x, z] => is_ts(x) && is(z, &STRING),
        _ => false,
    };
    typed(ok, DATE, name, args)
}

fn date_value(_: &str, args: &[V]) -> DfResult<V> {
    Ok(V::Date(match args {
        [V::Int(y), V::Int(m), V::Int(d)] => {
            let date = i32::try_from(*y).ok().and_then(|y| {
                NaiveDate::from_ymd_opt(y, u32::try_from(*m).ok()?, u32::try_from(*d).ok()?)
            });
            match date {
                Some(d) if (1..=9999).contains(&d.year()) => d,
                _ => return Err(err(format!("DATE: invalid date {y}-{m}-{d}"))),
            }
        }
        [V::Date(d)] => *d,
        // A string literal is read as a DATE literal.
        [V::Str(s)] => date_of_text(s).ok_or_else(|| err(format!("DATE: Invalid date \"{s}\"")))?,
        [V::Datetime(dt)] => dt.date(),
        [V::Ts(m), ..] => zone_arg(args, 1)?.local(*m)?.date(),
        _ => return Err(err("DATE: unexpected arguments")),
    }))
}

fn date_udf() -> ScalarUDF {
    RowUdf::make("date", date_type, date_value)
}

fn unix_date_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    typed(args.len() == 1 && is(&args[0], &DATE), INT64, name, args)
}

fn unix_date_value(_: &str, args: &[V]) -> DfResult<V> {
    match &args[0] {
        V::Date(d) => Ok(V::Int(days_of_date(*d) as i64)),
        _ => Err(err("UNIX_DATE takes a DATE")),
    }
}

fn date_from_unix_date_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    typed(args.len() == 1 && is(&args[0], &INT64), DATE, name, args)
}

fn date_from_unix_date_value(name: &str, args: &[V]) -> DfResult<V> {
    let V::Int(n) = args[0] else {
        return Err(err("DATE_FROM_UNIX_DATE takes an INT64"));
    };
    let d = i32::try_from(n).ok().and_then(|n| date_of_days(n).ok());
    Ok(V::Date(check_date(&shown(name), d)?))
}

row_udfs! {
    unix_date = "unix_date", unix_date_type, unix_date_value;
    date_from_unix_date = "date_from_unix_date", date_from_unix_date_type, date_from_unix_date_value;
    date_trunc = "bigq_date_trunc", ops::trunc_type, ops::trunc, coerced;
    date_add = "bigq_date_add", ops::add_type, ops::add, coerced;
    date_sub = "bigq_date_sub", ops::add_type, ops::add, coerced;
    date_diff = "bigq_date_diff", ops::diff_type, ops::diff, coerced;
    extract_udf = "bigq_extract", ops::extract_type, ops::extract;
    last_day_udf = "bigq_last_day", ops::last_day_type, ops::last_day;
    format_date = "format_date", ops::format_type, ops::format_value;
    cast_format_udf = "bigq_cast_format", cast_format::to_string_type, cast_format::to_string;
    cast_parse_date = "bigq_cast_parse_date", cast_format::parse_type, cast_format::parse;
    cast_parse_datetime = "bigq_cast_parse_datetime", cast_format::parse_type, cast_format::parse;
    cast_parse_time = "bigq_cast_parse_time", cast_format::parse_type, cast_format::parse;
    cast_parse_timestamp = "bigq_cast_parse_timestamp", cast_format::parse_type, cast_format::parse;
    parse_date = "parse_date", ops::parse_type, ops::parse_value;
}

/// The days of 0001-01-01 and 9999-12-31 since the epoch: the range of BigQuery's DATE.
const DATE_DAYS: std::ops::RangeInclusive<i32> = -719_162..=2_932_896;

/// `bigq_date_in_range(d)`: `d`, or BigQuery's error when a DATE's arithmetic left its
/// range (`DATE '0001-01-01' - 1`; Arrow's date arithmetic goes on to year 0 and 10000).
pub(crate) fn bigq_date_in_range() -> ScalarUDF {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Date32Type;
    use datafusion::logical_expr::{ColumnarValue, Volatility, create_udf};
    let fun = |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (arrays, _) = super::udf::arrays(args)?;
        let days = arrays[0].as_primitive::<Date32Type>();
        if let Some(d) = days.iter().flatten().find(|d| !DATE_DAYS.contains(d)) {
            return Err(datafusion::common::DataFusionError::Execution(format!(
                "DATE value out of range: {d} days from 1970-01-01 is outside 0001-01-01 to 9999-12-31"
            )));
        }
        Ok(args[0].clone())
    };
    create_udf(
        "bigq_date_in_range",
        vec![DataType::Date32],
        DataType::Date32,
        Volatility::Immutable,
        std::sync::Arc::new(fun),
    )
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Date, &["bigq_date_in_range(DATE) -> DATE"], bigq_date_in_range),
    Function::rewrite(Family::Date, &["CURRENT_DATE([STRING]) -> DATE"], current),
    Function::udf(Family::Date, &["DATE(INT64, INT64, INT64) -> DATE", "DATE(TIMESTAMP[, STRING]) -> DATE",
        "DATE(DATETIME) -> DATE", "DATE(DATE) -> DATE", "DATE(STRING) -> DATE"], date_udf),
    Function::rewrite(Family::Date, &["DATE_ADD(DATE, INTERVAL INT64 date_part) -> DATE"], add_or_sub),
    Function::rewrite(Family::Date, &["DATE_SUB(DATE, INTERVAL INT64 date_part) -> DATE"], add_or_sub),
    Function::rewrite(Family::Date, &["DATE_DIFF(DATE, DATE, date_part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Date, &["DATE_TRUNC(DATE, date_part) -> DATE", "DATE_TRUNC(DATETIME, part) -> DATETIME",
        "DATE_TRUNC(TIMESTAMP, part[, STRING]) -> TIMESTAMP"], trunc),
    Function::udf(Family::Date, &["bigq_date_add(DATE, INT64, STRING) -> DATE"], date_add),
    Function::udf(Family::Date, &["bigq_date_sub(DATE, INT64, STRING) -> DATE"], date_sub),
    Function::udf(Family::Date, &["bigq_date_diff(DATE, DATE, STRING) -> INT64"], date_diff),
    Function::udf(Family::Date, &["bigq_date_trunc(DATE, STRING) -> DATE", "bigq_date_trunc(DATETIME, STRING) -> DATETIME",
        "bigq_date_trunc(TIMESTAMP, STRING[, STRING]) -> TIMESTAMP"], date_trunc),
    Function::udf(Family::Date, &["bigq_extract(DATE, STRING) -> INT64", "bigq_extract(DATETIME, STRING) -> INT64",
        "bigq_extract(TIMESTAMP, STRING[, STRING]) -> INT64", "bigq_extract(INTERVAL, STRING) -> INT64"], extract_udf),
    Function::rewrite(Family::Date, &["LAST_DAY(DATE[, date_part]) -> DATE", "LAST_DAY(DATETIME[, date_part]) -> DATE"],
        last_day),
    Function::udf(Family::Date, &["bigq_last_day(DATE, STRING) -> DATE", "bigq_last_day(DATETIME, STRING) -> DATE"],
        last_day_udf),
    Function::udf(Family::Date, &["DATE_FROM_UNIX_DATE(INT64) -> DATE"], date_from_unix_date),
    Function::udf(Family::Date, &["FORMAT_DATE(STRING, DATE) -> STRING", "FORMAT_DATE(STRING, DATETIME) -> STRING"],
        format_date),
    Function::udf(Family::Date, &["PARSE_DATE(STRING, STRING) -> DATE"], parse_date),
    Function::udf(Family::Date, &["UNIX_DATE(DATE) -> INT64"], unix_date),
    Function::udf(Family::Date, &["bigq_cast_format(DATE, STRING, STRING, BOOL) -> STRING",
        "bigq_cast_format(DATETIME, STRING, STRING, BOOL) -> STRING", "bigq_cast_format(TIME, STRING, STRING, BOOL) -> STRING",
        "bigq_cast_format(TIMESTAMP, STRING, STRING, BOOL) -> STRING"],
        cast_format_udf),
    Function::udf(Family::Date, &["bigq_cast_parse_date(STRING, STRING, STRING, BOOL) -> DATE"], cast_parse_date),
    Function::udf(Family::Datetime, &["bigq_cast_parse_datetime(STRING, STRING, STRING, BOOL) -> DATETIME"], cast_parse_datetime),
    Function::udf(Family::Time, &["bigq_cast_parse_time(STRING, STRING, STRING, BOOL) -> TIME"], cast_parse_time),
    Function::udf(Family::Timestamp, &["bigq_cast_parse_timestamp(STRING, STRING, STRING, BOOL) -> TIMESTAMP"], cast_parse_timestamp),
];

//! Date functions, and the rewrites the DATE, DATETIME, TIME and TIMESTAMP families share
//! (their registry rows point here): `_TRUNC`, `_ADD` and `_SUB` of an interval, `_DIFF` in
//! a date part, `FORMAT_` and `PARSE_`, all onto DataFusion's date and time functions.

use datafusion::sql::sqlparser::ast::{self, BinaryOperator, Expr, Value};

use super::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{binary, call, cast, function_args, number, string};

/// A date part given as a bare word (`MONTH`) or a string.
fn part_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(id) => Some(id.value.to_ascii_lowercase()),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                Some(s.to_ascii_lowercase())
            }
            _ => None,
        },
        _ => None,
    }
}

/// GoogleSQL `INTERVAL n PART` as an interval DataFusion reads.
fn interval(e: &Expr) -> Option<Expr> {
    let Expr::Interval(iv) = e else {
        return None;
    };
    let field = iv.leading_field.as_ref()?.to_string().to_ascii_lowercase();
    let unit = Expr::Interval(ast::Interval {
        value: Box::new(string(&format!("1 {field}"))),
        leading_field: None,
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    });
    Some(match iv.value.as_ref() {
        Expr::Value(v) if matches!(v.value, Value::Number(..)) => Expr::Interval(ast::Interval {
            value: Box::new(string(&format!("{} {field}", v.value))),
            leading_field: None,
            leading_precision: None,
            last_field: None,
            fractional_seconds_precision: None,
        }),
        other => binary(other.clone(), BinaryOperator::Multiply, unit),
    })
}

/// Seconds in a fixed-length part, for TIMESTAMP_DIFF and DATE_DIFF.
fn part_seconds(part: &str) -> Option<i64> {
    Some(match part {
        "microsecond" => return None,
        "millisecond" => return None,
        "second" => 1,
        "minute" => 60,
        "hour" => 3600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        _ => return None,
    })
}

/// `a - b` counted in `part`, truncated toward zero as BigQuery's *_DIFF do.
fn diff(a: Expr, b: Expr, part: &str) -> Option<Expr> {
    let epoch = |e: Expr| call("date_part", vec![string("epoch"), e]);
    let months = |e: Expr| {
        binary(
            binary(
                call("date_part", vec![string("year"), e.clone()]),
                BinaryOperator::Multiply,
                number(12),
            ),
            BinaryOperator::Plus,
            call("date_part", vec![string("month"), e]),
        )
    };
    let raw = match part {
        "month" => binary(months(a), BinaryOperator::Minus, months(b)),
        "year" => binary(
            call("date_part", vec![string("year"), a]),
            BinaryOperator::Minus,
            call("date_part", vec![string("year"), b]),
        ),
        "millisecond" | "microsecond" => {
            let scale = if part == "millisecond" {
                1_000
            } else {
                1_000_000
            };
            binary(
                binary(epoch(a), BinaryOperator::Minus, epoch(b)),
                BinaryOperator::Multiply,
                number(scale),
            )
        }
        p => {
            let secs = part_seconds(p)?;
            binary(
                binary(epoch(a), BinaryOperator::Minus, epoch(b)),
                BinaryOperator::Divide,
                number(secs),
            )
        }
    };
    Some(cast(call("trunc", vec![raw]), ast::DataType::BigInt(None)))
}

/// `DATE_TRUNC(x, part)`, `DATETIME_TRUNC` and `TIMESTAMP_TRUNC`: DataFusion's `date_trunc`
/// (cast back to DATE for a DATE).
pub(crate) fn trunc(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() >= 2) else {
        return Ok(None);
    };
    let Some(part) = part_name(&args[1]) else {
        return Ok(None);
    };
    let t = call("date_trunc", vec![string(&part), args[0].clone()]);
    Ok(Some(if name == "DATE_TRUNC" {
        cast(t, ast::DataType::Date)
    } else {
        t
    }))
}

/// `DATE_ADD(x, INTERVAL n part)` and the other `_ADD` and `_SUB`: `x ± interval`.
pub(crate) fn add_or_sub(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 2) else {
        return Ok(None);
    };
    let Some(iv) = interval(&args[1]) else {
        return Ok(None);
    };
    let op = if name.ends_with("_ADD") {
        BinaryOperator::Plus
    } else {
        BinaryOperator::Minus
    };
    Ok(Some(binary(args[0].clone(), op, iv)))
}

/// `DATE_DIFF(a, b, part)` and the other `_DIFF`: whole parts from `b` to `a`.
pub(crate) fn diff_in_part(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 3) else {
        return Ok(None);
    };
    let Some(part) = part_name(&args[2]) else {
        return Ok(None);
    };
    match diff(args[0].clone(), args[1].clone(), &part) {
        Some(d) => Ok(Some(d)),
        None => Err(BqError::unsupported(format!("{name} with part {part}"))),
    }
}

/// `FORMAT_DATE(format, x)` and the other `FORMAT_`: DataFusion's `to_char(x, format)`.
pub(crate) fn format(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f)
        .filter(|a| a.len() == 2)
        .map(|args| call("to_char", vec![args[1].clone(), args[0].clone()])))
}

/// `PARSE_DATE(format, text)`, `PARSE_DATETIME` and `PARSE_TIMESTAMP`: DataFusion's
/// `to_date` or `to_timestamp` (in UTC for a TIMESTAMP).
pub(crate) fn parse(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 2) else {
        return Ok(None);
    };
    let fname = if name == "PARSE_DATE" {
        "to_date"
    } else {
        "to_timestamp"
    };
    let mut v = call(fname, vec![args[1].clone(), args[0].clone()]);
    if name == "PARSE_TIMESTAMP" {
        v = cast(v, ast::DataType::Timestamp(None, ast::TimezoneInfo::Tz));
    }
    Ok(Some(v))
}

/// `DATE(timestamp_or_datetime)` as a cast, `DATE(year, month, day)` as `make_date`.
pub(crate) fn date(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(match function_args(f) {
        Some(args) if args.len() == 1 => Some(cast(
            args.into_iter().next().unwrap_or(Expr::value(Value::Null)),
            ast::DataType::Date,
        )),
        Some(args) if args.len() == 3 => Some(call("make_date", args)),
        _ => None,
    })
}

/// `UNIX_DATE(date)`: days since 1970-01-01.
pub(crate) fn unix_date(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).filter(|a| a.len() == 1).map(|args| {
        let v = call("date_part", vec![string("epoch"), args[0].clone()]);
        let v = binary(v, BinaryOperator::Divide, number(86_400));
        cast(call("floor", vec![v]), ast::DataType::BigInt(None))
    }))
}

/// `DATE_FROM_UNIX_DATE(days)`.
pub(crate) fn date_from_unix_date(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).filter(|a| a.len() == 1).map(|args| {
        let secs = binary(args[0].clone(), BinaryOperator::Multiply, number(86_400));
        cast(
            call("to_timestamp_seconds", vec![secs]),
            ast::DataType::Date,
        )
    }))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Date, &["DATE(TIMESTAMP) -> DATE", "DATE(DATETIME) -> DATE", "DATE(INT64, INT64, INT64) -> DATE"],
        date),
    Function::rewrite(Family::Date, &["DATE_ADD(DATE, INTERVAL INT64 date_part) -> DATE"], add_or_sub),
    Function::rewrite(Family::Date, &["DATE_SUB(DATE, INTERVAL INT64 date_part) -> DATE"], add_or_sub),
    Function::rewrite(Family::Date, &["DATE_DIFF(DATE, DATE, date_part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Date, &["DATE_TRUNC(DATE, date_part) -> DATE"], trunc),
    Function::rewrite(Family::Date, &["DATE_FROM_UNIX_DATE(INT64) -> DATE"], date_from_unix_date),
    Function::rewrite(Family::Date, &["FORMAT_DATE(STRING, DATE) -> STRING"], format),
    Function::rewrite(Family::Date, &["PARSE_DATE(STRING, STRING) -> DATE"], parse),
    Function::rewrite(Family::Date, &["UNIX_DATE(DATE) -> INT64"], unix_date),
    Function::rewrite(Family::Datetime, &["DATETIME_ADD(DATETIME, INTERVAL INT64 part) -> DATETIME"], add_or_sub),
    Function::rewrite(Family::Datetime, &["DATETIME_SUB(DATETIME, INTERVAL INT64 part) -> DATETIME"], add_or_sub),
    Function::rewrite(Family::Datetime, &["DATETIME_DIFF(DATETIME, DATETIME, part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Datetime, &["DATETIME_TRUNC(DATETIME, part) -> DATETIME"], trunc),
    Function::rewrite(Family::Datetime, &["FORMAT_DATETIME(STRING, DATETIME) -> STRING"], format),
    Function::rewrite(Family::Datetime, &["PARSE_DATETIME(STRING, STRING) -> DATETIME"], parse),
    Function::rewrite(Family::Time, &["TIME_ADD(TIME, INTERVAL INT64 part) -> TIME"], add_or_sub),
    Function::rewrite(Family::Time, &["TIME_SUB(TIME, INTERVAL INT64 part) -> TIME"], add_or_sub),
    Function::rewrite(Family::Time, &["TIME_DIFF(TIME, TIME, part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Time, &["FORMAT_TIME(STRING, TIME) -> STRING"], format),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_ADD(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], add_or_sub),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_SUB(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], add_or_sub),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_DIFF(TIMESTAMP, TIMESTAMP, part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_TRUNC(TIMESTAMP, part) -> TIMESTAMP"], trunc),
    Function::rewrite(Family::Timestamp, &["FORMAT_TIMESTAMP(STRING, TIMESTAMP) -> STRING"], format),
    Function::rewrite(Family::Timestamp, &["PARSE_TIMESTAMP(STRING, STRING) -> TIMESTAMP"], parse),
];

//! Timestamp functions of their own (`_TRUNC`, `_ADD`, `_SUB`, `_DIFF`, `FORMAT_` and
//! `PARSE_` are the date family's, shared): the Unix epoch both ways.

use datafusion::sql::sqlparser::ast::{self, BinaryOperator, Expr};

use super::{Family, Function};
use crate::error::BqResult;
use crate::sql::ast::{binary, call, cast, function_args, number, string};

/// `UNIX_SECONDS(timestamp)`, `UNIX_MILLIS` and `UNIX_MICROS`: whole units since the epoch.
pub(crate) fn unix_units(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).filter(|a| a.len() == 1).map(|args| {
        let scale = match name {
            "UNIX_MILLIS" => 1_000,
            "UNIX_MICROS" => 1_000_000,
            _ => 1,
        };
        let mut v = call("date_part", vec![string("epoch"), args[0].clone()]);
        if scale != 1 {
            v = binary(v, BinaryOperator::Multiply, number(scale));
        }
        cast(call("floor", vec![v]), ast::DataType::BigInt(None))
    }))
}

/// `TIMESTAMP_SECONDS(n)`, `TIMESTAMP_MILLIS` and `TIMESTAMP_MICROS`.
pub(crate) fn from_unix_units(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).filter(|a| a.len() == 1).map(|args| {
        let fname = match name {
            "TIMESTAMP_SECONDS" => "to_timestamp_seconds",
            "TIMESTAMP_MILLIS" => "to_timestamp_millis",
            _ => "to_timestamp_micros",
        };
        cast(
            call(fname, args),
            ast::DataType::Timestamp(None, ast::TimezoneInfo::Tz),
        )
    }))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_MICROS(INT64) -> TIMESTAMP"], from_unix_units),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_MILLIS(INT64) -> TIMESTAMP"], from_unix_units),
    Function::rewrite(Family::Timestamp, &["TIMESTAMP_SECONDS(INT64) -> TIMESTAMP"], from_unix_units),
    Function::rewrite(Family::Timestamp, &["UNIX_MICROS(TIMESTAMP) -> INT64"], unix_units),
    Function::rewrite(Family::Timestamp, &["UNIX_MILLIS(TIMESTAMP) -> INT64"], unix_units),
    Function::rewrite(Family::Timestamp, &["UNIX_SECONDS(TIMESTAMP) -> INT64"], unix_units),
];

//! Time functions: the TIME constructor and the UDFs the shared rewrites of [`super::date`]
//! call for TIME (`_TRUNC`, `_ADD`, `_SUB`, `_DIFF`, `FORMAT_`, `PARSE_`).

use chrono::NaiveTime;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::ScalarUDF;

use super::civil::ops;
use super::civil::ops::row_udfs;
use super::civil::{DATETIME, INT64, RowUdf, STRING, TIME, V, err, is, is_ts, typed, zone_arg};
use super::date::{add_or_sub, current, diff_in_part, trunc};
use super::registry::{Family, Function};

/// `TIME(h, m, s)`, `TIME(timestamp[, zone])`, `TIME(datetime)`, `TIME(time)`.
fn time_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = match args {
        [h, m, s] => [h, m, s].iter().all(|t| is(t, &INT64)),
        [x] => is(x, &TIME) || is(x, &DATETIME) || is_ts(x),
        [x, z] => is_ts(x) && is(z, &STRING),
        _ => false,
    };
    typed(ok, TIME, name, args)
}

fn time_value(_: &str, args: &[V]) -> DfResult<V> {
    Ok(V::Time(match args {
        [V::Int(h), V::Int(m), V::Int(s)] => {
            let u = |n: &i64| u32::try_from(*n).ok();
            u(h).zip(u(m))
                .zip(u(s))
                .and_then(|((h, m), s)| NaiveTime::from_hms_opt(h, m, s))
                .ok_or_else(|| err(format!("TIME: invalid time {h}:{m}:{s}")))?
        }
        [V::Time(t)] => *t,
        [V::Datetime(dt)] => dt.time(),
        [V::Ts(m), ..] => zone_arg(args, 1)?.local(*m)?.time(),
        _ => return Err(err("TIME: unexpected arguments")),
    }))
}

fn time_udf() -> ScalarUDF {
    RowUdf::make("time", time_type, time_value)
}

row_udfs! {
    time_trunc = "bigq_time_trunc", ops::trunc_type, ops::trunc, coerced;
    time_add = "bigq_time_add", ops::add_type, ops::add, coerced;
    time_sub = "bigq_time_sub", ops::add_type, ops::add, coerced;
    time_diff = "bigq_time_diff", ops::diff_type, ops::diff, coerced;
    format_time = "format_time", ops::format_type, ops::format_value;
    parse_time = "parse_time", ops::parse_type, ops::parse_value;
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Time, &["CURRENT_TIME([STRING]) -> TIME"], current),
    Function::udf(Family::Time, &["TIME(INT64, INT64, INT64) -> TIME", "TIME(TIMESTAMP[, STRING]) -> TIME",
        "TIME(DATETIME) -> TIME", "TIME(TIME) -> TIME"], time_udf),
    Function::rewrite(Family::Time, &["TIME_ADD(TIME, INTERVAL INT64 part) -> TIME"], add_or_sub),
    Function::rewrite(Family::Time, &["TIME_SUB(TIME, INTERVAL INT64 part) -> TIME"], add_or_sub),
    Function::rewrite(Family::Time, &["TIME_DIFF(TIME, TIME, part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Time, &["TIME_TRUNC(TIME, part) -> TIME"], trunc),
    Function::udf(Family::Time, &["bigq_time_add(TIME, INT64, STRING) -> TIME"], time_add),
    Function::udf(Family::Time, &["bigq_time_sub(TIME, INT64, STRING) -> TIME"], time_sub),
    Function::udf(Family::Time, &["bigq_time_diff(TIME, TIME, STRING) -> INT64"], time_diff),
    Function::udf(Family::Time, &["bigq_time_trunc(TIME, STRING) -> TIME"], time_trunc),
    Function::udf(Family::Time, &["FORMAT_TIME(STRING, TIME) -> STRING"], format_time),
    Function::udf(Family::Time, &["PARSE_TIME(STRING, STRING) -> TIME"], parse_time),
];

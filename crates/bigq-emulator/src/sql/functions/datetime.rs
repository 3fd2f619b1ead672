//! Datetime functions: the DATETIME constructor and the UDFs the shared rewrites of
//! [`super::date`] call for DATETIME (`_TRUNC`, `_ADD`, `_SUB`, `_DIFF`, `FORMAT_`, `PARSE_`).

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::ScalarUDF;

use super::civil::ops;
use super::civil::ops::row_udfs;
use super::civil::{
    DATE, DATETIME, INT64, RowUdf, STRING, TIME, V, err, is, is_ts, typed, zone_arg,
};
use super::date::{add_or_sub, current, diff_in_part, trunc};
use super::registry::{Family, Function};

/// `DATETIME(y, mo, d, h, mi, s)`, `DATETIME(date[, time])`, `DATETIME(timestamp[, zone])`,
/// `DATETIME(datetime)`.
fn datetime_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = match args {
        [_, _, _, _, _, _] => args.iter().all(|t| is(t, &INT64)),
        [x] => is(x, &DATE) || is(x, &DATETIME) || is_ts(x),
        [x, y] => (is(x, &DATE) && is(y, &TIME)) || (is_ts(x) && is(y, &STRING)),
        _ => false,
    };
    typed(ok, DATETIME, name, args)
}

fn datetime_value(_: &str, args: &[V]) -> DfResult<V> {
    Ok(V::Datetime(match args {
        [
            V::Int(y),
            V::Int(mo),
            V::Int(d),
            V::Int(h),
            V::Int(mi),
            V::Int(s),
        ] => {
            let u = |n: &i64| u32::try_from(*n).ok();
            let date = i32::try_from(*y)
                .ok()
                .filter(|y| (1..=9999).contains(y))
                .and_then(|y| NaiveDate::from_ymd_opt(y, u(mo)?, u(d)?));
            let time = u(h)
                .zip(u(mi))
                .zip(u(s))
                .and_then(|((h, mi), s)| NaiveTime::from_hms_opt(h, mi, s));
            match (date, time) {
                (Some(d), Some(t)) => NaiveDateTime::new(d, t),
                _ => {
                    return Err(err(format!(
                        "DATETIME: invalid datetime {y}-{mo}-{d} {h}:{mi}:{s}"
                    )));
                }
            }
        }
        [V::Date(d)] => d.and_time(NaiveTime::MIN),
        [V::Date(d), V::Time(t)] => d.and_time(*t),
        [V::Datetime(dt)] => *dt,
        [V::Ts(m), ..] => zone_arg(args, 1)?.local(*m)?,
        _ => return Err(err("DATETIME: unexpected arguments")),
    }))
}

fn datetime_udf() -> ScalarUDF {
    RowUdf::make("datetime", datetime_type, datetime_value)
}

row_udfs! {
    datetime_trunc = "bigq_datetime_trunc", ops::trunc_type, ops::trunc, coerced;
    datetime_add = "bigq_datetime_add", ops::add_type, ops::add, coerced;
    datetime_sub = "bigq_datetime_sub", ops::add_type, ops::add, coerced;
    datetime_diff = "bigq_datetime_diff", ops::diff_type, ops::diff, coerced;
    format_datetime = "format_datetime", ops::format_type, ops::format_value;
    parse_datetime = "parse_datetime", ops::parse_type, ops::parse_value;
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Datetime, &["CURRENT_DATETIME([STRING]) -> DATETIME"], current),
    Function::udf(Family::Datetime, &["DATETIME(INT64, INT64, INT64, INT64, INT64, INT64) -> DATETIME",
        "DATETIME(DATE) -> DATETIME", "DATETIME(DATE, TIME) -> DATETIME", "DATETIME(TIMESTAMP[, STRING]) -> DATETIME",
        "DATETIME(DATETIME) -> DATETIME"], datetime_udf),
    Function::rewrite(Family::Datetime, &["DATETIME_ADD(DATETIME, INTERVAL INT64 part) -> DATETIME"], add_or_sub),
    Function::rewrite(Family::Datetime, &["DATETIME_SUB(DATETIME, INTERVAL INT64 part) -> DATETIME"], add_or_sub),
    Function::rewrite(Family::Datetime, &["DATETIME_DIFF(DATETIME, DATETIME, part) -> INT64"], diff_in_part),
    Function::rewrite(Family::Datetime, &["DATETIME_TRUNC(DATETIME, part) -> DATETIME"], trunc),
    Function::udf(Family::Datetime, &["bigq_datetime_add(DATETIME, INT64, STRING) -> DATETIME"], datetime_add),
    Function::udf(Family::Datetime, &["bigq_datetime_sub(DATETIME, INT64, STRING) -> DATETIME"], datetime_sub),
    Function::udf(Family::Datetime, &["bigq_datetime_diff(DATETIME, DATETIME, STRING) -> INT64"], datetime_diff),
    Function::udf(Family::Datetime, &["bigq_datetime_trunc(DATETIME, STRING) -> DATETIME"], datetime_trunc),
    Function::udf(Family::Datetime, &["FORMAT_DATETIME(STRING, DATETIME) -> STRING", "FORMAT_DATETIME(STRING, DATE) -> STRING"],
        format_datetime),
    Function::udf(Family::Datetime, &["PARSE_DATETIME(STRING, STRING) -> DATETIME"], parse_datetime),
];

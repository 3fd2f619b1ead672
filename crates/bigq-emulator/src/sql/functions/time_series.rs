//! BigQuery's time series functions: `DATE_BUCKET`, `DATETIME_BUCKET` and
//! `TIMESTAMP_BUCKET`, the lower bound of the bucket of `bucket_width` that holds a value,
//! buckets laid out both ways from an origin (1950-01-01 00:00:00 when left out; UTC for a
//! TIMESTAMP).
//!
//! The width is an INTERVAL of one date or time part: DATE_BUCKET takes date parts (DAY,
//! WEEK, MONTH, QUARTER, YEAR), DATETIME_BUCKET any part, TIMESTAMP_BUCKET any but the
//! month-based ones (a TIMESTAMP has no calendar without a time zone). A width of months
//! counts calendar months from the origin, each bound the origin's day of the month (or the
//! month's last day, as date arithmetic does).

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use datafusion::arrow::datatypes::{DataType, IntervalMonthDayNano, IntervalUnit};
use datafusion::common::Result as DfResult;

use super::civil::{
    DATE, DATETIME, RowUdf, STRING, V, add_months, check_date, check_datetime, check_ts, err, is,
    is_ts, micros_of, timestamp_type, typed,
};
use super::registry::{Family, Function};

const MICROS_PER_DAY: i64 = 86_400_000_000;

fn date_bucket() -> datafusion::logical_expr::ScalarUDF {
    RowUdf::coerced("date_bucket", bucket_type, bucket, coerce_strings)
}

fn datetime_bucket() -> datafusion::logical_expr::ScalarUDF {
    RowUdf::coerced("datetime_bucket", bucket_type, bucket, coerce_strings)
}

fn timestamp_bucket() -> datafusion::logical_expr::ScalarUDF {
    RowUdf::coerced("timestamp_bucket", bucket_type, bucket, coerce_strings)
}

#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::TimeSeries, &["DATE_BUCKET(DATE, INTERVAL[, DATE]) -> DATE"], date_bucket),
    Function::udf(Family::TimeSeries,
        &["DATETIME_BUCKET(DATETIME, INTERVAL[, DATETIME]) -> DATETIME"], datetime_bucket),
    Function::udf(Family::TimeSeries,
        &["TIMESTAMP_BUCKET(TIMESTAMP, INTERVAL[, TIMESTAMP]) -> TIMESTAMP"], timestamp_bucket),
];

/// The type a function's values are.
fn value_type(name: &str) -> DataType {
    match name {
        "date_bucket" => DATE,
        "datetime_bucket" => DATETIME,
        _ => timestamp_type(),
    }
}

/// String literals in a value's place read as the function's type (`'2020-01-01'`).
fn coerce_strings(name: &str, args: &[DataType]) -> Vec<DataType> {
    args.iter()
        .enumerate()
        .map(|(i, t)| {
            if i != 1 && *t == STRING {
                value_type(name)
            } else {
                t.clone()
            }
        })
        .collect()
}

fn bucket_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let t = value_type(name);
    let value = |a: &DataType| {
        if t == timestamp_type() {
            is_ts(a)
        } else {
            is(a, &t)
        }
    };
    let interval = DataType::Interval(IntervalUnit::MonthDayNano);
    let ok = (args.len() == 2 || args.len() == 3)
        && value(&args[0])
        && is(&args[1], &interval)
        && args.get(2).is_none_or(value);
    typed(ok, t, name, args)
}

/// The width as one part: months, or microseconds (days as 24 hours).
enum Width {
    Months(i64),
    Micros(i64),
}

fn width(name: &str, iv: &IntervalMonthDayNano) -> DfResult<Width> {
    let upper = name.to_ascii_uppercase();
    let parts = [iv.months != 0, iv.days != 0, iv.nanoseconds != 0];
    if parts.iter().filter(|p| **p).count() > 1 {
        return Err(err(format!(
            "{upper} doesn't support bucket width INTERVAL with more than one datetime part"
        )));
    }
    if iv.months < 0 || iv.days < 0 || iv.nanoseconds < 0 || parts.iter().all(|p| !p) {
        return Err(err(format!("{upper}: bucket width must be positive")));
    }
    if iv.months != 0 {
        if name == "timestamp_bucket" {
            return Err(err(format!(
                "{upper} doesn't support bucket width INTERVAL with a non-zero MONTH part"
            )));
        }
        return Ok(Width::Months(i64::from(iv.months)));
    }
    if iv.nanoseconds != 0 {
        if name == "date_bucket" {
            return Err(err(format!(
                "{upper} only supports bucket width INTERVAL with date parts; a time part is not"
            )));
        }
        return Ok(Width::Micros(iv.nanoseconds / 1000));
    }
    Ok(Width::Micros(i64::from(iv.days) * MICROS_PER_DAY))
}

fn epoch_1950() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(1950, 1, 1)
        .unwrap_or_default()
        .and_time(NaiveTime::MIN)
}

/// The value and the origin as datetimes (a TIMESTAMP's in UTC).
fn datetime(v: &V) -> DfResult<NaiveDateTime> {
    match v {
        V::Date(d) => Ok(d.and_time(NaiveTime::MIN)),
        V::Datetime(d) => Ok(*d),
        V::Ts(m) => super::civil::datetime_of_micros(*m),
        other => Err(err(format!("unexpected {}", other.type_name()))),
    }
}

fn bucket(name: &str, args: &[V]) -> DfResult<V> {
    let V::Iv(iv) = &args[1] else {
        return Err(err(format!("{name}: the bucket width is an INTERVAL")));
    };
    let w = width(name, iv)?;
    let x = datetime(&args[0])?;
    let origin = match args.get(2) {
        Some(o) => datetime(o)?,
        None => epoch_1950(),
    };
    let lower = match w {
        Width::Months(n) => {
            let months = |d: NaiveDateTime| {
                use chrono::Datelike;
                i64::from(d.year()) * 12 + i64::from(d.month0())
            };
            let at = |k: i64| -> Option<NaiveDateTime> {
                add_months(origin.date(), k).map(|d| d.and_time(origin.time()))
            };
            // Whole months from the origin to x, one less when x falls before that month's
            // bound.
            let mut m = months(x) - months(origin);
            if at(m).is_some_and(|b| b > x) {
                m -= 1;
            }
            at(m.div_euclid(n) * n)
        }
        Width::Micros(w) => {
            let from = micros_of(x).checked_sub(micros_of(origin));
            from.and_then(|d| {
                let start = d.div_euclid(w).checked_mul(w)?;
                super::civil::datetime_of_micros(micros_of(origin).checked_add(start)?).ok()
            })
        }
    };
    let shown = name.to_ascii_uppercase();
    Ok(match &args[0] {
        V::Date(_) => V::Date(check_date(&shown, lower.map(|d| d.date()))?),
        V::Datetime(_) => V::Datetime(check_datetime(&shown, lower)?),
        _ => V::Ts(check_ts(&shown, lower.map(micros_of))?),
    })
}

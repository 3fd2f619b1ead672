//! BigQuery's INTERVAL functions DataFusion has no counterpart for, as scalar UDFs on
//! Arrow's month-day-nanosecond intervals: `JUSTIFY_DAYS`, `JUSTIFY_HOURS`,
//! `JUSTIFY_INTERVAL` and `MAKE_INTERVAL` (six positional parts); and `x + INTERVAL ...` /
//! `x - INTERVAL ...` (`bigq_add_interval`, `bigq_sub_interval`, what the rewrite makes of
//! them), because BigQuery types `DATE + INTERVAL` as DATETIME where DataFusion keeps DATE;
//! and `a - b` of two DATEs, DATETIMEs or TIMESTAMPs (`bigq_datetime_minus`), an INTERVAL in
//! BigQuery, where DataFusion gives an integer or a duration.

use std::sync::Arc;

use std::str::FromStr;

use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, IntervalMonthDayNanoBuilder, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Int64Type, IntervalMonthDayNano, IntervalMonthDayNanoType, IntervalUnit,
    TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility, create_udf,
};

use datafusion::sql::sqlparser::ast::{self, Expr};

use super::civil::{max_micros, min_micros};
use super::registry::{Family, Function};
use super::udf::{arrays, result};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, cast, number};

const NANOS_PER_DAY: i64 = 86_400 * 1_000_000_000;

/// Whole 30-day periods of the days moved into the months (`JUSTIFY_DAYS`).
fn whole_months(v: IntervalMonthDayNano) -> IntervalMonthDayNano {
    IntervalMonthDayNano::new(v.months + v.days / 30, v.days % 30, v.nanoseconds)
}

/// Whole 24-hour periods of the time moved into the days (`JUSTIFY_HOURS`).
fn whole_days(v: IntervalMonthDayNano) -> IntervalMonthDayNano {
    let days = v.nanoseconds / NANOS_PER_DAY;
    IntervalMonthDayNano::new(
        v.months,
        v.days + days as i32,
        v.nanoseconds % NANOS_PER_DAY,
    )
}

/// Both, hours first (`JUSTIFY_INTERVAL`).
fn whole_days_and_months(v: IntervalMonthDayNano) -> IntervalMonthDayNano {
    whole_months(whole_days(v))
}

fn interval_type() -> DataType {
    DataType::Interval(IntervalUnit::MonthDayNano)
}

fn justify(name: &'static str, f: fn(IntervalMonthDayNano) -> IntervalMonthDayNano) -> ScalarUDF {
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, _) = arrays(args)?;
        let a = a[0]
            .as_primitive_opt::<IntervalMonthDayNanoType>()
            .ok_or_else(|| {
                DataFusionError::Internal(format!("{name}: INTERVAL as {}", a[0].data_type()))
            })?;
        let out: ArrayRef = Arc::new(a.unary::<_, IntervalMonthDayNanoType>(f));
        result(out, args)
    };
    create_udf(
        name,
        vec![interval_type()],
        interval_type(),
        Volatility::Immutable,
        Arc::new(fun),
    )
}

/// `MAKE_INTERVAL(year, month, day, hour, minute, second)`.
pub(crate) fn make_interval() -> ScalarUDF {
    let fun = |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (parts, n) = arrays(args)?;
        let ints = parts
            .iter()
            .map(|a| {
                a.as_primitive_opt::<Int64Type>().ok_or_else(|| {
                    DataFusionError::Internal(format!("MAKE_INTERVAL: INT64 as {}", a.data_type()))
                })
            })
            .collect::<DfResult<Vec<_>>>()?;
        let mut out = IntervalMonthDayNanoBuilder::with_capacity(n);
        for i in 0..n {
            if ints.iter().any(|a| a.is_null(i)) {
                out.append_null();
                continue;
            }
            let v = |k: usize| ints[k].value(i);
            let too_big = || {
                DataFusionError::Execution(format!(
                    "MAKE_INTERVAL: interval out of range: {}, {}, {}, {}, {}, {}",
                    v(0),
                    v(1),
                    v(2),
                    v(3),
                    v(4),
                    v(5)
                ))
            };
            let months = v(0)
                .checked_mul(12)
                .and_then(|m| m.checked_add(v(1)))
                .and_then(|m| i32::try_from(m).ok())
                .ok_or_else(too_big)?;
            let days = i32::try_from(v(2)).map_err(|_| too_big())?;
            let nanos = v(3)
                .checked_mul(3600)
                .and_then(|s| s.checked_add(v(4).checked_mul(60)?))
                .and_then(|s| s.checked_add(v(5)))
                .and_then(|s| s.checked_mul(1_000_000_000))
                .ok_or_else(too_big)?;
            out.append_value(IntervalMonthDayNano::new(months, days, nanos));
        }
        result(Arc::new(out.finish()), args)
    };
    create_udf(
        "bigq_make_interval",
        vec![DataType::Int64; 6],
        interval_type(),
        Volatility::Immutable,
        Arc::new(fun),
    )
}

/// The slot of `bigq_make_interval` a date part's count goes to, with its multiplier.
const COUNT_SLOTS: [(&str, usize, i64); 8] = [
    ("YEAR", 0, 1),
    ("QUARTER", 1, 3),
    ("MONTH", 1, 1),
    ("WEEK", 2, 7),
    ("DAY", 2, 1),
    ("HOUR", 3, 1),
    ("MINUTE", 4, 1),
    ("SECOND", 5, 1),
];

/// `INTERVAL n part` as DataFusion can plan it, where it cannot as written: a count that is
/// an expression (`INTERVAL (2 + 3) DAY`, `INTERVAL n DAY`) becomes `bigq_make_interval` of
/// it; a literal count of QUARTERs or WEEKs the MONTHs or DAYs they are. `None` for an
/// interval DataFusion plans as it is.
pub(crate) fn interval_of_count(iv: &ast::Interval) -> Option<Expr> {
    if iv.last_field.is_some() {
        return None;
    }
    let part = iv.leading_field.as_ref()?.to_string().to_ascii_uppercase();
    let &(_, slot, times) = COUNT_SLOTS.iter().find(|(p, _, _)| *p == part)?;
    let literal = |e: &Expr| match e {
        Expr::Value(v) => matches!(v.value, ast::Value::Number(..)).then(|| v.value.to_string()),
        _ => None,
    };
    let count = iv.value.as_ref();
    let literal_count = match count {
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => literal(expr).map(|n| format!("-{n}")),
        e => literal(e),
    };
    if let Some(n) = literal_count {
        if times == 1 {
            return None;
        }
        let n: i64 = n.parse().ok()?;
        let unit = if slot == 1 {
            ast::DateTimeField::Month
        } else {
            ast::DateTimeField::Day
        };
        return Some(Expr::Interval(ast::Interval {
            value: Box::new(number(n.checked_mul(times)?)),
            leading_field: Some(unit),
            leading_precision: None,
            last_field: None,
            fractional_seconds_precision: None,
        }));
    }
    if matches!(count, Expr::Value(_)) {
        return None;
    }
    let n = cast(count.clone(), ast::DataType::BigInt(None));
    let n = if times == 1 {
        n
    } else {
        crate::sql::ast::binary(n, ast::BinaryOperator::Multiply, number(times))
    };
    let mut args = vec![number(0); 6];
    args[slot] = n;
    Some(call("bigq_make_interval", args))
}

/// Whether `e` is an interval [`interval_of_count`] made of a count expression.
pub(crate) fn is_interval_of_count(e: &Expr) -> bool {
    matches!(e, Expr::Function(f)
        if crate::sql::ast::function_name(f).as_deref() == Some("BIGQ_MAKE_INTERVAL"))
}

/// `MAKE_INTERVAL([year][, month][, day][, hour][, minute][, second])`, each part given by
/// position or by name (`day => 2`) and 0 when left out, as `bigq_make_interval` of all six.
pub(crate) fn make_interval_call(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    const PARTS: [&str; 6] = ["year", "month", "day", "hour", "minute", "second"];
    let ast::FunctionArguments::List(list) = &f.args else {
        return Ok(Some(call("bigq_make_interval", vec![number(0); 6])));
    };
    let mut parts: [Option<Expr>; 6] = Default::default();
    let mut next = 0;
    for arg in &list.args {
        let (slot, e) = match arg {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => (next, e),
            ast::FunctionArg::Named {
                name: n,
                arg: ast::FunctionArgExpr::Expr(e),
                ..
            } => {
                let key = n.value.to_ascii_lowercase();
                let slot = PARTS.iter().position(|p| *p == key).ok_or_else(|| {
                    BqError::invalid_query(format!("{name}: no argument named {}", n.value))
                })?;
                (slot, e)
            }
            other => {
                return Err(BqError::invalid_query(format!(
                    "{name}: unexpected argument {other}"
                )));
            }
        };
        if slot >= 6 || parts[slot].is_some() {
            return Err(BqError::invalid_query(format!(
                "{name}: too many arguments, or {} given twice",
                PARTS.get(slot).unwrap_or(&"a part")
            )));
        }
        parts[slot] = Some(e.clone());
        next = slot + 1;
    }
    let args = parts
        .into_iter()
        .map(|p| cast(p.unwrap_or_else(|| number(0)), ast::DataType::BigInt(None)))
        .collect();
    Ok(Some(call("bigq_make_interval", args)))
}

/// `x + interval` (or `x - interval`) for a DATE (the result is a DATETIME at midnight
/// moved by the interval, as in BigQuery), a DATETIME or TIMESTAMP (of the same type), or an
/// INTERVAL (the parts added one by one).
#[derive(Debug, PartialEq, Eq, Hash)]
struct AddInterval {
    name: &'static str,
    negate: bool,
    signature: Signature,
}

impl AddInterval {
    fn new(name: &'static str, negate: bool) -> Self {
        AddInterval {
            name,
            negate,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for AddInterval {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        let op = if self.negate { "-" } else { "+" };
        let left = match args {
            [DataType::Date32 | DataType::Date64, _] => DataType::Date32,
            [DataType::Timestamp(_, tz), _] => {
                DataType::Timestamp(TimeUnit::Microsecond, tz.clone())
            }
            [DataType::Interval(_), _] => interval_type(),
            _ => {
                return Err(DataFusionError::Plan(format!(
                    "No matching signature for operator {op} for argument types: {}",
                    args.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        Ok(vec![left, interval_type()])
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        Ok(match &args[0] {
            DataType::Date32 | DataType::Date64 => DataType::Timestamp(TimeUnit::Microsecond, None),
            other => other.clone(),
        })
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let args = &call.args;
        let (a, n) = arrays(args)?;
        let by = a[1].as_primitive::<IntervalMonthDayNanoType>();
        let by = |i: usize| {
            let v = by.value(i);
            if self.negate {
                IntervalMonthDayNano::new(
                    v.months.wrapping_neg(),
                    v.days.wrapping_neg(),
                    v.nanoseconds.wrapping_neg(),
                )
            } else {
                v
            }
        };
        let overflow = || {
            DataFusionError::Execution(
                "DATETIME or TIMESTAMP out of range after adding the INTERVAL".into(),
            )
        };
        let utc = Tz::from_str("+00:00")?;
        let out: ArrayRef = match a[0].data_type() {
            DataType::Interval(_) => {
                let x = a[0].as_primitive::<IntervalMonthDayNanoType>();
                let mut out = IntervalMonthDayNanoBuilder::with_capacity(n);
                for i in 0..n {
                    if x.is_null(i) || a[1].is_null(i) {
                        out.append_null();
                        continue;
                    }
                    let (v, d) = (x.value(i), by(i));
                    out.append_value(IntervalMonthDayNano::new(
                        v.months.wrapping_add(d.months),
                        v.days.wrapping_add(d.days),
                        v.nanoseconds.wrapping_add(d.nanoseconds),
                    ));
                }
                Arc::new(out.finish())
            }
            t => {
                let (micros, tz): (Vec<Option<i64>>, _) = match t {
                    DataType::Date32 => (
                        a[0].as_primitive::<Date32Type>()
                            .iter()
                            .map(|d| d.map(|d| d as i64 * 86_400_000_000))
                            .collect(),
                        None,
                    ),
                    DataType::Timestamp(_, tz) => (
                        a[0].as_primitive::<TimestampMicrosecondType>()
                            .iter()
                            .collect(),
                        tz.clone(),
                    ),
                    other => {
                        return Err(DataFusionError::Internal(format!("{}: {other}", self.name)));
                    }
                };
                let is_timestamp = tz.is_some();
                let moved = micros
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| match x {
                        Some(x) if a[1].is_valid(i) => {
                            if is_timestamp && by(i).months != 0 {
                                // A month has no fixed length in an instant's terms.
                                return Err(DataFusionError::Execution(
                                    "TIMESTAMP + INTERVAL: an INTERVAL with a MONTH or YEAR part is not supported for TIMESTAMP".into(),
                                ));
                            }
                            TimestampMicrosecondType::add_month_day_nano(x, by(i), utc)
                                .filter(|m| (min_micros()..=max_micros()).contains(m))
                                .map(Some)
                                .ok_or_else(overflow)
                        }
                        _ => Ok(None),
                    })
                    .collect::<DfResult<Vec<_>>>()?;
                Arc::new(TimestampMicrosecondArray::from(moved).with_timezone_opt(tz))
            }
        };
        result(out, args)
    }
}

/// `x + interval`, as the rewrite of the operator calls it.
pub(crate) fn bigq_add_interval() -> ScalarUDF {
    ScalarUDF::new_from_impl(AddInterval::new("bigq_add_interval", false))
}

/// `x - interval`, as the rewrite of the operator calls it.
pub(crate) fn bigq_sub_interval() -> ScalarUDF {
    ScalarUDF::new_from_impl(AddInterval::new("bigq_sub_interval", true))
}

/// `a - b` of two DATEs, two DATETIMEs or two TIMESTAMPs: the INTERVAL between them, as
/// BigQuery gives it (days for DATEs; hours, minutes and seconds for the others).
pub(crate) fn bigq_datetime_minus() -> ScalarUDF {
    ScalarUDF::new_from_impl(DatetimeMinus {
        signature: Signature::any(2, Volatility::Immutable),
    })
}

/// Whether `a - b` of these types is an INTERVAL in BigQuery (and so `bigq_datetime_minus`).
pub(crate) fn is_datetime_minus(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Date32, DataType::Date32) => true,
        (DataType::Timestamp(_, x), DataType::Timestamp(_, y)) => x.is_some() == y.is_some(),
        _ => false,
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct DatetimeMinus {
    signature: Signature,
}

impl ScalarUDFImpl for DatetimeMinus {
    fn name(&self) -> &str {
        "bigq_datetime_minus"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        match args {
            [a, b] if is_datetime_minus(a, b) => Ok(interval_type()),
            [a, b] => Err(DataFusionError::Plan(format!(
                "No matching signature for operator - for argument types {a} and {b}"
            ))),
            _ => Err(DataFusionError::Plan("- takes two arguments".into())),
        }
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(&call.args)?;
        let mut out = IntervalMonthDayNanoBuilder::with_capacity(rows);
        if a[0].data_type() == &DataType::Date32 {
            let (x, y) = (
                a[0].as_primitive::<Date32Type>(),
                a[1].as_primitive::<Date32Type>(),
            );
            for i in 0..rows {
                if x.is_null(i) || y.is_null(i) {
                    out.append_null();
                } else {
                    let days = x.value(i) - y.value(i);
                    out.append_value(IntervalMonthDayNano::new(0, days, 0));
                }
            }
        } else {
            let micros = |v: &ArrayRef| {
                datafusion::arrow::compute::cast(
                    v,
                    &DataType::Timestamp(TimeUnit::Microsecond, None),
                )
            };
            let (x, y) = (micros(&a[0])?, micros(&a[1])?);
            let (x, y) = (
                x.as_primitive::<TimestampMicrosecondType>(),
                y.as_primitive::<TimestampMicrosecondType>(),
            );
            for i in 0..rows {
                if x.is_null(i) || y.is_null(i) {
                    out.append_null();
                    continue;
                }
                let nanos = x.value(i)
                    .checked_sub(y.value(i))
                    .and_then(|d| d.checked_mul(1000))
                    .ok_or_else(|| {
                        DataFusionError::Execution(
                            "Interval overflow: the difference of the two timestamps does not fit an INTERVAL".into(),
                        )
                    })?;
                out.append_value(IntervalMonthDayNano::new(0, 0, nanos));
            }
        }
        result(Arc::new(out.finish()), &call.args)
    }
}

/// `JUSTIFY_DAYS(interval)`.
pub(crate) fn justify_days() -> ScalarUDF {
    justify("justify_days", whole_months)
}

/// `JUSTIFY_HOURS(interval)`.
pub(crate) fn justify_hours() -> ScalarUDF {
    justify("justify_hours", whole_days)
}

/// `JUSTIFY_INTERVAL(interval)`.
pub(crate) fn justify_interval() -> ScalarUDF {
    justify("justify_interval", whole_days_and_months)
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Interval, &["bigq_add_interval(DATE, INTERVAL) -> DATETIME", "bigq_add_interval(DATETIME, INTERVAL) -> DATETIME",
        "bigq_add_interval(TIMESTAMP, INTERVAL) -> TIMESTAMP", "bigq_add_interval(INTERVAL, INTERVAL) -> INTERVAL"],
        bigq_add_interval),
    Function::udf(Family::Interval, &["bigq_sub_interval(DATE, INTERVAL) -> DATETIME", "bigq_sub_interval(DATETIME, INTERVAL) -> DATETIME",
        "bigq_sub_interval(TIMESTAMP, INTERVAL) -> TIMESTAMP", "bigq_sub_interval(INTERVAL, INTERVAL) -> INTERVAL"],
        bigq_sub_interval),
    Function::udf(Family::Interval, &["bigq_datetime_minus(DATE, DATE) -> INTERVAL", "bigq_datetime_minus(DATETIME, DATETIME) -> INTERVAL",
        "bigq_datetime_minus(TIMESTAMP, TIMESTAMP) -> INTERVAL"], bigq_datetime_minus),
    Function::udf(Family::Interval, &["JUSTIFY_DAYS(INTERVAL) -> INTERVAL"], justify_days),
    Function::udf(Family::Interval, &["JUSTIFY_HOURS(INTERVAL) -> INTERVAL"], justify_hours),
    Function::udf(Family::Interval, &["JUSTIFY_INTERVAL(INTERVAL) -> INTERVAL"], justify_interval),
    Function::rewrite(Family::Interval, &["MAKE_INTERVAL([INT64, INT64, INT64, INT64, INT64, INT64]) -> INTERVAL"],
        make_interval_call),
    Function::udf(Family::Interval, &["bigq_make_interval(INT64, INT64, INT64, INT64, INT64, INT64) -> INTERVAL"],
        make_interval),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn justify_as_bigquery() {
        let iv = |m, d, h: i64| IntervalMonthDayNano::new(m, d, h * 3600 * 1_000_000_000);
        assert_eq!(whole_months(iv(0, 40, 0)), iv(1, 10, 0));
        assert_eq!(whole_months(iv(0, -40, 0)), iv(-1, -10, 0));
        assert_eq!(whole_days(iv(0, 0, 30)), iv(0, 1, 6));
        assert_eq!(whole_days_and_months(iv(0, 40, 30)), iv(1, 11, 6));
    }
}

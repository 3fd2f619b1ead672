//! INTERVAL arithmetic and text as BigQuery computes them: `INTERVAL * INT64` (either way
//! round) and `INTERVAL / INT64` (`bigq_interval_multiply`, `bigq_interval_divide`, what the
//! typed operators make of them; DataFusion has no such operators), and `CAST(s AS INTERVAL)`
//! of BigQuery's interval text (`bigq_cast_interval`): the canonical `Y-M D H:M:S[.F]`, the
//! unambiguous parts of it (`1-2`, `10:20:30`, `1-2 3`, `3 10:20:30`) and ISO 8601 durations
//! (`P1Y2M3DT4H5M6.5S`, `,` or `.` before the fraction).
//!
//! A division carries what does not divide into the next part: a month as 30 days, a day as
//! 24 hours (`INTERVAL 1 MONTH / 12` is `0-0 2 12:0:0`). Results keep BigQuery's range (10000
//! years, 3660000 days, 87840000 hours) or are errors; the emulator holds an interval's time
//! in nanoseconds, so one of more than 2562047 hours is refused by name.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, IntervalMonthDayNanoBuilder};
use datafusion::arrow::datatypes::{
    DataType, Int64Type, IntervalMonthDayNano, IntervalMonthDayNanoType, IntervalUnit,
};
use datafusion::common::{DFSchema, DataFusionError, Result as DfResult};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, ScalarUDF, Volatility, create_udf,
};
use datafusion::sql::sqlparser::ast;

use super::registry::{Family, Function};
use super::udf::{arrays, result};

const NANOS_PER_DAY: i128 = 86_400 * 1_000_000_000;
const MAX_MONTHS: i128 = 10_000 * 12;
const MAX_DAYS: i128 = 3_660_000;
const MAX_NANOS: i128 = 87_840_000 * 3_600 * 1_000_000_000;

fn interval_type() -> DataType {
    DataType::Interval(IntervalUnit::MonthDayNano)
}

fn err(msg: impl Into<String>) -> DataFusionError {
    DataFusionError::Execution(msg.into())
}

/// An interval of these parts, if BigQuery's range (and the emulator's nanoseconds) hold it.
fn interval(months: i128, days: i128, nanos: i128) -> DfResult<IntervalMonthDayNano> {
    if months.abs() > MAX_MONTHS || days.abs() > MAX_DAYS || nanos.abs() > MAX_NANOS {
        return Err(err(format!(
            "Interval overflow: {months} months, {days} days, {} microseconds is out of INTERVAL's range",
            nanos / 1000
        )));
    }
    let nanos = i64::try_from(nanos).map_err(|_| {
        err(format!(
            "Unsupported by bigq-emulator: an INTERVAL of {} hours (it keeps at most 2562047)",
            nanos / 3_600_000_000_000
        ))
    })?;
    Ok(IntervalMonthDayNano::new(months as i32, days as i32, nanos))
}

fn multiply(v: IntervalMonthDayNano, n: i64) -> DfResult<IntervalMonthDayNano> {
    let n = i128::from(n);
    interval(
        i128::from(v.months) * n,
        i128::from(v.days) * n,
        i128::from(v.nanoseconds) * n,
    )
}

fn divide(v: IntervalMonthDayNano, n: i64) -> DfResult<IntervalMonthDayNano> {
    if n == 0 {
        return Err(err("division by zero"));
    }
    let n = i128::from(n);
    let months = i128::from(v.months);
    let days = i128::from(v.days) + (months % n) * 30;
    let nanos = i128::from(v.nanoseconds) + (days % n) * NANOS_PER_DAY;
    // BigQuery keeps microseconds: what is left of one is dropped.
    let nanos = nanos / n / 1000 * 1000;
    interval(months / n, days / n, nanos)
}

/// `bigq_interval_multiply(interval, n)` (`divide`: `bigq_interval_divide`).
fn arithmetic(
    name: &'static str,
    f: fn(IntervalMonthDayNano, i64) -> DfResult<IntervalMonthDayNano>,
) -> ScalarUDF {
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let iv = a[0]
            .as_primitive_opt::<IntervalMonthDayNanoType>()
            .ok_or_else(|| err(format!("{name}: INTERVAL as {}", a[0].data_type())))?;
        let n = a[1]
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| err(format!("{name}: INT64 as {}", a[1].data_type())))?;
        let mut out = IntervalMonthDayNanoBuilder::with_capacity(rows);
        for i in 0..rows {
            if iv.is_null(i) || n.is_null(i) {
                out.append_null();
            } else {
                out.append_value(f(iv.value(i), n.value(i))?);
            }
        }
        let out: ArrayRef = Arc::new(out.finish());
        result(out, args)
    };
    create_udf(
        name,
        vec![interval_type(), DataType::Int64],
        interval_type(),
        Volatility::Immutable,
        Arc::new(fun),
    )
}

fn bigq_interval_multiply() -> ScalarUDF {
    arithmetic("bigq_interval_multiply", multiply)
}

fn bigq_interval_divide() -> ScalarUDF {
    arithmetic("bigq_interval_divide", divide)
}

/// The UDF `INTERVAL * n` or `n * INTERVAL` becomes (`divide`: `INTERVAL / n`).
pub(crate) fn interval_arithmetic_udf(divide: bool) -> Arc<ScalarUDF> {
    Arc::new(if divide {
        bigq_interval_divide()
    } else {
        bigq_interval_multiply()
    })
}

/// Signed digits: the value and what follows them.
fn number(s: &str) -> Option<(i128, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// `H:M:S[.F]` as nanoseconds (unsigned).
fn time_part(s: &str) -> Option<i128> {
    let mut it = s.splitn(3, ':');
    let (h, m, sec) = (it.next()?, it.next()?, it.next()?);
    let (h, rest) = number(h)?;
    let (m, rest2) = number(m)?;
    if !rest.is_empty() || !rest2.is_empty() {
        return None;
    }
    let (sec, frac) = match sec.split_once('.') {
        Some((a, f)) => (a, f),
        None => (sec, ""),
    };
    let (sec, rest) = number(sec)?;
    if !rest.is_empty() || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let frac: i128 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    Some(((h * 60 + m) * 60 + sec) * 1_000_000_000 + frac)
}

/// A leading sign and the rest.
fn signed(s: &str) -> (i128, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (-1, &s[1..]),
        Some(b'+') => (1, &s[1..]),
        _ => (1, s),
    }
}

/// BigQuery's interval text, as (months, days, nanoseconds).
fn parse_canonical(text: &str) -> Option<(i128, i128, i128)> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let (mut months, mut days, mut nanos) = (None, None, None);
    let mut k = 0;
    // `Y-M` first, if it is there.
    if let Some(t) = tokens.get(k) {
        let (sign, body) = signed(t);
        if let Some((y, rest)) = number(body)
            && let Some(m) = rest.strip_prefix('-')
            && let Some((m, "")) = number(m)
        {
            months = Some(sign * (y * 12 + m));
            k += 1;
        }
    }
    // Then `D`, when more follows it or a `Y-M` came before.
    if let Some(t) = tokens.get(k) {
        let (sign, body) = signed(t);
        if let Some((d, "")) = number(body)
            && (months.is_some() || k + 1 < tokens.len())
        {
            days = Some(sign * d);
            k += 1;
        }
    }
    if let Some(t) = tokens.get(k) {
        let (sign, body) = signed(t);
        nanos = Some(sign * time_part(body)?);
        k += 1;
    }
    if k != tokens.len() || (months.is_none() && days.is_none() && nanos.is_none()) {
        return None;
    }
    Some((months.unwrap_or(0), days.unwrap_or(0), nanos.unwrap_or(0)))
}

/// An ISO 8601 duration (`P1Y2M3DT4H5M6.5S`, each number signed), as (months, days,
/// nanoseconds).
fn parse_iso(text: &str) -> Option<(i128, i128, i128)> {
    let body = text.strip_prefix('P')?;
    let (date, time) = match body.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (body, None),
    };
    let (mut months, mut days, mut nanos) = (0i128, 0i128, 0i128);
    let mut any = false;
    let mut rest = date;
    while !rest.is_empty() {
        let (sign, r) = signed(rest);
        let (n, r) = number(r)?;
        let (unit, r) = r.split_at(r.char_indices().nth(1).map_or(r.len(), |(i, _)| i));
        match unit {
            "Y" => months += sign * n * 12,
            "M" => months += sign * n,
            "W" => days += sign * n * 7,
            "D" => days += sign * n,
            _ => return None,
        }
        any = true;
        rest = r;
    }
    if let Some(t) = time {
        if t.is_empty() {
            return None;
        }
        let mut rest = t;
        while !rest.is_empty() {
            let (sign, r) = signed(rest);
            let (n, r) = number(r)?;
            let (frac, r) = match r.as_bytes().first() {
                Some(b'.' | b',') => {
                    let f = &r[1..];
                    let end = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
                    (&f[..end], &f[end..])
                }
                _ => ("", r),
            };
            let (unit, r) = r.split_at(r.char_indices().nth(1).map_or(r.len(), |(i, _)| i));
            let scale: i128 = match unit {
                "H" if frac.is_empty() => 3_600_000_000_000,
                "M" if frac.is_empty() => 60_000_000_000,
                "S" => 1_000_000_000,
                _ => return None,
            };
            let frac: i128 = if frac.is_empty() {
                0
            } else if frac.len() > 9 {
                return None;
            } else {
                format!("{frac:0<9}").parse().ok()?
            };
            nanos += sign * (n * scale + frac);
            any = true;
            rest = r;
        }
    }
    any.then_some((months, days, nanos))
}

fn parse(text: &str) -> Option<(i128, i128, i128)> {
    let t = text.trim();
    if t.starts_with('P') {
        parse_iso(t)
    } else {
        parse_canonical(t)
    }
}

/// `bigq_cast_interval(s)` (`safe`: NULL where the text is not an interval).
pub(crate) fn cast_interval_udf(safe: bool) -> Arc<ScalarUDF> {
    let name = if safe {
        "bigq_safe_cast_interval"
    } else {
        "bigq_cast_interval"
    };
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let text = datafusion::arrow::compute::cast(&a[0], &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let mut out = IntervalMonthDayNanoBuilder::with_capacity(rows);
        for i in 0..rows {
            if text.is_null(i) {
                out.append_null();
                continue;
            }
            let s = text.value(i);
            let v = match parse(s) {
                Some((m, d, n)) => interval(m, d, n),
                None => Err(err(format!("Invalid INTERVAL value: {s}"))),
            };
            match v {
                Ok(v) => out.append_value(v),
                Err(_) if safe => out.append_null(),
                Err(e) => return Err(e),
            }
        }
        let out: ArrayRef = Arc::new(out.finish());
        result(out, args)
    };
    Arc::new(create_udf(
        name,
        vec![DataType::Utf8],
        interval_type(),
        Volatility::Immutable,
        Arc::new(fun),
    ))
}

/// Plans `INTERVAL * INT64` and `INT64 * INTERVAL`, which DataFusion cannot type, as
/// `bigq_interval_multiply` (`/` is the emulator's `bigq_divide`, which divides an INTERVAL
/// too).
#[derive(Debug)]
pub(crate) struct IntervalPlanner;

impl ExprPlanner for IntervalPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> DfResult<PlannerResult<RawBinaryExpr>> {
        if expr.op != ast::BinaryOperator::Multiply {
            return Ok(PlannerResult::Original(expr));
        }
        let count = |e: &Expr| {
            e.get_type(schema)
                .is_ok_and(|t| t.is_integer() || t == DataType::Null)
        };
        let (iv, n) = match (
            as_interval(&expr.left, schema),
            as_interval(&expr.right, schema),
        ) {
            (Some(iv), None) if count(&expr.right) => (iv, expr.right),
            (None, Some(iv)) if count(&expr.left) => (iv, expr.left),
            _ => return Ok(PlannerResult::Original(expr)),
        };
        let n = datafusion::logical_expr::cast(n, DataType::Int64);
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            ScalarFunction::new_udf(interval_arithmetic_udf(false), vec![iv, n]),
        )))
    }
}

/// `e` as an INTERVAL: itself, or for `a - b` of two DATEs, DATETIMEs or TIMESTAMPs (which
/// DataFusion types otherwise until the typed operators make it BigQuery's INTERVAL) the
/// interval between them.
fn as_interval(e: &Expr, schema: &DFSchema) -> Option<Expr> {
    match e.get_type(schema).ok()? {
        DataType::Interval(_) => Some(e.clone()),
        _ => match e {
            Expr::BinaryExpr(b) if b.op == datafusion::logical_expr::Operator::Minus => {
                let (l, r) = (
                    b.left.get_type(schema).ok()?,
                    b.right.get_type(schema).ok()?,
                );
                super::interval::is_datetime_minus(&l, &r).then(|| {
                    Expr::ScalarFunction(ScalarFunction::new_udf(
                        Arc::new(super::interval::bigq_datetime_minus()),
                        vec![(*b.left).clone(), (*b.right).clone()],
                    ))
                })
            }
            _ => None,
        },
    }
}

#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Interval, &["bigq_interval_multiply(INTERVAL, INT64) -> INTERVAL"], bigq_interval_multiply),
    Function::udf(Family::Interval, &["bigq_interval_divide(INTERVAL, INT64) -> INTERVAL"], bigq_interval_divide),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(m: i32, d: i32, micros: i64) -> IntervalMonthDayNano {
        IntervalMonthDayNano::new(m, d, micros * 1000)
    }

    #[test]
    fn products_and_quotients_carry_as_bigquery_does() {
        let hms = iv(0, 0, 3_723_000_000);
        assert_eq!(multiply(hms, 10).unwrap(), iv(0, 0, 37_230_000_000));
        assert_eq!(divide(iv(120, 0, 0), 3).unwrap(), iv(40, 0, 0));
        assert_eq!(divide(iv(1, 0, 0), 12).unwrap(), iv(0, 2, 43_200_000_000));
        assert_eq!(
            multiply(iv(14, 3, 14_400_000_000), -2).unwrap(),
            iv(-28, -6, -28_800_000_000)
        );
        assert!(divide(iv(1, 0, 0), 0).is_err());
        assert!(multiply(iv(120_000, 0, 0), 2).is_err());
    }

    #[test]
    fn interval_text_in_each_form() {
        let p = |s: &str| parse(s).map(|(m, d, n)| (m, d, n / 1000));
        assert_eq!(p("1-2 3 10:20:30.456"), Some((14, 3, 37_230_456_000)));
        assert_eq!(p("1-2"), Some((14, 0, 0)));
        assert_eq!(p("10:20:30"), Some((0, 0, 37_230_000_000)));
        assert_eq!(p("-2-4 -6 -8:0:0"), Some((-28, -6, -28_800_000_000)));
        assert_eq!(p("3 4:0:0"), Some((0, 3, 14_400_000_000)));
        assert_eq!(p("P1Y2M3D"), Some((14, 3, 0)));
        assert_eq!(p("PT10H20M30,456S"), Some((0, 0, 37_230_456_000)));
        assert_eq!(p("P1W"), Some((0, 7, 0)));
        for bad in ["one day", "", "5", "1:2", "P", "PT", "1-2-3", "P1H"] {
            assert_eq!(p(bad), None, "{bad}");
        }
    }
}

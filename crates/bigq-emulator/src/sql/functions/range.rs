//! Range functions: `RANGE` (renamed `bigq_range`, DataFusion has its own `range`),
//! `RANGE_START`, `RANGE_END`, `RANGE_CONTAINS` (of a value or a range), `RANGE_OVERLAPS`,
//! `RANGE_INTERSECT` and `GENERATE_RANGE_ARRAY`, and the parsers of `RANGE<T> '...'`
//! literals, as scalar UDFs over the RANGE layout of [`crate::sql::types`].

use std::str::FromStr;
use std::sync::Arc;

use bigq_codec::value::text;
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, ListArray, StructArray,
    TimestampMicrosecondArray,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Field, IntervalMonthDayNanoType, IntervalUnit, TimeUnit,
    TimestampMicrosecondType,
};
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use datafusion::sql::sqlparser::ast::{self, Expr, Ident, ObjectName, ObjectNamePart};

use super::registry::{Family, Function};
use super::udf::{arrays, result};
use crate::error::BqResult;
use crate::sql::types::{
    canonical_element, element_name, element_of_name, range_element, range_type,
};

/// A bound as an integer (days for DATE, microseconds otherwise); `None` is UNBOUNDED.
type Bound = Option<i64>;

fn exec(msg: String) -> DataFusionError {
    DataFusionError::Execution(msg)
}

/// Reads element values as integers.
fn ints(a: &ArrayRef) -> DfResult<Vec<Bound>> {
    Ok(match a.data_type() {
        DataType::Date32 => a
            .as_primitive::<Date32Type>()
            .iter()
            .map(|v| v.map(i64::from))
            .collect(),
        DataType::Timestamp(TimeUnit::Microsecond, _) => a
            .as_primitive::<TimestampMicrosecondType>()
            .iter()
            .collect(),
        DataType::Null => vec![None; a.len()],
        other => return Err(exec(format!("not a RANGE element type: {other}"))),
    })
}

/// Element values of type `element` from integers.
fn element_array(element: &DataType, v: Vec<Bound>) -> ArrayRef {
    match element {
        DataType::Date32 => Arc::new(Date32Array::from(
            v.into_iter()
                .map(|x| x.map(|d| d as i32))
                .collect::<Vec<_>>(),
        )),
        DataType::Timestamp(_, tz) => {
            Arc::new(TimestampMicrosecondArray::from(v).with_timezone_opt(tz.clone()))
        }
        _ => unreachable!("RANGE element types are DATE, DATETIME and TIMESTAMP"),
    }
}

/// The ranges of an array: per row, NULL or (start, end).
fn ranges(a: &ArrayRef) -> DfResult<Vec<Option<(Bound, Bound)>>> {
    let s = a
        .as_struct_opt()
        .ok_or_else(|| exec(format!("not a RANGE: {}", a.data_type())))?;
    let (start, end) = (ints(s.column(0))?, ints(s.column(1))?);
    Ok((0..s.len())
        .map(|i| s.is_valid(i).then(|| (start[i], end[i])))
        .collect())
}

/// A RANGE array of `element` from per-row ranges.
fn range_array(element: &DataType, rows: Vec<Option<(Bound, Bound)>>) -> DfResult<ArrayRef> {
    let DataType::Struct(fields) = range_type(element.clone()) else {
        unreachable!("range_type is a struct");
    };
    let nulls = NullBuffer::from(rows.iter().map(Option::is_some).collect::<Vec<_>>());
    let (starts, ends): (Vec<Bound>, Vec<Bound>) =
        rows.into_iter().map(|r| r.unwrap_or((None, None))).unzip();
    Ok(Arc::new(StructArray::try_new(
        fields,
        vec![element_array(element, starts), element_array(element, ends)],
        Some(nulls),
    )?))
}

/// A start at or after its end is an error, as in BigQuery.
fn check_order(start: Bound, end: Bound) -> DfResult<()> {
    match (start, end) {
        (Some(s), Some(e)) if s >= e => Err(exec(
            "Range start element must be smaller than range end element".into(),
        )),
        _ => Ok(()),
    }
}

/// Parses `[start, end)` with `UNBOUNDED` (or NULL) bounds.
fn parse_literal(element: &DataType, s: &str) -> DfResult<(Bound, Bound)> {
    let bad = || {
        exec(format!(
            "Invalid RANGE<{}> literal: {s}",
            element_name(element)
        ))
    };
    let inner = s
        .trim()
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(bad)?;
    // The bounds are separated by a comma and one space, as BigQuery requires.
    let (a, b) = inner.split_once(", ").ok_or_else(bad)?;
    let bound = |t: &str| -> DfResult<Bound> {
        let t = t.trim();
        if t.eq_ignore_ascii_case("UNBOUNDED") || t.eq_ignore_ascii_case("NULL") {
            return Ok(None);
        }
        let v = match element {
            DataType::Date32 => text::parse_date(t.as_bytes()).map(i64::from),
            DataType::Timestamp(_, None) => text::parse_datetime(t.as_bytes()),
            _ => text::parse_timestamp(t.as_bytes()),
        };
        v.map(Some).ok_or_else(bad)
    };
    let (start, end) = (bound(a)?, bound(b)?);
    check_order(start, end)?;
    Ok((start, end))
}

/// Whether `x` lies in the range (UNBOUNDED bounds are infinite).
fn contains_value((s, e): (Bound, Bound), x: i64) -> bool {
    s.is_none_or(|s| s <= x) && e.is_none_or(|e| x < e)
}

fn contains_range((s, e): (Bound, Bound), (os, oe): (Bound, Bound)) -> bool {
    let start_ok = match (s, os) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(s), Some(os)) => s <= os,
    };
    let end_ok = match (e, oe) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(e), Some(oe)) => oe <= e,
    };
    start_ok && end_ok
}

fn overlaps((s, e): (Bound, Bound), (os, oe): (Bound, Bound)) -> bool {
    let before = |start: Bound, end: Bound| match (start, end) {
        (Some(a), Some(b)) => a < b,
        _ => true,
    };
    before(s, oe) && before(os, e)
}

/// The later of two starts and the earlier of two ends.
fn intersect((s, e): (Bound, Bound), (os, oe): (Bound, Bound)) -> (Bound, Bound) {
    let start = match (s, os) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let end = match (e, oe) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    (start, end)
}

/// `x` moved by an interval, in the element's unit.
fn step(
    element: &DataType,
    x: i64,
    by: <IntervalMonthDayNanoType as datafusion::arrow::datatypes::ArrowPrimitiveType>::Native,
) -> Option<i64> {
    match element {
        DataType::Date32 => {
            Date32Type::add_month_day_nano_opt(i32::try_from(x).ok()?, by).map(i64::from)
        }
        _ => TimestampMicrosecondType::add_month_day_nano(x, by, Tz::from_str("+00:00").ok()?),
    }
}

// ---------------------------------------------------------------------------------------
// Functions.

/// What a RANGE function computes.
#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Op {
    /// `RANGE(start, end)`.
    Make,
    /// `RANGE<T> 'literal'`, for the element type named.
    Literal(&'static str),
    Start,
    End,
    Contains,
    Overlaps,
    Intersect,
    GenerateArray,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct RangeFn {
    name: &'static str,
    op: Op,
    signature: Signature,
}

impl RangeFn {
    fn new(name: &'static str, op: Op) -> Self {
        RangeFn {
            name,
            op,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }

    /// The element type of the first argument, a RANGE.
    fn first_element<'t>(&self, args: &'t [DataType]) -> DfResult<&'t DataType> {
        args.first().and_then(range_element).ok_or_else(|| {
            DataFusionError::Plan(format!(
                "No matching signature for function {}: the first argument must be a RANGE",
                self.name.to_ascii_uppercase()
            ))
        })
    }
}

/// Two RANGEs of one element type, as the functions taking two need them.
fn same_element(name: &str, a: &DataType, b: &DataType) -> DfResult<()> {
    if canonical_element(a) == canonical_element(b) {
        return Ok(());
    }
    Err(DataFusionError::Plan(format!(
        "No matching signature for function {} for argument types: RANGE<{}>, RANGE<{}>",
        name.to_ascii_uppercase(),
        element_name(a),
        element_name(b)
    )))
}

fn arity(name: &str, args: &[DataType], allowed: &[usize]) -> DfResult<()> {
    if allowed.contains(&args.len()) {
        Ok(())
    } else {
        Err(DataFusionError::Plan(format!(
            "No matching signature for function {} with {} arguments",
            name.to_ascii_uppercase(),
            args.len()
        )))
    }
}

impl ScalarUDFImpl for RangeFn {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        let name = self.name;
        match self.op {
            Op::Literal(_) => {
                arity(name, args, &[1])?;
                Ok(vec![DataType::Utf8])
            }
            Op::Make => {
                arity(name, args, &[2])?;
                let elements = args
                    .iter()
                    .filter(|t| **t != DataType::Null)
                    .map(canonical_element)
                    .collect::<Vec<_>>();
                match elements.first() {
                    Some(Some(el)) if elements.iter().all(|e| e.as_ref() == Some(el)) => {
                        Ok(vec![el.clone(), el.clone()])
                    }
                    _ => Err(DataFusionError::Plan(format!(
                        "No matching signature for function RANGE for argument types: {}",
                        args.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))),
                }
            }
            Op::Start | Op::End => {
                arity(name, args, &[1])?;
                self.first_element(args)?;
                Ok(args.to_vec())
            }
            Op::Contains => {
                arity(name, args, &[2])?;
                let el = self.first_element(args)?.clone();
                // A value of the element type, or a RANGE of it.
                let second = match range_element(&args[1]) {
                    Some(other) => {
                        same_element(name, &el, other)?;
                        args[1].clone()
                    }
                    None => el,
                };
                Ok(vec![args[0].clone(), second])
            }
            Op::Overlaps | Op::Intersect => {
                arity(name, args, &[2])?;
                let el = self.first_element(args)?;
                if let Some(other) = range_element(&args[1]) {
                    same_element(name, el, other)?;
                }
                Ok(vec![args[0].clone(), args[0].clone()])
            }
            Op::GenerateArray => {
                arity(name, args, &[2, 3])?;
                self.first_element(args)?;
                let mut out = vec![
                    args[0].clone(),
                    DataType::Interval(IntervalUnit::MonthDayNano),
                ];
                if args.len() == 3 {
                    out.push(DataType::Boolean);
                }
                Ok(out)
            }
        }
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        Ok(match self.op {
            Op::Literal(el) => range_type(element_of_name(el).unwrap_or(DataType::Date32)),
            Op::Make => range_type(
                args.iter()
                    .find_map(canonical_element)
                    .unwrap_or(DataType::Date32),
            ),
            Op::Start | Op::End => self.first_element(args)?.clone(),
            Op::Contains | Op::Overlaps => DataType::Boolean,
            Op::Intersect => args[0].clone(),
            Op::GenerateArray => {
                DataType::List(Arc::new(Field::new("item", args[0].clone(), true)))
            }
        })
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let args = &call.args;
        let (a, n) = arrays(args)?;
        let out: ArrayRef = match self.op {
            Op::Literal(el) => {
                let element = element_of_name(el).unwrap_or(DataType::Date32);
                let text = a[0]
                    .as_string_opt::<i32>()
                    .ok_or_else(|| exec(format!("RANGE literal as {}", a[0].data_type())))?;
                let rows = text
                    .iter()
                    .map(|s| s.map(|s| parse_literal(&element, s)).transpose())
                    .collect::<DfResult<Vec<_>>>()?;
                range_array(&element, rows)?
            }
            Op::Make => {
                let element = call.return_field.data_type();
                let element = range_element(element)
                    .ok_or_else(|| exec("RANGE: no element type".into()))?
                    .clone();
                let (s, e) = (ints(&a[0])?, ints(&a[1])?);
                let rows = s
                    .into_iter()
                    .zip(e)
                    .map(|(s, e)| check_order(s, e).map(|()| Some((s, e))))
                    .collect::<DfResult<Vec<_>>>()?;
                range_array(&element, rows)?
            }
            Op::Start | Op::End => {
                // NULL for a NULL range as well as for an UNBOUNDED end.
                let element = range_element(a[0].data_type())
                    .ok_or_else(|| exec("RANGE_START/END: not a RANGE".into()))?
                    .clone();
                let bounds = ranges(&a[0])?
                    .into_iter()
                    .map(|r| r.and_then(|(s, e)| if self.op == Op::End { e } else { s }))
                    .collect();
                element_array(&element, bounds)
            }
            Op::Contains => {
                let r = ranges(&a[0])?;
                let out: BooleanArray = if range_element(a[1].data_type()).is_some() {
                    let o = ranges(&a[1])?;
                    r.into_iter()
                        .zip(o)
                        .map(|(r, o)| Some(contains_range(r?, o?)))
                        .collect()
                } else {
                    let x = ints(&a[1])?;
                    r.into_iter()
                        .zip(x)
                        .map(|(r, x)| Some(contains_value(r?, x?)))
                        .collect()
                };
                Arc::new(out)
            }
            Op::Overlaps => {
                let (r, o) = (ranges(&a[0])?, ranges(&a[1])?);
                let out: BooleanArray = r
                    .into_iter()
                    .zip(o)
                    .map(|(r, o)| Some(overlaps(r?, o?)))
                    .collect();
                Arc::new(out)
            }
            Op::Intersect => {
                let element = range_element(a[0].data_type())
                    .ok_or_else(|| exec("RANGE_INTERSECT: not a RANGE".into()))?
                    .clone();
                let (r, o) = (ranges(&a[0])?, ranges(&a[1])?);
                let rows = r
                    .into_iter()
                    .zip(o)
                    .map(|(r, o)| match (r, o) {
                        (Some(r), Some(o)) if overlaps(r, o) => Ok(Some(intersect(r, o))),
                        (Some(_), Some(_)) => Err(exec(
                            "Provided RANGE inputs to RANGE_INTERSECT do not overlap".into(),
                        )),
                        _ => Ok(None),
                    })
                    .collect::<DfResult<Vec<_>>>()?;
                range_array(&element, rows)?
            }
            Op::GenerateArray => generate_ranges(&a, n)?,
        };
        result(out, args)
    }
}

/// `GENERATE_RANGE_ARRAY(range, step [, include_last_partial_range = TRUE])`.
fn generate_ranges(a: &[ArrayRef], n: usize) -> DfResult<ArrayRef> {
    let element = range_element(a[0].data_type())
        .ok_or_else(|| exec("GENERATE_RANGE_ARRAY: not a RANGE".into()))?
        .clone();
    let r = ranges(&a[0])?;
    let steps = a[1].as_primitive::<IntervalMonthDayNanoType>();
    let partial = a.get(2).map(|b| b.as_boolean());
    let mut parts = Vec::new();
    let mut offsets = vec![0i32];
    let mut valid = Vec::with_capacity(n);
    for (i, r) in r.into_iter().enumerate() {
        let flag_null = partial.is_some_and(|p| p.is_null(i));
        let (Some((s, e)), true, false) = (r, steps.is_valid(i), flag_null) else {
            valid.push(false);
            offsets.push(parts.len() as i32);
            continue;
        };
        let (Some(mut at), Some(end)) = (s, e) else {
            return Err(exec(
                "GENERATE_RANGE_ARRAY does not support UNBOUNDED ranges".into(),
            ));
        };
        let by = steps.value(i);
        check_step(&element, by)?;
        let include_partial = partial.is_none_or(|p| p.value(i));
        loop {
            let next = step(&element, at, by)
                .filter(|&x| x > at)
                .ok_or_else(|| exec("GENERATE_RANGE_ARRAY: the step must be positive".into()))?;
            if next > end {
                if include_partial {
                    parts.push(Some((Some(at), Some(end))));
                }
                break;
            }
            parts.push(Some((Some(at), Some(next))));
            if next == end {
                break;
            }
            at = next;
        }
        valid.push(true);
        offsets.push(parts.len() as i32);
    }
    let values = range_array(&element, parts)?;
    Ok(Arc::new(ListArray::try_new(
        Arc::new(Field::new("item", values.data_type().clone(), true)),
        OffsetBuffer::new(offsets.into()),
        values,
        Some(NullBuffer::from(valid)),
    )?))
}

/// BigQuery's rule for GENERATE_RANGE_ARRAY's step: one date part (not `'1 2' DAY TO
/// HOUR`), and no months or years for a RANGE<TIMESTAMP>.
fn check_step(
    element: &DataType,
    by: <IntervalMonthDayNanoType as datafusion::arrow::datatypes::ArrowPrimitiveType>::Native,
) -> DfResult<()> {
    let parts = [by.months != 0, by.days != 0, by.nanoseconds != 0];
    if parts.iter().filter(|p| **p).count() > 1 {
        return Err(exec(
            "GENERATE_RANGE_ARRAY: the step must be an INTERVAL of a single date part".into(),
        ));
    }
    if by.months != 0 && matches!(element, DataType::Timestamp(_, Some(_))) {
        return Err(exec(
            "GENERATE_RANGE_ARRAY: the step of a RANGE<TIMESTAMP> cannot have a YEAR, QUARTER or MONTH part".into(),
        ));
    }
    Ok(())
}

/// `RANGE(start, end)` as `bigq_range` (DataFusion has a `range` of its own, an array of
/// integers).
pub(crate) fn range(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let mut g = f.clone();
    g.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("bigq_range"))]);
    Ok(Some(Expr::Function(g)))
}

fn udf(name: &'static str, op: Op) -> ScalarUDF {
    ScalarUDF::new_from_impl(RangeFn::new(name, op))
}

/// `RANGE(start, end)`, as `bigq_range`.
pub(crate) fn bigq_range() -> ScalarUDF {
    udf("bigq_range", Op::Make)
}

/// `CAST(x AS RANGE<T>)` (and `SAFE_CAST`): the STRING `x` parsed as a RANGE literal is,
/// NULL as NULL.
pub(crate) fn cast_to_range(kind: &ast::CastKind, element: &str, x: Expr) -> Expr {
    let text = crate::sql::ast::cast(x, ast::DataType::String(None));
    let parse = crate::sql::ast::call(
        &format!("bigq_range_literal_{}", element.to_ascii_lowercase()),
        vec![text],
    );
    match kind {
        ast::CastKind::SafeCast | ast::CastKind::TryCast => super::safe::safe_call(parse),
        _ => parse,
    }
}

/// `RANGE<DATE> '[start, end)'`, as `bigq_range_literal_date('[start, end)')`.
pub(crate) fn bigq_range_literal_date() -> ScalarUDF {
    udf("bigq_range_literal_date", Op::Literal("DATE"))
}

/// `RANGE<DATETIME> '[start, end)'`.
pub(crate) fn bigq_range_literal_datetime() -> ScalarUDF {
    udf("bigq_range_literal_datetime", Op::Literal("DATETIME"))
}

/// `RANGE<TIMESTAMP> '[start, end)'`.
pub(crate) fn bigq_range_literal_timestamp() -> ScalarUDF {
    udf("bigq_range_literal_timestamp", Op::Literal("TIMESTAMP"))
}

/// `RANGE_START(range)`.
pub(crate) fn range_start() -> ScalarUDF {
    udf("range_start", Op::Start)
}

/// `RANGE_END(range)`.
pub(crate) fn range_end() -> ScalarUDF {
    udf("range_end", Op::End)
}

/// `RANGE_CONTAINS(range, value)` and `RANGE_CONTAINS(range, range)`.
pub(crate) fn range_contains() -> ScalarUDF {
    udf("range_contains", Op::Contains)
}

/// `RANGE_OVERLAPS(range, range)`.
pub(crate) fn range_overlaps() -> ScalarUDF {
    udf("range_overlaps", Op::Overlaps)
}

/// `RANGE_INTERSECT(range, range)`.
pub(crate) fn range_intersect() -> ScalarUDF {
    udf("range_intersect", Op::Intersect)
}

/// `GENERATE_RANGE_ARRAY(range, step [, include_last_partial_range])`.
pub(crate) fn generate_range_array() -> ScalarUDF {
    udf("generate_range_array", Op::GenerateArray)
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Range, &["RANGE(T, T) -> RANGE<T>"], range),
    Function::udf(Family::Range, &["bigq_range(T, T) -> RANGE<T>"], bigq_range),
    Function::udf(Family::Range, &["bigq_range_literal_date(STRING) -> RANGE<DATE>"], bigq_range_literal_date),
    Function::udf(Family::Range, &["bigq_range_literal_datetime(STRING) -> RANGE<DATETIME>"],
        bigq_range_literal_datetime),
    Function::udf(Family::Range, &["bigq_range_literal_timestamp(STRING) -> RANGE<TIMESTAMP>"],
        bigq_range_literal_timestamp),
    Function::udf(Family::Range, &["GENERATE_RANGE_ARRAY(RANGE<T>, INTERVAL[, BOOL]) -> ARRAY<RANGE<T>>"],
        generate_range_array),
    Function::udf(Family::Range, &["RANGE_CONTAINS(RANGE<T>, T) -> BOOL", "RANGE_CONTAINS(RANGE<T>, RANGE<T>) -> BOOL"],
        range_contains),
    Function::udf(Family::Range, &["RANGE_END(RANGE<T>) -> T"], range_end),
    Function::udf(Family::Range, &["RANGE_INTERSECT(RANGE<T>, RANGE<T>) -> RANGE<T>"], range_intersect),
    Function::udf(Family::Range, &["RANGE_OVERLAPS(RANGE<T>, RANGE<T>) -> BOOL"], range_overlaps),
    Function::udf(Family::Range, &["RANGE_START(RANGE<T>) -> T"], range_start),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_parse_with_unbounded_ends_and_ordered_bounds() {
        let d = DataType::Date32;
        assert_eq!(
            parse_literal(&d, "[1970-01-02, UNBOUNDED)").unwrap(),
            (Some(1), None)
        );
        assert_eq!(parse_literal(&d, "[NULL, NULL)").unwrap(), (None, None));
        for bad in [
            "(1970-01-01, 1970-01-02)",
            "[1970-01-02, 1970-01-01)",
            "[x, y)",
        ] {
            assert!(parse_literal(&d, bad).is_err(), "{bad}");
        }
        let ts = element_of_name("TIMESTAMP").unwrap();
        assert_eq!(
            parse_literal(&ts, "[1970-01-01 00:00:01+00, 1970-01-01 00:00:02+00)").unwrap(),
            (Some(1_000_000), Some(2_000_000))
        );
    }

    #[test]
    fn containment_overlap_and_intersection_treat_unbounded_as_infinite() {
        let r = (Some(10), Some(20));
        assert!(contains_value(r, 10) && !contains_value(r, 20));
        assert!(contains_value((None, None), i64::MIN));
        assert!(contains_range((None, Some(30)), r));
        assert!(!contains_range(r, (Some(10), None)));
        assert!(!overlaps(r, (Some(20), Some(30))));
        assert!(overlaps(r, (None, Some(11))));
        assert_eq!(intersect(r, (Some(15), None)), (Some(15), Some(20)));
    }
}

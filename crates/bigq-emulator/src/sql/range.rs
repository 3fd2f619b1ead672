//! RANGE: values kept as a struct of `start` and `end` of the element type (DATE, DATETIME or
//! TIMESTAMP; a NULL bound is UNBOUNDED), the layout BigQuery's Storage Read sends, its two
//! fields marked in their metadata so that a RANGE is told apart from a user's
//! `STRUCT<start DATE, end DATE>` (the mark is part of the Arrow type, so it survives every
//! expression DataFusion passes the type through).
//!
//! GoogleSQL writes the type `RANGE<DATE>`, which sqlparser does not parse: [`pre_parse`]
//! rewrites it, outside strings and comments, to a type name (`BIGQ_RANGE_DATE`, for DDL) or,
//! before a string literal, to a call of the literal's parser (`bigq_range_literal_date`).
//! The functions are DataFusion scalar UDFs: `RANGE` (renamed `bigq_range`, DataFusion has
//! its own `range`), `RANGE_START`, `RANGE_END`, `RANGE_CONTAINS` (of a value or a range),
//! `RANGE_OVERLAPS`, `RANGE_INTERSECT` and `GENERATE_RANGE_ARRAY`.

use std::borrow::Cow;
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
use datafusion::prelude::SessionContext;

use super::types::UTC;
use super::udf::{arrays, result};

/// RANGE columns are structs whose two bounds are marked (bigq-codec writes them as text).
pub use bigq_codec::json::encode::{RANGE_KEY, range_element, range_type};

/// The element types a RANGE may have, by their GoogleSQL names.
fn element_of_name(name: &str) -> Option<DataType> {
    Some(match name.to_ascii_uppercase().as_str() {
        "DATE" => DataType::Date32,
        "DATETIME" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "TIMESTAMP" => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        _ => return None,
    })
}

/// The RANGE element type a value of type `t` converts to (TIMESTAMP literals may come as
/// nanoseconds).
fn canonical_element(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Date32 | DataType::Date64 => Some(DataType::Date32),
        DataType::Timestamp(_, None) => element_of_name("DATETIME"),
        DataType::Timestamp(_, Some(_)) => element_of_name("TIMESTAMP"),
        _ => None,
    }
}

/// The GoogleSQL name of a RANGE element type.
fn element_name(t: &DataType) -> &'static str {
    match t {
        DataType::Date32 => "DATE",
        DataType::Timestamp(_, None) => "DATETIME",
        _ => "TIMESTAMP",
    }
}

/// The element type named by a `BIGQ_RANGE_<T>` type name (what [`pre_parse`] writes for
/// `RANGE<T>`), as its BigQuery name.
pub fn sql_type_element(type_name: &str) -> Option<&'static str> {
    let t = type_name.to_ascii_uppercase();
    let el = t.strip_prefix("BIGQ_RANGE_")?;
    element_of_name(el).map(|d| element_name(&d))
}

// ---------------------------------------------------------------------------------------
// Syntax: RANGE<T> outside strings and comments.

/// Rewrites `RANGE<T> 'literal'` to `bigq_range_literal_t('literal')`, any other
/// `RANGE<T>` to the type name `BIGQ_RANGE_T`, and the table function
/// `RANGE_SESSIONIZE(TABLE t, 'column', ['partition', ...] [, 'MEETS' | 'OVERLAPS'])` to a
/// subquery with window functions (see `sessionize`), leaving strings, quoted names and
/// comments alone. Text without either comes back borrowed. The error is BigQuery's for a
/// mode that is neither.
pub fn pre_parse(sql: &str) -> Result<Cow<'_, str>, String> {
    let b = sql.as_bytes();
    // Every query comes through here: most have no RANGE and are not copied at all.
    let at = |i: usize, word: &str| {
        b.get(i..i + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word.as_bytes()))
    };
    if !(0..b.len()).any(|i| at(i, "RANGE")) {
        return Ok(Cow::Borrowed(sql));
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => {
                i = quoted_end(b, i);
                continue;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = line_end(b, i);
                continue;
            }
            b'#' => {
                i = line_end(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                continue;
            }
            _ => {}
        }
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if boundary
            && at(i, "RANGE_SESSIONIZE")
            && let Some(call) = SessionizeCall::at(sql, i + "RANGE_SESSIONIZE".len())
        {
            out.push_str(&sql[copied..i]);
            out.push_str(&sessionize(sql, &call)?);
            i = call.end;
            copied = i;
            continue;
        }
        if boundary
            && at(i, "RANGE")
            && let Some((element, after)) = range_type_at(b, i + 5)
        {
            out.push_str(&sql[copied..i]);
            let lit = skip_space(b, after);
            if matches!(b.get(lit), Some(b'\'' | b'"')) {
                let end = quoted_end(b, lit);
                out.push_str("bigq_range_literal_");
                out.push_str(&element.to_ascii_lowercase());
                out.push('(');
                out.push_str(&sql[lit..end]);
                out.push(')');
                i = end;
            } else {
                out.push_str("BIGQ_RANGE_");
                out.push_str(&element);
                i = after;
            }
            copied = i;
            continue;
        }
        i += 1;
    }
    if copied == 0 {
        return Ok(Cow::Borrowed(sql));
    }
    out.push_str(&sql[copied..]);
    Ok(Cow::Owned(out))
}

/// The arguments of a `RANGE_SESSIONIZE(TABLE t, 'column', ['p', ...] [, 'mode'])` call.
struct SessionizeCall<'a> {
    table: &'a str,
    column: &'a str,
    partitions: Vec<&'a str>,
    /// The mode literal's text and its position in the statement.
    mode: Option<(&'a str, usize)>,
    /// Where the call ends (after its `)`).
    end: usize,
}

impl<'a> SessionizeCall<'a> {
    /// The call whose `(` follows `i`, if the text there is one.
    fn at(sql: &'a str, i: usize) -> Option<Self> {
        let b = sql.as_bytes();
        let expect =
            |i: usize, c: u8| (b.get(skip_space(b, i)) == Some(&c)).then(|| skip_space(b, i) + 1);
        let mut i = expect(i, b'(')?;
        i = skip_space(b, i);
        if !sql.get(i..i + 5)?.eq_ignore_ascii_case("TABLE") || !b.get(i + 5)?.is_ascii_whitespace()
        {
            return None;
        }
        let start = skip_space(b, i + 5);
        let mut end = start;
        while end < b.len()
            && (b[end].is_ascii_alphanumeric() || matches!(b[end], b'_' | b'.' | b'-' | b'`'))
        {
            end = if b[end] == b'`' {
                quoted_end(b, end)
            } else {
                end + 1
            };
        }
        let table = &sql[start..end];
        if table.is_empty() {
            return None;
        }
        let literal = |i: usize| -> Option<(&'a str, usize, usize)> {
            let at = skip_space(b, i);
            if !matches!(b.get(at), Some(b'\'' | b'"')) {
                return None;
            }
            let end = quoted_end(b, at);
            Some((sql.get(at + 1..end - 1)?, at, end))
        };
        i = expect(end, b',')?;
        let (column, _, after) = literal(i)?;
        i = expect(after, b',')?;
        i = expect(i, b'[')?;
        let mut partitions = Vec::new();
        if let Some(close) = expect(i, b']') {
            i = close;
        } else {
            loop {
                let (p, _, after) = literal(i)?;
                partitions.push(p);
                if let Some(next) = expect(after, b',') {
                    i = next;
                } else {
                    i = expect(after, b']')?;
                    break;
                }
            }
        }
        let mut mode = None;
        if let Some(next) = expect(i, b',') {
            let (m, at, after) = literal(next)?;
            mode = Some((m, at));
            i = after;
        }
        let end = expect(i, b')')?;
        Some(SessionizeCall {
            table,
            column,
            partitions,
            mode,
            end,
        })
    }
}

/// `RANGE_SESSIONIZE` as window functions: rows numbered in their range's order within
/// each partition (an unbounded or NULL start first, an unbounded or NULL end last); a row
/// starts a new session unless its start is at or before (MEETS, the default) or before
/// (OVERLAPS) the latest end of the rows before it. A missing end (UNBOUNDED, or a NULL
/// range, whose bounds BigQuery reads as unbounded too) is later than any start, so every
/// row after it joins its session, and a missing start (after the first row) is before any
/// end. Each row gets the range from its session's first start to its last end (UNBOUNDED
/// where a range of the session is; the NULL ranges' bounds do not count there), NULL for a
/// NULL range. The result has the table's columns and `session_range`.
fn sessionize(sql: &str, call: &SessionizeCall<'_>) -> Result<String, String> {
    let before_or_at = match call.mode {
        None => "<=",
        Some((m, _)) if m.eq_ignore_ascii_case("MEETS") => "<=",
        Some((m, _)) if m.eq_ignore_ascii_case("OVERLAPS") => "<",
        Some((m, at)) => {
            let line = sql[..at].matches('\n').count() + 1;
            let col = at - sql[..at].rfind('\n').map_or(0, |k| k + 1) + 1;
            return Err(format!(
                "Could not cast literal \"{m}\" to type RANGE_SESSIONIZE_MODE at [{line}:{col}]"
            ));
        }
    };
    let quote = |n: &str| format!("`{}`", n.replace('`', ""));
    let parts = call.partitions.iter().map(|p| quote(p)).collect::<Vec<_>>();
    let partition_by = |extra: Option<&str>| {
        let cols = parts
            .iter()
            .map(String::as_str)
            .chain(extra)
            .collect::<Vec<_>>();
        if cols.is_empty() {
            String::new()
        } else {
            format!("PARTITION BY {} ", cols.join(", "))
        }
    };
    let c = quote(call.column);
    let (inner, outer) = (partition_by(None), partition_by(Some("__bigq_session")));
    // One numbering, so that the two windows over the rows before each row agree on ties.
    let before =
        format!("{inner}ORDER BY __bigq_row ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING");
    Ok(format!(
        "(SELECT * EXCEPT (__bigq_start, __bigq_end, __bigq_row, __bigq_new, __bigq_session), \
         CASE WHEN {c} IS NULL THEN NULL ELSE bigq_range(\
         CASE WHEN COUNT(CASE WHEN {c} IS NOT NULL AND __bigq_start IS NULL THEN 1 END) \
         OVER ({outer}) > 0 THEN NULL ELSE MIN(__bigq_start) OVER ({outer}) END, \
         CASE WHEN COUNT(CASE WHEN {c} IS NOT NULL AND __bigq_end IS NULL THEN 1 END) \
         OVER ({outer}) > 0 THEN NULL ELSE MAX(__bigq_end) OVER ({outer}) END) END \
         AS session_range \
         FROM (SELECT *, SUM(__bigq_new) OVER ({inner}ORDER BY __bigq_row \
         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS __bigq_session \
         FROM (SELECT *, CASE WHEN COUNT(1) OVER ({before}) = 0 THEN 1 \
         WHEN COUNT(1) OVER ({before}) > COUNT(__bigq_end) OVER ({before}) THEN 0 \
         WHEN __bigq_start IS NULL THEN 0 \
         WHEN __bigq_start {before_or_at} MAX(__bigq_end) OVER ({before}) THEN 0 \
         ELSE 1 END AS __bigq_new \
         FROM (SELECT *, range_start({c}) AS __bigq_start, range_end({c}) AS __bigq_end, \
         ROW_NUMBER() OVER ({inner}ORDER BY range_start({c}) NULLS FIRST, \
         range_end({c}) NULLS LAST) AS __bigq_row \
         FROM {table}) AS __bigq_ranges) AS __bigq_starts) AS __bigq_sessions)",
        table = call.table,
    ))
}

/// `<T>` (with spaces allowed) at `i`, T a RANGE element type: its upper-case name and the
/// position after `>`.
fn range_type_at(b: &[u8], i: usize) -> Option<(String, usize)> {
    let i = skip_space(b, i);
    if b.get(i) != Some(&b'<') {
        return None;
    }
    let start = skip_space(b, i + 1);
    let mut end = start;
    while end < b.len() && b[end].is_ascii_alphabetic() {
        end += 1;
    }
    let name = std::str::from_utf8(&b[start..end])
        .ok()?
        .to_ascii_uppercase();
    element_of_name(&name)?;
    let close = skip_space(b, end);
    (b.get(close) == Some(&b'>')).then_some((name, close + 1))
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |k| i + k)
}

/// The position after the quoted text starting at `i` (single, double or triple quotes, or
/// backquotes; backslash escapes skipped).
fn quoted_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let triple = q != b'`' && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        if b[j] == b'\\' && q != b'`' {
            j += 2;
            continue;
        }
        if b[j] == q {
            if !triple {
                return j + 1;
            }
            if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                return j + 3;
            }
        }
        j += 1;
    }
    b.len()
}

// ---------------------------------------------------------------------------------------
// Values.

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
    let (a, b) = inner.split_once(',').ok_or_else(bad)?;
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
                let second = if range_element(&args[1]).is_some() {
                    args[1].clone()
                } else {
                    el
                };
                Ok(vec![args[0].clone(), second])
            }
            Op::Overlaps | Op::Intersect => {
                arity(name, args, &[2])?;
                self.first_element(args)?;
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
            Op::GenerateArray => generate_range_array(&a, n)?,
        };
        result(out, args)
    }
}

/// `GENERATE_RANGE_ARRAY(range, step [, include_last_partial_range = TRUE])`.
fn generate_range_array(a: &[ArrayRef], n: usize) -> DfResult<ArrayRef> {
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
        let (Some((s, e)), true) = (r, steps.is_valid(i)) else {
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
        let include_partial = partial.is_none_or(|p| p.is_null(i) || p.value(i));
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

/// Registers the RANGE functions on `ctx`.
pub fn register(ctx: &SessionContext) {
    for f in [
        RangeFn::new("bigq_range", Op::Make),
        RangeFn::new("bigq_range_literal_date", Op::Literal("DATE")),
        RangeFn::new("bigq_range_literal_datetime", Op::Literal("DATETIME")),
        RangeFn::new("bigq_range_literal_timestamp", Op::Literal("TIMESTAMP")),
        RangeFn::new("range_start", Op::Start),
        RangeFn::new("range_end", Op::End),
        RangeFn::new("range_contains", Op::Contains),
        RangeFn::new("range_overlaps", Op::Overlaps),
        RangeFn::new("range_intersect", Op::Intersect),
        RangeFn::new("generate_range_array", Op::GenerateArray),
    ] {
        ctx.register_udf(ScalarUDF::new_from_impl(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_types_are_rewritten_outside_strings_and_comments() {
        let pre_parse = |s| pre_parse(s).unwrap();
        assert_eq!(
            pre_parse("SELECT RANGE<DATE> '[2024-01-01, UNBOUNDED)' AS r"),
            "SELECT bigq_range_literal_date('[2024-01-01, UNBOUNDED)') AS r"
        );
        assert_eq!(
            pre_parse("CREATE TABLE t (d range < timestamp >, x INT64)"),
            "CREATE TABLE t (d BIGQ_RANGE_TIMESTAMP, x INT64)"
        );
        assert_eq!(
            pre_parse("VALUES (RANGE<DATETIME> \"[2024-01-01 00:00:00, NULL)\")"),
            "VALUES (bigq_range_literal_datetime(\"[2024-01-01 00:00:00, NULL)\"))"
        );
        for untouched in [
            "SELECT 'RANGE<DATE> x'",
            "SELECT 1 -- RANGE<DATE>\n",
            "SELECT `RANGE<DATE>`",
            "SELECT ARANGE<DATE>",
            "SELECT RANGE<INT64> '[1, 2)'",
            "SELECT a < b FROM t WINDOW w AS (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)",
        ] {
            assert_eq!(pre_parse(untouched), untouched);
        }
    }

    #[test]
    fn range_sessionize_becomes_a_subquery_or_names_a_bad_mode() {
        let sql = "SELECT * FROM RANGE_SESSIONIZE(\n  TABLE `p.d.t`, 'r', ['a', \"b\"], 'OVERLAPS') ORDER BY a";
        let out = pre_parse(sql).unwrap();
        assert!(out.starts_with("SELECT * FROM (SELECT * EXCEPT"), "{out}");
        assert!(
            out.ends_with(
                "FROM `p.d.t`) AS __bigq_ranges) AS __bigq_starts) AS __bigq_sessions) ORDER BY a"
            ),
            "{out}"
        );
        assert!(out.contains("PARTITION BY `a`, `b` ORDER BY"), "{out}");
        assert!(out.contains("__bigq_start < MAX(__bigq_end)"), "{out}");
        let no_partitions = pre_parse("SELECT * FROM RANGE_SESSIONIZE(TABLE t, 'r', [])").unwrap();
        assert!(!no_partitions.contains("PARTITION BY `"), "{no_partitions}");
        assert!(
            no_partitions.contains("__bigq_start <= MAX"),
            "{no_partitions}"
        );
        let e = pre_parse("SELECT * FROM RANGE_SESSIONIZE(\n TABLE t, 'r', ['a'],\n  'BOGUS')")
            .unwrap_err();
        assert_eq!(
            e,
            "Could not cast literal \"BOGUS\" to type RANGE_SESSIONIZE_MODE at [3:3]"
        );
    }

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

//! Array functions: `ARRAY(subquery)`, `ARRAY_FIRST`/`LAST`/`SLICE` with BigQuery's offsets,
//! `GENERATE_DATE_ARRAY`/`GENERATE_TIMESTAMP_ARRAY` as DataFusion's `range` over dates and
//! timestamps, and `GENERATE_ARRAY` as DataFusion's `generate_series`, but left for execution.
//!
//! `generate_series` is immutable, so DataFusion's simplifier evaluates a call with constant
//! bounds while planning and puts the whole array into the plan as one list literal. The
//! planner then names every expression over that literal by printing it, once per
//! optimizer pass: `FROM UNNEST(GENERATE_ARRAY(1, 200000))` spent about 60 ms formatting
//! 200,000 integers before its first row, most of such a query's time. Declared volatile,
//! the call stays a call and the array is made once, when the query runs.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanBuilder, ListArray, Scalar, UInt64Array,
};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::compute::kernels::cmp::eq;
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Field, Int64Type};
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr};

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, cast, function_args, plain_select, string};
use crate::sql::parse::parse;

/// The name the rewrite gives `GENERATE_ARRAY`.
const GENERATE_ARRAY: &str = "bq_generate_array";

/// `generate_series` with a volatile signature.
#[derive(Debug, PartialEq, Eq, Hash)]
struct GenerateArray {
    series: Arc<ScalarUDF>,
    signature: Signature,
}

/// The element type of `GENERATE_ARRAY` of `args`: FLOAT64 if any is, else NUMERIC (or
/// BIGNUMERIC) if any is, else INT64.
fn series_type(args: &[DataType]) -> DfResult<DataType> {
    let mut out = DataType::Int64;
    for t in args {
        match t {
            DataType::Null => {}
            t if t.is_integer() => {}
            DataType::Float32 | DataType::Float64 => out = DataType::Float64,
            DataType::Decimal256(..) if out != DataType::Float64 => {
                out = DataType::Decimal256(76, 38)
            }
            DataType::Decimal128(..)
                if !matches!(out, DataType::Float64 | DataType::Decimal256(..)) =>
            {
                out = DataType::Decimal128(38, 9)
            }
            DataType::Decimal128(..) | DataType::Decimal256(..) => {}
            other => {
                return Err(DataFusionError::Plan(format!(
                    "No matching signature for function GENERATE_ARRAY for argument type {}",
                    super::row::bq_type_name(other)
                )));
            }
        }
    }
    Ok(out)
}

/// At most this many elements in one generated array.
const MAX_SERIES: usize = 10_000_000;

fn series_error(msg: &str) -> DataFusionError {
    DataFusionError::Execution(format!("GENERATE_ARRAY: {msg}"))
}

/// The series of each row of FLOAT64 bounds and step (NULL for a NULL argument).
fn float_series(a: &[ArrayRef], n: usize) -> DfResult<ArrayRef> {
    use datafusion::arrow::array::{Float64Builder, ListBuilder};
    use datafusion::arrow::datatypes::Float64Type;
    let cols: Vec<_> = a.iter().map(|c| c.as_primitive::<Float64Type>()).collect();
    let mut out = ListBuilder::new(Float64Builder::new());
    for i in 0..n {
        let v = |k: usize| {
            cols.get(k)
                .map_or(Some(1.0), |c| c.is_valid(i).then(|| c.value(i)))
        };
        let (Some(start), Some(end), Some(step)) = (v(0), v(1), v(2)) else {
            out.append_null();
            continue;
        };
        if start.is_nan() || end.is_nan() || step.is_nan() {
            return Err(series_error("the start, end and step cannot be NaN"));
        }
        if step == 0.0 {
            return Err(series_error("Sequence step cannot be 0."));
        }
        if !(start.is_finite() && end.is_finite() && step.is_finite()) {
            return Err(series_error("the start, end and step must be finite"));
        }
        let count = ((end - start) / step).floor();
        if count >= 0.0 {
            if count >= MAX_SERIES as f64 {
                return Err(series_error("the array would have too many elements"));
            }
            for k in 0..=(count as usize) {
                out.values().append_value(start + k as f64 * step);
            }
        }
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

/// The series of each row of NUMERIC (or BIGNUMERIC) bounds and step, computed exactly.
fn decimal_series(a: &[ArrayRef], n: usize, t: &DataType) -> DfResult<ArrayRef> {
    use datafusion::arrow::array::{Decimal128Builder, Decimal256Builder, ListBuilder};
    use datafusion::arrow::datatypes::{Decimal128Type, Decimal256Type, i256};
    let step_of = |start: i256, end: i256, step: i256| -> DfResult<Option<usize>> {
        if step == i256::ZERO {
            return Err(series_error("Sequence step cannot be 0."));
        }
        let count = (end - start) / step;
        if count < i256::ZERO {
            return Ok(None);
        }
        count
            .to_i128()
            .and_then(|c| usize::try_from(c).ok())
            .filter(|c| *c < MAX_SERIES)
            .map(Some)
            .ok_or_else(|| series_error("the array would have too many elements"))
    };
    match t {
        DataType::Decimal256(p, s) => {
            let cols: Vec<_> = a
                .iter()
                .map(|c| c.as_primitive::<Decimal256Type>())
                .collect();
            let one = i256::from_i128(10i128.pow(*s as u32));
            let mut out =
                ListBuilder::new(Decimal256Builder::new().with_precision_and_scale(*p, *s)?);
            for i in 0..n {
                let v = |k: usize| {
                    cols.get(k)
                        .map_or(Some(one), |c| c.is_valid(i).then(|| c.value(i)))
                };
                let (Some(start), Some(end), Some(step)) = (v(0), v(1), v(2)) else {
                    out.append_null();
                    continue;
                };
                if let Some(count) = step_of(start, end, step)? {
                    for k in 0..=count {
                        out.values()
                            .append_value(start + step * i256::from_i128(k as i128));
                    }
                }
                out.append(true);
            }
            Ok(Arc::new(out.finish()))
        }
        DataType::Decimal128(p, s) => {
            let cols: Vec<_> = a
                .iter()
                .map(|c| c.as_primitive::<Decimal128Type>())
                .collect();
            let one = 10i128.pow(*s as u32);
            let mut out =
                ListBuilder::new(Decimal128Builder::new().with_precision_and_scale(*p, *s)?);
            for i in 0..n {
                let v = |k: usize| {
                    cols.get(k)
                        .map_or(Some(one), |c| c.is_valid(i).then(|| c.value(i)))
                };
                let (Some(start), Some(end), Some(step)) = (v(0), v(1), v(2)) else {
                    out.append_null();
                    continue;
                };
                let wide = |x: i128| i256::from_i128(x);
                if let Some(count) = step_of(wide(start), wide(end), wide(step))? {
                    for k in 0..=count {
                        let x = (k as i128)
                            .checked_mul(step)
                            .and_then(|d| start.checked_add(d))
                            .ok_or_else(|| series_error("a value is out of range"))?;
                        out.values().append_value(x);
                    }
                }
                out.append(true);
            }
            Ok(Arc::new(out.finish()))
        }
        other => Err(series_error(&format!("no series of {other}"))),
    }
}

impl ScalarUDFImpl for GenerateArray {
    fn name(&self) -> &str {
        GENERATE_ARRAY
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        if !(2..=3).contains(&args.len()) {
            return Err(DataFusionError::Plan(format!(
                "No matching signature for function GENERATE_ARRAY with {} arguments",
                args.len()
            )));
        }
        let t = series_type(args)?;
        Ok(vec![t; args.len()])
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        let t = series_type(args)?;
        Ok(DataType::List(Arc::new(Field::new("item", t, true))))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let t = series_type(&args.args.iter().map(|a| a.data_type()).collect::<Vec<_>>())?;
        if t == DataType::Int64 {
            return self.series.invoke_with_args(args).map_err(|e| {
                if e.to_string().contains("step can't be 0") {
                    series_error("Sequence step cannot be 0.")
                } else {
                    e
                }
            });
        }
        let (arrays, n) = super::udf::arrays(&args.args)?;
        let out = if t == DataType::Float64 {
            float_series(&arrays, n)?
        } else {
            decimal_series(&arrays, n, &t)?
        };
        super::udf::result(out, &args.args)
    }
}

/// `bq_generate_array`: `generate_series` with a volatile signature, and BigQuery's
/// FLOAT64 and NUMERIC series beside its INT64 ones.
pub(crate) fn bq_generate_array() -> ScalarUDF {
    let series = datafusion::functions_nested::range::gen_series_udf();
    let signature = Signature::user_defined(Volatility::Volatile);
    ScalarUDF::new_from_impl(GenerateArray { series, signature })
}

/// `GENERATE_ARRAY(start, end [, step])` as `bq_generate_array`.
pub(crate) fn generate_array(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let args = function_args(f).ok_or_else(|| BqError::unsupported("GENERATE_ARRAY arguments"))?;
    Ok(Some(call(GENERATE_ARRAY, args)))
}

/// `ARRAY(SELECT x ...)`: the one column aggregated, `[]` when there are no rows.
pub(crate) fn array(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let ast::FunctionArguments::Subquery(q) = &f.args else {
        return Ok(None);
    };
    if many_columns(&q.body) {
        return Err(BqError::invalid_query(
            "ARRAY subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values",
        ));
    }
    if let Some(direct) = aggregated_in_place(q)? {
        return Ok(Some(Expr::Subquery(direct)));
    }
    let sql = match ordered(q) {
        // The rows' order is the array's: the ORDER BY keys become columns of the subquery,
        // and the aggregate orders by them (a derived table's order is not kept).
        Some((inner, keys)) => {
            let columns: String = (1..=keys.len()).map(|i| format!(", __k{i}")).collect();
            let order: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(i, o)| format!("__array.__k{}{}", i + 1, o))
                .collect();
            format!(
                "SELECT coalesce(array_agg(__array.__v ORDER BY {}), make_array()) FROM ({inner}) AS __array(__v{columns})",
                order.join(", ")
            )
        }
        None => match branches_numbered(q) {
            // `ARRAY(SELECT a UNION ALL SELECT b ..)`: the rows in the order the branches
            // are written, as BigQuery gives them (DataFusion runs the branches at once).
            Some(numbered) => format!(
                "SELECT coalesce(array_agg(__array.__v ORDER BY __array.__b), make_array()) FROM ({numbered}) AS __array(__v, __b)"
            ),
            None => format!(
                "SELECT coalesce(array_agg(__array.__v), make_array()) FROM ({q}) AS __array(__v)"
            ),
        },
    };
    match parse(&sql)?.pop() {
        Some(ast::Statement::Query(wrapper)) => Ok(Some(Expr::Subquery(wrapper))),
        _ => Err(BqError::internal("ARRAY subquery")),
    }
}

/// A subquery that is a UNION ALL of one-column SELECTs, each with its branch's number as
/// a second column; `None` for any other query.
fn branches_numbered(q: &ast::Query) -> Option<ast::Query> {
    fn number(body: &mut ast::SetExpr, next: &mut u64) -> bool {
        match body {
            ast::SetExpr::Select(s) if s.value_table_mode.is_none() && s.projection.len() == 1 => {
                *next += 1;
                s.projection.push(ast::SelectItem::ExprWithAlias {
                    expr: Expr::value(ast::Value::Number(next.to_string(), false)),
                    alias: ast::Ident::new("__b"),
                });
                true
            }
            ast::SetExpr::SetOperation {
                op: ast::SetOperator::Union,
                set_quantifier: ast::SetQuantifier::All,
                left,
                right,
            } => number(left, next) && number(right, next),
            _ => false,
        }
    }
    if !matches!(q.body.as_ref(), ast::SetExpr::SetOperation { .. }) {
        return None;
    }
    let mut numbered = q.clone();
    let mut next = 0;
    number(numbered.body.as_mut(), &mut next).then_some(numbered)
}

/// Whether a SELECT of a query body has more than one column (and is no `SELECT AS STRUCT`).
fn many_columns(body: &ast::SetExpr) -> bool {
    match body {
        ast::SetExpr::Select(s) => s.value_table_mode.is_none() && s.projection.len() > 1,
        ast::SetExpr::SetOperation { left, right, .. } => many_columns(left) || many_columns(right),
        ast::SetExpr::Query(q) => many_columns(&q.body),
        _ => false,
    }
}

/// A subquery that is one plain SELECT of one column (no WITH, DISTINCT, GROUP BY, HAVING,
/// window, LIMIT or call that may be an aggregate) with its column aggregated in its own
/// SELECT list, in its ORDER BY's order: a correlated subquery stays one DataFusion
/// decorrelates.
fn aggregated_in_place(q: &ast::Query) -> BqResult<Option<Box<ast::Query>>> {
    // `SELECT DISTINCT x .. [ORDER BY x]`: the distinct values aggregated in place.
    if let ast::SetExpr::Select(s) = q.body.as_ref()
        && matches!(s.distinct, Some(ast::Distinct::Distinct))
    {
        let mut plain = q.clone();
        if let ast::SetExpr::Select(s) = plain.body.as_mut() {
            s.distinct = None;
        }
        return distinct_in_place(&plain);
    }
    let Some(s) = plain_select(q) else {
        return Ok(None);
    };
    let value = match s.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e)] | [ast::SelectItem::ExprWithAlias { expr: e, .. }] => e,
        _ => return Ok(None),
    };
    let sql = format!("{value}");
    if sql.contains('(') {
        return Ok(None);
    }
    let keys = match ordered(q) {
        Some((inner, options)) => {
            let ast::SetExpr::Select(with_keys) = inner.body.as_ref() else {
                return Ok(None);
            };
            with_keys.projection[1..]
                .iter()
                .zip(options)
                .filter_map(|(item, o)| match item {
                    ast::SelectItem::ExprWithAlias { expr, .. } => Some(format!("{expr}{o}")),
                    _ => None,
                })
                .collect::<Vec<_>>()
        }
        None if q.order_by.is_some() => return Ok(None),
        None => Vec::new(),
    };
    if keys.iter().any(|k| k.contains('(')) {
        return Ok(None);
    }
    let order = if keys.is_empty() {
        String::new()
    } else {
        format!(" ORDER BY {}", keys.join(", "))
    };
    in_place(q, &format!("{value}{order}")).map(Some)
}

/// [`aggregated_in_place`] of a DISTINCT subquery (given without its DISTINCT), when it is
/// ordered by its value or not at all: `array_agg(DISTINCT x ORDER BY x)`.
fn distinct_in_place(q: &ast::Query) -> BqResult<Option<Box<ast::Query>>> {
    let Some(s) = plain_select(q) else {
        return Ok(None);
    };
    let value = match s.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e)] => e.clone(),
        [ast::SelectItem::ExprWithAlias { expr, .. }] => expr.clone(),
        _ => return Ok(None),
    };
    let alias = match s.projection.as_slice() {
        [ast::SelectItem::ExprWithAlias { alias, .. }] => Some(alias.value.clone()),
        _ => None,
    };
    let sql = format!("{value}");
    if sql.contains('(') {
        return Ok(None);
    }
    let order = match &q.order_by {
        None => String::new(),
        Some(o) => match &o.kind {
            ast::OrderByKind::Expressions(keys) if keys.len() == 1 => {
                let k = &keys[0];
                let key = k.expr.to_string();
                let same = key == sql || alias.as_deref() == Some(key.as_str()) || key == "1";
                if !same {
                    return Ok(None);
                }
                format!(" ORDER BY {sql}{}", k.options)
            }
            _ => return Ok(None),
        },
    };
    in_place(q, &format!("DISTINCT {sql}{order}")).map(Some)
}

/// `q` (unordered) with its one SELECT item `coalesce(array_agg(<aggregated>),
/// make_array())`.
fn in_place(q: &ast::Query, aggregated: &str) -> BqResult<Box<ast::Query>> {
    let item = match parse(&format!(
        "SELECT coalesce(array_agg({aggregated}), make_array())"
    ))?
    .pop()
    {
        Some(ast::Statement::Query(t)) => match *t.body {
            ast::SetExpr::Select(t) => t.projection,
            _ => return Err(BqError::internal("ARRAY subquery")),
        },
        _ => return Err(BqError::internal("ARRAY subquery")),
    };
    let mut out = Box::new(q.clone());
    out.order_by = None;
    if let ast::SetExpr::Select(sel) = out.body.as_mut() {
        sel.projection = item;
    }
    Ok(out)
}

/// A subquery of one column with an ORDER BY, with its keys added as columns (a key naming
/// the column, by alias or as `1`, is the column's expression), and the keys' options.
fn ordered(q: &ast::Query) -> Option<(ast::Query, Vec<ast::OrderByOptions>)> {
    let order = q.order_by.as_ref()?;
    let ast::OrderByKind::Expressions(keys) = &order.kind else {
        return None;
    };
    let mut inner = q.clone();
    let ast::SetExpr::Select(select) = inner.body.as_mut() else {
        return None;
    };
    let (value, alias) = match select.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e)] => (e.clone(), None),
        [ast::SelectItem::ExprWithAlias { expr, alias }] => (expr.clone(), Some(alias.clone())),
        _ => return None,
    };
    for (i, key) in keys.iter().enumerate() {
        let names_value = match &key.expr {
            Expr::Identifier(id) => alias
                .as_ref()
                .is_some_and(|a| a.value.eq_ignore_ascii_case(&id.value)),
            Expr::Value(v) => matches!(&v.value, ast::Value::Number(n, _) if n == "1"),
            _ => false,
        };
        let expr = if names_value {
            value.clone()
        } else {
            key.expr.clone()
        };
        select.projection.push(ast::SelectItem::ExprWithAlias {
            expr,
            alias: ast::Ident::new(format!("__k{}", i + 1)),
        });
    }
    Some((inner, keys.iter().map(|k| k.options).collect()))
}

/// What a [`Pick`] takes of each array.
#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Part {
    At,
    SafeAt,
    First,
    Last,
    Slice,
}

/// `ARRAY_FIRST(a)`, `ARRAY_LAST(a)` (an error for an empty array) and
/// `ARRAY_SLICE(a, start, end)` (0-based offsets, negative ones from the end, both
/// inclusive and clamped to the array).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Pick {
    part: Part,
    signature: Signature,
}

impl Pick {
    fn shown(&self) -> &'static str {
        match self.part {
            Part::At | Part::SafeAt => "Array index",
            Part::First => "ARRAY_FIRST",
            Part::Last => "ARRAY_LAST",
            Part::Slice => "ARRAY_SLICE",
        }
    }
}

impl ScalarUDFImpl for Pick {
    fn name(&self) -> &str {
        match self.part {
            Part::At => "bigq_array_at",
            Part::SafeAt => "bigq_array_safe_at",
            Part::First => "array_first",
            Part::Last => "array_last",
            Part::Slice => "array_slice_offsets",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        match (&args[0], self.part) {
            (DataType::List(_), Part::Slice) => Ok(args[0].clone()),
            (DataType::List(f), _) => Ok(f.data_type().clone()),
            (DataType::Null, _) => Ok(DataType::Null),
            (other, _) => Err(DataFusionError::Plan(format!(
                "{} takes an ARRAY, got {other}",
                self.shown()
            ))),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let out = args.return_field.data_type().clone();
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        if arrays[0].data_type() == &DataType::Null {
            let n = args.number_rows;
            return Ok(ColumnarValue::Array(
                datafusion::arrow::array::new_null_array(&out, n),
            ));
        }
        let lists = arrays[0].as_list::<i32>();
        let at = if matches!(self.part, Part::At | Part::SafeAt) {
            Some(datafusion::arrow::compute::cast(
                &arrays[1],
                &DataType::Int64,
            )?)
        } else {
            None
        };
        let bounds = if self.part == Part::Slice {
            let s = datafusion::arrow::compute::cast(&arrays[1], &DataType::Int64)?;
            let e = datafusion::arrow::compute::cast(&arrays[2], &DataType::Int64)?;
            Some((s, e))
        } else {
            None
        };
        let mut picked: Vec<Option<u64>> = Vec::new();
        let mut offsets = vec![0i32];
        let mut valid = Vec::new();
        for row in 0..lists.len() {
            let start = lists.value_offsets()[row] as i64;
            let len = lists.value_offsets()[row + 1] as i64 - start;
            let null_bound = bounds
                .as_ref()
                .is_some_and(|(s, e)| s.is_null(row) || e.is_null(row))
                || at.as_ref().is_some_and(|i| i.is_null(row));
            if lists.is_null(row) || null_bound {
                if self.part == Part::Slice {
                    offsets.push(picked.len() as i32);
                    valid.push(false);
                } else {
                    picked.push(None);
                }
                continue;
            }
            match (self.part, &bounds) {
                (Part::Slice, Some((s, e))) => {
                    let at = |i: i64| if i < 0 { len + i } else { i };
                    let s = at(s.as_primitive::<Int64Type>().value(row)).max(0);
                    let e = at(e.as_primitive::<Int64Type>().value(row)).min(len - 1);
                    for i in s..=e {
                        picked.push(Some((start + i) as u64));
                    }
                    offsets.push(picked.len() as i32);
                    valid.push(true);
                }
                (Part::SafeAt, _) => {
                    let i = at
                        .as_ref()
                        .map_or(0, |i| i.as_primitive::<Int64Type>().value(row));
                    picked.push((1..=len).contains(&i).then(|| (start + i - 1) as u64));
                }
                (Part::At, _) => {
                    let i = at
                        .as_ref()
                        .map_or(0, |i| i.as_primitive::<Int64Type>().value(row));
                    if i < 1 || i > len {
                        return Err(DataFusionError::Execution(format!(
                            "Array index {} is out of bounds (the array has {len} elements)",
                            i - 1
                        )));
                    }
                    picked.push(Some((start + i - 1) as u64));
                }
                _ if len == 0 => {
                    return Err(DataFusionError::Execution(format!(
                        "{}: the array is empty",
                        self.shown()
                    )));
                }
                (Part::First, _) => picked.push(Some(start as u64)),
                _ => picked.push(Some((start + len - 1) as u64)),
            }
        }
        let taken = take(lists.values().as_ref(), &UInt64Array::from(picked), None)?;
        if self.part != Part::Slice {
            return Ok(ColumnarValue::Array(taken));
        }
        let DataType::List(item) = out else {
            return Err(DataFusionError::Internal("ARRAY_SLICE result".into()));
        };
        let list = ListArray::try_new(
            item,
            OffsetBuffer::new(offsets.into()),
            taken,
            Some(valid.into()),
        )?;
        Ok(ColumnarValue::Array(Arc::new(list)))
    }
}

fn pick(part: Part, args: usize) -> ScalarUDF {
    ScalarUDF::new_from_impl(Pick {
        part,
        signature: Signature::any(args, Volatility::Immutable),
    })
}

/// `bigq_array_at(array, i)`: the element at the 1-based `i`, an error out of bounds.
pub(crate) fn bigq_array_at() -> ScalarUDF {
    pick(Part::At, 2)
}

/// `bigq_array_safe_at(array, i)`: the element at the 1-based `i`, NULL out of bounds
/// (`SAFE_OFFSET` and `SAFE_ORDINAL`; DataFusion's subscripts count negative indexes from
/// the end).
pub(crate) fn bigq_array_safe_at() -> ScalarUDF {
    pick(Part::SafeAt, 2)
}

/// `ARRAY_FIRST(array)`: its first element, an error when it is empty.
pub(crate) fn array_first() -> ScalarUDF {
    pick(Part::First, 1)
}

/// `ARRAY_LAST(array)`: its last element, an error when it is empty.
pub(crate) fn array_last() -> ScalarUDF {
    pick(Part::Last, 1)
}

/// `array_slice_offsets(array, start, end)`, BigQuery's `ARRAY_SLICE`.
pub(crate) fn array_slice_offsets() -> ScalarUDF {
    pick(Part::Slice, 3)
}

/// `ARRAY_SLICE(array, start, end)` as `array_slice_offsets` (DataFusion's `array_slice`
/// counts from 1).
/// `ARRAY_CONCAT(a, ..)`: NULL when any array is NULL, as BigQuery gives (DataFusion's
/// `array_concat` leaves a NULL array out).
pub(crate) fn array_concat(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| !a.is_empty()) else {
        return Ok(None);
    };
    let any_null = args
        .iter()
        .map(|a| Expr::IsNull(Box::new(a.clone())))
        .reduce(|a, b| crate::sql::ast::binary(a, ast::BinaryOperator::Or, b))
        .unwrap_or_else(|| Expr::value(ast::Value::Boolean(false)));
    Ok(Some(Expr::Case {
        case_token: ast::helpers::attached_token::AttachedToken::empty(),
        end_token: ast::helpers::attached_token::AttachedToken::empty(),
        operand: None,
        conditions: vec![ast::CaseWhen {
            condition: any_null,
            result: Expr::value(ast::Value::Null),
        }],
        // DataFusion's name for it, under an alias the rewrite does not match again.
        else_result: Some(Box::new(call("array_cat", args))),
    }))
}

pub(crate) fn array_slice(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let args = function_args(f).ok_or_else(|| BqError::unsupported("ARRAY_SLICE arguments"))?;
    if args.len() != 3 {
        return Err(BqError::invalid_query("ARRAY_SLICE takes three arguments"));
    }
    Ok(Some(call("array_slice_offsets", args)))
}

/// `INTERVAL n unit` as the interval text DataFusion reads (`'-3 days'`); `None` for any
/// other step.
fn step_interval(e: &Expr) -> Option<Expr> {
    let Expr::Interval(iv) = e else {
        return None;
    };
    let n: i64 = match iv.value.as_ref() {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok()?,
            ast::Value::SingleQuotedString(n) => n.trim().parse().ok()?,
            _ => return None,
        },
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => -n.parse::<i64>().ok()?,
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    let unit = iv.leading_field.as_ref()?.to_string().to_ascii_lowercase();
    let (n, unit) = match unit.as_str() {
        "week" => (n * 7, "day"),
        "quarter" => (n * 3, "month"),
        "millisecond" | "microsecond" | "second" | "minute" | "hour" | "day" | "month" | "year" => {
            (n, unit.as_str())
        }
        _ => return None,
    };
    if n == 0 {
        return Some(Expr::value(ast::Value::Null));
    }
    Some(Expr::Interval(ast::Interval {
        value: Box::new(string(&format!("{n} {unit}s"))),
        leading_field: None,
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    }))
}

/// `GENERATE_DATE_ARRAY(start, end [, INTERVAL n unit])` and
/// `GENERATE_TIMESTAMP_ARRAY(start, end, INTERVAL n unit)` as DataFusion's
/// `generate_series` over the bounds cast to DATE or TIMESTAMP (a step of 1 DAY when left
/// out); a zero step is BigQuery's error.
pub(crate) fn generate_date_array(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let mut args =
        function_args(f).ok_or_else(|| BqError::unsupported(format!("{name} arguments")))?;
    let date = name == "GENERATE_DATE_ARRAY";
    if date && args.len() == 2 {
        args.push(Expr::Interval(ast::Interval {
            value: Box::new(string("1 days")),
            leading_field: None,
            leading_precision: None,
            last_field: None,
            fractional_seconds_precision: None,
        }));
    }
    let [s, e, step] = <[Expr; 3]>::try_from(args)
        .map_err(|_| BqError::invalid_query(format!("{name}: wrong number of arguments")))?;
    let step = match step_interval(&step) {
        Some(Expr::Value(_)) => {
            return Err(BqError::invalid_query(format!("{name}: step cannot be 0")));
        }
        Some(iv) => iv,
        None if matches!(step, Expr::Interval(ref iv) if iv.leading_field.is_none()) => step,
        None => {
            return Err(BqError::unsupported(format!(
                "{name} with the step {step} (an INTERVAL literal of one unit is)"
            )));
        }
    };
    let t = if date {
        ast::DataType::Date
    } else {
        ast::DataType::Timestamp(None, ast::TimezoneInfo::Tz)
    };
    Ok(Some(call(
        "generate_series",
        vec![cast(s, t.clone()), cast(e, t), step],
    )))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Array, &["ARRAY_TO_STRING(ARRAY<STRING>, STRING[, STRING]) -> STRING", "ARRAY_TO_STRING(ARRAY<BYTES>, BYTES[, BYTES]) -> BYTES"], super::array_join::array_to_string),
    Function::udf(Family::Array, &["bigq_string_agg_join(ARRAY<STRING>, STRING) -> STRING", "bigq_string_agg_join(ARRAY<BYTES>, BYTES) -> BYTES"], super::array_join::string_agg_join),
    Function::rewrite(Family::Array, &["ARRAY(subquery) -> ARRAY"], array),
    Function::udf(Family::Array, &["bigq_array_at(ARRAY<T>, INT64) -> T"], bigq_array_at),
    Function::udf(Family::Array, &["bigq_array_safe_at(ARRAY<T>, INT64) -> T"], bigq_array_safe_at),
    Function::udf(Family::Array, &["bigq_in_array(T, ARRAY<T>) -> BOOL"], bigq_in_array),
    Function::udf(Family::Array, &["ARRAY_FIRST(ARRAY<T>) -> T"], array_first),
    Function::udf(Family::Array, &["ARRAY_LAST(ARRAY<T>) -> T"], array_last),
    Function::rewrite(Family::Array, &["ARRAY_SLICE(ARRAY<T>, INT64, INT64) -> ARRAY<T>"], array_slice),
    Function::rewrite(Family::Array, &["ARRAY_CONCAT(ARRAY<T>, ...) -> ARRAY<T>"], array_concat),
    Function::udf(Family::Array, &["array_slice_offsets(ARRAY<T>, INT64, INT64) -> ARRAY<T>"], array_slice_offsets),
    Function::rewrite(Family::Array, &["GENERATE_DATE_ARRAY(DATE, DATE[, INTERVAL]) -> ARRAY<DATE>"], generate_date_array),
    Function::rewrite(Family::Array, &["GENERATE_TIMESTAMP_ARRAY(TIMESTAMP, TIMESTAMP, INTERVAL) -> ARRAY<TIMESTAMP>"], generate_date_array),
    Function::rewrite(Family::Array, &["GENERATE_ARRAY(INT64, INT64[, INT64]) -> ARRAY<INT64>", "GENERATE_ARRAY(NUMERIC, NUMERIC[, NUMERIC]) -> ARRAY<NUMERIC>", "GENERATE_ARRAY(BIGNUMERIC, BIGNUMERIC[, BIGNUMERIC]) -> ARRAY<BIGNUMERIC>", "GENERATE_ARRAY(FLOAT64, FLOAT64[, FLOAT64]) -> ARRAY<FLOAT64>"], generate_array),
    Function::udf(Family::Array, &["bq_generate_array(INT64, INT64[, INT64]) -> ARRAY<INT64>", "bq_generate_array(NUMERIC, NUMERIC[, NUMERIC]) -> ARRAY<NUMERIC>", "bq_generate_array(BIGNUMERIC, BIGNUMERIC[, BIGNUMERIC]) -> ARRAY<BIGNUMERIC>", "bq_generate_array(FLOAT64, FLOAT64[, FLOAT64]) -> ARRAY<FLOAT64>"], bq_generate_array),
];

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Int64Array, ListArray};

    use super::*;

    /// The optimized plan keeps the call (a folded array would be a literal in its place),
    /// and the query still returns the array, bounds included.
    #[tokio::test]
    async fn stays_a_call_until_the_query_runs() {
        let ctx = datafusion::prelude::SessionContext::new();
        ctx.register_udf(bq_generate_array());
        let df = ctx
            .sql("SELECT bq_generate_array(2, 6) AS a")
            .await
            .unwrap();
        let plan = df.clone().into_optimized_plan().unwrap();
        let shown = format!("{}", plan.display_indent());
        assert!(
            shown.contains("bq_generate_array(Int64(2), Int64(6))"),
            "{shown}"
        );
        assert!(!shown.contains("[2, 3, 4, 5, 6]"), "{shown}");
        let batches = df.collect().await.unwrap();
        let list = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<ListArray>()
            .unwrap()
            .value(0);
        let values = list.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(values.values().to_vec(), vec![2, 3, 4, 5, 6]);
    }
}

/// `bigq_in_array(x, values)`: `x IN (subquery)` over the subquery's values gathered in an
/// array, with BigQuery's three-valued IN: TRUE when a value equals `x`, else NULL when `x`
/// or a value is NULL, else FALSE; FALSE for no values (a NULL array is none), even when
/// `x` is NULL.
pub(crate) fn bigq_in_array() -> ScalarUDF {
    ScalarUDF::new_from_impl(InArray {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct InArray {
    signature: Signature,
}

impl ScalarUDFImpl for InArray {
    fn name(&self) -> &str {
        "bigq_in_array"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        let [needle, list] = args else {
            return Err(DataFusionError::Plan(
                "IN takes a value and a subquery".into(),
            ));
        };
        let element = match list {
            DataType::List(f) | DataType::LargeList(f) => f.data_type().clone(),
            DataType::Null => DataType::Null,
            other => {
                return Err(DataFusionError::Plan(format!(
                    "IN subquery values as {other}"
                )));
            }
        };
        // Compared as `x = value` is: both sides in their common supertype.
        let common = comparison_coercion(needle, &element).ok_or_else(|| {
            DataFusionError::Plan(format!(
                "No matching signature for operator IN for argument types {needle} and {{{element}}}"
            ))
        })?;
        Ok(vec![
            common.clone(),
            DataType::List(Arc::new(Field::new("item", common, true))),
        ])
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let (arrays, rows) = super::udf::arrays(&args.args)?;
        let (needles, lists) = (&arrays[0], &arrays[1]);
        let mut out = BooleanBuilder::with_capacity(rows);
        if lists.data_type() == &DataType::Null {
            out.append_n(rows, false);
            return super::udf::result(Arc::new(out.finish()), &args.args);
        }
        let lists = lists.as_list::<i32>();
        for row in 0..rows {
            if lists.is_null(row) || lists.value_length(row) == 0 {
                out.append_value(false);
                continue;
            }
            if needles.is_null(row) {
                out.append_null();
                continue;
            }
            let values = lists.value(row);
            let needle = Scalar::new(needles.slice(row, 1));
            let equal = eq(&values, &needle)?;
            if equal.true_count() > 0 {
                out.append_value(true);
            } else if values.null_count() > 0 {
                out.append_null();
            } else {
                out.append_value(false);
            }
        }
        super::udf::result(Arc::new(out.finish()), &args.args)
    }
}

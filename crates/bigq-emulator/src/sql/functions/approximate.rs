//! Approximate aggregate functions, computed exactly (BigQuery's documented results for
//! small inputs are the exact ones): `APPROX_COUNT_DISTINCT` as `COUNT(DISTINCT ..)`, and
//! `APPROX_QUANTILES`, `APPROX_TOP_COUNT` and `APPROX_TOP_SUM` as a scalar UDF over the
//! group's values gathered by `array_agg`.
//!
//! The `HLL_COUNT` functions keep an emulator-defined sketch, not BigQuery's HLL++ format (no
//! maintained crate writes that format): the BYTES of a sketch hold the type of the values
//! counted, the precision asked for and the distinct values themselves, so that `EXTRACT`
//! and `MERGE` give exact counts. Sketches made by BigQuery cannot be read, nor the other
//! way round.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, StructArray, UInt64Array};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr, OrderByExpr};

use super::aggregate::{aggregate, arguments, not_null};
use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::call;

const QUANTILES: &str = "bigq_quantiles";
const TOP_COUNT: &str = "bigq_top_count";
const TOP_SUM: &str = "bigq_top_sum";

/// `APPROX_COUNT_DISTINCT(x)` as `count(DISTINCT x)`.
pub(crate) fn approx_count_distinct(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((args, _)) = arguments(f) else {
        return Ok(None);
    };
    let [x] = <[Expr; 1]>::try_from(args)
        .map_err(|_| BqError::invalid_query(format!("{name} takes one argument")))?;
    Ok(Some(aggregate("count", vec![x], true, Vec::new(), None)))
}

/// The call's two or three arguments.
fn args_of<const N: usize>(name: &str, f: &ast::Function) -> BqResult<([Expr; N], bool, bool)> {
    let (args, c) = arguments(f)
        .ok_or_else(|| BqError::invalid_query(format!("{name}: unexpected arguments")))?;
    if c.limit.is_some() || c.having.is_some() || !c.order_by.is_empty() || f.over.is_some() {
        return Err(BqError::unsupported(format!(
            "{name} with ORDER BY, LIMIT, HAVING or OVER"
        )));
    }
    let respect = c.nulls == Some(ast::NullTreatment::RespectNulls);
    let args = <[Expr; N]>::try_from(args)
        .map_err(|_| BqError::invalid_query(format!("{name} takes {N} arguments")))?;
    Ok((args, c.distinct, respect))
}

/// `APPROX_QUANTILES([DISTINCT] x, n [{IGNORE | RESPECT} NULLS])`: the group's values in
/// order (NULLs first when respected, else left out), and `n + 1` of them picked.
pub(crate) fn approx_quantiles(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let ([x, n], distinct, respect) = args_of::<2>(name, f)?;
    let order = OrderByExpr {
        expr: x.clone(),
        options: ast::OrderByOptions {
            asc: Some(true),
            nulls_first: Some(true),
        },
        with_fill: None,
    };
    let filter = (!respect).then(|| not_null(x.clone()));
    let values = aggregate("array_agg", vec![x], distinct, vec![order], filter);
    Ok(Some(call(QUANTILES, vec![values, n])))
}

/// `APPROX_TOP_COUNT(x, n)`: the `n` most frequent values (NULL among them) with their
/// counts.
pub(crate) fn approx_top_count(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let ([x, n], _, _) = args_of::<2>(name, f)?;
    let values = aggregate("array_agg", vec![x], false, Vec::new(), None);
    Ok(Some(call(TOP_COUNT, vec![values, n])))
}

/// `APPROX_TOP_SUM(x, weight, n)`: the `n` values with the greatest sums of weight.
pub(crate) fn approx_top_sum(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let ([x, w, n], _, _) = args_of::<3>(name, f)?;
    let pair = call("struct", vec![x, w]);
    let values = aggregate("array_agg", vec![pair], false, Vec::new(), None);
    Ok(Some(call(TOP_SUM, vec![values, n])))
}

/// The scalar UDFs behind the rewrites: each takes a list per group and a count.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Picker {
    name: &'static str,
    signature: Signature,
}

impl Picker {
    fn udf(name: &'static str) -> ScalarUDF {
        ScalarUDF::new_from_impl(Picker {
            name,
            signature: Signature::any(2, Volatility::Immutable),
        })
    }

    /// BigQuery's name of the function, for errors.
    fn shown(&self) -> &'static str {
        match self.name {
            QUANTILES => "APPROX_QUANTILES",
            TOP_COUNT => "APPROX_TOP_COUNT",
            _ => "APPROX_TOP_SUM",
        }
    }

    fn error(&self, why: impl std::fmt::Display) -> DataFusionError {
        DataFusionError::Execution(format!("{}: {why}", self.shown()))
    }
}

/// The element type of a list type.
fn element(t: &DataType) -> Option<&DataType> {
    match t {
        DataType::List(f) | DataType::LargeList(f) => Some(f.data_type()),
        DataType::Null => Some(&DataType::Null),
        _ => None,
    }
}

/// `STRUCT<value T, name U>`.
fn pair_fields(value: &DataType, name: &str, t: DataType) -> Fields {
    Fields::from(vec![
        Field::new("value", value.clone(), true),
        Field::new(name, t, true),
    ])
}

impl ScalarUDFImpl for Picker {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        let el = element(&args[0]).ok_or_else(|| self.error("not a list"))?;
        if !matches!(args[1], DataType::Int64 | DataType::Int32 | DataType::Null) {
            return Err(DataFusionError::Plan(format!(
                "{}: the number must be an INT64, got {}",
                self.shown(),
                args[1]
            )));
        }
        let item = match self.name {
            QUANTILES => {
                if matches!(el, DataType::Struct(_) | DataType::List(_)) {
                    return Err(DataFusionError::Plan(format!(
                        "{} does not take an argument of type {el}",
                        self.shown()
                    )));
                }
                el.clone()
            }
            TOP_COUNT => DataType::Struct(pair_fields(el, "count", DataType::Int64)),
            _ => {
                let DataType::Struct(fs) = el else {
                    return Err(self.error("not a value and a weight"));
                };
                let w = fs[1].data_type();
                if !matches!(
                    w,
                    DataType::Int64 | DataType::Float64 | DataType::Decimal128(..) | DataType::Null
                ) {
                    return Err(DataFusionError::Plan(format!(
                        "{}: the weight must be INT64, NUMERIC or FLOAT64, got {w}",
                        self.shown()
                    )));
                }
                let w = if w == &DataType::Null {
                    DataType::Int64
                } else {
                    w.clone()
                };
                DataType::Struct(pair_fields(fs[0].data_type(), "sum", w))
            }
        };
        Ok(DataType::List(Arc::new(Field::new("item", item, true))))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let out_type = args.return_field.data_type().clone();
        let lists = match arrays[0].data_type() {
            DataType::Null => {
                return Ok(ColumnarValue::Array(
                    datafusion::arrow::array::new_null_array(&out_type, rows),
                ));
            }
            _ => arrays[0].as_list::<i32>().clone(),
        };
        let ns = datafusion::arrow::compute::cast(&arrays[1], &DataType::Int64)?;
        let ns = ns.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        let DataType::List(item) = &out_type else {
            return Err(self.error("result type"));
        };
        let values = lists.values();
        let mut offsets = vec![0i32];
        let mut nulls = Vec::with_capacity(rows);
        // Quantiles and top counts are elements of the input; sums are computed.
        let mut picked: Vec<u64> = Vec::new();
        let mut sums: Vec<ScalarValue> = Vec::new();
        let mut counts: Vec<i64> = Vec::new();
        for row in 0..lists.len() {
            if ns.is_null(row) {
                return Err(self.error("the number must not be NULL"));
            }
            let n = ns.value(row);
            if n < 1 {
                return Err(self.error(format!("the number must be at least 1, got {n}")));
            }
            let start = lists.value_offsets()[row] as usize;
            let end = lists.value_offsets()[row + 1] as usize;
            if lists.is_null(row) || start == end {
                nulls.push(false);
                offsets.push(*offsets.last().unwrap_or(&0));
                continue;
            }
            nulls.push(true);
            match self.name {
                QUANTILES => {
                    let len = (end - start) as u64;
                    for i in 0..=n as u64 {
                        picked.push(start as u64 + i * (len - 1) / n as u64);
                    }
                }
                TOP_COUNT => {
                    let mut seen: HashMap<ScalarValue, usize> = HashMap::new();
                    let mut groups: Vec<(u64, i64)> = Vec::new();
                    for j in start..end {
                        let v = ScalarValue::try_from_array(values, j)?;
                        let g = *seen.entry(v).or_insert_with(|| {
                            groups.push((j as u64, 0));
                            groups.len() - 1
                        });
                        groups[g].1 += 1;
                    }
                    groups.sort_by_key(|g| std::cmp::Reverse(g.1));
                    groups.truncate(n as usize);
                    for (j, c) in groups {
                        picked.push(j);
                        counts.push(c);
                    }
                }
                _ => {
                    let pairs = values.as_struct();
                    let (vs, ws) = (pairs.column(0), pairs.column(1));
                    let mut seen: HashMap<ScalarValue, usize> = HashMap::new();
                    let mut groups: Vec<(u64, Option<ScalarValue>)> = Vec::new();
                    for j in start..end {
                        let v = ScalarValue::try_from_array(vs, j)?;
                        let w = ScalarValue::try_from_array(ws, j)?;
                        let w = if w.is_null() {
                            None
                        } else {
                            Some(w.cast_to(&item_weight(item.data_type()))?)
                        };
                        if let Some(w) = &w {
                            let zero = ScalarValue::new_zero(&w.data_type())?;
                            if w.partial_cmp(&zero) != Some(std::cmp::Ordering::Greater)
                                && w != &zero
                            {
                                return Err(self.error(format!(
                                    "the weight must be a non-negative number, got {w}"
                                )));
                            }
                        }
                        let g = *seen.entry(v).or_insert_with(|| {
                            groups.push((j as u64, None));
                            groups.len() - 1
                        });
                        if let Some(w) = w {
                            groups[g].1 = Some(match groups[g].1.take() {
                                Some(acc) => acc.add_checked(&w)?,
                                None => w,
                            });
                        }
                    }
                    // The greatest sums first; a value with only NULL weights last.
                    groups.sort_by(|a, b| match (&a.1, &b.1) {
                        (Some(x), Some(y)) => y.partial_cmp(x).unwrap_or(std::cmp::Ordering::Equal),
                        (Some(_), None) => std::cmp::Ordering::Less,
                        (None, Some(_)) => std::cmp::Ordering::Greater,
                        (None, None) => std::cmp::Ordering::Equal,
                    });
                    groups.truncate(n as usize);
                    let wt = item_weight(item.data_type());
                    for (j, s) in groups {
                        picked.push(j);
                        sums.push(match s {
                            Some(s) => s,
                            None => ScalarValue::try_from(&wt)?,
                        });
                    }
                }
            }
            offsets.push(picked.len() as i32);
        }
        let indices = UInt64Array::from(picked);
        let items: ArrayRef = match self.name {
            QUANTILES => take(values.as_ref(), &indices, None)?,
            TOP_COUNT => {
                let DataType::Struct(fs) = item.data_type() else {
                    return Err(self.error("result type"));
                };
                let v = take(values.as_ref(), &indices, None)?;
                let c: ArrayRef = Arc::new(datafusion::arrow::array::Int64Array::from(counts));
                Arc::new(StructArray::try_new(fs.clone(), vec![v, c], None)?)
            }
            _ => {
                let DataType::Struct(fs) = item.data_type() else {
                    return Err(self.error("result type"));
                };
                let v = take(values.as_struct().column(0).as_ref(), &indices, None)?;
                let s = if sums.is_empty() {
                    datafusion::arrow::array::new_empty_array(fs[1].data_type())
                } else {
                    ScalarValue::iter_to_array(sums)?
                };
                Arc::new(StructArray::try_new(fs.clone(), vec![v, s], None)?)
            }
        };
        let list = ListArray::try_new(
            item.clone(),
            OffsetBuffer::new(offsets.into()),
            items,
            Some(nulls.into()),
        )?;
        Ok(ColumnarValue::Array(Arc::new(list)))
    }
}

/// The weight type of an `APPROX_TOP_SUM` result item.
fn item_weight(item: &DataType) -> DataType {
    match item {
        DataType::Struct(fs) if fs.len() == 2 => fs[1].data_type().clone(),
        _ => DataType::Int64,
    }
}

/// `bigq_quantiles(values, n)`: `n + 1` of the sorted values, from the least to the
/// greatest.
pub(crate) fn bigq_quantiles() -> ScalarUDF {
    Picker::udf(QUANTILES)
}

/// `bigq_top_count(values, n)`: the `n` most frequent values with their counts.
pub(crate) fn bigq_top_count() -> ScalarUDF {
    Picker::udf(TOP_COUNT)
}

/// `bigq_top_sum(pairs, n)`: the `n` values with the greatest sums of weight.
pub(crate) fn bigq_top_sum() -> ScalarUDF {
    Picker::udf(TOP_SUM)
}

/// What a sketch starts with, before the type tag.
const SKETCH_MAGIC: &[u8] = b"bigq-hll-1\0";

/// `HLL_COUNT.INIT(x [, precision])`, `HLL_COUNT.MERGE(sketch)`,
/// `HLL_COUNT.MERGE_PARTIAL(sketch)` and `HLL_COUNT.EXTRACT(sketch)`.
pub(crate) fn hll_count(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((mut args, _)) = arguments(f) else {
        return Ok(None);
    };
    if f.over.is_some() {
        return Err(BqError::unsupported(format!("{name} with OVER")));
    }
    let Some(x) = (!args.is_empty()).then(|| args.remove(0)) else {
        return Err(BqError::invalid_query(format!("{name} takes an argument")));
    };
    let expected = if name == "HLL_COUNT.INIT" { 2 } else { 1 };
    if args.len() >= expected {
        return Err(BqError::invalid_query(format!(
            "{name}: too many arguments"
        )));
    }
    let values = |distinct| {
        aggregate(
            "array_agg",
            vec![x.clone()],
            distinct,
            Vec::new(),
            Some(not_null(x.clone())),
        )
    };
    Ok(Some(match name {
        "HLL_COUNT.INIT" => {
            let precision = args.pop().unwrap_or_else(|| crate::sql::ast::number(15));
            call(HLL_INIT, vec![values(true), precision])
        }
        "HLL_COUNT.MERGE" => call(HLL_MERGE, vec![values(false), crate::sql::ast::number(0)]),
        "HLL_COUNT.MERGE_PARTIAL" => {
            call(HLL_MERGE, vec![values(false), crate::sql::ast::number(1)])
        }
        _ => call(HLL_EXTRACT, vec![x]),
    }))
}

const HLL_INIT: &str = "bigq_hll_init";
const HLL_MERGE: &str = "bigq_hll_merge";
const HLL_EXTRACT: &str = "bigq_hll_extract";

/// A sketch read back: the values' type and precision, and the values.
struct Sketch {
    tag: String,
    precision: u8,
    values: std::collections::BTreeSet<Vec<u8>>,
}

impl Sketch {
    fn write(&self) -> Vec<u8> {
        let mut out = SKETCH_MAGIC.to_vec();
        out.push(self.tag.len() as u8);
        out.extend_from_slice(self.tag.as_bytes());
        out.push(self.precision);
        for v in &self.values {
            out.extend_from_slice(&(v.len() as u32).to_le_bytes());
            out.extend_from_slice(v);
        }
        out
    }

    fn read(b: &[u8]) -> Option<Sketch> {
        let rest = b.strip_prefix(SKETCH_MAGIC)?;
        let (&n, rest) = rest.split_first()?;
        let tag = String::from_utf8(rest.get(..n as usize)?.to_vec()).ok()?;
        let rest = &rest[n as usize..];
        let (&precision, mut rest) = rest.split_first()?;
        let mut values = std::collections::BTreeSet::new();
        while !rest.is_empty() {
            let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
            values.insert(rest.get(4..4 + len)?.to_vec());
            rest = &rest[4 + len..];
        }
        Some(Sketch {
            tag,
            precision,
            values,
        })
    }
}

/// The sketch UDFs.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Hll {
    name: &'static str,
    signature: Signature,
}

fn hll_error(why: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("HLL_COUNT: {why}"))
}

impl ScalarUDFImpl for Hll {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        if self.name == HLL_INIT {
            let el = element(&args[0]).unwrap_or(&DataType::Null);
            if !matches!(
                el,
                DataType::Int64
                    | DataType::Utf8
                    | DataType::Utf8View
                    | DataType::LargeUtf8
                    | DataType::Binary
                    | DataType::BinaryView
                    | DataType::Decimal128(..)
                    | DataType::Decimal256(..)
                    | DataType::Null
            ) {
                return Err(DataFusionError::Plan(format!(
                    "HLL_COUNT.INIT does not take an argument of type {el}"
                )));
            }
            return Ok(DataType::Binary);
        }
        if self.name == HLL_EXTRACT {
            return Ok(DataType::Int64);
        }
        Ok(DataType::Binary)
    }

    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> DfResult<datafusion::arrow::datatypes::FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let mut t = self.return_type(&types)?;
        // MERGE (the flag 0) counts; MERGE_PARTIAL (1) gives a sketch.
        if self.name == HLL_MERGE
            && let Some(Some(ScalarValue::Int64(Some(0)))) = args.scalar_arguments.get(1)
        {
            t = DataType::Int64;
        }
        Ok(Arc::new(Field::new(self.name, t, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let out_type = args.return_field.data_type().clone();
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let mut sketches: Vec<Option<Sketch>> = Vec::with_capacity(rows);
        if self.name == HLL_EXTRACT {
            let b = datafusion::arrow::compute::cast(&arrays[0], &DataType::Binary)?;
            let b = b.as_binary::<i32>();
            let counts: datafusion::arrow::array::Int64Array = (0..rows)
                .map(|i| {
                    if b.is_null(i) {
                        return Ok(Some(0));
                    }
                    let s = Sketch::read(b.value(i))
                        .ok_or_else(|| hll_error("not a sketch of the emulator"))?;
                    Ok(Some(s.values.len() as i64))
                })
                .collect::<DfResult<_>>()?;
            return Ok(ColumnarValue::Array(Arc::new(counts)));
        }
        let lists = match arrays[0].data_type() {
            DataType::Null => None,
            _ => Some(arrays[0].as_list::<i32>().clone()),
        };
        let precisions = datafusion::arrow::compute::cast(&arrays[1], &DataType::Int64)?;
        let precisions = precisions.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        for row in 0..rows {
            let Some(lists) = &lists else {
                sketches.push(None);
                continue;
            };
            if lists.is_null(row) || lists.value(row).is_empty() {
                sketches.push(None);
                continue;
            }
            let items = lists.value(row);
            if self.name == HLL_INIT {
                let p = precisions.value(row);
                if !(10..=24).contains(&p) {
                    return Err(hll_error(format!(
                        "HLL_COUNT.INIT precision must be between 10 and 24, got {p}"
                    )));
                }
                let tag = items.data_type().to_string();
                let mut values = std::collections::BTreeSet::new();
                for j in 0..items.len() {
                    let v = ScalarValue::try_from_array(&items, j)?;
                    let bytes = match v {
                        ScalarValue::Binary(Some(b))
                        | ScalarValue::BinaryView(Some(b))
                        | ScalarValue::LargeBinary(Some(b)) => b,
                        v => v.to_string().into_bytes(),
                    };
                    values.insert(bytes);
                }
                let tag = match tag.as_str() {
                    "Utf8View" | "LargeUtf8" => "Utf8".to_string(),
                    "BinaryView" | "LargeBinary" => "Binary".to_string(),
                    _ => tag,
                };
                sketches.push(Some(Sketch {
                    tag,
                    precision: p as u8,
                    values,
                }));
                continue;
            }
            let b = datafusion::arrow::compute::cast(&items, &DataType::Binary)?;
            let b = b.as_binary::<i32>();
            let mut merged: Option<Sketch> = None;
            for j in 0..b.len() {
                let s = Sketch::read(b.value(j))
                    .ok_or_else(|| hll_error("not a sketch of the emulator"))?;
                merged = Some(match merged {
                    None => s,
                    Some(mut m) => {
                        if m.tag != s.tag {
                            return Err(hll_error(format!(
                                "cannot merge sketches of {} and {} values",
                                m.tag, s.tag
                            )));
                        }
                        m.precision = m.precision.min(s.precision);
                        m.values.extend(s.values);
                        m
                    }
                });
            }
            sketches.push(merged);
        }
        if out_type == DataType::Int64 {
            let counts: datafusion::arrow::array::Int64Array = sketches
                .iter()
                .map(|s| Some(s.as_ref().map_or(0, |s| s.values.len() as i64)))
                .collect();
            return Ok(ColumnarValue::Array(Arc::new(counts)));
        }
        let bytes: datafusion::arrow::array::BinaryArray = sketches
            .iter()
            .map(|s| s.as_ref().map(Sketch::write))
            .collect();
        Ok(ColumnarValue::Array(Arc::new(bytes)))
    }
}

fn hll(name: &'static str, args: usize) -> ScalarUDF {
    ScalarUDF::new_from_impl(Hll {
        name,
        signature: Signature::any(args, Volatility::Immutable),
    })
}

/// `bigq_hll_init(distinct values, precision)`: a sketch of the values, NULL for none.
pub(crate) fn bigq_hll_init() -> ScalarUDF {
    hll(HLL_INIT, 2)
}

/// `bigq_hll_merge(sketches, partial)`: the sketches' union, counted (`partial` 0, an
/// INT64) or as a sketch (1, BYTES).
pub(crate) fn bigq_hll_merge() -> ScalarUDF {
    hll(HLL_MERGE, 2)
}

/// `bigq_hll_extract(sketch)`: the count of a sketch, 0 for NULL.
pub(crate) fn bigq_hll_extract() -> ScalarUDF {
    hll(HLL_EXTRACT, 1)
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Approximate, &["APPROX_COUNT_DISTINCT(T) -> INT64"], approx_count_distinct),
    Function::rewrite(Family::Approximate, &["APPROX_QUANTILES(T, INT64) -> ARRAY<T>"], approx_quantiles),
    Function::rewrite(Family::Approximate, &["APPROX_TOP_COUNT(T, INT64) -> ARRAY<STRUCT<value T, count INT64>>"], approx_top_count),
    Function::rewrite(Family::Approximate, &["APPROX_TOP_SUM(T, INT64, INT64) -> ARRAY<STRUCT<value T, sum INT64>>"], approx_top_sum),
    Function::rewrite(Family::Approximate, &["HLL_COUNT.INIT(T[, INT64]) -> BYTES"], hll_count),
    Function::rewrite(Family::Approximate, &["HLL_COUNT.MERGE(BYTES) -> INT64"], hll_count),
    Function::rewrite(Family::Approximate, &["HLL_COUNT.MERGE_PARTIAL(BYTES) -> BYTES"], hll_count),
    Function::rewrite(Family::Approximate, &["HLL_COUNT.EXTRACT(BYTES) -> INT64"], hll_count),
    Function::udf(Family::Approximate, &["bigq_hll_init(ARRAY<STRING>, INT64) -> BYTES"], bigq_hll_init),
    Function::udf(Family::Approximate, &["bigq_hll_merge(ARRAY<BYTES>, INT64) -> BYTES"], bigq_hll_merge),
    Function::udf(Family::Approximate, &["bigq_hll_extract(BYTES) -> INT64"], bigq_hll_extract),
    Function::udf(Family::Approximate, &["bigq_quantiles(ARRAY<INT64>, INT64) -> ARRAY<INT64>"], bigq_quantiles),
    Function::udf(Family::Approximate, &["bigq_top_count(ARRAY<STRING>, INT64) -> ARRAY<STRUCT<value STRING, count INT64>>"], bigq_top_count),
    Function::udf(Family::Approximate, &["bigq_top_sum(ARRAY<STRUCT<c0 STRING, c1 INT64>>, INT64) -> ARRAY<STRUCT<value STRING, sum INT64>>"], bigq_top_sum),
];

//! Scalar UDFs written one row at a time against their BigQuery signatures: the signatures
//! (the same text the registry lists) choose the argument coercions and the result type, and
//! a function of one row's values gives that row's result.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, new_empty_array};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::udf::arrays;

/// What an evaluation knows beyond the row's values: the argument fields (their types and
/// tags).
pub(crate) struct Call<'a> {
    pub(crate) fields: &'a [FieldRef],
}

/// One row's result from its values.
pub(crate) type Eval = fn(&Call, &[ScalarValue]) -> DfResult<ScalarValue>;

/// A BigQuery parameter type of a signature.
#[derive(Clone, Debug, PartialEq)]
enum Param {
    String,
    Bytes,
    Int64,
    Float64,
    Bool,
    Json,
    Date,
    Datetime,
    Timestamp,
    Array(Box<Param>),
    /// Any type, kept as it is.
    Any,
}

impl Param {
    fn parse(s: &str) -> DfResult<Param> {
        let s = s.trim();
        if let Some(inner) = s.strip_prefix("ARRAY<").and_then(|r| r.strip_suffix('>')) {
            return Ok(Param::Array(Box::new(Param::parse(inner)?)));
        }
        Ok(match s {
            "STRING" => Param::String,
            "BYTES" => Param::Bytes,
            "INT64" => Param::Int64,
            "FLOAT64" => Param::Float64,
            "BOOL" => Param::Bool,
            "JSON" => Param::Json,
            "DATE" => Param::Date,
            "DATETIME" => Param::Datetime,
            "TIMESTAMP" => Param::Timestamp,
            "T" => Param::Any,
            other => {
                return Err(DataFusionError::Internal(format!(
                    "no parameter type {other}"
                )));
            }
        })
    }

    /// Whether a value of type `t` may be passed: `loose` allows BigQuery's implicit
    /// widenings (INT64 and NUMERIC to FLOAT64).
    fn fits(&self, t: &DataType, loose: bool) -> bool {
        use DataType as D;
        if matches!(t, D::Null) {
            return true;
        }
        match self {
            Param::String | Param::Json => matches!(t, D::Utf8 | D::Utf8View | D::LargeUtf8),
            Param::Bytes => matches!(
                t,
                D::Binary | D::BinaryView | D::LargeBinary | D::FixedSizeBinary(_)
            ),
            Param::Int64 => t.is_integer(),
            Param::Float64 => t.is_floating() || (loose && (t.is_integer() || t.is_decimal())),
            Param::Bool => matches!(t, D::Boolean),
            Param::Date => matches!(t, D::Date32 | D::Date64),
            Param::Datetime => matches!(t, D::Timestamp(_, None)),
            Param::Timestamp => matches!(t, D::Timestamp(_, Some(_))),
            Param::Array(inner) => match t {
                D::List(f) | D::LargeList(f) | D::FixedSizeList(f, _) => {
                    inner.fits(f.data_type(), loose)
                }
                _ => false,
            },
            Param::Any => true,
        }
    }

    /// The Arrow type an argument of type `t` is coerced to.
    fn arrow(&self, t: &DataType) -> DataType {
        use datafusion::arrow::datatypes::TimeUnit;
        match self {
            Param::String | Param::Json => DataType::Utf8,
            Param::Bytes => DataType::Binary,
            Param::Int64 => DataType::Int64,
            Param::Float64 => DataType::Float64,
            Param::Bool => DataType::Boolean,
            Param::Date => DataType::Date32,
            Param::Datetime => DataType::Timestamp(TimeUnit::Microsecond, None),
            Param::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Param::Array(inner) => {
                let element = match t {
                    DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                        f.data_type().clone()
                    }
                    _ => DataType::Null,
                };
                DataType::List(Arc::new(Field::new("item", inner.arrow(&element), true)))
            }
            Param::Any => t.clone(),
        }
    }
}

/// One argument list of a signature and its result.
#[derive(Debug)]
struct Shape {
    params: Vec<Param>,
    ret: Param,
}

/// The argument lists `NAME(A, B[, C]) -> R` stands for.
fn shapes(signature: &str) -> DfResult<Vec<Shape>> {
    let bad = || DataFusionError::Internal(format!("bad signature {signature}"));
    let (call, ret) = signature.split_once(" -> ").ok_or_else(bad)?;
    let open = call.find('(').ok_or_else(bad)?;
    let args = &call[open + 1..call.len() - 1];
    let ret = Param::parse(ret)?;
    let split = |list: &str| -> DfResult<Vec<Param>> {
        let mut out = Vec::new();
        let (mut depth, mut cur) = (0, String::new());
        for c in list.chars() {
            match c {
                ',' if depth == 0 => out.push(Param::parse(&std::mem::take(&mut cur))?),
                '<' | '>' => {
                    depth += if c == '<' { 1 } else { -1 };
                    cur.push(c);
                }
                c => cur.push(c),
            }
        }
        if !cur.trim().is_empty() {
            out.push(Param::parse(&cur)?);
        }
        Ok(out)
    };
    let mut lists = Vec::new();
    let mut rest = args;
    let mut required = String::new();
    // Each `[, X` opens one more optional argument; the closing brackets sit at the end.
    loop {
        match rest.split_once("[, ") {
            Some((head, tail)) => {
                required.push_str(head);
                lists.push(required.clone());
                required.push_str(", ");
                rest = tail;
            }
            None => {
                required.push_str(rest.trim_end_matches(']'));
                lists.push(required);
                break;
            }
        }
    }
    lists
        .iter()
        .map(|l| {
            Ok(Shape {
                params: split(l)?,
                ret: ret.clone(),
            })
        })
        .collect()
}

/// A scalar UDF evaluated row by row.
#[derive(Debug)]
pub(crate) struct RowUdf {
    name: String,
    /// BigQuery's name, for messages.
    shown: &'static str,
    shapes: Vec<Shape>,
    /// The last parameter repeats.
    variadic: bool,
    /// A NULL argument makes a NULL result without calling `eval`.
    strict: bool,
    eval: Eval,
    signature: Signature,
}

impl PartialEq for RowUdf {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for RowUdf {}

impl Hash for RowUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl RowUdf {
    /// The shape an argument list fits, exactly first and then with widenings, and the
    /// params it is taken as.
    fn matching(&self, types: &[DataType]) -> Option<(&Shape, Vec<&Param>)> {
        for loose in [false, true] {
            for (k, s) in self.shapes.iter().enumerate() {
                // Only the longest argument list repeats its last parameter.
                let last = k + 1 == self.shapes.len();
                let params: Vec<&Param> = if self.variadic && last && types.len() > s.params.len() {
                    match s.params.last() {
                        Some(last) => s
                            .params
                            .iter()
                            .chain(std::iter::repeat_n(last, types.len() - s.params.len()))
                            .collect(),
                        None => continue,
                    }
                } else {
                    s.params.iter().collect()
                };
                if params.len() == types.len()
                    && params.iter().zip(types).all(|(p, t)| p.fits(t, loose))
                {
                    return Some((s, params));
                }
            }
        }
        None
    }

    fn no_match(&self, types: &[DataType]) -> DataFusionError {
        let shown: Vec<String> = types.iter().map(bq_type_name).collect();
        DataFusionError::Plan(format!(
            "No matching signature for function {} for argument types: {}",
            self.shown,
            shown.join(", ")
        ))
    }
}

/// A BigQuery name for an Arrow type, for messages.
pub(crate) fn bq_type_name(t: &DataType) -> String {
    use DataType as D;
    match t {
        D::Null => "NULL".into(),
        D::Utf8 | D::Utf8View | D::LargeUtf8 => "STRING".into(),
        D::Binary | D::BinaryView | D::LargeBinary | D::FixedSizeBinary(_) => "BYTES".into(),
        t if t.is_integer() => "INT64".into(),
        t if t.is_floating() => "FLOAT64".into(),
        D::Decimal128(..) => "NUMERIC".into(),
        D::Decimal256(..) => "BIGNUMERIC".into(),
        D::Boolean => "BOOL".into(),
        D::Date32 | D::Date64 => "DATE".into(),
        D::Time64(_) | D::Time32(_) => "TIME".into(),
        D::Timestamp(_, None) => "DATETIME".into(),
        D::Timestamp(_, Some(_)) => "TIMESTAMP".into(),
        D::Interval(_) => "INTERVAL".into(),
        D::List(f) | D::LargeList(f) | D::FixedSizeList(f, _) => {
            format!("ARRAY<{}>", bq_type_name(f.data_type()))
        }
        D::Struct(fs) => {
            let parts: Vec<String> = fs
                .iter()
                .map(|f| format!("{} {}", f.name(), bq_type_name(f.data_type())))
                .collect();
            format!("STRUCT<{}>", parts.join(", "))
        }
        other => other.to_string(),
    }
}

impl ScalarUDFImpl for RowUdf {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        let (_, params) = self.matching(types).ok_or_else(|| self.no_match(types))?;
        Ok(params.iter().zip(types).map(|(p, t)| p.arrow(t)).collect())
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        let (shape, params) = self.matching(types).ok_or_else(|| self.no_match(types))?;
        Ok(match &shape.ret {
            Param::Any => params
                .iter()
                .position(|p| **p == Param::Any)
                .map(|i| types[i].clone())
                .unwrap_or(DataType::Null),
            ret => ret.arrow(&DataType::Null),
        })
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let ret = call.return_field.data_type().clone();
        let scalars = call
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let (columns, rows) = if call.args.is_empty() {
            (Vec::new(), call.number_rows)
        } else {
            arrays(&call.args)?
        };
        let cx = Call {
            fields: &call.arg_fields,
        };
        let mut out = Vec::with_capacity(rows);
        let mut values = Vec::with_capacity(columns.len());
        for i in 0..rows {
            values.clear();
            for c in &columns {
                values.push(ScalarValue::try_from_array(c, i)?);
            }
            let v = if self.strict && values.iter().any(ScalarValue::is_null) {
                ScalarValue::try_from(&ret)?
            } else {
                let v = (self.eval)(&cx, &values)?;
                if v.is_null() && v.data_type() != ret {
                    ScalarValue::try_from(&ret)?
                } else {
                    v
                }
            };
            out.push(v);
        }
        let array: ArrayRef = if out.is_empty() {
            new_empty_array(&ret)
        } else {
            ScalarValue::iter_to_array(out)?
        };
        Ok(if scalars && array.len() == 1 {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&array, 0)?)
        } else {
            ColumnarValue::Array(array)
        })
    }
}

/// A UDF named `signatures`' name (lower-case), strict in NULLs.
pub(crate) fn udf(signatures: &'static [&'static str], eval: Eval) -> ScalarUDF {
    build(signatures, eval, true, false, Volatility::Immutable)
}

/// A UDF named `signatures`' name (lower-case), strict in NULLs, whose messages call it
/// `shown`: an internal function that checks the arguments of the BigQuery function it
/// stands in for.
pub(crate) fn udf_shown(
    signatures: &'static [&'static str],
    shown: &'static str,
    eval: Eval,
) -> ScalarUDF {
    let mut udf = build_udf(signatures, eval, true, false, Volatility::Immutable);
    udf.shown = shown;
    ScalarUDF::new_from_impl(udf)
}

/// A UDF whose last parameter repeats, strict or not in NULLs.
pub(crate) fn udf_variadic(
    signatures: &'static [&'static str],
    eval: Eval,
    strict: bool,
) -> ScalarUDF {
    build(signatures, eval, strict, true, Volatility::Immutable)
}

fn build(
    signatures: &'static [&'static str],
    eval: Eval,
    strict: bool,
    variadic: bool,
    volatility: Volatility,
) -> ScalarUDF {
    ScalarUDF::new_from_impl(build_udf(signatures, eval, strict, variadic, volatility))
}

fn build_udf(
    signatures: &'static [&'static str],
    eval: Eval,
    strict: bool,
    variadic: bool,
    volatility: Volatility,
) -> RowUdf {
    let first = signatures.first().copied().unwrap_or_default();
    let shown = first.split('(').next().unwrap_or_default();
    let shapes = signatures
        .iter()
        .flat_map(|s| shapes(s).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let signature = if signatures.iter().all(|s| s.contains("()")) {
        Signature::nullary(volatility)
    } else {
        Signature::user_defined(volatility)
    };
    RowUdf {
        name: shown.to_ascii_lowercase(),
        shown,
        shapes,
        variadic,
        strict,
        eval,
        signature,
    }
}

/// The text of a STRING value.
pub(crate) fn text(v: &ScalarValue) -> Option<&str> {
    match v {
        ScalarValue::Utf8(s) | ScalarValue::Utf8View(s) | ScalarValue::LargeUtf8(s) => s.as_deref(),
        _ => None,
    }
}

/// The bytes of a BYTES value.
pub(crate) fn bytes(v: &ScalarValue) -> Option<&[u8]> {
    match v {
        ScalarValue::Binary(b)
        | ScalarValue::BinaryView(b)
        | ScalarValue::LargeBinary(b)
        | ScalarValue::FixedSizeBinary(_, b) => b.as_deref(),
        _ => None,
    }
}

/// An INT64 value.
pub(crate) fn int(v: &ScalarValue) -> Option<i64> {
    match v {
        ScalarValue::Int64(i) => *i,
        ScalarValue::Int32(i) => i.map(i64::from),
        ScalarValue::Int16(i) => i.map(i64::from),
        ScalarValue::Int8(i) => i.map(i64::from),
        ScalarValue::UInt32(i) => i.map(i64::from),
        ScalarValue::UInt16(i) => i.map(i64::from),
        ScalarValue::UInt8(i) => i.map(i64::from),
        ScalarValue::UInt64(i) => i.and_then(|i| i64::try_from(i).ok()),
        _ => None,
    }
}

/// The elements of an ARRAY value (`None` for a NULL array).
pub(crate) fn elements(v: &ScalarValue) -> DfResult<Option<Vec<ScalarValue>>> {
    let list: &dyn Array = match v {
        ScalarValue::List(l) => l.as_ref(),
        ScalarValue::LargeList(l) => l.as_ref(),
        ScalarValue::FixedSizeList(l) => l.as_ref(),
        _ => return Ok(None),
    };
    if list.is_null(0) {
        return Ok(None);
    }
    let values = match v {
        ScalarValue::List(l) => l.value(0),
        ScalarValue::LargeList(l) => l.value(0),
        ScalarValue::FixedSizeList(l) => l.value(0),
        _ => return Ok(None),
    };
    (0..values.len())
        .map(|i| ScalarValue::try_from_array(&values, i))
        .collect::<DfResult<Vec<_>>>()
        .map(Some)
}

/// An ARRAY value of `items`, each of type `element`.
pub(crate) fn list(items: Vec<ScalarValue>, element: &DataType) -> ScalarValue {
    ScalarValue::List(ScalarValue::new_list_nullable(&items, element))
}

/// An execution error naming the function.
pub(crate) fn fail(name: &str, what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("{name}: {what}"))
}

/// A STRING result.
pub(crate) fn string_value(s: impl Into<String>) -> ScalarValue {
    ScalarValue::Utf8(Some(s.into()))
}

/// A BYTES result.
pub(crate) fn bytes_value(b: impl Into<Vec<u8>>) -> ScalarValue {
    ScalarValue::Binary(Some(b.into()))
}

/// An INT64 result.
pub(crate) fn int_value(i: i64) -> ScalarValue {
    ScalarValue::Int64(Some(i))
}

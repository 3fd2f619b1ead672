//! JSON functions. A JSON value is JSON text in a Utf8 array whose field carries BigQuery's
//! `google:sqlType:json` tag, so the column is reported as JSON; a function told a JSON
//! argument from a JSON-formatted STRING by that tag.
//!
//! Each BigQuery function is a rewrite of its call (named arguments such as
//! `wide_number_mode => 'round'` put in place, defaults filled in, `SAFE.` noted) into one
//! internal UDF, `bigq_json_*`, whose first argument says whether errors become NULL. The
//! files: `value` (parsing and writing JSON as BigQuery does), `path` (JSONPath), `extract`
//! (JSON_QUERY, JSON_VALUE and their kin), `convert` (BOOL, INT64, LAX_*, JSON_TYPE),
//! `encode` (SQL values as JSON: TO_JSON, JSON_OBJECT, JSON_ARRAY), `mutate` (JSON_SET,
//! JSON_REMOVE, ...).

mod args;
mod convert;
mod encode;
mod extract;
mod mutate;
mod path;
pub(crate) mod planner;
mod text_path;
mod value;

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, BooleanBuilder, Float64Builder, Int64Builder,
    ListBuilder, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr, ObjectNamePart};

use bigq_codec::schema::FieldType;

use self::args::{Args, Cell, is_json};
use super::registry::{Family, Function};
use super::udf::{arrays, result};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, string};
use crate::sql::types::tagged;

/// What one internal UDF computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Op {
    Literal,
    Cast,
    ParseJson,
    Query(path::Syntax),
    Value(path::Syntax),
    QueryArray(path::Syntax),
    ValueArray(path::Syntax),
    Type,
    Bool,
    Int64,
    Float64,
    String,
    LaxBool,
    LaxInt64,
    LaxFloat64,
    LaxString,
    Keys,
    Flatten,
    ToJson,
    ToJsonString,
    Object,
    Array,
    Set,
    Remove,
    StripNulls,
    ArrayAppend,
    ArrayInsert,
    Subscript,
    ArrayLiteral,
}

/// What a result column holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Out {
    Json,
    Text,
    Bool,
    Int,
    Float,
    JsonList,
    TextList,
}

impl Out {
    fn data_type(self) -> DataType {
        match self {
            Out::Json | Out::Text => DataType::Utf8,
            Out::Bool => DataType::Boolean,
            Out::Int => DataType::Int64,
            Out::Float => DataType::Float64,
            Out::JsonList | Out::TextList => DataType::List(Arc::new(self.item_field())),
        }
    }

    fn item_field(self) -> Field {
        let f = Field::new("item", DataType::Utf8, true);
        if self == Out::JsonList {
            tagged(f, &FieldType::Json)
        } else {
            f
        }
    }
}

/// An internal UDF of the JSON functions.
#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonUdf {
    name: &'static str,
    /// The BigQuery function, for messages.
    function: &'static str,
    op: Op,
    signature: Signature,
}

impl JsonUdf {
    /// The result column's kind, given the argument fields (after the `safe` flag).
    fn out(&self, args: &[FieldRef]) -> DfResult<Out> {
        let first_json = args.first().is_some_and(|f| is_json(f));
        let needs_json = |what: &str| -> DfResult<()> {
            match args.first() {
                Some(f) if is_json(f) || f.data_type() == &DataType::Null => Ok(()),
                Some(f) => plan_err!(
                    "No matching signature for function {}: {what} must be JSON, not {}",
                    self.function,
                    f.data_type()
                ),
                None => plan_err!("No matching signature for function {}", self.function),
            }
        };
        Ok(match self.op {
            Op::Literal | Op::Cast | Op::ParseJson | Op::ToJson | Op::Object | Op::Array => {
                Out::Json
            }
            Op::Query(_) => {
                if first_json {
                    Out::Json
                } else {
                    Out::Text
                }
            }
            Op::QueryArray(_) => {
                if first_json {
                    Out::JsonList
                } else {
                    Out::TextList
                }
            }
            Op::Value(_) | Op::ToJsonString => Out::Text,
            Op::ValueArray(_) => Out::TextList,
            Op::Type | Op::String | Op::LaxString => {
                needs_json("the argument")?;
                Out::Text
            }
            Op::Bool | Op::LaxBool => {
                needs_json("the argument")?;
                Out::Bool
            }
            Op::Int64 | Op::LaxInt64 => {
                needs_json("the argument")?;
                Out::Int
            }
            Op::Float64 | Op::LaxFloat64 => {
                needs_json("the argument")?;
                Out::Float
            }
            Op::Keys => {
                needs_json("the argument")?;
                Out::TextList
            }
            Op::Flatten => {
                needs_json("the argument")?;
                Out::JsonList
            }
            Op::ArrayLiteral => Out::JsonList,
            Op::Set
            | Op::Remove
            | Op::StripNulls
            | Op::ArrayAppend
            | Op::ArrayInsert
            | Op::Subscript => {
                needs_json("the first argument")?;
                Out::Json
            }
        })
    }

    fn check(&self, args: &[FieldRef]) -> DfResult<()> {
        let n = args.len();
        let bad = match self.op {
            Op::Object => {
                let arrays = args
                    .first()
                    .is_some_and(|f| matches!(f.data_type(), DataType::List(_) | DataType::Null))
                    && n == 2
                    && args
                        .iter()
                        .all(|f| matches!(f.data_type(), DataType::List(_) | DataType::Null))
                    && args[0].data_type() != &DataType::Null;
                !arrays && n % 2 == 1
            }
            Op::Set | Op::ArrayAppend | Op::ArrayInsert => n < 4 || n % 2 == 1,
            Op::Remove => n < 2,
            _ => false,
        };
        if bad {
            return plan_err!(
                "No matching signature for function {} for {} arguments",
                self.function,
                n
            );
        }
        Ok(())
    }

    fn row(&self, a: &Args, row: usize) -> Result<Cell, String> {
        match self.op {
            Op::Literal => extract::literal(a, row),
            Op::Cast => extract::cast(a, row),
            Op::ParseJson => extract::parse_json(a, row),
            Op::Query(s) => extract::query(a, row, s),
            Op::Value(s) => extract::value(a, row, s),
            Op::QueryArray(s) => extract::query_array(a, row, s),
            Op::ValueArray(s) => extract::value_array(a, row, s),
            Op::Type => convert::json_type(a, row),
            Op::Bool => convert::bool(a, row),
            Op::Int64 => convert::int64(a, row),
            Op::Float64 => convert::float64(a, row),
            Op::String => convert::string(a, row),
            Op::LaxBool => convert::lax_bool(a, row),
            Op::LaxInt64 => convert::lax_int64(a, row),
            Op::LaxFloat64 => convert::lax_float64(a, row),
            Op::LaxString => convert::lax_string(a, row),
            Op::Keys => mutate::keys(a, row),
            Op::Flatten => mutate::flatten(a, row),
            Op::ToJson => encode::to_json(a, row),
            Op::ToJsonString => encode::to_json_string(a, row),
            Op::Object => encode::object(a, row),
            Op::Array => encode::array(a, row),
            Op::Set => mutate::set(a, row),
            Op::Remove => mutate::remove(a, row),
            Op::StripNulls => mutate::strip_nulls(a, row),
            Op::ArrayAppend => mutate::array_append(a, row),
            Op::ArrayInsert => mutate::array_insert(a, row),
            Op::Subscript => extract::subscript(a, row),
            Op::ArrayLiteral => Ok(Cell::List(
                (0..a.len())
                    .map(|n| a.text(n, row).map(str::to_string))
                    .collect(),
            )),
        }
    }
}

impl ScalarUDFImpl for JsonUdf {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// STRING spellings as Utf8 and NULLs left as they are: every argument is read by the
    /// function itself.
    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        Ok(types
            .iter()
            .map(|t| match t {
                DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
                DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::UInt8
                | DataType::UInt16
                | DataType::UInt32 => DataType::Int64,
                t => t.clone(),
            })
            .collect())
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        // Without fields the first argument counts as a STRING.
        let fields: Vec<FieldRef> = types
            .iter()
            .skip(1)
            .map(|t| Arc::new(Field::new("a", t.clone(), true)))
            .collect();
        let out = match self.op {
            Op::Type | Op::String | Op::LaxString => Out::Text,
            Op::Bool | Op::LaxBool => Out::Bool,
            Op::Int64 | Op::LaxInt64 => Out::Int,
            Op::Float64 | Op::LaxFloat64 => Out::Float,
            Op::Keys => Out::TextList,
            Op::Flatten | Op::ArrayLiteral => Out::JsonList,
            Op::Set
            | Op::Remove
            | Op::StripNulls
            | Op::ArrayAppend
            | Op::ArrayInsert
            | Op::Subscript => Out::Json,
            _ => self.out(&fields)?,
        };
        // Untagged: only a field carries the tag that makes an element JSON.
        let out = if out == Out::JsonList {
            Out::TextList
        } else {
            out
        };
        Ok(out.data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        let fields = args.arg_fields.get(1..).unwrap_or_default();
        self.check(fields)?;
        let out = self.out(fields)?;
        let f = Field::new(self.name(), out.data_type(), true);
        Ok(Arc::new(if out == Out::Json {
            tagged(f, &FieldType::Json)
        } else {
            f
        }))
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let (arrays, rows) = arrays(&call.args)?;
        let fields = call.arg_fields.get(1..).unwrap_or_default();
        let out = self.out(fields)?;
        let safe = arrays
            .first()
            .and_then(|a| a.as_any().downcast_ref::<BooleanArray>())
            .is_some_and(|b| !b.is_empty() && b.value(0));
        let a = Args {
            function: self.function,
            arrays: &arrays[1..],
            fields,
        };
        let mut b = Builder::new(out);
        for row in 0..rows {
            match self.row(&a, row) {
                Ok(cell) => b.push(cell),
                Err(_) if safe => b.push(Cell::Null),
                Err(e) => return Err(DataFusionError::Execution(e)),
            }
        }
        let out_array = b.finish();
        if matches!(out, Out::JsonList | Out::TextList)
            && call
                .args
                .iter()
                .all(|a| matches!(a, ColumnarValue::Scalar(_)))
        {
            // A scalar list built from the array keeps its element field (and so its tag).
            return Ok(ColumnarValue::Scalar(ScalarValue::List(Arc::new(
                out_array.as_list::<i32>().clone(),
            ))));
        }
        result(out_array, &call.args)
    }
}

/// The result column, built one cell at a time.
enum Builder {
    Text(StringBuilder),
    Bool(BooleanBuilder),
    Int(Int64Builder),
    Float(Float64Builder),
    List(ListBuilder<StringBuilder>),
}

impl Builder {
    fn new(out: Out) -> Builder {
        match out {
            Out::Json | Out::Text => Builder::Text(StringBuilder::new()),
            Out::Bool => Builder::Bool(BooleanBuilder::new()),
            Out::Int => Builder::Int(Int64Builder::new()),
            Out::Float => Builder::Float(Float64Builder::new()),
            Out::JsonList | Out::TextList => Builder::List(
                ListBuilder::new(StringBuilder::new()).with_field(Arc::new(out.item_field())),
            ),
        }
    }

    fn push(&mut self, cell: Cell) {
        match (self, cell) {
            (Builder::Text(b), Cell::Text(s)) => b.append_value(s),
            (Builder::Text(b), _) => b.append_null(),
            (Builder::Bool(b), Cell::Bool(v)) => b.append_value(v),
            (Builder::Bool(b), _) => b.append_null(),
            (Builder::Int(b), Cell::Int(v)) => b.append_value(v),
            (Builder::Int(b), _) => b.append_null(),
            (Builder::Float(b), Cell::Float(v)) => b.append_value(v),
            (Builder::Float(b), _) => b.append_null(),
            (Builder::List(b), Cell::List(items)) => {
                for item in items {
                    b.values().append_option(item);
                }
                b.append(true);
            }
            (Builder::List(b), _) => b.append(false),
        }
    }

    fn finish(self) -> ArrayRef {
        match self {
            Builder::Text(mut b) => Arc::new(b.finish()),
            Builder::Bool(mut b) => Arc::new(b.finish()),
            Builder::Int(mut b) => Arc::new(b.finish()),
            Builder::Float(mut b) => Arc::new(b.finish()),
            Builder::List(mut b) => Arc::new(b.finish()),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The calls, as BigQuery writes them, rewritten to the internal UDFs.

/// A default for an argument left out.
#[derive(Clone, Copy)]
enum Default {
    Required,
    Text(&'static str),
    Bool(bool),
    Null,
}

/// How a BigQuery function's arguments map onto its UDF's: `fixed` positional ones (with
/// defaults), then `named` ones (`name => value`, with defaults), then, if `variadic`, the
/// remaining positional ones.
struct Spec {
    function: &'static str,
    udf: &'static str,
    fixed: &'static [(&'static str, Default)],
    named: &'static [(&'static str, Default)],
    variadic: bool,
}

const JSON: (&str, Default) = ("json_expr", Default::Required);
const PATH: (&str, Default) = ("json_path", Default::Required);
const ROOT: (&str, Default) = ("json_path", Default::Text("$"));

#[rustfmt::skip]
const SPECS: &[Spec] = &[
    Spec { function: "PARSE_JSON", udf: "bigq_json_parse", fixed: &[("json_string_expr", Default::Required)], named: &[("wide_number_mode", Default::Text("exact"))], variadic: false },
    Spec { function: "JSON_QUERY", udf: "bigq_json_query", fixed: &[JSON, PATH], named: &[], variadic: false },
    Spec { function: "JSON_VALUE", udf: "bigq_json_value", fixed: &[JSON, ROOT], named: &[], variadic: false },
    Spec { function: "JSON_QUERY_ARRAY", udf: "bigq_json_query_array", fixed: &[JSON, ROOT], named: &[], variadic: false },
    Spec { function: "JSON_VALUE_ARRAY", udf: "bigq_json_value_array", fixed: &[JSON, ROOT], named: &[], variadic: false },
    Spec { function: "JSON_EXTRACT", udf: "bigq_json_extract", fixed: &[JSON, PATH], named: &[], variadic: false },
    Spec { function: "JSON_EXTRACT_SCALAR", udf: "bigq_json_extract_scalar", fixed: &[JSON, ROOT], named: &[], variadic: false },
    Spec { function: "JSON_EXTRACT_ARRAY", udf: "bigq_json_extract_array", fixed: &[JSON, ROOT], named: &[], variadic: false },
    Spec { function: "JSON_EXTRACT_STRING_ARRAY", udf: "bigq_json_extract_string_array", fixed: &[JSON, ROOT], named: &[], variadic: false },
    Spec { function: "JSON_TYPE", udf: "bigq_json_type", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "BOOL", udf: "bigq_json_bool", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "INT64", udf: "bigq_json_int64", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "FLOAT64", udf: "bigq_json_float64", fixed: &[JSON], named: &[("wide_number_mode", Default::Text("round"))], variadic: false },
    Spec { function: "LAX_BOOL", udf: "bigq_json_lax_bool", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "LAX_INT64", udf: "bigq_json_lax_int64", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "LAX_FLOAT64", udf: "bigq_json_lax_float64", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "LAX_STRING", udf: "bigq_json_lax_string", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "JSON_KEYS", udf: "bigq_json_keys", fixed: &[JSON, ("max_depth", Default::Null)], named: &[("mode", Default::Text("strict"))], variadic: false },
    Spec { function: "JSON_FLATTEN", udf: "bigq_json_flatten", fixed: &[JSON], named: &[], variadic: false },
    Spec { function: "TO_JSON", udf: "bigq_json_to_json", fixed: &[("sql_value", Default::Required)], named: &[("stringify_wide_numbers", Default::Bool(false))], variadic: false },
    Spec { function: "TO_JSON_STRING", udf: "bigq_json_to_json_string", fixed: &[("value", Default::Required), ("pretty_print", Default::Bool(false))], named: &[], variadic: false },
    Spec { function: "JSON_OBJECT", udf: "bigq_json_object", fixed: &[], named: &[], variadic: true },
    Spec { function: "JSON_ARRAY", udf: "bigq_json_array", fixed: &[], named: &[], variadic: true },
    Spec { function: "JSON_SET", udf: "bigq_json_set", fixed: &[JSON], named: &[("create_if_missing", Default::Bool(true))], variadic: true },
    Spec { function: "JSON_REMOVE", udf: "bigq_json_remove", fixed: &[JSON], named: &[], variadic: true },
    Spec { function: "JSON_STRIP_NULLS", udf: "bigq_json_strip_nulls", fixed: &[JSON, ROOT], named: &[("include_arrays", Default::Bool(true)), ("remove_empty", Default::Bool(false))], variadic: false },
    Spec { function: "JSON_ARRAY_APPEND", udf: "bigq_json_array_append", fixed: &[JSON], named: &[("append_each_element", Default::Bool(true))], variadic: true },
    Spec { function: "JSON_ARRAY_INSERT", udf: "bigq_json_array_insert", fixed: &[JSON], named: &[("insert_each_element", Default::Bool(true))], variadic: true },
];

fn bool_literal(b: bool) -> Expr {
    Expr::value(ast::Value::Boolean(b))
}

/// A call of a JSON function as a call of its UDF; `SAFE.` calls come named `SAFE.NAME`.
fn rewrite(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let (safe, name) = match name.strip_prefix("SAFE.") {
        Some(n) => (true, n),
        None => (false, name),
    };
    let Some(spec) = SPECS.iter().find(|s| s.function == name) else {
        return Ok(None);
    };
    let no_match = |why: String| {
        BqError::invalid_query(format!(
            "No matching signature for function {}: {why}",
            spec.function
        ))
    };
    let mut positional = Vec::new();
    let mut named: Vec<Option<Expr>> = vec![None; spec.named.len()];
    let list = match &f.args {
        ast::FunctionArguments::List(l) => l.args.clone(),
        ast::FunctionArguments::None => Vec::new(),
        ast::FunctionArguments::Subquery(_) => {
            return Err(no_match("a subquery is not an argument".into()));
        }
    };
    for arg in list {
        let (arg_name, value) = match arg {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => (None, e),
            ast::FunctionArg::Named {
                name,
                arg: ast::FunctionArgExpr::Expr(e),
                ..
            } => (Some(name.value), e),
            ast::FunctionArg::ExprNamed {
                name: Expr::Identifier(name),
                arg: ast::FunctionArgExpr::Expr(e),
                ..
            } => (Some(name.value), e),
            other => return Err(no_match(format!("unexpected argument {other}"))),
        };
        match arg_name {
            None if named.iter().any(Option::is_some) => {
                return Err(no_match("a positional argument after a named one".into()));
            }
            None => positional.push(value),
            Some(n) => {
                let Some(i) = spec
                    .named
                    .iter()
                    .position(|(p, _)| p.eq_ignore_ascii_case(&n))
                else {
                    return Err(no_match(format!("no argument named {n}")));
                };
                named[i] = Some(value);
            }
        }
    }
    if !spec.variadic && positional.len() > spec.fixed.len() {
        return Err(no_match(format!(
            "at most {} positional arguments, got {}",
            spec.fixed.len(),
            positional.len()
        )));
    }
    let default = |d: Default, p: &str| match d {
        Default::Required => Err(no_match(format!("argument {p} is required"))),
        Default::Text(t) => Ok(string(t)),
        Default::Bool(b) => Ok(bool_literal(b)),
        Default::Null => Ok(Expr::value(ast::Value::Null)),
    };
    let mut rest = positional.into_iter();
    let mut args = vec![bool_literal(safe)];
    for (p, d) in spec.fixed {
        args.push(match rest.next() {
            Some(e) => e,
            None => default(*d, p)?,
        });
    }
    for ((p, d), given) in spec.named.iter().zip(named) {
        args.push(match given {
            Some(e) => e,
            None => default(*d, p)?,
        });
    }
    args.extend(rest);
    Ok(Some(call(spec.udf, args)))
}

/// `JSON 'text'` as the JSON value it spells.
pub(crate) fn literal(text: Expr) -> Expr {
    call("bigq_json_literal", vec![bool_literal(false), text])
}

/// `CAST(expr AS JSON)`.
pub(crate) fn cast(expr: Expr) -> Expr {
    call("bigq_json_cast", vec![bool_literal(false), expr])
}

/// Whether a call is `SAFE.NAME(..)` of a JSON function, and its name so.
pub(super) fn safe_name(f: &ast::Function) -> Option<String> {
    match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(s), ObjectNamePart::Identifier(n)]
            if s.value.eq_ignore_ascii_case("SAFE") =>
        {
            let n = n.value.to_ascii_uppercase();
            SPECS
                .iter()
                .any(|s| s.function == n)
                .then(|| format!("SAFE.{n}"))
        }
        _ => None,
    }
}

fn udf(name: &'static str, function: &'static str, op: Op) -> ScalarUDF {
    ScalarUDF::new_from_impl(JsonUdf {
        name,
        function,
        op,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

macro_rules! udfs {
    ($($f:ident: $name:literal, $function:literal, $op:expr;)*) => {
        $(fn $f() -> ScalarUDF { udf($name, $function, $op) })*
    };
}

use path::Syntax::{Legacy, Standard};

udfs! {
    literal_udf: "bigq_json_literal", "JSON literal", Op::Literal;
    cast_udf: "bigq_json_cast", "CAST AS JSON", Op::Cast;
    parse_udf: "bigq_json_parse", "PARSE_JSON", Op::ParseJson;
    query_udf: "bigq_json_query", "JSON_QUERY", Op::Query(Standard);
    value_udf: "bigq_json_value", "JSON_VALUE", Op::Value(Standard);
    query_array_udf: "bigq_json_query_array", "JSON_QUERY_ARRAY", Op::QueryArray(Standard);
    value_array_udf: "bigq_json_value_array", "JSON_VALUE_ARRAY", Op::ValueArray(Standard);
    extract_udf: "bigq_json_extract", "JSON_EXTRACT", Op::Query(Legacy);
    extract_scalar_udf: "bigq_json_extract_scalar", "JSON_EXTRACT_SCALAR", Op::Value(Legacy);
    extract_array_udf: "bigq_json_extract_array", "JSON_EXTRACT_ARRAY", Op::QueryArray(Legacy);
    extract_string_array_udf: "bigq_json_extract_string_array", "JSON_EXTRACT_STRING_ARRAY", Op::ValueArray(Legacy);
    type_udf: "bigq_json_type", "JSON_TYPE", Op::Type;
    bool_udf: "bigq_json_bool", "BOOL", Op::Bool;
    int64_udf: "bigq_json_int64", "INT64", Op::Int64;
    float64_udf: "bigq_json_float64", "FLOAT64", Op::Float64;
    string_udf: "bigq_json_string", "STRING", Op::String;
    lax_bool_udf: "bigq_json_lax_bool", "LAX_BOOL", Op::LaxBool;
    lax_int64_udf: "bigq_json_lax_int64", "LAX_INT64", Op::LaxInt64;
    lax_float64_udf: "bigq_json_lax_float64", "LAX_FLOAT64", Op::LaxFloat64;
    lax_string_udf: "bigq_json_lax_string", "LAX_STRING", Op::LaxString;
    keys_udf: "bigq_json_keys", "JSON_KEYS", Op::Keys;
    flatten_udf: "bigq_json_flatten", "JSON_FLATTEN", Op::Flatten;
    to_json_udf: "bigq_json_to_json", "TO_JSON", Op::ToJson;
    to_json_string_udf: "bigq_json_to_json_string", "TO_JSON_STRING", Op::ToJsonString;
    object_udf: "bigq_json_object", "JSON_OBJECT", Op::Object;
    array_udf: "bigq_json_array", "JSON_ARRAY", Op::Array;
    set_udf: "bigq_json_set", "JSON_SET", Op::Set;
    remove_udf: "bigq_json_remove", "JSON_REMOVE", Op::Remove;
    strip_nulls_udf: "bigq_json_strip_nulls", "JSON_STRIP_NULLS", Op::StripNulls;
    array_append_udf: "bigq_json_array_append", "JSON_ARRAY_APPEND", Op::ArrayAppend;
    array_insert_udf: "bigq_json_array_insert", "JSON_ARRAY_INSERT", Op::ArrayInsert;
    subscript_udf: "bigq_json_subscript", "JSON subscript", Op::Subscript;
    array_literal_udf: "bigq_json_array_literal", "ARRAY", Op::ArrayLiteral;
}

/// The functions this file makes, for the registry: BigQuery's, as rewrites, and the UDFs
/// they are rewritten to (their first argument the `SAFE.` flag).
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Json, &["PARSE_JSON(STRING[, wide_number_mode => STRING]) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["JSON_QUERY(JSON, STRING) -> JSON", "JSON_QUERY(STRING, STRING) -> STRING"], rewrite),
    Function::rewrite(Family::Json, &["JSON_VALUE(JSON[, STRING]) -> STRING", "JSON_VALUE(STRING[, STRING]) -> STRING"], rewrite),
    Function::rewrite(Family::Json, &["JSON_QUERY_ARRAY(JSON[, STRING]) -> ARRAY<JSON>", "JSON_QUERY_ARRAY(STRING[, STRING]) -> ARRAY<STRING>"], rewrite),
    Function::rewrite(Family::Json, &["JSON_VALUE_ARRAY(JSON[, STRING]) -> ARRAY<STRING>", "JSON_VALUE_ARRAY(STRING[, STRING]) -> ARRAY<STRING>"], rewrite),
    Function::rewrite(Family::Json, &["JSON_EXTRACT(JSON, STRING) -> JSON", "JSON_EXTRACT(STRING, STRING) -> STRING"], rewrite),
    Function::rewrite(Family::Json, &["JSON_EXTRACT_SCALAR(JSON[, STRING]) -> STRING", "JSON_EXTRACT_SCALAR(STRING[, STRING]) -> STRING"], rewrite),
    Function::rewrite(Family::Json, &["JSON_EXTRACT_ARRAY(JSON[, STRING]) -> ARRAY<JSON>", "JSON_EXTRACT_ARRAY(STRING[, STRING]) -> ARRAY<STRING>"], rewrite),
    Function::rewrite(Family::Json, &["JSON_EXTRACT_STRING_ARRAY(JSON[, STRING]) -> ARRAY<STRING>", "JSON_EXTRACT_STRING_ARRAY(STRING[, STRING]) -> ARRAY<STRING>"], rewrite),
    Function::rewrite(Family::Json, &["JSON_TYPE(JSON) -> STRING"], rewrite),
    Function::rewrite(Family::Json, &["BOOL(JSON) -> BOOL"], rewrite),
    Function::rewrite(Family::Json, &["INT64(JSON) -> INT64"], rewrite),
    Function::rewrite(Family::Json, &["FLOAT64(JSON[, wide_number_mode => STRING]) -> FLOAT64"], rewrite),
    Function::rewrite(Family::Json, &["LAX_BOOL(JSON) -> BOOL"], rewrite),
    Function::rewrite(Family::Json, &["LAX_INT64(JSON) -> INT64"], rewrite),
    Function::rewrite(Family::Json, &["LAX_FLOAT64(JSON) -> FLOAT64"], rewrite),
    Function::rewrite(Family::Json, &["LAX_STRING(JSON) -> STRING"], rewrite),
    Function::rewrite(Family::Json, &["JSON_KEYS(JSON[, INT64][, mode => STRING]) -> ARRAY<STRING>"], rewrite),
    Function::rewrite(Family::Json, &["JSON_FLATTEN(JSON) -> ARRAY<JSON>"], rewrite),
    Function::rewrite(Family::Json, &["TO_JSON(T[, stringify_wide_numbers => BOOL]) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["TO_JSON_STRING(T[, BOOL]) -> STRING"], rewrite),
    Function::rewrite(Family::Json, &["JSON_OBJECT([STRING, T, ...]) -> JSON", "JSON_OBJECT(ARRAY<STRING>, ARRAY<T>) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["JSON_ARRAY([T, ...]) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["JSON_SET(JSON, STRING, T[, STRING, T, ...][, create_if_missing => BOOL]) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["JSON_REMOVE(JSON, STRING[, STRING, ...]) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["JSON_STRIP_NULLS(JSON[, STRING][, include_arrays => BOOL][, remove_empty => BOOL]) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["JSON_ARRAY_APPEND(JSON, STRING, T[, STRING, T, ...][, append_each_element => BOOL]) -> JSON"], rewrite),
    Function::rewrite(Family::Json, &["JSON_ARRAY_INSERT(JSON, STRING, T[, STRING, T, ...][, insert_each_element => BOOL]) -> JSON"], rewrite),
    Function::udf(Family::Json, &["bigq_json_literal(BOOL, STRING) -> JSON"], literal_udf),
    Function::udf(Family::Json, &["bigq_json_cast(BOOL, STRING) -> JSON"], cast_udf),
    Function::udf(Family::Json, &["bigq_json_parse(BOOL, STRING, STRING) -> JSON"], parse_udf),
    Function::udf(Family::Json, &["bigq_json_query(BOOL, STRING, STRING) -> STRING"], query_udf),
    Function::udf(Family::Json, &["bigq_json_value(BOOL, STRING, STRING) -> STRING"], value_udf),
    Function::udf(Family::Json, &["bigq_json_query_array(BOOL, STRING, STRING) -> ARRAY<STRING>"], query_array_udf),
    Function::udf(Family::Json, &["bigq_json_value_array(BOOL, STRING, STRING) -> ARRAY<STRING>"], value_array_udf),
    Function::udf(Family::Json, &["bigq_json_extract(BOOL, STRING, STRING) -> STRING"], extract_udf),
    Function::udf(Family::Json, &["bigq_json_extract_scalar(BOOL, STRING, STRING) -> STRING"], extract_scalar_udf),
    Function::udf(Family::Json, &["bigq_json_extract_array(BOOL, STRING, STRING) -> ARRAY<STRING>"], extract_array_udf),
    Function::udf(Family::Json, &["bigq_json_extract_string_array(BOOL, STRING, STRING) -> ARRAY<STRING>"], extract_string_array_udf),
    Function::udf(Family::Json, &["bigq_json_type(BOOL, JSON) -> STRING"], type_udf),
    Function::udf(Family::Json, &["bigq_json_bool(BOOL, JSON) -> BOOL"], bool_udf),
    Function::udf(Family::Json, &["bigq_json_int64(BOOL, JSON) -> INT64"], int64_udf),
    Function::udf(Family::Json, &["bigq_json_float64(BOOL, JSON, STRING) -> FLOAT64"], float64_udf),
    Function::udf(Family::Json, &["bigq_json_string(BOOL, JSON) -> STRING"], string_udf),
    Function::udf(Family::Json, &["bigq_json_lax_bool(BOOL, JSON) -> BOOL"], lax_bool_udf),
    Function::udf(Family::Json, &["bigq_json_lax_int64(BOOL, JSON) -> INT64"], lax_int64_udf),
    Function::udf(Family::Json, &["bigq_json_lax_float64(BOOL, JSON) -> FLOAT64"], lax_float64_udf),
    Function::udf(Family::Json, &["bigq_json_lax_string(BOOL, JSON) -> STRING"], lax_string_udf),
    Function::udf(Family::Json, &["bigq_json_keys(BOOL, JSON, INT64, STRING) -> ARRAY<STRING>"], keys_udf),
    Function::udf(Family::Json, &["bigq_json_flatten(BOOL, JSON) -> ARRAY<JSON>"], flatten_udf),
    Function::udf(Family::Json, &["bigq_json_to_json(BOOL, T, BOOL) -> JSON"], to_json_udf),
    Function::udf(Family::Json, &["bigq_json_to_json_string(BOOL, T, BOOL) -> STRING"], to_json_string_udf),
    Function::udf(Family::Json, &["bigq_json_object(BOOL, STRING, T) -> JSON"], object_udf),
    Function::udf(Family::Json, &["bigq_json_array(BOOL, T) -> JSON"], array_udf),
    Function::udf(Family::Json, &["bigq_json_set(BOOL, JSON, BOOL, STRING, T) -> JSON"], set_udf),
    Function::udf(Family::Json, &["bigq_json_remove(BOOL, JSON, STRING) -> JSON"], remove_udf),
    Function::udf(Family::Json, &["bigq_json_strip_nulls(BOOL, JSON, STRING, BOOL, BOOL) -> JSON"], strip_nulls_udf),
    Function::udf(Family::Json, &["bigq_json_array_append(BOOL, JSON, BOOL, STRING, T) -> JSON"], array_append_udf),
    Function::udf(Family::Json, &["bigq_json_array_insert(BOOL, JSON, BOOL, STRING, T) -> JSON"], array_insert_udf),
    Function::udf(Family::Json, &["bigq_json_subscript(BOOL, JSON, T) -> JSON"], subscript_udf),
    Function::udf(Family::Json, &["bigq_json_array_literal(BOOL, JSON) -> ARRAY<JSON>"], array_literal_udf),
];

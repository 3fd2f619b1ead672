//! The `SAFE.` prefix: `SAFE.f(args)` is NULL in each row where `f` raises an error.
//!
//! The call is rewritten as `bigq_safe(f(args))`, `f` being whatever the call becomes (an
//! emulator UDF or a DataFusion built-in); once the plan is typed, the operator rule
//! (`rewrite::operators`) replaces the pair by `f` wrapped in [`Safe`], which runs `f` on the
//! whole batch and, only if that fails, row by row.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::{Result as DfResult, ScalarValue, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr, Ident, ObjectName, ObjectNamePart};

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::call;

/// The marker a `SAFE.` call is rewritten to, until the plan is typed.
pub(crate) const SAFE: &str = "bigq_safe";

/// Functions the reference names as not taking the prefix, with the aggregate and window
/// functions (which the typed plan rejects, as they are no scalar call).
const NOT_SAFE: &[&str] = &[
    "IF",
    "IFNULL",
    "NULLIF",
    "COALESCE",
    "CAST",
    "SAFE_CAST",
    "EXTRACT",
    "RAND",
    "GENERATE_UUID",
    "CURRENT_DATE",
    "CURRENT_DATETIME",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "SESSION_USER",
];

/// `SAFE.f(args)` as `bigq_safe(f(args))`, with `f(args)` rewritten as its own call would be.
pub(crate) fn rewrite(
    f: &ast::Function,
    rewrite_call: fn(&ast::Function) -> BqResult<Option<Expr>>,
) -> BqResult<Option<Expr>> {
    let [
        ObjectNamePart::Identifier(prefix),
        ObjectNamePart::Identifier(name),
    ] = f.name.0.as_slice()
    else {
        return Ok(None);
    };
    if !prefix.value.eq_ignore_ascii_case("SAFE") {
        return Ok(None);
    }
    let upper = name.value.to_ascii_uppercase();
    if NOT_SAFE.contains(&upper.as_str()) || f.over.is_some() {
        return Err(BqError::invalid_query(format!(
            "Function {upper} does not support SAFE error mode"
        )));
    }
    let mut inner = f.clone();
    inner.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(
        name.value.clone(),
    ))]);
    let rewritten = rewrite_call(&inner)?.unwrap_or(Expr::Function(inner));
    Ok(Some(safe_call(rewritten)))
}

/// `expr` under the `SAFE.` prefix.
pub(crate) fn safe_call(expr: Expr) -> Expr {
    call(SAFE, vec![expr])
}

/// The marker: its one argument, unchanged (the operator rule replaces it before a query
/// runs).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Marker {
    signature: Signature,
}

impl ScalarUDFImpl for Marker {
    fn name(&self) -> &str {
        SAFE
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        Ok(types.to_vec())
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        match types {
            [t] => Ok(t.clone()),
            _ => plan_err!("SAFE. takes one call"),
        }
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        match args.args.pop() {
            Some(v) => Ok(v),
            None => plan_err!("SAFE. takes one call"),
        }
    }
}

fn bigq_safe() -> ScalarUDF {
    ScalarUDF::new_from_impl(Marker {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// A scalar function whose errors are NULLs, row by row.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Safe {
    inner: Arc<ScalarUDF>,
    name: String,
}

impl ScalarUDFImpl for Safe {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        self.inner.coerce_types(types)
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        self.inner.return_type(types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        let f = self.inner.return_field_from_args(args)?;
        Ok(Arc::new(f.as_ref().clone().with_nullable(true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        if let Ok(v) = self.inner.invoke_with_args(args.clone()) {
            return Ok(v);
        }
        let t = args.return_field.data_type().clone();
        let arrays: Vec<_> = args
            .args
            .iter()
            .filter_map(|a| match a {
                ColumnarValue::Array(a) => Some(a.len()),
                ColumnarValue::Scalar(_) => None,
            })
            .collect();
        let Some(&rows) = arrays.first() else {
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from(&t)?));
        };
        let mut out = Vec::with_capacity(rows);
        for i in 0..rows {
            let row = args
                .args
                .iter()
                .map(|a| match a {
                    ColumnarValue::Array(a) => {
                        ScalarValue::try_from_array(a, i).map(ColumnarValue::Scalar)
                    }
                    ColumnarValue::Scalar(s) => Ok(ColumnarValue::Scalar(s.clone())),
                })
                .collect::<DfResult<Vec<_>>>()?;
            let one = ScalarFunctionArgs {
                args: row,
                arg_fields: args.arg_fields.clone(),
                number_rows: 1,
                return_field: args.return_field.clone(),
                config_options: args.config_options.clone(),
            };
            let v = match self.inner.invoke_with_args(one) {
                Ok(ColumnarValue::Scalar(s)) => s,
                Ok(ColumnarValue::Array(a)) if a.len() == 1 => ScalarValue::try_from_array(&a, 0)?,
                // What the emulator does not compute is not an error BigQuery's SAFE. would
                // hide: NULL there would be a plausible wrong answer.
                Err(e) if e.to_string().contains(UNSUPPORTED) => return Err(e),
                _ => ScalarValue::try_from(&t)?,
            };
            out.push(v);
        }
        Ok(ColumnarValue::Array(ScalarValue::iter_to_array(out)?))
    }
}

/// The start of the message of an error for what the emulator does not compute.
const UNSUPPORTED: &str = "Unsupported by bigq-emulator";

/// `f` with its errors as NULLs.
pub(crate) fn wrap(f: Arc<ScalarUDF>) -> Arc<ScalarUDF> {
    let name = format!("safe.{}", f.name());
    Arc::new(ScalarUDF::new_from_impl(Safe { inner: f, name }))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Math, &["bigq_safe(INT64) -> INT64", "bigq_safe(STRING) -> STRING"], bigq_safe),
];

//! Utility functions: `GENERATE_UUID`, and the debugging function `ERROR`.

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result as DfResult, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr};

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::call;

/// `GENERATE_UUID()` as DataFusion's `uuid()`.
pub(crate) fn generate_uuid(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    if !crate::sql::ast::function_args(f).is_some_and(|a| a.is_empty()) {
        return Err(BqError::invalid_query(
            "No matching signature for function GENERATE_UUID: it takes no arguments",
        ));
    }
    Ok(Some(call("uuid", Vec::new())))
}

/// `ERROR(message)`: fails the query with `message` when a row reaches it (in a branch of
/// `IF` or `CASE` no row takes, it does nothing). Volatile, so that planning never runs it.
pub(crate) fn error_udf() -> ScalarUDF {
    ScalarUDF::new_from_impl(ErrorFn {
        signature: Signature::exact(vec![DataType::Utf8], Volatility::Volatile),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ErrorFn {
    signature: Signature,
}

impl ScalarUDFImpl for ErrorFn {
    fn name(&self) -> &str {
        "error"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Null)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        if args.number_rows == 0 {
            return Ok(ColumnarValue::Scalar(datafusion::common::ScalarValue::Null));
        }
        let messages = args.args[0].to_array(args.number_rows)?;
        let messages = messages.as_string::<i32>();
        let message = (0..messages.len())
            .find(|&i| messages.is_valid(i))
            .map_or("NULL", |i| messages.value(i));
        exec_err!("{message}")
    }
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Utility, &["GENERATE_UUID() -> STRING"], generate_uuid),
    Function::udf(Family::Utility, &["ERROR(STRING) -> NULL"], error_udf),
];

//! Utility functions: `GENERATE_UUID`.

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

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Utility, &["GENERATE_UUID() -> STRING"], generate_uuid),
];

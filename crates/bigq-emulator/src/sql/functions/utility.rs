//! Utility functions: `GENERATE_UUID`.

use datafusion::sql::sqlparser::ast::{self, Expr};

use super::registry::{Family, Function};
use crate::error::BqResult;
use crate::sql::ast::call;

/// `GENERATE_UUID()` as DataFusion's `uuid()`.
pub(crate) fn generate_uuid(_: &str, _: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(Some(call("uuid", Vec::new())))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Utility, &["GENERATE_UUID() -> STRING"], generate_uuid),
];

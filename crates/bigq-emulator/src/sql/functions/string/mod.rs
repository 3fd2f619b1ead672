//! String functions: those DataFusion spells otherwise (`FROM_HEX`, `REGEXP_CONTAINS`), and
//! UDFs for the ones it lacks or gives other semantics, one file per theme.

mod format;

use datafusion::sql::sqlparser::ast::{self, Expr};

use super::row::udf_variadic;
use super::{Family, Function};
use crate::error::BqResult;
use crate::sql::ast::{call, function_args, string};

/// `FROM_HEX(text)` as `decode(text, 'hex')`.
pub(crate) fn from_hex(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).filter(|a| a.len() == 1).map(|mut args| {
        args.push(string("hex"));
        call("decode", args)
    }))
}

/// `REGEXP_CONTAINS(text, regex)` as `regexp_like`.
pub(crate) fn regexp_contains(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).map(|args| call("regexp_like", args)))
}

const FORMAT: &[&str] = &["FORMAT(STRING[, T]) -> STRING"];

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::String, FORMAT, || udf_variadic(FORMAT, format::format, false)),
    Function::rewrite(Family::String, &["FROM_HEX(STRING) -> BYTES"], from_hex),
    Function::rewrite(Family::String, &["REGEXP_CONTAINS(STRING, STRING) -> BOOL"], regexp_contains),
];

//! Conditional expressions written as calls: `IF` and `IFNULL`.

use datafusion::sql::sqlparser::ast::{self, Expr};

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, function_args};

/// `IF(condition, then, else)` as `CASE WHEN condition THEN then ELSE else END`.
pub(crate) fn if_(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let args = function_args(f)
        .filter(|a| a.len() == 3)
        .ok_or_else(|| BqError::invalid_query("IF takes 3 arguments"))?;
    let mut it = args.into_iter();
    let (Some(c), Some(a), Some(b)) = (it.next(), it.next(), it.next()) else {
        return Ok(None);
    };
    Ok(Some(Expr::Case {
        case_token: ast::helpers::attached_token::AttachedToken::empty(),
        end_token: ast::helpers::attached_token::AttachedToken::empty(),
        operand: None,
        conditions: vec![ast::CaseWhen {
            condition: c,
            result: a,
        }],
        else_result: Some(Box::new(b)),
    }))
}

/// `IFNULL(a, b)` as `coalesce(a, b)`.
pub(crate) fn ifnull(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).map(|args| call("coalesce", args)))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Conditional, &["IF(BOOL, T, T) -> T"], if_),
    Function::rewrite(Family::Conditional, &["IFNULL(T, T) -> T"], ifnull),
];

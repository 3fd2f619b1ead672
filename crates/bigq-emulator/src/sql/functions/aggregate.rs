//! Aggregate functions DataFusion spells otherwise: `COUNTIF`.

use datafusion::sql::sqlparser::ast::{self, Expr, Ident, ObjectName, ObjectNamePart, Value};

use super::{Family, Function};
use crate::error::BqResult;
use crate::sql::ast::function_args;

/// `COUNTIF(condition)` as `count(CASE WHEN condition THEN 1 END)`, keeping the call's
/// `OVER`, `FILTER` and the rest.
pub(crate) fn countif(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 1) else {
        return Ok(None);
    };
    let c = args.into_iter().next().unwrap_or(Expr::value(Value::Null));
    let mut g = f.clone();
    g.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("count"))]);
    g.args = ast::FunctionArguments::List(ast::FunctionArgumentList {
        duplicate_treatment: None,
        args: vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
            Expr::Case {
                case_token: ast::helpers::attached_token::AttachedToken::empty(),
                end_token: ast::helpers::attached_token::AttachedToken::empty(),
                operand: None,
                conditions: vec![ast::CaseWhen {
                    condition: c,
                    result: Expr::value(Value::Number("1".into(), false)),
                }],
                else_result: None,
            },
        ))],
        clauses: Vec::new(),
    });
    Ok(Some(Expr::Function(g)))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Aggregate, &["COUNTIF(BOOL) -> INT64"], countif),
];

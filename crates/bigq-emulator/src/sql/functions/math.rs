//! Mathematical functions DataFusion spells otherwise: `MOD`, `DIV` and `SAFE_DIVIDE`.

use datafusion::sql::sqlparser::ast::{self, BinaryOperator, Expr, Value};

use super::{Family, Function};
use crate::error::BqResult;
use crate::sql::ast::{binary, cast, function_args};

/// `MOD(a, b)` as `a % b`.
pub(crate) fn modulo(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 2) else {
        return Ok(None);
    };
    let mut it = args.into_iter();
    Ok(match (it.next(), it.next()) {
        (Some(a), Some(b)) => Some(Expr::Nested(Box::new(Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::Modulo,
            right: Box::new(b),
        }))),
        _ => None,
    })
}

/// `DIV(a, b)` as `a / b`.
pub(crate) fn div(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f)
        .filter(|a| a.len() == 2)
        .map(|args| binary(args[0].clone(), BinaryOperator::Divide, args[1].clone())))
}

/// `SAFE_DIVIDE(a, b)`: `a / b` in FLOAT64, NULL where `b` is 0.
pub(crate) fn safe_divide(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 2) else {
        return Ok(None);
    };
    let mut it = args.into_iter();
    let (Some(a), Some(b)) = (it.next(), it.next()) else {
        return Ok(None);
    };
    let a = cast(a, ast::DataType::Double(ast::ExactNumberInfo::None));
    Ok(Some(Expr::Case {
        case_token: ast::helpers::attached_token::AttachedToken::empty(),
        end_token: ast::helpers::attached_token::AttachedToken::empty(),
        operand: None,
        conditions: vec![ast::CaseWhen {
            condition: Expr::BinaryOp {
                left: Box::new(b.clone()),
                op: BinaryOperator::Eq,
                right: Box::new(Expr::value(Value::Number("0".into(), false))),
            },
            result: Expr::value(Value::Null),
        }],
        else_result: Some(Box::new(Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::Divide,
            right: Box::new(b),
        })),
    }))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Math, &["DIV(INT64, INT64) -> INT64"], div),
    Function::rewrite(Family::Math, &["MOD(INT64, INT64) -> INT64"], modulo),
    Function::rewrite(Family::Math, &["SAFE_DIVIDE(INT64, INT64) -> FLOAT64", "SAFE_DIVIDE(FLOAT64, FLOAT64) -> FLOAT64"],
        safe_divide),
];

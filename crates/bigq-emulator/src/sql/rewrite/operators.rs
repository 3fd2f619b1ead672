//! Operators DataFusion reads otherwise: `/` always in FLOAT64, `x ± INTERVAL` typed as
//! BigQuery types it, `x IN UNNEST(array)`, and array subscripts `[OFFSET(i)]` and
//! `[ORDINAL(i)]`.

use datafusion::sql::sqlparser::ast::{self, BinaryOperator, Expr, Value};

use crate::sql::ast::{binary, call, cast, function_args, function_name, number};

/// `x + INTERVAL ...` or `x - INTERVAL ...` as the UDF that types it as BigQuery does
/// (DATE + INTERVAL is a DATETIME in BigQuery; DataFusion keeps DATE).
pub(super) fn interval_arithmetic(left: &mut Expr, op: &BinaryOperator, right: &mut Expr) -> Expr {
    let name = if *op == BinaryOperator::Plus {
        "bigq_add_interval"
    } else {
        "bigq_sub_interval"
    };
    let l = std::mem::replace(left, Expr::value(Value::Null));
    let r = std::mem::replace(right, Expr::value(Value::Null));
    call(name, vec![l, r])
}

/// `a / b` divides in FLOAT64, as in BigQuery (DataFusion divides integers as integers).
pub(super) fn float_division(left: &mut Expr) {
    let l = std::mem::replace(left, Expr::value(Value::Null));
    *left = cast(l, ast::DataType::Double(ast::ExactNumberInfo::None));
}

/// `x [NOT] IN UNNEST(array)` as `[NOT] array_has(array, x)`.
pub(super) fn in_unnest(expr: &Expr, array_expr: &Expr, negated: bool) -> Expr {
    let has = call("array_has", vec![array_expr.clone(), expr.clone()]);
    if negated {
        Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr: Box::new(has),
        }
    } else {
        has
    }
}

/// `array[OFFSET(i)]` and `array[ORDINAL(i)]` (and their `SAFE_` forms) as DataFusion's
/// 1-based subscripts.
pub(super) fn subscripts(access_chain: &mut [ast::AccessExpr]) {
    for a in access_chain.iter_mut() {
        // `(expr).name`: DataFusion takes a field name after a dot only as a string.
        if let ast::AccessExpr::Dot(Expr::Identifier(id)) = a {
            *a = ast::AccessExpr::Dot(Expr::value(Value::SingleQuotedString(id.value.clone())));
            continue;
        }
        if let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = a
            && let Expr::Function(f) = index
            && let Some(n) = function_name(f)
            && let Some(mut args) = function_args(f).filter(|a| a.len() == 1)
        {
            let i = args.pop().unwrap_or(Expr::value(Value::Null));
            *index = match n.as_str() {
                "OFFSET" | "SAFE_OFFSET" => binary(i, BinaryOperator::Plus, number(1)),
                "ORDINAL" | "SAFE_ORDINAL" => i,
                _ => continue,
            };
        }
    }
}

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

/// `array[OFFSET(i)]` and `array[ORDINAL(i)]` as `bigq_array_at`, which raises
/// BigQuery's error for an index out of bounds; `SAFE_OFFSET`/`SAFE_ORDINAL` as DataFusion's
/// 1-based subscripts, NULL out of bounds. The whole access, when it changed.
pub(super) fn subscripts(root: &mut Expr, access_chain: &mut Vec<ast::AccessExpr>) -> Option<Expr> {
    let mut base: Option<Expr> = None;
    let mut rest: Vec<ast::AccessExpr> = Vec::new();
    for a in std::mem::take(access_chain) {
        let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = &a else {
            rest.push(a);
            continue;
        };
        let (checked, i) = match index {
            Expr::Function(f) => match (
                function_name(f).as_deref(),
                function_args(f).filter(|a| a.len() == 1),
            ) {
                (Some(n @ ("OFFSET" | "SAFE_OFFSET")), Some(mut args)) => {
                    let i = args.pop().unwrap_or(Expr::value(Value::Null));
                    (n == "OFFSET", binary(i, BinaryOperator::Plus, number(1)))
                }
                (Some(n @ ("ORDINAL" | "SAFE_ORDINAL")), Some(mut args)) => (
                    n == "ORDINAL",
                    args.pop().unwrap_or(Expr::value(Value::Null)),
                ),
                _ => {
                    rest.push(a);
                    continue;
                }
            },
            // A bare `[i]` is left to DataFusion: on JSON it is a member or element access.
            _ => {
                rest.push(a);
                continue;
            }
        };
        if !checked {
            rest.push(ast::AccessExpr::Subscript(ast::Subscript::Index {
                index: i,
            }));
            continue;
        }
        let array = match base.take() {
            None if rest.is_empty() => std::mem::replace(root, Expr::value(Value::Null)),
            None => Expr::CompoundFieldAccess {
                root: Box::new(std::mem::replace(root, Expr::value(Value::Null))),
                access_chain: std::mem::take(&mut rest),
            },
            Some(b) if rest.is_empty() => b,
            Some(b) => Expr::CompoundFieldAccess {
                root: Box::new(b),
                access_chain: std::mem::take(&mut rest),
            },
        };
        base = Some(call("bigq_array_at", vec![array, i]));
    }
    match base {
        None => {
            *access_chain = rest;
            None
        }
        Some(b) if rest.is_empty() => Some(b),
        Some(b) => Some(Expr::CompoundFieldAccess {
            root: Box::new(b),
            access_chain: rest,
        }),
    }
}

//! Navigation and numbering functions: DataFusion's own window functions, with the checks
//! BigQuery makes of their calls (the numbering functions take an `ORDER BY` where
//! BigQuery requires one and no window frame; `LAG`/`LEAD` take a non-negative offset).

use datafusion::sql::sqlparser::ast::{self, Expr, Value};

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::function_args;

/// The call's inline window, if it has one (a named window is checked where it is defined).
fn window(f: &ast::Function) -> Option<&ast::WindowSpec> {
    match &f.over {
        Some(ast::WindowType::WindowSpec(w)) if w.window_name.is_none() => Some(w),
        _ => None,
    }
}

/// A literal integer argument: `Some(None)` for NULL, `None` when it is not a literal.
fn literal_int(e: &Expr) -> Option<Option<i64>> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok().map(Some),
            Value::Null => Some(None),
            _ => None,
        },
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => literal_int(expr).map(|n| n.map(|n| -n)),
        Expr::Cast { expr, .. } | Expr::Nested(expr) => literal_int(expr),
        _ => None,
    }
}

/// `RANK`, `DENSE_RANK`, `PERCENT_RANK`, `CUME_DIST`, `NTILE` and `ROW_NUMBER`: no window
/// frame, an `ORDER BY` (but for `ROW_NUMBER`), and for `NTILE` a positive bucket count.
pub(crate) fn numbering(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    if let Some(w) = window(f) {
        if w.window_frame.is_some() {
            return Err(BqError::invalid_query(format!(
                "Window framing clause is not allowed for analytic function {name}"
            )));
        }
        if w.order_by.is_empty() && name != "ROW_NUMBER" {
            return Err(BqError::invalid_query(format!(
                "Window ORDER BY is required for analytic function {name}"
            )));
        }
    }
    if name == "NTILE"
        && let Some(args) = function_args(f)
        && let Some(n) = args.first().and_then(literal_int)
        && n.is_none_or(|n| n <= 0)
    {
        return Err(BqError::invalid_query(format!(
            "The N value (number of buckets) for NTILE must be positive, got {}",
            n.map_or("NULL".to_string(), |n| n.to_string())
        )));
    }
    Ok(None)
}

/// `LAG`/`LEAD(x, offset [, default])`: the offset must be a non-NULL, non-negative INT64.
pub(crate) fn lag_lead(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    if let Some(args) = function_args(f)
        && let Some(n) = args.get(1).and_then(literal_int)
        && n.is_none_or(|n| n < 0)
    {
        return Err(BqError::invalid_query(format!(
            "The offset to {name} must be non-negative and not NULL, got {}",
            n.map_or("NULL".to_string(), |n| n.to_string())
        )));
    }
    Ok(None)
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Numbering, &["RANK() -> INT64"], numbering),
    Function::rewrite(Family::Numbering, &["DENSE_RANK() -> INT64"], numbering),
    Function::rewrite(Family::Numbering, &["PERCENT_RANK() -> FLOAT64"], numbering),
    Function::rewrite(Family::Numbering, &["CUME_DIST() -> FLOAT64"], numbering),
    Function::rewrite(Family::Numbering, &["NTILE(INT64) -> INT64"], numbering),
    Function::rewrite(Family::Numbering, &["ROW_NUMBER() -> INT64"], numbering),
    Function::rewrite(Family::Navigation, &["LAG(T[, INT64[, T]]) -> T"], lag_lead),
    Function::rewrite(Family::Navigation, &["LEAD(T[, INT64[, T]]) -> T"], lag_lead),
];

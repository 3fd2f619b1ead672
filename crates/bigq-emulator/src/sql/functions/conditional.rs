//! Conditional expressions written as calls: `IF` and `IFNULL`; BigQuery's type checks of
//! `CASE`, `IF` and `COALESCE`, which DataFusion would coerce past: a condition must be BOOL
//! (checked by a UDF the condition passes through, which also marks the CASE an `IF` became),
//! and the results must have a common type.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result as DfResult, ScalarValue};
use datafusion::logical_expr::ExprSchemable;
use datafusion::prelude::Expr as DfExpr;
use datafusion::sql::sqlparser::ast::{self, Expr};

use super::registry::{Family, Function};
use super::row::{Call, bq_type_name, udf_shown};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, function_args};

/// The UDF an `IF`'s condition passes through.
const IF_CONDITION: &str = "bigq_if_condition";
/// The UDF a searched `CASE`'s conditions pass through.
const CASE_CONDITION: &str = "bigq_case_condition";

/// A condition, unchanged: the UDF's signature is what checks it is BOOL.
fn condition(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    Ok(a[0].clone())
}

/// The searched `CASE`'s conditions, each checked to be BOOL.
pub(crate) fn case_conditions(conditions: &mut [ast::CaseWhen]) {
    for c in conditions {
        let cond = std::mem::replace(&mut c.condition, Expr::value(ast::Value::Null));
        c.condition = call(CASE_CONDITION, vec![cond]);
    }
}

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
            condition: call(IF_CONDITION, vec![c]),
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
    Function::udf(Family::Conditional, &["bigq_if_condition(BOOL) -> BOOL"], || udf_shown(&["bigq_if_condition(BOOL) -> BOOL"], "IF", condition)),
    Function::udf(Family::Conditional, &["bigq_case_condition(BOOL) -> BOOL"], || udf_shown(&["bigq_case_condition(BOOL) -> BOOL"], "CASE", condition)),
];

/// Kinds of type no BigQuery supertype joins: numbers, STRING, BYTES and BOOL (a value of one
/// kind is never coerced to another); `None` for the types this check leaves to DataFusion.
pub(super) fn kind(t: &DataType) -> Option<u8> {
    match t {
        t if t.is_numeric() => Some(0),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => Some(1),
        DataType::Binary | DataType::BinaryView | DataType::LargeBinary => Some(2),
        DataType::Boolean => Some(3),
        _ => None,
    }
}

/// The error for results of `types` without a common type, or `None`.
fn no_common_type(what: &str, types: &[DataType]) -> Option<BqError> {
    let kinds: Vec<u8> = types.iter().filter_map(kind).collect();
    if kinds.windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    let shown: Vec<String> = types.iter().map(bq_type_name).collect();
    Some(BqError::invalid_query(format!(
        "No matching signature for {what}: the results must have a common supertype, but \
         found: {}",
        shown.join(", ")
    )))
}

/// The error for a `CASE` or `IF` whose results, or a `COALESCE` whose arguments, have no
/// common type (BigQuery requires one; DataFusion would coerce past it); checked by
/// [`super::comparable::check_plan`] on the plan before DataFusion coerces it.
pub(super) fn results_error(e: &DfExpr, schema: &DFSchema) -> Option<BqError> {
    match e {
        DfExpr::Case(c) => {
            let is_if = matches!(
                c.when_then_expr.first().map(|(w, _)| w.as_ref()),
                Some(DfExpr::ScalarFunction(f)) if f.name() == IF_CONDITION
            );
            let results = c
                .when_then_expr
                .iter()
                .map(|(_, t)| t.as_ref())
                .chain(c.else_expr.as_deref());
            let types = types_of(results, schema)?;
            no_common_type(
                if is_if {
                    "function IF"
                } else {
                    "operator CASE"
                },
                &types,
            )
        }
        DfExpr::ScalarFunction(f) if f.name() == "coalesce" => {
            let types = types_of(f.args.iter(), schema)?;
            no_common_type("function COALESCE", &types)
        }
        _ => None,
    }
}

/// The types of expressions; `None` if one cannot be worked out yet (an outer column), which
/// is left to DataFusion.
fn types_of<'a>(es: impl Iterator<Item = &'a DfExpr>, schema: &DFSchema) -> Option<Vec<DataType>> {
    es.map(|e| e.get_type(schema).ok()).collect()
}

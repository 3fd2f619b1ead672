//! BigQuery's rules for which types compare, group and order, checked on a plan before
//! DataFusion coerces it (DataFusion compares, groups and orders arrays and structs, and
//! unions an INT64 column with a STRING one as STRING, where BigQuery raises an error):
//! - an ARRAY has no equality and no order: it cannot be grouped by, made DISTINCT,
//!   compared, ordered by or passed to `MIN`/`MAX`;
//! - a STRUCT has equality but no order (`<`, ORDER BY, `MIN`/`MAX`);
//! - the columns of a set operation have a common supertype;
//! - a RANGE window frame with an offset orders by one number or date;
//! - the numeric aggregates take numbers, `STRING_AGG` and `ARRAY_TO_STRING` strings or
//!   bytes, and `ARRAY_CONCAT` arrays of one element type (DataFusion coerces past these).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::DFSchema;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Distinct, ExprSchemable, LogicalPlan, Operator};
use datafusion::prelude::Expr;

use super::conditional::kind;
use super::row::bq_type_name;
use crate::error::{BqError, BqResult};
use crate::sql::types::range_element;

fn is_array(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
    )
}

/// A STRUCT that is no RANGE (a RANGE is a marked struct, and orders).
fn is_struct(t: &DataType) -> bool {
    matches!(t, DataType::Struct(_)) && range_element(t).is_none()
}

fn unordered(t: &DataType) -> bool {
    is_array(t) || is_struct(t)
}

/// Checks a plan (not yet coerced) against BigQuery's rules for comparing, grouping and
/// ordering, and the common types of `CASE`, `IF` and `COALESCE` results
/// ([`super::conditional::results_error`]), in one walk.
pub(crate) fn check_plan(plan: &LogicalPlan) -> BqResult<()> {
    let mut found: Option<BqError> = None;
    let walked = plan.apply_with_subqueries(|node| {
        if let Some(err) = node_error(node) {
            found = Some(err);
            return Ok(TreeNodeRecursion::Stop);
        }
        let schema = merge_schema(&node.inputs());
        node.apply_expressions(|e| {
            e.apply(|e| {
                let err = super::conditional::results_error(e, &schema)
                    .or_else(|| expr_error(e, &schema));
                if let Some(err) = err {
                    found = Some(err);
                    return Ok(TreeNodeRecursion::Stop);
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
    if let Some(err) = found {
        return Err(err);
    }
    walked.map_err(|e| BqError::internal(format!("checking the types of a plan: {e}")))?;
    Ok(())
}

fn node_error(node: &LogicalPlan) -> Option<BqError> {
    match node {
        LogicalPlan::Union(u) => {
            let width = u.schema.fields().len();
            for i in 0..width {
                let types: Vec<&DataType> = u
                    .inputs
                    .iter()
                    .filter_map(|p| p.schema().fields().get(i).map(|f| f.data_type()))
                    .collect();
                let kinds: Vec<u8> = types.iter().filter_map(|t| kind(t)).collect();
                if !kinds.windows(2).all(|w| w[0] == w[1]) {
                    let shown: Vec<String> = types.iter().map(|t| bq_type_name(t)).collect();
                    return Some(BqError::invalid_query(format!(
                        "Column {} in UNION ALL has incompatible types: {}",
                        i + 1,
                        shown.join(", ")
                    )));
                }
            }
            None
        }
        LogicalPlan::Distinct(Distinct::All(input)) => input
            .schema()
            .fields()
            .iter()
            .find(|f| is_array(f.data_type()))
            .map(|f| {
                BqError::invalid_query(format!(
                    "Column {} of type {} cannot be used in SELECT DISTINCT",
                    f.name(),
                    bq_type_name(f.data_type())
                ))
            }),
        LogicalPlan::Aggregate(a) => {
            let schema = a.input.schema();
            a.group_expr.iter().find_map(|g| {
                grouping_keys(g).into_iter().find_map(|k| {
                    let t = k.get_type(schema).ok()?;
                    is_array(&t).then(|| {
                        BqError::invalid_query(format!(
                            "Grouping by expressions of type {} is not allowed",
                            bq_type_name(&t)
                        ))
                    })
                })
            })
        }
        LogicalPlan::Sort(s) => {
            let schema = s.input.schema();
            s.expr.iter().find_map(|k| {
                let t = k.expr.get_type(schema).ok()?;
                unordered(&t).then(|| {
                    BqError::invalid_query(format!(
                        "ORDER BY does not support expressions of type {}",
                        bq_type_name(&t)
                    ))
                })
            })
        }
        _ => None,
    }
}

/// The element type of an array type.
fn list_element(t: &DataType) -> Option<DataType> {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Some(f.data_type().clone())
        }
        _ => None,
    }
}

/// The argument types an aggregate of DataFusion's takes in BigQuery, for those DataFusion
/// would coerce other types into.
fn typed_aggregate(name: &str) -> Option<fn(&DataType) -> bool> {
    fn number_or_interval(t: &DataType) -> bool {
        t.is_numeric() || matches!(t, DataType::Interval(_))
    }
    fn number(t: &DataType) -> bool {
        t.is_numeric()
    }
    fn text(t: &DataType) -> bool {
        matches!(kind(t), Some(1 | 2))
    }
    Some(match name {
        "sum" | "avg" => number_or_interval,
        "stddev" | "stddev_pop" | "var" | "var_samp" | "var_pop" | "corr" | "covar_pop"
        | "covar_samp" => number,
        "string_agg" => text,
        _ => return None,
    })
}

/// The expressions a GROUP BY item groups by (each of a grouping set's).
fn grouping_keys(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::GroupingSet(g) => g.distinct_expr(),
        e => vec![e],
    }
}

fn expr_error(e: &Expr, schema: &DFSchema) -> Option<BqError> {
    match e {
        Expr::BinaryExpr(b) => {
            let ordering = matches!(
                b.op,
                Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq
            );
            let equality = matches!(
                b.op,
                Operator::Eq | Operator::NotEq | Operator::IsDistinctFrom | Operator::IsNotDistinctFrom
            );
            if !ordering && !equality {
                return None;
            }
            let (l, r) = (b.left.get_type(schema).ok()?, b.right.get_type(schema).ok()?);
            let bad = |t: &DataType| is_array(t) || (ordering && is_struct(t));
            if bad(&l) || bad(&r) {
                let what = if ordering { "Ordering" } else { "Equality" };
                let t = if bad(&l) { &l } else { &r };
                return Some(BqError::invalid_query(format!(
                    "No matching signature for operator {}: {what} is not defined for arguments of type {}",
                    b.op,
                    bq_type_name(t)
                )));
            }
            None
        }
        Expr::WindowFunction(w) => {
            use datafusion::logical_expr::{WindowFrameBound, WindowFrameUnits};
            let frame = &w.params.window_frame;
            let offset = |b: &WindowFrameBound| {
                !matches!(b, WindowFrameBound::CurrentRow)
                    && !matches!(b, WindowFrameBound::Preceding(v) | WindowFrameBound::Following(v) if v.is_null())
            };
            if frame.units != WindowFrameUnits::Range
                || !(offset(&frame.start_bound) || offset(&frame.end_bound))
            {
                return None;
            }
            let keys = &w.params.order_by;
            let t = match keys.as_slice() {
                [k] => k.expr.get_type(schema).ok()?,
                _ => {
                    return Some(BqError::invalid_query(
                        "A RANGE window frame with an offset must have exactly one ORDER BY key",
                    ));
                }
            };
            let orderable = t.is_numeric()
                || matches!(
                    t,
                    DataType::Date32 | DataType::Date64 | DataType::Timestamp(..) | DataType::Null
                );
            (!orderable).then(|| {
                BqError::invalid_query(format!(
                    "ORDER BY key of a RANGE window frame with an offset must be numeric or a date, not {}",
                    bq_type_name(&t)
                ))
            })
        }
        Expr::ScalarFunction(f)
            if matches!(f.name(), "array_to_string" | "bigq_string_agg_join") =>
        {
            let t = f.args.first()?.get_type(schema).ok()?;
            let element = list_element(&t)?;
            let (what, shown) = if f.name() == "array_to_string" {
                ("function ARRAY_TO_STRING", t.clone())
            } else {
                ("aggregate function STRING_AGG", element.clone())
            };
            (!matches!(kind(&element), Some(1 | 2)) && element != DataType::Null).then(|| {
                BqError::invalid_query(format!(
                    "No matching signature for {what} for argument types: {}",
                    bq_type_name(&shown)
                ))
            })
        }
        Expr::ScalarFunction(f) if f.name() == "array_concat" => {
            let types: Vec<DataType> = f
                .args
                .iter()
                .map(|a| a.get_type(schema).ok())
                .collect::<Option<_>>()?;
            let kinds: Vec<u8> = types
                .iter()
                .filter_map(list_element)
                .filter_map(|t| kind(&t))
                .collect();
            (!kinds.windows(2).all(|w| w[0] == w[1])).then(|| {
                let shown: Vec<String> = types.iter().map(bq_type_name).collect();
                BqError::invalid_query(format!(
                    "No matching signature for function ARRAY_CONCAT for argument types: {}",
                    shown.join(", ")
                ))
            })
        }
        Expr::ScalarFunction(f) if f.name() == "nullif" => f.args.iter().find_map(|a| {
            let t = a.get_type(schema).ok()?;
            is_array(&t).then(|| {
                BqError::invalid_query(format!(
                    "No matching signature for function NULLIF: Equality is not defined for arguments of type {}",
                    bq_type_name(&t)
                ))
            })
        }),
        Expr::AggregateFunction(f) if typed_aggregate(f.func.name()).is_some() => {
            let allowed = typed_aggregate(f.func.name())?;
            let t = f.params.args.first()?.get_type(schema).ok()?;
            (t != DataType::Null && !allowed(&t)).then(|| {
                BqError::invalid_query(format!(
                    "No matching signature for aggregate function {} for argument types: {}",
                    f.func.name().to_ascii_uppercase(),
                    bq_type_name(&t)
                ))
            })
        }
        Expr::AggregateFunction(f) => {
            let name = f.func.name().to_ascii_uppercase();
            let min_max = matches!(name.as_str(), "MIN" | "MAX");
            if !min_max && !f.params.distinct {
                return None;
            }
            f.params.args.iter().find_map(|a| {
                let t = a.get_type(schema).ok()?;
                if min_max && unordered(&t) {
                    return Some(BqError::invalid_query(format!(
                        "No matching signature for aggregate function {name} for argument types: {}",
                        bq_type_name(&t)
                    )));
                }
                (f.params.distinct && is_array(&t)).then(|| {
                    BqError::invalid_query(format!(
                        "Aggregate functions with DISTINCT cannot be used with arguments of type {}",
                        bq_type_name(&t)
                    ))
                })
            })
        }
        _ => None,
    }
}

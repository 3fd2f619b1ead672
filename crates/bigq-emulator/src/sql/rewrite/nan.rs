//! NaN where BigQuery puts it. Arrow orders FLOAT64 by IEEE total order, NaN above +inf;
//! BigQuery orders NaN below every other value (after NULL): first under `ORDER BY x ASC`,
//! and the result of `MIN` and `LEAST` when any input is NaN. (`MAX` and `GREATEST` give
//! NaN under either order.)
//!
//! The analyzer rule here, after type coercion, gives each FLOAT64 key of an ORDER BY a
//! leading key `NOT IS_NAN(x)` (NULL for NULL, so NULLs keep their place) and hands `MIN`
//! and `LEAST` their FLOAT64 arguments with each NaN as a negative NaN, which total order
//! puts below -inf (and which reads back as NaN).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DfResult, ScalarValue};
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, Sort, SortExpr, lit, not, when};
use datafusion::optimizer::AnalyzerRule;

/// Orders and picks NaN as BigQuery does.
#[derive(Debug)]
pub(crate) struct NanOrder;

impl AnalyzerRule for NanOrder {
    fn name(&self) -> &str {
        "bigq_nan_order"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> DfResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| {
            let plan = match plan {
                LogicalPlan::Sort(sort) => sort_nan_first(sort)?,
                other => Transformed::no(other),
            };
            plan.transform_data(|plan| {
                let schema = merge_schema(&plan.inputs());
                let names = NamePreserver::new(&plan);
                plan.map_expressions(|e| {
                    let name = names.save(&e);
                    e.transform_up(|e| nan_lowest(e, &schema))
                        .map(|t| t.update_data(|e| name.restore(e)))
                })?
                .map_data(|plan| plan.recompute_schema())
            })
        })
        .map(|t| t.data)
    }
}

fn is_float(e: &Expr, schema: &DFSchema) -> bool {
    matches!(
        e.get_type(schema),
        Ok(DataType::Float64 | DataType::Float32)
    )
}

/// Each FLOAT64 sort key `x` led by `NOT IS_NAN(x)` in the same direction.
fn sort_nan_first(sort: Sort) -> DfResult<Transformed<LogicalPlan>> {
    let schema = sort.input.schema().clone();
    if !sort.expr.iter().any(|s| is_float(&s.expr, &schema)) {
        return Ok(Transformed::no(LogicalPlan::Sort(sort)));
    }
    let mut keys = Vec::with_capacity(sort.expr.len() + 1);
    for s in sort.expr {
        if is_float(&s.expr, &schema) {
            let nan = datafusion::functions::math::expr_fn::isnan(s.expr.clone());
            keys.push(SortExpr::new(not(nan), s.asc, s.nulls_first));
        }
        keys.push(s);
    }
    Ok(Transformed::yes(LogicalPlan::Sort(Sort {
        expr: keys,
        input: sort.input,
        fetch: sort.fetch,
    })))
}

/// `x` with a NaN as a negative NaN, the lowest value in total order.
fn nan_as_lowest(x: Expr, t: &DataType) -> DfResult<Expr> {
    let low = match t {
        DataType::Float32 => ScalarValue::Float32(Some(-f32::NAN)),
        _ => ScalarValue::Float64(Some(-f64::NAN)),
    };
    when(
        datafusion::functions::math::expr_fn::isnan(x.clone()),
        lit(low),
    )
    .otherwise(x)
}

fn nan_lowest(e: Expr, schema: &DFSchema) -> DfResult<Transformed<Expr>> {
    match e {
        Expr::AggregateFunction(mut f)
            if f.func.name() == "min"
                && f.params.args.len() == 1
                && is_float(&f.params.args[0], schema) =>
        {
            let t = f.params.args[0].get_type(schema)?;
            let arg = f.params.args.pop().expect("one argument");
            f.params.args.push(nan_as_lowest(arg, &t)?);
            Ok(Transformed::yes(Expr::AggregateFunction(
                AggregateFunction {
                    func: f.func,
                    params: f.params,
                },
            )))
        }
        Expr::ScalarFunction(mut f)
            if f.func.name() == "least" && f.args.iter().any(|a| is_float(a, schema)) =>
        {
            let t = Expr::ScalarFunction(f.clone()).get_type(schema)?;
            f.args = std::mem::take(&mut f.args)
                .into_iter()
                .map(|a| {
                    if is_float(&a, schema) {
                        nan_as_lowest(a, &t)
                    } else {
                        Ok(a)
                    }
                })
                .collect::<DfResult<_>>()?;
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction {
                func: f.func,
                args: f.args,
            })))
        }
        other => Ok(Transformed::no(other)),
    }
}

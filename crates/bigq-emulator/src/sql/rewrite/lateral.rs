//! `FROM t, UNNEST(t.arr)`: an `UNNEST` in FROM that reads a column of the items before it
//! (BigQuery's correlated join, DataFusion's lateral join). DataFusion plans it as a join
//! with a correlated subquery on its right and cannot run it; the analyzer rule here plans it
//! as what it is, an `Unnest` of the left side: each left row repeated once per element
//! (none for an empty or NULL array under `CROSS`/`INNER JOIN`, one with NULLs under
//! `LEFT JOIN`), the `ON` condition of an `INNER JOIN` a filter after it.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, NullHandling, Result as DfResult, ScalarValue, plan_err};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{
    Expr, Filter, Join, JoinType, LogicalPlan, LogicalPlanBuilder, Projection,
};
use datafusion::optimizer::AnalyzerRule;

/// Plans each join of a FROM item with a correlated `UNNEST` as an `Unnest` of the item.
#[derive(Debug)]
pub(crate) struct LateralUnnest;

impl AnalyzerRule for LateralUnnest {
    fn name(&self) -> &str {
        "bigq_lateral_unnest"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> DfResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| match plan {
            LogicalPlan::Join(join) => match lateral(&join)? {
                Some(p) => Ok(Transformed::yes(p)),
                None => Ok(Transformed::no(LogicalPlan::Join(join))),
            },
            // The parents of a rewritten join take its schema (the same columns; the
            // unnested ones may differ in nullability).
            other => keyed_subqueries(other.recompute_schema()?),
        })
        .map(|t| t.data)
    }
}

/// The join as an `Unnest` of its left side, when its right side is an `UNNEST` that reads
/// the left side's columns (and nothing from further out).
fn lateral(join: &Join) -> DfResult<Option<LogicalPlan>> {
    let Some(body) = correlated_unnest(&join.right) else {
        return Ok(None);
    };
    let left = join.left.as_ref();
    let null_handling = match join.join_type {
        JoinType::Inner => NullHandling::Drop,
        JoinType::Left => NullHandling::PreserveAndExpandEmpty,
        _ => return Ok(None),
    };
    let mut conditions: Vec<Expr> = join
        .on
        .iter()
        .map(|(l, r)| l.clone().eq(r.clone()))
        .collect();
    conditions.extend(join.filter.iter().cloned());
    conditions.retain(|c| !matches!(c, Expr::Literal(ScalarValue::Boolean(Some(true)), _)));
    if join.join_type == JoinType::Left && !conditions.is_empty() {
        return plan_err!(
            "bigq-emulator does not support LEFT JOIN UNNEST with an ON condition \
             (filter the unnested rows in WHERE, or use a subquery)"
        );
    }
    let passed: Vec<Expr> = left
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let Some(plan) = rebuild(body, left, &passed, null_handling)? else {
        return Ok(None);
    };
    match conjunction(conditions) {
        Some(predicate) => Ok(Some(LogicalPlan::Filter(Filter::try_new(
            predicate,
            Arc::new(plan),
        )?))),
        None => Ok(Some(plan)),
    }
}

/// The plan of an `UNNEST` on a join's right, when it reads outer columns: a subquery
/// (maybe under its alias) of projections over an `Unnest` of a one-row relation.
fn correlated_unnest(right: &LogicalPlan) -> Option<&LogicalPlan> {
    let is_subquery = match right {
        LogicalPlan::Subquery(_) => true,
        LogicalPlan::SubqueryAlias(a) => matches!(a.input.as_ref(), LogicalPlan::Subquery(_)),
        _ => false,
    };
    (is_subquery && unnest_only(right)).then_some(right)
}

fn unnest_only(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::EmptyRelation(e) => e.produce_one_row,
        LogicalPlan::Unnest(u) => unnest_only(&u.input),
        LogicalPlan::Projection(p) => unnest_only(&p.input),
        LogicalPlan::SubqueryAlias(a) => unnest_only(&a.input),
        LogicalPlan::Subquery(s) => unnest_only(&s.subquery),
        _ => false,
    }
}

/// The `UNNEST`'s plan with the left side in place of its one-row relation, the left's
/// columns passed through each projection, its outer references read from the left, and its
/// alias given to the unnested columns only. `None` when it reads a column the left side does
/// not have (a column of an enclosing query).
fn rebuild(
    plan: &LogicalPlan,
    left: &LogicalPlan,
    passed: &[Expr],
    null_handling: NullHandling,
) -> DfResult<Option<LogicalPlan>> {
    let rebuilt = |input: &LogicalPlan| rebuild(input, left, passed, null_handling);
    Ok(Some(match plan {
        LogicalPlan::EmptyRelation(_) => left.clone(),
        LogicalPlan::Subquery(s) => return rebuilt(&s.subquery),
        LogicalPlan::Projection(p) => {
            let Some(input) = rebuilt(&p.input)? else {
                return Ok(None);
            };
            let mut exprs = passed.to_vec();
            for e in &p.expr {
                let Some(e) = read_from_left(e, left.schema())? else {
                    return Ok(None);
                };
                exprs.push(e);
            }
            LogicalPlan::Projection(Projection::try_new(exprs, Arc::new(input))?)
        }
        LogicalPlan::Unnest(u) => {
            let Some(input) = rebuilt(&u.input)? else {
                return Ok(None);
            };
            let options = u.options.clone().with_null_handling(null_handling);
            LogicalPlanBuilder::from(input)
                .unnest_columns_with_options(u.exec_columns.clone(), options)?
                .build()?
        }
        // The alias's names given where the columns are made, so that no unqualified
        // name of the same column is left below the qualified one (which DataFusion's
        // optimizer takes as ambiguous).
        LogicalPlan::SubqueryAlias(a) if projection_under(&a.input).is_some() => {
            let Some(p) = projection_under(&a.input) else {
                return Ok(None);
            };
            let Some(input) = rebuilt(&p.input)? else {
                return Ok(None);
            };
            let mut exprs = passed.to_vec();
            for (e, field) in p.expr.iter().zip(p.schema.fields()) {
                let Some(e) = read_from_left(e, left.schema())? else {
                    return Ok(None);
                };
                let e = match e {
                    Expr::Alias(alias) => *alias.expr,
                    e => e,
                };
                exprs.push(e.alias_qualified(Some(a.alias.clone()), field.name()));
            }
            LogicalPlan::Projection(Projection::try_new(exprs, Arc::new(input))?)
        }
        LogicalPlan::SubqueryAlias(a) => {
            let Some(input) = rebuilt(&a.input)? else {
                return Ok(None);
            };
            let mut exprs = passed.to_vec();
            let left_schema = left.schema();
            for (qualifier, field) in input.schema().iter() {
                let column = datafusion::common::Column::new(qualifier.cloned(), field.name());
                if left_schema.has_column(&column) {
                    continue;
                }
                exprs.push(
                    Expr::Column(column).alias_qualified(Some(a.alias.clone()), field.name()),
                );
            }
            LogicalPlan::Projection(Projection::try_new(exprs, Arc::new(input))?)
        }
        _ => return Ok(None),
    }))
}

/// The projection a plan is, or the plan of the subquery it is.
fn projection_under(plan: &LogicalPlan) -> Option<&Projection> {
    match plan {
        LogicalPlan::Projection(p) => Some(p),
        LogicalPlan::Subquery(s) => match s.subquery.as_ref() {
            LogicalPlan::Projection(p) => Some(p),
            _ => None,
        },
        _ => None,
    }
}

/// `e` with each outer reference a column of the left side; `None` if one is not there.
fn read_from_left(e: &Expr, left: &DFSchema) -> DfResult<Option<Expr>> {
    let mut missing = false;
    let e = e
        .clone()
        .transform_up(|e| match e {
            Expr::OuterReferenceColumn(_, c) => {
                if !left.has_column(&c) {
                    missing = true;
                }
                Ok(Transformed::yes(Expr::Column(c)))
            }
            e => Ok(Transformed::no(e)),
        })?
        .data;
    Ok((!missing).then_some(e))
}

/// The subqueries of `plan` that `UNNEST` an array of the row they are evaluated for
/// (`(SELECT SUM(x) FROM UNNEST(t.arr) AS x)`, `EXISTS (SELECT .. FROM UNNEST(t.arr) ..)`),
/// which DataFusion cannot run, made subqueries it decorrelates: the `UNNEST` reads the
/// distinct arrays of `plan`'s input, each element beside its array, and keeps the elements
/// of the row's own array by a correlated filter (`array = outer array`).
fn keyed_subqueries(plan: LogicalPlan) -> DfResult<Transformed<LogicalPlan>> {
    let [input] = plan.inputs()[..] else {
        return Ok(Transformed::no(plan));
    };
    let input = input.clone();
    plan.map_expressions(|e| {
        e.transform_up(|e| match e {
            Expr::ScalarSubquery(sq) => Ok(keyed(&sq, &input)?
                .map(|sq| Transformed::yes(Expr::ScalarSubquery(sq)))
                .unwrap_or_else(|| Transformed::no(Expr::ScalarSubquery(sq)))),
            Expr::Exists(ex) => Ok(match keyed(&ex.subquery, &input)? {
                Some(sq) => {
                    Transformed::yes(Expr::Exists(datafusion::logical_expr::expr::Exists {
                        subquery: sq,
                        negated: ex.negated,
                    }))
                }
                None => Transformed::no(Expr::Exists(ex)),
            }),
            Expr::InSubquery(mut is) => Ok(match keyed(&is.subquery, &input)? {
                Some(sq) => {
                    is.subquery = sq;
                    Transformed::yes(Expr::InSubquery(is))
                }
                None => Transformed::no(Expr::InSubquery(is)),
            }),
            e => Ok(Transformed::no(e)),
        })
    })
}

/// The alias of the distinct arrays a keyed `UNNEST` reads.
const KEYS: &str = "__bigq_unnest_keys";

/// The name of the `i`th key column.
fn key_name(i: usize) -> String {
    format!("__bigq_unnest_key{i}")
}

fn keyed(
    sq: &datafusion::logical_expr::Subquery,
    outer: &LogicalPlan,
) -> DfResult<Option<datafusion::logical_expr::Subquery>> {
    let mut done = false;
    let plan = Arc::unwrap_or_clone(Arc::clone(&sq.subquery)).transform_down(|node| {
        if done {
            return Ok(Transformed::no(node));
        }
        let LogicalPlan::SubqueryAlias(a) = &node else {
            return Ok(Transformed::no(node));
        };
        if !unnest_only(&a.input) {
            return Ok(Transformed::no(node));
        }
        let refs = node.all_out_ref_exprs();
        let columns: Vec<datafusion::common::Column> = refs
            .iter()
            .filter_map(|e| match e {
                Expr::OuterReferenceColumn(_, c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        if columns.is_empty()
            || columns.len() != refs.len()
            || columns.iter().any(|c| !outer.schema().has_column(c))
        {
            return Ok(Transformed::no(node));
        }
        // The distinct values of the outer columns the array is made of.
        let keys = LogicalPlanBuilder::from(outer.clone())
            .aggregate(
                columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Expr::Column(c.clone()).alias(key_name(i))),
                Vec::<Expr>::new(),
            )?
            .alias(KEYS)?
            .build()?;
        let Some((unnested, passed)) = rebuild_keyed(&node, &keys, &columns)? else {
            return Ok(Transformed::no(node));
        };
        let mut conditions = Vec::with_capacity(columns.len());
        for (c, k) in columns.iter().zip(&passed) {
            let (_, field) = outer.schema().qualified_field_from_column(c)?;
            conditions.push(
                k.clone()
                    .eq(Expr::OuterReferenceColumn(Arc::clone(field), c.clone())),
            );
        }
        let Some(predicate) = conjunction(conditions) else {
            return Ok(Transformed::no(node));
        };
        // The alias's own columns, without the keys.
        let original: Vec<Expr> = node
            .schema()
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        let filtered = LogicalPlan::Filter(Filter::try_new(predicate, Arc::new(unnested))?);
        done = true;
        Ok(Transformed::new(
            LogicalPlan::Projection(Projection::try_new(original, Arc::new(filtered))?),
            true,
            datafusion::common::tree_node::TreeNodeRecursion::Jump,
        ))
    })?;
    if !plan.transformed {
        return Ok(None);
    }
    let plan = plan
        .data
        .transform_up(|p| p.recompute_schema().map(Transformed::yes))?
        .data;
    let outer_ref_columns = plan.all_out_ref_exprs();
    Ok(Some(datafusion::logical_expr::Subquery {
        subquery: Arc::new(plan),
        outer_ref_columns,
        spans: sq.spans.clone(),
    }))
}

/// An `UNNEST` over one-row projections rebuilt over the distinct keys, with the keys
/// passed through every node (and, as they are on top, returned); each outer column read
/// from its key. The lateral wrappers go: their outer references are now the filter's,
/// which DataFusion's decorrelation pulls up through the plan but not through a wrapper.
fn rebuild_keyed(
    plan: &LogicalPlan,
    keys: &LogicalPlan,
    columns: &[datafusion::common::Column],
) -> DfResult<Option<(LogicalPlan, Vec<Expr>)>> {
    let below = |input: &LogicalPlan| rebuild_keyed(input, keys, columns);
    Ok(Some(match plan {
        LogicalPlan::EmptyRelation(_) => {
            let passed = (0..columns.len())
                .map(|i| Expr::Column(datafusion::common::Column::new(Some(KEYS), key_name(i))))
                .collect();
            (keys.clone(), passed)
        }
        LogicalPlan::Subquery(s) => return below(&s.subquery),
        LogicalPlan::Projection(p) => {
            let Some((input, passed)) = below(&p.input)? else {
                return Ok(None);
            };
            let mut exprs: Vec<Expr> = passed.clone();
            for e in &p.expr {
                let e = e
                    .clone()
                    .transform_up(|e| match e {
                        Expr::OuterReferenceColumn(f, c) => {
                            match columns
                                .iter()
                                .position(|k| *k == c)
                                .and_then(|i| passed.get(i))
                            {
                                Some(k) => Ok(Transformed::yes(k.clone())),
                                None => Ok(Transformed::no(Expr::OuterReferenceColumn(f, c))),
                            }
                        }
                        e => Ok(Transformed::no(e)),
                    })?
                    .data;
                exprs.push(e);
            }
            (
                LogicalPlan::Projection(Projection::try_new(exprs, Arc::new(input))?),
                passed,
            )
        }
        LogicalPlan::Unnest(u) => {
            let Some((input, passed)) = below(&u.input)? else {
                return Ok(None);
            };
            let plan = LogicalPlanBuilder::from(input)
                .unnest_columns_with_options(u.exec_columns.clone(), u.options.clone())?
                .build()?;
            (plan, passed)
        }
        LogicalPlan::SubqueryAlias(a) => {
            let Some((input, _)) = below(&a.input)? else {
                return Ok(None);
            };
            let passed = (0..columns.len())
                .map(|i| {
                    Expr::Column(datafusion::common::Column::new(
                        Some(a.alias.clone()),
                        key_name(i),
                    ))
                })
                .collect();
            let plan = LogicalPlanBuilder::from(input)
                .alias(a.alias.clone())?
                .build()?;
            (plan, passed)
        }
        _ => return Ok(None),
    }))
}

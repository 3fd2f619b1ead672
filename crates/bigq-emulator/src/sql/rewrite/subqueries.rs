//! `IN (subquery)` and `EXISTS (subquery)` outside WHERE and HAVING, as scalar subqueries.
//!
//! DataFusion plans these predicates only in a filter (as semi, anti and mark joins); in a
//! SELECT list, ORDER BY or GROUP BY they reach its physical planner unplanned. There they
//! become scalar subqueries, which DataFusion plans anywhere (decorrelated when correlated):
//! `EXISTS (q)` counts `q`'s rows and `x IN (q)` gathers `q`'s values into an array that
//! `bigq_in_array` searches with BigQuery's three-valued IN.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    self, Expr, Query, SetExpr, UnaryOperator, VisitMut, VisitorMut,
};

use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, calls_outside_subqueries, plain_select};
use crate::sql::parse::parse;

/// Rewrites the subquery predicates of `q`'s own SELECTs (not of the queries nested in it)
/// that are outside their WHERE and HAVING.
pub(super) fn outside_filters(q: &mut Query) -> BqResult<()> {
    let mut v = Predicates { depth: 0 };
    let mut run = |e: &mut Expr| match e.visit(&mut v) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(err) => Err(err),
    };
    for s in crate::sql::ast::body_selects(q.body.as_mut()) {
        for item in &mut s.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => run(e)?,
                _ => {}
            }
        }
        if let ast::GroupByExpr::Expressions(exprs, _) = &mut s.group_by {
            for e in exprs {
                run(e)?;
            }
        }
    }
    if let Some(ast::OrderBy {
        kind: ast::OrderByKind::Expressions(keys),
        ..
    }) = &mut q.order_by
    {
        for k in keys {
            run(&mut k.expr)?;
        }
    }
    Ok(())
}

/// Rewrites the predicates met outside nested queries (`depth` 0).
struct Predicates {
    depth: usize,
}

impl VisitorMut for Predicates {
    type Break = BqError;

    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<BqError> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<BqError> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<BqError> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        match predicate(e) {
            Ok(Some(new)) => {
                *e = new;
                ControlFlow::Continue(())
            }
            Ok(None) => ControlFlow::Continue(()),
            Err(err) => ControlFlow::Break(err),
        }
    }
}

/// What a scalar subquery gathers of a subquery's rows.
#[derive(Clone, Copy, PartialEq)]
enum Gather {
    /// `COUNT(*) > 0`, for EXISTS.
    Any,
    /// `array_agg(v)` of the one column `v`, for IN.
    Values,
}

/// `EXISTS (q)` as `(SELECT COUNT(*) > 0 ..)`, `x IN (q)` as `bigq_in_array(x, (SELECT
/// array_agg(..) ..))`; `None` for any other expression.
fn predicate(e: &Expr) -> BqResult<Option<Expr>> {
    let (scalar, negated) = match e {
        Expr::Exists { subquery, negated } => (gathered(subquery, Gather::Any)?, *negated),
        Expr::InSubquery {
            expr,
            subquery,
            negated,
        } => {
            let values = gathered(subquery, Gather::Values)?;
            (
                call("bigq_in_array", vec![(**expr).clone(), values]),
                *negated,
            )
        }
        _ => return Ok(None),
    };
    Ok(Some(if negated {
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: Box::new(Expr::Nested(Box::new(scalar))),
        }
    } else {
        scalar
    }))
}

/// The SELECT list item gathering `value` (the one column's expression, for IN).
fn gathering(gather: Gather, value: Option<&Expr>) -> BqResult<ast::SelectItem> {
    Ok(match (gather, value) {
        (Gather::Values, Some(v)) => {
            ast::SelectItem::UnnamedExpr(call("array_agg", vec![v.clone()]))
        }
        (Gather::Values, None) => {
            return Err(BqError::invalid_query(
                "IN subquery must return exactly one column",
            ));
        }
        (Gather::Any, _) => {
            let mut q = query("SELECT COUNT(*) > 0")?;
            match q.body.as_mut() {
                SetExpr::Select(s) => s.projection.remove(0),
                _ => return Err(BqError::internal("EXISTS template")),
            }
        }
    })
}

/// A scalar subquery gathering the rows of `q`: `q`'s own SELECT with the gathering as its
/// list when `q` is a plain SELECT (so that a correlated `q` stays decorrelatable), else over
/// `q` as a derived table `__in(__v)`.
fn gathered(q: &Query, gather: Gather) -> BqResult<Expr> {
    if let Some(plain) = gathered_in_place(q, gather)? {
        return Ok(Expr::Subquery(plain));
    }
    let mut wrapper = query("SELECT 1 FROM (SELECT 1) AS __in")?;
    if let SetExpr::Select(s) = wrapper.body.as_mut() {
        let value = Expr::CompoundIdentifier(vec![ast::Ident::new("__in"), ast::Ident::new("__v")]);
        s.projection = vec![gathering(gather, Some(&value))?];
        if let Some(ast::TableFactor::Derived {
            subquery, alias, ..
        }) = s.from.first_mut().map(|t| &mut t.relation)
        {
            **subquery = q.clone();
            if let (Gather::Values, Some(a)) = (gather, alias) {
                a.columns = vec![ast::TableAliasColumnDef {
                    name: ast::Ident::new("__v"),
                    data_type: None,
                }];
            }
        }
    }
    Ok(Expr::Subquery(wrapper))
}

/// `q` with the gathering as its SELECT list, when `q` is one SELECT with no WITH, DISTINCT,
/// GROUP BY, HAVING, window, ORDER BY or LIMIT, whose list calls no function (which could
/// be an aggregate, which the gathering aggregate cannot take).
fn gathered_in_place(q: &Query, gather: Gather) -> BqResult<Option<Box<Query>>> {
    let Some(s) = plain_select(q).filter(|_| q.order_by.is_none()) else {
        return Ok(None);
    };
    let value = match s.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e)] | [ast::SelectItem::ExprWithAlias { expr: e, .. }] => {
            Some(e)
        }
        _ if gather == Gather::Any => None,
        _ => return Ok(None),
    };
    let calls = s.projection.iter().any(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            calls_outside_subqueries(e, |_| true)
        }
        _ => false,
    });
    if calls {
        return Ok(None);
    }
    let mut out = Box::new(q.clone());
    if let SetExpr::Select(sel) = out.body.as_mut() {
        sel.projection = vec![gathering(gather, value)?];
    }
    Ok(Some(out))
}

fn query(sql: &str) -> BqResult<Box<Query>> {
    match parse(sql)?.pop() {
        Some(ast::Statement::Query(q)) => Ok(q),
        _ => Err(BqError::internal(format!("not a query: {sql}"))),
    }
}

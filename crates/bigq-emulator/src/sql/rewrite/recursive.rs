//! BigQuery's rules for the recursive term of a recursive CTE that DataFusion does not
//! check (it would iterate without end): no aggregate, GROUP BY, HAVING or LIMIT in a term
//! that reads the CTE itself.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{self, Query, SetExpr, TableFactor, Visit, Visitor};

use crate::error::{BqError, BqResult};
use crate::sql::ast::calls_outside_subqueries;

/// BigQuery's aggregate functions, by upper-case name.
const AGGREGATES: &[&str] = &[
    "ANY_VALUE",
    "ARRAY_AGG",
    "ARRAY_CONCAT_AGG",
    "AVG",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
    "COUNT",
    "COUNTIF",
    "LOGICAL_AND",
    "LOGICAL_OR",
    "MAX",
    "MAX_BY",
    "MIN",
    "MIN_BY",
    "STRING_AGG",
    "SUM",
    "APPROX_COUNT_DISTINCT",
    "APPROX_QUANTILES",
    "APPROX_TOP_COUNT",
    "APPROX_TOP_SUM",
    "CORR",
    "COVAR_POP",
    "COVAR_SAMP",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
];

/// Checks the recursive terms of `q`'s WITH RECURSIVE.
pub(super) fn check(q: &Query) -> BqResult<()> {
    let Some(with) = &q.with else {
        return Ok(());
    };
    if !with.recursive {
        return Ok(());
    }
    for cte in &with.cte_tables {
        let name = &cte.alias.name.value;
        let SetExpr::SetOperation { right, .. } = cte.query.body.as_ref() else {
            continue;
        };
        let (term, query) = match right.as_ref() {
            SetExpr::Query(q) => match q.body.as_ref() {
                SetExpr::Select(s) => (s.as_ref(), Some(q.as_ref())),
                _ => continue,
            },
            SetExpr::Select(s) => (s.as_ref(), None),
            _ => continue,
        };
        if !reads(term, name) {
            continue;
        }
        let fault = if query.is_some_and(|q| q.limit_clause.is_some() || q.fetch.is_some()) {
            Some("LIMIT")
        } else if !matches!(&term.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty()) {
            Some("GROUP BY")
        } else if term.having.is_some() {
            Some("HAVING")
        } else if term.projection.iter().any(has_aggregate) {
            Some("an aggregate function")
        } else {
            None
        };
        if let Some(what) = fault {
            return Err(BqError::invalid_query(format!(
                "The recursive term of the recursive CTE {name} cannot use {what}"
            )));
        }
    }
    Ok(())
}

/// Whether a SELECT's FROM reads the table `name`.
fn reads(s: &ast::Select, name: &str) -> bool {
    struct Reads<'a>(&'a str);
    impl Visitor for Reads<'_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
            match tf {
                TableFactor::Table { name, .. }
                    if name.to_string().eq_ignore_ascii_case(self.0) =>
                {
                    ControlFlow::Break(())
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    s.from.visit(&mut Reads(name)).is_break()
}

/// Whether a SELECT list item calls an aggregate (not a window function), outside nested
/// queries.
fn has_aggregate(item: &ast::SelectItem) -> bool {
    calls_outside_subqueries(item, |f| {
        f.over.is_none() && AGGREGATES.contains(&f.name.to_string().to_ascii_uppercase().as_str())
    })
}

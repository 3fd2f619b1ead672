//! `GROUP BY ()`: the one empty grouping set, the grand total, which is no GROUP BY at all
//! (sqlparser reads it as an empty tuple, which DataFusion does not plan).

use datafusion::sql::sqlparser::ast::{Expr, GroupByExpr, Query};

/// Drops `GROUP BY ()` from the SELECTs of `q`'s body.
pub(super) fn empty_grouping_sets(q: &mut Query) {
    for s in crate::sql::ast::body_selects(q.body.as_mut()) {
        if let GroupByExpr::Expressions(exprs, modifiers) = &mut s.group_by
            && modifiers.is_empty()
            && exprs.len() == 1
            && matches!(&exprs[0], Expr::Tuple(t) if t.is_empty())
        {
            exprs.clear();
        }
    }
}

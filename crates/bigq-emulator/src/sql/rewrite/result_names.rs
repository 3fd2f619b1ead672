//! The names BigQuery gives a query's result columns.

use datafusion::sql::sqlparser::ast::{self, Expr, Ident, Query, Value};

use crate::sql::names::NameContext;

/// Names the result columns as BigQuery does: a column reference or a path (`t.x`,
/// `s.a.b`, `(expr).a`) by its last part, any other expression without an alias `f0_`, `f1_`, ... (in
/// the order of such columns); DataFusion would name them after the expression
/// (`count(*)`, `Int64(1)`); a script variable keeps its name, though its value replaces
/// it. Only the outermost SELECT's names reach the result (the leftmost one of a set
/// operation).
pub(super) fn name_result_columns(q: &mut Query, cx: &NameContext) {
    fn leftmost(body: &mut ast::SetExpr) -> Option<&mut ast::Select> {
        match body {
            ast::SetExpr::Select(s) => Some(s),
            ast::SetExpr::SetOperation { left, .. } => leftmost(left),
            ast::SetExpr::Query(q) => leftmost(&mut q.body),
            _ => None,
        }
    }
    let Some(select) = leftmost(&mut q.body) else {
        return;
    };
    let vars = cx.vars.lock().unwrap_or_else(|e| e.into_inner());
    let mut anonymous = 0;
    for item in &mut select.projection {
        let ast::SelectItem::UnnamedExpr(e) = item else {
            continue;
        };
        let alias = match e {
            Expr::Identifier(id)
                if id.quote_style.is_none()
                    && vars.contains_key(&id.value.to_ascii_lowercase()) =>
            {
                id.clone()
            }
            Expr::Identifier(id) if !id.value.starts_with('@') => continue,
            Expr::CompoundIdentifier(parts) if !parts[0].value.starts_with('@') => {
                match parts.last() {
                    Some(last) => last.clone(),
                    None => continue,
                }
            }
            // `(expr).a.b`, `arr[OFFSET(0)].b`: the last field's name.
            Expr::CompoundFieldAccess { access_chain, .. }
                if matches!(
                    access_chain.last(),
                    Some(ast::AccessExpr::Dot(Expr::Identifier(_)))
                ) =>
            {
                match access_chain.last() {
                    Some(ast::AccessExpr::Dot(Expr::Identifier(id))) => id.clone(),
                    _ => continue,
                }
            }
            _ => {
                let name = Ident::new(format!("f{anonymous}_"));
                anonymous += 1;
                name
            }
        };
        let expr = std::mem::replace(e, Expr::value(Value::Null));
        *item = ast::SelectItem::ExprWithAlias { expr, alias };
    }
    // BigQuery lets two result columns have one name (`SELECT 1 AS a, 2 AS a`); DataFusion
    // does not: each later one takes an internal name that the result's schema spells back
    // ([`result_name`]).
    let mut seen = std::collections::HashSet::new();
    let mut k = 0;
    for item in &mut select.projection {
        let name = match item {
            ast::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            ast::SelectItem::UnnamedExpr(Expr::Identifier(id)) => id.value.clone(),
            _ => continue,
        };
        if seen.insert(name.to_ascii_lowercase()) {
            continue;
        }
        k += 1;
        let renamed = Ident::with_quote('`', format!("{DUPLICATE}{k}__{name}"));
        match item {
            ast::SelectItem::ExprWithAlias { alias, .. } => *alias = renamed,
            ast::SelectItem::UnnamedExpr(e) => {
                let expr = std::mem::replace(e, Expr::value(Value::Null));
                *item = ast::SelectItem::ExprWithAlias {
                    expr,
                    alias: renamed,
                };
            }
            _ => {}
        }
    }
}

/// The start of the internal name of a result column that repeats an earlier one's name.
const DUPLICATE: &str = "__bigq_duplicate";

/// A result column's name as the query wrote it (an internal name for a repeated name
/// spelled back).
pub(crate) fn result_name(name: &str) -> &str {
    name.strip_prefix(DUPLICATE)
        .and_then(|rest| rest.split_once("__"))
        .filter(|(k, _)| !k.is_empty() && k.bytes().all(|c| c.is_ascii_digit()))
        .map_or(name, |(_, n)| n)
}

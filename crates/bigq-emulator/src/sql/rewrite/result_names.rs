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
            Expr::Identifier(_) => continue,
            Expr::CompoundIdentifier(parts) => match parts.last() {
                Some(last) => last.clone(),
                None => continue,
            },
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
}

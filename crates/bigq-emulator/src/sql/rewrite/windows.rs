//! Named windows as BigQuery reads them: `OVER w`, and `OVER (w ORDER BY ..)` or
//! `OVER (w ROWS ..)` that extend a window of the `WINDOW` clause, which may itself extend an
//! earlier one. Each reference is replaced by the whole specification it names, so the
//! planner sees plain windows (DataFusion reads `OVER w`, but drops the named part of
//! `OVER (w ..)`).

use std::collections::HashMap;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, NamedWindowExpr, Query, Select, VisitMut, VisitorMut, WindowSpec, WindowType,
};

use crate::error::{BqError, BqResult};
use crate::sql::ast::body_selects;

/// Resolves the named windows of each SELECT of `q`'s body (not of its subqueries, which
/// the walk reaches as queries of their own).
pub(super) fn resolve(q: &mut Query) -> BqResult<()> {
    body_selects(&mut q.body)
        .into_iter()
        .try_for_each(resolve_select)
}

fn resolve_select(s: &mut Select) -> BqResult<()> {
    let mut named: HashMap<String, WindowSpec> = HashMap::new();
    for def in &s.named_window {
        let spec = match &def.1 {
            NamedWindowExpr::NamedWindow(base) => lookup(&named, &base.value)?.clone(),
            NamedWindowExpr::WindowSpec(spec) => extend(&named, spec)?,
        };
        named.insert(def.0.value.to_lowercase(), spec);
    }
    let mut v = Resolver {
        named: &named,
        depth: 0,
    };
    let walked = (|| {
        s.projection.visit(&mut v)?;
        s.having.visit(&mut v)?;
        s.qualify.visit(&mut v)
    })();
    if let ControlFlow::Break(e) = walked {
        return Err(e);
    }
    s.named_window.clear();
    Ok(())
}

fn lookup<'a>(named: &'a HashMap<String, WindowSpec>, name: &str) -> BqResult<&'a WindowSpec> {
    named
        .get(&name.to_lowercase())
        .ok_or_else(|| BqError::invalid_query(format!("Unrecognized window alias {name}")))
}

/// `spec` with the window it names (if any) filled in, under BigQuery's rules: a window
/// that extends another adds no PARTITION BY, an ORDER BY only where the other has none,
/// a frame only where the other has none.
fn extend(named: &HashMap<String, WindowSpec>, spec: &WindowSpec) -> BqResult<WindowSpec> {
    let Some(name) = &spec.window_name else {
        return Ok(spec.clone());
    };
    let base = lookup(named, &name.value)?;
    if !spec.partition_by.is_empty() {
        return Err(BqError::invalid_query(format!(
            "PARTITION BY cannot be used in a window specification that references the named window {}",
            name.value
        )));
    }
    if !spec.order_by.is_empty() && !base.order_by.is_empty() {
        return Err(BqError::invalid_query(format!(
            "ORDER BY cannot be used in a window specification that references the named window {}, which has an ORDER BY",
            name.value
        )));
    }
    if spec.window_frame.is_some() && base.window_frame.is_some() {
        return Err(BqError::invalid_query(format!(
            "A window frame cannot be used in a window specification that references the named window {}, which has a window frame",
            name.value
        )));
    }
    Ok(WindowSpec {
        window_name: None,
        partition_by: base.partition_by.clone(),
        order_by: if spec.order_by.is_empty() {
            base.order_by.clone()
        } else {
            spec.order_by.clone()
        },
        window_frame: spec
            .window_frame
            .clone()
            .or_else(|| base.window_frame.clone()),
    })
}

/// Replaces each window reference of one SELECT's expressions, leaving subqueries alone.
struct Resolver<'a> {
    named: &'a HashMap<String, WindowSpec>,
    depth: usize,
}

impl VisitorMut for Resolver<'_> {
    type Break = BqError;

    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<BqError> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<BqError> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<BqError> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        let Expr::Function(f) = e else {
            return ControlFlow::Continue(());
        };
        let resolved = match &f.over {
            Some(WindowType::NamedWindow(name)) => lookup(self.named, &name.value).cloned(),
            Some(WindowType::WindowSpec(spec)) if spec.window_name.is_some() => {
                extend(self.named, spec)
            }
            _ => return ControlFlow::Continue(()),
        };
        match resolved {
            Ok(spec) => {
                f.over = Some(WindowType::WindowSpec(spec));
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse::parse;
    use datafusion::sql::sqlparser::ast::Statement;

    fn resolved(sql: &str) -> BqResult<String> {
        let mut statements = parse(sql)?;
        let Some(Statement::Query(q)) = statements.first_mut() else {
            panic!("not a query: {sql}");
        };
        resolve(q)?;
        Ok(q.to_string())
    }

    #[test]
    fn a_window_that_extends_a_named_one_takes_its_partition_and_order() {
        let sql = resolved(
            "SELECT LAST_VALUE(x) OVER (w ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t \
             WINDOW w AS (PARTITION BY k ORDER BY y)",
        )
        .unwrap();
        assert!(
            sql.contains(
                "OVER (PARTITION BY k ORDER BY y ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)"
            ),
            "{sql}"
        );
        assert!(!sql.contains("WINDOW"), "{sql}");
    }

    #[test]
    fn chained_windows_and_bare_references_resolve() {
        let sql = resolved(
            "SELECT SUM(x) OVER c, SUM(x) OVER (a) FROM t WINDOW a AS (PARTITION BY k), \
             b AS (a ORDER BY y), c AS (b ROWS 2 PRECEDING)",
        )
        .unwrap();
        assert!(
            sql.contains("SUM(x) OVER (PARTITION BY k ORDER BY y ROWS 2 PRECEDING)"),
            "{sql}"
        );
        assert!(sql.contains("SUM(x) OVER (PARTITION BY k)"), "{sql}");
    }

    #[test]
    fn what_a_named_window_already_has_cannot_be_given_again() {
        for sql in [
            "SELECT SUM(x) OVER (w ORDER BY y) FROM t WINDOW w AS (ORDER BY y)",
            "SELECT SUM(x) OVER (w PARTITION BY y) FROM t WINDOW w AS (ORDER BY y)",
            "SELECT SUM(x) OVER (w ROWS 1 PRECEDING) FROM t WINDOW w AS (ORDER BY y ROWS 2 PRECEDING)",
            "SELECT SUM(x) OVER nope FROM t WINDOW w AS (ORDER BY y)",
        ] {
            let e = resolved(sql).unwrap_err();
            assert_eq!(e.reason(), "invalidQuery", "{sql}: {e}");
        }
    }
}

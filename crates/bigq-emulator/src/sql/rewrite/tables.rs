//! Tables a query reads: names qualified as `project.dataset.table` (as DataFusion finds them
//! in the catalog, and aliased by their last part as BigQuery lets a query refer to them),
//! views inlined as subqueries, `INFORMATION_SCHEMA` views made from the catalog.

use std::collections::HashSet;

use datafusion::sql::sqlparser::ast::{self, Ident, TableAlias, TableFactor};

use super::information_schema::information_schema;
use crate::catalog::{Catalog, TableKind};
use crate::error::{BqError, BqResult};
use crate::sql::names::{NameContext, name_parts, qualified_name, resolve_parts};
use crate::sql::parse::parse;

/// Rewrites a table named in FROM (not a CTE of the query, whose names are `ctes`).
pub(super) fn table(
    tf: &mut TableFactor,
    catalog: &Catalog,
    cx: &NameContext,
    ctes: &HashSet<String>,
) -> BqResult<()> {
    let TableFactor::Table {
        name, alias, args, ..
    } = tf
    else {
        return Ok(());
    };
    if args.is_some() {
        return Err(BqError::unsupported("table-valued functions"));
    }
    let parts = name_parts(name)?;
    if parts.len() == 1 && ctes.contains(&parts[0]) {
        return Ok(());
    }
    // A CTE's name is case-insensitive, as BigQuery reads it.
    if let [one] = parts.as_slice()
        && let Some(cte) = ctes.iter().find(|c| c.eq_ignore_ascii_case(one))
    {
        *name = ast::ObjectName::from(vec![Ident::new(cte)]);
        return Ok(());
    }
    if parts.len() >= 2 && parts[parts.len() - 2].eq_ignore_ascii_case("INFORMATION_SCHEMA") {
        let q = information_schema(&parts, catalog, cx)?;
        let alias = alias.clone().or_else(|| {
            Some(TableAlias {
                explicit: true,
                name: Ident::new(&parts[parts.len() - 1]),
                columns: Vec::new(),
                at: None,
            })
        });
        *tf = TableFactor::Derived {
            lateral: false,
            subquery: q,
            alias,
            sample: None,
        };
        return Ok(());
    }
    let t = resolve_parts(&parts, cx)?;
    let table = {
        let r = catalog.read();
        if !r.has_project(&t.project) {
            return Err(BqError::access_denied(format!(
                "Access Denied: Table {t}: User does not have permission to query table {t}, or perhaps it does not exist."
            )));
        }
        r.table(&t)?
    };
    if let TableKind::View { query } = &table.kind {
        let mut stmts = parse(query)?;
        let Some(ast::Statement::Query(q)) = stmts.pop() else {
            return Err(BqError::internal("view without a query"));
        };
        let alias = alias.clone().or_else(|| {
            Some(TableAlias {
                explicit: true,
                name: Ident::new(&t.table),
                columns: Vec::new(),
                at: None,
            })
        });
        *tf = TableFactor::Derived {
            lateral: false,
            subquery: q,
            alias,
            sample: None,
        };
        return Ok(());
    }
    *name = qualified_name(&t);
    if alias.is_none() {
        // BigQuery lets `t.col` refer to the last name part.
        *alias = Some(TableAlias {
            explicit: true,
            name: Ident::new(&t.table),
            columns: Vec::new(),
            at: None,
        });
    }
    Ok(())
}

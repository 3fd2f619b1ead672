//! `dataset.INFORMATION_SCHEMA.TABLES`, as a query over the catalog's tables.

use datafusion::sql::sqlparser::ast::{self, Query};

use crate::catalog::{Catalog, TableKind};
use crate::error::{BqError, BqResult};
use crate::sql::names::NameContext;
use crate::sql::parse::parse;

/// `dataset.INFORMATION_SCHEMA.TABLES` as a query over the catalog.
pub(super) fn information_schema(
    parts: &[String],
    catalog: &Catalog,
    cx: &NameContext,
) -> BqResult<Box<Query>> {
    let view = parts[parts.len() - 1].to_ascii_uppercase();
    if view != "TABLES" {
        return Err(BqError::unsupported(format!("INFORMATION_SCHEMA.{view}")));
    }
    let (project, dataset) = match &parts[..parts.len() - 2] {
        [p, d] => (p.clone(), d.clone()),
        [d] => (cx.project.clone(), d.clone()),
        _ => {
            return Err(BqError::unsupported(
                "region-qualified INFORMATION_SCHEMA views",
            ));
        }
    };
    let quote = |s: &str| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
    let rows: Vec<String> = {
        let r = catalog.read();
        let ds = r.dataset(&project, &dataset)?;
        ds.tables
            .iter()
            .map(|(name, t)| {
                let kind = match t.kind {
                    TableKind::Table => "BASE TABLE",
                    TableKind::View { .. } => "VIEW",
                };
                format!(
                    "SELECT {} AS table_catalog, {} AS table_schema, {} AS table_name, '{kind}' AS table_type",
                    quote(&project),
                    quote(&dataset),
                    quote(name)
                )
            })
            .collect()
    };
    let sql = if rows.is_empty() {
        "SELECT CAST(NULL AS STRING) AS table_catalog, CAST(NULL AS STRING) AS table_schema, \
         CAST(NULL AS STRING) AS table_name, CAST(NULL AS STRING) AS table_type FROM (SELECT 1) AS __empty WHERE FALSE"
            .to_string()
    } else {
        rows.join(" UNION ALL ")
    };
    match parse(&sql)?.pop() {
        Some(ast::Statement::Query(q)) => Ok(q),
        _ => Err(BqError::internal("INFORMATION_SCHEMA query")),
    }
}

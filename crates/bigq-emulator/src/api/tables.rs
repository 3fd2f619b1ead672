//! Tables and views: insert, get, patch / update, delete, list.

use std::sync::Arc;

use bigq_codec::schema::{FieldMode, TableFieldSchema};

use super::PageRequest;
use crate::catalog::{Table, TableKind, TableRef, now_millis, reshape};
use crate::error::BqError;
use crate::sql::exec::{QueryRequest, result_table};
use crate::sql::names::NameContext;
use crate::state::AppState;

/// What a new table is made of.
#[derive(Clone, Debug, Default)]
pub struct TableSpec {
    /// The columns (ignored for a view, whose columns come from its query).
    pub schema: Vec<TableFieldSchema>,
    /// `view.query`: a view rather than a table.
    pub view_query: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// The other settable fields, kept as set (see [`Table::options`]).
    pub options: serde_json::Map<String, serde_json::Value>,
}

/// The changeable fields of a table; `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct TablePatch {
    /// `description` (`Some(None)` clears it).
    pub description: Option<Option<String>>,
    /// A new schema: the same columns (matched by name), REQUIRED ones possibly relaxed to
    /// NULLABLE, plus new NULLABLE or REPEATED columns, nested ones too, as BigQuery allows.
    pub schema: Option<Vec<TableFieldSchema>>,
    /// The other settable fields the body sets (see [`Table::options`]).
    pub options: serde_json::Map<String, serde_json::Value>,
    /// `tables.update`: the options the body leaves out are cleared.
    pub replace: bool,
    /// The `If-Match` etag: the table must still have it.
    pub if_match: Option<String>,
}

/// One entry of `tables.list`.
#[derive(Clone, Debug)]
pub struct TableListItem {
    /// Table id.
    pub id: String,
    /// Whether a view.
    pub is_view: bool,
    /// Creation time, ms.
    pub creation_time: i64,
}

/// What `tables.get` includes (`view`): BASIC leaves out the storage statistics
/// (numRows, numBytes, numLongTermBytes, lastModifiedTime); STORAGE_STATS, the default,
/// and FULL include them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableView {
    /// Schema and settings only.
    Basic,
    /// With storage statistics (the default).
    #[default]
    StorageStats,
    /// Everything.
    Full,
}

impl TableView {
    /// From the enum name (`TABLE_METADATA_VIEW_UNSPECIFIED`, `BASIC`, `STORAGE_STATS`,
    /// `FULL`).
    pub fn parse(name: &str) -> Result<TableView, BqError> {
        match name {
            "" | "TABLE_METADATA_VIEW_UNSPECIFIED" | "STORAGE_STATS" => Ok(TableView::StorageStats),
            "BASIC" => Ok(TableView::Basic),
            "FULL" => Ok(TableView::Full),
            other => Err(BqError::invalid(format!("Invalid value for view: {other}"))),
        }
    }

    /// Whether the storage statistics are included.
    pub fn storage_stats(self) -> bool {
        self != TableView::Basic
    }
}

/// `TABLE` or `VIEW`.
pub fn type_name(table: &Table) -> &'static str {
    match table.kind {
        TableKind::Table => "TABLE",
        TableKind::View { .. } => "VIEW",
    }
}

/// `tables.insert`: the created table.
pub async fn insert(s: &AppState, t: &TableRef, spec: TableSpec) -> Result<Arc<Table>, BqError> {
    if t.table.is_empty() {
        return Err(BqError::invalid(
            "Required parameter is missing: tableReference.tableId",
        ));
    }
    let mut table = match &spec.view_query {
        Some(query) => {
            let req = QueryRequest {
                sql: query.clone(),
                names: NameContext {
                    project: t.project.clone(),
                    default_dataset: None,
                    temp: None,
                    vars: Default::default(),
                    ..Default::default()
                },
                dry_run: true,
                ..Default::default()
            };
            let out = s.engine.execute(&req).await?;
            let mut fields = out.schema.clone();
            for f in &mut fields {
                f.mode = None;
            }
            let mut table = Table::new(fields)?;
            table.kind = TableKind::View {
                query: query.clone(),
            };
            table
        }
        None => Table::new(spec.schema)?,
    };
    table.description = spec.description;
    table.options = spec.options;
    s.catalog.update(|w| w.create_table(t, table, false))?;
    s.catalog.read().table(t)
}

/// `tables.get`: a catalog table, or a query job's anonymous destination table (which
/// BigQuery serves like any other table until it expires).
pub fn get(s: &AppState, t: &TableRef) -> Result<Arc<Table>, BqError> {
    let found = s.catalog.read().table(t);
    match found {
        Ok(table) => Ok(table),
        Err(not_found) => {
            let Some(job) = s.jobs.by_destination(&t.project, &t.dataset, &t.table) else {
                return Err(not_found);
            };
            let st = job.state();
            match st.result {
                Some(Ok(out)) if out.returns_rows && st.expired => Err(job.expired_error()),
                Some(Ok(out)) if out.returns_rows => Ok(Arc::new(result_table(&out)?)),
                _ => Err(not_found),
            }
        }
    }
}

/// Checks that `new` changes `old` only as BigQuery lets `tables.patch` do: columns added
/// (at any depth, NULLABLE or REPEATED), REQUIRED relaxed to NULLABLE, descriptions changed.
/// Columns are matched by name; a missing, retyped or otherwise re-moded column is refused
/// with BigQuery's message, naming it by its path (`address.city`).
fn check_schema_change(
    t: &TableRef,
    old: &[TableFieldSchema],
    new: &[TableFieldSchema],
    prefix: &str,
) -> Result<(), BqError> {
    let refuse = |what: String| {
        BqError::invalid(format!("Provided Schema does not match Table {t}. {what}"))
    };
    for f in old {
        let path = format!("{prefix}{}", f.name);
        let Some(n) = new.iter().find(|n| n.name.eq_ignore_ascii_case(&f.name)) else {
            return Err(refuse(format!("Field {path} is missing in new schema")));
        };
        if n.field_type != f.field_type {
            return Err(refuse(format!(
                "Field {path} has changed type from {} to {}",
                f.field_type, n.field_type
            )));
        }
        let relaxed = f.mode() == FieldMode::Required && n.mode() == FieldMode::Nullable;
        if n.mode() != f.mode() && !relaxed {
            return Err(refuse(format!(
                "Field {path} has changed mode from {} to {}",
                mode_name(f.mode()),
                mode_name(n.mode())
            )));
        }
        check_schema_change(t, &f.fields, &n.fields, &format!("{path}."))?;
    }
    for n in new {
        if !old.iter().any(|f| f.name.eq_ignore_ascii_case(&n.name))
            && n.mode() == FieldMode::Required
        {
            return Err(refuse(format!(
                "Cannot add required fields to an existing schema. (field: {prefix}{})",
                n.name
            )));
        }
    }
    Ok(())
}

fn mode_name(m: FieldMode) -> &'static str {
    match m {
        FieldMode::Nullable => "NULLABLE",
        FieldMode::Required => "REQUIRED",
        FieldMode::Repeated => "REPEATED",
    }
}

/// `tables.patch` / `tables.update`: the changed table. New columns read as NULL (or an
/// empty array) in the rows already there.
pub fn patch(s: &AppState, t: &TableRef, change: TablePatch) -> Result<Arc<Table>, BqError> {
    let mut w = s.catalog.write();
    let mut table = (*w.table(t)?).clone();
    if let Some(etag) = &change.if_match
        && etag != "*"
        && *etag != table.etag()
    {
        return Err(BqError::condition_not_met(format!(
            "Precondition check failed: table {t} changed since etag {etag} was read"
        )));
    }
    if change.replace {
        table.options = change.options;
    } else {
        for (k, v) in change.options {
            if v.is_null() {
                table.options.remove(&k);
            } else {
                table.options.insert(k, v);
            }
        }
    }
    if let Some(d) = change.description {
        table.description = d;
    }
    if let Some(schema) = change.schema
        && schema != table.schema
    {
        if matches!(table.kind, TableKind::View { .. }) {
            return Err(BqError::invalid(format!(
                "Cannot change the schema of view {t}"
            )));
        }
        check_schema_change(t, &table.schema, &schema, "")?;
        let mut grown = Table::new(schema)?;
        grown.batches = reshape(&table.batches, &grown.arrow_schema)?;
        grown.kind = table.kind.clone();
        grown.creation_time = table.creation_time;
        grown.description = table.description.clone();
        grown.options = std::mem::take(&mut table.options);
        grown.generation = table.generation;
        table = grown;
    }
    table.last_modified_time = now_millis();
    table.generation += 1;
    w.put_table(t, table)?;
    let patched = w.table(t)?;
    w.commit()?;
    Ok(patched)
}

/// `tables.delete`.
pub fn delete(s: &AppState, t: &TableRef) -> Result<(), BqError> {
    s.catalog.update(|w| w.delete_table(t)).map(|_| ())
}

/// `tables.list`: one page, the next page's token, the dataset's table count and its last
/// modification time (the etag seed).
pub fn list(
    s: &AppState,
    project: &str,
    dataset: &str,
    page: PageRequest,
) -> Result<(Vec<TableListItem>, Option<String>, usize, i64), BqError> {
    let r = s.catalog.read();
    let ds = r.dataset(project, dataset)?;
    let all: Vec<TableListItem> = ds
        .tables
        .iter()
        .map(|(id, t)| TableListItem {
            id: id.clone(),
            is_view: matches!(t.kind, TableKind::View { .. }),
            creation_time: t.creation_time,
        })
        .collect();
    let (items, next) = page.slice(&all);
    Ok((items, next, all.len(), ds.last_modified_time))
}

//! `google.cloud.bigquery.v2.TableService` over [`crate::api::tables`].

use std::sync::Arc;

use gcloud_sdk::google::cloud::bigquery::v2::get_table_request::TableMetadataView;
use gcloud_sdk::google::cloud::bigquery::v2::{
    DeleteTableRequest, GetTableRequest, InsertTableRequest, ListFormatTable, ListFormatView,
    ListTablesRequest, Table, TableList, TableReference, UpdateOrPatchTableRequest, ViewDefinition,
};

use super::convert::{schema_from_proto, schema_to_proto};
use crate::api::PageRequest;
use crate::api::etag;
use crate::api::tables::{self as core, TablePatch, TableSpec, TableView, type_name};
use crate::catalog::{Table as CoreTable, TableKind, TableRef};
use crate::error::BqError;
use crate::state::AppState;

fn message(s: &AppState, t: &TableRef, table: &CoreTable) -> Table {
    let (rows, bytes) = match table.kind {
        TableKind::Table => (table.num_rows(), table.num_bytes()),
        TableKind::View { .. } => (0, 0),
    };
    Table {
        kind: "bigquery#table".into(),
        etag: table.etag(),
        id: t.to_string(),
        self_link: format!(
            "{}/bigquery/v2/projects/{}/datasets/{}/tables/{}",
            s.base_url, t.project, t.dataset, t.table
        ),
        table_reference: Some(TableReference {
            project_id: t.project.clone(),
            dataset_id: t.dataset.clone(),
            table_id: t.table.clone(),
        }),
        description: table.description.clone(),
        schema: Some(schema_to_proto(&table.schema)),
        num_bytes: Some(bytes as i64),
        num_long_term_bytes: Some(0),
        num_rows: Some(rows as u64),
        creation_time: table.creation_time,
        last_modified_time: table.last_modified_time as u64,
        r#type: type_name(table).into(),
        view: match &table.kind {
            TableKind::View { query } => Some(ViewDefinition {
                query: query.clone(),
                use_legacy_sql: Some(false),
                ..Default::default()
            }),
            TableKind::Table => None,
        },
        location: "US".into(),
        num_total_logical_bytes: Some(bytes as i64),
        num_active_logical_bytes: Some(bytes as i64),
        num_long_term_logical_bytes: Some(0),
        ..Default::default()
    }
}

/// `GetTable`.
pub async fn get(s: Arc<AppState>, req: GetTableRequest) -> Result<Table, BqError> {
    let view = match TableMetadataView::try_from(req.view) {
        Ok(v) => TableView::parse(v.as_str_name())?,
        Err(_) => {
            return Err(BqError::invalid(format!(
                "Invalid value for view: {}",
                req.view
            )));
        }
    };
    let t = TableRef::new(&req.project_id, &req.dataset_id, &req.table_id);
    let table = core::get(&s, &t)?;
    let mut m = message(&s, &t, &table);
    if !view.storage_stats() {
        m.num_bytes = None;
        m.num_long_term_bytes = None;
        m.num_rows = None;
        m.last_modified_time = 0;
        m.num_total_logical_bytes = None;
        m.num_active_logical_bytes = None;
        m.num_long_term_logical_bytes = None;
    }
    Ok(m)
}

/// `InsertTable`.
pub async fn insert(s: Arc<AppState>, req: InsertTableRequest) -> Result<Table, BqError> {
    let table = req.table.unwrap_or_default();
    let r = table.table_reference.clone().unwrap_or_default();
    let t = TableRef::new(&req.project_id, &req.dataset_id, &r.table_id);
    refuse_options(&table)?;
    let spec = TableSpec {
        schema: schema_from_proto(table.schema.as_ref())?,
        view_query: table.view.as_ref().map(|v| v.query.clone()),
        description: table.description.clone(),
        options: Default::default(),
    };
    let created = core::insert(&s, &t, spec).await?;
    Ok(message(&s, &t, &created))
}

/// `PatchTable` and `UpdateTable`: description and schema (a proto3 message cannot say
/// "clear the description", so an absent one is left as it is).
pub async fn patch(s: Arc<AppState>, req: UpdateOrPatchTableRequest) -> Result<Table, BqError> {
    let table = req.table.unwrap_or_default();
    let t = TableRef::new(&req.project_id, &req.dataset_id, &req.table_id);
    refuse_options(&table)?;
    let change = TablePatch {
        description: table.description.clone().map(Some),
        schema: match &table.schema {
            Some(s) => Some(schema_from_proto(Some(s))?),
            None => None,
        },
        options: Default::default(),
        replace: false,
        if_match: Some(table.etag.clone()).filter(|e| !e.is_empty()),
    };
    let changed = core::patch(&s, &t, change)?;
    Ok(message(&s, &t, &changed))
}

/// Refuses the table options the v2 messages carry but this adapter does not keep yet
/// (REST keeps them all), rather than dropping them.
fn refuse_options(table: &Table) -> Result<(), BqError> {
    let set = [
        ("timePartitioning", table.time_partitioning.is_some()),
        ("rangePartitioning", table.range_partitioning.is_some()),
        ("clustering", table.clustering.is_some()),
        ("tableConstraints", table.table_constraints.is_some()),
        (
            "requirePartitionFilter",
            table.require_partition_filter.is_some(),
        ),
        ("friendlyName", table.friendly_name.is_some()),
        ("expirationTime", table.expiration_time.is_some()),
        ("materializedView", table.materialized_view.is_some()),
        ("labels", !table.labels.is_empty()),
    ];
    match set.into_iter().find(|(_, is_set)| *is_set) {
        Some((name, _)) => Err(BqError::unsupported(format!(
            "the table option `{name}` over the v2 gRPC TableService (REST keeps it)"
        ))),
        None => Ok(()),
    }
}

/// `DeleteTable`.
pub async fn delete(s: Arc<AppState>, req: DeleteTableRequest) -> Result<(), BqError> {
    core::delete(
        &s,
        &TableRef::new(&req.project_id, &req.dataset_id, &req.table_id),
    )
}

/// `ListTables`.
pub async fn list(s: Arc<AppState>, req: ListTablesRequest) -> Result<TableList, BqError> {
    let page = PageRequest::from_token(Some(&req.page_token), req.max_results.map(|m| m as usize))?;
    let (items, next, total, modified) = core::list(&s, &req.project_id, &req.dataset_id, page)?;
    Ok(TableList {
        kind: "bigquery#tableList".into(),
        etag: etag(modified),
        next_page_token: next.unwrap_or_default(),
        total_items: Some(total as i32),
        tables: items
            .iter()
            .map(|t| ListFormatTable {
                kind: "bigquery#table".into(),
                id: format!("{}:{}.{}", req.project_id, req.dataset_id, t.id),
                table_reference: Some(TableReference {
                    project_id: req.project_id.clone(),
                    dataset_id: req.dataset_id.clone(),
                    table_id: t.id.clone(),
                }),
                r#type: if t.is_view { "VIEW" } else { "TABLE" }.into(),
                view: t.is_view.then(|| ListFormatView {
                    use_legacy_sql: Some(false),
                    ..Default::default()
                }),
                creation_time: t.creation_time,
                ..Default::default()
            })
            .collect(),
    })
}

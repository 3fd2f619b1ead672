//! tables.insert / get / patch / delete / list (as JSON over [`crate::api::tables`]),
//! tabledata.list and tabledata.insertAll.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bigq_codec::schema::TableFieldSchema;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::scalar::ScalarValue;
use serde_json::{Value, json};

use super::check::INSERT_ALL;
use super::fields::TABLE;
use super::http::{QueryParams, flag, int_param, ok, page_request, parse_checked, raw_json};
use crate::api::etag;
use crate::api::tables::{self as core, TablePatch, TableSpec, TableView};
use crate::catalog::{Table, TableKind, TableRef};
use crate::error::BqError;
use crate::sql::values::json_to_scalar;
use crate::state::AppState;
use bigq_codec::json::encode::{self, EncodeOptions};

pub use crate::api::jobs::PAGE_BYTES;

fn resource(s: &AppState, t: &TableRef, table: &Table) -> Value {
    let (kind, rows, bytes) = match &table.kind {
        TableKind::Table => ("TABLE", table.num_rows(), table.num_bytes()),
        TableKind::View { .. } => ("VIEW", 0, 0),
    };
    let mut v = json!({
        "kind": "bigquery#table",
        "etag": table.etag(),
        "id": format!("{}:{}.{}", t.project, t.dataset, t.table),
        "selfLink": format!(
            "{}/bigquery/v2/projects/{}/datasets/{}/tables/{}",
            s.base_url, t.project, t.dataset, t.table
        ),
        "tableReference": {"projectId": t.project, "datasetId": t.dataset, "tableId": t.table},
        "schema": {"fields": table.schema},
        "numBytes": bytes.to_string(),
        "numLongTermBytes": "0",
        "numRows": rows.to_string(),
        "creationTime": table.creation_time.to_string(),
        "lastModifiedTime": table.last_modified_time.to_string(),
        "type": kind,
        "location": "US",
        "numTotalLogicalBytes": bytes.to_string(),
        "numActiveLogicalBytes": bytes.to_string(),
        "numLongTermLogicalBytes": "0",
    });
    if let TableKind::View { query } = &table.kind {
        v["view"] = json!({"query": query, "useLegacySql": false});
    }
    if let Some(d) = &table.description {
        v["description"] = d.clone().into();
    }
    if let Some(m) = v.as_object_mut() {
        for (k, o) in &table.options {
            m.insert(k.clone(), o.clone());
        }
    }
    v
}

/// The table resource's settable fields the emulator keeps as they were set, beyond the
/// schema, the view and the description.
const OPTION_KEYS: &[&str] = &[
    "friendlyName",
    "expirationTime",
    "labels",
    "timePartitioning",
    "rangePartitioning",
    "requirePartitionFilter",
    "clustering",
    "tableConstraints",
    "defaultCollation",
    "defaultRoundingMode",
    "maxStaleness",
];

/// The options a body sets; a field the emulator cannot honour is refused by name.
fn options(body: &Value) -> Result<serde_json::Map<String, Value>, BqError> {
    if body.get("materializedView").is_some() {
        return Err(BqError::unsupported(
            "materialized views (`materializedView`)",
        ));
    }
    Ok(OPTION_KEYS
        .iter()
        .filter_map(|k| body.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect())
}

/// The table fields a JSON body sets: schema, view query, description.
fn spec(body: &Value) -> Result<TableSpec, BqError> {
    let schema: Vec<TableFieldSchema> = match body.pointer("/schema/fields") {
        None => Vec::new(),
        Some(f) => serde_json::from_value(f.clone())
            .map_err(|e| BqError::invalid(format!("Invalid table schema: {e}")))?,
    };
    Ok(TableSpec {
        schema,
        view_query: body.get("view").map(|v| {
            v.get("query")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        }),
        description: body
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        options: options(body)?,
    })
}

pub async fn insert(
    State(s): State<Arc<AppState>>,
    Path((project, dataset)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let body = match parse_checked(&body, &TABLE, "table") {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let id = body
        .pointer("/tableReference/tableId")
        .and_then(Value::as_str)
        .unwrap_or("");
    let t = TableRef::new(project, dataset, id.to_string());
    let spec = match spec(&body) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    match core::insert(&s, &t, spec).await {
        Ok(table) => ok(&resource(&s, &t, &table)),
        Err(e) => e.into_response(),
    }
}

pub async fn get(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, table)): Path<(String, String, String)>,
    Query(q): Query<QueryParams>,
) -> Response {
    let view = match TableView::parse(q.get("view").map_or("", String::as_str)) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let t = TableRef::new(project, dataset, table);
    match core::get(&s, &t) {
        Ok(table) => {
            let mut v = resource(&s, &t, &table);
            if !view.storage_stats()
                && let Some(m) = v.as_object_mut()
            {
                for k in [
                    "numBytes",
                    "numLongTermBytes",
                    "numRows",
                    "lastModifiedTime",
                    "numTotalLogicalBytes",
                    "numActiveLogicalBytes",
                    "numLongTermLogicalBytes",
                ] {
                    m.remove(k);
                }
            }
            ok(&v)
        }
        Err(e) => e.into_response(),
    }
}

/// `tables.patch` and `tables.update` (PUT: the options the body leaves out are cleared),
/// refused with 412 when an `If-Match` etag is no longer the table's.
pub async fn patch(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, table)): Path<(String, String, String)>,
    method: axum::http::Method,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let body = match parse_checked(&body, &TABLE, "table") {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let t = TableRef::new(project, dataset, table);
    let schema = match body.pointer("/schema/fields") {
        None => None,
        Some(f) => match serde_json::from_value(f.clone()) {
            Ok(f) => Some(f),
            Err(e) => {
                return BqError::invalid(format!("Invalid table schema: {e}")).into_response();
            }
        },
    };
    let options = match options(&body) {
        Ok(o) => o,
        Err(e) => return e.into_response(),
    };
    let change = TablePatch {
        description: body
            .get("description")
            .map(|d| d.as_str().map(str::to_string)),
        schema,
        options,
        replace: method == axum::http::Method::PUT,
        if_match: headers
            .get(axum::http::header::IF_MATCH)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    };
    match core::patch(&s, &t, change) {
        Ok(table) => ok(&resource(&s, &t, &table)),
        Err(e) => e.into_response(),
    }
}

pub async fn delete(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, table)): Path<(String, String, String)>,
) -> Response {
    let t = TableRef::new(project, dataset, table);
    match core::delete(&s, &t) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => e.into_response(),
    }
}

pub async fn list(
    State(s): State<Arc<AppState>>,
    Path((project, dataset)): Path<(String, String)>,
    Query(q): Query<QueryParams>,
) -> Response {
    let page = page_request(&q);
    let (items, next, total, modified) = match core::list(&s, &project, &dataset, page) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let page: Vec<Value> = items
        .iter()
        .map(|t| {
            json!({
                "kind": "bigquery#table",
                "id": format!("{project}:{dataset}.{}", t.id),
                "tableReference": {"projectId": project, "datasetId": dataset, "tableId": t.id},
                "type": if t.is_view { "VIEW" } else { "TABLE" },
                "creationTime": t.creation_time.to_string(),
            })
        })
        .collect();
    let mut v = json!({
        "kind": "bigquery#tableList",
        "etag": etag(modified),
        "totalItems": total,
    });
    if let Some(n) = next {
        v["nextPageToken"] = n.into();
    }
    if !page.is_empty() {
        v["tables"] = Value::Array(page);
    }
    ok(&v)
}

/// Encode options from `formatOptions.useInt64Timestamp`.
pub fn encode_options(q: &QueryParams) -> EncodeOptions {
    EncodeOptions {
        int64_timestamp: flag(q, "formatOptions.useInt64Timestamp"),
    }
}

/// Writes `"totalRows":..,"pageToken":..,"rows":[..]` fields for one page, and returns
/// them as text to splice into a response object (leading comma included).
pub fn page_fields(
    batches: &[RecordBatch],
    total: usize,
    start: usize,
    max_rows: Option<usize>,
    opts: EncodeOptions,
    token_key: &str,
) -> String {
    let mut rows = String::new();
    let n = if start < total {
        encode::write_rows(
            &mut rows,
            batches,
            start,
            max_rows.unwrap_or(usize::MAX),
            PAGE_BYTES,
            opts,
        )
    } else {
        0
    };
    let mut out = format!(",\"totalRows\":\"{total}\"");
    if start + n < total {
        out.push_str(&format!(",\"{token_key}\":\"{}\"", start + n));
    }
    if n > 0 {
        out.push_str(",\"rows\":[");
        out.push_str(&rows);
        out.push(']');
    }
    out
}

/// Splices encoded fields into a JSON object.
pub fn splice(head: &Value, fields: &str) -> String {
    let mut s = serde_json::to_string(head).unwrap_or_else(|_| "{}".to_string());
    if s.ends_with('}') {
        s.pop();
        if s.len() == 1 {
            s.push_str(fields.trim_start_matches(','));
        } else {
            s.push_str(fields);
        }
        s.push('}');
    }
    s
}

/// Parses the start row from `startIndex` and `pageToken`.
pub fn start_row(q: &QueryParams) -> Result<usize, BqError> {
    if let Some(t) = q.get("pageToken") {
        return t
            .parse()
            .map_err(|_| BqError::invalid(format!("Invalid page token: {t}")));
    }
    Ok(int_param(q, "startIndex")?.unwrap_or(0) as usize)
}

pub async fn list_data(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, table)): Path<(String, String, String)>,
    Query(q): Query<QueryParams>,
) -> Response {
    let t = TableRef::new(project, dataset, table);
    let r = s.catalog.read().table(&t);
    let table = match r {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    if matches!(table.kind, TableKind::View { .. }) {
        return BqError::invalid(format!("Cannot list a table of type VIEW: {t}")).into_response();
    }
    let start = match start_row(&q) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let max = match int_param(&q, "maxResults") {
        Ok(m) => m.map(|m| m as usize),
        Err(e) => return e.into_response(),
    };
    let mut batches = table.batches.clone();
    if let Some(sel) = q.get("selectedFields").filter(|s| !s.is_empty()) {
        let mut idx = Vec::new();
        for name in sel.split(',') {
            let name = name.trim();
            let top = name.split('.').next().unwrap_or(name);
            match table.schema.iter().position(|f| f.name == top) {
                Some(i) if !idx.contains(&i) => idx.push(i),
                Some(_) => {}
                None => {
                    return BqError::invalid(format!("Invalid field selection {name}"))
                        .into_response();
                }
            }
        }
        idx.sort_unstable();
        batches = match batches.iter().map(|b| b.project(&idx)).collect() {
            Ok(b) => b,
            Err(e) => return BqError::internal(e.to_string()).into_response(),
        };
    }
    let total = table.num_rows();
    let head = json!({"kind": "bigquery#tableDataList", "etag": etag(table.last_modified_time)});
    let fields = page_fields(&batches, total, start, max, encode_options(&q), "pageToken");
    raw_json(StatusCode::OK, splice(&head, &fields))
}

pub async fn insert_all(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, table)): Path<(String, String, String)>,
    body: Bytes,
) -> Response {
    let body = match parse_checked(&body, &INSERT_ALL, "") {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let t = TableRef::new(project, dataset, table);
    let r = s.catalog.read().table(&t);
    let table = match r {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let skip_invalid = body
        .get("skipInvalidRows")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let ignore_unknown = body
        .get("ignoreUnknownValues")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let rows = body
        .get("rows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ncols = table.schema.len();
    let mut columns: Vec<Vec<ScalarValue>> = vec![Vec::with_capacity(rows.len()); ncols];
    let mut errors: Vec<(usize, Value)> = Vec::new();
    // The `insertId` of each row that goes into `columns`.
    let mut ids: Vec<Option<&str>> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let Some(obj) = row.get("json").and_then(Value::as_object) else {
            errors.push((i, json!({"reason": "invalid", "location": "", "debugInfo": "", "message": "Row has no json object."})));
            continue;
        };
        if !ignore_unknown
            && let Some(k) = obj
                .keys()
                .find(|k| !table.schema.iter().any(|f| &f.name == *k))
        {
            errors.push((i, json!({"reason": "invalid", "location": k, "debugInfo": "", "message": "no such field."})));
            continue;
        }
        let mut vals = Vec::with_capacity(ncols);
        let mut bad = None;
        for f in &table.schema {
            match json_to_scalar(f, obj.get(&f.name).unwrap_or(&Value::Null)) {
                Ok(v) => vals.push(v),
                Err(e) => {
                    bad = Some(
                        json!({"reason": "invalid", "location": e.location, "debugInfo": "", "message": e.message}),
                    );
                    break;
                }
            }
        }
        match bad {
            Some(e) => errors.push((i, e)),
            None => {
                for (c, v) in columns.iter_mut().zip(vals) {
                    c.push(v);
                }
                ids.push(
                    row.get("insertId")
                        .and_then(Value::as_str)
                        .filter(|id| !id.is_empty()),
                );
            }
        }
    }
    let mut resp = json!({"kind": "bigquery#tableDataInsertAllResponse"});
    if !errors.is_empty() {
        let mut list: Vec<Value> = errors
            .iter()
            .map(|(i, e)| json!({"index": i, "errors": [e]}))
            .collect();
        if !skip_invalid {
            // BigQuery stops the whole request; the valid rows are reported as stopped.
            for i in 0..rows.len() {
                if !errors.iter().any(|(j, _)| *j == i) {
                    list.push(json!({"index": i, "errors": [{"reason": "stopped", "location": "", "debugInfo": "", "message": ""}]}));
                }
            }
            list.sort_by_key(|v| v["index"].as_u64());
            resp["insertErrors"] = Value::Array(list);
            return ok(&resp);
        }
        resp["insertErrors"] = Value::Array(list);
    }
    // Held until the rows are committed, so a retry racing its original is written once.
    let dedup = s.insert_ids.begin(&t.to_string());
    let fresh = dedup.fresh(&ids);
    if fresh.iter().any(|f| !f) {
        for c in &mut columns {
            let mut keep = fresh.iter();
            c.retain(|_| keep.next().copied().unwrap_or(true));
        }
    }
    if columns.first().is_some_and(|c| !c.is_empty()) {
        let arrays = columns
            .into_iter()
            .zip(table.arrow_schema.fields())
            .map(|(vals, f)| {
                ScalarValue::iter_to_array(vals).and_then(|a| {
                    if a.data_type() == f.data_type() {
                        Ok(a)
                    } else {
                        Ok(datafusion::arrow::compute::cast(&a, f.data_type())?)
                    }
                })
            })
            .collect::<Result<Vec<_>, _>>();
        let batch = arrays
            .map_err(|e| BqError::internal(e.to_string()))
            .and_then(|a| {
                RecordBatch::try_new(table.arrow_schema.clone(), a)
                    .map_err(|e| BqError::internal(e.to_string()))
            });
        let batch = match batch {
            Ok(b) => b,
            Err(e) => return e.into_response(),
        };
        let mut w = s.catalog.write();
        let mut current = match w.table(&t) {
            Ok(t) => (*t).clone(),
            Err(e) => return e.into_response(),
        };
        current.batches.push(batch);
        // Answered only once the rows are written to the data directory, if there is one.
        if let Err(e) = w.put_table(&t, current).and_then(|()| w.commit()) {
            return e.into_response();
        }
        dedup.record(
            ids.iter()
                .zip(&fresh)
                .filter(|(_, f)| **f)
                .filter_map(|(id, _)| *id),
        );
    }
    ok(&resp)
}

//! datasets.insert / get / list / delete / patch, as JSON over [`crate::api::datasets`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::fields::DATASET;
use super::http::{QueryParams, flag, ok, page_request, parse_checked};
use crate::api::datasets::{self as core, DatasetFields};
use crate::api::etag;
use crate::catalog::Dataset;
use crate::state::AppState;

fn resource(s: &AppState, project: &str, id: &str, ds: &Dataset) -> Value {
    let mut v = json!({
        "kind": "bigquery#dataset",
        "etag": ds.etag(),
        "id": format!("{project}:{id}"),
        "selfLink": format!("{}/bigquery/v2/projects/{project}/datasets/{id}", s.base_url),
        "datasetReference": {"datasetId": id, "projectId": project},
        "access": [
            {"role": "WRITER", "specialGroup": "projectWriters"},
            {"role": "OWNER", "specialGroup": "projectOwners"},
            {"role": "READER", "specialGroup": "projectReaders"},
        ],
        "creationTime": ds.creation_time.to_string(),
        "lastModifiedTime": ds.last_modified_time.to_string(),
        "location": ds.location,
        "type": "DEFAULT",
        "maxTimeTravelHours": "168",
    });
    if let Some(d) = &ds.description {
        v["description"] = d.clone().into();
    }
    if let Some(d) = &ds.friendly_name {
        v["friendlyName"] = d.clone().into();
    }
    if !ds.labels.is_empty() {
        v["labels"] = json!(ds.labels);
    }
    if let Some(m) = v.as_object_mut() {
        for (k, o) in &ds.options {
            m.insert(k.clone(), o.clone());
        }
    }
    v
}

/// The dataset resource's settable fields the emulator keeps as they were set.
const OPTION_KEYS: &[&str] = &[
    "defaultTableExpirationMs",
    "defaultPartitionExpirationMs",
    "isCaseInsensitive",
    "maxTimeTravelHours",
    "defaultRoundingMode",
    "defaultCollation",
];

/// The dataset fields a JSON body sets.
fn fields(body: &Value) -> DatasetFields {
    let text = |k: &str| body.get(k).map(|d| d.as_str().map(str::to_string));
    DatasetFields {
        description: text("description"),
        friendly_name: text("friendlyName"),
        labels: body
            .get("labels")
            .and_then(Value::as_object)
            .map(|l| {
                l.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map(str::to_string)))
                    .collect()
            })
            .unwrap_or_default(),
        options: OPTION_KEYS
            .iter()
            .filter_map(|k| body.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect(),
        if_match: None,
    }
}

pub async fn insert(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    body: Bytes,
) -> Response {
    let body = match parse_checked(&body, &DATASET, "dataset") {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let id = body
        .pointer("/datasetReference/datasetId")
        .and_then(Value::as_str)
        .unwrap_or("");
    let project = body
        .pointer("/datasetReference/projectId")
        .and_then(Value::as_str)
        .unwrap_or(&project)
        .to_string();
    let location = body
        .get("location")
        .and_then(Value::as_str)
        .map(str::to_string);
    match core::insert(&s, &project, id, location, &fields(&body)) {
        Ok(ds) => ok(&resource(&s, &project, id, &ds)),
        Err(e) => e.into_response(),
    }
}

pub async fn get(
    State(s): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
) -> Response {
    match core::get(&s, &project, &id) {
        Ok(ds) => ok(&resource(&s, &project, &id, &ds)),
        Err(e) => e.into_response(),
    }
}

/// `datasets.patch` and `datasets.update` (PUT: what the body leaves out is cleared),
/// refused with 412 when an `If-Match` etag is no longer the dataset's.
pub async fn patch(
    State(s): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
    method: axum::http::Method,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let body = match parse_checked(&body, &DATASET, "dataset") {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let mut change = fields(&body);
    change.if_match = headers
        .get(axum::http::header::IF_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let replace = method == axum::http::Method::PUT;
    match core::patch(&s, &project, &id, &change, replace) {
        Ok(ds) => ok(&resource(&s, &project, &id, &ds)),
        Err(e) => e.into_response(),
    }
}

pub async fn delete(
    State(s): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
    Query(q): Query<QueryParams>,
) -> Response {
    match core::delete(&s, &project, &id, flag(&q, "deleteContents")) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => e.into_response(),
    }
}

pub async fn list(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    Query(q): Query<QueryParams>,
) -> Response {
    let page = page_request(&q);
    let (items, next, total) = core::list(&s, &project, page);
    let page: Vec<Value> = items
        .iter()
        .map(|(id, ds)| {
            json!({
                "kind": "bigquery#dataset",
                "id": format!("{project}:{id}"),
                "datasetReference": {"datasetId": id, "projectId": project},
                "location": ds.location,
                "type": "DEFAULT",
            })
        })
        .collect();
    let mut v = json!({"kind": "bigquery#datasetList", "etag": etag(total as i64)});
    if let Some(n) = next {
        v["nextPageToken"] = n.into();
    }
    if !page.is_empty() {
        v["datasets"] = Value::Array(page);
    }
    ok(&v)
}

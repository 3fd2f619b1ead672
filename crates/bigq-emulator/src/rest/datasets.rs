//! datasets.insert / get / list / delete / patch.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{AppState, QueryParams, etag, flag, ok, parse_body};
use crate::catalog::Dataset;
use crate::error::BqError;

fn resource(s: &AppState, project: &str, id: &str, ds: &Dataset) -> Value {
    let mut v = json!({
        "kind": "bigquery#dataset",
        "etag": etag(ds.last_modified_time),
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
    v
}

fn apply(ds: &mut Dataset, body: &Value) {
    if let Some(d) = body.get("description") {
        ds.description = d.as_str().map(str::to_string);
    }
    if let Some(d) = body.get("friendlyName") {
        ds.friendly_name = d.as_str().map(str::to_string);
    }
    if let Some(l) = body.get("labels").and_then(Value::as_object) {
        for (k, v) in l {
            match v.as_str() {
                Some(v) => {
                    ds.labels.insert(k.clone(), v.to_string());
                }
                None => {
                    ds.labels.remove(k);
                }
            }
        }
    }
}

pub async fn insert(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    body: Bytes,
) -> Response {
    let body = match parse_body(&body) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let Some(id) = body
        .pointer("/datasetReference/datasetId")
        .and_then(Value::as_str)
    else {
        return BqError::invalid("Required parameter is missing: datasetReference.datasetId")
            .into_response();
    };
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return BqError::invalid(format!(
            "Invalid dataset ID \"{id}\". Dataset IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long."
        ))
        .into_response();
    }
    let project = body
        .pointer("/datasetReference/projectId")
        .and_then(Value::as_str)
        .unwrap_or(&project)
        .to_string();
    let mut ds = Dataset::new(
        body.get("location")
            .and_then(Value::as_str)
            .map(str::to_string),
    );
    apply(&mut ds, &body);
    let v = resource(&s, &project, id, &ds);
    match s.catalog.write().create_dataset(&project, id, ds) {
        Ok(()) => ok(&v),
        Err(e) => e.into_response(),
    }
}

pub async fn get(
    State(s): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
) -> Response {
    let r = s.catalog.read();
    match r.dataset(&project, &id) {
        Ok(ds) => ok(&resource(&s, &project, &id, ds)),
        Err(_) => BqError::not_found(format!("Not found: Dataset {project}:{id}")).into_response(),
    }
}

pub async fn patch(
    State(s): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let body = match parse_body(&body) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let mut w = s.catalog.write();
    match w.dataset_mut(&project, &id) {
        Ok(ds) => {
            apply(ds, &body);
            ds.last_modified_time = crate::catalog::now_millis();
            ok(&resource(&s, &project, &id, ds))
        }
        Err(_) => BqError::not_found(format!("Not found: Dataset {project}:{id}")).into_response(),
    }
}

pub async fn delete(
    State(s): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
    Query(q): Query<QueryParams>,
) -> Response {
    let r = s
        .catalog
        .write()
        .delete_dataset(&project, &id, flag(&q, "deleteContents"));
    match r {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) if e.reason == "notFound" => {
            BqError::not_found(format!("Not found: Dataset {project}:{id}")).into_response()
        }
        Err(e) => e.into_response(),
    }
}

pub async fn list(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    Query(q): Query<QueryParams>,
) -> Response {
    let r = s.catalog.read();
    let max = super::int_param(&q, "maxResults")
        .ok()
        .flatten()
        .unwrap_or(u64::MAX) as usize;
    let start: usize = q.get("pageToken").and_then(|t| t.parse().ok()).unwrap_or(0);
    let all: Vec<_> = r.datasets(&project).collect();
    let page: Vec<Value> = all
        .iter()
        .skip(start)
        .take(max)
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
    let mut v = json!({"kind": "bigquery#datasetList", "etag": etag(all.len() as i64)});
    if start + page.len() < all.len() {
        v["nextPageToken"] = (start + page.len()).to_string().into();
    }
    if !page.is_empty() {
        v["datasets"] = Value::Array(page);
    }
    ok(&v)
}

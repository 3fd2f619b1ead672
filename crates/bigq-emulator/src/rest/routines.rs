//! routines.insert / get / update / delete / list, as JSON over [`crate::api::routines`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::fields::ROUTINE;
use super::http::{QueryParams, ok, page_request, parse_checked};
use crate::api::routines as core;
use crate::error::BqError;
use crate::state::AppState;

fn resource(r: &Map<String, Value>) -> Value {
    let mut v = Value::Object(r.clone());
    v["etag"] = core::etag(r).into();
    v
}

fn body_of(body: &Bytes) -> Result<Map<String, Value>, BqError> {
    match parse_checked(body, &ROUTINE, "routine")? {
        Value::Object(m) => Ok(m),
        _ => Err(BqError::invalid(
            "Invalid JSON payload received. Expected an object.",
        )),
    }
}

pub async fn insert(
    State(s): State<Arc<AppState>>,
    Path((project, dataset)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    match body_of(&body).and_then(|b| core::insert(&s, &project, &dataset, b)) {
        Ok(r) => ok(&resource(&r)),
        Err(e) => e.into_response(),
    }
}

pub async fn get(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, id)): Path<(String, String, String)>,
) -> Response {
    match core::get(&s, &project, &dataset, &id) {
        Ok(r) => ok(&resource(&r)),
        Err(e) => e.into_response(),
    }
}

/// `routines.update` (PUT), refused with 412 when an `If-Match` etag is no longer the
/// routine's.
pub async fn update(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, id)): Path<(String, String, String)>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let if_match = headers
        .get(axum::http::header::IF_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match body_of(&body)
        .and_then(|b| core::update(&s, &project, &dataset, &id, b, if_match.as_deref()))
    {
        Ok(r) => ok(&resource(&r)),
        Err(e) => e.into_response(),
    }
}

pub async fn delete(
    State(s): State<Arc<AppState>>,
    Path((project, dataset, id)): Path<(String, String, String)>,
) -> Response {
    match core::delete(&s, &project, &dataset, &id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => e.into_response(),
    }
}

/// `routines.list`: each routine with the fields BigQuery lists (no body or arguments).
pub async fn list(
    State(s): State<Arc<AppState>>,
    Path((project, dataset)): Path<(String, String)>,
    Query(q): Query<QueryParams>,
) -> Response {
    let page = page_request(&q);
    let (items, next) = match core::list(&s, &project, &dataset, page) {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let listed: Vec<Value> = items
        .iter()
        .map(|r| {
            let mut v = json!({"etag": core::etag(r)});
            for k in [
                "routineReference",
                "routineType",
                "creationTime",
                "lastModifiedTime",
                "language",
                "description",
            ] {
                if let Some(x) = r.get(k) {
                    v[k] = x.clone();
                }
            }
            v
        })
        .collect();
    let mut v = json!({});
    if !listed.is_empty() {
        v["routines"] = Value::Array(listed);
    }
    if let Some(n) = next {
        v["nextPageToken"] = n.into();
    }
    ok(&v)
}

//! BigQuery REST v2 over HTTP, answering with BigQuery's exact shapes.

mod check;
mod datasets;
#[rustfmt::skip]
mod fields;
mod jobs;
mod tables;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use crate::catalog::Catalog;
use crate::error::BqError;
use crate::jobs::JobStore;
use crate::sql::engine::Engine;

/// Shared server state.
#[derive(Debug)]
pub struct AppState {
    /// The catalog.
    pub catalog: Arc<Catalog>,
    /// The SQL engine.
    pub engine: Engine,
    /// Jobs.
    pub jobs: JobStore,
    /// An artificial delay before each query job runs, to let tests exercise polling.
    pub query_delay: Duration,
    /// The base URL, for `selfLink`s.
    pub base_url: String,
    /// Sessions (`createSession`), by id: where their temporary tables live.
    pub sessions: std::sync::Mutex<HashMap<String, crate::sql::rewrite::TempScope>>,
}

/// URL query parameters.
pub type QueryParams = HashMap<String, String>;

/// A JSON response.
pub fn json_response(status: StatusCode, v: &Value) -> Response {
    raw_json(status, serde_json::to_string(v).unwrap_or_default())
}

/// A JSON response from already-encoded text.
pub fn raw_json(status: StatusCode, body: String) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json; charset=UTF-8")
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// 200 with a JSON body.
pub fn ok(v: &Value) -> Response {
    json_response(StatusCode::OK, v)
}

impl IntoResponse for BqError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        json_response(status, &self.to_json())
    }
}

/// The largest request body taken.
const MAX_BODY_BYTES: usize = 100 * 1024 * 1024;

/// A body over [`MAX_BODY_BYTES`] is refused by the body extractor with a plain-text 413;
/// it is sent as BigQuery's JSON error shape (status 413, reason `invalid`) instead, so that
/// clients read it as they read every other error.
async fn too_large_as_json(resp: Response) -> Response {
    if resp.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return resp;
    }
    let mut e = BqError::invalid(format!(
        "Request payload size exceeds the limit: {MAX_BODY_BYTES} bytes."
    ));
    e.status = 413;
    e.into_response()
}

/// Parses a JSON request body that is the resource `message` (the request's field `root`),
/// checked against its fields ([`check`]): malformed JSON, an unknown name or a value of the
/// wrong type is BigQuery's 400.
fn parse_checked(body: &Bytes, message: &check::Message, root: &str) -> Result<Value, BqError> {
    let v = parse_body(body)?;
    check::check(&v, message, root)?;
    Ok(v)
}

/// Parses a JSON request body; malformed JSON is BigQuery's 400 `parseError`-style error.
pub fn parse_body(body: &Bytes) -> Result<Value, BqError> {
    if body.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BqError::invalid(format!("Invalid JSON payload received. {e}")))?;
    if !v.is_object() {
        return Err(BqError::invalid(
            "Invalid JSON payload received. Expected an object.",
        ));
    }
    Ok(v)
}

/// A boolean URL parameter.
pub fn flag(q: &QueryParams, name: &str) -> bool {
    q.get(name)
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// An integer URL parameter.
pub fn int_param(q: &QueryParams, name: &str) -> Result<Option<u64>, BqError> {
    match q.get(name) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| BqError::invalid(format!("Invalid value for {name}: {v}"))),
    }
}

/// An opaque etag.
pub fn etag(seed: i64) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{seed:x}"))
}

async fn not_found(uri: axum::http::Uri) -> Response {
    BqError::not_found(format!("Not found: URL {}", uri.path())).into_response()
}

async fn healthz() -> Response {
    ok(&serde_json::json!({"status": "ok"}))
}

/// The router for all REST endpoints.
pub fn router(state: Arc<AppState>) -> Router {
    let p = "/bigquery/v2/projects/{project}";
    Router::new()
        .route("/healthz", get(healthz))
        .route(
            &format!("{p}/datasets"),
            get(datasets::list).post(datasets::insert),
        )
        .route(
            &format!("{p}/datasets/{{dataset}}"),
            get(datasets::get)
                .delete(datasets::delete)
                .patch(datasets::patch)
                .put(datasets::patch),
        )
        .route(
            &format!("{p}/datasets/{{dataset}}/tables"),
            get(tables::list).post(tables::insert),
        )
        .route(
            &format!("{p}/datasets/{{dataset}}/tables/{{table}}"),
            get(tables::get)
                .delete(tables::delete)
                .patch(tables::patch)
                .put(tables::patch),
        )
        .route(
            &format!("{p}/datasets/{{dataset}}/tables/{{table}}/data"),
            get(tables::list_data),
        )
        .route(
            &format!("{p}/datasets/{{dataset}}/tables/{{table}}/insertAll"),
            post(tables::insert_all),
        )
        .route(&format!("{p}/queries"), post(jobs::query))
        .route(
            &format!("{p}/queries/{{job}}"),
            get(jobs::get_query_results),
        )
        .route(&format!("{p}/jobs"), get(jobs::list).post(jobs::insert))
        .route(&format!("{p}/jobs/{{job}}"), get(jobs::get))
        .route(&format!("{p}/jobs/{{job}}/cancel"), post(jobs::cancel))
        .route(
            &format!("{p}/jobs/{{job}}/delete"),
            axum::routing::delete(jobs::delete),
        )
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(too_large_as_json))
        .with_state(state)
}

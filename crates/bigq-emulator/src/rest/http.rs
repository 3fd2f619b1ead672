//! JSON over HTTP as BigQuery's REST front end speaks it: request bodies parsed and checked
//! against their resource's fields, URL parameters read, answers and errors written as JSON.

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::check;
use crate::error::BqError;

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

/// Parses a JSON request body that is the resource `message` (the request's field `root`),
/// checked against its fields ([`check`]): malformed JSON, an unknown name or a value of the
/// wrong type is BigQuery's 400.
pub(super) fn parse_checked(
    body: &Bytes,
    message: &check::Message,
    root: &str,
) -> Result<Value, BqError> {
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

/// The page a list call asks for: `pageToken` (an item index; anything else the first page)
/// and `maxResults`.
pub fn page_request(q: &QueryParams) -> crate::api::PageRequest {
    crate::api::PageRequest {
        start: q.get("pageToken").and_then(|t| t.parse().ok()).unwrap_or(0),
        max: int_param(q, "maxResults")
            .ok()
            .flatten()
            .map(|m| m as usize),
    }
}

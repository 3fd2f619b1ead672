//! The REST endpoints: each path of BigQuery's v2 API routed to its handler, bodies limited
//! in size, anything else a JSON 404.

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::http::ok;
use super::{datasets, jobs, routines, tables};
use crate::error::BqError;
use crate::faults::{Faults, admin_router};
use crate::state::AppState;

/// Requests served at once (one limit shared by every route).
const MAX_CONCURRENT_REQUESTS: usize = 64;

/// The largest request body taken: BigQuery's limit on an API request.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

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

async fn not_found(uri: axum::http::Uri) -> Response {
    BqError::not_found(format!("Not found: URL {}", uri.path())).into_response()
}

async fn healthz() -> Response {
    ok(&serde_json::json!({"status": "ok"}))
}

/// The router for all REST endpoints, with the fault middleware armed by `faults` and its
/// `/emulator/v1/faults` endpoint.
pub fn router(state: Arc<AppState>, faults: Arc<Faults>) -> Router {
    let p = "/bigquery/v2/projects/{project}";
    let api = Router::new()
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
        .route(
            &format!("{p}/datasets/{{dataset}}/routines"),
            get(routines::list).post(routines::insert),
        )
        .route(
            &format!("{p}/datasets/{{dataset}}/routines/{{routine}}"),
            get(routines::get)
                .delete(routines::delete)
                .put(routines::update),
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
        // Requests beyond this many wait for one to finish, so a flood queues instead of
        // running every query at once.
        .layer(tower::limit::GlobalConcurrencyLimitLayer::new(
            MAX_CONCURRENT_REQUESTS,
        ))
        .layer(axum::middleware::map_response(too_large_as_json))
        .layer(axum::middleware::from_fn_with_state(
            faults.clone(),
            crate::faults::rest_layer,
        ))
        .with_state(state);
    admin_router(faults).merge(api)
}

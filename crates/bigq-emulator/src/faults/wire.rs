//! Where armed faults meet the wire: a middleware on the REST routes, a check before each
//! gRPC call, and the `/emulator/v1/faults` endpoint that arms them over HTTP.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gcloud_sdk::google::rpc::{RetryInfo, Status as RpcStatus};
use gcloud_sdk::prost::Message;
use gcloud_sdk::prost_types::{Any, Duration as ProtoDuration};
use serde_json::{Value, json};
use tonic::{Code, Status};

use super::armed::{FaultError, FaultSpec, Faults};
use crate::error::BqError;

/// How long a client is told to wait before retrying a call an error rate failed.
const RETRY_DELAY_NANOS: i32 = 100_000_000;

/// The REST error an error rate answers with, in BigQuery's shape.
fn rest_error(e: FaultError) -> BqError {
    let (status, reason, what) = match e {
        FaultError::Unavailable => (503, "backendError", "the service is unavailable"),
        FaultError::ResourceExhausted => (429, "rateLimitExceeded", "too many requests"),
    };
    BqError {
        status,
        reason,
        message: format!("bigq-emulator fault: {what} (an armed error rate)"),
        location: None,
    }
}

/// An answer whose body fails before it is sent: the client sees the connection cut.
fn lost(resp: Response) -> Response {
    let (mut parts, _) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let body = futures::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other(
            "bigq-emulator fault: the answer was dropped after the change was applied",
        ))
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// The REST fault middleware: an error rate before serving, then the delay, then a lost
/// answer for a change that succeeded when one is armed.
pub(crate) async fn rest_layer(
    State(faults): State<Arc<Faults>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(e) = faults.draw_error(false) {
        return rest_error(e).into_response();
    }
    let changing = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let resp = next.run(req).await;
    let delay = faults.delay();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if changing && resp.status().is_success() && faults.take_drop() {
        return lost(resp);
    }
    resp
}

/// The gRPC status an error rate answers with, carrying a `google.rpc.RetryInfo` as
/// BigQuery's retryable errors do.
pub(crate) fn grpc_fault(e: FaultError) -> Status {
    let (code, what) = match e {
        FaultError::Unavailable => (Code::Unavailable, "the service is unavailable"),
        FaultError::ResourceExhausted => (Code::ResourceExhausted, "quota exceeded"),
    };
    let message = format!("bigq-emulator fault: {what} (an armed error rate)");
    let retry = RetryInfo {
        retry_delay: Some(ProtoDuration {
            seconds: 0,
            nanos: RETRY_DELAY_NANOS,
        }),
    };
    let details = RpcStatus {
        code: code as i32,
        message: message.clone(),
        details: vec![Any {
            type_url: "type.googleapis.com/google.rpc.RetryInfo".into(),
            value: retry.encode_to_vec(),
        }],
    };
    Status::with_details(code, message, Bytes::from(details.encode_to_vec()))
}

/// Whether a unary gRPC method changes something, so that its answer can be dropped after
/// it ran (`AppendRows` drops per request, in its own loop).
pub(crate) fn grpc_drops(path: &str) -> bool {
    let method = path.rsplit('/').next().unwrap_or("");
    !(method.starts_with("Get")
        || method.starts_with("List")
        || matches!(
            method,
            "ReadRows" | "AppendRows" | "CreateReadSession" | "SplitReadStream"
        ))
}

fn report(faults: &Faults) -> Value {
    json!({
        "armed": faults.armed(),
        "readRowsCut": faults.read_rows_cut(),
        "appendRowsCut": faults.append_rows_cut(),
        "errorsInjected": faults.errors_injected(),
        "responsesDropped": faults.responses_dropped(),
    })
}

async fn get_faults(State(faults): State<Arc<Faults>>) -> Response {
    axum::Json(report(&faults)).into_response()
}

async fn post_faults(State(faults): State<Arc<Faults>>, body: Bytes) -> Response {
    let spec: FaultSpec = match serde_json::from_slice(&body) {
        Ok(s) => s,
        Err(e) => return BqError::invalid(format!("Invalid fault spec: {e}")).into_response(),
    };
    match faults.arm(&spec) {
        Ok(()) => axum::Json(report(&faults)).into_response(),
        Err(e) => BqError::invalid(format!("Invalid fault spec: {e}")).into_response(),
    }
}

async fn delete_faults(State(faults): State<Arc<Faults>>) -> Response {
    faults.clear();
    axum::Json(report(&faults)).into_response()
}

/// `GET` (what is armed, and counters), `POST` (arm a [`FaultSpec`]) and `DELETE` (disarm
/// all) on `/emulator/v1/faults`. Not subject to the faults themselves.
pub(crate) fn admin_router(faults: Arc<Faults>) -> Router {
    Router::new()
        .route(
            "/emulator/v1/faults",
            get(get_faults).post(post_faults).delete(delete_faults),
        )
        .with_state(faults)
}

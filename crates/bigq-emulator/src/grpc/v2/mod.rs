//! The BigQuery v2 API over gRPC: `google.cloud.bigquery.v2.JobService`,
//! `DatasetService` and `TableService`, on the Storage API's port.
//!
//! Each handler turns the request message into a [`crate::api`] call and its answer into
//! the response message; errors become gRPC statuses with BigQuery's message
//! (`invalidQuery` → INVALID_ARGUMENT, `notFound` → NOT_FOUND, `duplicate` →
//! ALREADY_EXISTS, ...).

pub mod convert;
pub mod datasets;
pub mod jobs;
pub mod results;
pub mod tables;

use std::future::Future;
use std::sync::Arc;

use tonic::body::Body;
use tonic::{Request, Response};

use super::service::{BoxFuture, grpc, status};
use crate::error::BqError;
use crate::state::AppState;

/// The v2 services' path prefix.
pub const PREFIX: &str = "/google.cloud.bigquery.v2.";

/// A unary call: decode `Req`, run `f`, encode its answer or its error.
fn unary<Req, Resp, F, Fut>(s: Arc<AppState>, req: http::Request<Body>, f: F) -> BoxFuture
where
    Req: gcloud_sdk::prost::Message + Default + Send + 'static,
    Resp: gcloud_sdk::prost::Message + Send + 'static,
    F: Fn(Arc<AppState>, Req) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Resp, BqError>> + Send + 'static,
{
    Box::pin(async move {
        let svc = tower::service_fn(move |r: Request<Req>| {
            let (s, f) = (s.clone(), f.clone());
            async move {
                f(s, r.into_inner())
                    .await
                    .map(Response::new)
                    .map_err(|e| status(&e))
            }
        });
        Ok(grpc::<Resp, Req>().unary(svc, req).await)
    })
}

/// Serves `method` (`JobService/Query`, ...) if it is a v2 method this emulator knows.
pub fn call(s: Arc<AppState>, method: &str, req: http::Request<Body>) -> Option<BoxFuture> {
    Some(match method {
        "JobService/Query" => unary(s, req, jobs::query),
        "JobService/GetQueryResults" => unary(s, req, jobs::get_query_results),
        "JobService/GetJob" => unary(s, req, jobs::get_job),
        "JobService/InsertJob" => unary(s, req, jobs::insert_job),
        "JobService/CancelJob" => unary(s, req, jobs::cancel_job),
        "JobService/ListJobs" => unary(s, req, jobs::list_jobs),
        "JobService/DeleteJob" => unary(s, req, jobs::delete_job),
        "DatasetService/GetDataset" => unary(s, req, datasets::get),
        "DatasetService/InsertDataset" => unary(s, req, datasets::insert),
        "DatasetService/PatchDataset" => unary(s, req, |s, r| datasets::patch(s, r, false)),
        "DatasetService/UpdateDataset" => unary(s, req, |s, r| datasets::patch(s, r, true)),
        "DatasetService/DeleteDataset" => unary(s, req, datasets::delete),
        "DatasetService/ListDatasets" => unary(s, req, datasets::list),
        "TableService/GetTable" => unary(s, req, tables::get),
        "TableService/InsertTable" => unary(s, req, tables::insert),
        "TableService/PatchTable" => unary(s, req, tables::patch),
        "TableService/UpdateTable" => unary(s, req, tables::patch),
        "TableService/DeleteTable" => unary(s, req, tables::delete),
        "TableService/ListTables" => unary(s, req, tables::list),
        _ => return None,
    })
}

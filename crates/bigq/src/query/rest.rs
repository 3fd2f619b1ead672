//! The query calls' REST bodies (`jobs.query`, `jobs.insert` of a query job) built from a
//! [`QueryRequest`], and their responses decoded into a [`ResultPage`] as they stream in.

use std::time::Duration;

use bigq_codec::json::ResponseDecoder;
use bigq_codec::schema::TableSchema;
use futures::StreamExt;
use serde_json::{Value, json};

use super::request::QueryRequest;
use super::response::{QueryStats, ResultPage};
use crate::client::rest::transport_error;
use crate::error::Result;
use crate::ids::TableId;

/// The `jobs.query` body; the server waits up to `wait` before answering "not complete".
pub(crate) fn query_body(req: &QueryRequest, request_id: &str, wait: Duration) -> Result<Value> {
    let mut body = query_fields(req)?;
    body["requestId"] = request_id.into();
    body["jobCreationMode"] = if req.job_creation_required {
        "JOB_CREATION_REQUIRED"
    } else {
        "JOB_CREATION_OPTIONAL"
    }
    .into();
    body["formatOptions"] = json!({ "useInt64Timestamp": true });
    body["timeoutMs"] = (wait.as_millis() as u64).into();
    if let Some(l) = &req.location {
        body["location"] = l.clone().into();
    }
    if req.dry_run {
        body["dryRun"] = true.into();
    }
    if !req.labels.is_empty() {
        body["labels"] = json!(req.labels);
    }
    if let Some(n) = req.page_size {
        body["maxResults"] = n.into();
    }
    if let Some(ms) = req.job_timeout_ms() {
        body["jobTimeoutMs"] = ms.to_string().into();
    }
    Ok(body)
}

/// The `jobs.insert` body of a query job, writing into `destination` when given; the job
/// id is the caller's, so a retried insert is recognised.
pub(crate) fn job_body(
    req: &QueryRequest,
    job_id: &str,
    destination: Option<&TableId>,
) -> Result<Value> {
    let mut query = query_fields(req)?;
    if let Some(destination) = destination {
        query["destinationTable"] = json!({
            "projectId": destination.project,
            "datasetId": destination.dataset,
            "tableId": destination.table,
        });
    }
    if let Some(w) = req.write_disposition {
        query["writeDisposition"] = w.as_str().into();
    }
    let mut job_reference = json!({ "projectId": req.project, "jobId": job_id });
    if let Some(l) = &req.location {
        job_reference["location"] = l.clone().into();
    }
    let mut body = json!({ "jobReference": job_reference, "configuration": { "query": query } });
    if req.dry_run {
        body["configuration"]["dryRun"] = true.into();
    }
    if !req.labels.is_empty() {
        body["configuration"]["labels"] = json!(req.labels);
    }
    if let Some(ms) = req.job_timeout_ms() {
        body["configuration"]["jobTimeoutMs"] = ms.to_string().into();
    }
    Ok(body)
}

/// The fields `jobs.query` and a query job's configuration share.
fn query_fields(req: &QueryRequest) -> Result<Value> {
    req.check_params()?;
    let mut body = json!({ "query": req.sql, "useLegacySql": false });
    if !req.named.is_empty() {
        body["parameterMode"] = "NAMED".into();
        body["queryParameters"] = req.named.iter().map(|(n, p)| p.to_json(Some(n))).collect();
    } else if !req.positional.is_empty() {
        body["parameterMode"] = "POSITIONAL".into();
        body["queryParameters"] = req.positional.iter().map(|p| p.to_json(None)).collect();
    }
    if let Some(d) = &req.default_dataset {
        body["defaultDataset"] = json!({ "projectId": d.project, "datasetId": d.dataset });
    }
    if let Some(b) = req.maximum_bytes_billed {
        body["maximumBytesBilled"] = b.to_string().into();
    }
    if let Some(c) = req.use_query_cache {
        body["useQueryCache"] = c.into();
    }
    Ok(body)
}

/// Decodes a `jobs.query` / `jobs.getQueryResults` body as it streams in.
pub(crate) async fn read_page(
    resp: reqwest::Response,
    schema: Option<TableSchema>,
) -> Result<ResultPage> {
    let mut decoder = match schema {
        Some(s) => ResponseDecoder::new().with_schema(s)?,
        None => ResponseDecoder::new(),
    };
    let mut body = resp.bytes_stream();
    let mut batches = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(transport_error)?;
        decoder.decode(&chunk)?;
        while let Some(b) = decoder.next_batch() {
            batches.push(b);
        }
    }
    decoder.finish()?;
    while let Some(b) = decoder.next_batch() {
        batches.push(b);
    }
    let arrow_schema = decoder.arrow_schema();
    let stats = QueryStats::from_metadata(decoder.take_metadata())?;
    stats.check_errors()?;
    Ok(ResultPage {
        stats,
        batches,
        arrow_schema,
    })
}

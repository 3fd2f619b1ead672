//! The query calls' REST bodies (`jobs.query`, `jobs.insert` of a query job) built from a
//! [`QueryRequest`], and their responses decoded into a [`ResultPage`] as they stream in.

use std::time::Duration;

use bigq_codec::json::ResponseDecoder;
use bigq_codec::schema::TableSchema;
use futures::StreamExt;
use serde_json::{Map, Value, json};

use super::request::QueryRequest;
use super::response::{QueryStats, ResultPage};
use crate::client::rest::transport_error;
use crate::error::Result;
use crate::ids::TableId;

/// The `jobs.query` body; the server waits up to `wait` before answering "not complete".
pub(crate) fn query_body(req: &QueryRequest, request_id: &str, wait: Duration) -> Result<Value> {
    let mut body = query_fields(req)?;
    body.insert("requestId".into(), request_id.into());
    let mode = if req.job_creation_required {
        "JOB_CREATION_REQUIRED"
    } else {
        "JOB_CREATION_OPTIONAL"
    };
    body.insert("jobCreationMode".into(), mode.into());
    body.insert("formatOptions".into(), json!({ "useInt64Timestamp": true }));
    body.insert("timeoutMs".into(), (wait.as_millis() as u64).into());
    if let Some(l) = &req.location {
        body.insert("location".into(), l.clone().into());
    }
    if req.dry_run {
        body.insert("dryRun".into(), true.into());
    }
    if !req.labels.is_empty() {
        body.insert("labels".into(), json!(req.labels));
    }
    if let Some(n) = req.page_size {
        body.insert("maxResults".into(), n.into());
    }
    if let Some(ms) = req.job_timeout_ms() {
        body.insert("jobTimeoutMs".into(), ms.to_string().into());
    }
    Ok(Value::Object(body))
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
        query.insert(
            "destinationTable".into(),
            json!({
                "projectId": destination.project,
                "datasetId": destination.dataset,
                "tableId": destination.table,
            }),
        );
    }
    if let Some(w) = req.write_disposition {
        query.insert("writeDisposition".into(), w.as_str().into());
    }
    let mut job_reference = Map::new();
    job_reference.insert("projectId".into(), req.project.clone().into());
    job_reference.insert("jobId".into(), job_id.into());
    if let Some(l) = &req.location {
        job_reference.insert("location".into(), l.clone().into());
    }
    let mut configuration = Map::new();
    configuration.insert("query".into(), Value::Object(query));
    if req.dry_run {
        configuration.insert("dryRun".into(), true.into());
    }
    if !req.labels.is_empty() {
        configuration.insert("labels".into(), json!(req.labels));
    }
    if let Some(ms) = req.job_timeout_ms() {
        configuration.insert("jobTimeoutMs".into(), ms.to_string().into());
    }
    Ok(json!({ "jobReference": job_reference, "configuration": configuration }))
}

/// The fields `jobs.query` and a query job's configuration share.
fn query_fields(req: &QueryRequest) -> Result<Map<String, Value>> {
    req.check_params()?;
    let mut body = Map::new();
    body.insert("query".into(), req.sql.clone().into());
    body.insert("useLegacySql".into(), false.into());
    if !req.named.is_empty() {
        body.insert("parameterMode".into(), "NAMED".into());
        let params = req.named.iter().map(|(n, p)| p.to_json(Some(n))).collect();
        body.insert("queryParameters".into(), params);
    } else if !req.positional.is_empty() {
        body.insert("parameterMode".into(), "POSITIONAL".into());
        let params = req.positional.iter().map(|p| p.to_json(None)).collect();
        body.insert("queryParameters".into(), params);
    }
    if let Some(d) = &req.default_dataset {
        body.insert(
            "defaultDataset".into(),
            json!({ "projectId": d.project, "datasetId": d.dataset }),
        );
    }
    if let Some(b) = req.maximum_bytes_billed {
        body.insert("maximumBytesBilled".into(), b.to_string().into());
    }
    if let Some(c) = req.use_query_cache {
        body.insert("useQueryCache".into(), c.into());
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

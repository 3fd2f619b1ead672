//! jobs.query, jobs.getQueryResults, jobs.insert / get / list / cancel / delete.

//!
//! The work is done by [`crate::api::jobs`]; this module reads JSON requests and writes
//! BigQuery's JSON responses.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::fields::{JOB, QUERY_REQUEST};
use super::http::{QueryParams, int_param, ok, parse_checked, raw_json};
use super::tables::{encode_options, page_fields, splice, start_row};
use crate::api::jobs::{
    self as core, InsertCall, InsertOutcome, JobFilter, QueryCall, QueryOutcome,
};
use crate::api::{PageRequest, etag};
use crate::error::BqError;
use crate::jobs::{Job, JobState};
use crate::sql::exec::{Cost, QueryOutput};
use crate::state::AppState;
use bigq_codec::json::encode::EncodeOptions;

fn job_reference(job: &Job) -> Value {
    json!({"projectId": job.project, "jobId": job.job_id, "location": job.location})
}

fn dml_stats(out: &QueryOutput, m: &mut Map<String, Value>) {
    if let Some(d) = out.dml {
        m.insert("numDmlAffectedRows".into(), d.affected().to_string().into());
        m.insert(
            "dmlStats".into(),
            json!({
                "insertedRowCount": d.inserted.to_string(),
                "deletedRowCount": d.deleted.to_string(),
                "updatedRowCount": d.updated.to_string(),
            }),
        );
    }
}

fn schema_json(out: &QueryOutput) -> Value {
    json!({"fields": out.schema})
}

/// The job's times, as every job's statistics start.
fn times(job: &Job, st: &JobState) -> Map<String, Value> {
    let mut s = Map::new();
    s.insert("creationTime".into(), job.creation_time.to_string().into());
    if let Some(t) = st.start_time {
        s.insert("startTime".into(), t.to_string().into());
    }
    if let Some(t) = st.end_time {
        s.insert("endTime".into(), t.to_string().into());
    }
    s
}

/// `statistics` of a load, extract or copy job (`statistics.load`, `.extract`, `.copy`).
fn transfer_statistics(job: &Job, st: &JobState, kind: &str) -> Value {
    let mut s = times(job, st);
    s.insert("totalSlotMs".into(), core::slot_ms(st).to_string().into());
    let t = st.transfer.clone().unwrap_or_default();
    let section = match kind {
        "LOAD" => (
            "load",
            json!({
                "inputFiles": t.input_files.to_string(),
                "inputFileBytes": t.input_file_bytes.to_string(),
                "outputRows": t.output_rows.to_string(),
                "outputBytes": t.output_bytes.to_string(),
                "badRecords": t.bad_records.to_string(),
            }),
        ),
        "EXTRACT" => (
            "extract",
            json!({
                "destinationUriFileCounts": t
                    .destination_uri_file_counts
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>(),
                "inputBytes": t.input_file_bytes.to_string(),
            }),
        ),
        _ => (
            "copy",
            json!({
                "copiedRows": t.output_rows.to_string(),
                "copiedLogicalBytes": t.output_bytes.to_string(),
            }),
        ),
    };
    s.insert(section.0.into(), section.1);
    Value::Object(s)
}

/// `LOAD`, `EXTRACT` or `COPY` for those jobs; None for a query.
fn transfer_kind(job: &Job) -> Option<&str> {
    job.configuration
        .get("jobType")
        .and_then(Value::as_str)
        .filter(|k| *k != "QUERY")
}

fn statistics(job: &Job, st: &JobState) -> Value {
    if let Some(kind) = transfer_kind(job) {
        return transfer_statistics(job, st, kind);
    }
    let none = Cost::default();
    let cost = match &st.result {
        Some(Ok(out)) => &out.cost,
        _ => &none,
    };
    let slot_ms = core::slot_ms(st).to_string();
    let mut q = Map::new();
    q.insert(
        "totalBytesProcessed".into(),
        cost.processed.to_string().into(),
    );
    q.insert("totalBytesBilled".into(), cost.billed.to_string().into());
    q.insert("cacheHit".into(), false.into());
    q.insert("totalSlotMs".into(), slot_ms.clone().into());
    if !cost.tables.is_empty() {
        let tables: Vec<Value> = cost
            .tables
            .iter()
            .map(|t| json!({"projectId": t.project, "datasetId": t.dataset, "tableId": t.table}))
            .collect();
        q.insert("referencedTables".into(), tables.into());
    }
    let mut stype = "SELECT";
    if let Some(Ok(out)) = &st.result {
        stype = out.statement_type;
        if !out.schema.is_empty() {
            q.insert("schema".into(), schema_json(out));
        }
        dml_stats(out, &mut q);
        if let Some(ddl) = &out.ddl {
            q.insert("ddlOperationPerformed".into(), ddl.operation.into());
            if let Some(t) = &ddl.target_table {
                q.insert(
                    "ddlTargetTable".into(),
                    json!({"projectId": t.project, "datasetId": t.dataset, "tableId": t.table}),
                );
            }
            if let Some(r) = &ddl.target_routine {
                q.insert(
                    "ddlTargetRoutine".into(),
                    json!({"projectId": r.project, "datasetId": r.dataset, "routineId": r.table}),
                );
            }
        }
    }
    q.insert("statementType".into(), stype.into());
    let mut s = Map::new();
    s.insert("creationTime".into(), job.creation_time.to_string().into());
    if let Some(t) = st.start_time {
        s.insert("startTime".into(), t.to_string().into());
    }
    if let Some(t) = st.end_time {
        s.insert("endTime".into(), t.to_string().into());
    }
    s.insert(
        "totalBytesProcessed".into(),
        cost.processed.to_string().into(),
    );
    s.insert("totalSlotMs".into(), slot_ms.into());
    s.insert("query".into(), Value::Object(q));
    if let Some(Ok(out)) = &st.result
        && let Some(id) = &out.session_id
    {
        s.insert("sessionInfo".into(), json!({"sessionId": id}));
    }
    Value::Object(s)
}

fn status(st: &JobState) -> Value {
    let mut v = json!({"state": core::state_name(st)});
    let mut errors = Vec::new();
    if let Some(Err(e)) = &st.result {
        v["errorResult"] = e.to_error_proto();
        errors.push(e.to_error_proto());
    }
    // A load's bad records: skipped ones on a job that succeeded, and those that made it
    // give up.
    if let Some(t) = &st.transfer {
        errors.extend(t.errors.iter().cloned());
    }
    if !errors.is_empty() {
        v["errors"] = Value::Array(errors);
    }
    v
}

fn job_resource(s: &AppState, job: &Job) -> Value {
    let st = job.state();
    json!({
        "kind": "bigquery#job",
        "etag": etag(job.creation_time),
        "id": format!("{}:{}.{}", job.project, job.location, job.job_id),
        "selfLink": format!(
            "{}/bigquery/v2/projects/{}/jobs/{}?location={}",
            s.base_url, job.project, job.job_id, job.location
        ),
        "user_email": "emulator@bigq.local",
        "principal_subject": "user:emulator@bigq.local",
        "configuration": job.configuration,
        "jobReference": job_reference(job),
        "statistics": statistics(job, &st),
        "status": status(&st),
        "jobCreationReason": {"code": job.creation_reason},
    })
}

/// Renders a query response (jobs.query or getQueryResults).
#[allow(clippy::too_many_arguments)]
fn query_response(
    kind: &str,
    job_ref: Option<Value>,
    out: &QueryOutput,
    start: usize,
    max_rows: Option<usize>,
    opts: EncodeOptions,
    extra: Map<String, Value>,
) -> String {
    let mut head = Map::new();
    head.insert("kind".into(), kind.into());
    if !out.schema.is_empty() {
        head.insert("schema".into(), schema_json(out));
    }
    if let Some(r) = job_ref {
        head.insert("jobReference".into(), r);
    }
    head.insert(
        "totalBytesProcessed".into(),
        out.cost.processed.to_string().into(),
    );
    head.insert("jobComplete".into(), true.into());
    head.insert("cacheHit".into(), false.into());
    if let Some(id) = &out.session_id {
        head.insert("sessionInfo".into(), json!({"sessionId": id}));
    }
    dml_stats(out, &mut head);
    head.extend(extra);
    let head = Value::Object(head);
    if out.returns_rows {
        let fields = page_fields(
            &out.batches,
            out.total_rows(),
            start,
            max_rows,
            opts,
            "pageToken",
        );
        splice(&head, &fields)
    } else {
        splice(&head, "")
    }
}

/// A number given as a JSON number or string.
fn json_u64(v: Option<&Value>) -> Option<u64> {
    v.and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
}

pub async fn query(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    body: Bytes,
) -> Response {
    let body = match parse_checked(&body, &QUERY_REQUEST, "query_request") {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let call = QueryCall {
        project: project.clone(),
        dry_run: body.get("dryRun").and_then(Value::as_bool).unwrap_or(false),
        max_results: json_u64(body.get("maxResults")).map(|v| v as usize),
        timeout_ms: json_u64(body.get("timeoutMs")),
        job_optional: body.get("jobCreationMode").and_then(Value::as_str)
            == Some("JOB_CREATION_OPTIONAL"),
        request_id: body
            .get("requestId")
            .and_then(Value::as_str)
            .map(str::to_string),
        job_timeout: match core::job_timeout_of(body.get("jobTimeoutMs")) {
            Ok(t) => t,
            Err(e) => return e.into_response(),
        },
        config: body.clone(),
    };
    let opts = EncodeOptions {
        int64_timestamp: body
            .pointer("/formatOptions/useInt64Timestamp")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    };
    let max_rows = call.max_results;
    match core::query(&s, call).await {
        Err(e) => e.into_response(),
        Ok(QueryOutcome::DryRun {
            out,
            created,
            ended,
        }) => {
            let mut extra = Map::new();
            extra.insert(
                "totalBytesBilled".into(),
                out.cost.billed.to_string().into(),
            );
            extra.insert("location".into(), core::LOCATION.into());
            extra.insert("creationTime".into(), created.to_string().into());
            extra.insert("endTime".into(), ended.to_string().into());
            raw_json(
                StatusCode::OK,
                query_response(
                    "bigquery#queryResponse",
                    Some(json!({"projectId": project, "location": core::LOCATION})),
                    &out,
                    0,
                    Some(0),
                    opts,
                    extra,
                ),
            )
        }
        Ok(QueryOutcome::Done {
            job: None,
            out,
            query_id,
            times: (created, started, ended),
        }) => {
            let mut extra = Map::new();
            extra.insert("queryId".into(), query_id.into());
            extra.insert(
                "totalBytesBilled".into(),
                out.cost.billed.to_string().into(),
            );
            extra.insert("location".into(), core::LOCATION.into());
            extra.insert("creationTime".into(), created.to_string().into());
            extra.insert("startTime".into(), started.to_string().into());
            extra.insert("endTime".into(), ended.to_string().into());
            // No job was created: no jobReference.
            let text = query_response(
                "bigquery#queryResponse",
                None,
                &out,
                0,
                max_rows,
                opts,
                extra,
            );
            raw_json(StatusCode::OK, text)
        }
        Ok(QueryOutcome::Done {
            job: Some(job),
            out,
            query_id,
            ..
        }) => respond_query(&job, &out, max_rows, opts, Some(query_id)),
        Ok(QueryOutcome::Pending { job, query_id }) => ok(&json!({
            "kind": "bigquery#queryResponse",
            "jobReference": job_reference(&job),
            "jobComplete": false,
            "queryId": query_id,
            "jobCreationReason": {"code": job.creation_reason},
        })),
    }
}

fn respond_query(
    job: &Job,
    out: &QueryOutput,
    max_rows: Option<usize>,
    opts: EncodeOptions,
    query_id: Option<String>,
) -> Response {
    let st = job.state();
    let mut extra = Map::new();
    if let Some(q) = query_id {
        extra.insert("queryId".into(), q.into());
    }
    extra.insert(
        "jobCreationReason".into(),
        json!({"code": job.creation_reason}),
    );
    extra.insert(
        "totalBytesBilled".into(),
        out.cost.billed.to_string().into(),
    );
    extra.insert("location".into(), job.location.clone().into());
    extra.insert("creationTime".into(), job.creation_time.to_string().into());
    if let Some(t) = st.start_time {
        extra.insert("startTime".into(), t.to_string().into());
    }
    if let Some(t) = st.end_time {
        extra.insert("endTime".into(), t.to_string().into());
    }
    raw_json(
        StatusCode::OK,
        query_response(
            "bigquery#queryResponse",
            Some(job_reference(job)),
            out,
            0,
            max_rows,
            opts,
            extra,
        ),
    )
}

pub async fn get_query_results(
    State(s): State<Arc<AppState>>,
    Path((project, job_id)): Path<(String, String)>,
    Query(q): Query<QueryParams>,
) -> Response {
    let timeout = match int_param(&q, "timeoutMs") {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let start = match start_row(&q) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let max_rows = match int_param(&q, "maxResults") {
        Ok(m) => m.map(|m| m as usize),
        Err(e) => return e.into_response(),
    };
    match core::query_results(&s, &project, &job_id, timeout).await {
        Err(e) => e.into_response(),
        Ok((job, None)) => ok(&json!({
            "kind": "bigquery#getQueryResultsResponse",
            "etag": etag(job.creation_time),
            "jobReference": job_reference(&job),
            "jobComplete": false,
        })),
        Ok((job, Some(out))) => {
            let mut extra = Map::new();
            extra.insert("etag".into(), etag(job.creation_time).into());
            raw_json(
                StatusCode::OK,
                query_response(
                    "bigquery#getQueryResultsResponse",
                    Some(job_reference(&job)),
                    &out,
                    start,
                    max_rows,
                    encode_options(&q),
                    extra,
                ),
            )
        }
    }
}

pub async fn insert(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    body: Bytes,
) -> Response {
    let body = match parse_checked(&body, &JOB, "job") {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let call = InsertCall {
        project: project.clone(),
        job_id: body
            .pointer("/jobReference/jobId")
            .and_then(Value::as_str)
            .map(str::to_string),
        location: body
            .pointer("/jobReference/location")
            .and_then(Value::as_str)
            .map(str::to_string),
        query: body.pointer("/configuration/query").cloned(),
        load: body.pointer("/configuration/load").cloned(),
        copy: body.pointer("/configuration/copy").cloned(),
        dry_run: body
            .pointer("/configuration/dryRun")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        job_timeout: match core::job_timeout_of(body.pointer("/configuration/jobTimeoutMs")) {
            Ok(t) => t,
            Err(e) => return e.into_response(),
        },
    };
    match core::insert(&s, call).await {
        Err(e) => e.into_response(),
        Ok(InsertOutcome::Job(job)) => ok(&job_resource(&s, &job)),
        Ok(InsertOutcome::DryRun {
            configuration,
            out,
            location,
            time,
        }) => {
            let mut v = json!({
                "kind": "bigquery#job",
                "etag": etag(time),
                "id": format!("{project}:{location}."),
                "selfLink": format!("{}/bigquery/v2/projects/{project}/jobs/?location={location}", s.base_url),
                "configuration": configuration,
                "jobReference": {"projectId": project, "location": location},
                "statistics": {
                    "creationTime": time.to_string(),
                    "endTime": time.to_string(),
                    "totalBytesProcessed": out.cost.processed.to_string(),
                    "query": {
                        "totalBytesProcessed": out.cost.processed.to_string(),
                        "totalBytesBilled": "0",
                        "cacheHit": false,
                        "statementType": out.statement_type,
                        "totalBytesProcessedAccuracy": "PRECISE",
                    },
                },
                "status": {"state": "DONE"},
                "user_email": "emulator@bigq.local",
                "principal_subject": "user:emulator@bigq.local",
            });
            if !out.schema.is_empty() {
                v["statistics"]["query"]["schema"] = schema_json(&out);
            }
            ok(&v)
        }
    }
}

pub async fn get(
    State(s): State<Arc<AppState>>,
    Path((project, job_id)): Path<(String, String)>,
) -> Response {
    match core::get(&s, &project, &job_id) {
        Ok(job) => ok(&job_resource(&s, &job)),
        Err(e) => e.into_response(),
    }
}

pub async fn cancel(
    State(s): State<Arc<AppState>>,
    Path((project, job_id)): Path<(String, String)>,
) -> Response {
    match core::cancel(&s, &project, &job_id).await {
        Ok(job) => {
            ok(&json!({"kind": "bigquery#jobCancelResponse", "job": job_resource(&s, &job)}))
        }
        Err(e) => e.into_response(),
    }
}

pub async fn delete(
    State(s): State<Arc<AppState>>,
    Path((project, job_id)): Path<(String, String)>,
) -> Response {
    match core::delete(&s, &project, &job_id) {
        Ok(()) => ok(&json!({})),
        Err(e) => e.into_response(),
    }
}

pub async fn list(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Response {
    // `stateFilter` may repeat; every other parameter is taken once.
    let states: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| k == "stateFilter")
        .flat_map(|(_, f)| f.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let q: QueryParams = pairs.into_iter().collect();
    let max = int_param(&q, "maxResults").ok().flatten().unwrap_or(1000) as usize;
    let page = PageRequest {
        start: q.get("pageToken").and_then(|t| t.parse().ok()).unwrap_or(0),
        max: Some(max),
    };
    if let Some(bad) = states
        .iter()
        .find(|f| !["done", "pending", "running"].contains(&f.to_ascii_lowercase().as_str()))
    {
        return BqError::invalid(format!("Invalid value for stateFilter: {bad}")).into_response();
    }
    // `minimal` (BigQuery's default) leaves the configuration out.
    let full = match q.get("projection").map(|p| p.to_ascii_lowercase()) {
        None => false,
        Some(p) if p == "minimal" => false,
        Some(p) if p == "full" => true,
        Some(p) => {
            return BqError::invalid(format!("Invalid value for projection: {p}")).into_response();
        }
    };
    let filter = JobFilter {
        states,
        min_creation_time: int_param(&q, "minCreationTime")
            .ok()
            .flatten()
            .map(|t| i64::try_from(t).unwrap_or(i64::MAX)),
        max_creation_time: int_param(&q, "maxCreationTime")
            .ok()
            .flatten()
            .map(|t| i64::try_from(t).unwrap_or(i64::MAX)),
        parent_job_id: q.get("parentJobId").filter(|p| !p.is_empty()).cloned(),
    };
    let (jobs, next) = core::list(&s, &project, &filter, page);
    let listed: Vec<Value> = jobs
        .iter()
        .map(|j| {
            let mut r = job_resource(&s, j);
            let st = r["status"]["state"].clone();
            if let Some(m) = r.as_object_mut() {
                m.remove("selfLink");
                m.remove("etag");
                if !full {
                    m.remove("configuration");
                }
                m.insert("state".into(), st);
            }
            r
        })
        .collect();
    let mut v = json!({"kind": "bigquery#jobList", "etag": etag(jobs.len() as i64)});
    if let Some(n) = next {
        v["nextPageToken"] = n.into();
    }
    v["jobs"] = Value::Array(listed);
    ok(&v)
}

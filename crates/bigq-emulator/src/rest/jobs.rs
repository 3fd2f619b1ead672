//! jobs.query, jobs.getQueryResults, jobs.insert / get / list / cancel / delete.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::encode::EncodeOptions;
use super::tables::{encode_options, page_fields, splice, start_row};
use super::{AppState, QueryParams, etag, int_param, ok, parse_body, raw_json};
use crate::catalog::{TableRef, now_millis};
use crate::error::BqError;
use crate::jobs::{Job, JobState};
use crate::sql::engine::{QueryOutput, QueryRequest};
use crate::sql::params::Params;
use crate::sql::rewrite::NameContext;

const LOCATION: &str = "US";

/// Builds the engine request from a query configuration (jobs.query body or
/// `configuration.query` of jobs.insert).
fn query_request(project: &str, cfg: &Value, dry_run: bool) -> Result<QueryRequest, BqError> {
    let sql = cfg
        .get("query")
        .and_then(Value::as_str)
        .ok_or_else(|| BqError::invalid("Required parameter is missing: query"))?;
    if cfg.get("useLegacySql").and_then(Value::as_bool) == Some(true) {
        return Err(BqError::invalid_query(
            "Unsupported by bigq-emulator: legacy SQL (set useLegacySql to false)",
        ));
    }
    let default_dataset = cfg.get("defaultDataset").and_then(|d| {
        let ds = d.get("datasetId")?.as_str()?;
        let p = d
            .get("projectId")
            .and_then(Value::as_str)
            .unwrap_or(project);
        Some((p.to_string(), ds.to_string()))
    });
    Ok(QueryRequest {
        sql: sql.to_string(),
        names: NameContext {
            project: project.to_string(),
            default_dataset,
        },
        params: Params::from_json(cfg.get("queryParameters"))?,
        dry_run,
    })
}

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

fn statistics(job: &Job, st: &JobState) -> Value {
    let mut q = Map::new();
    q.insert("totalBytesProcessed".into(), "0".into());
    q.insert("totalBytesBilled".into(), "0".into());
    q.insert("cacheHit".into(), false.into());
    q.insert("totalSlotMs".into(), "0".into());
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
    s.insert("totalBytesProcessed".into(), "0".into());
    s.insert("query".into(), Value::Object(q));
    Value::Object(s)
}

fn status(st: &JobState) -> Value {
    match &st.result {
        None => json!({"state": if st.start_time.is_some() { "RUNNING" } else { "PENDING" }}),
        Some(Ok(_)) => json!({"state": "DONE"}),
        Some(Err(e)) => json!({
            "state": "DONE",
            "errorResult": e.to_error_proto(),
            "errors": [e.to_error_proto()],
        }),
    }
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

/// The `configuration` BigQuery reports for a query job.
fn configuration(job_project: &str, job_id: &str, cfg: &Value, dry_run: bool) -> Value {
    let mut q = cfg.as_object().cloned().unwrap_or_default();
    let anon = job_id.replace('-', "_");
    q.entry("destinationTable").or_insert_with(|| {
        json!({"projectId": job_project, "datasetId": "_emulator_anonymous", "tableId": format!("anon{anon}")})
    });
    q.entry("writeDisposition")
        .or_insert("WRITE_TRUNCATE".into());
    q.entry("priority").or_insert("INTERACTIVE".into());
    q.entry("useLegacySql").or_insert(false.into());
    for k in [
        "maxResults",
        "timeoutMs",
        "jobCreationMode",
        "formatOptions",
        "kind",
        "requestId",
        "location",
        "dryRun",
        "jobTimeoutMs",
    ] {
        q.remove(k);
    }
    let mut c = json!({"query": q, "jobType": "QUERY"});
    if dry_run {
        c["dryRun"] = true.into();
    }
    c
}

fn new_job_id() -> String {
    format!("job_{}", uuid::Uuid::new_v4().simple())
}

/// Runs a query on its own task, so that a panic inside the engine becomes a 500
/// `internalError` for this query and leaves the server healthy.
async fn run_guarded(s: &Arc<AppState>, req: QueryRequest) -> Result<QueryOutput, BqError> {
    let engine = s.engine.clone();
    match tokio::spawn(async move { engine.execute(&req).await }).await {
        Ok(r) => r,
        Err(e) => Err(BqError::internal(format!(
            "bigq-emulator failed while running the query: {e}"
        ))),
    }
}

/// Where a job writes its result: table, CREATE_NEVER, write disposition.
type Destination = (TableRef, bool, String);

/// The user's `destinationTable` of a query configuration, if any.
fn destination(project: &str, cfg: &Value) -> Option<Destination> {
    let d = cfg.get("destinationTable")?;
    let t = TableRef {
        project: d
            .get("projectId")
            .and_then(Value::as_str)
            .unwrap_or(project)
            .to_string(),
        dataset: d.get("datasetId")?.as_str()?.to_string(),
        table: d.get("tableId")?.as_str()?.to_string(),
    };
    let create_never = cfg.get("createDisposition").and_then(Value::as_str) == Some("CREATE_NEVER");
    let write = cfg
        .get("writeDisposition")
        .and_then(Value::as_str)
        .unwrap_or("WRITE_EMPTY")
        .to_string();
    Some((t, create_never, write))
}

/// Starts a job's execution in the background.
fn spawn(s: &Arc<AppState>, job: Arc<Job>, req: QueryRequest, dest: Option<Destination>) {
    let s = s.clone();
    tokio::spawn(async move {
        job.start();
        if !s.query_delay.is_zero() {
            tokio::time::sleep(s.query_delay).await;
        }
        let mut r = run_guarded(&s, req).await;
        if let (Ok(out), Some((t, never, write))) = (&r, &dest)
            && out.returns_rows
        {
            r = s.engine.write_result(t, out, *never, write);
        }
        job.finish(r.map(Arc::new));
    });
}

fn timeout_of(v: Option<u64>) -> Duration {
    Duration::from_millis(v.unwrap_or(10_000).min(60_000))
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
    head.insert("totalBytesProcessed".into(), "0".into());
    head.insert("jobComplete".into(), true.into());
    head.insert("cacheHit".into(), false.into());
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

/// Whether the first page holds every row.
fn fits_first_page(out: &QueryOutput, max_rows: Option<usize>) -> bool {
    if !out.returns_rows {
        return true;
    }
    let total = out.total_rows();
    if max_rows.is_some_and(|m| m < total) {
        return false;
    }
    let approx: usize = out.batches.iter().map(|b| b.get_array_memory_size()).sum();
    approx < super::tables::PAGE_BYTES / 2
}

pub async fn query(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    body: Bytes,
) -> Response {
    let body = match parse_body(&body) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let dry_run = body.get("dryRun").and_then(Value::as_bool).unwrap_or(false);
    let req = match query_request(&project, &body, dry_run) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let max_rows = body
        .get("maxResults")
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
        .map(|v| v as usize);
    let timeout = timeout_of(
        body.get("timeoutMs")
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok())),
    );
    let opts = EncodeOptions {
        int64_timestamp: body
            .pointer("/formatOptions/useInt64Timestamp")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    };
    let optional =
        body.get("jobCreationMode").and_then(Value::as_str) == Some("JOB_CREATION_OPTIONAL");
    let created = now_millis();

    if dry_run {
        return match run_guarded(&s, req).await {
            Ok(out) => {
                let mut extra = Map::new();
                extra.insert("totalBytesBilled".into(), "0".into());
                extra.insert("location".into(), LOCATION.into());
                extra.insert("creationTime".into(), created.to_string().into());
                extra.insert("endTime".into(), now_millis().to_string().into());
                let mut out = out;
                out.returns_rows = false;
                raw_json(
                    StatusCode::OK,
                    query_response(
                        "bigquery#queryResponse",
                        Some(json!({"projectId": project, "location": LOCATION})),
                        &out,
                        0,
                        Some(0),
                        opts,
                        extra,
                    ),
                )
            }
            Err(e) => e.into_response(),
        };
    }

    let query_id = format!("query_{}", uuid::Uuid::new_v4().simple());
    if optional && s.query_delay.is_zero() {
        // Short query mode: run now; create a job only when the result needs one.
        let started = now_millis();
        let out = match run_guarded(&s, req).await {
            Ok(o) => o,
            Err(e) => return e.into_response(),
        };
        if fits_first_page(&out, max_rows) {
            let mut extra = Map::new();
            extra.insert("queryId".into(), query_id.into());
            extra.insert("totalBytesBilled".into(), "0".into());
            extra.insert("location".into(), LOCATION.into());
            extra.insert("creationTime".into(), created.to_string().into());
            extra.insert("startTime".into(), started.to_string().into());
            extra.insert("endTime".into(), now_millis().to_string().into());
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
            return raw_json(StatusCode::OK, text);
        }
        let job_id = new_job_id();
        let cfg = configuration(&project, &job_id, &body, false);
        let job = match s
            .jobs
            .create(&project, &job_id, LOCATION, cfg, "LARGE_RESULTS")
        {
            Ok(j) => j,
            Err(e) => return e.into_response(),
        };
        job.start();
        let out = Arc::new(out);
        job.finish(Ok(out.clone()));
        return respond_query(&job, &out, max_rows, opts, Some(query_id));
    }

    let job_id = body
        .pointer("/requestId")
        .and_then(Value::as_str)
        .map(|_| new_job_id())
        .unwrap_or_else(new_job_id);
    let cfg = configuration(&project, &job_id, &body, false);
    let job = match s.jobs.create(&project, &job_id, LOCATION, cfg, "REQUESTED") {
        Ok(j) => j,
        Err(e) => return e.into_response(),
    };
    spawn(&s, job.clone(), req, None);
    if !job.wait(timeout).await {
        let v = json!({
            "kind": "bigquery#queryResponse",
            "jobReference": job_reference(&job),
            "jobComplete": false,
            "queryId": query_id,
            "jobCreationReason": {"code": "REQUESTED"},
        });
        return ok(&v);
    }
    match job.state().result {
        Some(Ok(out)) => respond_query(&job, &out, max_rows, opts, Some(query_id)),
        Some(Err(e)) => e.into_response(),
        None => BqError::internal("job finished without a result").into_response(),
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
    extra.insert("totalBytesBilled".into(), "0".into());
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
    let job = match s.jobs.get(&project, &job_id) {
        Ok(j) => j,
        Err(e) => return e.into_response(),
    };
    let timeout = match int_param(&q, "timeoutMs") {
        Ok(t) => timeout_of(t),
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
    if !job.wait(timeout).await {
        return ok(&json!({
            "kind": "bigquery#getQueryResultsResponse",
            "etag": etag(job.creation_time),
            "jobReference": job_reference(&job),
            "jobComplete": false,
        }));
    }
    match job.state().result {
        Some(Ok(out)) => {
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
        Some(Err(e)) => e.into_response(),
        None => BqError::internal("job finished without a result").into_response(),
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
    let Some(qcfg) = body.pointer("/configuration/query") else {
        return BqError::invalid(
            "Unsupported by bigq-emulator: only query jobs (configuration.query)",
        )
        .into_response();
    };
    let dry_run = body
        .pointer("/configuration/dryRun")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let job_id = body
        .pointer("/jobReference/jobId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(new_job_id);
    let location = body
        .pointer("/jobReference/location")
        .and_then(Value::as_str)
        .unwrap_or(LOCATION)
        .to_string();
    let dest = destination(&project, qcfg);
    let cfg = configuration(&project, &job_id, qcfg, dry_run);
    let req = match query_request(&project, qcfg, dry_run) {
        Ok(r) => r,
        Err(e) => {
            // BigQuery creates the job and fails it.
            let job = match s
                .jobs
                .create(&project, &job_id, &location, cfg, "REQUESTED")
            {
                Ok(j) => j,
                Err(e) => return e.into_response(),
            };
            job.finish(Err(e));
            return ok(&job_resource(&s, &job));
        }
    };
    if dry_run {
        return match run_guarded(&s, req).await {
            Ok(out) => {
                let now = now_millis();
                let mut v = json!({
                    "kind": "bigquery#job",
                    "etag": etag(now),
                    "id": format!("{project}:{location}."),
                    "selfLink": format!("{}/bigquery/v2/projects/{project}/jobs/?location={location}", s.base_url),
                    "configuration": cfg,
                    "jobReference": {"projectId": project, "location": location},
                    "statistics": {
                        "creationTime": now.to_string(),
                        "endTime": now.to_string(),
                        "totalBytesProcessed": "0",
                        "query": {
                            "totalBytesProcessed": "0",
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
            Err(e) => e.into_response(),
        };
    }
    let job = match s
        .jobs
        .create(&project, &job_id, &location, cfg, "REQUESTED")
    {
        Ok(j) => j,
        Err(e) => return e.into_response(),
    };
    spawn(&s, job.clone(), req, dest);
    // Answer as BigQuery does for quick queries: usually already done.
    job.wait(Duration::from_millis(if s.query_delay.is_zero() {
        10_000
    } else {
        0
    }))
    .await;
    ok(&job_resource(&s, &job))
}

pub async fn get(
    State(s): State<Arc<AppState>>,
    Path((project, job_id)): Path<(String, String)>,
) -> Response {
    match s.jobs.get(&project, &job_id) {
        Ok(job) => ok(&job_resource(&s, &job)),
        Err(e) => e.into_response(),
    }
}

pub async fn cancel(
    State(s): State<Arc<AppState>>,
    Path((project, job_id)): Path<(String, String)>,
) -> Response {
    match s.jobs.get(&project, &job_id) {
        Ok(job) => {
            job.finish(Err(BqError {
                status: 400,
                reason: "stopped",
                message: "Job execution was cancelled: User requested cancellation".into(),
                location: None,
            }));
            ok(&json!({"kind": "bigquery#jobCancelResponse", "job": job_resource(&s, &job)}))
        }
        Err(e) => e.into_response(),
    }
}

pub async fn delete(
    State(s): State<Arc<AppState>>,
    Path((project, job_id)): Path<(String, String)>,
) -> Response {
    match s.jobs.delete(&project, &job_id) {
        Ok(()) => ok(&json!({})),
        Err(e) => e.into_response(),
    }
}

pub async fn list(
    State(s): State<Arc<AppState>>,
    Path(project): Path<String>,
    Query(q): Query<QueryParams>,
) -> Response {
    let max = int_param(&q, "maxResults").ok().flatten().unwrap_or(1000) as usize;
    let start: usize = q.get("pageToken").and_then(|t| t.parse().ok()).unwrap_or(0);
    let filter: Vec<String> = q
        .get("stateFilter")
        .map(|f| {
            f.split(',')
                .map(|s| s.trim().to_ascii_uppercase())
                .collect()
        })
        .unwrap_or_default();
    let jobs: Vec<Arc<Job>> = s
        .jobs
        .list(&project)
        .into_iter()
        .filter(|j| {
            if filter.is_empty() {
                return true;
            }
            let st = job_state_name(&j.state());
            filter.iter().any(|f| f == st)
        })
        .collect();
    let page: Vec<Value> = jobs
        .iter()
        .skip(start)
        .take(max)
        .map(|j| {
            let mut r = job_resource(&s, j);
            let st = r["status"]["state"].clone();
            if let Some(m) = r.as_object_mut() {
                m.remove("selfLink");
                m.remove("etag");
                m.insert("state".into(), st);
            }
            r
        })
        .collect();
    let mut v = json!({"kind": "bigquery#jobList", "etag": etag(jobs.len() as i64)});
    if start + page.len() < jobs.len() {
        v["nextPageToken"] = (start + page.len()).to_string().into();
    }
    v["jobs"] = Value::Array(page);
    ok(&v)
}

fn job_state_name(st: &JobState) -> &'static str {
    match (&st.result, st.start_time) {
        (Some(_), _) => "DONE",
        (None, Some(_)) => "RUNNING",
        (None, None) => "PENDING",
    }
}

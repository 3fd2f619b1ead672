//! Query jobs: `jobs.query` (with short query mode), `jobs.getQueryResults`,
//! `jobs.insert` for query jobs, and get / cancel / delete / list.
//!
//! A query's configuration travels as BigQuery's JSON form of `JobConfigurationQuery`
//! (`{"query": .., "defaultDataset": .., "queryParameters": [..], ..}`): it is what a job
//! reports back as its `configuration`, so both wires hand it in that form.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::PageRequest;
use crate::catalog::{CommitGate, gated, gated_sync};
use crate::catalog::{TableRef, now_millis};
use crate::copy::{self, CopyOptions};
use crate::error::BqError;
use crate::jobs::{Job, JobGate, JobState, RequestAnswer, TransferStats};
use crate::load::{self, options::LoadOptions};
use crate::sql::exec::{QueryOutput, QueryRequest};
use crate::sql::names::{NameContext, TempScope};
use crate::sql::params::Params;
use crate::sql::parse::parse;
use crate::state::AppState;

/// The location every job runs in.
pub const LOCATION: &str = "US";

/// The most bytes of rows one page carries, as BigQuery's 10 MB cap.
pub const PAGE_BYTES: usize = 10 * 1024 * 1024;

/// A `jobs.query` call.
#[derive(Clone, Debug)]
pub struct QueryCall {
    /// The project the query runs in.
    pub project: String,
    /// The query configuration (`query`, `defaultDataset`, `queryParameters`,
    /// `useLegacySql`, ...), in BigQuery's JSON form.
    pub config: Value,
    /// `dryRun`.
    pub dry_run: bool,
    /// `maxResults` for the first page.
    pub max_results: Option<usize>,
    /// `timeoutMs` (None: BigQuery's 10 s).
    pub timeout_ms: Option<u64>,
    /// `jobCreationMode` is `JOB_CREATION_OPTIONAL`.
    pub job_optional: bool,
    /// `requestId`: a repeat of a request that made a job answers with that job (job.proto:
    /// the same query, parameters and settings; `timeoutMs` and the like aside).
    pub request_id: Option<String>,
    /// `jobTimeoutMs`: how long the job may run before it is stopped (and its change
    /// undone); distinct from `timeout_ms`, which is only how long this call waits.
    pub job_timeout: Option<Duration>,
}

/// What `jobs.query` answers.
#[derive(Debug)]
pub enum QueryOutcome {
    /// A dry run: the statement's schema and type, no rows, no job.
    DryRun {
        /// The validated statement (no rows).
        out: Box<QueryOutput>,
        /// When the request came in, ms.
        created: i64,
        /// When the check finished, ms.
        ended: i64,
    },
    /// The query finished within the timeout.
    Done {
        /// The job, or None when short query mode answered without one.
        job: Option<Arc<Job>>,
        /// The result.
        out: Arc<QueryOutput>,
        /// `queryId`.
        query_id: String,
        /// Creation / start / end times, ms, for a query without a job.
        times: (i64, i64, i64),
    },
    /// The job still runs: the caller polls `getQueryResults`.
    Pending {
        /// The job.
        job: Arc<Job>,
        /// `queryId`.
        query_id: String,
    },
}

/// Builds the engine request from a query configuration.
/// The session a query configuration names (`connectionProperties` `session_id`) or asks
/// for (`createSession`): its id and temporary-table scope. An id the emulator did not
/// give out is BigQuery's `invalid` error.
fn session(
    s: &AppState,
    project: &str,
    cfg: &Value,
) -> Result<Option<(String, TempScope)>, BqError> {
    let named = cfg
        .get("connectionProperties")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("key").and_then(Value::as_str) == Some("session_id"))
        .and_then(|p| p.get("value").and_then(Value::as_str));
    let create = cfg.get("createSession").and_then(Value::as_bool) == Some(true);
    if named.is_none() && !create {
        // Most queries: no session, and no lock taken.
        return Ok(None);
    }
    let mut sessions = s.sessions.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(id) = named {
        return match sessions.get(id) {
            Some(scope) if scope.project == project => Ok(Some((id.to_string(), scope.clone()))),
            _ => Err(BqError::invalid("Invalid input session id.")),
        };
    }
    let id = format!("bigq_session_{}", uuid::Uuid::new_v4().simple());
    let scope = TempScope::new(project);
    sessions.insert(id.clone(), scope.clone());
    Ok(Some((id, scope)))
}

fn engine_request(
    s: &AppState,
    project: &str,
    cfg: &Value,
    dry_run: bool,
) -> Result<QueryRequest, BqError> {
    let sql = cfg
        .get("query")
        .and_then(Value::as_str)
        .filter(|q| !q.is_empty())
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
            .filter(|p| !p.is_empty())
            .unwrap_or(project);
        Some((p.to_string(), ds.to_string()))
    });
    Ok(QueryRequest {
        sql: sql.to_string(),
        names: NameContext {
            project: project.to_string(),
            default_dataset,
            temp: None,
            vars: Default::default(),
            ..Default::default()
        },
        params: Params::from_json(cfg.get("queryParameters"))?,
        dry_run,
        session_id: None,
        maximum_bytes_billed: cfg
            .get("maximumBytesBilled")
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok())),
    })
    .and_then(|mut req| {
        if let Some((id, scope)) = session(s, project, cfg)? {
            req.names.vars = scope.vars.clone();
            req.names.routines = scope.routines.clone();
            req.names.transaction = scope.transaction.clone();
            req.names.temp = Some(scope);
            req.session_id = Some(id);
        }
        Ok(req)
    })
}

/// Request fields that are not part of a job's query configuration.
const NOT_CONFIGURATION: [&str; 9] = [
    "maxResults",
    "timeoutMs",
    "jobCreationMode",
    "formatOptions",
    "kind",
    "requestId",
    "location",
    "dryRun",
    "jobTimeoutMs",
];

/// What makes two requests with one `requestId` duplicates: the query configuration,
/// without the paging, waiting and format settings.
fn request_key(cfg: &Value) -> Value {
    let mut q = cfg.as_object().cloned().unwrap_or_default();
    for k in NOT_CONFIGURATION {
        q.remove(k);
    }
    Value::Object(q)
}

/// The `configuration` BigQuery reports for a query job.
fn configuration(
    job_project: &str,
    job_id: &str,
    cfg: &Value,
    dry_run: bool,
    job_timeout: Option<Duration>,
) -> Value {
    let mut q = cfg.as_object().cloned().unwrap_or_default();
    let anon = job_id.replace('-', "_");
    q.entry("destinationTable").or_insert_with(|| {
        json!({"projectId": job_project, "datasetId": "_emulator_anonymous", "tableId": format!("anon{anon}")})
    });
    q.entry("writeDisposition")
        .or_insert("WRITE_TRUNCATE".into());
    q.entry("priority").or_insert("INTERACTIVE".into());
    q.entry("useLegacySql").or_insert(false.into());
    for k in NOT_CONFIGURATION {
        q.remove(k);
    }
    let mut c = json!({"query": q, "jobType": "QUERY"});
    if dry_run {
        c["dryRun"] = true.into();
    }
    if let Some(t) = job_timeout {
        c["jobTimeoutMs"] = t.as_millis().to_string().into();
    }
    c
}

/// A new job id.
pub fn new_job_id() -> String {
    format!("job_{}", uuid::Uuid::new_v4().simple())
}

/// Runs a query on its own task, so that a panic inside the engine becomes a 500
/// `internalError` for this query and leaves the server healthy. For a job, every commit
/// the query makes asks the job's gate first, and a job stopped (cancelled, timed out)
/// while it runs has its query dropped at the next await: the statements after it do not
/// run.
async fn run_guarded(
    s: &Arc<AppState>,
    req: QueryRequest,
    job: Option<(Arc<Job>, Arc<dyn CommitGate>)>,
) -> Result<QueryOutput, BqError> {
    let engine = s.engine.clone();
    let Some((job, gate)) = job else {
        return joined(tokio::spawn(async move { engine.execute(&req).await }).await);
    };
    let mut task = tokio::spawn(gated(gate, async move { engine.execute(&req).await }));
    tokio::select! {
        r = &mut task => joined(r),
        () = job.stopped() => {
            task.abort();
            Err(BqError::internal("the job was stopped"))
        }
    }
}

fn joined(
    r: Result<Result<QueryOutput, BqError>, tokio::task::JoinError>,
) -> Result<QueryOutput, BqError> {
    match r {
        Ok(r) => r,
        Err(e) => Err(BqError::internal(format!(
            "bigq-emulator failed while running the query: {e}"
        ))),
    }
}

/// Where a job writes its result: table, CREATE_NEVER, write disposition, and the columns
/// its clustering and time partitioning name.
struct Destination {
    table: TableRef,
    create_never: bool,
    write: String,
    clustering: Vec<String>,
    partitioning: Option<String>,
    /// `schemaUpdateOptions`.
    schema_update: Vec<String>,
}

impl Destination {
    /// BigQuery's error for clustering or partitioning on a column the result lacks.
    fn check_fields(&self, out: &QueryOutput) -> Result<(), BqError> {
        if !self.schema_update.is_empty()
            && self.write != "WRITE_APPEND"
            && !(self.write == "WRITE_TRUNCATE" && self.table.table.contains('$'))
        {
            return Err(BqError::invalid(
                "Schema update options should only be specified with WRITE_APPEND disposition, or with WRITE_TRUNCATE disposition on a table partition.",
            ));
        }
        let has = |name: &str| out.schema.iter().any(|f| f.name.eq_ignore_ascii_case(name));
        if let Some(missing) = self.clustering.iter().find(|c| !has(c)) {
            return Err(BqError::invalid(format!(
                "The field specified for clustering cannot be found in the schema. Invalid field: {missing}"
            )));
        }
        if self.partitioning.as_deref().is_some_and(|p| !has(p)) {
            return Err(BqError::invalid(
                "The field specified for partitioning cannot be found in the schema.",
            ));
        }
        Ok(())
    }
}

/// The strings of the array at `pointer` in `cfg` (none when it is absent).
fn strings_at(cfg: &Value, pointer: &str) -> Vec<String> {
    cfg.pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The user's `destinationTable` of a query configuration, if any.
fn destination(project: &str, cfg: &Value) -> Option<Destination> {
    let d = cfg.get("destinationTable")?;
    let table = TableRef {
        project: d
            .get("projectId")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or(project)
            .to_string(),
        dataset: d.get("datasetId")?.as_str()?.to_string(),
        table: d.get("tableId")?.as_str()?.to_string(),
    };
    let create_never = cfg.get("createDisposition").and_then(Value::as_str) == Some("CREATE_NEVER");
    let write = cfg
        .get("writeDisposition")
        .and_then(Value::as_str)
        .filter(|w| !w.is_empty())
        .unwrap_or("WRITE_EMPTY")
        .to_string();
    let clustering = strings_at(cfg, "/clustering/fields");
    let partitioning = ["/timePartitioning/field", "/rangePartitioning/field"]
        .iter()
        .find_map(|p| cfg.pointer(p).and_then(Value::as_str))
        .map(str::to_string);
    let schema_update = strings_at(cfg, "/schemaUpdateOptions");
    Some(Destination {
        table,
        create_never,
        write,
        clustering,
        partitioning,
        schema_update,
    })
}

/// Starts a job's execution in the background. Its commits go through the job's gate, so
/// a cancel or `job_timeout` that comes first leaves the catalog as it was.
fn spawn(
    s: &Arc<AppState>,
    job: Arc<Job>,
    req: QueryRequest,
    dest: Option<Destination>,
    job_timeout: Option<Duration>,
) {
    let script = parse(&req.sql).is_ok_and(|stmts| stmts.len() > 1);
    let gate: Arc<dyn CommitGate> = Arc::new(JobGate {
        job: job.clone(),
        script,
    });
    if let Some(limit) = job_timeout {
        let job = job.clone();
        let stop_at = limit.max(s.job_timeout_floor);
        tokio::spawn(async move {
            if !job.wait(stop_at).await {
                job.stop(timed_out(limit));
            }
        });
    }
    let s = s.clone();
    tokio::spawn(async move {
        job.start();
        if !s.query_delay.is_zero() && job.wait(s.query_delay).await {
            // Stopped while it waited: nothing runs.
            return;
        }
        let mut r = run_guarded(&s, req, Some((job.clone(), gate.clone()))).await;
        if let (Ok(out), Some(d)) = (&r, &dest)
            && out.returns_rows
        {
            r = d.check_fields(out).and_then(|()| {
                let add = d.schema_update.iter().any(|o| o == "ALLOW_FIELD_ADDITION");
                gated_sync(gate, || {
                    s.engine
                        .write_result(&d.table, out, d.create_never, &d.write, add)
                })
            });
        }
        job.finish(r.map(Arc::new));
        s.trim_results();
    });
}

/// BigQuery's error for a job stopped by its `jobTimeoutMs`.
fn timed_out(limit: Duration) -> BqError {
    let ms = limit.as_millis();
    let secs = if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{:.3}", limit.as_secs_f64())
    };
    BqError {
        status: 400,
        reason: "timeout",
        message: format!("Job timed out after {secs} sec(s)."),
        location: None,
    }
}

/// `jobTimeoutMs` (an int64 as a JSON string or number); 0 or absent is no limit.
pub fn job_timeout_of(v: Option<&Value>) -> Result<Option<Duration>, BqError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let ms = match v {
        Value::String(t) => t.parse::<i64>().ok(),
        other => other.as_i64(),
    }
    .filter(|ms| *ms >= 0)
    .ok_or_else(|| BqError::invalid(format!("Invalid value for jobTimeoutMs: {v}")))?;
    Ok((ms > 0).then(|| Duration::from_millis(ms as u64)))
}

/// `timeoutMs` as a wait: 10 s unless given, at most 60 s.
pub fn timeout_of(v: Option<u64>) -> Duration {
    Duration::from_millis(v.unwrap_or(10_000).min(60_000))
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
    let approx: usize = crate::memory::batches_bytes(&out.batches);
    approx < PAGE_BYTES / 2
}

/// `jobs.query`.
pub async fn query(s: &Arc<AppState>, call: QueryCall) -> Result<QueryOutcome, BqError> {
    let project = &call.project;
    let req = engine_request(s, project, &call.config, call.dry_run)?;
    let created = now_millis();
    if call.dry_run {
        let mut out = run_guarded(s, req, None).await?;
        out.returns_rows = false;
        return Ok(QueryOutcome::DryRun {
            out: Box::new(out),
            created,
            ended: now_millis(),
        });
    }
    let query_id = format!("query_{}", uuid::Uuid::new_v4().simple());
    let request_id = call.request_id.as_deref().filter(|r| !r.is_empty());
    let key = request_key(&call.config);
    match request_id.and_then(|r| s.jobs.by_request(project, r, &key)) {
        Some(RequestAnswer::Job(job)) => return answer(job, query_id, call.timeout_ms).await,
        Some(RequestAnswer::Jobless(out, times)) => {
            return Ok(QueryOutcome::Done {
                job: None,
                out,
                query_id,
                times,
            });
        }
        None => {}
    }
    // A job timeout needs a job to stop; BigQuery may always choose to create one.
    if call.job_optional && s.query_delay.is_zero() && call.job_timeout.is_none() {
        // Short query mode: run now; create a job only when the result needs one.
        let started = now_millis();
        let out = run_guarded(s, req, None).await?;
        if fits_first_page(&out, call.max_results) {
            let out = Arc::new(out);
            let times = (created, started, now_millis());
            // job.proto: read-only queries may ignore the request id; a statement that
            // changed something is remembered so that a retry does not run it again.
            if let Some(r) = request_id.filter(|_| !out.returns_rows) {
                let a = RequestAnswer::Jobless(out.clone(), times);
                s.jobs.remember_request(project, r, &key, a);
            }
            return Ok(QueryOutcome::Done {
                job: None,
                out,
                query_id,
                times,
            });
        }
        let job_id = new_job_id();
        let cfg = configuration(project, &job_id, &call.config, false, None);
        let job = s
            .jobs
            .create(project, &job_id, LOCATION, cfg, "LARGE_RESULTS")?;
        if let Some(r) = request_id {
            s.jobs
                .remember_request(project, r, &key, RequestAnswer::Job(job.clone()));
        }
        job.start();
        let out = Arc::new(out);
        job.finish(Ok(out.clone()));
        s.trim_results();
        let times = job_times(&job);
        return Ok(QueryOutcome::Done {
            job: Some(job),
            out,
            query_id,
            times,
        });
    }
    let job_id = new_job_id();
    let cfg = configuration(project, &job_id, &call.config, false, call.job_timeout);
    let job = s
        .jobs
        .create(project, &job_id, LOCATION, cfg, "REQUESTED")?;
    if let Some(r) = request_id {
        s.jobs
            .remember_request(project, r, &key, RequestAnswer::Job(job.clone()));
    }
    spawn(s, job.clone(), req, None, call.job_timeout);
    answer(job, query_id, call.timeout_ms).await
}

/// A query's answer from its job: the result once done within the timeout, else pending.
async fn answer(
    job: Arc<Job>,
    query_id: String,
    timeout_ms: Option<u64>,
) -> Result<QueryOutcome, BqError> {
    if !job.wait(timeout_of(timeout_ms)).await {
        return Ok(QueryOutcome::Pending { job, query_id });
    }
    let out = finished(&job)?;
    let times = job_times(&job);
    Ok(QueryOutcome::Done {
        job: Some(job),
        out,
        query_id,
        times,
    })
}

/// A job's creation, start and end times, ms (0 when not yet).
pub fn job_times(job: &Job) -> (i64, i64, i64) {
    let st = job.state();
    (
        job.creation_time,
        st.start_time.unwrap_or(0),
        st.end_time.unwrap_or(0),
    )
}

/// The result of a finished job; its error when it failed.
fn finished(job: &Job) -> Result<Arc<QueryOutput>, BqError> {
    let st = job.state();
    if st.expired {
        return Err(job.expired_error());
    }
    match st.result {
        Some(Ok(out)) => Ok(out),
        Some(Err(e)) => Err(e),
        None => Err(BqError::internal("job finished without a result")),
    }
}

/// `jobs.getQueryResults`: the job, and its result once done (None while it runs after
/// waiting up to `timeout_ms`). A failed job answers with its error.
pub async fn query_results(
    s: &Arc<AppState>,
    project: &str,
    job_id: &str,
    timeout_ms: Option<u64>,
) -> Result<(Arc<Job>, Option<Arc<QueryOutput>>), BqError> {
    let job = s.jobs.get(project, job_id)?;
    if !job.wait(timeout_of(timeout_ms)).await {
        return Ok((job, None));
    }
    let out = finished(&job)?;
    Ok((job, Some(out)))
}

/// A `jobs.insert` call for a query job.
#[derive(Clone, Debug)]
pub struct InsertCall {
    /// The project.
    pub project: String,
    /// `jobReference.jobId` (None: a generated id).
    pub job_id: Option<String>,
    /// `jobReference.location` (None: US).
    pub location: Option<String>,
    /// `configuration.query`, in BigQuery's JSON form; None when the job is not a query.
    pub query: Option<Value>,
    /// `configuration.load`, in BigQuery's JSON form; None when the job is not a load.
    pub load: Option<Value>,
    /// `configuration.copy`, in BigQuery's JSON form; None when the job is not a copy.
    pub copy: Option<Value>,
    /// `configuration.dryRun`.
    pub dry_run: bool,
    /// `configuration.jobTimeoutMs`.
    pub job_timeout: Option<Duration>,
}

/// What `jobs.insert` answers.
#[derive(Debug)]
pub enum InsertOutcome {
    /// A dry run: no job was created.
    DryRun {
        /// The configuration as reported.
        configuration: Value,
        /// The validated statement.
        out: Box<QueryOutput>,
        /// The location.
        location: String,
        /// When, ms.
        time: i64,
    },
    /// The job (done, or still running when the emulator delays queries).
    Job(Arc<Job>),
}

/// The job id and location of a `jobs.insert` call (generated and US when not given).
fn id_and_location(call: &InsertCall) -> (String, String) {
    let job_id = call
        .job_id
        .clone()
        .filter(|j| !j.is_empty())
        .unwrap_or_else(new_job_id);
    let location = call
        .location
        .clone()
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| LOCATION.to_string());
    (job_id, location)
}

/// Runs a load, extract or copy job's work on a blocking thread (it reads and writes
/// files), its commit through the job's gate; records what it moved and finishes the job.
fn spawn_transfer(
    s: &Arc<AppState>,
    job: Arc<Job>,
    work: impl FnOnce(&AppState, &mut TransferStats) -> Result<(), BqError> + Send + 'static,
) {
    let s = s.clone();
    let gate: Arc<dyn CommitGate> = Arc::new(JobGate {
        job: job.clone(),
        script: false,
    });
    tokio::task::spawn_blocking(move || {
        job.start();
        let mut stats = TransferStats::default();
        let r = gated_sync(gate, || work(&s, &mut stats));
        job.set_transfer(stats);
        job.finish(r.map(|()| Arc::new(QueryOutput::empty(job_statement(&job)))));
    });
}

/// The statement type a job's empty result carries.
fn job_statement(job: &Job) -> &'static str {
    match job.configuration.get("jobType").and_then(Value::as_str) {
        Some("LOAD") => "LOAD",
        Some("EXTRACT") => "EXTRACT",
        Some("COPY") => "COPY",
        _ => "SELECT",
    }
}

/// `jobs.insert` for a load or copy job (`kind`, as its dry-run refusal names it) whose
/// configuration is `configuration` and whose work is `work`: the job, usually done by the
/// time it answers.
async fn insert_transfer(
    s: &Arc<AppState>,
    call: &InsertCall,
    kind: &str,
    configuration: Value,
    work: impl FnOnce(&AppState, &mut TransferStats) -> Result<(), BqError> + Send + 'static,
) -> Result<InsertOutcome, BqError> {
    if call.dry_run {
        return Err(BqError::invalid(format!(
            "Unsupported by bigq-emulator: dryRun for {kind} jobs"
        )));
    }
    let (job_id, location) = id_and_location(call);
    let job = s.jobs.create(
        &call.project,
        &job_id,
        &location,
        configuration,
        "REQUESTED",
    )?;
    spawn_transfer(s, job.clone(), work);
    job.wait(Duration::from_secs(10)).await;
    Ok(InsertOutcome::Job(job))
}

/// `jobs.insert`: query, load and copy jobs.
pub async fn insert(s: &Arc<AppState>, call: InsertCall) -> Result<InsertOutcome, BqError> {
    if let Some(lcfg) = &call.load {
        let opts = LoadOptions::parse(&call.project, lcfg)?;
        let configuration = load::options::configuration(lcfg);
        return insert_transfer(s, &call, "load", configuration, move |s, stats| {
            let sources = load::read_sources(&s.gcs, &opts.source_uris)?;
            load::run(&s.catalog, &opts, &sources, stats)
        })
        .await;
    }
    if let Some(ccfg) = &call.copy {
        let opts = CopyOptions::parse(&call.project, ccfg)?;
        let configuration = copy::configuration(ccfg);
        return insert_transfer(s, &call, "copy", configuration, move |s, stats| {
            copy::run(&s.catalog, &opts, stats)
        })
        .await;
    }
    let Some(qcfg) = &call.query else {
        return Err(BqError::invalid(
            "Unsupported by bigq-emulator: this job type (configuration.query, .load and .copy only)",
        ));
    };
    let project = &call.project;
    let (job_id, location) = id_and_location(&call);
    let dest = destination(project, qcfg);
    let cfg = configuration(project, &job_id, qcfg, call.dry_run, call.job_timeout);
    let req = match engine_request(s, project, qcfg, call.dry_run) {
        Ok(r) => r,
        Err(e) => {
            // BigQuery creates the job and fails it.
            let job = s
                .jobs
                .create(project, &job_id, &location, cfg, "REQUESTED")?;
            job.finish(Err(e));
            return Ok(InsertOutcome::Job(job));
        }
    };
    if call.dry_run {
        let out = Box::new(run_guarded(s, req, None).await?);
        return Ok(InsertOutcome::DryRun {
            configuration: cfg,
            out,
            location,
            time: now_millis(),
        });
    }
    let job = s
        .jobs
        .create(project, &job_id, &location, cfg, "REQUESTED")?;
    spawn(s, job.clone(), req, dest, call.job_timeout);
    // Answer as BigQuery does for quick queries: usually already done.
    job.wait(Duration::from_millis(if s.query_delay.is_zero() {
        10_000
    } else {
        0
    }))
    .await;
    Ok(InsertOutcome::Job(job))
}

/// `jobs.get`.
pub fn get(s: &AppState, project: &str, job_id: &str) -> Result<Arc<Job>, BqError> {
    s.jobs.get(project, job_id)
}

/// `jobs.cancel`: the job, stopped unless it had finished. A job whose change is already
/// committed cannot be stopped: the answer waits for it to be done, as BigQuery reports a
/// job that finished before the cancel took effect.
pub async fn cancel(s: &AppState, project: &str, job_id: &str) -> Result<Arc<Job>, BqError> {
    let job = s.jobs.get(project, job_id)?;
    if !job.stop(BqError {
        status: 400,
        reason: "stopped",
        message: "Job execution was cancelled: User requested cancellation".into(),
        location: None,
    }) && job.state().committed
    {
        job.wait(Duration::from_secs(10)).await;
    }
    Ok(job)
}

/// `jobs.delete`.
pub fn delete(s: &AppState, project: &str, job_id: &str) -> Result<(), BqError> {
    s.jobs.delete(project, job_id)
}

/// `totalSlotMs`: the emulator runs a job as if on one slot, so its slot time is the time
/// it ran (0 until it ends).
pub fn slot_ms(st: &JobState) -> i64 {
    match (st.start_time, st.end_time) {
        (Some(start), Some(end)) => (end - start).max(0),
        _ => 0,
    }
}

/// `PENDING`, `RUNNING` or `DONE`.
pub fn state_name(st: &JobState) -> &'static str {
    match (&st.result, st.start_time) {
        (Some(_), _) => "DONE",
        (None, Some(_)) => "RUNNING",
        (None, None) => "PENDING",
    }
}

/// Which jobs `jobs.list` reports.
#[derive(Clone, Debug, Default)]
pub struct JobFilter {
    /// `stateFilter`: `PENDING`, `RUNNING`, `DONE` (any case); empty for all.
    pub states: Vec<String>,
    /// `minCreationTime`, ms: jobs created at or after it.
    pub min_creation_time: Option<i64>,
    /// `maxCreationTime`, ms: jobs created at or before it.
    pub max_creation_time: Option<i64>,
    /// `parentJobId`: the child jobs of this script job. The emulator runs a script as one
    /// job, with no child jobs, so the list is empty for every parent.
    pub parent_job_id: Option<String>,
}

impl JobFilter {
    fn admits(&self, j: &Job) -> bool {
        let st = state_name(&j.state());
        (self.states.is_empty() || self.states.iter().any(|f| f.eq_ignore_ascii_case(st)))
            && self.parent_job_id.is_none()
            && self.min_creation_time.is_none_or(|t| j.creation_time >= t)
            && self.max_creation_time.is_none_or(|t| j.creation_time <= t)
    }
}

/// `jobs.list`: a project's jobs, newest first, those `filter` admits; the page and the
/// next page's token.
pub fn list(
    s: &AppState,
    project: &str,
    filter: &JobFilter,
    page: PageRequest,
) -> (Vec<Arc<Job>>, Option<String>) {
    let jobs: Vec<Arc<Job>> = s
        .jobs
        .list(project)
        .into_iter()
        .filter(|j| filter.admits(j))
        .collect();
    page.slice(&jobs)
}

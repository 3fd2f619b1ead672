//! `google.cloud.bigquery.v2.JobService` over [`crate::api::jobs`].

use std::sync::Arc;
use std::time::Duration;

use gcloud_sdk::google::cloud::bigquery::v2::job_creation_reason::Code as ReasonCode;
use gcloud_sdk::google::cloud::bigquery::v2::list_jobs_request::{self, StateFilter};
use gcloud_sdk::google::cloud::bigquery::v2::query_request::{
    JobCreationMode, QueryResultsFormat, ResultsFormatSerializationOptions,
};
use gcloud_sdk::google::cloud::bigquery::v2::{
    CancelJobRequest, DeleteJobRequest, DmlStats, ErrorProto, GetJobRequest,
    GetQueryResultsRequest, GetQueryResultsResponse, InsertJobRequest, Job, JobCancelResponse,
    JobConfiguration, JobConfigurationQuery, JobCreationReason, JobList, JobReference,
    JobStatistics, JobStatistics2, JobStatus, ListFormatJob, ListJobsRequest, PostQueryRequest,
    QueryRequest, QueryResponse, query_response,
};
use serde_json::Value;

use super::convert::{job_query_json, job_query_proto, schema_to_proto};
use super::results::{WithRows, arrow_page, compression, struct_page};
use crate::api::jobs::{
    self as core, InsertCall, InsertOutcome, JobFilter, QueryCall, QueryOutcome,
};
use crate::api::{PageRequest, etag};
use crate::error::BqError;
use crate::jobs::Job as CoreJob;
use crate::sql::exec::QueryOutput;
use crate::state::AppState;
use bigq_codec::json::encode::EncodeOptions;
use bigq_codec::json::{GET_QUERY_RESULTS_ROWS_TAG, QUERY_RESPONSE_ROWS_TAG};

/// The JSON query configuration of a `QueryRequest` (what REST's `jobs.query` body holds):
/// the query fields it shares with a query job's configuration, written as a job's are.
fn query_config(q: &QueryRequest) -> Result<Value, BqError> {
    job_query_json(&JobConfigurationQuery {
        query: q.query.clone(),
        default_dataset: q.default_dataset.clone(),
        use_legacy_sql: q.use_legacy_sql,
        use_query_cache: q.use_query_cache,
        parameter_mode: q.parameter_mode.clone(),
        query_parameters: q.query_parameters.clone(),
        maximum_bytes_billed: q.maximum_bytes_billed,
        ..Default::default()
    })
}

/// How struct-encoded cells are written: `use_int64_timestamp`, or
/// `timestamp_output_format` FLOAT64 (the default) / INT64.
fn encode_options(
    f: Option<&gcloud_sdk::google::cloud::bigquery::v2::DataFormatOptions>,
) -> Result<EncodeOptions, BqError> {
    use gcloud_sdk::google::cloud::bigquery::v2::data_format_options::TimestampOutputFormat as T;
    let Some(f) = f else {
        return Ok(EncodeOptions::default());
    };
    let int64 = match T::try_from(f.timestamp_output_format) {
        Ok(T::Unspecified) => f.use_int64_timestamp,
        Ok(T::Float64) => false,
        Ok(T::Int64) => true,
        Ok(T::Iso8601String) => {
            return Err(BqError::unsupported(
                "timestamp_output_format ISO8601_STRING",
            ));
        }
        Err(_) => {
            return Err(BqError::invalid(format!(
                "Invalid timestamp_output_format {}",
                f.timestamp_output_format
            )));
        }
    };
    Ok(EncodeOptions {
        int64_timestamp: int64,
    })
}

fn job_reference(job: &CoreJob) -> JobReference {
    JobReference {
        project_id: job.project.clone(),
        job_id: job.job_id.clone(),
        location: Some(job.location.clone()),
    }
}

fn reason_code(reason: &str) -> i32 {
    match reason {
        "REQUESTED" => ReasonCode::Requested,
        "LONG_RUNNING" => ReasonCode::LongRunning,
        "LARGE_RESULTS" => ReasonCode::LargeResults,
        _ => ReasonCode::Other,
    }
    .into()
}

fn dml_stats(out: &QueryOutput) -> (Option<i64>, Option<DmlStats>) {
    match out.dml {
        Some(d) => (
            Some(d.affected()),
            Some(DmlStats {
                inserted_row_count: Some(d.inserted),
                deleted_row_count: Some(d.deleted),
                updated_row_count: Some(d.updated),
                ..Default::default()
            }),
        ),
        None => (None, None),
    }
}

fn error_proto(e: &BqError) -> ErrorProto {
    ErrorProto {
        reason: e.reason.to_string(),
        location: e.location.clone().unwrap_or_default(),
        debug_info: String::new(),
        message: e.message.clone(),
    }
}

/// The rows of one page in the format the request asked for, into `r`.
fn fill_rows(
    r: &mut QueryResponse,
    out: &QueryOutput,
    page: PageRequest,
    arrow: Option<Option<arrow_ipc::CompressionType>>,
    opts: EncodeOptions,
    rows_tag: u32,
) -> Result<Vec<u8>, BqError> {
    r.statement_type = out.statement_type.to_string();
    let (n, d) = dml_stats(out);
    r.num_dml_affected_rows = n;
    r.dml_stats = d;
    if !out.returns_rows {
        return Ok(Vec::new());
    }
    r.total_rows = Some(out.total_rows() as u64);
    match arrow {
        Some(c) => {
            // ARROW: results_schema and results; neither schema nor rows (job.proto).
            let p = arrow_page(out, page, c)?;
            r.page_row_count = p.rows as i64;
            r.page_token = p.next.unwrap_or_default();
            r.results_schema = Some(query_response::ResultsSchema::ArrowSchema(p.schema));
            r.results = Some(query_response::Results::ArrowRecordBatch(p.batch));
        }
        None => {
            r.schema = Some(schema_to_proto(&out.schema));
            let p = struct_page(out, page, opts, rows_tag)?;
            r.page_row_count = p.count as i64;
            r.page_token = p.next.unwrap_or_default();
            return Ok(p.rows);
        }
    }
    Ok(Vec::new())
}

/// `Query`.
pub async fn query(
    s: Arc<AppState>,
    req: PostQueryRequest,
) -> Result<WithRows<QueryResponse>, BqError> {
    let q = req.query_request.unwrap_or_default();
    let arrow = match QueryResultsFormat::try_from(q.query_results_format) {
        Ok(QueryResultsFormat::Arrow) => Some(compression(
            match &q.results_format_serialization_options {
                Some(ResultsFormatSerializationOptions::ArrowSerializationOptions(o)) => Some(o),
                None => None,
            },
        )?),
        Ok(_) => None,
        Err(_) => {
            return Err(BqError::invalid(format!(
                "Invalid query_results_format {}",
                q.query_results_format
            )));
        }
    };
    let opts = encode_options(q.format_options.as_ref())?;
    let project = req.project_id.clone();
    let call = QueryCall {
        project: project.clone(),
        config: query_config(&q)?,
        dry_run: q.dry_run,
        max_results: q.max_results.map(|m| m as usize),
        timeout_ms: q.timeout_ms.map(u64::from),
        job_optional: q.job_creation_mode == i32::from(JobCreationMode::JobCreationOptional),
        request_id: Some(q.request_id.clone()),
        job_timeout: job_timeout(q.job_timeout_ms)?,
    };
    let first = PageRequest {
        start: 0,
        max: call.max_results,
    };
    let mut r = QueryResponse {
        kind: "bigquery#queryResponse".into(),
        total_bytes_processed: Some(0),
        total_bytes_billed: Some(0),
        cache_hit: Some(false),
        job_complete: Some(true),
        location: core::LOCATION.into(),
        ..Default::default()
    };
    let mut rows = Vec::new();
    match core::query(&s, call).await? {
        QueryOutcome::DryRun {
            out,
            created,
            ended,
        } => {
            r.job_reference = Some(JobReference {
                project_id: project,
                job_id: String::new(),
                location: Some(core::LOCATION.into()),
            });
            if !out.schema.is_empty() {
                r.schema = Some(schema_to_proto(&out.schema));
            }
            r.statement_type = out.statement_type.to_string();
            r.creation_time = Some(created);
            r.end_time = Some(ended);
            r.total_bytes_processed = Some(out.cost.processed as i64);
        }
        QueryOutcome::Done {
            job,
            out,
            query_id,
            times: (created, started, ended),
        } => {
            r.query_id = query_id;
            r.creation_time = Some(created);
            r.start_time = Some(started);
            r.end_time = Some(ended);
            r.total_bytes_processed = Some(out.cost.processed as i64);
            r.total_bytes_billed = Some(out.cost.billed as i64);
            if let Some(job) = &job {
                r.job_reference = Some(job_reference(job));
                r.location = job.location.clone();
                r.job_creation_reason = Some(JobCreationReason {
                    code: reason_code(job.creation_reason),
                });
            }
            rows = fill_rows(&mut r, &out, first, arrow, opts, QUERY_RESPONSE_ROWS_TAG)?;
        }
        QueryOutcome::Pending { job, query_id } => {
            r.query_id = query_id;
            r.job_reference = Some(job_reference(&job));
            r.job_complete = Some(false);
            r.job_creation_reason = Some(JobCreationReason {
                code: reason_code(job.creation_reason),
            });
            r.total_bytes_processed = None;
            r.total_bytes_billed = None;
            r.cache_hit = None;
        }
    }
    Ok(WithRows { message: r, rows })
}

/// `GetQueryResults` (struct-encoded rows: the request has no results format).
pub async fn get_query_results(
    s: Arc<AppState>,
    req: GetQueryResultsRequest,
) -> Result<WithRows<GetQueryResultsResponse>, BqError> {
    let page = if req.page_token.is_empty() {
        PageRequest {
            start: req.start_index.unwrap_or(0) as usize,
            max: req.max_results.map(|m| m as usize),
        }
    } else {
        PageRequest::from_token(Some(&req.page_token), req.max_results.map(|m| m as usize))?
    };
    let opts = encode_options(req.format_options.as_ref())?;
    let (job, out) = core::query_results(
        &s,
        &req.project_id,
        &req.job_id,
        req.timeout_ms.map(u64::from),
    )
    .await?;
    let mut r = GetQueryResultsResponse {
        kind: "bigquery#getQueryResultsResponse".into(),
        etag: etag(job.creation_time),
        job_reference: Some(job_reference(&job)),
        job_complete: Some(out.is_some()),
        ..Default::default()
    };
    let mut rows = Vec::new();
    if let Some(out) = out {
        // The rows of a QueryResponse, moved over field by field.
        let mut q = QueryResponse::default();
        rows = fill_rows(&mut q, &out, page, None, opts, GET_QUERY_RESULTS_ROWS_TAG)?;
        r.schema = q.schema;
        r.total_rows = q.total_rows;
        r.page_token = q.page_token;
        r.num_dml_affected_rows = q.num_dml_affected_rows;
        r.total_bytes_processed = Some(out.cost.processed as i64);
        r.cache_hit = Some(false);
    }
    Ok(WithRows { message: r, rows })
}

fn statistics(job: &CoreJob) -> JobStatistics {
    let st = job.state();
    let none = Default::default();
    let cost: &crate::sql::exec::Cost = match &st.result {
        Some(Ok(out)) => &out.cost,
        _ => &none,
    };
    let slot_ms = core::slot_ms(&st);
    let mut q = JobStatistics2 {
        total_bytes_processed: Some(cost.processed as i64),
        total_bytes_billed: Some(cost.billed as i64),
        cache_hit: Some(false),
        total_slot_ms: Some(slot_ms),
        referenced_tables: cost
            .tables
            .iter()
            .map(
                |t| gcloud_sdk::google::cloud::bigquery::v2::TableReference {
                    project_id: t.project.clone(),
                    dataset_id: t.dataset.clone(),
                    table_id: t.table.clone(),
                },
            )
            .collect(),
        statement_type: "SELECT".into(),
        ..Default::default()
    };
    if let Some(Ok(out)) = &st.result {
        q.statement_type = out.statement_type.to_string();
        if !out.schema.is_empty() {
            q.schema = Some(schema_to_proto(&out.schema));
        }
        (q.num_dml_affected_rows, q.dml_stats) = dml_stats(out);
        if let Some(ddl) = &out.ddl {
            q.ddl_operation_performed = ddl.operation.to_string();
            q.ddl_target_table = ddl.target_table.as_ref().map(|t| {
                gcloud_sdk::google::cloud::bigquery::v2::TableReference {
                    project_id: t.project.clone(),
                    dataset_id: t.dataset.clone(),
                    table_id: t.table.clone(),
                }
            });
            q.ddl_target_routine = ddl.target_routine.as_ref().map(|r| {
                gcloud_sdk::google::cloud::bigquery::v2::RoutineReference {
                    project_id: r.project.clone(),
                    dataset_id: r.dataset.clone(),
                    routine_id: r.table.clone(),
                }
            });
        }
    }
    JobStatistics {
        creation_time: job.creation_time,
        start_time: st.start_time.unwrap_or(0),
        end_time: st.end_time.unwrap_or(0),
        total_bytes_processed: Some(cost.processed as i64),
        total_slot_ms: Some(slot_ms),
        query: Some(q),
        ..Default::default()
    }
}

fn configuration(c: &Value) -> JobConfiguration {
    JobConfiguration {
        job_type: c
            .get("jobType")
            .and_then(Value::as_str)
            .unwrap_or("QUERY")
            .to_string(),
        query: c.get("query").map(job_query_proto),
        dry_run: c.get("dryRun").and_then(Value::as_bool),
        ..Default::default()
    }
}

fn status(job: &CoreJob) -> JobStatus {
    let st = job.state();
    let mut s = JobStatus {
        state: core::state_name(&st).to_string(),
        ..Default::default()
    };
    if let Some(Err(e)) = &st.result {
        s.error_result = Some(error_proto(e));
        s.errors = vec![error_proto(e)];
    }
    s
}

/// A job as the v2 `Job` message.
fn job_message(s: &AppState, job: &CoreJob) -> Job {
    Job {
        kind: "bigquery#job".into(),
        etag: etag(job.creation_time),
        id: format!("{}:{}.{}", job.project, job.location, job.job_id),
        self_link: format!(
            "{}/bigquery/v2/projects/{}/jobs/{}?location={}",
            s.base_url, job.project, job.job_id, job.location
        ),
        user_email: "emulator@bigq.local".into(),
        configuration: Some(configuration(&job.configuration)),
        job_reference: Some(job_reference(job)),
        statistics: Some(statistics(job)),
        status: Some(status(job)),
        principal_subject: "user:emulator@bigq.local".into(),
        job_creation_reason: Some(JobCreationReason {
            code: reason_code(job.creation_reason),
        }),
    }
}

/// `InsertJob` (query jobs).
pub async fn insert_job(s: Arc<AppState>, req: InsertJobRequest) -> Result<Job, BqError> {
    let job = req.job.unwrap_or_default();
    let cfg = job.configuration.unwrap_or_default();
    let reference = job.job_reference.unwrap_or_default();
    let project = req.project_id.clone();
    let kind = [
        (cfg.load.is_some(), "load"),
        (cfg.extract.is_some(), "extract"),
        (cfg.copy.is_some(), "copy"),
    ];
    if let Some((_, name)) = kind.iter().find(|(set, _)| *set) {
        return Err(BqError::invalid(format!(
            "Unsupported by bigq-emulator: {name} jobs over gRPC (JobService.InsertJob); insert them over REST"
        )));
    }
    let call = InsertCall {
        project: project.clone(),
        job_id: Some(reference.job_id),
        location: reference.location,
        query: cfg.query.as_ref().map(job_query_json).transpose()?,
        load: None,
        copy: None,
        dry_run: cfg.dry_run.unwrap_or(false),
        job_timeout: job_timeout(cfg.job_timeout_ms)?,
    };
    match core::insert(&s, call).await? {
        InsertOutcome::Job(job) => Ok(job_message(&s, &job)),
        InsertOutcome::DryRun {
            configuration: c,
            out,
            location,
            time,
        } => Ok(Job {
            kind: "bigquery#job".into(),
            etag: etag(time),
            id: format!("{project}:{location}."),
            configuration: Some(configuration(&c)),
            job_reference: Some(JobReference {
                project_id: project,
                job_id: String::new(),
                location: Some(location),
            }),
            statistics: Some(JobStatistics {
                creation_time: time,
                end_time: time,
                total_bytes_processed: Some(out.cost.processed as i64),
                query: Some(JobStatistics2 {
                    total_bytes_processed: Some(out.cost.processed as i64),
                    total_bytes_billed: Some(0),
                    cache_hit: Some(false),
                    statement_type: out.statement_type.to_string(),
                    total_bytes_processed_accuracy: "PRECISE".into(),
                    schema: (!out.schema.is_empty()).then(|| schema_to_proto(&out.schema)),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            status: Some(JobStatus {
                state: "DONE".into(),
                ..Default::default()
            }),
            user_email: "emulator@bigq.local".into(),
            principal_subject: "user:emulator@bigq.local".into(),
            ..Default::default()
        }),
    }
}

/// `GetJob`.
pub async fn get_job(s: Arc<AppState>, req: GetJobRequest) -> Result<Job, BqError> {
    core::get(&s, &req.project_id, &req.job_id).map(|j| job_message(&s, &j))
}

/// `job_timeout_ms`, checked as REST checks `jobTimeoutMs`.
fn job_timeout(ms: Option<i64>) -> Result<Option<Duration>, BqError> {
    core::job_timeout_of(ms.map(Value::from).as_ref())
}

/// `CancelJob`.
pub async fn cancel_job(
    s: Arc<AppState>,
    req: CancelJobRequest,
) -> Result<JobCancelResponse, BqError> {
    let job = core::cancel(&s, &req.project_id, &req.job_id).await?;
    Ok(JobCancelResponse {
        kind: "bigquery#jobCancelResponse".into(),
        job: Some(job_message(&s, &job)),
    })
}

/// `DeleteJob`.
pub async fn delete_job(s: Arc<AppState>, req: DeleteJobRequest) -> Result<(), BqError> {
    core::delete(&s, &req.project_id, &req.job_id)
}

/// `ListJobs`.
pub async fn list_jobs(s: Arc<AppState>, req: ListJobsRequest) -> Result<JobList, BqError> {
    let max = match req.max_results {
        Some(m) if m < 0 => {
            return Err(BqError::invalid(format!(
                "Invalid value for maxResults: {m}"
            )));
        }
        Some(m) => m as usize,
        None => 1000,
    };
    let page = PageRequest::from_token(Some(&req.page_token), Some(max))?;
    let states = req
        .state_filter
        .iter()
        .map(|f| match StateFilter::try_from(*f) {
            Ok(StateFilter::Done) => Ok("DONE".to_string()),
            Ok(StateFilter::Pending) => Ok("PENDING".to_string()),
            Ok(StateFilter::Running) => Ok("RUNNING".to_string()),
            Err(_) => Err(BqError::invalid(format!("Invalid state_filter {f}"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let filter = JobFilter {
        states,
        min_creation_time: (req.min_creation_time > 0)
            .then(|| i64::try_from(req.min_creation_time).unwrap_or(i64::MAX)),
        max_creation_time: req
            .max_creation_time
            .map(|t| i64::try_from(t).unwrap_or(i64::MAX)),
        parent_job_id: Some(req.parent_job_id.clone()).filter(|p| !p.is_empty()),
    };
    let full = req.projection == list_jobs_request::Projection::Full as i32;
    let (jobs, next) = core::list(&s, &req.project_id, &filter, page);
    Ok(JobList {
        kind: "bigquery#jobList".into(),
        etag: etag(jobs.len() as i64),
        next_page_token: next.unwrap_or_default(),
        jobs: jobs
            .iter()
            .map(|j| {
                let m = job_message(&s, j);
                let status = m.status.clone().unwrap_or_default();
                ListFormatJob {
                    id: m.id,
                    kind: m.kind,
                    job_reference: m.job_reference,
                    state: status.state.clone(),
                    error_result: status.error_result.clone(),
                    statistics: m.statistics,
                    // `MINIMAL` (the default) leaves the configuration out.
                    configuration: m.configuration.filter(|_| full),
                    status: Some(status),
                    user_email: m.user_email,
                    principal_subject: m.principal_subject,
                }
            })
            .collect(),
        unreachable: Vec::new(),
    })
}

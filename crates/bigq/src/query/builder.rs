//! The query builder and the run of a query: the job retry, the first response, and polling
//! until the query is complete.

use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use super::pages::BatchStream;
use super::params::Param;
use super::request::{QueryRequest, WriteDisposition};
use super::response::{JobReference, QueryStats, ResultPage};
use super::results::QueryResults;
use super::rows::RowStream;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{IntoDatasetId, IntoTableId, TableId, dataset_id, table_id};
use crate::retry::{self, Failure, RetryPolicy};

/// The longest a single `jobs.query` / `jobs.getQueryResults` call waits on the server.
const POLL_TIMEOUT: Duration = Duration::from_secs(10);

impl Client {
    /// Starts building a GoogleSQL query.
    pub fn query(&self, sql: impl Into<String>) -> QueryBuilder {
        QueryBuilder {
            client: self.clone(),
            request: QueryRequest::new(
                self.inner.project.clone(),
                sql.into(),
                self.inner.location.clone(),
            ),
            invalid: None,
            timeout: None,
            use_storage_read: true,
            destination: None,
            job_retry: RetryPolicy {
                max_attempts: 3,
                ..Default::default()
            },
        }
    }
}

/// A query being built; run it with [`run`](Self::run), [`fetch_all`](Self::fetch_all),
/// [`rows`](Self::rows), [`batches`](Self::batches) or [`execute`](Self::execute).
///
/// Toggles take a `bool` (`.dry_run(true)`, `.use_storage_read(false)`), like every builder
/// of bigq's.
#[must_use]
#[derive(Debug, Clone)]
pub struct QueryBuilder {
    client: Client,
    request: QueryRequest,
    /// Why the query cannot run (an id that does not parse), reported by the run.
    invalid: Option<String>,
    timeout: Option<Duration>,
    use_storage_read: bool,
    destination: Option<TableId>,
    job_retry: RetryPolicy,
}

impl QueryBuilder {
    /// Binds the named parameter `@name`.
    pub fn param(mut self, name: impl Into<String>, value: impl Into<Param>) -> Self {
        self.request.named.push((name.into(), value.into()));
        self
    }

    /// Binds the next positional parameter `?`.
    pub fn bind(mut self, value: impl Into<Param>) -> Self {
        self.request.positional.push(value.into());
        self
    }

    /// The dataset unqualified table names resolve in: a [`DatasetId`](crate::DatasetId),
    /// `dataset` (in the client's project) or `project.dataset`.
    pub fn default_dataset(mut self, dataset: impl IntoDatasetId) -> Self {
        match dataset_id(&self.client.inner.project, dataset) {
            Ok(id) => self.request.default_dataset = Some(id),
            Err(e) => self.invalid = Some(e.message().to_string()),
        }
        self
    }

    /// The location to run in (overrides the client's default).
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.request.location = Some(location.into());
        self
    }

    /// Validates the query and estimates its cost without running it.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.request.dry_run = dry_run;
        self
    }

    /// Adds a label to the job.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.request.labels.insert(key.into(), value.into());
        self
    }

    /// Fails the query instead of billing more than this many bytes.
    pub fn maximum_bytes_billed(mut self, bytes: i64) -> Self {
        self.request.maximum_bytes_billed = Some(bytes);
        self
    }

    /// Whether cached results may be used (BigQuery's default is yes).
    pub fn use_query_cache(mut self, yes: bool) -> Self {
        self.request.use_query_cache = Some(yes);
        self
    }

    /// Gives up waiting for the query after this long (the job is not cancelled).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Whether to always create a job. By default (`false`) queries run in short query mode
    /// (`JOB_CREATION_OPTIONAL`), where BigQuery may answer without one.
    pub fn job_creation_required(mut self, yes: bool) -> Self {
        self.request.job_creation_required = yes;
        self
    }

    /// Rows per page (BigQuery's default is up to 10 MB per page).
    pub fn page_size(mut self, rows: u32) -> Self {
        self.request.page_size = Some(rows);
        self
    }

    /// Whether a result larger than the first response is read through the Storage Read
    /// API (the default) or paged through `jobs.getQueryResults`.
    ///
    /// With Storage Read, bigq looks up the job's destination table (`jobs.get`) and reads
    /// it on parallel streams, decoding typed rows on each stream's task; the rows of the
    /// first response are not used. A query with `ORDER BY` is read on one stream so the
    /// order holds. Storage Read is used only where the Storage API is the same service as
    /// the v2 one: against BigQuery, or with a Storage endpoint set on the client
    /// ([`ClientBuilder::with_emulator_grpc`](crate::ClientBuilder::with_emulator_grpc)).
    pub fn use_storage_read(mut self, yes: bool) -> Self {
        self.use_storage_read = yes;
        self
    }

    /// Writes the result into this table (a [`TableId`](crate::TableId), `dataset.table` or
    /// `project.dataset.table`), creating it if needed. The query then runs as a job
    /// (`jobs.insert`), and its rows are read back from that table like any other result.
    pub fn destination_table(mut self, table: impl IntoTableId) -> Self {
        match table_id(&self.client.inner.project, table) {
            Ok(id) => self.destination = Some(id),
            Err(e) => self.invalid = Some(e.message().to_string()),
        }
        self
    }

    /// What to do when the destination table already has rows (BigQuery's default:
    /// fail unless it is empty).
    pub fn write_disposition(mut self, disposition: WriteDisposition) -> Self {
        self.request.write_disposition = Some(disposition);
        self
    }

    /// Retries the whole query (with a new request id) when it fails with a retryable job
    /// error such as `jobBackendError` or `rateLimitExceeded`. Separate from the RPC retries
    /// of the client's [`RetryPolicy`]; default: 3 attempts.
    pub fn job_retry(mut self, policy: RetryPolicy) -> Self {
        self.job_retry = policy;
        self
    }

    /// Runs the query and waits until it completes; the first page of rows is in the result.
    pub async fn run(self) -> Result<QueryResults> {
        let this = &self;
        retry::run(&self.job_retry, "query job", move || async move {
            this.run_once().await.map_err(|e| Failure {
                retryable: e.kind() == ErrorKind::Job && e.is_retryable(),
                error: e,
            })
        })
        .await
    }

    /// How long the next call may wait on the server: [`POLL_TIMEOUT`], or what is left of
    /// the query's timeout.
    fn poll_timeout(&self, started: Instant) -> Duration {
        match self.timeout {
            Some(t) => t.saturating_sub(started.elapsed()).min(POLL_TIMEOUT),
            None => POLL_TIMEOUT,
        }
    }

    /// One attempt of the query. The transport's calls are boxed futures: unboxed, this
    /// future (and every caller's) would be as large as the largest of them, several
    /// kilobytes copied at each step of the call chain on every query.
    async fn run_once(&self) -> Result<QueryResults> {
        if let Some(why) = &self.invalid {
            return Err(Error::config(why.clone()));
        }
        let started = Instant::now();
        let api = &self.client.inner.api;
        let request_id = uuid::Uuid::new_v4().to_string();
        let mut page = match &self.destination {
            Some(dest) => Box::pin(self.insert_job(&request_id, dest)).await?,
            None => {
                // The first page's rows are not decoded when Storage Read will return them.
                let rows_unused = self.use_storage_read && self.client.inner.storage_for_queries;
                let wait = self.poll_timeout(started);
                api.query(&self.request, &request_id, wait, rows_unused)
                    .await?
            }
        };
        while !page.stats.is_complete() && !self.request.dry_run {
            let job = page.stats.job_reference.clone().ok_or_else(|| {
                Error::new(
                    ErrorKind::Decode,
                    "BigQuery reported an incomplete query without a job reference",
                )
            })?;
            if let Some(t) = self.timeout
                && started.elapsed() >= t
            {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!("query job {} did not finish within {t:?}", job.job_id),
                ));
            }
            let wait = self.poll_timeout(started);
            let job = JobReference {
                location: job.location.or(self.request.location.clone()),
                ..job
            };
            let first = std::mem::take(&mut page.stats);
            page = api
                .get_query_results(&job, self.request.page_size, wait)
                .await?;
            // What only jobs.query says (creation reason, query id) is kept.
            page.stats.fill_from(first);
        }
        QueryResults::new(
            self.client.clone(),
            page,
            &self.request.sql,
            self.request.page_size,
            self.request.location.clone(),
            self.use_storage_read,
        )
    }

    /// Inserts the query as a job writing into `destination`; the page it returns is
    /// "not complete yet", for the polling that follows.
    async fn insert_job(&self, request_id: &str, destination: &TableId) -> Result<ResultPage> {
        let job_id = format!("bigq_{}", request_id.replace('-', ""));
        let api = &self.client.inner.api;
        let job = match api
            .insert_query_job(&self.request, &job_id, destination)
            .await
        {
            Ok(job) => job,
            // A retried insert that BigQuery already has: the job exists, poll it.
            Err(e) if e.is_already_exists() => {
                let reference = JobReference {
                    project_id: self.request.project.clone(),
                    job_id: job_id.clone(),
                    location: self.request.location.clone(),
                };
                api.get_job(&reference).await?
            }
            Err(e) => return Err(e),
        };
        if let Some(err) = job.error() {
            return Err(Error::job(
                err.reason.clone(),
                err.message
                    .clone()
                    .unwrap_or_else(|| "the query job failed".into()),
                None,
            ));
        }
        let stats = QueryStats {
            job_reference: Some(job.job_reference.clone()),
            statement_type: job.statement_type().map(str::to_string),
            job_complete: Some(self.request.dry_run),
            ..Default::default()
        };
        Ok(ResultPage {
            stats,
            batches: Vec::new(),
            arrow_schema: None,
        })
    }

    /// Runs the query and returns its statistics, for statements that return no rows
    /// (DDL, DML) or when only the statistics matter.
    pub async fn execute(self) -> Result<QueryStats> {
        Ok(self.run().await?.into_stats())
    }

    /// Runs the query and streams its rows as `T`.
    pub async fn rows<T: DeserializeOwned + Send + 'static>(self) -> Result<RowStream<T>> {
        Ok(self.run().await?.into_rows())
    }

    /// Runs the query and streams its rows as Arrow batches.
    pub async fn batches(self) -> Result<BatchStream> {
        Ok(self.run().await?.into_batches())
    }

    /// Runs the query and collects every row as `T`.
    pub async fn fetch_all<T: DeserializeOwned + Send + 'static>(self) -> Result<Vec<T>> {
        self.rows().await?.try_collect().await
    }
}

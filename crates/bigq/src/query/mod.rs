//! Queries over BigQuery REST v2 (`jobs.query`, `jobs.getQueryResults`).
//!
//! ```no_run
//! # async fn run(client: bigq::Client) -> bigq::Result<()> {
//! #[derive(serde::Deserialize)]
//! struct Row { name: String, total: i64 }
//!
//! let rows: Vec<Row> = client
//!     .query("SELECT name, SUM(n) AS total FROM ds.t WHERE day >= @day GROUP BY name")
//!     .param("day", bigq::value::Date::from_ymd(2024, 1, 1).unwrap())
//!     .fetch_all()
//!     .await?;
//! # Ok(()) }
//! ```

mod grpc;
mod pages;
mod params;
mod response;
mod rows;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bigq_codec::json::ResponseDecoder;
use bigq_codec::schema::TableSchema;
use futures::{StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub(crate) use grpc::job_reference as grpc_job_reference;
pub use pages::BatchStream;
pub(crate) use pages::PageSource;
pub use params::{Param, ParamType, ParamValue, ToParam};
pub use response::{DmlStats, JobReference, QueryStats};
pub use rows::RowStream;

use crate::admin::TableId;
use crate::client::rest::{Idempotent, Request, transport_error};
use crate::client::{Client, Transport};
use crate::error::{Error, ErrorKind, Result};

/// The longest a single `jobs.query` / `jobs.getQueryResults` call waits on the server.
const POLL_TIMEOUT: Duration = Duration::from_secs(10);

impl Client {
    /// Starts building a GoogleSQL query.
    pub fn query(&self, sql: impl Into<String>) -> QueryBuilder {
        QueryBuilder {
            client: self.clone(),
            sql: sql.into(),
            named: Vec::new(),
            positional: Vec::new(),
            default_dataset: None,
            location: self.inner.location.clone(),
            dry_run: false,
            labels: BTreeMap::new(),
            maximum_bytes_billed: None,
            use_query_cache: None,
            timeout: None,
            job_creation_required: false,
            page_size: None,
            use_storage_read: true,
            destination: None,
            write_disposition: None,
            job_retry: crate::RetryPolicy {
                max_attempts: 3,
                ..Default::default()
            },
        }
    }
}

/// A query being built; run it with [`run`](Self::run), [`fetch_all`](Self::fetch_all),
/// [`rows`](Self::rows), [`batches`](Self::batches) or [`execute`](Self::execute).
#[must_use]
#[derive(Debug, Clone)]
pub struct QueryBuilder {
    client: Client,
    sql: String,
    named: Vec<(String, Param)>,
    positional: Vec<Param>,
    default_dataset: Option<(String, String)>,
    location: Option<String>,
    dry_run: bool,
    labels: BTreeMap<String, String>,
    maximum_bytes_billed: Option<i64>,
    use_query_cache: Option<bool>,
    timeout: Option<Duration>,
    job_creation_required: bool,
    page_size: Option<u32>,
    use_storage_read: bool,
    destination: Option<String>,
    write_disposition: Option<WriteDisposition>,
    job_retry: crate::RetryPolicy,
}

/// What a query does to a destination table that already has rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteDisposition {
    /// Replace the table's rows (`WRITE_TRUNCATE`).
    Truncate,
    /// Add to them (`WRITE_APPEND`).
    Append,
    /// Fail unless the table is empty (`WRITE_EMPTY`, BigQuery's default).
    Empty,
}

impl WriteDisposition {
    fn as_str(self) -> &'static str {
        match self {
            WriteDisposition::Truncate => "WRITE_TRUNCATE",
            WriteDisposition::Append => "WRITE_APPEND",
            WriteDisposition::Empty => "WRITE_EMPTY",
        }
    }
}

impl QueryBuilder {
    /// Binds the named parameter `@name`.
    pub fn param(mut self, name: impl Into<String>, value: impl Into<Param>) -> Self {
        self.named.push((name.into(), value.into()));
        self
    }

    /// Binds the next positional parameter `?`.
    pub fn bind(mut self, value: impl Into<Param>) -> Self {
        self.positional.push(value.into());
        self
    }

    /// The dataset unqualified table names resolve in: `dataset` (in the client's project)
    /// or `project.dataset`.
    pub fn default_dataset(mut self, dataset: impl AsRef<str>) -> Self {
        let d = dataset.as_ref();
        self.default_dataset = Some(match d.split_once('.') {
            Some((p, ds)) => (p.to_string(), ds.to_string()),
            None => (self.client.inner.project.clone(), d.to_string()),
        });
        self
    }

    /// The location to run in (overrides the client's default).
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// Validates the query and estimates its cost without running it.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Adds a label to the job.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Fails the query instead of billing more than this many bytes.
    pub fn maximum_bytes_billed(mut self, bytes: i64) -> Self {
        self.maximum_bytes_billed = Some(bytes);
        self
    }

    /// Whether cached results may be used (BigQuery's default is yes).
    pub fn use_query_cache(mut self, yes: bool) -> Self {
        self.use_query_cache = Some(yes);
        self
    }

    /// Gives up waiting for the query after this long (the job is not cancelled).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Always creates a job. By default queries run in short query mode
    /// (`JOB_CREATION_OPTIONAL`), where BigQuery may answer without one.
    pub fn job_creation_required(mut self) -> Self {
        self.job_creation_required = true;
        self
    }

    /// Rows per REST page (BigQuery's default is up to 10 MB per page).
    pub fn page_size(mut self, rows: u32) -> Self {
        self.page_size = Some(rows);
        self
    }

    /// Whether a result larger than the first response is read through the Storage Read
    /// API (the default) or paged through REST `jobs.getQueryResults`.
    ///
    /// With Storage Read, bigq looks up the job's destination table (`jobs.get`) and reads
    /// it on parallel streams, decoding typed rows on each stream's task; the rows of the
    /// first response are not used. A query with `ORDER BY` is read on one stream so the
    /// order holds. Storage Read is used only where the Storage API is the same service as
    /// the REST one: against BigQuery, or with a Storage endpoint set on the client
    /// ([`ClientBuilder::with_emulator_grpc`](crate::ClientBuilder::with_emulator_grpc)).
    pub fn use_storage_read(mut self, yes: bool) -> Self {
        self.use_storage_read = yes;
        self
    }

    /// Writes the result into this table (`dataset.table` or `project.dataset.table`),
    /// creating it if needed. The query then runs as a job (`jobs.insert`), and its rows
    /// are read back from that table like any other result.
    pub fn destination_table(mut self, table: impl Into<String>) -> Self {
        self.destination = Some(table.into());
        self
    }

    /// What to do when the destination table already has rows (BigQuery's default:
    /// fail unless it is empty).
    pub fn write_disposition(mut self, disposition: WriteDisposition) -> Self {
        self.write_disposition = Some(disposition);
        self
    }

    /// The `jobs.query` request.
    fn request_body(&self, request_id: &str) -> Result<Value> {
        let mut body = self.query_fields()?;
        body["requestId"] = request_id.into();
        body["jobCreationMode"] = if self.job_creation_required {
            "JOB_CREATION_REQUIRED"
        } else {
            "JOB_CREATION_OPTIONAL"
        }
        .into();
        body["formatOptions"] = json!({ "useInt64Timestamp": true });
        body["timeoutMs"] = (self.poll_timeout(Instant::now()).as_millis() as u64).into();
        if let Some(l) = &self.location {
            body["location"] = l.clone().into();
        }
        if self.dry_run {
            body["dryRun"] = true.into();
        }
        if !self.labels.is_empty() {
            body["labels"] = json!(self.labels);
        }
        if let Some(n) = self.page_size {
            body["maxResults"] = n.into();
        }
        Ok(body)
    }

    /// The `jobs.insert` request of a query with a destination table; the job id is the
    /// request id, so a retried insert is recognised.
    fn job_body(&self, job_id: &str, destination: &TableId) -> Result<Value> {
        let mut query = self.query_fields()?;
        query["destinationTable"] = json!({
            "projectId": destination.project,
            "datasetId": destination.dataset,
            "tableId": destination.table,
        });
        if let Some(w) = self.write_disposition {
            query["writeDisposition"] = w.as_str().into();
        }
        let mut job_reference = json!({ "projectId": self.client.inner.project, "jobId": job_id });
        if let Some(l) = &self.location {
            job_reference["location"] = l.clone().into();
        }
        let mut body =
            json!({ "jobReference": job_reference, "configuration": { "query": query } });
        if self.dry_run {
            body["configuration"]["dryRun"] = true.into();
        }
        if !self.labels.is_empty() {
            body["configuration"]["labels"] = json!(self.labels);
        }
        Ok(body)
    }

    fn check_params(&self) -> Result<()> {
        if !self.named.is_empty() && !self.positional.is_empty() {
            return Err(Error::config(
                "a query cannot mix named (@p) and positional (?) parameters",
            ));
        }
        Ok(())
    }

    /// The fields `jobs.query` and a query job's configuration share.
    fn query_fields(&self) -> Result<Value> {
        self.check_params()?;
        let mut body = json!({ "query": self.sql, "useLegacySql": false });
        if !self.named.is_empty() {
            body["parameterMode"] = "NAMED".into();
            body["queryParameters"] = self.named.iter().map(|(n, p)| p.to_json(Some(n))).collect();
        } else if !self.positional.is_empty() {
            body["parameterMode"] = "POSITIONAL".into();
            body["queryParameters"] = self.positional.iter().map(|p| p.to_json(None)).collect();
        }
        if let Some((p, d)) = &self.default_dataset {
            body["defaultDataset"] = json!({ "projectId": p, "datasetId": d });
        }
        if let Some(b) = self.maximum_bytes_billed {
            body["maximumBytesBilled"] = b.to_string().into();
        }
        if let Some(c) = self.use_query_cache {
            body["useQueryCache"] = c.into();
        }
        Ok(body)
    }

    /// Inserts the query as a job writing into `destination`; the page it returns is
    /// "not complete yet", for the polling that follows.
    async fn insert_job(&self, request_id: &str, destination: &str) -> Result<Page> {
        let table = crate::admin::parse_table(&self.client.inner.project, destination)?;
        let job_id = format!("bigq_{}", request_id.replace('-', ""));
        let project = self.client.inner.project.clone();
        let inserted = match self.client.inner.transport {
            Transport::Rest => {
                let body = self.job_body(&job_id, &table)?;
                let path = ["projects", project.as_str(), "jobs"];
                self.client
                    .call::<crate::admin::Job>(Request::post(&path, &body, Idempotent::Yes)?)
                    .await
            }
            Transport::Grpc => Box::pin(self.grpc_insert_job(&job_id, &table)).await,
        };
        let job = match inserted {
            Ok(job) => job,
            // A retried insert that BigQuery already has: the job exists, poll it.
            Err(e) if e.is_already_exists() => {
                let reference = JobReference {
                    project_id: project.clone(),
                    job_id: job_id.clone(),
                    location: self.location.clone(),
                };
                self.client.get_job(&reference).await?
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
            job_complete: Some(self.dry_run),
            ..Default::default()
        };
        Ok(Page {
            stats,
            batches: Vec::new(),
            arrow_schema: None,
        })
    }

    fn poll_timeout(&self, deadline_base: Instant) -> Duration {
        match self.timeout {
            Some(t) => t.saturating_sub(deadline_base.elapsed()).min(POLL_TIMEOUT),
            None => POLL_TIMEOUT,
        }
    }

    /// Retries the whole query (with a new request id) when it fails with a retryable job
    /// error such as `jobBackendError` or `rateLimitExceeded`. Separate from the RPC retries
    /// of the client's [`RetryPolicy`](crate::RetryPolicy); default: 3 attempts.
    pub fn job_retry(mut self, policy: crate::RetryPolicy) -> Self {
        self.job_retry = policy;
        self
    }

    /// Runs the query and waits until it completes; the first page of rows is in the result.
    pub async fn run(self) -> Result<QueryResults> {
        let started = Instant::now();
        let mut attempt = 1;
        loop {
            match self.run_once().await {
                Err(e)
                    if e.kind() == ErrorKind::Job
                        && e.is_retryable()
                        && attempt < self.job_retry.max_attempts
                        && started.elapsed() < self.job_retry.total_timeout =>
                {
                    tracing::debug!(attempt, error = %e, "retrying failed query job");
                    tokio::time::sleep(self.job_retry.backoff(attempt)).await;
                    attempt += 1;
                }
                Err(e) if attempt > 1 => return Err(e.with_attempts(attempt, started.elapsed())),
                other => return other,
            }
        }
    }

    /// One attempt of the query. The calls are boxed futures: unboxed, this future (and
    /// every caller's) would be as large as the largest of them, several kilobytes copied
    /// at each step of the call chain on every query.
    async fn run_once(&self) -> Result<QueryResults> {
        let started = Instant::now();
        let request_id = uuid::Uuid::new_v4().to_string();
        let mut page = match &self.destination {
            Some(dest) => Box::pin(self.insert_job(&request_id, dest)).await?,
            None if self.client.inner.transport == Transport::Grpc => {
                Box::pin(self.grpc_first_page(&request_id, self.poll_timeout(started))).await?
            }
            None => Box::pin(self.rest_first_page(&request_id)).await?,
        };
        while !page.stats.is_complete() && !self.dry_run {
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
                location: job.location.or(self.location.clone()),
                ..job
            };
            let first = std::mem::take(&mut page.stats);
            page = match self.client.inner.transport {
                Transport::Rest => Box::pin(self.rest_poll(&job, wait)).await?,
                Transport::Grpc => {
                    let resp = Box::pin(self.client.grpc_query_results(
                        &job,
                        None,
                        self.page_size,
                        Some(wait),
                    ))
                    .await?;
                    grpc::results_page(*resp, 0)?
                }
            };
            // What only jobs.query says (creation reason, query id) is kept.
            page.stats.fill_from(first);
        }
        let schema = page.stats.schema.clone().unwrap_or_default();
        let arrow_schema = match page.arrow_schema.clone() {
            Some(s) => s,
            None => schema.to_arrow()?,
        };
        Ok(QueryResults {
            // Only a result read on after its first page needs to know.
            ordered: page.stats.page_token.is_some() && has_order_by(&self.sql),
            use_storage_read: self.use_storage_read,
            client: self.client.clone(),
            page_size: self.page_size,
            location: self.location.clone(),
            rows_in_first: page.batches.iter().map(|b| b.num_rows() as u64).sum(),
            stats: page.stats,
            schema,
            arrow_schema,
            batches: page.batches,
        })
    }

    /// `jobs.query`: the first page of the result.
    async fn rest_first_page(&self, request_id: &str) -> Result<Page> {
        let body = self.request_body(request_id)?;
        let project = self.client.inner.project.as_str();
        let path = ["projects", project, "queries"];
        // The request id makes a retried jobs.query safe: BigQuery runs it once.
        let resp = self
            .client
            .send(Request::post(&path, &body, Idempotent::Yes)?)
            .await?;
        read_page(resp, None).await
    }

    /// One `jobs.getQueryResults` poll of `job` (its location filled from the query's),
    /// waiting up to `wait` on the server.
    async fn rest_poll(&self, job: &JobReference, wait: Duration) -> Result<Page> {
        let path = [
            "projects",
            job.project_id.as_str(),
            "queries",
            job.job_id.as_str(),
        ];
        let mut req = Request::get(&path)
            .query("formatOptions.useInt64Timestamp", "true")
            .query("timeoutMs", wait.as_millis());
        if let Some(l) = &job.location {
            req = req.query("location", l);
        }
        if let Some(n) = self.page_size {
            req = req.query("maxResults", n);
        }
        read_page(self.client.send(req).await?, None).await
    }

    /// Runs the query and returns its statistics, for statements that return no rows
    /// (DDL, DML) or when only the statistics matter.
    pub async fn execute(self) -> Result<QueryStats> {
        Ok(self.run().await?.stats)
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

/// A completed query: statistics, schema and the rows (first page in memory, later pages
/// fetched as the rows are consumed).
#[derive(Debug)]
pub struct QueryResults {
    client: Client,
    stats: QueryStats,
    schema: TableSchema,
    arrow_schema: SchemaRef,
    batches: Vec<RecordBatch>,
    rows_in_first: u64,
    page_size: Option<u32>,
    location: Option<String>,
    use_storage_read: bool,
    ordered: bool,
}

impl QueryResults {
    /// The statistics.
    pub fn stats(&self) -> &QueryStats {
        &self.stats
    }

    /// The result schema.
    pub fn schema(&self) -> &TableSchema {
        &self.schema
    }

    /// The Arrow schema of the batches.
    pub fn arrow_schema(&self) -> SchemaRef {
        self.arrow_schema.clone()
    }

    /// Rows in the whole result, when BigQuery says.
    pub fn total_rows(&self) -> Option<u64> {
        self.stats.total_rows
    }

    /// The job, when one was created.
    pub fn job_reference(&self) -> Option<&JobReference> {
        self.stats.job_reference.as_ref()
    }

    /// Whether the rows after the first response will be read through the Storage Read
    /// API (see [`QueryBuilder::use_storage_read`]) rather than REST pages.
    pub fn reads_with_storage_api(&self) -> bool {
        self.storage_read_job().is_some()
    }

    fn storage_read_job(&self) -> Option<JobReference> {
        storage_read_job(
            &self.stats,
            self.use_storage_read && self.client.inner.storage_for_queries,
        )
    }

    /// All rows as a stream of Arrow batches.
    pub fn into_batches(self) -> BatchStream {
        if let Some(job) = self.storage_read_job() {
            let (client, ordered) = (self.client, self.ordered);
            let read = async move {
                destination_read(&client, &job, ordered)
                    .await?
                    .batches()
                    .await
            };
            return BatchStream::storage_read(
                self.arrow_schema,
                futures::stream::once(read).try_flatten().boxed(),
            );
        }
        let token = self.stats.page_token.clone();
        let source = self
            .stats
            .job_reference
            .as_ref()
            .filter(|j| !j.job_id.is_empty())
            .map(|j| PageSource::Query {
                job: JobReference {
                    location: j.location.clone().or(self.location.clone()),
                    ..j.clone()
                },
                page_size: self.page_size,
            });
        BatchStream::after_first_page(
            self.client,
            source,
            (self.schema, self.arrow_schema),
            self.batches,
            token,
            self.rows_in_first,
        )
    }

    /// All rows decoded into `T`.
    pub fn into_rows<T: DeserializeOwned + Send + 'static>(self) -> RowStream<T> {
        if let Some(job) = self.storage_read_job() {
            let (client, ordered) = (self.client, self.ordered);
            let read = async move { destination_read(&client, &job, ordered).await?.rows().await };
            return RowStream::decoded(
                self.arrow_schema,
                futures::stream::once(read).try_flatten().boxed(),
            );
        }
        RowStream::new(self.into_batches())
    }

    /// Collects every row into `T`.
    pub async fn fetch_all<T: DeserializeOwned + Send + 'static>(self) -> Result<Vec<T>> {
        self.into_rows().try_collect().await
    }
}

/// The job whose destination table holds the rows after the first response, when they are
/// read through Storage Read: there are more pages, Storage Read is `allowed` (asked for and
/// the same service as the v2 side), and a job ran.
fn storage_read_job(stats: &QueryStats, allowed: bool) -> Option<JobReference> {
    if !(allowed && stats.page_token.is_some()) {
        return None;
    }
    stats.job_reference.clone().filter(|j| !j.job_id.is_empty())
}

/// A Storage Read of a finished query job's destination table: on one stream, in order, when
/// the query sorts its rows.
async fn destination_read(
    client: &Client,
    job: &JobReference,
    ordered: bool,
) -> Result<crate::read::ReadBuilder> {
    let found = client.get_job(job).await?;
    let table = found.destination_table().ok_or_else(|| {
        Error::new(
            ErrorKind::Decode,
            format!("query job {} has no destination table to read", job.job_id),
        )
    })?;
    let read = client.read_table(table);
    Ok(if ordered {
        read.max_streams(1).ordered()
    } else {
        read
    })
}

/// Whether a query sorts its result (`ORDER BY` anywhere, as the Python client checks):
/// such results are read on one stream to keep their order.
fn has_order_by(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    let mut rest = upper.as_str();
    while let Some(i) = rest.find("ORDER") {
        let after = &rest[i + 5..];
        let trimmed = after.trim_start();
        let word_start = i == 0 || !is_ident(rest.as_bytes()[i - 1]);
        if word_start
            && trimmed.len() < after.len()
            && trimmed.starts_with("BY")
            && trimmed.as_bytes().get(2).is_none_or(|b| !is_ident(*b))
        {
            return true;
        }
        rest = after;
    }
    false
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// One decoded response: its batches and metadata.
struct Page {
    stats: QueryStats,
    batches: Vec<RecordBatch>,
    arrow_schema: Option<SchemaRef>,
}

/// Decodes a `jobs.query` / `jobs.getQueryResults` body as it streams in.
async fn read_page(resp: reqwest::Response, schema: Option<TableSchema>) -> Result<Page> {
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
    Ok(Page {
        stats,
        batches,
        arrow_schema,
    })
}

#[cfg(test)]
mod tests {
    use super::has_order_by;

    #[test]
    fn order_by_is_found_as_words() {
        assert!(has_order_by("SELECT x FROM t ORDER BY x"));
        assert!(has_order_by("select x from t order\n  by x desc"));
        assert!(has_order_by("SELECT ARRAY_AGG(x ORDER BY y) FROM t"));
        assert!(!has_order_by("SELECT x FROM t"));
        assert!(!has_order_by("SELECT border_by FROM t"));
        assert!(!has_order_by("SELECT ORDERBY FROM t"));
        assert!(!has_order_by("SELECT x_order BY_y"));
    }
}

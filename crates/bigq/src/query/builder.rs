//! The query builder and the run of a query: the job retry, the first response, and polling
//! until the query is complete.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tracing::Instrument;
use tracing::field::Empty;

use serde::de::DeserializeOwned;

use super::pages::BatchStream;
use super::params::Param;
use super::request::{QueryRequest, WriteDisposition};
use super::response::{JobReference, QueryStats, ResultPage};
use super::results::QueryResults;
use super::rows::RowStream;
use crate::client::Client;
use crate::error::{Deadline, Error, ErrorKind, Result};
use crate::ids::{IntoDatasetId, IntoTableId, TableId, dataset_id, table_id};
use crate::retry::{self, Failure, RetryPolicy};
use crate::transport::Transport;

/// The longest a single `jobs.query` / `jobs.getQueryResults` call waits on the server.
const POLL_TIMEOUT: Duration = Duration::from_secs(10);

impl Client {
    /// Starts building a GoogleSQL query.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let rows: Vec<(i64, String)> = client
    ///     .query("SELECT 1 AS n, 'one' AS word")
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows, [(1, "one".to_string())]);
    /// # Ok(()) }
    /// ```
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
            request_id: None,
            job_id: None,
            job_statistics: false,
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
    request_id: Option<String>,
    job_id: Option<String>,
    job_statistics: bool,
    job_retry: RetryPolicy,
}

impl QueryBuilder {
    /// Binds the named parameter `@name`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let rows: Vec<(String,)> = client
    ///     .query("SELECT CONCAT(@greeting, ', ', @name)")
    ///     .param("greeting", "Hello")
    ///     .param("name", "Ada")
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows[0].0, "Hello, Ada");
    /// # Ok(()) }
    /// ```
    pub fn param(mut self, name: impl Into<String>, value: impl Into<Param>) -> Self {
        self.request.named.push((name.into(), value.into()));
        self
    }

    /// Binds the next positional parameter `?`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let rows: Vec<(i64,)> = client
    ///     .query("SELECT ? * ?")
    ///     .bind(6i64)
    ///     .bind(7i64)
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows, [(42,)]);
    /// # Ok(()) }
    /// ```
    pub fn bind(mut self, value: impl Into<Param>) -> Self {
        self.request.positional.push(value.into());
        self
    }

    /// The dataset unqualified table names resolve in: a [`DatasetId`](crate::DatasetId),
    /// `dataset` (in the client's project) or `project.dataset`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let names: Vec<(String,)> = client
    ///     .query("SELECT name FROM people WHERE id = 2")
    ///     .default_dataset("ds")
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(names[0].0, "Grace");
    /// # Ok(()) }
    /// ```
    pub fn default_dataset(mut self, dataset: impl IntoDatasetId) -> Self {
        match dataset_id(&self.client.inner.project, dataset) {
            Ok(id) => self.request.default_dataset = Some(id),
            Err(e) => self.invalid = Some(e.message().to_string()),
        }
        self
    }

    /// The location to run in (overrides the client's default).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let results = client.query("SELECT 1").location("US").run().await?;
    /// assert_eq!(results.total_rows(), Some(1));
    /// # Ok(()) }
    /// ```
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.request.location = Some(location.into());
        self
    }

    /// Validates the query and estimates its cost without running it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let dry = client
    ///     .query("SELECT id, name FROM ds.people")
    ///     .dry_run(true)
    ///     .run()
    ///     .await?;
    /// // The schema, and no rows.
    /// assert_eq!(dry.schema().fields[1].name, "name");
    /// assert!(dry.fetch_all::<(i64, String)>().await?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.request.dry_run = dry_run;
        self
    }

    /// Adds a label to the job.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let results = client
    ///     .query("SELECT 1")
    ///     .label("team", "analytics")
    ///     .job_creation_required(true)
    ///     .run()
    ///     .await?;
    /// assert!(results.job_reference().is_some());
    /// # Ok(()) }
    /// ```
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.request.labels.insert(key.into(), value.into());
        self
    }

    /// Fails the query instead of billing more than this many bytes.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let rows: Vec<(i64,)> = client
    ///     .query("SELECT 1")
    ///     .maximum_bytes_billed(10_000_000)
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows, [(1,)]);
    /// # Ok(()) }
    /// ```
    pub fn maximum_bytes_billed(mut self, bytes: i64) -> Self {
        self.request.maximum_bytes_billed = Some(bytes);
        self
    }

    /// Whether cached results may be used (BigQuery's default is yes).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let rows: Vec<(i64,)> = client
    ///     .query("SELECT 2")
    ///     .use_query_cache(false)
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows, [(2,)]);
    /// # Ok(()) }
    /// ```
    pub fn use_query_cache(mut self, yes: bool) -> Self {
        self.request.use_query_cache = Some(yes);
        self
    }

    /// Gives up waiting for the query after this long (the job is not cancelled).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use std::time::Duration;
    /// let rows: Vec<(i64,)> = client
    ///     .query("SELECT 3")
    ///     .timeout(Duration::from_secs(30))
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows, [(3,)]);
    /// # Ok(()) }
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Has BigQuery stop the job after this long (`jobTimeoutMs`); unlike
    /// [`timeout`](Self::timeout), which only stops waiting, the job itself is cancelled
    /// and the query fails with a timeout error.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use std::time::Duration;
    /// let rows: Vec<(i64,)> = client
    ///     .query("SELECT 4")
    ///     .job_timeout(Duration::from_secs(60))
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows, [(4,)]);
    /// # Ok(()) }
    /// ```
    pub fn job_timeout(mut self, timeout: Duration) -> Self {
        self.request.job_timeout = Some(timeout);
        self
    }

    /// The `requestId` of `jobs.query`, instead of a new UUID: sending the same query again
    /// with the same id (within BigQuery's 15 minutes) returns the first run's job instead of
    /// running it twice. The job retry makes no further attempts under a caller's id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let first = client
    ///     .query("SELECT 5")
    ///     .job_creation_required(true)
    ///     .request_id("nightly-report-2026-01-01")
    ///     .run()
    ///     .await?;
    /// let again = client
    ///     .query("SELECT 5")
    ///     .job_creation_required(true)
    ///     .request_id("nightly-report-2026-01-01")
    ///     .run()
    ///     .await?;
    /// assert_eq!(first.job_reference(), again.job_reference());
    /// # Ok(()) }
    /// ```
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Runs the query as a job with this id (`jobs.insert`), instead of `jobs.query`
    /// choosing one. A second job with the same id fails with an "already exists" error;
    /// the job retry makes no further attempts under a caller's id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let results = client.query("SELECT 6").job_id("my_job_6").run().await?;
    /// assert_eq!(results.job_reference().unwrap().job_id, "my_job_6");
    /// let job = client.get_job(results.job_reference().unwrap()).await?;
    /// assert_eq!(job.query(), Some("SELECT 6"));
    /// # Ok(()) }
    /// ```
    pub fn job_id(mut self, id: impl Into<String>) -> Self {
        self.job_id = Some(id.into());
        self
    }

    /// Whether to read the job's final statistics (one `jobs.get` once the query is done),
    /// so that [`QueryStats`] has bytes billed, slot time, cache hit, DML counts, the
    /// referenced tables and the statement type whichever call answered the query.
    /// [`execute`](Self::execute) always does; so does every query while a `tracing`
    /// subscriber records bigq's spans. A query answered without a job (short query mode)
    /// has only what `jobs.query` reports.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let results = client
    ///     .query("SELECT name FROM ds.people")
    ///     .job_creation_required(true)
    ///     .job_statistics(true)
    ///     .run()
    ///     .await?;
    /// let stats = results.stats();
    /// assert_eq!(stats.statement_type.as_deref(), Some("SELECT"));
    /// assert_eq!(stats.referenced_tables[0].to_string(), format!("{}.ds.people", emulator.project()));
    /// assert!(stats.total_bytes_billed.unwrap() > 0);
    /// # Ok(()) }
    /// ```
    pub fn job_statistics(mut self, yes: bool) -> Self {
        self.job_statistics = yes;
        self
    }

    /// Whether to always create a job. By default (`false`) queries run in short query mode
    /// (`JOB_CREATION_OPTIONAL`), where BigQuery may answer without one.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let results = client
    ///     .query("SELECT 1")
    ///     .job_creation_required(true)
    ///     .run()
    ///     .await?;
    /// let job = results.job_reference().expect("a job was created");
    /// assert!(client.get_job(job).await?.is_done());
    /// # Ok(()) }
    /// ```
    pub fn job_creation_required(mut self, yes: bool) -> Self {
        self.request.job_creation_required = yes;
        self
    }

    /// Rows per page (BigQuery's default is up to 10 MB per page).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// // Three rows, one per page: every page is read.
    /// let rows: Vec<(i64, String)> = client
    ///     .query("SELECT id, name FROM ds.people ORDER BY id")
    ///     .page_size(1)
    ///     .use_storage_read(false)
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows.len(), 3);
    /// assert_eq!(rows[2].1, "Linus");
    /// # Ok(()) }
    /// ```
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
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let sql = "SELECT n FROM UNNEST(GENERATE_ARRAY(1, 100)) AS n";
    /// // More than one page: read through Storage Read (the default) or paged.
    /// let results = client.query(sql).page_size(10).run().await?;
    /// assert!(results.reads_with_storage_api());
    /// let paged = client.query(sql).page_size(10).use_storage_read(false).run().await?;
    /// assert!(!paged.reads_with_storage_api());
    /// let mut rows: Vec<(i64,)> = paged.fetch_all().await?;
    /// rows.sort();
    /// assert_eq!(rows.len(), 100);
    /// # Ok(()) }
    /// ```
    pub fn use_storage_read(mut self, yes: bool) -> Self {
        self.use_storage_read = yes;
        self
    }

    /// Writes the result into this table (a [`TableId`](crate::TableId), `dataset.table` or
    /// `project.dataset.table`), creating it if needed. The query then runs as a job
    /// (`jobs.insert`), and its rows are read back from that table like any other result.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let stats = client
    ///     .query("SELECT id * 10 AS id FROM ds.people")
    ///     .destination_table("ds.tens")
    ///     .execute()
    ///     .await?;
    /// assert!(stats.job_reference.is_some());
    /// let mut rows: Vec<(i64,)> = client.read_table_data("ds.tens").fetch_all().await?;
    /// rows.sort();
    /// assert_eq!(rows, [(10,), (20,), (30,)]);
    /// # Ok(()) }
    /// ```
    pub fn destination_table(mut self, table: impl IntoTableId) -> Self {
        match table_id(&self.client.inner.project, table) {
            Ok(id) => self.destination = Some(id),
            Err(e) => self.invalid = Some(e.message().to_string()),
        }
        self
    }

    /// What to do when the destination table already has rows (BigQuery's default:
    /// fail unless it is empty).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// use bigq::query::WriteDisposition;
    /// for _ in 0..2 {
    ///     client
    ///         .query("SELECT name FROM ds.people")
    ///         .destination_table("ds.names")
    ///         .write_disposition(WriteDisposition::Append)
    ///         .execute()
    ///         .await?;
    /// }
    /// let count: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.names").fetch_all().await?;
    /// assert_eq!(count, [(6,)]);
    /// # Ok(()) }
    /// ```
    pub fn write_disposition(mut self, disposition: WriteDisposition) -> Self {
        self.request.write_disposition = Some(disposition);
        self
    }

    /// Retries the whole query (with a new request id) when it fails with a retryable job
    /// error such as `jobBackendError` or `rateLimitExceeded`. Separate from the RPC retries
    /// of the client's [`RetryPolicy`]; default: 3 attempts.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use bigq::RetryPolicy;
    /// // An invalid query is not a retryable job error: one attempt.
    /// let e = client
    ///     .query("SELEC 1")
    ///     .job_retry(RetryPolicy::default().with_max_attempts(5))
    ///     .run()
    ///     .await
    ///     .unwrap_err();
    /// assert!(e.is_invalid_query() && e.attempts() == 1);
    /// # Ok(()) }
    /// ```
    pub fn job_retry(mut self, policy: RetryPolicy) -> Self {
        self.job_retry = policy;
        self
    }

    /// Runs the query and waits until it completes; the first page of rows is in the result.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let results = client.query("SELECT id, name FROM ds.people ORDER BY id").run().await?;
    /// assert_eq!(results.total_rows(), Some(3));
    /// assert_eq!(results.schema().fields[0].name, "id");
    /// let rows: Vec<(i64, String)> = results.fetch_all().await?;
    /// assert_eq!(rows[0], (1, "Ada".to_string()));
    /// # Ok(()) }
    /// ```
    pub async fn run(self) -> Result<QueryResults> {
        // Ids and cost only: never the SQL text or a parameter value.
        let span = tracing::info_span!(
            "bigq.query",
            project = self.request.project.as_str(),
            transport = match self.client.transport() {
                Transport::Grpc => "grpc",
                _ => "rest",
            },
            job_id = Empty,
            location = Empty,
            statement_type = Empty,
            total_bytes_processed = Empty,
            total_bytes_billed = Empty,
            total_slot_ms = Empty,
            cache_hit = Empty,
            rows = Empty,
            dml_affected_rows = Empty,
            attempts = Empty,
            error = Empty,
        );
        // A subscriber that records the span gets the cost: one jobs.get when needed.
        let statistics = self.job_statistics || !span.is_disabled();
        let this = &self;
        // Under the caller's ids a new attempt would find the failed job again.
        let policy = if self.request_id.is_some() || self.job_id.is_some() {
            RetryPolicy {
                max_attempts: 1,
                ..self.job_retry.clone()
            }
        } else {
            self.job_retry.clone()
        };
        let attempts = AtomicU32::new(0);
        let attempts = &attempts;
        let result = retry::run(&policy, "query job", move || async move {
            attempts.fetch_add(1, Ordering::Relaxed);
            this.run_once(statistics).await.map_err(|e| Failure {
                retryable: e.kind() == ErrorKind::Job && e.is_retryable(),
                error: e,
            })
        })
        .instrument(span.clone())
        .await;
        span.record("attempts", attempts.load(Ordering::Relaxed));
        match &result {
            Ok(results) => record_stats(&span, results.stats()),
            Err(e) => {
                span.record("error", tracing::field::display(e));
            }
        }
        result
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
    async fn run_once(&self, statistics: bool) -> Result<QueryResults> {
        if let Some(why) = &self.invalid {
            return Err(Error::config(why.clone()));
        }
        let started = Instant::now();
        let api = &self.client.inner.api;
        let request_id = match &self.request_id {
            Some(id) => id.clone(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        let mut page = match (&self.destination, &self.job_id) {
            (Some(_), _) | (_, Some(_)) => {
                let job_id = match &self.job_id {
                    Some(id) => id.clone(),
                    None => format!("bigq_{}", request_id.replace('-', "")),
                };
                Box::pin(self.insert_job(&job_id, self.destination.as_ref())).await?
            }
            (None, None) => {
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
                return Err(Error::deadline_passed(
                    Deadline::Total,
                    t,
                    &format!("query job {} did not finish", job.job_id),
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
        if statistics && !self.request.dry_run {
            Box::pin(self.read_job_statistics(&mut page.stats)).await?;
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

    /// Completes `stats` from the job's final statistics (one `jobs.get`); a query answered
    /// without a job keeps what its response said.
    async fn read_job_statistics(&self, stats: &mut QueryStats) -> Result<()> {
        let Some(job) = stats
            .job_reference
            .as_ref()
            .filter(|j| !j.job_id.is_empty())
        else {
            return Ok(());
        };
        let job = JobReference {
            location: job.location.clone().or(self.request.location.clone()),
            ..job.clone()
        };
        let job = self.client.inner.api.get_job(&job).await?;
        stats.fill_from_job(&job);
        Ok(())
    }

    /// Inserts the query as the job `job_id`, writing into `destination` when given; the
    /// page it returns is "not complete yet", for the polling that follows.
    async fn insert_job(&self, job_id: &str, destination: Option<&TableId>) -> Result<ResultPage> {
        let api = &self.client.inner.api;
        let job = match api
            .insert_query_job(&self.request, job_id, destination)
            .await
        {
            Ok(job) => job,
            // A retried insert that BigQuery already has: the job exists, poll it. Under
            // the caller's id it may be another job: that is the caller's error, as in the
            // Python client.
            Err(e) if e.is_already_exists() && self.job_id.is_none() => {
                let reference = JobReference {
                    project_id: self.request.project.clone(),
                    job_id: job_id.to_string(),
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
    /// (DDL, DML) or when only the statistics matter; the job's final statistics are read
    /// ([`job_statistics`](Self::job_statistics)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let stats = client
    ///     .query("DELETE FROM ds.people WHERE id > 1")
    ///     .execute()
    ///     .await?;
    /// assert_eq!(stats.num_dml_affected_rows, Some(2));
    /// # Ok(()) }
    /// ```
    pub async fn execute(mut self) -> Result<QueryStats> {
        self.job_statistics = true;
        Ok(self.run().await?.into_stats())
    }

    /// Runs the query and streams its rows as `T`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// use futures::TryStreamExt;
    /// #[derive(serde::Deserialize)]
    /// struct Person {
    ///     id: i64,
    ///     name: String,
    /// }
    /// let mut rows = client.query("SELECT id, name FROM ds.people ORDER BY id").rows::<Person>().await?;
    /// let mut names = Vec::new();
    /// while let Some(p) = rows.try_next().await? {
    ///     names.push(format!("{} {}", p.id, p.name));
    /// }
    /// assert_eq!(names, ["1 Ada", "2 Grace", "3 Linus"]);
    /// # Ok(()) }
    /// ```
    pub async fn rows<T: DeserializeOwned + Send + 'static>(self) -> Result<RowStream<T>> {
        Ok(self.run().await?.into_rows())
    }

    /// Runs the query and streams its rows as Arrow batches.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let batches = client
    ///     .query("SELECT id FROM ds.people")
    ///     .batches()
    ///     .await?
    ///     .try_collect()
    ///     .await?;
    /// let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    /// assert_eq!(rows, 3);
    /// # Ok(()) }
    /// ```
    pub async fn batches(self) -> Result<BatchStream> {
        Ok(self.run().await?.into_batches())
    }

    /// Runs the query and collects every row as `T`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// #[derive(serde::Deserialize, Debug, PartialEq)]
    /// struct Person {
    ///     id: i64,
    ///     name: Option<String>,
    /// }
    /// let people: Vec<Person> = client
    ///     .query("SELECT id, name FROM ds.people WHERE id = @id")
    ///     .param("id", 3i64)
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(people, [Person { id: 3, name: Some("Linus".into()) }]);
    /// # Ok(()) }
    /// ```
    pub async fn fetch_all<T: DeserializeOwned + Send + 'static>(self) -> Result<Vec<T>> {
        self.rows().await?.try_collect().await
    }
}

/// A query's ids and cost on its span.
fn record_stats(span: &tracing::Span, stats: &QueryStats) {
    if let Some(job) = &stats.job_reference {
        span.record("job_id", job.job_id.as_str());
        if let Some(l) = &job.location {
            span.record("location", l.as_str());
        }
    }
    if let Some(l) = &stats.location {
        span.record("location", l.as_str());
    }
    if let Some(t) = &stats.statement_type {
        span.record("statement_type", t.as_str());
    }
    let numbers = [
        ("total_bytes_processed", stats.total_bytes_processed),
        ("total_bytes_billed", stats.total_bytes_billed),
        ("total_slot_ms", stats.total_slot_ms),
        ("dml_affected_rows", stats.num_dml_affected_rows),
    ];
    for (field, value) in numbers {
        if let Some(v) = value {
            span.record(field, v);
        }
    }
    if let Some(c) = stats.cache_hit {
        span.record("cache_hit", c);
    }
    if let Some(r) = stats.total_rows {
        span.record("rows", r);
    }
}

//! The front door: [`EmulatorBuilder`] binds the REST and gRPC ports over one state and
//! [`Emulator`] is the running server.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bigq_codec::schema::TableFieldSchema;
use datafusion::arrow::record_batch::RecordBatch;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::catalog::{Catalog, Table, TableRef};
use crate::error::BqError;
use crate::faults::{FaultSpec, Faults};
use crate::gcs::Gcs;
use crate::memory::{self, Expiry, Memory};
use crate::rest::ReadTimeouts;
use crate::state::AppState;
use crate::{grpc, jobs, rest, sql};

/// The default of [`EmulatorBuilder::with_job_timeout_floor`].
const DEFAULT_JOB_TIMEOUT_FLOOR: Duration = Duration::from_secs(10);

/// Configures and starts an [`Emulator`].
#[derive(Clone, Debug)]
pub struct EmulatorBuilder {
    host: IpAddr,
    port: u16,
    grpc_port: u16,
    project: String,
    query_delay: Duration,
    job_timeout_floor: Duration,
    data_dir: Option<PathBuf>,
    gcs_dir: Option<PathBuf>,
    faults: FaultSpec,
    read_timeouts: ReadTimeouts,
    memory_budget: usize,
    expiry: Expiry,
}

impl Default for EmulatorBuilder {
    fn default() -> Self {
        EmulatorBuilder {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            grpc_port: 0,
            project: "test-project".to_string(),
            query_delay: Duration::ZERO,
            job_timeout_floor: DEFAULT_JOB_TIMEOUT_FLOOR,
            data_dir: None,
            gcs_dir: None,
            faults: FaultSpec::default(),
            read_timeouts: ReadTimeouts::default(),
            memory_budget: memory::DEFAULT_BUDGET,
            expiry: Expiry::default(),
        }
    }
}

impl EmulatorBuilder {
    /// The address to bind (loopback by default).
    pub fn with_host(mut self, host: IpAddr) -> Self {
        self.host = host;
        self
    }

    /// The port to bind (0, the default, picks a free one).
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The port of the Storage API (gRPC) server, on the same host (0, the default, picks a
    /// free one).
    pub fn with_grpc_port(mut self, port: u16) -> Self {
        self.grpc_port = port;
        self
    }

    /// The default project (`test-project` unless set). Any project id is accepted on
    /// the wire; this is the one [`Emulator::project`] reports.
    pub fn with_project(mut self, project: impl Into<String>) -> Self {
        self.project = project.into();
        self
    }

    /// An artificial delay before each query job runs, so that tests can exercise
    /// `jobComplete: false` and polling.
    pub fn with_query_delay(mut self, delay: Duration) -> Self {
        self.query_delay = delay;
        self
    }

    /// How long a job runs before its `jobTimeoutMs` may stop it: 10 s unless set. BigQuery
    /// documents the timeout as best effort ("a job that takes more than 60 seconds to
    /// complete has a better chance of being stopped than a job that takes 10 seconds"), and
    /// a job of 3.5 s with a 1 ms timeout is recorded completing; so a job stops at the later
    /// of its timeout and this floor, reported as having timed out after its timeout. Tests
    /// of timeouts set it to zero.
    pub fn with_job_timeout_floor(mut self, floor: Duration) -> Self {
        self.job_timeout_floor = floor;
        self
    }

    /// Keeps datasets, tables and rows in `dir` (created if missing) so they survive a
    /// restart: what an earlier run left there is loaded at start, and every committed
    /// change is written before the request that made it is answered. Without it (the
    /// default) everything lives in memory. See the crate docs for the format.
    pub fn with_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Serves `gs://bucket/object` URIs from `dir/bucket/object`: load jobs read their
    /// `sourceUris` there (a `*` matches any run of characters). Without it
    /// (the default) a job naming a `gs://` URI fails with an error saying so.
    pub fn with_gcs_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.gcs_dir = Some(dir.into());
        self
    }

    /// How long the REST server waits for a request's headers and body (30 s and 60 s by
    /// default) before it drops the connection.
    pub fn with_read_timeouts(mut self, timeouts: ReadTimeouts) -> Self {
        self.read_timeouts = timeouts;
        self
    }

    /// The bytes the emulator may hold beyond its tables (2 GiB by default): query results,
    /// read sessions' encoded rows and write streams' pending rows. Past it, the encodings
    /// kept for sessions to come go first, then the rows of the least recently used query
    /// results. Each query also runs under a DataFusion memory pool of this size, so one
    /// query fails with `resourcesExceeded` instead of taking the machine.
    pub fn with_memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = bytes;
        self
    }

    /// How long results, read streams and write streams live once no longer needed.
    pub fn with_expiry(mut self, expiry: Expiry) -> Self {
        self.expiry = expiry;
        self
    }

    /// Faults armed from the start (as `POST /emulator/v1/faults` arms them later).
    pub fn with_faults(mut self, spec: FaultSpec) -> Self {
        self.faults = spec;
        self
    }

    /// Binds the REST and gRPC ports and starts serving both.
    pub async fn start(self) -> std::io::Result<Emulator> {
        let faults = Arc::new(Faults::default());
        faults
            .arm(&self.faults)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let listener = TcpListener::bind(SocketAddr::new(self.host, self.port)).await?;
        let addr = listener.local_addr()?;
        let grpc_listener = TcpListener::bind(SocketAddr::new(self.host, self.grpc_port)).await?;
        let grpc_addr = grpc_listener.local_addr()?;
        let base_url = format!("http://{addr}");
        let catalog = match &self.data_dir {
            Some(dir) => Catalog::open(dir)?,
            None => Catalog::new(),
        };
        catalog.write().add_project(&self.project);
        let state = Arc::new(AppState {
            engine: sql::exec::Engine::with_memory_limit(catalog.clone(), self.memory_budget),
            catalog: catalog.clone(),
            jobs: jobs::JobStore::default(),
            query_delay: self.query_delay,
            job_timeout_floor: self.job_timeout_floor,
            base_url: base_url.clone(),
            sessions: Default::default(),
            insert_ids: Default::default(),
            memory: Memory::new(self.memory_budget, self.expiry),
            gcs: Gcs::new(self.gcs_dir.clone()),
        });
        let read = Arc::new(grpc::read::ReadService::new(state.clone(), faults.clone()));
        let write = Arc::new(grpc::write::WriteService::new(
            state.clone(),
            faults.clone(),
        ));
        let grpc_router = grpc::Router::new(read.clone(), write.clone(), state.clone());
        let sweeper = Sweeper {
            state: state.clone(),
            read,
            write,
        };
        let app = rest::router(state, faults.clone());
        let read_timeouts = self.read_timeouts;
        let (tx, rx) = watch::channel(false);
        let mut rest_rx = rx.clone();
        let mut sweep_rx = rx.clone();
        let mut grpc_rx = rx;
        let swept = sweeper.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = tokio::time::sleep(memory::SWEEP_EVERY) => {
                        swept.sweep();
                    }
                    _ = sweep_rx.wait_for(|stop| *stop) => return,
                }
            }
        });
        let rest = tokio::spawn(async move {
            rest::serve(listener, app, read_timeouts, async move {
                let _ = rest_rx.wait_for(|stop| *stop).await;
            })
            .await;
        });
        let grpc = tokio::spawn(async move {
            let _ = grpc::serve(grpc_listener, grpc_router, async move {
                let _ = grpc_rx.wait_for(|stop| *stop).await;
            })
            .await;
        });
        let task = tokio::spawn(async move {
            let _ = tokio::join!(rest, grpc);
        });
        Ok(Emulator {
            addr,
            grpc_addr,
            project: self.project,
            catalog,
            faults,
            sweeper,
            shutdown: Some(tx),
            task: Some(task),
        })
    }
}

/// What frees expired results, read streams and write streams, and counts what they hold.
#[derive(Clone, Debug)]
struct Sweeper {
    state: Arc<AppState>,
    read: Arc<grpc::read::ReadService>,
    write: Arc<grpc::write::WriteService>,
}

impl Sweeper {
    /// One sweep; the bytes held after it.
    fn sweep(&self) -> usize {
        let m = &self.state.memory;
        let written = self.write.sweep(&m.expiry);
        let read = self.read.sweep(&m.expiry, m.budget.saturating_sub(written));
        m.set_storage_bytes(read + written);
        self.state.trim_results();
        read + written + self.state.jobs.result_bytes()
    }
}

/// A running emulator. Dropping it stops the server too; [`Emulator::shutdown`] waits
/// for in-flight requests.
#[derive(Debug)]
pub struct Emulator {
    addr: SocketAddr,
    grpc_addr: SocketAddr,
    project: String,
    catalog: Arc<Catalog>,
    faults: Arc<Faults>,
    sweeper: Sweeper,
    shutdown: Option<watch::Sender<bool>>,
    task: Option<JoinHandle<()>>,
}

impl Emulator {
    /// A builder with loopback, a free port and project `test-project`.
    pub fn builder() -> EmulatorBuilder {
        EmulatorBuilder::default()
    }

    /// Starts an emulator with the defaults.
    pub async fn start() -> std::io::Result<Emulator> {
        Self::builder().start().await
    }

    /// The REST base URL, e.g. `http://127.0.0.1:40123` (paths start `/bigquery/v2/`).
    pub fn rest_endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The Storage API (gRPC, plaintext HTTP/2) endpoint, e.g. `http://127.0.0.1:40124`.
    pub fn grpc_endpoint(&self) -> String {
        format!("http://{}", self.grpc_addr)
    }

    /// The bound address of the gRPC server.
    pub fn grpc_addr(&self) -> SocketAddr {
        self.grpc_addr
    }

    /// The bytes held now by query results, read sessions' encoded rows and write
    /// streams' pending rows, after freeing what has expired (the figure the memory budget
    /// bounds).
    pub fn memory_in_use(&self) -> usize {
        self.sweeper.sweep()
    }

    /// The fault hooks, to make the Storage API fail on purpose in tests.
    pub fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The default project id.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// Creates table `table` of the existing dataset `dataset` in `project` with `schema`
    /// and the rows of `batches`, whose columns are the schema's in its order, typed as the
    /// emulator keeps them (INT64 as Int64, STRING as Utf8, NUMERIC as Decimal128(38, 9),
    /// TIMESTAMP as microseconds in UTC, ...; a REQUIRED column not nullable): for tests
    /// that seed more rows, or batches of a chosen size, than a query makes quickly.
    pub fn create_table_with_batches(
        &self,
        project: &str,
        dataset: &str,
        table: &str,
        schema: Vec<TableFieldSchema>,
        batches: Vec<RecordBatch>,
    ) -> Result<(), BqError> {
        let mut t = Table::new(schema)?;
        t.batches = batches
            .into_iter()
            .map(|b| {
                RecordBatch::try_new(t.arrow_schema.clone(), b.columns().to_vec())
                    .map_err(|e| BqError::invalid(format!("The rows do not match the schema: {e}")))
            })
            .collect::<Result<_, _>>()?;
        self.catalog
            .update(|w| w.create_table(&TableRef::new(project, dataset, table), t, false))
    }

    /// Stops accepting connections and waits for the server to finish; with a data
    /// directory, its files are then synced to the disk.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(true);
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.flush_data_dir();
    }

    fn flush_data_dir(&self) {
        if let Err(e) = self.catalog.flush() {
            eprintln!("bigq-emulator: cannot sync the data directory: {e}");
        }
    }

    /// Runs until the server stops (for the binary).
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(true);
            self.flush_data_dir();
        }
    }
}

//! # bigq-emulator
//!
//! A local BigQuery: the REST v2 API answered with BigQuery's exact shapes, over a real
//! SQL engine (Apache DataFusion, with GoogleSQL parsed in BigQuery's dialect and mapped
//! onto it). Runs in-process for tests or as the `bigq-emulator` binary.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let emu = bigq_emulator::Emulator::builder()
//!     .with_project("test-project")
//!     .start()
//!     .await?;
//! println!("REST endpoint: {}", emu.rest_endpoint());
//! println!("Storage API (gRPC) endpoint: {}", emu.grpc_endpoint());
//! emu.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! ## Keeping data across restarts
//!
//! In memory by default. With [`EmulatorBuilder::with_data_dir`] (`--data-dir DIR` for the
//! binary) datasets, tables (schema, metadata) and rows are kept in a directory and loaded
//! again at the next start:
//!
//! - `DIR/catalog.json`: projects, datasets and tables with their schemas and metadata, no
//!   rows; rewritten whole (temporary file + rename) when any of it changes;
//! - `DIR/tables/{project}/{dataset}/{table}/{generation}-{sequence}.arrows`: the rows as
//!   Arrow IPC streams in the table's Arrow layout. A commit that only adds rows (DML
//!   `INSERT`, `insertAll`, a Storage Write append, commit or flush) adds one segment; one
//!   that changes existing rows (`UPDATE`, `DELETE`, `MERGE`, `TRUNCATE`, `ALTER TABLE`,
//!   `CREATE OR REPLACE`) writes the table as a new generation and deletes the old one.
//!   `DROP TABLE` deletes the table's folder.
//!
//! Files are written (temporary name, then rename) while the change commits, before the
//! request that made it is answered, so a crash of the emulator loses at most the requests
//! in flight; shutdown ([`Emulator::shutdown`], dropping the [`Emulator`], SIGINT or SIGTERM
//! for the binary) syncs them to the disk. Storage Write streams that are not yet committed
//! (PENDING before `BatchCommitWriteStreams`, BUFFERED rows not flushed) and query jobs
//! live in memory only.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let emu = bigq_emulator::Emulator::builder()
//!     .with_data_dir("/tmp/bigq-emulator-data")
//!     .start()
//!     .await?;
//! // ... create tables, write rows ...
//! emu.shutdown().await; // the next start on the same directory sees them again
//! # Ok(())
//! # }
//! ```
//!
//! Layout: `catalog` holds projects, datasets and tables (Arrow batches in memory, and the
//! data directory in `catalog/persist.rs`);
//! `sql/` parses, rewrites and runs GoogleSQL; `jobs` keeps query jobs; `rest/` is the
//! HTTP surface and the row encoder; `api/` the operations both wires share; `grpc/` serves
//! the Storage API (Read and Write) and the v2 Job, Dataset and Table services on its own port.
#![warn(missing_docs)]

pub mod api;
pub mod catalog;
pub mod error;
pub mod grpc;
pub mod jobs;
pub mod rest;
pub mod sql;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use crate::catalog::Catalog;
pub use crate::error::BqError;
pub use crate::grpc::Faults;

/// Configures and starts an [`Emulator`].
#[derive(Clone, Debug)]
pub struct EmulatorBuilder {
    host: IpAddr,
    port: u16,
    grpc_port: u16,
    project: String,
    query_delay: Duration,
    data_dir: Option<PathBuf>,
}

impl Default for EmulatorBuilder {
    fn default() -> Self {
        EmulatorBuilder {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            grpc_port: 0,
            project: "test-project".to_string(),
            query_delay: Duration::ZERO,
            data_dir: None,
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

    /// Keeps datasets, tables and rows in `dir` (created if missing) so they survive a
    /// restart: what an earlier run left there is loaded at start, and every committed
    /// change is written before the request that made it is answered. Without it (the
    /// default) everything lives in memory. See the crate docs for the format.
    pub fn with_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Binds the REST and gRPC ports and starts serving both.
    pub async fn start(self) -> std::io::Result<Emulator> {
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
        let state = Arc::new(rest::AppState {
            engine: sql::engine::Engine::new(catalog.clone()),
            catalog: catalog.clone(),
            jobs: jobs::JobStore::default(),
            query_delay: self.query_delay,
            base_url: base_url.clone(),
            sessions: Default::default(),
        });
        let faults = Arc::new(Faults::default());
        let grpc_router = grpc::Router::new(
            Arc::new(grpc::read::ReadService::new(state.clone(), faults.clone())),
            Arc::new(grpc::write::WriteService::new(
                state.clone(),
                faults.clone(),
            )),
            state.clone(),
        );
        let app = rest::router(state);
        let (tx, rx) = watch::channel(false);
        let mut rest_rx = rx.clone();
        let mut grpc_rx = rx;
        let rest = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
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
            shutdown: Some(tx),
            task: Some(task),
        })
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

    /// The catalog, for seeding data directly.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
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

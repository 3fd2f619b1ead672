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
//! emu.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Layout: `catalog` holds projects, datasets and tables (Arrow batches in memory);
//! `sql/` parses, rewrites and runs GoogleSQL; `jobs` keeps query jobs; `rest/` is the
//! HTTP surface and the row encoder.
#![warn(missing_docs)]

pub mod catalog;
pub mod error;
pub mod jobs;
pub mod rest;
pub mod sql;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use crate::catalog::Catalog;
pub use crate::error::BqError;

/// Configures and starts an [`Emulator`].
#[derive(Clone, Debug)]
pub struct EmulatorBuilder {
    host: IpAddr,
    port: u16,
    project: String,
    query_delay: Duration,
}

impl Default for EmulatorBuilder {
    fn default() -> Self {
        EmulatorBuilder {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            project: "test-project".to_string(),
            query_delay: Duration::ZERO,
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

    /// Binds the port and starts serving.
    pub async fn start(self) -> std::io::Result<Emulator> {
        let listener = TcpListener::bind(SocketAddr::new(self.host, self.port)).await?;
        let addr = listener.local_addr()?;
        let base_url = format!("http://{addr}");
        let catalog = Catalog::new();
        catalog.write().add_project(&self.project);
        let state = Arc::new(rest::AppState {
            engine: sql::engine::Engine::new(catalog.clone()),
            catalog: catalog.clone(),
            jobs: jobs::JobStore::default(),
            query_delay: self.query_delay,
            base_url: base_url.clone(),
        });
        let app = rest::router(state);
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(Emulator {
            addr,
            project: self.project,
            catalog,
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
    project: String,
    catalog: Arc<Catalog>,
    shutdown: Option<oneshot::Sender<()>>,
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

    /// Stops accepting connections and waits for the server to finish.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
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
            let _ = tx.send(());
        }
    }
}

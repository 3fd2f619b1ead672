//! The state the REST and gRPC surfaces share: the catalog, the SQL engine over it, query
//! jobs and sessions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::catalog::Catalog;
use crate::gcs::Gcs;
use crate::insert_ids::InsertIds;
use crate::jobs::JobStore;
use crate::memory::Memory;
use crate::sql::exec::Engine;
use crate::sql::names::TempScope;

/// Shared server state.
#[derive(Debug)]
pub struct AppState {
    /// The catalog.
    pub catalog: Arc<Catalog>,
    /// The SQL engine.
    pub engine: Engine,
    /// Jobs.
    pub jobs: JobStore,
    /// An artificial delay before each query job runs, to let tests exercise polling.
    pub query_delay: Duration,
    /// How long a job runs before its `jobTimeoutMs` can stop it (see
    /// [`EmulatorBuilder::with_job_timeout_floor`](crate::EmulatorBuilder::with_job_timeout_floor)).
    pub job_timeout_floor: Duration,
    /// The base URL, for `selfLink`s.
    pub base_url: String,
    /// Sessions (`createSession`), by id: where their temporary tables live.
    pub sessions: Mutex<HashMap<String, TempScope>>,
    /// The `insertId`s `tabledata.insertAll` wrote recently.
    pub insert_ids: InsertIds,
    /// The memory budget and time limits.
    pub memory: Memory,
    /// Where `gs://` URIs are served from.
    pub gcs: Gcs,
}

impl AppState {
    /// Expires query results beyond their time or the budget (after a job finishes, and on
    /// every sweep).
    pub fn trim_results(&self) {
        let e = &self.memory.expiry;
        self.jobs.trim(
            self.memory.results_budget(),
            e.job_results,
            e.max_jobs,
            e.request_ids,
        );
    }
}

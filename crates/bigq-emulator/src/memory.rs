//! What the emulator keeps in memory beyond the tables, and how it is bounded: query
//! results, Storage Read sessions (their encoded rows) and Storage Write streams (rows not
//! yet in their table) expire after a time ([`Expiry`]), and are held within a byte budget
//! (`--memory-budget-mb`, [`EmulatorBuilder::with_memory_budget`](crate::EmulatorBuilder::with_memory_budget)):
//! when they exceed it the encodings kept for sessions to come are dropped first, then the
//! rows of the least recently used query results (the job still answers `jobs.get`; its
//! rows are gone as an expired result's are). Queries run under DataFusion's memory pool of
//! the same size.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use datafusion::arrow::array::{Array, RecordBatch};

/// The bytes the rows of `batches` take. A batch sliced from a larger one (a query's
/// result pages, a `SELECT *` of a stored table) shares its buffers and counts only the part
/// it shows: its buffers' whole capacity would count the same bytes once per slice.
pub fn batches_bytes<'a>(batches: impl IntoIterator<Item = &'a RecordBatch>) -> usize {
    batches
        .into_iter()
        .flat_map(|b| b.columns())
        .map(|c| {
            c.to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| c.get_array_memory_size())
        })
        .sum()
}

/// The default budget: 2 GiB.
pub const DEFAULT_BUDGET: usize = 2 << 30;

/// How long things live once they are no longer needed.
#[derive(Clone, Copy, Debug)]
pub struct Expiry {
    /// A query result's rows, after the job ends (BigQuery keeps them 24 hours).
    pub job_results: Duration,
    /// The most jobs remembered (the oldest finished are forgotten first).
    pub max_jobs: usize,
    /// A `requestId`, after the request that first carried it.
    pub request_ids: Duration,
    /// A read stream read to its end.
    pub read_done: Duration,
    /// A read stream nobody reads (BigQuery keeps a read session for six hours; the emulator
    /// frees an idle one sooner).
    pub read_idle: Duration,
    /// A write stream once finalized or committed.
    pub write_done: Duration,
    /// A write stream nobody writes to or looks at.
    pub write_idle: Duration,
}

impl Default for Expiry {
    fn default() -> Self {
        Expiry {
            job_results: Duration::from_secs(24 * 3600),
            max_jobs: 10_000,
            request_ids: Duration::from_secs(3600),
            read_done: Duration::from_secs(60),
            read_idle: Duration::from_secs(3600),
            write_done: Duration::from_secs(600),
            write_idle: Duration::from_secs(6 * 3600),
        }
    }
}

/// The budget, and what the Storage services held at their last count.
#[derive(Debug)]
pub struct Memory {
    /// The byte budget.
    pub budget: usize,
    /// The time limits.
    pub expiry: Expiry,
    /// Bytes held by read sessions and write streams, as last counted.
    storage_bytes: AtomicUsize,
}

impl Memory {
    /// A budget of `budget` bytes with these time limits.
    pub fn new(budget: usize, expiry: Expiry) -> Memory {
        Memory {
            budget,
            expiry,
            storage_bytes: AtomicUsize::new(0),
        }
    }

    /// Records what the Storage services hold now.
    pub fn set_storage_bytes(&self, n: usize) {
        self.storage_bytes.store(n, Ordering::Relaxed);
    }

    /// What is left for query results.
    pub fn results_budget(&self) -> usize {
        self.budget
            .saturating_sub(self.storage_bytes.load(Ordering::Relaxed))
    }
}

/// How often expired things are swept.
pub const SWEEP_EVERY: Duration = Duration::from_millis(500);

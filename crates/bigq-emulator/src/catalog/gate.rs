//! Commit gates: work that may be stopped before it ends (a query job that can be cancelled
//! or time out) runs under a gate, and every catalog commit it makes asks the gate first.
//! A gate that refuses undoes the change, so a stopped job changes nothing more.

use std::future::Future;
use std::sync::Arc;

use crate::error::BqResult;

/// Decides whether the work running under it may still commit to the catalog.
pub trait CommitGate: Send + Sync + std::fmt::Debug {
    /// Runs `commit` (which makes the change durable) if the work may still change the
    /// catalog, under whatever lock keeps that decision true until it returns; otherwise
    /// the error that explains why not, and `commit` is not run.
    fn commit(&self, commit: &mut dyn FnMut() -> BqResult<()>) -> BqResult<()>;
}

tokio::task_local! {
    static GATE: Arc<dyn CommitGate>;
}

/// Runs `f` with every catalog commit it makes asking `gate` first.
pub async fn gated<F: Future>(gate: Arc<dyn CommitGate>, f: F) -> F::Output {
    GATE.scope(gate, f).await
}

/// Runs `f` (synchronous) with every catalog commit it makes asking `gate` first.
pub fn gated_sync<T>(gate: Arc<dyn CommitGate>, f: impl FnOnce() -> T) -> T {
    GATE.sync_scope(gate, f)
}

/// The gate of the work running now, if any.
pub(super) fn current() -> Option<Arc<dyn CommitGate>> {
    GATE.try_with(Arc::clone).ok()
}

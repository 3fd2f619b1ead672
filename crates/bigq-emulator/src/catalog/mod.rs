//! The catalog: projects → datasets → tables, with BigQuery schemas and Arrow data in
//! memory, and the DataFusion providers that let SQL see it (catalog = project,
//! schema = dataset).

mod gate;
mod handle;
mod model;
mod persist;
mod providers;
mod reshape;

pub use gate::{CommitGate, gated, gated_sync};
pub use handle::{Catalog, WriteGuard};
pub use model::{Dataset, Table, TableKind, TableRef, now_millis};
pub use reshape::reshape;

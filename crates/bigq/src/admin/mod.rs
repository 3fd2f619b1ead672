//! Datasets, tables (and keeping one in step with a Rust type: [`TableSync`]), jobs,
//! `tabledata.list` and `tabledata.insertAll`: the resources, and the client's calls on
//! them. The calls go over the client's transport (REST or the v2
//! gRPC services); `tabledata.list` and `tabledata.insertAll` have no gRPC form and are
//! always REST.

mod datasets;
mod jobs;
mod plan;
pub(crate) mod proto;
mod sync;
mod table_options;
mod tabledata;
mod tables;

pub use crate::ids::{DatasetId, IntoDatasetId, IntoTableId, TableId};
pub use crate::paging::ListStream;
pub use datasets::{Dataset, DatasetListItem};
pub use jobs::{Job, JobError, JobState, JobStatistics, ListJobs, QueryJobStatistics};
pub use plan::{PlanAction, Refusal, RefusalReason, SchemaChange, TablePlan};
pub use sync::{SyncOutcome, TableSync};
pub use table_options::{
    Clustering, ColumnReference, ForeignKey, MaterializedViewDefinition, PartitionRange,
    PartitionUnit, PrimaryKey, RangePartitioning, TableConstraints, TimePartitioning,
    ViewDefinition,
};
pub use tabledata::{InsertError, TableDataBuilder};
pub use tables::{Table, TableListItem};

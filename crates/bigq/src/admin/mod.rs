//! Datasets, tables, jobs, `tabledata.list` and `tabledata.insertAll`: the resources, and
//! the client's calls on them. The calls go over the client's transport (REST or the v2
//! gRPC services); `tabledata.list` and `tabledata.insertAll` have no gRPC form and are
//! always REST.

mod datasets;
mod jobs;
pub(crate) mod proto;
mod table_options;
mod tabledata;
mod tables;

pub use crate::ids::{DatasetId, IntoDatasetId, IntoTableId, TableId};
pub use crate::paging::ListStream;
pub use datasets::{Dataset, DatasetListItem};
pub use jobs::{Job, JobError, JobState, JobStatistics, ListJobs, QueryJobStatistics};
pub use table_options::{
    Clustering, ColumnReference, ForeignKey, MaterializedViewDefinition, PartitionRange,
    PartitionUnit, PrimaryKey, RangePartitioning, TableConstraints, TimePartitioning,
    ViewDefinition,
};
pub use tabledata::{InsertError, TableDataBuilder};
pub use tables::{Table, TableListItem};

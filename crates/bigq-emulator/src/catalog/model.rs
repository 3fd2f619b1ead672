//! What the catalog holds: table references, tables (schema, metadata, Arrow batches),
//! datasets, and the projects they belong to.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bigq_codec::schema::TableFieldSchema;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;

use crate::error::BqResult;
use crate::sql::types;

/// Milliseconds since the epoch, as BigQuery reports creation times.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A table's address.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableRef {
    /// Project id.
    pub project: String,
    /// Dataset id.
    pub dataset: String,
    /// Table id.
    pub table: String,
}

impl TableRef {
    /// The table `table` of dataset `dataset` in project `project`.
    pub fn new(
        project: impl Into<String>,
        dataset: impl Into<String>,
        table: impl Into<String>,
    ) -> TableRef {
        TableRef {
            project: project.into(),
            dataset: dataset.into(),
            table: table.into(),
        }
    }
}

impl fmt::Display for TableRef {
    /// BigQuery's `project:dataset.table` form used in error messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}.{}", self.project, self.dataset, self.table)
    }
}

/// Whether a catalog entry is a table or a view.
#[derive(Clone, Debug)]
pub enum TableKind {
    /// A table with data.
    Table,
    /// A view, with its defining GoogleSQL query.
    View {
        /// The view's query text.
        query: String,
    },
}

/// A table: its BigQuery schema and its rows as Arrow batches in the canonical layout.
#[derive(Clone, Debug)]
pub struct Table {
    /// BigQuery columns.
    pub schema: Vec<TableFieldSchema>,
    /// The Arrow schema the batches follow.
    pub arrow_schema: SchemaRef,
    /// The rows.
    pub batches: Vec<RecordBatch>,
    /// Table or view.
    pub kind: TableKind,
    /// Creation time, ms since the epoch.
    pub creation_time: i64,
    /// Last modification time, ms since the epoch.
    pub last_modified_time: i64,
    /// Description.
    pub description: Option<String>,
    /// The resource's other settable fields as the client set them, by their REST names
    /// (`timePartitioning`, `rangePartitioning`, `requirePartitionFilter`, `clustering`,
    /// `tableConstraints` with the primary and foreign keys, `labels`, `friendlyName`,
    /// `expirationTime`, `defaultCollation`, `defaultRoundingMode`, `maxStaleness`,
    /// `materializedView`), returned exactly as set.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Counts the resource's changes, so that two changes within a millisecond still have
    /// different etags.
    pub generation: u64,
}

impl Table {
    /// An empty table with this schema.
    pub fn new(schema: Vec<TableFieldSchema>) -> BqResult<Table> {
        let arrow_schema = Arc::new(types::arrow_schema(&schema)?);
        let now = now_millis();
        Ok(Table {
            schema,
            arrow_schema,
            batches: Vec::new(),
            kind: TableKind::Table,
            creation_time: now,
            last_modified_time: now,
            description: None,
            options: serde_json::Map::new(),
            generation: 0,
        })
    }

    /// The resource's etag: it changes with every change of the table.
    pub fn etag(&self) -> String {
        crate::api::etag(self.last_modified_time ^ ((self.generation as i64) << 42))
    }

    /// The number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// An approximate size in bytes.
    pub fn num_bytes(&self) -> usize {
        crate::memory::batches_bytes(&self.batches)
    }
}

/// A dataset.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Tables by id.
    pub tables: BTreeMap<String, Arc<Table>>,
    /// Creation time, ms since the epoch.
    pub creation_time: i64,
    /// Last modification time, ms since the epoch.
    pub last_modified_time: i64,
    /// Location (`US` unless given).
    pub location: String,
    /// Description.
    pub description: Option<String>,
    /// Friendly name.
    pub friendly_name: Option<String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// The resource's other settable fields as the client set them, by their REST names
    /// (`defaultTableExpirationMs`, `defaultPartitionExpirationMs`, `isCaseInsensitive`,
    /// `maxTimeTravelHours`, `defaultRoundingMode`, `defaultCollation`), returned as set.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Counts the resource's changes, for etags that differ within a millisecond.
    pub generation: u64,
    /// Routines (persistent functions) by id, each as its REST resource: the fields the
    /// client set, with `routineReference`, `creationTime` and `lastModifiedTime`.
    pub routines: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
}

impl Dataset {
    /// An empty dataset in `location`.
    pub fn new(location: Option<String>) -> Dataset {
        let now = now_millis();
        Dataset {
            tables: BTreeMap::new(),
            creation_time: now,
            last_modified_time: now,
            location: location.unwrap_or_else(|| "US".to_string()),
            description: None,
            friendly_name: None,
            labels: BTreeMap::new(),
            options: serde_json::Map::new(),
            generation: 0,
            routines: BTreeMap::new(),
        }
    }

    /// The resource's etag: it changes with every change of the dataset's own fields.
    pub fn etag(&self) -> String {
        crate::api::etag(self.last_modified_time ^ ((self.generation as i64) << 42))
    }
}

#[derive(Clone, Default, Debug)]
pub(super) struct State {
    pub(super) projects: BTreeMap<String, BTreeMap<String, Dataset>>,
}

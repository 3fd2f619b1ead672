//! The options of a table resource: partitioning, clustering, constraints, views and
//! materialized views, as BigQuery's REST `Table` resource names them.

use serde::{Deserialize, Serialize};

/// A table's address in a resource (`tableReference`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableReference {
    pub(crate) project_id: String,
    pub(crate) dataset_id: String,
    pub(crate) table_id: String,
}

/// The unit of time partitioning (`timePartitioning.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PartitionUnit {
    /// One partition an hour.
    Hour,
    /// One partition a day.
    Day,
    /// One partition a month.
    Month,
    /// One partition a year.
    Year,
}

/// Time partitioning (`timePartitioning`): by a DATE, DATETIME or TIMESTAMP column, or by
/// ingestion time when no column is named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TimePartitioning {
    /// The unit.
    #[serde(rename = "type")]
    pub unit: PartitionUnit,
    /// The partitioning column; `None` partitions by ingestion time (`_PARTITIONTIME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// How long a partition is kept, in milliseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "bigq_codec::int64_text::opt_i64"
    )]
    pub expiration_ms: Option<i64>,
}

impl TimePartitioning {
    /// Partitions by `unit` of ingestion time.
    pub fn ingestion_time(unit: PartitionUnit) -> Self {
        TimePartitioning {
            unit,
            field: None,
            expiration_ms: None,
        }
    }

    /// Partitions by `unit` of a DATE, DATETIME or TIMESTAMP column.
    pub fn by_column(unit: PartitionUnit, column: impl Into<String>) -> Self {
        TimePartitioning {
            field: Some(column.into()),
            ..Self::ingestion_time(unit)
        }
    }

    /// Partitions expire this long (milliseconds) after their time.
    pub fn with_expiration_ms(mut self, ms: i64) -> Self {
        self.expiration_ms = Some(ms);
        self
    }
}

/// Integer-range partitioning (`rangePartitioning`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RangePartitioning {
    /// The INT64 partitioning column.
    pub field: String,
    /// The partitions' bounds.
    pub range: PartitionRange,
}

/// The bounds of integer-range partitions: `[start, end)` in steps of `interval`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PartitionRange {
    /// The first partition's start (inclusive).
    #[serde(with = "bigq_codec::int64_text::i64_text")]
    pub start: i64,
    /// The last partition's end (exclusive).
    #[serde(with = "bigq_codec::int64_text::i64_text")]
    pub end: i64,
    /// Each partition's width.
    #[serde(with = "bigq_codec::int64_text::i64_text")]
    pub interval: i64,
}

impl RangePartitioning {
    /// Partitions by `column` over `[start, end)`, `interval` wide each.
    pub fn new(column: impl Into<String>, start: i64, end: i64, interval: i64) -> Self {
        RangePartitioning {
            field: column.into(),
            range: PartitionRange {
                start,
                end,
                interval,
            },
        }
    }
}

/// Clustering (`clustering`): up to four top-level columns, in order.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Clustering {
    /// The clustering columns.
    #[serde(default)]
    pub fields: Vec<String>,
}

/// Primary and foreign keys (`tableConstraints`); BigQuery does not enforce them.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TableConstraints {
    /// The primary key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_key: Option<PrimaryKey>,
    /// The foreign keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<ForeignKey>,
}

/// A primary key's columns.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PrimaryKey {
    /// The columns, in order.
    #[serde(default)]
    pub columns: Vec<String>,
}

/// A foreign key: columns of this table referencing columns of another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ForeignKey {
    /// The constraint's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The referenced table.
    pub(crate) referenced_table: TableReference,
    /// The column pairs.
    #[serde(default)]
    pub column_references: Vec<ColumnReference>,
}

impl ForeignKey {
    /// `columns` (this table's, referenced table's) referencing `project.dataset.table`.
    pub fn new(
        name: impl Into<String>,
        referenced: &crate::TableId,
        columns: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) -> Self {
        ForeignKey {
            name: Some(name.into()),
            referenced_table: TableReference {
                project_id: referenced.project.clone(),
                dataset_id: referenced.dataset.clone(),
                table_id: referenced.table.clone(),
            },
            column_references: columns
                .into_iter()
                .map(|(from, to)| ColumnReference {
                    referencing_column: from.into(),
                    referenced_column: to.into(),
                })
                .collect(),
        }
    }

    /// The referenced table.
    pub fn referenced_table(&self) -> crate::TableId {
        let r = &self.referenced_table;
        crate::TableId::new(&r.project_id, &r.dataset_id, &r.table_id)
    }
}

/// One column pair of a foreign key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ColumnReference {
    /// This table's column.
    pub referencing_column: String,
    /// The referenced table's column.
    pub referenced_column: String,
}

/// A logical view (`view`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ViewDefinition {
    /// The view's query.
    pub query: String,
    /// Legacy SQL rather than GoogleSQL; bigq sends `false` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_legacy_sql: Option<bool>,
}

/// A materialized view (`materializedView`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MaterializedViewDefinition {
    /// The view's query.
    pub query: String,
    /// Whether BigQuery refreshes it when the base tables change (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_refresh: Option<bool>,
    /// The most frequent refresh, in milliseconds (default 1 800 000).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "bigq_codec::int64_text::opt_i64"
    )]
    pub refresh_interval_ms: Option<i64>,
    /// Allows a query that cannot be refreshed incrementally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_non_incremental_definition: Option<bool>,
    /// When it was last refreshed, milliseconds since the epoch (read-only).
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub last_refresh_time: Option<i64>,
}

impl MaterializedViewDefinition {
    /// A materialized view of `query`, with BigQuery's default refresh.
    pub fn new(query: impl Into<String>) -> Self {
        MaterializedViewDefinition {
            query: query.into(),
            enable_refresh: None,
            refresh_interval_ms: None,
            allow_non_incremental_definition: None,
            last_refresh_time: None,
        }
    }

    /// Refreshes at most every `ms` milliseconds, or never when `None`.
    pub fn with_refresh(mut self, every_ms: Option<i64>) -> Self {
        self.enable_refresh = Some(every_ms.is_some());
        self.refresh_interval_ms = every_ms;
        self
    }
}

use std::collections::BTreeMap;

use bigq_codec::schema::{RoundingMode, TableSchema};
use serde::{Deserialize, Serialize};

pub(crate) use super::table_options::TableReference;
use super::table_options::{
    Clustering, ForeignKey, MaterializedViewDefinition, PrimaryKey, RangePartitioning,
    TableConstraints, TimePartitioning, ViewDefinition,
};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::ids::{IntoDatasetId, IntoTableId, dataset_id, table_id};
use crate::paging::{ListStream, Pages};

/// A table (the REST `Table` resource, the fields bigq knows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Table {
    pub(crate) table_reference: TableReference,
    /// The schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<TableSchema>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// A friendly name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friendly_name: Option<String>,
    /// When the table is deleted, milliseconds since the epoch.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "bigq_codec::int64_text::opt_i64"
    )]
    pub expiration_time: Option<i64>,
    /// Time partitioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_partitioning: Option<TimePartitioning>,
    /// Integer-range partitioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_partitioning: Option<RangePartitioning>,
    /// Queries must filter on the partitioning column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_partition_filter: Option<bool>,
    /// Clustering columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clustering: Option<Clustering>,
    /// Primary and foreign keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_constraints: Option<TableConstraints>,
    /// The collation of new STRING columns (`und:ci` or `""`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_collation: Option<String>,
    /// The rounding mode of new NUMERIC and BIGNUMERIC columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_rounding_mode: Option<RoundingMode>,
    /// How stale cached reads may be, as a BigQuery INTERVAL in its canonical text
    /// (`"0-0 0 0:30:0"`, thirty minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_staleness: Option<String>,
    /// A logical view's definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewDefinition>,
    /// A materialized view's definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub materialized_view: Option<MaterializedViewDefinition>,
    /// The resource's version: [`Client::patch_table`] and [`Client::update_table`] send it
    /// so that a table changed meanwhile is not overwritten.
    #[serde(default, skip_serializing)]
    pub etag: Option<String>,
    /// Last modification time, milliseconds since the epoch.
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub last_modified_time: Option<i64>,
    /// `TABLE`, `VIEW`, `EXTERNAL`, ...
    #[serde(default, rename = "type", skip_serializing)]
    pub table_type: Option<String>,
    /// Rows in the table (not counting the streaming buffer).
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_u64::deserialize"
    )]
    pub num_rows: Option<u64>,
    /// Bytes in the table.
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub num_bytes: Option<i64>,
    /// The location.
    #[serde(default, skip_serializing)]
    pub location: Option<String>,
    /// Creation time, milliseconds since the epoch.
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub creation_time: Option<i64>,
}

impl Table {
    /// A table to create: `id` is `dataset.table` or `project.dataset.table`.
    pub fn new(id: impl Into<String>, schema: TableSchema) -> Self {
        let id = id.into();
        let parts: Vec<&str> = id.split('.').collect();
        let (p, d, t) = match parts.as_slice() {
            [p, d, t] => (p.to_string(), d.to_string(), t.to_string()),
            [d, t] => (String::new(), d.to_string(), t.to_string()),
            _ => (String::new(), String::new(), id.clone()),
        };
        Table {
            table_reference: TableReference {
                project_id: p,
                dataset_id: d,
                table_id: t,
            },
            schema: Some(schema),
            description: None,
            labels: BTreeMap::new(),
            friendly_name: None,
            expiration_time: None,
            time_partitioning: None,
            range_partitioning: None,
            require_partition_filter: None,
            clustering: None,
            table_constraints: None,
            default_collation: None,
            default_rounding_mode: None,
            max_staleness: None,
            view: None,
            materialized_view: None,
            etag: None,
            last_modified_time: None,
            table_type: None,
            num_rows: None,
            num_bytes: None,
            location: None,
            creation_time: None,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// A logical view of a GoogleSQL query: `id` as in [`Table::new`].
    pub fn view(id: impl Into<String>, query: impl Into<String>) -> Self {
        let mut t = Table::new(id, TableSchema::default());
        t.schema = None;
        t.view = Some(ViewDefinition {
            query: query.into(),
            use_legacy_sql: Some(false),
        });
        t
    }

    /// A materialized view: `id` as in [`Table::new`].
    pub fn materialized_view(
        id: impl Into<String>,
        definition: MaterializedViewDefinition,
    ) -> Self {
        let mut t = Table::new(id, TableSchema::default());
        t.schema = None;
        t.materialized_view = Some(definition);
        t
    }

    /// Sets a label.
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Sets the friendly name.
    pub fn with_friendly_name(mut self, name: impl Into<String>) -> Self {
        self.friendly_name = Some(name.into());
        self
    }

    /// Deletes the table at this time, milliseconds since the epoch.
    pub fn with_expiration_time(mut self, ms: i64) -> Self {
        self.expiration_time = Some(ms);
        self
    }

    /// Partitions by time.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// use bigq::admin::{PartitionUnit, Table, TimePartitioning};
    /// use bigq::schema::{FieldType, TableFieldSchema, TableSchema};
    /// let schema = TableSchema::new(vec![
    ///     TableFieldSchema::new("day", FieldType::Date),
    ///     TableFieldSchema::new("customer", FieldType::String),
    /// ]);
    /// let table = Table::new("ds.orders", schema)
    ///     .with_time_partitioning(
    ///         TimePartitioning::by_column(PartitionUnit::Day, "day").with_expiration_ms(86_400_000),
    ///     )
    ///     .with_require_partition_filter(true)
    ///     .with_clustering(["customer"])
    ///     .with_label("team", "sales");
    /// client.create_table(table.clone()).await?;
    /// let got = client.get_table("ds.orders").await?;
    /// assert_eq!(got.time_partitioning, table.time_partitioning);
    /// assert_eq!(got.clustering, table.clustering);
    /// assert_eq!(got.require_partition_filter, Some(true));
    /// assert_eq!(got.labels["team"], "sales");
    /// # Ok(()) }
    /// ```
    pub fn with_time_partitioning(mut self, p: TimePartitioning) -> Self {
        self.time_partitioning = Some(p);
        self
    }

    /// Partitions by ranges of an INT64 column.
    pub fn with_range_partitioning(mut self, p: RangePartitioning) -> Self {
        self.range_partitioning = Some(p);
        self
    }

    /// Requires queries to filter on the partitioning column.
    pub fn with_require_partition_filter(mut self, yes: bool) -> Self {
        self.require_partition_filter = Some(yes);
        self
    }

    /// Clusters by these columns, in order.
    pub fn with_clustering<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.clustering = Some(Clustering {
            fields: columns.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// Sets the primary key.
    pub fn with_primary_key<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.table_constraints
            .get_or_insert_with(TableConstraints::default)
            .primary_key = Some(PrimaryKey {
            columns: columns.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// Adds a foreign key.
    pub fn with_foreign_key(mut self, key: ForeignKey) -> Self {
        self.table_constraints
            .get_or_insert_with(TableConstraints::default)
            .foreign_keys
            .push(key);
        self
    }

    /// Sets the default collation of STRING columns.
    pub fn with_default_collation(mut self, collation: impl Into<String>) -> Self {
        self.default_collation = Some(collation.into());
        self
    }

    /// Sets the default rounding mode of NUMERIC and BIGNUMERIC columns.
    pub fn with_default_rounding_mode(mut self, mode: RoundingMode) -> Self {
        self.default_rounding_mode = Some(mode);
        self
    }

    /// Sets the maximum staleness, an INTERVAL's canonical text.
    pub fn with_max_staleness(mut self, interval: impl Into<String>) -> Self {
        self.max_staleness = Some(interval.into());
        self
    }

    /// The project.
    pub fn project(&self) -> &str {
        &self.table_reference.project_id
    }

    /// The dataset.
    pub fn dataset_id(&self) -> &str {
        &self.table_reference.dataset_id
    }

    /// The table id.
    pub fn table_id(&self) -> &str {
        &self.table_reference.table_id
    }
}

/// A table as `tables.list` returns it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TableListItem {
    pub(crate) table_reference: TableReference,
    /// `TABLE`, `VIEW`, ...
    #[serde(default, rename = "type")]
    pub table_type: Option<String>,
}

impl TableListItem {
    /// The table id.
    pub fn table_id(&self) -> &str {
        &self.table_reference.table_id
    }
}

impl Client {
    /// Creates a table with a schema. A table without a project is created in the
    /// client's.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// use bigq::admin::Table;
    /// use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// let schema = TableSchema::new(vec![
    ///     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    ///     TableFieldSchema::new("name", FieldType::String),
    /// ]);
    /// let table = client.create_table(Table::new("ds.people", schema)).await?;
    /// assert_eq!((table.dataset_id(), table.table_id()), ("ds", "people"));
    /// assert_eq!(table.schema.unwrap().fields.len(), 2);
    /// # Ok(()) }
    /// ```
    pub async fn create_table(&self, mut table: Table) -> Result<Table> {
        if table.table_reference.project_id.is_empty() {
            table.table_reference.project_id = self.inner.project.clone();
        }
        if table.table_reference.dataset_id.is_empty() {
            return Err(Error::config(
                "a table to create needs a dataset: use dataset.table",
            ));
        }
        self.inner.api.create_table(table).await
    }

    /// Gets a table (its schema, row count, ...): a [`TableId`](crate::TableId),
    /// `dataset.table` (in the client's project) or `project.dataset.table`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// use bigq::TableId;
    /// let table = client.get_table("ds.people").await?;
    /// assert_eq!(table.num_rows, Some(3));
    /// let same = client.get_table(TableId::new(client.project(), "ds", "people")).await?;
    /// assert_eq!(same.schema, table.schema);
    /// assert!(client.get_table("ds.missing").await.unwrap_err().is_not_found());
    /// # Ok(()) }
    /// ```
    pub async fn get_table(&self, id: impl IntoTableId) -> Result<Table> {
        let id = table_id(&self.inner.project, id)?;
        self.inner.api.get_table(&id).await
    }

    /// Changes the fields `table` sets (`tables.patch`), leaving the others as they are.
    /// When `table` carries an [`etag`](Table::etag) (it does when it came from
    /// [`get_table`](Client::get_table)), a table changed since is not overwritten: the call
    /// fails with [`Error::is_precondition_failed`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client.query("CREATE TABLE ds.people (id INT64, name STRING)").execute().await?;
    /// let read = client.get_table("ds.people").await?;
    /// let mut mine = read.clone();
    /// mine.description = Some("everyone".into());
    /// let patched = client.patch_table(mine).await?;
    /// assert_eq!(patched.description.as_deref(), Some("everyone"));
    /// assert_ne!(patched.etag, read.etag);
    ///
    /// // Another change from the first read is refused, not lost.
    /// let stale = read.with_label("owner", "someone-else");
    /// assert!(client.patch_table(stale).await.unwrap_err().is_precondition_failed());
    /// # Ok(()) }
    /// ```
    pub async fn patch_table(&self, table: Table) -> Result<Table> {
        self.write_table(table, false).await
    }

    /// Replaces the table resource (`tables.update`): a field `table` leaves out is
    /// cleared. Sends the etag as [`patch_table`](Client::patch_table) does.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client.query("CREATE TABLE ds.people (id INT64, name STRING)").execute().await?;
    /// let mut table = client.get_table("ds.people").await?.with_label("team", "a");
    /// table = client.update_table(table).await?;
    /// table.labels.clear();
    /// table.friendly_name = Some("People".into());
    /// let updated = client.update_table(table).await?;
    /// assert!(updated.labels.is_empty());
    /// assert_eq!(updated.friendly_name.as_deref(), Some("People"));
    /// # Ok(()) }
    /// ```
    pub async fn update_table(&self, table: Table) -> Result<Table> {
        self.write_table(table, true).await
    }

    async fn write_table(&self, mut table: Table, replace: bool) -> Result<Table> {
        if table.table_reference.project_id.is_empty() {
            table.table_reference.project_id = self.inner.project.clone();
        }
        if table.table_reference.dataset_id.is_empty() {
            return Err(Error::config(
                "a table to change needs a dataset: use dataset.table",
            ));
        }
        self.inner.api.patch_table(table, replace).await
    }

    /// Deletes a table.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// client.delete_table("ds.people").await?;
    /// assert!(client.get_table("ds.people").await.unwrap_err().is_not_found());
    /// # Ok(()) }
    /// ```
    pub async fn delete_table(&self, id: impl IntoTableId) -> Result<()> {
        let id = table_id(&self.inner.project, id)?;
        self.inner.api.delete_table(&id).await
    }

    /// Lists the tables of a dataset (a [`DatasetId`](crate::DatasetId), `dataset` or
    /// `project.dataset`). Pages are fetched as the stream is read; a dataset id that does
    /// not parse is the stream's one item.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// let tables = client.list_tables("ds").try_collect().await?;
    /// let names: Vec<&str> = tables.iter().map(|t| t.table_id()).collect();
    /// assert_eq!(names, ["people"]);
    /// # Ok(()) }
    /// ```
    pub fn list_tables(&self, dataset: impl IntoDatasetId) -> ListStream<TableListItem> {
        let id = match dataset_id(&self.inner.project, dataset) {
            Ok(id) => id,
            Err(e) => return ListStream::failed(e),
        };
        let api = self.inner.api.clone();
        ListStream::new(Pages::lazy(None, move |token| {
            let (api, id) = (api.clone(), id.clone());
            async move { api.list_tables(&id, token).await }
        }))
    }
}

use std::collections::BTreeMap;

use bigq_codec::schema::TableSchema;
use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::ids::{IntoDatasetId, IntoTableId, dataset_id, table_id};
use crate::paging::{ListStream, Pages};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableReference {
    pub(crate) project_id: String,
    pub(crate) dataset_id: String,
    pub(crate) table_id: String,
}

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

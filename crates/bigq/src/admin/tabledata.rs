use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::client::Client;
use crate::client::rest::{Idempotent, Request};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{IntoTableId, TableId, table_id};
use crate::query::pages::{BatchStream, PageSource, rest_pages};
use crate::query::rows::RowStream;

impl Client {
    /// Reads a table's rows through `tabledata.list`, decoded by the same streaming decoder
    /// as query results. `tabledata.list` has no gRPC form: this is REST whatever the
    /// client's transport.
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
    /// let mut rows: Vec<(i64, String)> = client.read_table_data("ds.people").fetch_all().await?;
    /// rows.sort();
    /// assert_eq!(rows[1], (2, "Grace".to_string()));
    /// # Ok(()) }
    /// ```
    pub fn read_table_data(&self, table: impl IntoTableId) -> TableDataBuilder {
        TableDataBuilder {
            client: self.clone(),
            table: table_id(&self.inner.project, table),
            page_size: None,
            selected_fields: None,
            start_index: None,
        }
    }

    /// Streams rows into a table with `tabledata.insertAll`. Each row is serialized to JSON
    /// with serde; every row gets an insert id so a retried request does not duplicate rows.
    /// Rows BigQuery rejects are reported by index in the error. `tabledata.insertAll` has
    /// no gRPC form: this is REST whatever the client's transport.
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
    /// #[derive(serde::Serialize)]
    /// struct Person {
    ///     id: i64,
    ///     name: &'static str,
    /// }
    /// client
    ///     .insert_rows("ds.people", &[Person { id: 4, name: "Barbara" }])
    ///     .await?;
    /// let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// assert_eq!(n, [(4,)]);
    /// # Ok(()) }
    /// ```
    pub async fn insert_rows<T: Serialize>(
        &self,
        table: impl IntoTableId,
        rows: &[T],
    ) -> Result<()> {
        let id = table_id(&self.inner.project, table)?;
        let batch = uuid::Uuid::new_v4();
        let rows = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let json = serde_json::to_value(r).map_err(|e| {
                    Error::new(
                        ErrorKind::Encode,
                        format!("row {i} cannot be encoded as JSON: {e}"),
                    )
                })?;
                Ok(json!({ "insertId": format!("{batch}-{i}"), "json": json }))
            })
            .collect::<Result<Vec<_>>>()?;
        let body = json!({ "rows": rows });
        let path = [
            "projects",
            id.project.as_str(),
            "datasets",
            id.dataset.as_str(),
            "tables",
            id.table.as_str(),
            "insertAll",
        ];
        let resp: Value = self
            .inner
            .rest
            .call(Request::post(&path, &body, Idempotent::Yes)?)
            .await?;
        let errors: Vec<InsertError> = resp
            .get("insertErrors")
            .and_then(|e| e.as_array())
            .map(|a| a.iter().map(InsertError::from_json).collect())
            .unwrap_or_default();
        let Some(first) = errors.first() else {
            return Ok(());
        };
        let mut e = Error::api(
            200,
            first.reason.clone(),
            format!(
                "{} of {} rows were rejected; row {}: {}",
                errors.len(),
                rows.len(),
                first.index,
                first.message
            ),
        );
        e = e.with_source(InsertErrors(errors));
        Err(e)
    }
}

/// A row `tabledata.insertAll` rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertError {
    /// The index of the row in the caller's slice.
    pub index: u64,
    /// BigQuery's reason (`invalid`, `stopped`, ...).
    pub reason: Option<String>,
    /// BigQuery's message.
    pub message: String,
    /// The field, when BigQuery names one.
    pub location: Option<String>,
}

impl InsertError {
    fn from_json(v: &Value) -> InsertError {
        let index = v
            .get("index")
            .and_then(|i| i.as_u64().or_else(|| i.as_str()?.parse().ok()))
            .unwrap_or(0);
        let first = v
            .get("errors")
            .and_then(|e| e.as_array())
            .and_then(|a| a.first());
        InsertError {
            index,
            reason: first
                .and_then(|e| e.get("reason"))
                .and_then(|r| r.as_str())
                .map(str::to_string),
            message: first
                .and_then(|e| e.get("message"))
                .and_then(|r| r.as_str())
                .unwrap_or("rejected")
                .to_string(),
            location: first
                .and_then(|e| e.get("location"))
                .and_then(|r| r.as_str())
                .map(str::to_string),
        }
    }
}

#[derive(Debug)]
struct InsertErrors(Vec<InsertError>);

impl std::fmt::Display for InsertErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "row {}: {}", e.index, e.message)?;
            if let Some(l) = &e.location {
                write!(f, " (field {l})")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for InsertErrors {}

/// Reads a table through `tabledata.list`; finish with [`batches`](Self::batches),
/// [`rows`](Self::rows) or [`fetch_all`](Self::fetch_all).
#[must_use]
#[derive(Debug)]
pub struct TableDataBuilder {
    client: Client,
    table: Result<TableId>,
    page_size: Option<u32>,
    selected_fields: Option<Vec<String>>,
    start_index: Option<u64>,
}

impl TableDataBuilder {
    /// Rows per page.
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
    /// let rows: Vec<(i64, String)> = client.read_table_data("ds.people").page_size(1).fetch_all().await?;
    /// assert_eq!(rows.len(), 3);
    /// # Ok(()) }
    /// ```
    pub fn page_size(mut self, rows: u32) -> Self {
        self.page_size = Some(rows);
        self
    }

    /// Only these columns (top-level names).
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
    /// let mut names: Vec<(String,)> = client
    ///     .read_table_data("ds.people")
    ///     .selected_fields(["name"])
    ///     .fetch_all()
    ///     .await?;
    /// names.sort();
    /// assert_eq!(names[0].0, "Ada");
    /// # Ok(()) }
    /// ```
    pub fn selected_fields<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.selected_fields = Some(fields.into_iter().map(Into::into).collect());
        self
    }

    /// Starts at this row.
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
    /// let rest: Vec<(i64, String)> = client.read_table_data("ds.people").start_index(1).fetch_all().await?;
    /// assert_eq!(rest.len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn start_index(mut self, row: u64) -> Self {
        self.start_index = Some(row);
        self
    }

    /// Streams the rows as Arrow batches.
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
    /// let batches = client.read_table_data("ds.people").batches().await?.try_collect().await?;
    /// assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    /// # Ok(()) }
    /// ```
    pub async fn batches(self) -> Result<BatchStream> {
        let id = self.table?;
        let table = self.client.get_table(&id).await?;
        let mut schema = table.schema.unwrap_or_default();
        if let Some(sel) = &self.selected_fields {
            // tabledata.list returns the selected columns in the table's order.
            schema.fields.retain(|f| sel.iter().any(|s| s == &f.name));
            if schema.fields.len() != sel.len() {
                let missing: Vec<&String> = sel
                    .iter()
                    .filter(|s| !schema.fields.iter().any(|f| &f.name == *s))
                    .collect();
                return Err(Error::config(format!(
                    "table {id} has no column {missing:?}"
                )));
            }
        }
        let arrow = schema.to_arrow()?;
        let source = PageSource::Table {
            table: id,
            page_size: self.page_size,
            selected_fields: self.selected_fields.map(|s| s.join(",")),
            start_index: self.start_index,
        };
        let pages = rest_pages(self.client.inner.rest.clone(), source, schema, None, 0);
        Ok(BatchStream::new(arrow, Vec::new(), Some(pages)))
    }

    /// Streams the rows decoded into `T`.
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
    /// use futures::TryStreamExt;
    /// let mut rows = client.read_table_data("ds.people").rows::<(i64, String)>().await?;
    /// let mut ids = Vec::new();
    /// while let Some((id, _)) = rows.try_next().await? {
    ///     ids.push(id);
    /// }
    /// ids.sort();
    /// assert_eq!(ids, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub async fn rows<T: DeserializeOwned>(self) -> Result<RowStream<T>> {
        Ok(RowStream::new(self.batches().await?))
    }

    /// Collects every row into `T`.
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
    /// #[derive(serde::Deserialize)]
    /// struct Person {
    ///     id: i64,
    ///     name: Option<String>,
    /// }
    /// let people: Vec<Person> = client.read_table_data("ds.people").fetch_all().await?;
    /// assert_eq!(people.iter().map(|p| p.id).sum::<i64>(), 6);
    /// assert!(people.iter().all(|p| p.name.is_some()));
    /// # Ok(()) }
    /// ```
    pub async fn fetch_all<T: DeserializeOwned>(self) -> Result<Vec<T>> {
        self.rows().await?.try_collect().await
    }
}

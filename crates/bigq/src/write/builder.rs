//! [`WriteBuilder`]: a writer's options, and opening (or creating) its write stream.

use std::collections::HashMap;
use std::sync::Arc;

use bigq_codec::proto::{NumericEncoding, ProtoOptions, RowEncoder, WriteSchema};
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    CreateWriteStreamRequest, GetWriteStreamRequest, WriteStream, WriteStreamView,
    append_rows_request::MissingValueInterpretation as PbMissing,
};

use super::options::{
    DEFAULT_MAX_BATCH_DELAY, DEFAULT_MAX_IN_FLIGHT, DEFAULT_REQUEST_BYTES, MAX_REQUEST_BYTES,
    MissingValue, StreamKind,
};
use super::schema::from_storage_schema;
use super::transport::{GrpcWrite, WriteTransport, control};
use super::writer::{Writer, WriterConfig, commit};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::ids::{IntoTableId, TableId, table_id};
use crate::retry::RetryPolicy;
use crate::schema::TableSchema;
use crate::value::Timestamp;

/// Options for a writer; made by [`Client::write`], finished with [`open`](Self::open).
#[must_use]
#[derive(Debug)]
pub struct WriteBuilder {
    client: Client,
    table: Result<TableId>,
    kind: StreamKind,
    schema: Option<TableSchema>,
    max_request_bytes: usize,
    max_in_flight: usize,
    max_in_flight_bytes: Option<usize>,
    max_batch_rows: Option<usize>,
    max_batch_delay: std::time::Duration,
    schema_refresh: Option<std::time::Duration>,
    numeric: NumericEncoding,
    missing: HashMap<String, i32>,
    default_missing: i32,
}

impl Client {
    /// Writes to a table (a [`TableId`](crate::TableId), `dataset.table` or
    /// `project.dataset.table`) through the Storage Write API, on its `_default` stream
    /// unless another type is chosen.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client.write("ds.people").open().await?;
    /// writer.append(&people).await?;
    /// let summary = writer.finish().await?;
    /// assert_eq!(summary.rows_written, 3);
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub fn write(&self, table: impl IntoTableId) -> WriteBuilder {
        WriteBuilder {
            client: self.clone(),
            table: table_id(&self.inner.project, table),
            kind: StreamKind::Default,
            schema: None,
            max_request_bytes: DEFAULT_REQUEST_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_in_flight_bytes: None,
            max_batch_rows: None,
            max_batch_delay: DEFAULT_MAX_BATCH_DELAY,
            schema_refresh: None,
            numeric: NumericEncoding::default(),
            missing: HashMap::new(),
            default_missing: PbMissing::Unspecified as i32,
        }
    }

    /// Commits finalized PENDING streams of one table together (all their rows become
    /// visible at once, or none); returns the commit time.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// // Two PENDING streams, finalized, then committed together.
    /// let mut names = Vec::new();
    /// for part in people.chunks(2) {
    ///     let mut writer = client.write("ds.people").pending().open().await?;
    ///     writer.append(part).await?;
    ///     names.push(writer.stream_name().to_string());
    ///     writer.finish().await?;
    /// }
    /// assert_eq!(count(client.clone()).await?, 0, "nothing visible before the commit");
    /// let streams: Vec<&str> = names.iter().map(String::as_str).collect();
    /// let at = client.commit_write_streams("ds.people", &streams).await?;
    /// assert!(at.is_some());
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub async fn commit_write_streams(
        &self,
        table: impl IntoTableId,
        streams: &[&str],
    ) -> Result<Option<Timestamp>> {
        let id = table_id(&self.inner.project, table)?;
        let transport = GrpcWrite {
            client: self.clone(),
        };
        commit(
            &transport,
            &self.inner.retry,
            &id.path(),
            streams.iter().map(|s| s.to_string()).collect(),
        )
        .await
    }
}

impl WriteBuilder {
    /// The `_default` stream (the default): at least once, rows visible at once.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client.write("ds.people").default_stream().open().await?;
    /// assert!(writer.stream_name().ends_with("/streams/_default"));
    /// writer.append(&people).await?;
    /// writer.finish().await?;
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub fn default_stream(mut self) -> Self {
        self.kind = StreamKind::Default;
        self
    }

    /// A new COMMITTED stream: exactly once, rows visible at once.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client.write("ds.people").committed().open().await?;
    /// writer.append(&people[..1]).await?;
    /// writer.flush().await?;
    /// assert_eq!(count(client.clone()).await?, 1, "visible once confirmed");
    /// writer.append(&people[1..]).await?;
    /// let summary = writer.finish().await?;
    /// assert_eq!(summary.finalized_rows, Some(3));
    /// # Ok(()) }
    /// ```
    pub fn committed(mut self) -> Self {
        self.kind = StreamKind::Committed;
        self
    }

    /// A new PENDING stream: rows visible when [committed](Writer::commit), all or none.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client.write("ds.people").pending().open().await?;
    /// writer.append(&people).await?;
    /// writer.flush().await?;
    /// assert_eq!(count(client.clone()).await?, 0, "nothing visible before the commit");
    /// let summary = writer.commit().await?;
    /// assert!(summary.commit_time.is_some());
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub fn pending(mut self) -> Self {
        self.kind = StreamKind::Pending;
        self
    }

    /// A new BUFFERED stream: rows visible when [flushed](Writer::flush).
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client.write("ds.people").buffered().open().await?;
    /// writer.append(&people).await?;
    /// writer.flush().await?;
    /// assert_eq!(count(client.clone()).await?, 3, "visible once flushed");
    /// writer.finish().await?;
    /// # Ok(()) }
    /// ```
    pub fn buffered(mut self) -> Self {
        self.kind = StreamKind::Buffered;
        self
    }

    /// The table schema to encode rows for, instead of the one the stream reports. It may
    /// leave out NULLABLE columns (BigQuery fills them as the missing-value settings say).
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// // The table's schema given, rather than fetched from the stream.
    /// let mut writer = client.write("ds.people").schema(schema).open().await?;
    /// writer.append(&people).await?;
    /// writer.finish().await?;
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub fn schema(mut self, schema: TableSchema) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The largest request, in bytes (default 10 MB, at most the API's 20 MB).
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client
    ///     .write("ds.people")
    ///     .max_request_bytes(64 * 1024)
    ///     .open()
    ///     .await?;
    /// writer.append(&people).await?;
    /// let summary = writer.finish().await?;
    /// assert_eq!(summary.requests, 1);
    /// assert!(summary.bytes_sent < 64 * 1024);
    /// // Under 64 KiB is refused.
    /// let e = client.write("ds.people").max_request_bytes(1024).open().await.unwrap_err();
    /// assert_eq!(e.kind(), bigq::ErrorKind::Config);
    /// # Ok(()) }
    /// ```
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// How many requests may await their response (default 8, at least 1).
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client.write("ds.people").max_in_flight(1).open().await?;
    /// writer.append(&people).await?;
    /// writer.finish().await?;
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n;
        self
    }

    /// The most bytes of requests awaiting their response (protobuf-encoded, as queued),
    /// beside [`max_in_flight`](Self::max_in_flight); the producer waits when the next
    /// request would pass it. No bound by default (beyond `max_in_flight` requests of
    /// `max_request_bytes`); at least `max_request_bytes`, so that one request always fits.
    /// [`WriteSummary::peak_in_flight_bytes`](super::WriteSummary::peak_in_flight_bytes)
    /// reports the most there were.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client
    ///     .write("ds.people")
    ///     .max_request_bytes(64 * 1024)
    ///     .max_batch_rows(1)
    ///     .max_in_flight_bytes(64 * 1024)
    ///     .open()
    ///     .await?;
    /// writer.append(&people).await?;
    /// let summary = writer.finish().await?;
    /// assert_eq!(summary.requests, 3);
    /// assert!(summary.peak_in_flight_bytes <= 64 * 1024);
    /// // Under one request is refused.
    /// let e = client
    ///     .write("ds.people")
    ///     .max_in_flight_bytes(1024)
    ///     .open()
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(e.kind(), bigq::ErrorKind::Config);
    /// # Ok(()) }
    /// ```
    pub fn max_in_flight_bytes(mut self, bytes: usize) -> Self {
        self.max_in_flight_bytes = Some(bytes);
        self
    }

    /// The most rows in one request: the queue is sent when it holds `n` rows, even under
    /// `max_request_bytes` (no bound by default; at least 1).
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let mut writer = client.write("ds.people").max_batch_rows(2).open().await?;
    /// writer.append(&people).await?;
    /// let summary = writer.finish().await?;
    /// assert_eq!(summary.requests, 2, "two rows, then one");
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub fn max_batch_rows(mut self, n: usize) -> Self {
        self.max_batch_rows = Some(n);
        self
    }

    /// How long the first row of a partly filled request waits before the request is sent
    /// ([`DEFAULT_MAX_BATCH_DELAY`](super::DEFAULT_MAX_BATCH_DELAY), 100 ms, by default). A
    /// task of the writer's sends it, so a producer that appends a row now and then sees it
    /// written within the delay and a round trip, without calling
    /// [`flush`](super::Writer::flush). `Duration::ZERO` sends what each
    /// [`append`](super::Writer::append) queued before it returns; `Duration::MAX` waits for
    /// a full request or a flush.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// use std::time::Duration;
    /// let mut writer = client
    ///     .write("ds.people")
    ///     .max_batch_delay(Duration::from_millis(20))
    ///     .open()
    ///     .await?;
    /// writer.append(&people).await?;
    /// // No flush: the rows are sent once they have waited 20 ms.
    /// let mut n = 0;
    /// for _ in 0..500 {
    ///     n = count(client.clone()).await?;
    ///     if n == 3 {
    ///         break;
    ///     }
    ///     tokio::time::sleep(Duration::from_millis(10)).await;
    /// }
    /// assert_eq!(n, 3);
    /// writer.finish().await?;
    /// # Ok(()) }
    /// ```
    pub fn max_batch_delay(mut self, delay: std::time::Duration) -> Self {
        self.max_batch_delay = delay;
        self
    }

    /// Fetches the table schema from the stream at most this often (on the next
    /// [`append`](super::Writer::append) or [`append_batch`](super::Writer::append_batch)
    /// after it is due), and encodes later rows for it when it changed. Off by default: the
    /// writer takes a newer schema anyway when BigQuery reports one on a response
    /// (`updated_schema`), and fetches it when a row carries a field its schema lacks.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// use std::time::Duration;
    /// let mut writer = client
    ///     .write("ds.people")
    ///     .schema_refresh_interval(Duration::ZERO)
    ///     .open()
    ///     .await?;
    /// writer.append(&people).await?;
    /// client.query("ALTER TABLE ds.people ADD COLUMN age INT64").execute().await?;
    /// #[derive(serde::Serialize)]
    /// struct Older { id: i64, age: i64 }
    /// writer.append(&[Older { id: 4, age: 40 }]).await?;
    /// let summary = writer.finish().await?;
    /// assert_eq!(summary.schema_updates, 1);
    /// let ages: Vec<(Option<i64>,)> =
    ///     client.query("SELECT age FROM ds.people WHERE id = 4").fetch_all().await?;
    /// assert_eq!(ages, [(Some(40),)]);
    /// # Ok(()) }
    /// ```
    pub fn schema_refresh_interval(mut self, every: std::time::Duration) -> Self {
        self.schema_refresh = Some(every);
        self
    }

    /// How NUMERIC and BIGNUMERIC values go on the wire (decimal text by default; packed
    /// bytes are fewer but not every emulator takes them).
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// use bigq::write::NumericEncoding;
    /// let mut writer = client
    ///     .write("ds.people")
    ///     .numeric_encoding(NumericEncoding::default())
    ///     .open()
    ///     .await?;
    /// writer.append(&people).await?;
    /// writer.finish().await?;
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub fn numeric_encoding(mut self, encoding: NumericEncoding) -> Self {
        self.numeric = encoding;
        self
    }

    /// What BigQuery does with `column` when a row leaves it out.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// use bigq::write::MissingValue;
    /// #[derive(serde::Serialize)]
    /// struct IdOnly {
    ///     id: i64,
    /// }
    /// let mut writer = client
    ///     .write("ds.people")
    ///     .missing_value("name", MissingValue::Null)
    ///     .open()
    ///     .await?;
    /// writer.append(&[IdOnly { id: 9 }]).await?;
    /// writer.finish().await?;
    /// let rows: Vec<(i64, Option<String>)> = client.read_table_data("ds.people").fetch_all().await?;
    /// assert_eq!(rows, [(9, None)]);
    /// # Ok(()) }
    /// ```
    pub fn missing_value(mut self, column: impl Into<String>, value: MissingValue) -> Self {
        self.missing.insert(column.into(), value.proto());
        self
    }

    /// What BigQuery does with any column a row leaves out, unless set per column.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// use bigq::write::MissingValue;
    /// #[derive(serde::Serialize)]
    /// struct IdOnly {
    ///     id: i64,
    /// }
    /// let mut writer = client
    ///     .write("ds.people")
    ///     .default_missing_value(MissingValue::Default)
    ///     .open()
    ///     .await?;
    /// writer.append(&[IdOnly { id: 9 }]).await?;
    /// writer.finish().await?;
    /// let rows: Vec<(i64, Option<String>)> = client.read_table_data("ds.people").fetch_all().await?;
    /// assert_eq!(rows, [(9, None)], "no default value expression: NULL");
    /// # Ok(()) }
    /// ```
    pub fn default_missing_value(mut self, value: MissingValue) -> Self {
        self.default_missing = value.proto();
        self
    }

    /// Opens the stream (creating it for COMMITTED, PENDING and BUFFERED), fetching the table
    /// schema from it unless one was given.
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
    /// # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
    /// # let schema = TableSchema::new(vec![
    /// #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    /// #     TableFieldSchema::new("name", FieldType::String),
    /// # ]);
    /// # client.create_table(bigq::admin::Table::new("ds.people", schema.clone())).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let people: Vec<Person> = (1..=3).map(|id| Person { id, name: Some(format!("p{id}")) }).collect();
    /// # let count = |client: bigq::Client| async move {
    /// #     let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM ds.people").fetch_all().await?;
    /// #     Ok::<i64, bigq::Error>(n[0].0)
    /// # };
    /// let writer = client.write("ds.people").committed().open().await?;
    /// assert!(writer.stream_name().starts_with("projects/"));
    /// assert_eq!(writer.summary().rows_written, 0);
    /// // A table that does not exist fails here, before any row.
    /// let e = client.write("ds.missing").open().await.unwrap_err();
    /// assert!(e.is_not_found());
    /// # Ok(()) }
    /// ```
    pub async fn open(self) -> Result<Writer> {
        let transport = Arc::new(GrpcWrite {
            client: self.client.clone(),
        });
        let retry = self.client.inner.retry.clone();
        self.open_with(transport, retry).await
    }

    pub(crate) async fn open_with(
        self,
        transport: Arc<dyn WriteTransport>,
        retry: RetryPolicy,
    ) -> Result<Writer> {
        let id = self.table?;
        if self.max_request_bytes > MAX_REQUEST_BYTES || self.max_request_bytes < 64 * 1024 {
            return Err(Error::config(format!(
                "max_request_bytes must be between 64 KiB and {MAX_REQUEST_BYTES}, not {}",
                self.max_request_bytes
            )));
        }
        if self.max_in_flight == 0 {
            return Err(Error::config("max_in_flight must be at least 1"));
        }
        if let Some(bytes) = self.max_in_flight_bytes
            && bytes < self.max_request_bytes
        {
            return Err(Error::config(format!(
                "max_in_flight_bytes ({bytes}) must be at least max_request_bytes ({}), so that one request fits",
                self.max_request_bytes
            )));
        }
        if self.max_batch_rows == Some(0) {
            return Err(Error::config("max_batch_rows must be at least 1"));
        }
        let table = id.path();
        let stream: WriteStream = if self.kind == StreamKind::Default {
            let name = format!("{table}/streams/_default");
            if self.schema.is_some() {
                WriteStream {
                    name,
                    ..Default::default()
                }
            } else {
                let req = GetWriteStreamRequest {
                    name,
                    view: WriteStreamView::Full as i32,
                };
                control(&retry, "GetWriteStream", || {
                    transport.get_write_stream(req.clone())
                })
                .await?
            }
        } else {
            let req = CreateWriteStreamRequest {
                parent: table.clone(),
                write_stream: Some(WriteStream {
                    r#type: self.kind.proto() as i32,
                    ..Default::default()
                }),
            };
            control(&retry, "CreateWriteStream", || {
                transport.create_write_stream(req.clone())
            })
            .await?
        };
        let schema = match self.schema {
            Some(s) => s,
            None => match &stream.table_schema {
                Some(s) => from_storage_schema(s)?,
                None => {
                    return Err(Error::config(format!(
                        "the write stream of {id} reports no table schema; give one with .schema()"
                    )));
                }
            },
        };
        let options = ProtoOptions::default().with_numeric(self.numeric);
        let write_schema = WriteSchema::with_options(&schema, options).map_err(Error::from)?;
        Writer::new(WriterConfig {
            transport,
            table_path: table,
            stream: stream.name,
            kind: self.kind,
            encoder: RowEncoder::new(write_schema),
            proto_options: options,
            schema_refresh: self.schema_refresh,
            max_request_bytes: self.max_request_bytes,
            max_in_flight: self.max_in_flight,
            max_in_flight_bytes: self.max_in_flight_bytes,
            max_batch_rows: self.max_batch_rows,
            max_batch_delay: self.max_batch_delay,
            missing_value_interpretations: self.missing,
            default_missing_value_interpretation: self.default_missing,
            retry,
        })
    }
}

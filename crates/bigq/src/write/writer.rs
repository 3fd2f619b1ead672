//! The writer: rows packed into AppendRows requests under a size limit, a window of requests
//! in flight, responses matched in order, and reconnection with the unconfirmed requests sent
//! again (at their offsets, where the stream has them).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Weak};
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use bigq_codec::proto::{ProtoOptions, RowEncoder, WriteSchema, is_change_column};
use futures::StreamExt;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    AppendRowsRequest, AppendRowsResponse, ArrowRecordBatch, ArrowSchema,
    BatchCommitWriteStreamsRequest, FinalizeWriteStreamRequest, FlushRowsRequest,
    GetWriteStreamRequest, ProtoRows, ProtoSchema, WriteStreamView, append_rows_request,
    append_rows_response,
};
use gcloud_sdk::prost::Message;
use serde::Serialize;
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;
use tonic::{Code, Status};

use super::change::{Change, ChangeSequence};
use super::options::StreamKind;
use super::schema::from_storage_schema;
use super::summary::WriteSummary;
use super::transport::{Requests, Responses, WriteTransport, control};
use crate::client::grpc::status_error;
use crate::error::{Error, ErrorKind, Result, RowError};
use crate::retry::{Attempts, RetryPolicy, retry_info};
use crate::schema::TableSchema;

/// Bytes of an AppendRowsRequest besides its rows (stream name, offset, trace id, missing
/// value settings), kept free under the size limit.
const REQUEST_OVERHEAD: usize = 4096;

/// Settings the builder hands the writer.
pub(crate) struct WriterConfig {
    pub(crate) transport: Arc<dyn WriteTransport>,
    pub(crate) table_path: String,
    pub(crate) stream: String,
    pub(crate) kind: StreamKind,
    pub(crate) encoder: RowEncoder,
    pub(crate) proto_options: ProtoOptions,
    /// How often to fetch the table schema, when asked to.
    pub(crate) schema_refresh: Option<Duration>,
    pub(crate) max_request_bytes: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) max_in_flight_bytes: Option<usize>,
    pub(crate) max_batch_rows: Option<usize>,
    pub(crate) max_batch_delay: Duration,
    pub(crate) missing_value_interpretations: HashMap<String, i32>,
    pub(crate) default_missing_value_interpretation: i32,
    pub(crate) retry: RetryPolicy,
}

/// The writer schema a request's rows need: the protobuf schema they were encoded for, or
/// the IPC-serialized Arrow schema of the batch they came from.
#[derive(Debug, Clone)]
enum RowsSchema {
    Proto(Arc<WriteSchema>),
    Arrow(Arc<Vec<u8>>),
}

impl PartialEq for RowsSchema {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            // One `WriteSchema` per schema the writer has taken.
            (RowsSchema::Proto(a), RowsSchema::Proto(b)) => Arc::ptr_eq(a, b),
            (RowsSchema::Arrow(a), RowsSchema::Arrow(b)) => a == b,
            _ => false,
        }
    }
}

/// A request sent and not yet confirmed.
struct InFlight {
    request: Arc<AppendRowsRequest>,
    schema: RowsSchema,
    rows: usize,
    /// Index (as the writer counts rows) of the request's first row.
    first_row: u64,
    /// The request's encoded size, as queued (without a writer schema).
    bytes: usize,
}

/// One AppendRows connection.
struct Connection {
    tx: mpsc::Sender<Arc<AppendRowsRequest>>,
    responses: Responses,
    /// The writer schema the connection's last request carried or implied; a request with
    /// another one carries its own.
    schema: RowsSchema,
}

/// Appends rows to one write stream of a table; made by
/// [`WriteBuilder::open`](super::WriteBuilder::open).
///
/// Rows are encoded when [`append`](Self::append) is called and queued. The queue is sent as
/// one request when the next rows would take it past `max_request_bytes`, when it holds
/// `max_batch_rows` rows, or when its first row has waited `max_batch_delay` (100 ms by
/// default; a task of the writer's sends it then, with no call needed). Up to
/// `max_in_flight` requests, and at most `max_in_flight_bytes` of them, await their
/// response; when either bound is full, `append` waits for the oldest response, so a
/// producer faster than BigQuery waits instead of buffering without limit.
///
/// [`flush`](Self::flush) sends the queue and waits for every confirmation;
/// [`finish`](Self::finish) does that and finalizes the stream. Dropping a writer without
/// either stops its task: rows still queued (at most `max_batch_delay` of them) are not
/// written, and requests sent but not confirmed may or may not be.
///
/// After an error that is not retried (a row BigQuery refuses, INVALID_ARGUMENT, a stream
/// that no longer exists), the writer is failed: every later call returns that error, and
/// [`summary`](Self::summary) says how many rows were confirmed before it. A failure of a
/// request the writer's task sent on time is returned by the next call.
pub struct Writer {
    core: Arc<tokio::sync::Mutex<Core>>,
    stream: String,
    summary: Arc<std::sync::Mutex<WriteSummary>>,
    /// Sends a queue that has waited `max_batch_delay`.
    timer: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("stream", &self.stream)
            .field("summary", &self.summary())
            .finish_non_exhaustive()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
    }
}

/// The writer's state, shared with the task that sends a queue on time.
struct Core {
    cfg: WriterConfig,
    /// The Arrow schema of the last batch appended, and its IPC serialization.
    arrow_schema: Option<(SchemaRef, Arc<Vec<u8>>)>,
    /// Rows encoded and not yet sent.
    batch: Vec<Vec<u8>>,
    batch_bytes: usize,
    batch_first_row: u64,
    /// The schema the rows of `batch` were encoded for.
    batch_schema: Arc<WriteSchema>,
    /// When the writer last fetched the table schema (or opened).
    schema_checked: Instant,
    /// When the first row of `batch` was queued.
    batch_since: Option<Instant>,
    /// Wakes the timer when a queue starts.
    batch_started: Arc<Notify>,
    in_flight: VecDeque<InFlight>,
    /// Bytes of the requests in `in_flight`, as queued.
    in_flight_bytes: usize,
    connection: Option<Connection>,
    /// Rows the writer has been given (the index of the next row).
    rows_seen: u64,
    /// The offset of the next request, for streams with offsets.
    next_offset: i64,
    summary: Arc<std::sync::Mutex<WriteSummary>>,
    failed: Option<Error>,
}

/// Copies an error for a failed writer to return again (errors are not `Clone`).
fn again(e: &Error) -> Error {
    let mut copy = Error::new(e.kind(), e.message().to_string());
    if let Some(c) = e.codec_error() {
        copy = Error::encode(c.clone());
    }
    if let Some(status) = e.status() {
        copy = Error::api(
            status,
            e.reason().map(str::to_string),
            e.message().to_string(),
        );
    }
    if let Some(elapsed) = e.elapsed() {
        copy = copy.with_attempts(e.attempts(), elapsed);
    }
    copy.with_row_errors(e.row_errors().to_vec())
}

/// What a response means for the oldest request in flight.
enum Outcome {
    /// Appended (or, at an offset, already there).
    Done,
    /// Send it again, with everything after it, on a new connection.
    Retry(Status),
    /// Not retried.
    Fail(Error),
}

impl Writer {
    /// The writer, with its task for the batch delay on the current Tokio runtime.
    pub(crate) fn new(cfg: WriterConfig) -> Result<Self> {
        let stream = cfg.stream.clone();
        let summary = Arc::new(std::sync::Mutex::new(WriteSummary {
            stream: stream.clone(),
            ..Default::default()
        }));
        let batch_started = Arc::new(Notify::new());
        let delay = cfg.max_batch_delay;
        let batch_schema = cfg.encoder.schema().clone();
        let core = Arc::new(tokio::sync::Mutex::new(Core {
            cfg,
            arrow_schema: None,
            batch: Vec::new(),
            batch_bytes: 0,
            batch_first_row: 0,
            batch_schema,
            schema_checked: Instant::now(),
            batch_since: None,
            batch_started: batch_started.clone(),
            in_flight: VecDeque::new(),
            in_flight_bytes: 0,
            connection: None,
            rows_seen: 0,
            next_offset: 0,
            summary: summary.clone(),
            failed: None,
        }));
        // The writer's waits (responses, retries) run on Tokio's timers, and so does its task.
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::config("a Storage Write writer needs a Tokio runtime"))?;
        // A zero delay sends the queue at the end of each `append`, with no task.
        let timer = (!delay.is_zero())
            .then(|| runtime.spawn(batch_timer(Arc::downgrade(&core), batch_started, delay)));
        Ok(Writer {
            core,
            stream,
            summary,
            timer,
        })
    }
}

impl Writer {
    /// The name of the write stream (`projects/../streams/..`).
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
    /// let writer = client.write("ds.people").pending().open().await?;
    /// assert!(writer.stream_name().starts_with("projects/"));
    /// assert!(writer.stream_name().contains("/tables/people/streams/"));
    /// # Ok(()) }
    /// ```
    pub fn stream_name(&self) -> &str {
        &self.stream
    }

    /// What has been written so far.
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
    /// writer.flush().await?;
    /// assert_eq!(writer.summary().rows_written, 3);
    /// assert_eq!(writer.summary().requests, 1);
    /// # Ok(()) }
    /// ```
    pub fn summary(&self) -> WriteSummary {
        self.summary
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Encodes `rows` and queues them, sending every request that fills up.
    ///
    /// The rows are encoded before any is queued: a row that does not fit the schema is an
    /// [`ErrorKind::Encode`] error naming its index in `rows`, its column and value, and none
    /// of `rows` is written. The writer stays usable after such an error.
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
    /// // A row that does not fit the schema names its index; none of the append is written.
    /// #[derive(serde::Serialize)]
    /// struct NoId {
    ///     name: String,
    /// }
    /// let e = writer.append(&[NoId { name: "x".into() }]).await.unwrap_err();
    /// assert_eq!(e.codec_error().and_then(|c| c.row()), Some(0));
    /// writer.finish().await?;
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub async fn append<T: Serialize>(&mut self, rows: &[T]) -> Result<()> {
        self.core.lock().await.append(rows).await
    }

    /// Upserts `row` by the table's primary key: inserts it, or replaces the row with its
    /// key (BigQuery's change data capture, `_CHANGE_TYPE` `UPSERT`). Without a sequence
    /// number, the later change of a key wins.
    ///
    /// Change rows go only to the `_default` stream of a table with a primary key: on any
    /// other stream this is an [`ErrorKind::Config`] error and nothing is sent; BigQuery
    /// refuses them on a table without a primary key (an [`ErrorKind::Api`] error,
    /// INVALID_ARGUMENT, from the flush that sends them). The first change row switches
    /// the writer schema to one with the `_CHANGE_TYPE` and `_CHANGE_SEQUENCE_NUMBER`
    /// pseudo-columns; rows of [`append`](Self::append) after it are plain appends.
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
    /// # let table = bigq::admin::Table::new("ds.people", schema).with_primary_key(["id"]);
    /// # client.create_table(table).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let person = |id: i64, name: &str| Person { id, name: Some(name.to_string()) };
    /// # #[derive(serde::Serialize)]
    /// # struct Id { id: i64 }
    /// # let people = |client: bigq::Client| async move {
    /// #     client.query("SELECT id, name FROM ds.people ORDER BY id").fetch_all::<(i64, Option<String>)>().await
    /// # };
    /// let mut writer = client.write("ds.people").open().await?;
    /// writer.upsert(&person(1, "ada")).await?;
    /// writer.upsert(&person(2, "bob")).await?;
    /// writer.upsert(&person(1, "ada lovelace")).await?;
    /// writer.flush().await?;
    /// assert_eq!(
    ///     people(client.clone()).await?,
    ///     [(1, Some("ada lovelace".into())), (2, Some("bob".into()))]
    /// );
    /// // Not on a PENDING stream.
    /// let mut pending = client.write("ds.people").pending().open().await?;
    /// let e = pending.upsert(&person(3, "cy")).await.unwrap_err();
    /// assert_eq!(e.kind(), bigq::ErrorKind::Config);
    /// # Ok(()) }
    /// ```
    pub async fn upsert<T: Serialize>(&mut self, row: &T) -> Result<()> {
        self.append_changes(std::slice::from_ref(&Change::upsert(row)))
            .await
    }

    /// Deletes the row with the primary key of `key` (`_CHANGE_TYPE` `DELETE`): a row with
    /// the key columns (and the table's REQUIRED columns). A key with no row is no change.
    /// As [`upsert`](Self::upsert), only on the `_default` stream.
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
    /// # let table = bigq::admin::Table::new("ds.people", schema).with_primary_key(["id"]);
    /// # client.create_table(table).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let person = |id: i64, name: &str| Person { id, name: Some(name.to_string()) };
    /// # #[derive(serde::Serialize)]
    /// # struct Id { id: i64 }
    /// # let people = |client: bigq::Client| async move {
    /// #     client.query("SELECT id, name FROM ds.people ORDER BY id").fetch_all::<(i64, Option<String>)>().await
    /// # };
    /// let mut writer = client.write("ds.people").open().await?;
    /// writer.upsert(&person(1, "ada")).await?;
    /// writer.upsert(&person(2, "bob")).await?;
    /// writer.delete(&Id { id: 1 }).await?;
    /// writer.delete(&Id { id: 99 }).await?;
    /// writer.flush().await?;
    /// assert_eq!(people(client).await?, [(2, Some("bob".into()))]);
    /// # Ok(()) }
    /// ```
    pub async fn delete<T: Serialize>(&mut self, key: &T) -> Result<()> {
        self.append_changes(std::slice::from_ref(&Change::delete(key)))
            .await
    }

    /// Upserts `row` with a `_CHANGE_SEQUENCE_NUMBER`: among the changes of one key the
    /// highest sequence number wins, whatever order they arrive in, and a change below the
    /// key's current number is ignored. `sequence` is a [`ChangeSequence`]:
    /// a `u64`, an array of up to four `u64` sections, or BigQuery's text parsed with
    /// `str::parse`.
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
    /// # let table = bigq::admin::Table::new("ds.people", schema).with_primary_key(["id"]);
    /// # client.create_table(table).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let person = |id: i64, name: &str| Person { id, name: Some(name.to_string()) };
    /// # #[derive(serde::Serialize)]
    /// # struct Id { id: i64 }
    /// # let people = |client: bigq::Client| async move {
    /// #     client.query("SELECT id, name FROM ds.people ORDER BY id").fetch_all::<(i64, Option<String>)>().await
    /// # };
    /// let mut writer = client.write("ds.people").open().await?;
    /// writer.upsert_with_sequence(&person(1, "third"), 3).await?;
    /// writer.upsert_with_sequence(&person(1, "first"), 1).await?;
    /// writer.upsert_with_sequence(&person(2, "b"), [1, 0xFF]).await?;
    /// let seq: bigq::write::ChangeSequence = "1/fe".parse()?;
    /// writer.upsert_with_sequence(&person(2, "a"), seq).await?;
    /// writer.flush().await?;
    /// assert_eq!(
    ///     people(client).await?,
    ///     [(1, Some("third".into())), (2, Some("b".into()))]
    /// );
    /// # Ok(()) }
    /// ```
    pub async fn upsert_with_sequence<T: Serialize>(
        &mut self,
        row: &T,
        sequence: impl Into<ChangeSequence>,
    ) -> Result<()> {
        let change = Change::upsert(row).with_sequence(sequence);
        self.append_changes(std::slice::from_ref(&change)).await
    }

    /// Deletes the row with the primary key of `key`, with a `_CHANGE_SEQUENCE_NUMBER`: it
    /// is ignored if the key's current row has a higher one, and an upsert of the key with
    /// a lower one arriving later does not bring the row back.
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
    /// # let table = bigq::admin::Table::new("ds.people", schema).with_primary_key(["id"]);
    /// # client.create_table(table).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let person = |id: i64, name: &str| Person { id, name: Some(name.to_string()) };
    /// # #[derive(serde::Serialize)]
    /// # struct Id { id: i64 }
    /// # let people = |client: bigq::Client| async move {
    /// #     client.query("SELECT id, name FROM ds.people ORDER BY id").fetch_all::<(i64, Option<String>)>().await
    /// # };
    /// let mut writer = client.write("ds.people").open().await?;
    /// writer.upsert_with_sequence(&person(1, "ada"), 5).await?;
    /// writer.delete_with_sequence(&Id { id: 1 }, 4).await?; // older: ignored
    /// writer.upsert_with_sequence(&person(2, "bob"), 5).await?;
    /// writer.delete_with_sequence(&Id { id: 2 }, 6).await?;
    /// writer.upsert_with_sequence(&person(2, "late"), 2).await?; // older than the delete
    /// writer.flush().await?;
    /// assert_eq!(people(client).await?, [(1, Some("ada".into()))]);
    /// # Ok(()) }
    /// ```
    pub async fn delete_with_sequence<T: Serialize>(
        &mut self,
        key: &T,
        sequence: impl Into<ChangeSequence>,
    ) -> Result<()> {
        let change = Change::delete(key).with_sequence(sequence);
        self.append_changes(std::slice::from_ref(&change)).await
    }

    /// Encodes change rows (upserts and deletes, each with an optional sequence number)
    /// and queues them, as [`append`](Self::append) does rows: a row that does not fit the
    /// schema is an [`ErrorKind::Encode`] error naming its index, and none is written.
    /// As [`upsert`](Self::upsert), only on the `_default` stream.
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
    /// # let table = bigq::admin::Table::new("ds.people", schema).with_primary_key(["id"]);
    /// # client.create_table(table).await?;
    /// # #[derive(serde::Serialize)]
    /// # struct Person { id: i64, name: Option<String> }
    /// # let person = |id: i64, name: &str| Person { id, name: Some(name.to_string()) };
    /// # #[derive(serde::Serialize)]
    /// # struct Id { id: i64 }
    /// # let people = |client: bigq::Client| async move {
    /// #     client.query("SELECT id, name FROM ds.people ORDER BY id").fetch_all::<(i64, Option<String>)>().await
    /// # };
    /// use bigq::write::Change;
    /// let mut writer = client.write("ds.people").open().await?;
    /// writer
    ///     .append_changes(&[
    ///         Change::upsert(person(1, "ada")).with_sequence(1),
    ///         Change::upsert(person(2, "bob")).with_sequence(1),
    ///         Change::upsert(person(1, "ada l.")).with_sequence(2),
    ///         Change::delete(person(2, "")).with_sequence(2),
    ///     ])
    ///     .await?;
    /// writer.finish().await?;
    /// assert_eq!(people(client).await?, [(1, Some("ada l.".into()))]);
    /// # Ok(()) }
    /// ```
    pub async fn append_changes<T: Serialize>(&mut self, changes: &[Change<T>]) -> Result<()> {
        self.core.lock().await.append_changes(changes).await
    }

    /// Appends an Arrow record batch (the Storage Write API's `arrow_rows` format), sent as
    /// one request or, when its IPC encoding is larger than `max_request_bytes`, as
    /// consecutive slices that each fit. Rows appended before with [`append`](Self::append)
    /// are sent first, so rows keep their order.
    ///
    /// The batch's columns are matched to the table's by name; a column the table does not
    /// have is an [`ErrorKind::Encode`] error naming it, and nothing of the batch is sent.
    /// The Arrow types must be ones BigQuery reads for the column (for example `Int64` for
    /// INT64, `Decimal128(38, 9)` for NUMERIC, `Timestamp(Microsecond, "UTC")` for
    /// TIMESTAMP); BigQuery's row errors come back with [`Error::row_errors`], numbered as
    /// the writer counts rows.
    ///
    /// A batch may carry change rows in the pseudo-columns `_CHANGE_TYPE` (`UPSERT` or
    /// `DELETE`, Utf8) and `_CHANGE_SEQUENCE_NUMBER` (Utf8, BigQuery's text form, see
    /// [`ChangeSequence`]), merged by the table's primary key as
    /// [`upsert`](Self::upsert) and [`delete`](Self::delete) are; a row whose
    /// `_CHANGE_TYPE` is NULL is a plain append. As there, only on the `_default` stream
    /// (elsewhere an [`ErrorKind::Config`] error, and nothing is sent).
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
    /// use std::sync::Arc;
    /// use bigq::arrow::array::{ArrayRef, Int64Array, StringArray};
    /// let batch = bigq::arrow::RecordBatch::try_from_iter([
    ///     ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
    ///     ("name", Arc::new(StringArray::from(vec![Some("a"), None])) as ArrayRef),
    /// ])
    /// .unwrap();
    /// let mut writer = client.write("ds.people").committed().open().await?;
    /// writer.append_batch(&batch).await?;
    /// writer.finish().await?;
    /// assert_eq!(count(client).await?, 2);
    /// # Ok(()) }
    /// ```
    pub async fn append_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.core.lock().await.append_batch(batch).await
    }

    /// Sends the rows queued so far and waits until BigQuery has confirmed every request.
    /// On a BUFFERED stream, also flushes the stream up to the last row, making the rows
    /// visible.
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
    /// assert_eq!(count(client.clone()).await?, 0);
    /// writer.flush().await?;
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub async fn flush(&mut self) -> Result<()> {
        self.core.lock().await.flush().await
    }

    /// Sends what is left, waits for every confirmation, closes the connection and, for
    /// streams other than `_default`, finalizes the stream (no more appends). Returns what
    /// was written.
    ///
    /// A PENDING stream's rows are still invisible after this: call
    /// [`commit`](Self::commit) instead, or commit several finalized streams together with
    /// [`Client::commit_write_streams`](crate::Client::commit_write_streams).
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
    /// writer.append(&people).await?;
    /// let summary = writer.finish().await?;
    /// assert_eq!((summary.rows_written, summary.finalized_rows), (3, Some(3)));
    /// # Ok(()) }
    /// ```
    pub async fn finish(self) -> Result<WriteSummary> {
        self.core.lock().await.finish_inner().await?;
        Ok(self.summary())
    }

    /// For a PENDING stream: sends what is left, finalizes the stream and commits it, so that
    /// all its rows become visible at once, or none.
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
    /// let summary = writer.commit().await?;
    /// assert!(summary.commit_time.is_some());
    /// assert_eq!(count(client).await?, 3);
    /// # Ok(()) }
    /// ```
    pub async fn commit(self) -> Result<WriteSummary> {
        self.core.lock().await.commit().await?;
        Ok(self.summary())
    }

    #[cfg(test)]
    pub(crate) async fn in_flight(&self) -> usize {
        self.core.lock().await.in_flight.len()
    }
}

/// Sends the writer's queue once its first row has waited `delay`, until the writer is
/// gone. A failure is kept by the writer, which returns it from its next call.
async fn batch_timer(core: Weak<tokio::sync::Mutex<Core>>, wake: Arc<Notify>, delay: Duration) {
    loop {
        let due = match core.upgrade() {
            Some(core) => core.lock().await.batch_due(delay),
            None => return,
        };
        match due {
            None => wake.notified().await,
            Some(at) => {
                tokio::time::sleep_until(at).await;
                let Some(core) = core.upgrade() else { return };
                let mut core = core.lock().await;
                let now = Instant::now();
                if core.failed.is_none()
                    && core.batch_due(delay).is_some_and(|at| at <= now)
                    && let Err(e) = core.send_batch().await
                {
                    tracing::debug!(error = %e, "AppendRows: a queue sent on time failed");
                }
            }
        }
    }
}

impl Core {
    /// When the queue is due to be sent on time: `delay` after its first row (`None` for an
    /// empty queue, or a delay too long to reach).
    fn batch_due(&self, delay: Duration) -> Option<Instant> {
        self.batch_since.and_then(|since| since.checked_add(delay))
    }

    /// Updates the summary the writer and its caller share.
    fn tally(&self, f: impl FnOnce(&mut WriteSummary)) {
        let mut summary = self
            .summary
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut summary);
    }

    fn check_failed(&self) -> Result<()> {
        match &self.failed {
            Some(e) => Err(again(e)),
            None => Ok(()),
        }
    }

    /// Marks the writer failed and returns the error (the writer keeps a copy).
    fn fail(&mut self, e: Error) -> Error {
        self.failed = Some(again(&e));
        e
    }

    async fn append<T: Serialize>(&mut self, rows: &[T]) -> Result<()> {
        self.append_with(|core| {
            core.encode_each(rows, |encoder, row, buf| encoder.encode(row, buf))
        })
        .await
    }

    async fn append_changes<T: Serialize>(&mut self, changes: &[Change<T>]) -> Result<()> {
        self.check_failed()?;
        self.enable_changes()?;
        self.append_with(|core| {
            core.encode_each(changes, |encoder, c, buf| {
                encoder.encode_change(&c.row, c.kind, c.sequence.as_ref(), buf)
            })
        })
        .await
    }

    /// Refuses change rows on a stream other than `_default` (BigQuery takes them there
    /// only); otherwise encodes later rows for a writer schema with the change
    /// pseudo-columns, if it does not have them yet.
    fn enable_changes(&mut self) -> Result<()> {
        if self.cfg.kind != StreamKind::Default {
            return Err(Error::config(format!(
                "change rows (UPSERT, DELETE) are written only on the _default stream; this writer is on a {} stream",
                self.cfg.kind.name()
            )));
        }
        if self.cfg.encoder.schema().has_change_columns() {
            return Ok(());
        }
        self.cfg.proto_options = self.cfg.proto_options.with_change_columns(true);
        let table = self.cfg.encoder.schema().table_schema().clone();
        let write_schema =
            WriteSchema::with_options(&table, self.cfg.proto_options).map_err(Error::from)?;
        self.cfg.encoder = RowEncoder::new(write_schema);
        Ok(())
    }

    /// Encodes rows (with `encode`, given the output so far), queues them and sends every
    /// request that fills up; a field the writer's schema lacks fetches the table schema
    /// once and encodes again.
    async fn append_with(
        &mut self,
        encode: impl Fn(&mut Core) -> Result<Vec<Vec<u8>>>,
    ) -> Result<()> {
        self.check_failed()?;
        self.refresh_if_due().await?;
        let encoded = match encode(self) {
            Ok(encoded) => encoded,
            // A field the writer's schema lacks may be a column added since: fetch the
            // table schema once, and encode again if it changed.
            // (A failed fetch leaves the encode error, which names the field.)
            Err(e) if self.lacks_field(&e) && matches!(self.refresh_schema().await, Ok(true)) => {
                encode(self)?
            }
            Err(e) => return Err(e),
        };
        let schema = self.cfg.encoder.schema().clone();
        let limit = self.cfg.max_request_bytes - REQUEST_OVERHEAD;
        for row in encoded {
            let size = framed(row.len());
            // Rows encoded for another schema (taken while this append waited) go in a
            // request of their own, with their own writer schema.
            if self.batch_bytes + size > limit
                || (!self.batch.is_empty() && !Arc::ptr_eq(&self.batch_schema, &schema))
            {
                self.send_batch().await?;
            }
            if self.batch.is_empty() {
                self.batch_first_row = self.rows_seen;
                self.batch_schema = schema.clone();
                self.batch_since = Some(Instant::now());
                self.batch_started.notify_one();
            }
            self.batch.push(row);
            self.batch_bytes += size;
            self.rows_seen += 1;
            if self
                .cfg
                .max_batch_rows
                .is_some_and(|n| self.batch.len() >= n)
            {
                self.send_batch().await?;
            }
        }
        if self.cfg.max_batch_delay.is_zero() {
            self.send_batch().await?;
        }
        Ok(())
    }

    /// `items` encoded for the writer's schema by `encode_row`, each within a request.
    fn encode_each<U>(
        &mut self,
        items: &[U],
        mut encode_row: impl FnMut(
            &mut RowEncoder,
            &U,
            &mut Vec<u8>,
        ) -> std::result::Result<(), bigq_codec::CodecError>,
    ) -> Result<Vec<Vec<u8>>> {
        let limit = self.cfg.max_request_bytes - REQUEST_OVERHEAD;
        let mut encoded: Vec<Vec<u8>> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            // Each row is its own buffer (ProtoRows holds one per row); sized like the last
            // one, rows of a table rarely grow it again.
            let hint = encoded.last().map_or(64, |b| b.len() + b.len() / 4);
            let mut buf = Vec::with_capacity(hint);
            encode_row(&mut self.cfg.encoder, item, &mut buf)
                .map_err(|e| Error::encode(e.with_row(i as u64)))?;
            if framed(buf.len()) > limit {
                return Err(Error::new(
                    ErrorKind::Encode,
                    format!(
                        "row {i} is {} bytes encoded, more than a request of {} bytes holds",
                        buf.len(),
                        self.cfg.max_request_bytes
                    ),
                ));
            }
            encoded.push(buf);
        }
        Ok(encoded)
    }

    /// Whether `e` is a row's field that is no column of the writer's schema.
    fn lacks_field(&self, e: &Error) -> bool {
        let Some(column) = e.codec_error().and_then(|c| c.column()) else {
            return false;
        };
        let mut fields = &self.cfg.encoder.schema().table_schema().fields;
        for name in column.split('.') {
            match fields.iter().find(|f| f.name.eq_ignore_ascii_case(name)) {
                Some(f) => fields = &f.fields,
                None => return true,
            }
        }
        false
    }

    /// Fetches the table schema when the periodic refresh asked for is due.
    async fn refresh_if_due(&mut self) -> Result<()> {
        if self
            .cfg
            .schema_refresh
            .is_some_and(|every| self.schema_checked.elapsed() >= every)
        {
            self.refresh_schema().await?;
        }
        Ok(())
    }

    /// Fetches the table schema from the stream (GetWriteStream) and takes it if it differs
    /// from the writer's; says whether it did.
    async fn refresh_schema(&mut self) -> Result<bool> {
        let req = GetWriteStreamRequest {
            name: self.cfg.stream.clone(),
            view: WriteStreamView::Full as i32,
        };
        let transport = &self.cfg.transport;
        let stream = control(&self.cfg.retry, "GetWriteStream", || {
            transport.get_write_stream(req.clone())
        })
        .await?;
        self.schema_checked = Instant::now();
        match stream.table_schema {
            Some(s) => self.take_schema(&from_storage_schema(&s)?),
            None => Ok(false),
        }
    }

    /// Encodes later rows for `schema` if it differs from the writer's; says whether it
    /// did. Rows encoded before keep the schema they were encoded for.
    fn take_schema(&mut self, schema: &TableSchema) -> Result<bool> {
        if self.cfg.encoder.schema().table_schema() == schema {
            return Ok(false);
        }
        let write_schema =
            WriteSchema::with_options(schema, self.cfg.proto_options).map_err(Error::from)?;
        tracing::debug!(
            columns = schema.fields.len(),
            "Storage Write: the table schema changed"
        );
        self.cfg.encoder = RowEncoder::new(write_schema);
        self.tally(|s| s.schema_updates += 1);
        Ok(true)
    }

    async fn append_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_failed()?;
        self.refresh_if_due().await?;
        let in_table = |core: &Core, name: &str| {
            let table = core.cfg.encoder.schema().table_schema();
            table
                .fields
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(name))
        };
        let missing = |core: &Core| {
            batch
                .schema()
                .fields()
                .iter()
                .find(|field| !in_table(core, field.name()) && !is_change_column(field.name()))
                .map(|field| field.name().clone())
        };
        let has_changes = batch
            .schema()
            .fields()
            .iter()
            .any(|f| is_change_column(f.name()) && !in_table(self, f.name()));
        if has_changes && self.cfg.kind != StreamKind::Default {
            return Err(Error::config(format!(
                "change rows (a _CHANGE_TYPE column) are written only on the _default stream; this writer is on a {} stream",
                self.cfg.kind.name()
            )));
        }
        // A column the writer's schema lacks may have been added since: fetch the table
        // schema once before refusing it.
        let mut unknown = missing(self);
        if unknown.is_some() && matches!(self.refresh_schema().await, Ok(true)) {
            unknown = missing(self);
        }
        if let Some(name) = unknown {
            return Err(Error::new(
                ErrorKind::Encode,
                format!("the batch has a column {name:?} that the table does not have"),
            ));
        }
        let schema = self.arrow_schema_bytes(&batch.schema())?;
        let limit = self.cfg.max_request_bytes - REQUEST_OVERHEAD;
        let mut requests = Vec::new();
        let mut todo = vec![batch.clone()];
        while let Some(part) = todo.pop() {
            let message = ipc_batch_message(&part)?;
            if message.len() <= limit {
                requests.push((part.num_rows(), message));
            } else if part.num_rows() > 1 {
                let half = part.num_rows() / 2;
                todo.push(part.slice(half, part.num_rows() - half));
                todo.push(part.slice(0, half));
            } else {
                return Err(Error::new(
                    ErrorKind::Encode,
                    format!(
                        "row {} is {} bytes as Arrow, more than a request of {} bytes holds",
                        self.rows_seen + requests.iter().map(|(n, _)| *n as u64).sum::<u64>(),
                        message.len(),
                        self.cfg.max_request_bytes
                    ),
                ));
            }
        }
        self.send_batch().await?;
        for (n, message) in requests {
            let rows = append_rows_request::Rows::ArrowRows(append_rows_request::ArrowData {
                writer_schema: None,
                rows: Some(ArrowRecordBatch {
                    serialized_record_batch: message,
                    ..Default::default()
                }),
            });
            let first_row = self.rows_seen;
            self.rows_seen += n as u64;
            self.send_new(rows, RowsSchema::Arrow(schema.clone()), n, first_row)
                .await?;
        }
        Ok(())
    }

    /// The IPC serialization of `schema`, kept for the batches after it.
    fn arrow_schema_bytes(&mut self, schema: &SchemaRef) -> Result<Arc<Vec<u8>>> {
        if let Some((known, bytes)) = &self.arrow_schema
            && known == schema
        {
            return Ok(bytes.clone());
        }
        let bytes = Arc::new(ipc_schema_message(schema)?);
        self.arrow_schema = Some((schema.clone(), bytes.clone()));
        Ok(bytes)
    }

    async fn flush(&mut self) -> Result<()> {
        self.check_failed()?;
        self.send_batch().await?;
        while !self.in_flight.is_empty() {
            self.await_one().await?;
        }
        if self.cfg.kind == StreamKind::Buffered && self.next_offset > 0 {
            let req = FlushRowsRequest {
                write_stream: self.cfg.stream.clone(),
                offset: Some(self.next_offset - 1),
            };
            let transport = &self.cfg.transport;
            control(&self.cfg.retry, "FlushRows", || {
                transport.flush_rows(req.clone())
            })
            .await?;
        }
        Ok(())
    }

    async fn finish_inner(&mut self) -> Result<()> {
        self.flush().await?;
        self.connection = None;
        if self.cfg.kind != StreamKind::Default {
            let req = FinalizeWriteStreamRequest {
                name: self.cfg.stream.clone(),
            };
            let transport = &self.cfg.transport;
            let resp = control(&self.cfg.retry, "FinalizeWriteStream", || {
                transport.finalize_write_stream(req.clone())
            })
            .await?;
            self.tally(|s| s.finalized_rows = Some(resp.row_count.max(0) as u64));
        }
        Ok(())
    }

    async fn commit(&mut self) -> Result<()> {
        if self.cfg.kind != StreamKind::Pending {
            return Err(Error::config("only a PENDING stream is committed"));
        }
        self.finish_inner().await?;
        let commit_time = commit(
            self.cfg.transport.as_ref(),
            &self.cfg.retry,
            &self.cfg.table_path,
            vec![self.cfg.stream.clone()],
        )
        .await?;
        self.tally(|s| s.commit_time = commit_time);
        Ok(())
    }

    /// Sends the queued rows as one request, first waiting for room in the window.
    async fn send_batch(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        self.batch_since = None;
        let n = rows.len();
        let rows = append_rows_request::Rows::ProtoRows(append_rows_request::ProtoData {
            writer_schema: None,
            rows: Some(ProtoRows {
                serialized_rows: rows,
            }),
        });
        let first_row = self.batch_first_row;
        let schema = RowsSchema::Proto(self.batch_schema.clone());
        self.send_new(rows, schema, n, first_row).await
    }

    /// Sends a new request of `n` rows starting at the writer's row `first_row`, with the
    /// stream's offset when it has them, once the window has room for it (in requests and
    /// in bytes).
    async fn send_new(
        &mut self,
        rows: append_rows_request::Rows,
        schema: RowsSchema,
        n: usize,
        first_row: u64,
    ) -> Result<()> {
        let offset = self.cfg.kind.has_offsets().then_some(self.next_offset);
        let request = AppendRowsRequest {
            write_stream: self.cfg.stream.clone(),
            offset,
            trace_id: "bigq".to_string(),
            missing_value_interpretations: self.cfg.missing_value_interpretations.clone(),
            default_missing_value_interpretation: self.cfg.default_missing_value_interpretation,
            rows: Some(rows),
            ..Default::default()
        };
        let bytes = request.encoded_len();
        while !self.has_room(bytes) {
            self.await_one().await?;
        }
        if offset.is_some() {
            self.next_offset += n as i64;
        }
        let sent = InFlight {
            request: Arc::new(request),
            schema,
            rows: n,
            first_row,
            bytes,
        };
        // With no connection and requests unconfirmed (a send failed), this one waits for
        // the reconnection in `await_one`, which sends them all again in order: a new
        // connection opened by this request alone would lose the ones before it, whose
        // responses it would be taken for.
        if self.connection.is_none() && !self.in_flight.is_empty() {
            self.in_flight_bytes += bytes;
            self.in_flight.push_back(sent);
            return Ok(());
        }
        if let Err(status) = self.send(&sent).await {
            // Queued anyway: the reconnection in `await_one` sends it again.
            self.connection = None;
            tracing::debug!(%status, "AppendRows send failed; will reconnect");
        }
        self.in_flight_bytes += bytes;
        self.in_flight.push_back(sent);
        let in_flight_bytes = self.in_flight_bytes as u64;
        self.tally(|s| s.peak_in_flight_bytes = s.peak_in_flight_bytes.max(in_flight_bytes));
        Ok(())
    }

    /// Whether a request of `bytes` may be sent now: the window has a free slot, and the
    /// bytes in flight stay under their bound (or nothing is in flight; the builder keeps
    /// the bound at least one request).
    fn has_room(&self, bytes: usize) -> bool {
        self.in_flight.len() < self.cfg.max_in_flight
            && self
                .cfg
                .max_in_flight_bytes
                .is_none_or(|max| self.in_flight.is_empty() || self.in_flight_bytes + bytes <= max)
    }

    /// Sends one request on the connection, opening one if there is none. The first request
    /// of a connection carries the writer schema, and so does one whose rows have another
    /// schema than the request before it.
    async fn send(&mut self, sent: &InFlight) -> std::result::Result<(), Status> {
        let new_connection = self.connection.is_none();
        let schema_changed = self
            .connection
            .as_ref()
            .is_some_and(|c| c.schema != sent.schema);
        // The request as queued is shared with the connection; only one that must carry the
        // writer schema (a connection's first, or a change of format) is copied to add it.
        let request = if new_connection || schema_changed {
            let mut request = AppendRowsRequest::clone(&sent.request);
            Self::set_schema(&mut request, &sent.schema);
            Arc::new(request)
        } else {
            sent.request.clone()
        };
        let bytes = request.encoded_len() as u64;
        if new_connection {
            let (tx, rx) = mpsc::channel(self.cfg.max_in_flight + 1);
            tx.try_send(request)
                .map_err(|_| Status::internal("the request channel is full"))?;
            let requests = Requests(rx);
            let responses = self
                .cfg
                .transport
                .append_rows(&self.cfg.stream, requests)
                .await?;
            self.connection = Some(Connection {
                tx,
                responses,
                schema: sent.schema.clone(),
            });
        } else if let Some(c) = &mut self.connection {
            c.schema = sent.schema.clone();
            c.tx.send(request)
                .await
                .map_err(|_| Status::unavailable("the AppendRows connection closed"))?;
        }
        self.tally(|s| {
            s.requests += 1;
            s.bytes_sent += bytes;
        });
        Ok(())
    }

    fn set_schema(request: &mut AppendRowsRequest, schema: &RowsSchema) {
        match (&mut request.rows, schema) {
            (Some(append_rows_request::Rows::ProtoRows(data)), RowsSchema::Proto(schema)) => {
                data.writer_schema = Some(ProtoSchema {
                    proto_descriptor: Some(schema.descriptor().clone()),
                });
            }
            (Some(append_rows_request::Rows::ArrowRows(data)), RowsSchema::Arrow(bytes)) => {
                data.writer_schema = Some(ArrowSchema {
                    serialized_schema: bytes.as_ref().clone(),
                });
            }
            _ => {}
        }
    }

    /// Waits for the oldest request's response; reconnects and sends the unconfirmed
    /// requests again after a retryable failure.
    ///
    /// Failures in a row are bounded by the client's policy through the retry driver, from
    /// the first failure on (the wait for a response before it does not count), with the
    /// wait a RetryInfo asks for honoured.
    async fn await_one(&mut self) -> Result<()> {
        let mut attempts: Option<Attempts> = None;
        let idle = self.cfg.retry.idle_timeout;
        loop {
            let mut updated_schema = None;
            let outcome = match self.connection.as_mut() {
                None => Outcome::Retry(Status::unavailable("not connected")),
                // A connection that answers nothing for the idle timeout is reopened and the
                // unconfirmed requests sent again.
                Some(c) => match tokio::time::timeout(idle, c.responses.next()).await {
                    Err(_) => Outcome::Retry(Status::deadline_exceeded(format!(
                        "AppendRows: no response for the idle timeout ({idle:.1?})"
                    ))),
                    Ok(Some(Ok(mut resp))) => {
                        updated_schema = resp.updated_schema.take();
                        self.outcome(resp)
                    }
                    Ok(Some(Err(status))) => self.status_outcome(status),
                    Ok(None) => Outcome::Retry(Status::unavailable(
                        "the AppendRows stream ended with requests unanswered",
                    )),
                },
            };
            match outcome {
                Outcome::Done => {
                    if let Some(done) = self.in_flight.pop_front() {
                        self.in_flight_bytes -= done.bytes;
                        self.tally(|s| s.rows_written += done.rows as u64);
                    }
                    // BigQuery reports a newer table schema: later rows are encoded for it.
                    // One the writer cannot encode for leaves it on the schema it has.
                    if let Some(schema) = updated_schema
                        && let Err(e) =
                            from_storage_schema(&schema).and_then(|s| self.take_schema(&s))
                    {
                        tracing::debug!(error = %e, "Storage Write: an updated schema not taken");
                    }
                    return Ok(());
                }
                Outcome::Fail(e) => {
                    self.in_flight.clear();
                    self.in_flight_bytes = 0;
                    self.connection = None;
                    return Err(self.fail(e));
                }
                Outcome::Retry(status) => {
                    let attempts = attempts.get_or_insert_with(|| Attempts::new(&self.cfg.retry));
                    let e = status_error(&status);
                    let Some(wait) = attempts.retry(&e, true) else {
                        let e = attempts.give_up(e);
                        self.in_flight.clear();
                        self.in_flight_bytes = 0;
                        self.connection = None;
                        return Err(self.fail(e));
                    };
                    tracing::debug!(%status, attempt = attempts.attempt(), ?wait, "AppendRows: reconnecting");
                    self.connection = None;
                    tokio::time::sleep(wait).await;
                    self.resend().await;
                }
            }
        }
    }

    /// Sends every unconfirmed request again, in order, on a new connection. A send that
    /// fails leaves the connection closed; the next response wait then retries.
    async fn resend(&mut self) {
        let pending = std::mem::take(&mut self.in_flight);
        self.tally(|s| s.retries += 1);
        let mut ok = true;
        for sent in &pending {
            if ok && let Err(status) = self.send(sent).await {
                tracing::debug!(%status, "AppendRows resend failed");
                self.connection = None;
                ok = false;
            }
        }
        self.in_flight = pending;
    }

    fn status_outcome(&self, status: Status) -> Outcome {
        match status.code() {
            Code::Unavailable
            | Code::Aborted
            | Code::Internal
            | Code::Unknown
            | Code::Cancelled
            | Code::DeadlineExceeded => Outcome::Retry(status),
            Code::ResourceExhausted if retry_info(&status).is_some() => Outcome::Retry(status),
            Code::AlreadyExists if self.cfg.kind.has_offsets() => Outcome::Done,
            Code::OutOfRange if self.cfg.kind.has_offsets() => Outcome::Retry(status),
            _ => Outcome::Fail(status_error(&status)),
        }
    }

    fn outcome(&self, resp: AppendRowsResponse) -> Outcome {
        let Some(front) = self.in_flight.front() else {
            return Outcome::Fail(Error::new(
                ErrorKind::Transport,
                "an AppendRows response with no request waiting for it",
            ));
        };
        if !resp.row_errors.is_empty() {
            let rows: Vec<RowError> = resp
                .row_errors
                .iter()
                .map(|r| RowError {
                    row: front.first_row + r.index.max(0) as u64,
                    message: r.message.clone(),
                })
                .collect();
            let first = rows
                .first()
                .map(|r| format!("row {}: {}", r.row, r.message))
                .unwrap_or_default();
            let message = format!(
                "BigQuery refused {} row(s) of a request of {} ({first}); none of the request was written",
                rows.len(),
                front.rows,
            );
            return Outcome::Fail(
                Error::api(400, Some("invalid".into()), message).with_row_errors(rows),
            );
        }
        match resp.response {
            Some(append_rows_response::Response::AppendResult(r)) => {
                let expected = front.request.offset;
                match (expected, r.offset) {
                    (Some(want), Some(got)) if want != got => Outcome::Fail(Error::new(
                        ErrorKind::Transport,
                        format!("AppendRows confirmed offset {got} for the request sent at {want}"),
                    )),
                    _ => Outcome::Done,
                }
            }
            Some(append_rows_response::Response::Error(rpc)) => {
                let code = Code::from_i32(rpc.code);
                self.status_outcome(Status::new(code, rpc.message))
            }
            None => Outcome::Fail(Error::new(
                ErrorKind::Transport,
                "an AppendRows response with neither a result nor an error",
            )),
        }
    }
}

/// `schema` as one encapsulated IPC schema message.
fn ipc_schema_message(schema: &arrow_schema::Schema) -> Result<Vec<u8>> {
    Ok(ipc_encoder()?.schema(schema))
}

/// `batch` as one encapsulated IPC record batch message (no compression: the Storage Write
/// API takes the buffers as they are; no dictionaries: BigQuery takes none).
fn ipc_batch_message(batch: &RecordBatch) -> Result<Vec<u8>> {
    ipc_encoder()?.batch(batch).map_err(encode_error)
}

fn ipc_encoder() -> Result<bigq_codec::ipc::IpcEncoder> {
    bigq_codec::ipc::IpcEncoder::new(None).map_err(encode_error)
}

fn encode_error(e: bigq_codec::CodecError) -> Error {
    Error::new(ErrorKind::Encode, e.to_string())
}

/// Bytes of a row in `ProtoRows.serialized_rows`: key, length, row.
fn framed(len: usize) -> usize {
    1 + bigq_codec::proto::wire::varint_len(len as u64) + len
}

/// Commits finalized PENDING streams of one table together; returns the commit time.
pub(crate) async fn commit(
    transport: &dyn WriteTransport,
    policy: &RetryPolicy,
    table_path: &str,
    streams: Vec<String>,
) -> Result<Option<crate::value::Timestamp>> {
    let req = BatchCommitWriteStreamsRequest {
        parent: table_path.to_string(),
        write_streams: streams,
    };
    let resp = control(policy, "BatchCommitWriteStreams", || {
        transport.batch_commit_write_streams(req.clone())
    })
    .await?;
    if !resp.stream_errors.is_empty() || resp.commit_time.is_none() {
        let detail = resp
            .stream_errors
            .iter()
            .map(|e| format!("{}: {}", e.entity, e.error_message))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(Error::api(
            400,
            Some("invalid".into()),
            format!("BatchCommitWriteStreams committed nothing: {detail}"),
        ));
    }
    Ok(resp
        .commit_time
        .map(|t| crate::value::Timestamp::new(t.seconds * 1_000_000 + (t.nanos / 1000) as i64)))
}

// The writer moves between tasks.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Writer>();
};

//! Table writes through the BigQuery Storage Write API (gRPC).
//!
//! [`Client::write`](crate::Client::write) opens a [`Writer`] on one write stream of a table. Rows of any
//! `T: Serialize` are encoded straight into protobuf by
//! [`bigq_codec::proto::RowEncoder`] against a descriptor derived from the table schema
//! (fetched from the stream, or given with [`WriteBuilder::schema`]), packed into
//! `AppendRows` requests of at most [`max_request_bytes`](WriteBuilder::max_request_bytes)
//! (10 MB by default) with at most [`max_in_flight`](WriteBuilder::max_in_flight) (8)
//! awaiting their response; a partly filled request is sent once its first row has waited
//! [`max_batch_delay`](WriteBuilder::max_batch_delay) (100 ms). A column added to the table
//! while the writer is open is taken up when BigQuery reports the new schema or a row
//! carries it. Arrow `RecordBatch`es go in as they are with
//! [`Writer::append_batch`] (the API's `arrow_rows` format), split into requests under the
//! same limit; the two formats may be mixed on one writer. On the `_default` stream of a
//! table with a primary key, [`Writer::upsert`], [`Writer::delete`] and
//! [`Writer::append_changes`] write BigQuery's change data capture rows (`_CHANGE_TYPE`,
//! `_CHANGE_SEQUENCE_NUMBER`), merged into the table by its key.
//!
//! What each stream type guarantees:
//!
//! | stream | rows visible | guarantee |
//! |---|---|---|
//! | [`default_stream`](WriteBuilder::default_stream) (`_default`) | at once | at least once: a request resent after a broken connection may be written twice |
//! | [`committed`](WriteBuilder::committed) | at once | exactly once: every request carries its offset, and a resent request the server already has comes back ALREADY_EXISTS and is counted, not written again |
//! | [`pending`](WriteBuilder::pending) | at [`commit`](Writer::commit) | all rows or none, exactly once |
//! | [`buffered`](WriteBuilder::buffered) | at [`flush`](Writer::flush) (`FlushRows`) | exactly once |
//!
//! A failure that may pass (UNAVAILABLE, ABORTED, INTERNAL, a broken connection,
//! RESOURCE_EXHAUSTED with a retry delay, and OUT_OF_RANGE on streams with offsets) closes the
//! connection, waits as the client's [`RetryPolicy`](crate::RetryPolicy) says, and sends every
//! unconfirmed request again, in order, on a new connection. INVALID_ARGUMENT and rows
//! BigQuery refuses are not retried: the error lists them with
//! [`Error::row_errors`](crate::Error::row_errors).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> bigq::Result<()> {
//! # let emulator = bigq_emulator::Emulator::start().await.unwrap();
//! # let client = bigq::Client::builder()
//! #     .with_project(emulator.project())
//! #     .with_emulator(emulator.rest_endpoint())
//! #     .with_emulator_grpc(emulator.grpc_endpoint())
//! #     .build()
//! #     .await?;
//! # client.create_dataset(bigq::admin::Dataset::new("my_dataset")).await?;
//! # use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
//! # let schema = TableSchema::new(vec![
//! #     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
//! #     TableFieldSchema::new("name", FieldType::String),
//! #     TableFieldSchema::new("day", FieldType::Date),
//! # ]);
//! # client.create_table(bigq::admin::Table::new("my_dataset.my_table", schema)).await?;
//! #[derive(serde::Serialize)]
//! struct Row {
//!     id: i64,
//!     name: Option<String>,
//!     day: bigq::value::Date,
//! }
//!
//! let rows: Vec<Row> = (0..1000)
//!     .map(|id| Row { id, name: None, day: bigq::value::Date::new(19_000) })
//!     .collect();
//!
//! // At least once, visible at once.
//! let mut writer = client.write("my_dataset.my_table").default_stream().open().await?;
//! writer.append(&rows).await?;
//! let summary = writer.finish().await?;
//! println!("{} rows in {} requests", summary.rows_written, summary.requests);
//! assert_eq!(summary.rows_written, 1000);
//!
//! // All or nothing.
//! let mut writer = client.write("my_dataset.my_table").pending().open().await?;
//! writer.append(&rows).await?;
//! writer.commit().await?;
//! let n: Vec<(i64,)> = client.query("SELECT COUNT(*) FROM my_dataset.my_table").fetch_all().await?;
//! assert_eq!(n, [(2000,)]);
//! # Ok(()) }
//! ```

mod builder;
mod change;
mod options;
mod schema;
mod summary;
mod transport;
mod writer;

#[cfg(test)]
mod tests;

pub use crate::error::RowError;
pub use bigq_codec::proto::NumericEncoding;
pub use builder::WriteBuilder;
pub use change::{CHANGE_SEQUENCE_COLUMN, CHANGE_TYPE_COLUMN, Change, ChangeSequence, ChangeType};
pub use options::{
    DEFAULT_MAX_BATCH_DELAY, DEFAULT_MAX_IN_FLIGHT, DEFAULT_REQUEST_BYTES, MAX_REQUEST_BYTES,
    MissingValue,
};
pub use summary::WriteSummary;
pub use writer::Writer;

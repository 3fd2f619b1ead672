//! # bigq — a fast, complete BigQuery client
//!
//! bigq runs queries over BigQuery's REST API and decodes results in one streaming pass
//! straight into Apache Arrow, then into your own types with serde.
//!
//! ```standalone_crate
//! use bigq::Client;
//!
//! #[derive(serde::Deserialize, Debug)]
//! struct Row {
//!     word: String,
//!     n: i64,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> bigq::Result<()> {
//! # let emulator = bigq_emulator::Emulator::start().await.unwrap();
//! # // SAFETY: this doctest runs in a process of its own, on one thread.
//! # unsafe {
//! #     std::env::set_var("GOOGLE_CLOUD_PROJECT", emulator.project());
//! #     std::env::set_var("BIGQUERY_EMULATOR_HOST", emulator.rest_endpoint());
//! # }
//! // GOOGLE_CLOUD_PROJECT, Application Default Credentials, or BIGQUERY_EMULATOR_HOST.
//! let client = Client::from_env().await?;
//! let results = client
//!     .query("SELECT word, COUNT(*) AS n FROM UNNEST(@words) AS word GROUP BY word ORDER BY word")
//!     .param("words", vec!["a", "b", "a"])
//!     .run()
//!     .await?;
//! println!("bytes processed: {:?}", results.stats().total_bytes_processed);
//! let rows: Vec<Row> = results.fetch_all().await?;
//! assert_eq!((rows[0].word.as_str(), rows[0].n), ("a", 2));
//! # Ok(()) }
//! ```
//!
//! ## Guide
//!
//! **Connecting.** [`Client::from_env`] reads `GOOGLE_CLOUD_PROJECT` and uses Application
//! Default Credentials (service account keys, `gcloud auth application-default login`, the
//! metadata server, impersonation, workload identity federation), or talks to an emulator
//! with no credentials when `BIGQUERY_EMULATOR_HOST` is set. [`Client::builder`] sets each
//! part by hand. The client is cheap to clone.
//!
//! **Queries.** [`Client::query`] returns a [`query::QueryBuilder`]: bind named parameters
//! with `.param("name", value)` or positional ones with `.bind(value)` (scalars, `Vec`s for
//! ARRAY, [`query::Param::structure`] for STRUCT, BigQuery's [`value`] types), then
//!
//! - `.fetch_all::<T>()` collects typed rows,
//! - `.rows::<T>()` streams them ([`query::RowStream`], a `futures::Stream`),
//! - `.batches()` streams Arrow `RecordBatch`es ([`query::BatchStream`]),
//! - `.execute()` returns only the [`query::QueryStats`] (DDL, DML),
//! - `.run()` returns [`query::QueryResults`]: statistics first, rows after.
//!
//! Queries run in short query mode by default (BigQuery may answer without creating a job);
//! `.job_creation_required(true)` always creates one (toggles on every builder take a
//! `bool`). Results larger than one response are paged, the next page fetched while the
//! current one is decoded.
//!
//! **Transports.** Queries, jobs, datasets and tables go over REST v2 by default; with
//! [`ClientBuilder::with_transport`]`(`[`Transport::Grpc`]`)` they go over the v2 gRPC
//! services instead, with the same API. Over gRPC a query's first page arrives as Arrow
//! (LZ4-compressed) and is decoded like a Storage Read; the pages after it are read through
//! Storage Read, or decoded from `GetQueryResults`' struct-encoded rows when
//! `.use_storage_read(false)`. `tabledata.list` and `tabledata.insertAll` have no gRPC form
//! and stay on REST.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> bigq::Result<()> {
//! # let emulator = bigq_emulator::Emulator::builder().with_project("my-project").start().await.unwrap();
//! use bigq::{Client, Transport};
//! let client = Client::builder()
//!     .with_project("my-project")
//! #   .with_emulator(emulator.rest_endpoint())
//! #   .with_emulator_grpc(emulator.grpc_endpoint())
//!     .with_transport(Transport::Grpc)
//!     .build()
//!     .await?;
//! let n: Vec<(i64,)> = client.query("SELECT 1").fetch_all().await?;
//! assert_eq!(n, [(1,)]);
//! # Ok(()) }
//! ```
//!
//! **Typed rows.** Any `T: serde::Deserialize`: structs by column name, tuples by position,
//! `Option` for NULL, `Vec` for REPEATED, nested structs for RECORD, and the exact types in
//! [`value`] (`Numeric`, `BigNumeric`, `Date`, `Time`, `DateTime`, `Timestamp`, `Interval`,
//! `Range`, `Json`, `Geography`), with conversions to chrono, jiff and time behind the
//! features of those names. A NULL into a non-`Option` field, a missing column or a value out
//! of range is an error that names the column and the row.
//!
//! **Tables.** [`Client::create_dataset`], [`Client::create_table`], [`Client::get_table`],
//! [`Client::list_tables`], [`Client::delete_table`], [`Client::delete_dataset`]. Tables and
//! datasets are named by a [`TableId`] / [`DatasetId`] or by text (`dataset.table`,
//! `project.dataset.table`); listings are [`admin::ListStream`]s, pages fetched as they are
//! read. [`Client::read_table_data`] pages through `tabledata.list` with the same decoder
//! as queries, and [`Client::insert_rows`] streams serde rows in with
//! `tabledata.insertAll`. A table's schema can be derived from its row type:
//! `#[derive(bigq::Schema)]` and [`TableSchema::of`](schema::TableSchema::of) (see
//! [`schema`]).
//!
//! **Storage Read.** [`Client::read`] reads a table through the BigQuery Storage Read API
//! over gRPC, every read stream on its own task: `.selected_fields([..])`,
//! `.row_restriction("..")`, `.snapshot_time(..)`, `.max_streams(n)` (default: twice the
//! machine's parallelism) and `.compression(..)` (LZ4_FRAME by default), then
//! `.batches()` ([`read::ReadBatchStream`]), `.rows::<T>()` ([`read::ReadRowStream`], rows
//! decoded on each stream's task), `.fetch_all::<T>()` or `.streams()` (one
//! [`read::ReadStream`] each). The Storage endpoint is set with
//! [`ClientBuilder::with_storage_endpoint`], or [`ClientBuilder::with_emulator_grpc`] and
//! `BIGQUERY_STORAGE_EMULATOR_HOST` for an emulator.
//!
//! **Errors.** One [`Error`]: [`Error::is_not_found`], [`Error::is_already_exists`],
//! [`Error::is_invalid_query`], [`Error::is_retryable`], [`Error::reason`] (BigQuery's),
//! [`Error::codec_error`] (column, row, value). Requests, result pages and stream
//! reconnects are retried by the client's [`RetryPolicy`] (waiting what the server asks
//! for, when it says); a query that fails with a retryable job error is run again by
//! [`query::QueryBuilder::job_retry`], under a policy of its own.
#![warn(missing_docs)]
// Bytes from servers and values from users must never panic: every unwrap, expect, index or
// slice left in non-test code carries a narrow allow saying why it cannot fail.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod admin;
mod auth;
mod client;
mod error;
mod ids;
mod paging;
pub mod query;
pub mod read;
mod retry;
pub mod schema;
mod transport;
pub mod write;

pub use auth::{BIGQUERY_SCOPE, Credentials};
pub use client::{Client, ClientBuilder};
pub use error::{CodecError, Deadline, Error, ErrorKind, Result, RowError};
pub use ids::{DatasetId, IntoDatasetId, IntoTableId, TableId};
pub use retry::RetryPolicy;
pub use transport::Transport;

pub use bigq_codec::schema::Schema;
pub use bigq_derive::Schema;

/// BigQuery's value types.
pub mod value {
    pub use bigq_codec::value::*;
}

/// Arrow, as bigq uses it (the `arrow-array` and `arrow-schema` crates).
pub mod arrow {
    pub use arrow_array::{self as array, RecordBatch};
    pub use arrow_schema::{self as schema, SchemaRef};
}

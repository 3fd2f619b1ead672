//! Table reads through the BigQuery Storage Read API (gRPC).
//!
//! [`Client::read`](crate::Client::read) creates a read session over a table (with a
//! column projection, a row filter and a snapshot time if asked), then reads every stream of the session on its own
//! task: each task calls ReadRows, decodes the Arrow IPC batches (LZ4_FRAME-compressed by
//! default) and, for typed reads, the rows, and hands them over through a bounded channel.
//! A stream that breaks with a retryable status (UNAVAILABLE, INTERNAL with a reset HTTP/2
//! stream, RESOURCE_EXHAUSTED with a RetryInfo, whose delay is then waited) is reopened at
//! the row it had reached, within the client's [`RetryPolicy`](crate::RetryPolicy).
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
//! # client
//! #     .query("CREATE TABLE my_dataset.my_table AS SELECT n AS id, CAST(n AS STRING) AS name FROM UNNEST(GENERATE_ARRAY(1, 200)) AS n")
//! #     .execute()
//! #     .await?;
//! use futures::TryStreamExt;
//!
//! #[derive(serde::Deserialize)]
//! struct Row {
//!     id: i64,
//!     name: Option<String>,
//! }
//!
//! let rows: Vec<Row> = client
//!     .read("my_dataset.my_table")
//!     .selected_fields(["id", "name"])
//!     .row_restriction("id > 100")
//!     .fetch_all()
//!     .await?;
//! assert_eq!(rows.len(), 100);
//! assert!(rows.iter().all(|r| r.id > 100 && r.name.is_some()));
//!
//! let mut batches = client.read("my_dataset.my_table").batches().await?;
//! let mut total = 0;
//! while let Some(batch) = batches.try_next().await? {
//!     total += batch.num_rows();
//! }
//! assert_eq!(total, 200);
//! # Ok(()) }
//! ```

mod builder;
mod filter;
mod options;
mod session;
mod spawn;
mod streams;
mod task;
#[cfg(test)]
pub(crate) mod test_batches;
mod wire;

pub use builder::ReadBuilder;
pub use filter::{Column, Filter, Literal};
pub use options::Compression;
pub use session::ReadSession;
pub use streams::{ReadBatchStream, ReadRowStream, ReadStream};

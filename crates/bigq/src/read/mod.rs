//! Table reads through the BigQuery Storage Read API (gRPC).
//!
//! [`Client::read`] creates a read session over a table (with a column projection, a row
//! filter and a snapshot time if asked), then reads every stream of the session on its own
//! task: each task calls ReadRows, decodes the Arrow IPC batches (LZ4_FRAME-compressed by
//! default) and, for typed reads, the rows, and hands them over through a bounded channel.
//! A stream that breaks with a retryable status (UNAVAILABLE, INTERNAL with a reset HTTP/2
//! stream, RESOURCE_EXHAUSTED with a RetryInfo, whose delay is then waited) is reopened at
//! the row it had reached, within the client's [`RetryPolicy`](crate::RetryPolicy).
//!
//! ```no_run
//! # async fn run() -> bigq::Result<()> {
//! use futures::TryStreamExt;
//!
//! #[derive(serde::Deserialize)]
//! struct Row {
//!     id: i64,
//!     name: Option<String>,
//! }
//!
//! let client = bigq::Client::from_env().await?;
//! let rows: Vec<Row> = client
//!     .read("my_dataset.my_table")
//!     .selected_fields(["id", "name"])
//!     .row_restriction("id > 100")
//!     .fetch_all()
//!     .await?;
//!
//! let mut batches = client.read("my_dataset.my_table").batches().await?;
//! while let Some(batch) = batches.try_next().await? {
//!     println!("{} rows", batch.num_rows());
//! }
//! # Ok(()) }
//! ```

mod filter;
mod session;
mod streams;
mod task;
#[cfg(test)]
pub(crate) mod test_batches;
mod wire;

use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

pub use filter::{Column, Filter, Literal};
pub use session::ReadSession;
pub use streams::{ReadBatchStream, ReadRowStream, ReadStream};

use crate::admin::{TableId, parse_table};
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::value::Timestamp;
use bigq_codec::ipc::IpcDecoder;
use session::Session;
use streams::{Merged, Tasks};
use task::{BatchSink, Batches, GrpcRows, Rows, read_stream};

/// How the server compresses the Arrow buffers it sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compression {
    /// No compression: the most bytes on the wire, the least CPU.
    None,
    /// LZ4_FRAME (the default): fast to decode, about half the bytes for typical tables.
    #[default]
    Lz4Frame,
    /// ZSTD: fewer bytes than LZ4, more CPU to decode.
    Zstd,
}

#[derive(Debug, Clone)]
pub(crate) struct ReadOptions {
    pub(crate) selected_fields: Vec<String>,
    pub(crate) row_restriction: Option<String>,
    pub(crate) snapshot_time: Option<Timestamp>,
    pub(crate) max_streams: u32,
    pub(crate) preferred_min_streams: u32,
    pub(crate) compression: Compression,
}

impl Client {
    /// Reads a table (`dataset.table` or `project.dataset.table`) through the Storage Read
    /// API. Sessions are billed to the client's project.
    pub fn read(&self, table: &str) -> ReadBuilder {
        self.read_parsed(parse_table(&self.inner.project, table))
    }

    /// Reads a table named by its parts.
    pub(crate) fn read_table(&self, table: TableId) -> ReadBuilder {
        self.read_parsed(Ok(table))
    }

    fn read_parsed(&self, table: Result<TableId>) -> ReadBuilder {
        // Two streams per core: a stream's task decodes a response while its next one is
        // on the way, and a core whose stream waits on the network has another to decode.
        // On bigq-emulator, same 2 cores, a 1M-row read: Arrow 298 -> 261 ms, typed rows
        // 539 -> 483 ms with 4 streams instead of 2 (docs/benchmarks.md, Storage Read).
        let parallelism = std::thread::available_parallelism().map_or(1, |n| n.get());
        ReadBuilder {
            client: self.clone(),
            table,
            options: ReadOptions {
                selected_fields: Vec::new(),
                row_restriction: None,
                snapshot_time: None,
                max_streams: (2 * parallelism).min(1000) as u32,
                preferred_min_streams: 0,
                compression: Compression::default(),
            },
            ordered: false,
        }
    }
}

/// A Storage Read of one table; finish with [`batches`](Self::batches),
/// [`rows`](Self::rows), [`fetch_all`](Self::fetch_all), [`streams`](Self::streams) or
/// [`session`](Self::session).
///
/// Errors in the request (a table that does not exist, a projection naming a missing
/// column, a filter that does not parse) come back from the finishing call, before any row.
#[must_use]
#[derive(Debug)]
pub struct ReadBuilder {
    client: Client,
    table: Result<TableId>,
    options: ReadOptions,
    ordered: bool,
}

impl ReadBuilder {
    /// Only these columns. Nested fields are named with dots (`address.city`), and the
    /// columns come back in the table's order, not this one.
    pub fn selected_fields<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.options.selected_fields = fields.into_iter().map(Into::into).collect();
        self
    }

    /// Only rows matching this SQL filter, as in a `WHERE` clause without subqueries or
    /// aggregates (`"id > 5 AND name IS NOT NULL"`). A string is sent as it is; a
    /// [`Filter`] quotes its values and column names itself
    /// (`Filter::col("name").eq("O'Brien")`).
    pub fn row_restriction(mut self, filter: impl Into<String>) -> Self {
        self.options.row_restriction = Some(filter.into());
        self
    }

    /// Reads the table as it was at this time (within the time travel window).
    pub fn snapshot_time(mut self, at: Timestamp) -> Self {
        self.options.snapshot_time = Some(at);
        self
    }

    /// Asks for at most this many streams (at least 1); BigQuery may give fewer. Defaults
    /// to twice the machine's parallelism.
    pub fn max_streams(mut self, n: u32) -> Self {
        self.options.max_streams = n.clamp(1, 1000);
        self
    }

    /// Asks BigQuery for at least this many streams where it can (a hint; 0, the default,
    /// leaves it to BigQuery). Raises `max_streams` to match when it is lower.
    pub fn preferred_min_streams(mut self, n: u32) -> Self {
        self.options.preferred_min_streams = n.min(1000);
        self.options.max_streams = self.options.max_streams.max(n.min(1000));
        self
    }

    /// The compression of the Arrow buffers (LZ4_FRAME by default).
    pub fn compression(mut self, compression: Compression) -> Self {
        self.options.compression = compression;
        self
    }

    /// Hands out batches (or rows) stream after stream, in the session's stream order,
    /// instead of as they arrive. Every stream is still read at once, each a couple of
    /// batches ahead, so a slow first stream holds the others back.
    pub fn ordered(mut self) -> Self {
        self.ordered = true;
        self
    }

    async fn create(&self) -> Result<Session> {
        let id = self.table.as_ref().map_err(clone_error)?;
        self.client.create_read_session(id, &self.options).await
    }

    fn spawn<S: BatchSink>(
        &self,
        session: &Session,
        sink: impl Fn() -> S,
        streams: &[String],
    ) -> Result<(Merged<S::Item>, Tasks)> {
        spawn(&self.client, session, sink, streams, self.ordered)
    }

    /// Creates the read session and returns it without reading, for callers who read its
    /// streams (and split them) themselves.
    pub async fn session(self) -> Result<ReadSession> {
        let session = self.create().await?;
        Ok(ReadSession::new(self.client, session))
    }

    /// Streams the table as Arrow record batches, from every read stream at once.
    pub async fn batches(self) -> Result<ReadBatchStream> {
        let session = self.create().await?;
        let n = session.streams.len();
        let (rx, tasks) = self.spawn(&session, || Batches, &session.streams)?;
        Ok(ReadBatchStream::new(session.schema, rx, n, tasks))
    }

    /// Streams the table's rows decoded into `T`, each stream decoding on its own task.
    pub async fn rows<T: DeserializeOwned + Send + 'static>(self) -> Result<ReadRowStream<T>> {
        let session = self.create().await?;
        let n = session.streams.len();
        let (rx, tasks) = self.spawn(&session, Rows::<T>::new, &session.streams)?;
        Ok(ReadRowStream::new(session.schema, rx, n, tasks))
    }

    /// Collects every row of the table into `T` (in no particular order).
    pub async fn fetch_all<T: DeserializeOwned + Send + 'static>(self) -> Result<Vec<T>> {
        self.rows().await?.try_collect().await
    }

    /// The session's streams, each decoding its rows into `T` on its own task, one
    /// [`ReadRowStream`] each, for callers who spread the streams over their own workers.
    pub async fn row_streams<T: DeserializeOwned + Send + 'static>(
        self,
    ) -> Result<Vec<ReadRowStream<T>>> {
        let session = self.create().await?;
        let mut out = Vec::with_capacity(session.streams.len());
        for name in &session.streams {
            let (rx, tasks) = self.spawn(&session, Rows::<T>::new, std::slice::from_ref(name))?;
            out.push(ReadRowStream::new(session.schema.clone(), rx, 1, tasks));
        }
        Ok(out)
    }

    /// The session's streams, one [`ReadStream`] each, for callers who read them in
    /// parallel themselves. Every stream starts reading at once, a couple of batches ahead.
    pub async fn streams(self) -> Result<Vec<ReadStream>> {
        let session = self.create().await?;
        let mut out = Vec::with_capacity(session.streams.len());
        for name in &session.streams {
            let (rx, tasks) = self.spawn(&session, || Batches, std::slice::from_ref(name))?;
            out.push(ReadStream::new(
                name.clone(),
                ReadBatchStream::new(session.schema.clone(), rx, 1, tasks),
            ));
        }
        Ok(out)
    }
}

/// Starts one task per stream sending `S`'s items into one shared channel, or into one
/// channel per stream for an ordered read.
pub(crate) fn spawn<S: BatchSink>(
    client: &Client,
    session: &Session,
    sink: impl Fn() -> S,
    streams: &[String],
    ordered: bool,
) -> Result<(Merged<S::Item>, Tasks)> {
    let mut tasks = Tasks::default();
    let mut rxs = Vec::new();
    let mut shared = None;
    for stream in streams {
        let tx = if ordered || streams.len() == 1 {
            let (tx, rx) = mpsc::channel(2);
            rxs.push(rx);
            tx
        } else {
            shared
                .get_or_insert_with(|| {
                    let (tx, rx) = mpsc::channel(2 * streams.len());
                    rxs.push(rx);
                    tx
                })
                .clone()
        };
        let decoder = IpcDecoder::new(&session.schema_bytes)?;
        let read = read_stream(
            GrpcRows {
                client: client.clone(),
            },
            stream.clone(),
            decoder,
            client.inner.retry.clone(),
            sink(),
            tx.clone(),
        );
        let stream = stream.clone();
        let handle = tokio::spawn(async move {
            // A panic (in a Deserialize impl, say) must not look like the end of the rows.
            if let Err(panic) = AssertUnwindSafe(read).catch_unwind().await {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let e = Error::new(
                    ErrorKind::Decode,
                    format!("reading stream {stream} panicked: {what}"),
                );
                let _ = tx.send(Err(e)).await;
            }
        });
        tasks.0.push(handle.abort_handle());
    }
    Ok((Merged::new(rxs), tasks))
}

fn clone_error(e: &Error) -> Error {
    Error::config(e.message().to_string())
}

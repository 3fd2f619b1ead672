//! [`ReadBuilder`]: a Storage Read's options, and the finishing calls that create the
//! session and start its streams.

use serde::de::DeserializeOwned;

use super::options::{Compression, ReadOptions};
use super::session::{ReadSession, Session};
use super::spawn::spawn;
use super::streams::{Merged, ReadBatchStream, ReadRowStream, ReadStream, Tasks};
use super::task::{BatchSink, Batches, Rows};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::ids::{IntoTableId, TableId, table_id};
use crate::value::Timestamp;

impl Client {
    /// Reads a table (a [`TableId`](crate::TableId), `dataset.table` or
    /// `project.dataset.table`) through the Storage Read API. Sessions are billed to the
    /// client's project.
    pub fn read(&self, table: impl IntoTableId) -> ReadBuilder {
        ReadBuilder {
            client: self.clone(),
            table: table_id(&self.inner.project, table),
            options: ReadOptions::new(),
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
    /// [`Filter`](super::Filter) quotes its values and column names itself
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

    /// Whether to hand out batches (or rows) stream after stream, in the session's stream
    /// order, instead of as they arrive (the default, `false`). Every stream is still read
    /// at once, each a couple of batches ahead, so a slow first stream holds the others
    /// back.
    pub fn ordered(mut self, yes: bool) -> Self {
        self.ordered = yes;
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
        spawn(
            &self.client,
            &session.schema_bytes,
            sink,
            streams,
            self.ordered,
        )
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

fn clone_error(e: &Error) -> Error {
    Error::config(e.message().to_string())
}

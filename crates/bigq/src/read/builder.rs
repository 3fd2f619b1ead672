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
use crate::schema::Schema;
use crate::value::Timestamp;

impl Client {
    /// Reads a table (a [`TableId`](crate::TableId), `dataset.table` or
    /// `project.dataset.table`) through the Storage Read API. Sessions are billed to the
    /// client's project.
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
    /// let mut ids: Vec<(i64,)> = client.read("ds.people").selected_fields(["id"]).fetch_all().await?;
    /// ids.sort();
    /// assert_eq!(ids, [(1,), (2,), (3,)]);
    /// # Ok(()) }
    /// ```
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
    /// struct Name {
    ///     name: String,
    /// }
    /// let read = client.read("ds.people").selected_fields(["name"]).batches().await?;
    /// assert_eq!(read.schema().fields().len(), 1);
    /// let mut names: Vec<String> = client
    ///     .read("ds.people")
    ///     .selected_fields(["name"])
    ///     .fetch_all::<Name>()
    ///     .await?
    ///     .into_iter()
    ///     .map(|r| r.name)
    ///     .collect();
    /// names.sort();
    /// assert_eq!(names, ["Ada", "Grace", "Linus"]);
    /// # Ok(()) }
    /// ```
    pub fn selected_fields<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.options.selected_fields = fields.into_iter().map(Into::into).collect();
        self
    }

    /// Only the columns of `T`'s schema (`#[derive(bigq::Schema)]`): the projection that
    /// reads a table into `T` and nothing more. A column of `T` that the table lacks is an
    /// error from the finishing call, as with [`selected_fields`](Self::selected_fields).
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
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name, 'x' AS notes UNION ALL SELECT 2, 'Grace', 'y'")
    /// #     .execute()
    /// #     .await?;
    /// #[derive(serde::Deserialize, bigq::Schema)]
    /// struct Person {
    ///     id: i64,
    ///     name: String,
    /// }
    /// let read = client.read("ds.people").project::<Person>().batches().await?;
    /// let schema = read.schema();
    /// let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    /// assert_eq!(columns, ["id", "name"]);
    /// let mut people: Vec<Person> = client.read("ds.people").project::<Person>().fetch_all().await?;
    /// people.sort_by_key(|p| p.id);
    /// assert_eq!(people[1].name, "Grace");
    /// # Ok(()) }
    /// ```
    pub fn project<T: Schema + ?Sized>(self) -> Self {
        self.selected_fields(T::fields().into_iter().map(|f| f.name))
    }

    /// Only rows matching this SQL filter, as in a `WHERE` clause without subqueries or
    /// aggregates (`"id > 5 AND name IS NOT NULL"`). A string is sent as it is; a
    /// [`Filter`](super::Filter) quotes its values and column names itself
    /// (`Filter::col("name").eq("O'Brien")`).
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
    /// use bigq::read::Filter;
    /// let rows: Vec<(i64, String)> = client
    ///     .read("ds.people")
    ///     .row_restriction(Filter::col("name").eq("Grace"))
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows, [(2, "Grace".to_string())]);
    /// let rows: Vec<(i64, String)> = client.read("ds.people").row_restriction("id > 2").fetch_all().await?;
    /// assert_eq!(rows, [(3, "Linus".to_string())]);
    /// # Ok(()) }
    /// ```
    pub fn row_restriction(mut self, filter: impl Into<String>) -> Self {
        self.options.row_restriction = Some(filter.into());
        self
    }

    /// Reads the table as it was at this time (within the time travel window).
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
    /// use std::time::{SystemTime, UNIX_EPOCH};
    /// use bigq::value::Timestamp;
    /// let micros = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64;
    /// let rows: Vec<(i64, String)> = client
    ///     .read("ds.people")
    ///     .snapshot_time(Timestamp::new(micros))
    ///     .fetch_all()
    ///     .await?;
    /// assert_eq!(rows.len(), 3);
    /// # Ok(()) }
    /// ```
    pub fn snapshot_time(mut self, at: Timestamp) -> Self {
        self.options.snapshot_time = Some(at);
        self
    }

    /// Asks for at most this many streams (at least 1); BigQuery may give fewer. Defaults
    /// to twice the machine's parallelism.
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
    /// let one = client.read("ds.people").max_streams(1).batches().await?;
    /// assert_eq!(one.stream_count(), 1);
    /// assert_eq!(one.try_collect().await?.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    /// # Ok(()) }
    /// ```
    pub fn max_streams(mut self, n: u32) -> Self {
        self.options.max_streams = n.clamp(1, 1000);
        self
    }

    /// Asks BigQuery for at least this many streams where it can (a hint; 0, the default,
    /// leaves it to BigQuery). Raises `max_streams` to match when it is lower.
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
    /// let read = client.read("ds.people").preferred_min_streams(2).batches().await?;
    /// assert!(read.stream_count() >= 1);
    /// assert_eq!(read.try_collect().await?.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    /// # Ok(()) }
    /// ```
    pub fn preferred_min_streams(mut self, n: u32) -> Self {
        self.options.preferred_min_streams = n.min(1000);
        self.options.max_streams = self.options.max_streams.max(n.min(1000));
        self
    }

    /// The compression of the Arrow buffers (LZ4_FRAME by default).
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
    /// use bigq::read::Compression;
    /// for compression in [Compression::None, Compression::Lz4Frame, Compression::Zstd] {
    ///     let rows: Vec<(i64, String)> = client
    ///         .read("ds.people")
    ///         .compression(compression)
    ///         .fetch_all()
    ///         .await?;
    ///     assert_eq!(rows.len(), 3);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn compression(mut self, compression: Compression) -> Self {
        self.options.compression = compression;
        self
    }

    /// Whether to hand out batches (or rows) stream after stream, in the session's stream
    /// order, instead of as they arrive (the default, `false`). Every stream is still read
    /// at once, each a couple of batches ahead, so a slow first stream holds the others
    /// back.
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
    /// // Stream after stream, each in table order: the table's order here.
    /// let rows: Vec<(i64, String)> = client
    ///     .read("ds.people")
    ///     .ordered(true)
    ///     .rows()
    ///     .await?
    ///     .try_collect()
    ///     .await?;
    /// let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    /// assert_eq!(ids, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
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
    /// let session = client.read("ds.people").max_streams(1).session().await?;
    /// assert_eq!(session.schema().fields().len(), 2);
    /// let name = session.stream_names()[0].clone();
    /// let batches = futures::TryStreamExt::try_collect::<Vec<_>>(session.read_stream(&name)?).await?;
    /// assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    /// # Ok(()) }
    /// ```
    pub async fn session(self) -> Result<ReadSession> {
        let session = self.create().await?;
        Ok(ReadSession::new(self.client, session))
    }

    /// Streams the table as Arrow record batches, from every read stream at once.
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
    /// let mut batches = client.read("ds.people").batches().await?;
    /// let mut rows = 0;
    /// while let Some(batch) = batches.try_next().await? {
    ///     rows += batch.num_rows();
    /// }
    /// assert_eq!(rows, 3);
    /// # Ok(()) }
    /// ```
    pub async fn batches(self) -> Result<ReadBatchStream> {
        let session = self.create().await?;
        let n = session.streams.len();
        let (rx, tasks) = self.spawn(&session, || Batches, &session.streams)?;
        Ok(ReadBatchStream::new(session.schema, rx, n, tasks))
    }

    /// Streams the table's rows decoded into `T`, each stream decoding on its own task.
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
    /// #[derive(serde::Deserialize)]
    /// struct Person {
    ///     id: i64,
    /// }
    /// let mut rows = client.read("ds.people").rows::<Person>().await?;
    /// let mut sum = 0;
    /// while let Some(p) = rows.try_next().await? {
    ///     sum += p.id;
    /// }
    /// assert_eq!(sum, 6);
    /// # Ok(()) }
    /// ```
    pub async fn rows<T: DeserializeOwned + Send + 'static>(self) -> Result<ReadRowStream<T>> {
        let session = self.create().await?;
        let n = session.streams.len();
        let (rx, tasks) = self.spawn(&session, Rows::<T>::new, &session.streams)?;
        Ok(ReadRowStream::new(session.schema, rx, n, tasks))
    }

    /// Collects every row of the table into `T` (in no particular order).
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
    /// #[derive(serde::Deserialize, Debug, PartialEq)]
    /// struct Person {
    ///     id: i64,
    ///     name: Option<String>,
    /// }
    /// let mut people: Vec<Person> = client.read("ds.people").fetch_all().await?;
    /// people.sort_by_key(|p| p.id);
    /// assert_eq!(people[0], Person { id: 1, name: Some("Ada".into()) });
    /// # Ok(()) }
    /// ```
    pub async fn fetch_all<T: DeserializeOwned + Send + 'static>(self) -> Result<Vec<T>> {
        self.rows().await?.try_collect().await
    }

    /// The session's streams, each decoding its rows into `T` on its own task, one
    /// [`ReadRowStream`] each, for callers who spread the streams over their own workers.
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
    /// let streams = client.read("ds.people").max_streams(2).row_streams::<(i64, String)>().await?;
    /// let mut rows = Vec::new();
    /// for stream in streams {
    ///     rows.extend(stream.try_collect().await?);
    /// }
    /// rows.sort();
    /// assert_eq!(rows.len(), 3);
    /// assert_eq!(rows[0].1, "Ada");
    /// # Ok(()) }
    /// ```
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
    /// let streams = client.read("ds.people").max_streams(2).streams().await?;
    /// let mut rows = 0;
    /// for stream in streams {
    ///     assert!(stream.name().contains("/streams/"));
    ///     rows += stream.try_collect::<Vec<_>>().await?.iter().map(|b| b.num_rows()).sum::<usize>();
    /// }
    /// assert_eq!(rows, 3);
    /// # Ok(()) }
    /// ```
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

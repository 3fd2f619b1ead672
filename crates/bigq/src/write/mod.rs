//! Table writes through the BigQuery Storage Write API (gRPC).
//!
//! [`Client::write`] opens a [`Writer`] on one write stream of a table. Rows of any
//! `T: Serialize` are encoded straight into protobuf by
//! [`bigq_codec::proto::RowEncoder`] against a descriptor derived from the table schema
//! (fetched from the stream, or given with [`WriteBuilder::schema`]), packed into
//! `AppendRows` requests of at most [`max_request_bytes`](WriteBuilder::max_request_bytes)
//! (10 MB by default) with at most [`max_in_flight`](WriteBuilder::max_in_flight) (8)
//! awaiting their response. Arrow `RecordBatch`es go in as they are with
//! [`Writer::append_batch`] (the API's `arrow_rows` format), split into requests under the
//! same limit; the two formats may be mixed on one writer.
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
//! connection, waits as the client's [`RetryPolicy`] says, and sends every
//! unconfirmed request again, in order, on a new connection. INVALID_ARGUMENT and rows
//! BigQuery refuses are not retried: the error lists them with
//! [`Error::row_errors`](crate::Error::row_errors).
//!
//! ```no_run
//! # async fn run() -> bigq::Result<()> {
//! #[derive(serde::Serialize)]
//! struct Row {
//!     id: i64,
//!     name: Option<String>,
//!     day: bigq::value::Date,
//! }
//!
//! let client = bigq::Client::from_env().await?;
//! let rows: Vec<Row> = (0..1000)
//!     .map(|id| Row { id, name: None, day: bigq::value::Date::new(19_000) })
//!     .collect();
//!
//! // At least once, visible at once.
//! let mut writer = client.write("my_dataset.my_table").default_stream().open().await?;
//! writer.append(&rows).await?;
//! let summary = writer.finish().await?;
//! println!("{} rows in {} requests", summary.rows_written, summary.requests);
//!
//! // All or nothing.
//! let mut writer = client.write("my_dataset.my_table").pending().open().await?;
//! writer.append(&rows).await?;
//! writer.commit().await?;
//! # Ok(()) }
//! ```

mod transport;
mod writer;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use bigq_codec::proto::{ProtoOptions, RowEncoder, WriteSchema};
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    self as storage, CreateWriteStreamRequest, GetWriteStreamRequest, WriteStream, WriteStreamView,
    append_rows_request::MissingValueInterpretation as PbMissing, table_field_schema, write_stream,
};

pub use bigq_codec::proto::NumericEncoding;
pub use writer::Writer;

use crate::admin::{TableId, parse_table};
use crate::client::Client;
use crate::client::grpc::status_error;
use crate::error::{Error, Result};
use crate::retry::RetryPolicy;
use crate::schema::{FieldMode, FieldType, RangeElementType, TableFieldSchema, TableSchema};
use crate::value::Timestamp;
use transport::{GrpcWrite, WriteTransport};

/// The largest AppendRows request the API takes.
pub const MAX_REQUEST_BYTES: usize = 20 * 1024 * 1024;
/// The default request size limit.
pub const DEFAULT_REQUEST_BYTES: usize = 10 * 1024 * 1024;
/// The default number of requests awaiting their response.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 8;

/// The type of write stream, and with it the delivery guarantee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamKind {
    /// The table's `_default` stream: rows visible at once, at least once.
    Default,
    /// A COMMITTED stream: rows visible at once, exactly once through offsets.
    Committed,
    /// A PENDING stream: rows visible when the stream is committed; all or nothing.
    Pending,
    /// A BUFFERED stream: rows visible when flushed.
    Buffered,
}

impl StreamKind {
    /// Whether requests carry offsets (every type but `_default`).
    pub(crate) fn has_offsets(self) -> bool {
        self != StreamKind::Default
    }

    fn proto(self) -> write_stream::Type {
        match self {
            StreamKind::Default | StreamKind::Committed => write_stream::Type::Committed,
            StreamKind::Pending => write_stream::Type::Pending,
            StreamKind::Buffered => write_stream::Type::Buffered,
        }
    }
}

/// What BigQuery does with a column a row leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MissingValue {
    /// The column is NULL.
    Null,
    /// The column takes its default value expression (NULL when it has none).
    Default,
}

impl MissingValue {
    fn proto(self) -> i32 {
        match self {
            MissingValue::Null => PbMissing::NullValue as i32,
            MissingValue::Default => PbMissing::DefaultValue as i32,
        }
    }
}

/// A row BigQuery refused, from an append's `row_errors`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    /// The row's index as the writer counts rows: 0 for the first row it was given, across
    /// every [`append`](Writer::append).
    pub row: u64,
    /// BigQuery's message.
    pub message: String,
}

/// What a writer wrote.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct WriteSummary {
    /// The write stream.
    pub stream: String,
    /// Rows BigQuery confirmed (counted once even when a resent request was already there).
    pub rows_written: u64,
    /// AppendRows requests sent, resends included.
    pub requests: u64,
    /// Bytes of the requests sent (protobuf-encoded), resends included.
    pub bytes_sent: u64,
    /// Times the writer reconnected and sent the unconfirmed requests again.
    pub retries: u64,
    /// The row count FinalizeWriteStream reported, for streams other than `_default`.
    pub finalized_rows: Option<u64>,
    /// When a PENDING stream was committed.
    pub commit_time: Option<Timestamp>,
}

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
    numeric: NumericEncoding,
    missing: HashMap<String, i32>,
    default_missing: i32,
}

impl Client {
    /// Writes to a table (`dataset.table` or `project.dataset.table`) through the Storage
    /// Write API, on its `_default` stream unless another type is chosen.
    pub fn write(&self, table: &str) -> WriteBuilder {
        WriteBuilder {
            client: self.clone(),
            table: parse_table(&self.inner.project, table),
            kind: StreamKind::Default,
            schema: None,
            max_request_bytes: DEFAULT_REQUEST_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            numeric: NumericEncoding::default(),
            missing: HashMap::new(),
            default_missing: PbMissing::Unspecified as i32,
        }
    }

    /// Commits finalized PENDING streams of one table together (all their rows become
    /// visible at once, or none); returns the commit time.
    pub async fn commit_write_streams(
        &self,
        table: &str,
        streams: &[&str],
    ) -> Result<Option<Timestamp>> {
        let id = parse_table(&self.inner.project, table)?;
        let transport = GrpcWrite {
            client: self.clone(),
        };
        writer::commit(
            &transport,
            &table_path(&id),
            streams.iter().map(|s| s.to_string()).collect(),
        )
        .await
    }
}

fn table_path(id: &TableId) -> String {
    format!(
        "projects/{}/datasets/{}/tables/{}",
        id.project, id.dataset, id.table
    )
}

impl WriteBuilder {
    /// The `_default` stream (the default): at least once, rows visible at once.
    pub fn default_stream(mut self) -> Self {
        self.kind = StreamKind::Default;
        self
    }

    /// A new COMMITTED stream: exactly once, rows visible at once.
    pub fn committed(mut self) -> Self {
        self.kind = StreamKind::Committed;
        self
    }

    /// A new PENDING stream: rows visible when [committed](Writer::commit), all or none.
    pub fn pending(mut self) -> Self {
        self.kind = StreamKind::Pending;
        self
    }

    /// A new BUFFERED stream: rows visible when [flushed](Writer::flush).
    pub fn buffered(mut self) -> Self {
        self.kind = StreamKind::Buffered;
        self
    }

    /// The table schema to encode rows for, instead of the one the stream reports. It may
    /// leave out NULLABLE columns (BigQuery fills them as the missing-value settings say).
    pub fn schema(mut self, schema: TableSchema) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The largest request, in bytes (default 10 MB, at most the API's 20 MB).
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// How many requests may await their response (default 8, at least 1).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n;
        self
    }

    /// How NUMERIC and BIGNUMERIC values go on the wire (decimal text by default; packed
    /// bytes are fewer but not every emulator takes them).
    pub fn numeric_encoding(mut self, encoding: NumericEncoding) -> Self {
        self.numeric = encoding;
        self
    }

    /// What BigQuery does with `column` when a row leaves it out.
    pub fn missing_value(mut self, column: impl Into<String>, value: MissingValue) -> Self {
        self.missing.insert(column.into(), value.proto());
        self
    }

    /// What BigQuery does with any column a row leaves out, unless set per column.
    pub fn default_missing_value(mut self, value: MissingValue) -> Self {
        self.default_missing = value.proto();
        self
    }

    /// Opens the stream (creating it for COMMITTED, PENDING and BUFFERED), fetching the table
    /// schema from it unless one was given.
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
        let table = table_path(&id);
        let stream: WriteStream = if self.kind == StreamKind::Default {
            let name = format!("{table}/streams/_default");
            if self.schema.is_some() {
                WriteStream {
                    name,
                    ..Default::default()
                }
            } else {
                transport
                    .get_write_stream(GetWriteStreamRequest {
                        name,
                        view: WriteStreamView::Full as i32,
                    })
                    .await
                    .map_err(|s| status_error(&s))?
            }
        } else {
            transport
                .create_write_stream(CreateWriteStreamRequest {
                    parent: table.clone(),
                    write_stream: Some(WriteStream {
                        r#type: self.kind.proto() as i32,
                        ..Default::default()
                    }),
                })
                .await
                .map_err(|s| status_error(&s))?
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
        Ok(Writer::new(writer::WriterConfig {
            transport,
            table_path: table,
            stream: stream.name,
            kind: self.kind,
            encoder: RowEncoder::new(write_schema),
            max_request_bytes: self.max_request_bytes,
            max_in_flight: self.max_in_flight,
            missing_value_interpretations: self.missing,
            default_missing_value_interpretation: self.default_missing,
            retry,
        }))
    }
}

/// A Storage API table schema as bigq's.
pub(crate) fn from_storage_schema(s: &storage::TableSchema) -> Result<TableSchema> {
    Ok(TableSchema::new(
        s.fields
            .iter()
            .map(from_storage_field)
            .collect::<Result<_>>()?,
    ))
}

fn from_storage_type(t: i32) -> FieldType {
    use table_field_schema::Type;
    match Type::try_from(t) {
        Ok(Type::String) => FieldType::String,
        Ok(Type::Int64) => FieldType::Int64,
        Ok(Type::Double) => FieldType::Float64,
        Ok(Type::Struct) => FieldType::Record,
        Ok(Type::Bytes) => FieldType::Bytes,
        Ok(Type::Bool) => FieldType::Bool,
        Ok(Type::Timestamp) => FieldType::Timestamp,
        Ok(Type::Date) => FieldType::Date,
        Ok(Type::Time) => FieldType::Time,
        Ok(Type::Datetime) => FieldType::DateTime,
        Ok(Type::Geography) => FieldType::Geography,
        Ok(Type::Numeric) => FieldType::Numeric,
        Ok(Type::Bignumeric) => FieldType::BigNumeric,
        Ok(Type::Interval) => FieldType::Interval,
        Ok(Type::Json) => FieldType::Json,
        Ok(Type::Range) => FieldType::Range,
        Ok(Type::Unspecified) | Err(_) => FieldType::Unknown(format!("storage type {t}")),
    }
}

fn from_storage_field(f: &storage::TableFieldSchema) -> Result<TableFieldSchema> {
    use table_field_schema::Mode;
    let mut out = TableFieldSchema::new(&f.name, from_storage_type(f.r#type));
    out.mode = Some(match Mode::try_from(f.mode) {
        Ok(Mode::Required) => FieldMode::Required,
        Ok(Mode::Repeated) => FieldMode::Repeated,
        _ => FieldMode::Nullable,
    });
    out.fields = f
        .fields
        .iter()
        .map(from_storage_field)
        .collect::<Result<_>>()?;
    out.range_element_type = f.range_element_type.as_ref().map(|e| RangeElementType {
        element_type: from_storage_type(e.r#type),
    });
    out.max_length = (f.max_length > 0).then_some(f.max_length);
    out.precision = (f.precision > 0).then_some(f.precision);
    out.scale = (f.scale > 0).then_some(f.scale);
    if !f.default_value_expression.is_empty() {
        out.default_value_expression = Some(f.default_value_expression.clone());
    }
    Ok(out)
}

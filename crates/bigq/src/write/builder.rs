//! [`WriteBuilder`]: a writer's options, and opening (or creating) its write stream.

use std::collections::HashMap;
use std::sync::Arc;

use bigq_codec::proto::{NumericEncoding, ProtoOptions, RowEncoder, WriteSchema};
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    CreateWriteStreamRequest, GetWriteStreamRequest, WriteStream, WriteStreamView,
    append_rows_request::MissingValueInterpretation as PbMissing,
};

use super::options::{
    DEFAULT_MAX_IN_FLIGHT, DEFAULT_REQUEST_BYTES, MAX_REQUEST_BYTES, MissingValue, StreamKind,
};
use super::schema::from_storage_schema;
use super::transport::{GrpcWrite, WriteTransport};
use super::writer::{Writer, WriterConfig, commit};
use crate::client::Client;
use crate::client::grpc::status_error;
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
    numeric: NumericEncoding,
    missing: HashMap<String, i32>,
    default_missing: i32,
}

impl Client {
    /// Writes to a table (a [`TableId`](crate::TableId), `dataset.table` or
    /// `project.dataset.table`) through the Storage Write API, on its `_default` stream
    /// unless another type is chosen.
    pub fn write(&self, table: impl IntoTableId) -> WriteBuilder {
        WriteBuilder {
            client: self.clone(),
            table: table_id(&self.inner.project, table),
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
        table: impl IntoTableId,
        streams: &[&str],
    ) -> Result<Option<Timestamp>> {
        let id = table_id(&self.inner.project, table)?;
        let transport = GrpcWrite {
            client: self.clone(),
        };
        commit(
            &transport,
            &id.path(),
            streams.iter().map(|s| s.to_string()).collect(),
        )
        .await
    }
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
        let table = id.path();
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
        Ok(Writer::new(WriterConfig {
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

//! CreateReadSession: the request bigq sends and the session it gets back.

use std::sync::Arc;

use tracing::Instrument;

use arrow_schema::SchemaRef;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    ArrowSerializationOptions, CreateReadSessionRequest, DataFormat, ReadSession as ProtoSession,
    SplitReadStreamRequest, arrow_serialization_options::CompressionCodec,
    big_query_read_client::BigQueryReadClient, read_session,
};

use super::options::{Compression, ReadOptions};
use super::spawn::spawn;
use super::streams::{ReadBatchStream, ReadStream};
use super::task::Batches;
use crate::client::Client;
use crate::client::grpc::{MAX_DECODING_MESSAGE_SIZE, Rpc, status_error};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::TableId;
use bigq_codec::ipc::IpcDecoder;

/// A created read session: its streams and the Arrow schema they share.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) name: String,
    pub(crate) schema_bytes: Vec<u8>,
    pub(crate) schema: SchemaRef,
    pub(crate) streams: Vec<String>,
}

/// The CreateReadSession request for a table and the caller's options.
pub(crate) fn request(
    billing_project: &str,
    id: &TableId,
    o: &ReadOptions,
) -> CreateReadSessionRequest {
    let codec = match o.compression {
        Compression::None => CompressionCodec::CompressionUnspecified,
        Compression::Lz4Frame => CompressionCodec::Lz4Frame,
        Compression::Zstd => CompressionCodec::Zstd,
    };
    let read_options = read_session::TableReadOptions {
        selected_fields: o.selected_fields.clone(),
        row_restriction: o.row_restriction.clone().unwrap_or_default(),
        output_format_serialization_options: Some(
            read_session::table_read_options::OutputFormatSerializationOptions::ArrowSerializationOptions(
                ArrowSerializationOptions {
                    buffer_compression: codec as i32,
                    ..Default::default()
                },
            ),
        ),
        ..Default::default()
    };
    let table_modifiers = o.snapshot_time.map(|t| {
        let (seconds, micros) = t.to_seconds_micros();
        read_session::TableModifiers {
            snapshot_time: Some(gcloud_sdk::prost_types::Timestamp {
                seconds,
                nanos: micros as i32 * 1000,
            }),
        }
    });
    CreateReadSessionRequest {
        parent: format!("projects/{billing_project}"),
        read_session: Some(ProtoSession {
            table: id.path(),
            data_format: DataFormat::Arrow as i32,
            read_options: Some(read_options),
            table_modifiers,
            ..Default::default()
        }),
        max_stream_count: o.max_streams as i32,
        preferred_min_stream_count: o.preferred_min_streams as i32,
    }
}

impl Client {
    /// Creates a read session, retrying as the client's policy allows (an abandoned session
    /// costs nothing and expires on its own).
    pub(crate) async fn create_read_session(
        &self,
        id: &TableId,
        options: &ReadOptions,
    ) -> Result<Session> {
        let req = request(&self.inner.project, id, options);
        let table = req
            .read_session
            .as_ref()
            .map(|s| s.table.clone())
            .unwrap_or_default();
        let span = tracing::info_span!(
            "bigq.read_session",
            project = self.inner.project.as_str(),
            table = table.as_str(),
            session = tracing::field::Empty,
            streams = tracing::field::Empty,
        );
        let rpc = Rpc {
            name: "CreateReadSession",
            routing_key: "read_session.table",
            routing: &table,
            server_wait: std::time::Duration::ZERO,
        };
        let session = self
            .inner
            .storage
            .unary(rpc, req, |channel, req| async move {
                BigQueryReadClient::new(channel)
                    .max_decoding_message_size(MAX_DECODING_MESSAGE_SIZE)
                    .create_read_session(req)
                    .await
            })
            .instrument(span.clone())
            .await?;
        span.record("session", session.name.as_str());
        span.record("streams", session.streams.len());
        let schema_bytes = match session.schema {
            Some(read_session::Schema::ArrowSchema(s)) => s.serialized_schema,
            _ => {
                return Err(Error::new(
                    ErrorKind::Decode,
                    "the read session has no Arrow schema",
                ));
            }
        };
        let schema = IpcDecoder::new(&schema_bytes)?.schema();
        Ok(Session {
            name: session.name,
            schema_bytes,
            schema,
            streams: session.streams.into_iter().map(|s| s.name).collect(),
        })
    }
}

/// A read session, for callers who read its streams, and split them, themselves. Cheap to
/// clone.
#[derive(Debug, Clone)]
pub struct ReadSession {
    client: Client,
    inner: Arc<Session>,
}

impl ReadSession {
    pub(crate) fn new(client: Client, session: Session) -> Self {
        ReadSession {
            client,
            inner: Arc::new(session),
        }
    }

    /// The session's resource name (`projects/{p}/locations/{l}/sessions/{id}`).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The Arrow schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.inner.schema.clone()
    }

    /// The names of the streams BigQuery created with the session.
    pub fn stream_names(&self) -> &[String] {
        &self.inner.streams
    }

    /// Starts reading one stream (any stream of this session, including those made by
    /// [`split_stream`](Self::split_stream)) on its own task. Call it inside a Tokio
    /// runtime.
    pub fn read_stream(&self, name: &str) -> Result<ReadStream> {
        let names = [name.to_string()];
        let schema = &self.inner.schema_bytes;
        let (rx, tasks) = spawn(&self.client, schema, || Batches, &names, false)?;
        Ok(ReadStream::new(
            name.to_string(),
            ReadBatchStream::new(self.inner.schema.clone(), rx, 1, tasks),
        ))
    }

    /// Splits a stream at `fraction` (between 0 and 1) of its rows with SplitReadStream:
    /// `Some((primary, remainder))`, whose rows together are the original stream's, or
    /// `None` when the stream can no longer be split.
    pub async fn split_stream(
        &self,
        name: &str,
        fraction: f64,
    ) -> Result<Option<(String, String)>> {
        if !(fraction > 0.0 && fraction < 1.0) {
            return Err(Error::config(format!(
                "a split fraction must be between 0 and 1, not {fraction}"
            )));
        }
        let req = SplitReadStreamRequest {
            name: name.to_string(),
            fraction,
        };
        let storage = &self.client.inner.storage;
        let channel = storage.channel().channel().await?;
        let req = storage.request(req, "name", name).await?;
        let resp = BigQueryReadClient::new(channel)
            .split_read_stream(req)
            .await
            .map_err(|s| status_error(&s))?
            .into_inner();
        match (resp.primary_stream, resp.remainder_stream) {
            (Some(p), Some(r)) if !p.name.is_empty() && !r.name.is_empty() => {
                Ok(Some((p.name, r.name)))
            }
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Timestamp;

    #[test]
    fn request_carries_the_options() {
        let id = TableId::new("data", "d", "t");
        let o = ReadOptions {
            selected_fields: vec!["a".into(), "s.b".into()],
            row_restriction: Some("a > 1".into()),
            snapshot_time: Some(Timestamp::new(1_500_000)),
            max_streams: 4,
            preferred_min_streams: 2,
            compression: Compression::Zstd,
        };
        let r = request("billing", &id, &o);
        assert_eq!(r.parent, "projects/billing");
        assert_eq!(r.max_stream_count, 4);
        assert_eq!(r.preferred_min_stream_count, 2);
        let s = r.read_session.unwrap();
        assert_eq!(s.table, "projects/data/datasets/d/tables/t");
        assert_eq!(s.data_format, DataFormat::Arrow as i32);
        let ts = s.table_modifiers.unwrap().snapshot_time.unwrap();
        assert_eq!((ts.seconds, ts.nanos), (1, 500_000_000));
        let ro = s.read_options.unwrap();
        assert_eq!(ro.selected_fields, ["a", "s.b"]);
        assert_eq!(ro.row_restriction, "a > 1");
        match ro.output_format_serialization_options {
            Some(read_session::table_read_options::OutputFormatSerializationOptions::ArrowSerializationOptions(a)) => {
                assert_eq!(a.buffer_compression, CompressionCodec::Zstd as i32)
            }
            other => panic!("{other:?}"),
        }
    }
}

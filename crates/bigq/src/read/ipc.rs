//! Arrow IPC as the Storage Read API sends it: the session's schema once, then each
//! response's record batch as one encapsulated IPC message (buffers possibly LZ4_FRAME or
//! ZSTD compressed).

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::StreamDecoder;
use arrow_schema::SchemaRef;

use crate::error::{Error, ErrorKind, Result};

const CONTINUATION: [u8; 4] = [0xff; 4];

/// Decodes one read stream's record batches (sans-IO).
#[derive(Debug)]
pub(crate) struct IpcDecoder {
    decoder: StreamDecoder,
    schema: SchemaRef,
}

impl IpcDecoder {
    /// A decoder for batches of the IPC-serialized `schema` (one schema message, optionally
    /// followed by the end-of-stream marker, as some servers send it).
    pub(crate) fn new(schema: &[u8]) -> Result<Self> {
        let end = schema_message_len(schema)?;
        let parsed =
            arrow_ipc::convert::try_schema_from_ipc_buffer(&schema[..end]).map_err(ipc_error)?;
        // Prime the decoder with the schema message. A schema message has an empty body, so
        // the decoder takes it in when the first batch's bytes arrive.
        let mut decoder = StreamDecoder::new();
        let mut buf = Buffer::from(schema[..end].to_vec());
        while !buf.is_empty() {
            if decoder.decode(&mut buf).map_err(ipc_error)?.is_some() {
                return Err(bad("a record batch where the schema was expected"));
            }
        }
        Ok(IpcDecoder {
            decoder,
            schema: Arc::new(parsed),
        })
    }

    pub(crate) fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Decodes one serialized record batch. The bytes are taken over without a copy.
    pub(crate) fn decode(&mut self, message: Vec<u8>) -> Result<RecordBatch> {
        let mut buf = Buffer::from(message);
        let mut batch = None;
        while !buf.is_empty() {
            if let Some(b) = self.decoder.decode(&mut buf).map_err(ipc_error)? {
                if batch.is_some() {
                    return Err(bad("more than one record batch in one response"));
                }
                batch = Some(b);
            }
        }
        batch.ok_or_else(|| bad("a response with rows but no complete record batch"))
    }
}

/// The length of the first IPC message in `bytes` (its prefix and flatbuffer; a schema
/// message has no body).
fn schema_message_len(bytes: &[u8]) -> Result<usize> {
    let word = |at: usize| -> Result<u32> {
        bytes
            .get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .ok_or_else(|| bad("the serialized schema is truncated"))
    };
    let (prefix, len) = if bytes.starts_with(&CONTINUATION) {
        (8, word(4)?)
    } else {
        (4, word(0)?)
    };
    let end = prefix + len as usize;
    if len == 0 || end > bytes.len() {
        return Err(bad("the serialized schema is truncated"));
    }
    Ok(end)
}

fn bad(what: &str) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!("unexpected Arrow IPC data from the Storage Read API: {what}"),
    )
}

fn ipc_error(e: arrow_schema::ArrowError) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!("cannot decode Arrow IPC data from the Storage Read API: {e}"),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use arrow_array::{Int64Array, StringArray};
    use arrow_ipc::CompressionType;
    use arrow_ipc::writer::{
        DictionaryTracker, IpcDataGenerator, IpcWriteOptions, StreamWriter, write_message,
    };
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    pub(crate) fn batch(start: i64, n: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let ids: Vec<i64> = (start..start + n as i64).collect();
        let names: Vec<Option<String>> = ids
            .iter()
            .map(|i| (i % 3 != 0).then(|| format!("row {i}")))
            .collect();
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap()
    }

    /// The schema as a whole IPC stream (schema message and end-of-stream marker), as
    /// pyarrow-based servers send it.
    pub(crate) fn schema_stream(batch: &RecordBatch) -> Vec<u8> {
        let mut out = Vec::new();
        StreamWriter::try_new(&mut out, &batch.schema())
            .unwrap()
            .finish()
            .unwrap();
        out
    }

    /// One batch as one encapsulated IPC message, as BigQuery sends it.
    pub(crate) fn batch_message(
        batch: &RecordBatch,
        compression: Option<CompressionType>,
    ) -> Vec<u8> {
        let options = IpcWriteOptions::default()
            .try_with_compression(compression)
            .unwrap();
        let mut tracker = DictionaryTracker::new(false);
        let (_, encoded) = IpcDataGenerator::default()
            .encode(batch, &mut tracker, &options, &mut Default::default())
            .unwrap();
        let mut out = Vec::new();
        write_message(&mut out, encoded, &options).unwrap();
        out
    }

    #[test]
    fn decodes_plain_and_compressed_batches() {
        let b = batch(0, 100);
        let mut d = IpcDecoder::new(&schema_stream(&b)).unwrap();
        assert_eq!(d.schema(), b.schema());
        for (i, c) in [
            None,
            Some(CompressionType::LZ4_FRAME),
            Some(CompressionType::ZSTD),
        ]
        .into_iter()
        .enumerate()
        {
            let b = batch(i as i64 * 100, 100);
            assert_eq!(d.decode(batch_message(&b, c)).unwrap(), b, "{c:?}");
        }
    }

    #[test]
    fn rejects_garbage() {
        assert!(IpcDecoder::new(&[]).is_err());
        assert!(IpcDecoder::new(&[0xff, 0xff, 0xff, 0xff, 100, 0, 0, 0, 1]).is_err());
        let b = batch(0, 3);
        let mut d = IpcDecoder::new(&schema_stream(&b)).unwrap();
        let msg = batch_message(&b, None);
        let e = d.decode(msg[..msg.len() / 2].to_vec()).unwrap_err();
        assert!(e.is_decode(), "{e:?}");
    }
}

//! Arrow IPC as the Storage Read API sends it: the session's schema once, then each
//! response's record batch as one encapsulated IPC message (buffers possibly LZ4_FRAME or
//! ZSTD compressed).

use std::sync::Arc;

use arrow_array::{RecordBatch, make_array};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow_data::ArrayData;
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
    pub(crate) fn decode(&mut self, message: impl Into<bytes::Bytes>) -> Result<RecordBatch> {
        let message: bytes::Bytes = message.into();
        let within = message.as_ptr_range();
        let within = within.start as usize..within.end as usize;
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
        let batch =
            batch.ok_or_else(|| bad("a response with rows but no complete record batch"))?;
        Ok(detach(batch, within))
    }
}

/// `batch` without the message it was decoded from.
///
/// The message is a slice of the gRPC receive buffer (see `read::wire`), and the decoder
/// makes every buffer it did not decompress a slice of the message: a compressed message
/// still carries some buffers as they are (a writer leaves a buffer uncompressed when
/// compression would not make it smaller, as arrow-rs does), an uncompressed one all of
/// them. One such column would keep the whole receive buffer alive, compressed bytes and
/// all, for as long as the batch lives: a caller keeping every batch of a 1M-row read from
/// bigq-emulator held 89 MB of spent messages that way (a third of its memory). Those
/// buffers are copied out (one `memcpy` each; the copied columns are validated again).
fn detach(batch: RecordBatch, message: std::ops::Range<usize>) -> RecordBatch {
    let mut copied = false;
    let columns = batch
        .columns()
        .iter()
        .map(|c| {
            // The same layout over copied buffers; should the copy not validate (it is
            // the same bytes), the column stays as it was.
            match copy_inside(&c.to_data(), &message) {
                Ok(Some(copy)) => {
                    copied = true;
                    make_array(copy)
                }
                Ok(None) | Err(_) => c.clone(),
            }
        })
        .collect();
    if !copied {
        return batch;
    }
    // The same schema, columns of the same types and lengths.
    RecordBatch::try_new(batch.schema(), columns).unwrap_or(batch)
}

/// `data` with its buffers (children included) that lie in `range` of memory copied out,
/// or `None` when none does.
fn copy_inside(
    data: &ArrayData,
    range: &std::ops::Range<usize>,
) -> std::result::Result<Option<ArrayData>, arrow_schema::ArrowError> {
    let mut copied = false;
    let mut copy = |b: &Buffer| {
        if range.contains(&(b.as_ptr() as usize)) {
            copied = true;
            Buffer::from_slice_ref(b.as_slice())
        } else {
            b.clone()
        }
    };
    let buffers: Vec<Buffer> = data.buffers().iter().map(&mut copy).collect();
    let nulls = data
        .nulls()
        .map(|n| NullBuffer::new(BooleanBuffer::new(copy(n.buffer()), n.offset(), n.len())));
    let mut children = Vec::with_capacity(data.child_data().len());
    for c in data.child_data() {
        match copy_inside(c, range)? {
            Some(copy) => {
                copied = true;
                children.push(copy);
            }
            None => children.push(c.clone()),
        }
    }
    if !copied {
        return Ok(None);
    }
    data.clone()
        .into_builder()
        .buffers(buffers)
        .nulls(nulls)
        .child_data(children)
        .build()
        .map(Some)
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

    /// A batch whose `x` column does not compress (so the writer leaves it as it is in a
    /// compressed message) beside text that does, but only so far.
    fn half_compressible(n: usize) -> RecordBatch {
        let mut fields = vec![Field::new("x", DataType::Float64, false)];
        let mut text: Vec<arrow_array::ArrayRef> = Vec::new();
        for c in 0..4 {
            fields.push(Field::new(format!("s{c}"), DataType::Utf8, false));
            text.push(Arc::new(StringArray::from_iter_values((0..n).map(|i| {
                format!("{c} row {} of {} in the batch", i * 7919 % n, i)
            }))));
        }
        let schema = Arc::new(Schema::new(fields));
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let x: Vec<f64> = (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                f64::from_bits(state >> 2)
            })
            .collect();
        let mut columns: Vec<arrow_array::ArrayRef> =
            vec![Arc::new(arrow_array::Float64Array::from(x))];
        columns.extend(text);
        RecordBatch::try_new(schema, columns).unwrap()
    }

    /// Decodes `message` with the decoder's own steps, keeping the message alive here, so
    /// that which buffers point into it can be told apart afterwards.
    fn decode_kept(batch: &RecordBatch, message: Vec<u8>) -> (RecordBatch, Buffer) {
        let mut d = StreamDecoder::new();
        let schema = schema_stream(batch);
        let mut schema = Buffer::from(schema[..schema_message_len(&schema).unwrap()].to_vec());
        assert!(d.decode(&mut schema).unwrap().is_none());
        let kept = Buffer::from(message);
        let mut buf = kept.clone();
        let mut out = None;
        while !buf.is_empty() {
            if let Some(b) = d.decode(&mut buf).unwrap() {
                out = Some(b);
            }
        }
        (out.unwrap(), kept)
    }

    /// The bytes of `data`'s buffers (children included) that lie in `range` of memory.
    fn bytes_inside(data: &ArrayData, range: &std::ops::Range<usize>) -> usize {
        let inside = |b: &Buffer| {
            if range.contains(&(b.as_ptr() as usize)) {
                b.len()
            } else {
                0
            }
        };
        data.buffers().iter().map(inside).sum::<usize>()
            + data.nulls().map_or(0, |n| inside(n.buffer()))
            + data
                .child_data()
                .iter()
                .map(|c| bytes_inside(c, range))
                .sum::<usize>()
    }

    fn inside(batch: &RecordBatch, message: &Buffer) -> usize {
        let range = message.as_ptr() as usize..message.as_ptr() as usize + message.len();
        batch
            .columns()
            .iter()
            .map(|c| bytes_inside(&c.to_data(), &range))
            .sum()
    }

    #[test]
    fn compressed_batches_let_go_of_their_message() {
        let b = half_compressible(8192);
        let (decoded, message) =
            decode_kept(&b, batch_message(&b, Some(CompressionType::LZ4_FRAME)));
        // The uncompressible column is a slice of the message as decoded...
        let raw = inside(&decoded, &message);
        assert!(raw >= 8192 * 8, "{raw} bytes inside");
        assert!(raw * 2 < message.len(), "{raw} of {}", message.len());
        let range = message.as_ptr() as usize..message.as_ptr() as usize + message.len();
        let detached = detach(decoded, range);
        // ...and a copy once detached, with the same values.
        assert_eq!(inside(&detached, &message), 0);
        assert_eq!(detached, b);
    }

    #[test]
    fn uncompressed_batches_let_go_of_their_message() {
        let b = half_compressible(8192);
        let (decoded, message) = decode_kept(&b, batch_message(&b, None));
        let range = message.as_ptr() as usize..message.as_ptr() as usize + message.len();
        assert!(inside(&decoded, &message) * 2 >= message.len());
        let detached = detach(decoded, range);
        assert_eq!(inside(&detached, &message), 0);
        assert_eq!(detached, b);
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

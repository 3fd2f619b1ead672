//! Reading Arrow IPC as the Storage Read API sends it: the session's schema once, then each
//! response's record batch as one encapsulated IPC message (buffers possibly LZ4_FRAME or
//! ZSTD compressed).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, make_array};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_ipc::MessageHeader;
use arrow_ipc::convert::MessageBuffer;
use arrow_ipc::reader::{RecordBatchDecoder, read_dictionary};
use arrow_schema::SchemaRef;

use crate::error::{CodecError, CodecErrorKind};

type Result<T> = std::result::Result<T, CodecError>;

const CONTINUATION: [u8; 4] = [0xff; 4];

/// Decodes one read stream's record batches (sans-IO).
///
/// Each response is one or more whole IPC messages, so they are decoded as they are, with
/// arrow-ipc's record batch decoder: its `StreamDecoder` would need the schema message fed
/// to it again (parsing the schema a second time; half of a small query's decoding) and
/// copies a message whose bytes end exactly where it does.
#[derive(Debug)]
pub struct IpcDecoder {
    schema: SchemaRef,
    /// The dictionaries sent so far, by id (BigQuery sends none).
    dictionaries: HashMap<i64, ArrayRef>,
}

impl IpcDecoder {
    /// A decoder for batches of the IPC-serialized `schema` (one schema message, optionally
    /// followed by the end-of-stream marker, as some servers send it).
    pub fn new(schema: &[u8]) -> Result<Self> {
        let (prefix, len) =
            message_prefix(schema).ok_or_else(|| bad("the serialized schema is truncated"))?;
        let message = prefix
            .checked_add(len)
            .and_then(|end| schema.get(..end))
            .filter(|_| len != 0)
            .ok_or_else(|| bad("the serialized schema is truncated"))?;
        let parsed = guarded(|| arrow_ipc::convert::try_schema_from_ipc_buffer(message))?;
        Ok(IpcDecoder {
            schema: Arc::new(parsed),
            dictionaries: HashMap::new(),
        })
    }

    /// The schema the batches are decoded with.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Decodes one serialized record batch. The bytes are taken over without a copy, and
    /// no buffer of the batch points into them: buffers the message carries uncompressed
    /// are copied out, so that a batch does not keep a whole receive buffer alive.
    pub fn decode(&mut self, message: impl Into<bytes::Bytes>) -> Result<RecordBatch> {
        let message: bytes::Bytes = message.into();
        let within = message.as_ptr_range();
        let within = within.start as usize..within.end as usize;
        let batch = self.decode_buffer(Buffer::from(message))?;
        Ok(detach(batch, within))
    }

    /// Decodes one serialized record batch whose buffers may stay slices of `message`:
    /// for a message that is the caller's own and holds about what the batch does (a
    /// `Query` response's one batch), where [`decode`](Self::decode) would copy them out.
    pub fn decode_kept(&mut self, message: Vec<u8>) -> Result<RecordBatch> {
        self.decode_buffer(Buffer::from(message))
    }

    /// The one record batch in `buf`: its IPC messages (dictionaries, then the batch) in
    /// turn.
    fn decode_buffer(&mut self, mut buf: Buffer) -> Result<RecordBatch> {
        let mut batch = None;
        while !buf.is_empty() {
            let (prefix, len) =
                message_prefix(&buf).ok_or_else(|| bad("a truncated message prefix"))?;
            if len == 0 {
                // The end-of-stream marker.
                if buf.len() > prefix {
                    return Err(bad("data after the end-of-stream marker"));
                }
                break;
            }
            let truncated = || bad("a truncated message");
            let header_end = (prefix + len <= buf.len())
                .then_some(prefix + len)
                .ok_or_else(truncated)?;
            let header =
                MessageBuffer::try_new(buf.slice_with_length(prefix, len)).map_err(ipc_error)?;
            let message = header.as_ref();
            let body_len = usize::try_from(message.bodyLength()).map_err(|_| truncated())?;
            let end = header_end
                .checked_add(body_len)
                .filter(|&end| end <= buf.len())
                .ok_or_else(truncated)?;
            let body = buf.slice_with_length(header_end, body_len);
            let version = message.version();
            match message.header_type() {
                MessageHeader::RecordBatch => {
                    if batch.is_some() {
                        return Err(bad("more than one record batch in one response"));
                    }
                    let header = message
                        .header_as_record_batch()
                        .ok_or_else(|| bad("a record batch message without its header"))?;
                    // arrow-ipc slices the body by the header's buffer offsets unchecked (a
                    // panic on a malformed message): check them against the body first.
                    buffers_within(
                        &body,
                        header.compression().is_some(),
                        header
                            .buffers()
                            .iter()
                            .flat_map(|v| v.iter())
                            .map(|b| (b.offset(), b.length())),
                    )?;
                    let decoded = guarded(|| {
                        RecordBatchDecoder::try_new(
                            &body,
                            header,
                            self.schema.clone(),
                            &self.dictionaries,
                            &version,
                        )
                        .and_then(|d| d.read_record_batch())
                    })?;
                    batch = Some(decoded);
                }
                MessageHeader::DictionaryBatch => {
                    let header = message
                        .header_as_dictionary_batch()
                        .ok_or_else(|| bad("a dictionary message without its header"))?;
                    if let Some(data) = header.data() {
                        buffers_within(
                            &body,
                            data.compression().is_some(),
                            data.buffers()
                                .iter()
                                .flat_map(|v| v.iter())
                                .map(|b| (b.offset(), b.length())),
                        )?;
                    }
                    let (schema, dictionaries) = (&self.schema, &mut self.dictionaries);
                    guarded(|| read_dictionary(&body, header, schema, dictionaries, &version))?;
                }
                MessageHeader::NONE => {}
                other => {
                    return Err(bad(&format!(
                        "a {other:?} message where record batches were expected"
                    )));
                }
            }
            buf.advance(end);
        }
        batch.ok_or_else(|| bad("a response with rows but no complete record batch"))
    }
}

/// Runs one of arrow-ipc's decoders over server bytes. Their checks are assertions in
/// places (a field node longer than its buffers panics building the array), so a panic is
/// turned into the error a malformed message deserves; the `ipc_read` fuzz target finds
/// such messages in seconds.
fn guarded<T>(
    decode: impl FnOnce() -> std::result::Result<T, arrow_schema::ArrowError>,
) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)) {
        Ok(decoded) => decoded.map_err(ipc_error),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a malformed message");
            Err(bad(&format!("a malformed record batch message: {why}")))
        }
    }
}

/// Every buffer a record batch header names lies within its body of `body_len` bytes.
/// The largest buffer a compressed message may say it decompresses to: a ReadRows message
/// is at most a few hundred MiB, and a corrupt length must not make the decoder allocate
/// whatever it says.
const MAX_DECOMPRESSED: i64 = 1 << 30;

/// Every buffer a record batch header names lies within its `body`, and, when the buffers
/// are compressed, says it decompresses to at most [`MAX_DECOMPRESSED`] bytes.
fn buffers_within(
    body: &[u8],
    compressed: bool,
    buffers: impl Iterator<Item = (i64, i64)>,
) -> Result<()> {
    let body_len = body.len();
    for (offset, length) in buffers {
        let within = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(length).ok())
            .and_then(|(offset, length)| offset.checked_add(length))
            .is_some_and(|end| end <= body_len);
        if !within {
            return Err(bad(&format!(
                "a buffer at {offset}..+{length} outside the message body of {body_len} bytes"
            )));
        }
        // A compressed buffer starts with its decompressed length (-1: sent uncompressed).
        if compressed && length >= 8 {
            let at = offset as usize;
            let prefix = body
                .get(at..)
                .and_then(|rest| rest.first_chunk::<8>())
                .ok_or_else(|| bad("a compressed buffer shorter than its length prefix"))?;
            let decompressed = i64::from_le_bytes(*prefix);
            if !(-1..=MAX_DECOMPRESSED).contains(&decompressed) {
                return Err(bad(&format!(
                    "a compressed buffer that says it decompresses to {decompressed} bytes"
                )));
            }
        }
    }
    Ok(())
}

/// `batch` without the message it was decoded from.
///
/// The message is typically a slice of a gRPC receive buffer, and the decoder
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

/// The length of the IPC message prefix at the start of `bytes` (the continuation marker
/// and the length, or the length alone in the pre-1.0 format) and the length of the
/// message's flatbuffer after it; `None` when `bytes` is too short to say.
fn message_prefix(bytes: &[u8]) -> Option<(usize, usize)> {
    let word = |at: usize| {
        let w = bytes.get(at..)?.first_chunk::<4>()?;
        Some(u32::from_le_bytes(*w) as usize)
    };
    if bytes.starts_with(&CONTINUATION) {
        Some((8, word(4)?))
    } else {
        Some((4, word(0)?))
    }
}

fn bad(what: &str) -> CodecError {
    CodecError::new(
        CodecErrorKind::Ipc,
        format!("unexpected Arrow IPC data from the Storage Read API: {what}"),
    )
}

fn ipc_error(e: arrow_schema::ArrowError) -> CodecError {
    CodecError::new(
        CodecErrorKind::Ipc,
        format!("cannot decode Arrow IPC data from the Storage Read API: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use arrow_array::{Int64Array, StringArray};
    use arrow_ipc::CompressionType;
    use arrow_ipc::writer::StreamWriter;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::ipc::IpcEncoder;

    fn batch(start: i64, n: usize) -> RecordBatch {
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
    fn schema_stream(batch: &RecordBatch) -> Vec<u8> {
        let mut out = Vec::new();
        StreamWriter::try_new(&mut out, &batch.schema())
            .unwrap()
            .finish()
            .unwrap();
        out
    }

    /// One batch as one encapsulated IPC message, as BigQuery sends it.
    fn batch_message(batch: &RecordBatch, compression: Option<CompressionType>) -> Vec<u8> {
        IpcEncoder::new(compression).unwrap().batch(batch).unwrap()
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

    /// Decodes `message` without detaching, keeping the message alive here, so that which
    /// buffers point into it can be told apart afterwards.
    fn decode_attached(batch: &RecordBatch, message: Vec<u8>) -> (RecordBatch, Buffer) {
        let mut d = IpcDecoder::new(&schema_stream(batch)).unwrap();
        let kept = Buffer::from(message);
        (d.decode_buffer(kept.clone()).unwrap(), kept)
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
            decode_attached(&b, batch_message(&b, Some(CompressionType::LZ4_FRAME)));
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
        let (decoded, message) = decode_attached(&b, batch_message(&b, None));
        let range = message.as_ptr() as usize..message.as_ptr() as usize + message.len();
        assert!(inside(&decoded, &message) * 2 >= message.len());
        let detached = detach(decoded, range);
        assert_eq!(inside(&detached, &message), 0);
        assert_eq!(detached, b);
    }

    /// A dictionary-encoded column: the dictionary's message, then the batch's, in one
    /// response, as an IPC stream sends them (BigQuery sends no dictionaries; another
    /// server might).
    #[test]
    fn decodes_dictionaries_sent_before_the_batch() {
        let values = arrow_array::DictionaryArray::<arrow_array::types::Int32Type>::from_iter([
            "red", "green", "red", "blue", "green",
        ]);
        let schema = Arc::new(Schema::new(vec![Field::new(
            "colour",
            arrow_array::Array::data_type(&values).clone(),
            false,
        )]));
        let b = RecordBatch::try_new(schema, vec![Arc::new(values)]).unwrap();
        // The whole stream: the schema, the dictionary, the batch, the end-of-stream marker.
        let mut stream = Vec::new();
        let mut w = StreamWriter::try_new(&mut stream, &b.schema()).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        drop(w);
        let (prefix, len) = message_prefix(&stream).unwrap();
        let (schema, rest) = stream.split_at(prefix + len);
        let mut d = IpcDecoder::new(schema).unwrap();
        assert_eq!(d.decode(rest.to_vec()).unwrap(), b);
    }

    #[test]
    fn one_batch_per_response() {
        let b = batch(0, 10);
        let mut d = IpcDecoder::new(&schema_stream(&b)).unwrap();
        // A batch followed by the end-of-stream marker is that batch.
        let mut msg = batch_message(&b, None);
        msg.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        assert_eq!(d.decode(msg.clone()).unwrap(), b);
        // Anything after the marker, or a second batch, is an error.
        msg.push(0);
        let e = d.decode(msg).unwrap_err();
        assert!(e.to_string().contains("after the end-of-stream"), "{e}");
        let mut two = batch_message(&b, None);
        two.extend(batch_message(&b, None));
        let e = d.decode(two).unwrap_err();
        assert!(e.to_string().contains("more than one record batch"), "{e}");
        // The pre-1.0 prefix (the length without the continuation marker) is accepted.
        let legacy = batch_message(&b, None)[4..].to_vec();
        assert_eq!(d.decode_kept(legacy).unwrap(), b);
    }

    /// What `decode` returns holds nothing of its message, compressed or not.
    #[test]
    fn decoded_batches_hold_nothing_of_their_message() {
        let b = half_compressible(8192);
        for c in [None, Some(CompressionType::LZ4_FRAME)] {
            let message = bytes::Bytes::from(batch_message(&b, c));
            let at = message.as_ptr() as usize;
            let range = at..at + message.len();
            let mut d = IpcDecoder::new(&schema_stream(&b)).unwrap();
            let decoded = d.decode(message.clone()).unwrap();
            let held: usize = decoded
                .columns()
                .iter()
                .map(|col| bytes_inside(&col.to_data(), &range))
                .sum();
            assert_eq!(held, 0, "{c:?}");
            assert_eq!(decoded, b, "{c:?}");
        }
    }

    #[test]
    fn rejects_garbage() {
        assert!(IpcDecoder::new(&[]).is_err());
        assert!(IpcDecoder::new(&[0xff, 0xff, 0xff, 0xff, 100, 0, 0, 0, 1]).is_err());
        let b = batch(0, 3);
        let mut d = IpcDecoder::new(&schema_stream(&b)).unwrap();
        let msg = batch_message(&b, None);
        // Cut anywhere: in the prefix, the header or the body.
        for cut in [2, 6, 20, msg.len() / 2, msg.len() - 1] {
            let e = d.decode(msg[..cut].to_vec()).unwrap_err();
            assert_eq!(e.kind(), CodecErrorKind::Ipc, "{cut}: {e:?}");
        }
    }

    /// A message whose header names buffers beyond its body (found by the `ipc_read` fuzz
    /// target: arrow-ipc panicked slicing them) is an error, whatever header byte is wrong.
    #[test]
    fn a_header_naming_buffers_beyond_the_body_is_an_error_not_a_panic() {
        for compression in [
            None,
            Some(CompressionType::LZ4_FRAME),
            Some(CompressionType::ZSTD),
        ] {
            let encoder = IpcEncoder::new(compression).unwrap();
            let b = batch(0, 5);
            let schema = encoder.schema(&b.schema());
            let message = encoder.batch(&b).unwrap();
            let (prefix, len) = message_prefix(&message).unwrap();
            let mut errors = 0;
            for at in prefix..prefix + len {
                for x in [0x3f, 0x80, 0xff] {
                    let mut changed = message.clone();
                    changed[at] ^= x;
                    let mut d = IpcDecoder::new(&schema).unwrap();
                    if d.decode(changed).is_err() {
                        errors += 1;
                    }
                }
            }
            assert!(errors > 0);
        }
        // A changed schema message: an error or a schema, never a panic.
        let encoder = IpcEncoder::new(None).unwrap();
        let schema = encoder.schema(&batch(0, 1).schema());
        for at in 0..schema.len() {
            for x in [0x3f, 0x80, 0xff] {
                let mut changed = schema.clone();
                changed[at] ^= x;
                let _ = IpcDecoder::new(&changed);
            }
        }
        // The case the fuzzer found: a buffer length far past the body.
        let encoder = IpcEncoder::new(None).unwrap();
        let b = batch(0, 5);
        let message = encoder.batch(&b).unwrap();
        let mut d = IpcDecoder::new(&encoder.schema(&b.schema())).unwrap();
        let e = buffers_within(&[0; 128], false, [(64, 1_056_964_608)].into_iter()).unwrap_err();
        assert!(
            e.to_string()
                .contains("outside the message body of 128 bytes"),
            "{e}"
        );
        assert!(d.decode(message).is_ok());
        // A compressed buffer saying it decompresses to 2^56 bytes (found by the fuzzer).
        let mut body = vec![0u8; 16];
        body[..8].copy_from_slice(&0x00ff_ffff_ffff_ffff_i64.to_le_bytes());
        let e = buffers_within(&body, true, [(0, 16)].into_iter()).unwrap_err();
        assert!(e.to_string().contains("decompresses to"), "{e}");
        assert!(buffers_within(&body, false, [(0, 16)].into_iter()).is_ok());
    }
}

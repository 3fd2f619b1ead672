//! ReadRows responses with their record batch kept as received.
//!
//! The generated `ReadRowsResponse` holds `serialized_record_batch` as a `Vec<u8>`, so prost
//! copies every message out of the gRPC frame (7.5% of the CPU of a 1M-row Arrow read).
//! This codec hands the batch over as a [`Bytes`] slice of the frame instead, and lets
//! prost decode only the rest of the response (stats, schema, row count).

use bytes::{Buf, Bytes};
use gcloud_sdk::google::cloud::bigquery::storage::v1::{ReadRowsRequest, ReadRowsResponse};
use gcloud_sdk::prost::Message;
use gcloud_sdk::prost::encoding::{DecodeContext, WireType, decode_varint, skip_field};
use tonic::Status;

/// `ReadRowsResponse.arrow_record_batch`.
const ARROW_RECORD_BATCH: u32 = 4;
/// `ArrowRecordBatch.serialized_record_batch`.
const SERIALIZED_RECORD_BATCH: u32 = 1;

/// A ReadRows response: its Arrow record batch as received, and the rest decoded.
#[derive(Debug, Default)]
pub(crate) struct ReadResponse {
    /// The response without its Arrow record batch (Avro rows, if sent, stay here).
    pub(crate) rest: ReadRowsResponse,
    /// `arrow_record_batch.serialized_record_batch`, when the response has one.
    pub(crate) arrow: Option<Bytes>,
}

/// What prost's own decoding of the same response would give (for tests and fakes).
#[cfg(test)]
impl From<ReadRowsResponse> for ReadResponse {
    fn from(mut rest: ReadRowsResponse) -> Self {
        use gcloud_sdk::google::cloud::bigquery::storage::v1::read_rows_response::Rows;
        let arrow = match rest.rows.take() {
            Some(Rows::ArrowRecordBatch(b)) => Some(Bytes::from(b.serialized_record_batch)),
            other => {
                rest.rows = other;
                None
            }
        };
        ReadResponse { rest, arrow }
    }
}

fn malformed(e: impl std::fmt::Display) -> Status {
    Status::internal(format!("decoding a ReadRows response: {e}"))
}

fn key(buf: &mut Bytes) -> Result<(u32, WireType), Status> {
    let key = decode_varint(buf).map_err(malformed)?;
    let wire = WireType::try_from(key & 7).map_err(malformed)?;
    let tag = u32::try_from(key >> 3)
        .ok()
        .filter(|t| *t > 0)
        .ok_or_else(|| malformed(format!("invalid field number {}", key >> 3)))?;
    Ok((tag, wire))
}

fn length_delimited(buf: &mut Bytes) -> Result<Bytes, Status> {
    let len = decode_varint(buf).map_err(malformed)?;
    if len > buf.remaining() as u64 {
        return Err(malformed("a field runs past the end of the message"));
    }
    Ok(buf.copy_to_bytes(len as usize))
}

/// Splits one encoded response: the record batch's bytes as a slice of `message`, the other
/// fields decoded by prost. As in prost, the last occurrence of a field wins.
pub(crate) fn split(message: Bytes) -> Result<ReadResponse, Status> {
    let mut buf = message.clone();
    let mut rest = Vec::new();
    let mut arrow = None;
    while buf.has_remaining() {
        let start = message.len() - buf.remaining();
        let (tag, wire) = key(&mut buf)?;
        if tag == ARROW_RECORD_BATCH && wire == WireType::LengthDelimited {
            let mut batch = length_delimited(&mut buf)?;
            let mut serialized = Bytes::new();
            while batch.has_remaining() {
                let (tag, wire) = key(&mut batch)?;
                if tag == SERIALIZED_RECORD_BATCH && wire == WireType::LengthDelimited {
                    serialized = length_delimited(&mut batch)?;
                } else {
                    skip_field(wire, tag, &mut batch, DecodeContext::default())
                        .map_err(malformed)?;
                }
            }
            arrow = Some(serialized);
            continue;
        }
        skip_field(wire, tag, &mut buf, DecodeContext::default()).map_err(malformed)?;
        let field = message
            .get(start..message.len() - buf.remaining())
            .ok_or_else(|| malformed("a field runs past the end of the message"))?;
        rest.extend_from_slice(field);
    }
    let rest = ReadRowsResponse::decode(rest.as_slice()).map_err(malformed)?;
    // A later Avro field replaces an earlier Arrow one (one `oneof`), as prost would have it.
    if rest.rows.is_some() {
        arrow = None;
    }
    Ok(ReadResponse { rest, arrow })
}

/// ReadRows' codec: prost for the request, [`split`] for the responses.
#[derive(Debug, Default)]
pub(crate) struct ReadRowsCodec;

impl tonic::codec::Codec for ReadRowsCodec {
    type Encode = ReadRowsRequest;
    type Decode = ReadResponse;
    type Encoder = tonic_prost::ProstEncoder<ReadRowsRequest>;
    type Decoder = ReadRowsDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::new(tonic::codec::BufferSettings::default())
    }

    fn decoder(&mut self) -> Self::Decoder {
        ReadRowsDecoder
    }
}

#[derive(Debug)]
pub(crate) struct ReadRowsDecoder;

impl tonic::codec::Decoder for ReadRowsDecoder {
    type Item = ReadResponse;
    type Error = Status;

    fn decode(
        &mut self,
        buf: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<ReadResponse>, Status> {
        let message = buf.copy_to_bytes(buf.remaining());
        split(message).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use gcloud_sdk::google::cloud::bigquery::storage::v1::{
        ArrowRecordBatch, ArrowSchema, AvroRows, StreamStats, read_rows_response, stream_stats,
    };

    use super::*;

    fn full() -> ReadRowsResponse {
        ReadRowsResponse {
            row_count: 3,
            stats: Some(StreamStats {
                progress: Some(stream_stats::Progress {
                    at_response_start: 0.25,
                    at_response_end: 0.5,
                }),
            }),
            schema: Some(read_rows_response::Schema::ArrowSchema(ArrowSchema {
                serialized_schema: vec![9; 40],
            })),
            #[allow(deprecated)]
            rows: Some(read_rows_response::Rows::ArrowRecordBatch(
                ArrowRecordBatch {
                    serialized_record_batch: (0..=255u8).cycle().take(5000).collect(),
                    row_count: 3,
                },
            )),
            ..Default::default()
        }
    }

    #[test]
    fn the_batch_is_a_slice_of_the_message_and_the_rest_decodes() {
        let sent = full();
        let message = Bytes::from(sent.encode_to_vec());
        let got = split(message.clone()).unwrap();
        let arrow = got.arrow.unwrap();
        let range = message.as_ptr_range();
        assert!(
            range.contains(&arrow.as_ptr()),
            "not a slice of the message"
        );
        let mut expected = sent.clone();
        let Some(read_rows_response::Rows::ArrowRecordBatch(b)) = expected.rows.take() else {
            unreachable!()
        };
        assert_eq!(arrow, b.serialized_record_batch);
        assert_eq!(got.rest, expected);
        // The same as prost's own decoding, through `From`.
        let via_prost = ReadResponse::from(ReadRowsResponse::decode(message).unwrap());
        assert_eq!(via_prost.rest, got.rest);
        assert_eq!(via_prost.arrow, Some(arrow));
    }

    #[test]
    fn responses_without_a_batch_and_avro_rows() {
        let mut r = full();
        r.rows = None;
        let got = split(Bytes::from(r.encode_to_vec())).unwrap();
        assert!(got.arrow.is_none());
        assert_eq!(got.rest, r);
        r.rows = Some(read_rows_response::Rows::AvroRows(AvroRows {
            serialized_binary_rows: vec![1, 2, 3],
            ..Default::default()
        }));
        let got = split(Bytes::from(r.encode_to_vec())).unwrap();
        assert!(got.arrow.is_none());
        assert_eq!(got.rest, r);
        assert_eq!(
            split(Bytes::new()).unwrap().rest,
            ReadRowsResponse::default()
        );
    }

    /// Every truncation of a response is an error or a decoding prost agrees with, never
    /// a panic.
    #[test]
    fn truncated_responses_agree_with_prost() {
        let message = full().encode_to_vec();
        for end in 0..message.len() {
            let cut = Bytes::copy_from_slice(&message[..end]);
            let ours = split(cut.clone());
            let prost = ReadRowsResponse::decode(cut);
            match (ours, prost) {
                (Ok(ours), Ok(prost)) => {
                    let prost = ReadResponse::from(prost);
                    assert_eq!(ours.rest, prost.rest, "cut at {end}");
                    assert_eq!(ours.arrow, prost.arrow, "cut at {end}");
                }
                (Err(_), Err(_)) => {}
                (ours, prost) => panic!("cut at {end}: ours {ours:?}, prost {prost:?}"),
            }
        }
    }
}

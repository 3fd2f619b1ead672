//! One page of query results as the v2 `QueryResponse` carries them: `rows` as
//! `google.protobuf.Struct`s in BigQuery's `{"f":[{"v":..}]}` shape (the very text the
//! REST encoder writes), or, when `query_results_format` is `ARROW`, an Arrow IPC schema
//! message and one IPC record batch message (the Storage Read encoder's).

use arrow_ipc::CompressionType;
use bigq_codec::json::struct_rows_from_json;
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::record_batch::RecordBatch;
use gcloud_sdk::google::cloud::bigquery::v2::arrow_serialization_options::CompressionCodec;
use gcloud_sdk::google::cloud::bigquery::v2::{
    ArrowRecordBatch, ArrowSchema, ArrowSerializationOptions,
};
use gcloud_sdk::prost::bytes::{Buf, BufMut};
use gcloud_sdk::prost::encoding::{DecodeContext, WireType};
use gcloud_sdk::prost::{DecodeError, Message};

use crate::api::PageRequest;
use crate::api::jobs::PAGE_BYTES;
use crate::error::BqError;
use crate::grpc::arrow::{conform_batch, encode_batch, ipc_encoder, wire_schema};
use crate::sql::exec::QueryOutput;
use bigq_codec::json::encode::{self, EncodeOptions};

/// The rows of one page and where the next starts.
#[derive(Debug, Default)]
pub struct StructPage {
    /// The rows, encoded as the response message's repeated `Struct` field.
    pub rows: Vec<u8>,
    /// How many rows `rows` holds.
    pub count: usize,
    /// The next page's token, if rows remain.
    pub next: Option<String>,
}

/// One page of rows as Structs, encoded as field `rows_tag` of the response. The page stops
/// at `max` rows or the 10 MB BigQuery puts in a page, as REST's does. The rows are the very
/// text the REST encoder writes, turned into protobuf in one pass (no `Struct` tree: a
/// map per cell costs far more than the cell).
pub fn struct_page(
    out: &QueryOutput,
    page: PageRequest,
    opts: EncodeOptions,
    rows_tag: u32,
) -> Result<StructPage, BqError> {
    let total = out.total_rows();
    if page.start >= total {
        return Ok(StructPage::default());
    }
    let mut text = String::from("[");
    let n = encode::write_rows(
        &mut text,
        &out.batches,
        page.start,
        page.max.unwrap_or(usize::MAX),
        PAGE_BYTES,
        opts,
    );
    text.push(']');
    let (rows, count) = struct_rows_from_json(text.as_bytes(), rows_tag).map_err(|e| {
        BqError::internal(format!("bigq-emulator wrote rows it cannot read back: {e}"))
    })?;
    let end = page.start + n;
    Ok(StructPage {
        rows,
        count,
        next: (end < total).then(|| end.to_string()),
    })
}

/// A response message and its rows, encoded apart: the rows' bytes follow the message's own
/// fields on the wire (protobuf takes fields in any order, and a repeated field's elements
/// wherever they are).
#[derive(Debug, Default, Clone)]
pub struct WithRows<M> {
    /// The message, its rows empty.
    pub message: M,
    /// Its rows, as [`StructPage::rows`].
    pub rows: Vec<u8>,
}

impl<M: Message> Message for WithRows<M> {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.message.encode_raw(buf);
        buf.put_slice(&self.rows);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        self.message.merge_field(tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.message.encoded_len() + self.rows.len()
    }

    fn clear(&mut self) {
        self.message.clear();
        self.rows.clear();
    }
}

/// The IPC buffer compression `ArrowSerializationOptions` asks for.
pub fn compression(
    opts: Option<&ArrowSerializationOptions>,
) -> Result<Option<CompressionType>, BqError> {
    let Some(o) = opts else {
        return Ok(None);
    };
    // arrow.proto: the precision applies only to TIMESTAMP_PICOS columns, which the
    // emulator never has; any defined value is accepted, an undefined one refused.
    if !(0..=3).contains(&o.picos_timestamp_precision) {
        return Err(BqError::invalid(format!(
            "Invalid picos_timestamp_precision {}",
            o.picos_timestamp_precision
        )));
    }
    match CompressionCodec::try_from(o.buffer_compression) {
        Ok(CompressionCodec::CompressionUnspecified) => Ok(None),
        Ok(CompressionCodec::Lz4Frame) => Ok(Some(CompressionType::LZ4_FRAME)),
        Ok(CompressionCodec::Zstd) => Ok(Some(CompressionType::ZSTD)),
        Err(_) => Err(BqError::invalid(format!(
            "Invalid buffer_compression {}",
            o.buffer_compression
        ))),
    }
}

/// One page as Arrow: the schema message, the record batch message (empty bytes for a
/// page with no rows), the rows in it and the next page's token.
#[derive(Debug)]
pub struct ArrowPage {
    /// `results_schema`.
    pub schema: ArrowSchema,
    /// `results`.
    pub batch: ArrowRecordBatch,
    /// The rows in the batch.
    pub rows: usize,
    /// The next page's token, if rows remain.
    pub next: Option<String>,
}

/// One page of rows in the Arrow layout the Storage Read API serves for the same columns.
pub fn arrow_page(
    out: &QueryOutput,
    page: PageRequest,
    compression: Option<CompressionType>,
) -> Result<ArrowPage, BqError> {
    let schema = wire_schema(&out.schema)?;
    let encoder = ipc_encoder(compression)?;
    let total = out.total_rows();
    let start = page.start.min(total);
    let mut n = (total - start).min(page.max.unwrap_or(usize::MAX));
    // Stay within BigQuery's page size, by the average row size.
    let bytes: usize = crate::memory::batches_bytes(&out.batches);
    if total > 0 && bytes > PAGE_BYTES {
        let per_row = bytes.div_ceil(total).max(1);
        n = n.min((PAGE_BYTES / per_row).max(1));
    }
    let serialized_record_batch = if n == 0 {
        Vec::new()
    } else {
        // Only the page's rows are conformed and joined, not the whole result.
        let conformed = rows_of(&out.batches, start, n)
            .map(|b| conform_batch(&b, &schema))
            .collect::<Result<Vec<_>, _>>()?;
        let page = concat_batches(&schema, &conformed)
            .map_err(|e| BqError::internal(format!("bigq-emulator cannot join batches: {e}")))?;
        encode_batch(&encoder, &page)?
    };
    let end = start + n;
    Ok(ArrowPage {
        schema: ArrowSchema {
            serialized_schema: encoder.schema(&schema),
        },
        batch: ArrowRecordBatch {
            serialized_record_batch,
        },
        rows: n,
        next: (end < total).then(|| end.to_string()),
    })
}

/// Rows `start..start + n` of `batches`, as zero-copy slices of the batches they fall in.
fn rows_of(
    batches: &[RecordBatch],
    start: usize,
    n: usize,
) -> impl Iterator<Item = RecordBatch> + '_ {
    let end = start + n;
    let mut first = 0;
    batches.iter().filter_map(move |b| {
        let (from, to) = (first, first + b.num_rows());
        first = to;
        let (lo, hi) = (from.max(start), to.min(end));
        (lo < hi).then(|| b.slice(lo - from, hi - lo))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::sql::exec::{Engine, QueryRequest};
    use arrow_ipc::reader::StreamReader;
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Int64Type;

    async fn run(sql: &str) -> QueryOutput {
        let engine = Engine::new(Catalog::new());
        engine
            .execute(&QueryRequest {
                sql: sql.into(),
                ..Default::default()
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn rows_encoded_apart_decode_with_the_generated_type() {
        use gcloud_sdk::google::cloud::bigquery::v2::GetQueryResultsResponse;
        use prost_types::value::Kind;
        let out =
            run("SELECT n, IF(n = 2, NULL, 'x') AS s FROM UNNEST([1, 2]) AS n ORDER BY n").await;
        let p = struct_page(
            &out,
            PageRequest {
                start: 0,
                max: None,
            },
            EncodeOptions::default(),
            7,
        )
        .unwrap();
        let message = WithRows {
            message: GetQueryResultsResponse {
                page_token: "t".into(),
                total_rows: Some(2),
                ..Default::default()
            },
            rows: p.rows,
        };
        let bytes = message.encode_to_vec();
        assert_eq!(bytes.len(), message.encoded_len());
        let r = GetQueryResultsResponse::decode(bytes.as_slice()).unwrap();
        assert_eq!((r.page_token.as_str(), r.total_rows), ("t", Some(2)));
        let cells: Vec<Vec<Option<Kind>>> = r
            .rows
            .iter()
            .map(|row| match &row.fields["f"].kind {
                Some(Kind::ListValue(l)) => l
                    .values
                    .iter()
                    .map(|c| match &c.kind {
                        Some(Kind::StructValue(s)) => s.fields["v"].kind.clone(),
                        _ => None,
                    })
                    .collect(),
                _ => vec![],
            })
            .collect();
        let text = |t: &str| Some(Kind::StringValue(t.into()));
        assert_eq!(
            cells,
            [
                vec![text("1"), text("x")],
                vec![text("2"), Some(Kind::NullValue(0))]
            ]
        );
    }

    #[tokio::test]
    async fn pages_cut_at_max_and_name_the_next_row() {
        let out = run("SELECT n FROM UNNEST(GENERATE_ARRAY(1, 7)) AS n ORDER BY n").await;
        let p = struct_page(
            &out,
            PageRequest {
                start: 0,
                max: Some(3),
            },
            EncodeOptions::default(),
            7,
        )
        .unwrap();
        assert_eq!((p.count, p.next.as_deref()), (3, Some("3")));
        let p = struct_page(
            &out,
            PageRequest {
                start: 6,
                max: Some(3),
            },
            EncodeOptions::default(),
            7,
        )
        .unwrap();
        assert_eq!((p.count, p.next), (1, None));
        let p = struct_page(
            &out,
            PageRequest {
                start: 9,
                max: None,
            },
            EncodeOptions::default(),
            7,
        )
        .unwrap();
        assert!(p.rows.is_empty() && p.count == 0);

        let a = arrow_page(
            &out,
            PageRequest {
                start: 3,
                max: Some(2),
            },
            Some(CompressionType::ZSTD),
        )
        .unwrap();
        assert_eq!((a.rows, a.next.as_deref()), (2, Some("5")));
        let mut bytes = a.schema.serialized_schema.clone();
        bytes.extend_from_slice(&a.batch.serialized_record_batch);
        let batches: Vec<_> = StreamReader::try_new(std::io::Cursor::new(bytes), None)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let n = batches[0].column(0).as_primitive::<Int64Type>();
        assert_eq!(n.values().to_vec(), [4, 5]);
        // No rows: the schema and a zero-byte batch.
        let a = arrow_page(
            &out,
            PageRequest {
                start: 7,
                max: None,
            },
            None,
        )
        .unwrap();
        assert_eq!(a.rows, 0);
        assert!(a.batch.serialized_record_batch.is_empty());
        assert!(!a.schema.serialized_schema.is_empty());
    }

    #[test]
    fn rows_of_spans_batch_boundaries() {
        use datafusion::arrow::array::Int64Array;
        use datafusion::arrow::datatypes::{DataType, Field, Schema};
        let schema =
            std::sync::Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let batch = |v: Vec<i64>| {
            RecordBatch::try_new(
                schema.clone(),
                vec![std::sync::Arc::new(Int64Array::from(v))],
            )
            .unwrap()
        };
        let batches = [
            batch(vec![0, 1, 2]),
            batch(vec![]),
            batch(vec![3, 4]),
            batch(vec![5, 6, 7]),
        ];
        let values = |start, n| -> Vec<i64> {
            rows_of(&batches, start, n)
                .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
                .collect()
        };
        assert_eq!(values(0, 8), (0..8).collect::<Vec<_>>());
        assert_eq!(values(2, 4), [2, 3, 4, 5]);
        assert_eq!(values(3, 2), [3, 4]);
        assert_eq!(values(7, 5), [7]);
        assert!(values(8, 1).is_empty());
    }

    #[test]
    fn compression_options_map_or_are_refused() {
        let o = |c: i32, p: i32| ArrowSerializationOptions {
            buffer_compression: c,
            picos_timestamp_precision: p,
        };
        assert_eq!(compression(None).unwrap(), None);
        assert_eq!(
            compression(Some(&o(1, 0))).unwrap(),
            Some(CompressionType::LZ4_FRAME)
        );
        assert_eq!(
            compression(Some(&o(2, 3))).unwrap(),
            Some(CompressionType::ZSTD)
        );
        assert_eq!(
            compression(Some(&o(3, 0))).unwrap_err().message,
            "Invalid buffer_compression 3"
        );
        assert_eq!(
            compression(Some(&o(0, -1))).unwrap_err().message,
            "Invalid picos_timestamp_precision -1"
        );
    }
}

//! One page of query results as the v2 `QueryResponse` carries them: `rows` as
//! `google.protobuf.Struct`s in BigQuery's `{"f":[{"v":..}]}` shape (the very text the
//! REST encoder writes), or, when `query_results_format` is `ARROW`, an Arrow IPC schema
//! message and one IPC record batch message (the Storage Read encoder's).

use arrow_ipc::CompressionType;
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::record_batch::RecordBatch;
use gcloud_sdk::google::cloud::bigquery::v2::arrow_serialization_options::CompressionCodec;
use gcloud_sdk::google::cloud::bigquery::v2::{
    ArrowRecordBatch, ArrowSchema, ArrowSerializationOptions,
};
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as ProtoValue};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::api::PageRequest;
use crate::api::jobs::PAGE_BYTES;
use crate::error::BqError;
use crate::grpc::arrow::{IpcEncoder, conform_batch, wire_schema};
use crate::rest::encode::{self, EncodeOptions};
use crate::sql::engine::QueryOutput;

/// The rows of one page and where the next starts.
#[derive(Debug, Default)]
pub struct StructPage {
    /// The rows.
    pub rows: Vec<Struct>,
    /// The next page's token, if rows remain.
    pub next: Option<String>,
}

/// One page of rows as Structs. The page stops at `max` rows or the 10 MB BigQuery puts
/// in a page, as REST's does.
pub fn struct_page(
    out: &QueryOutput,
    page: PageRequest,
    opts: EncodeOptions,
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
    let rows: Vec<ProtoJson> = serde_json::from_str(&text).map_err(|e| {
        BqError::internal(format!("bigq-emulator wrote rows it cannot read back: {e}"))
    })?;
    let rows = rows
        .into_iter()
        .map(|ProtoJson(r)| match r.kind {
            Some(Kind::StructValue(s)) => Ok(s),
            _ => Err(BqError::internal(
                "bigq-emulator wrote a row that is not an object",
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let end = page.start + n;
    Ok(StructPage {
        rows,
        next: (end < total).then(|| end.to_string()),
    })
}

/// A `google.protobuf.Value` read straight from JSON text, with no `serde_json::Value`
/// tree in between (a page's rows are parsed once, into the message the response holds).
struct ProtoJson(ProtoValue);

impl ProtoJson {
    fn of(kind: Kind) -> ProtoJson {
        ProtoJson(ProtoValue { kind: Some(kind) })
    }
}

impl<'de> Deserialize<'de> for ProtoJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProtoJson, D::Error> {
        d.deserialize_any(ProtoJsonVisitor)
    }
}

struct ProtoJsonVisitor;

impl<'de> Visitor<'de> for ProtoJsonVisitor {
    type Value = ProtoJson;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<ProtoJson, E> {
        Ok(ProtoJson::of(Kind::NullValue(0)))
    }

    fn visit_bool<E>(self, b: bool) -> Result<ProtoJson, E> {
        Ok(ProtoJson::of(Kind::BoolValue(b)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<ProtoJson, E> {
        Ok(ProtoJson::of(Kind::NumberValue(v as f64)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<ProtoJson, E> {
        Ok(ProtoJson::of(Kind::NumberValue(v as f64)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<ProtoJson, E> {
        Ok(ProtoJson::of(Kind::NumberValue(v)))
    }

    fn visit_str<E>(self, s: &str) -> Result<ProtoJson, E> {
        Ok(ProtoJson::of(Kind::StringValue(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<ProtoJson, E> {
        Ok(ProtoJson::of(Kind::StringValue(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ProtoJson, A::Error> {
        let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(ProtoJson(v)) = seq.next_element()? {
            values.push(v);
        }
        Ok(ProtoJson::of(Kind::ListValue(ListValue { values })))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProtoJson, A::Error> {
        let mut fields = std::collections::BTreeMap::new();
        while let Some((k, ProtoJson(v))) = map.next_entry::<String, ProtoJson>()? {
            fields.insert(k, v);
        }
        Ok(ProtoJson::of(Kind::StructValue(Struct { fields })))
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
    let encoder = IpcEncoder::new(compression)?;
    let total = out.total_rows();
    let start = page.start.min(total);
    let mut n = (total - start).min(page.max.unwrap_or(usize::MAX));
    // Stay within BigQuery's page size, by the average row size.
    let bytes: usize = out.batches.iter().map(|b| b.get_array_memory_size()).sum();
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
        encoder.batch(&page)?
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
    use crate::sql::engine::{Engine, QueryRequest};
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

    #[test]
    fn json_maps_onto_protobuf_values() {
        let ProtoJson(v) =
            serde_json::from_str(r#"{"f": [{"v": "1"}, {"v": null}, {"v": [{"v": "a"}]}]}"#)
                .unwrap();
        let Some(Kind::StructValue(row)) = v.kind else {
            panic!("not a struct");
        };
        let Some(Kind::ListValue(cells)) = &row.fields["f"].kind else {
            panic!("no f list");
        };
        assert_eq!(cells.values.len(), 3);
        let cell = |i: usize| match &cells.values[i].kind {
            Some(Kind::StructValue(s)) => s.fields["v"].kind.clone(),
            _ => None,
        };
        assert_eq!(cell(0), Some(Kind::StringValue("1".into())));
        assert_eq!(cell(1), Some(Kind::NullValue(0)));
        assert!(matches!(cell(2), Some(Kind::ListValue(l)) if l.values.len() == 1));
        // Numbers (integer or not) and booleans, though the row encoder writes neither.
        let ProtoJson(v) = serde_json::from_str("[7, -2.5, true]").unwrap();
        let Some(Kind::ListValue(l)) = v.kind else {
            panic!("not a list");
        };
        let kinds: Vec<_> = l.values.into_iter().map(|v| v.kind).collect();
        assert_eq!(
            kinds,
            [
                Some(Kind::NumberValue(7.0)),
                Some(Kind::NumberValue(-2.5)),
                Some(Kind::BoolValue(true))
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
        )
        .unwrap();
        assert_eq!((p.rows.len(), p.next.as_deref()), (3, Some("3")));
        let p = struct_page(
            &out,
            PageRequest {
                start: 6,
                max: Some(3),
            },
            EncodeOptions::default(),
        )
        .unwrap();
        assert_eq!((p.rows.len(), p.next), (1, None));
        let p = struct_page(
            &out,
            PageRequest {
                start: 9,
                max: None,
            },
            EncodeOptions::default(),
        )
        .unwrap();
        assert!(p.rows.is_empty());

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

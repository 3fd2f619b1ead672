//! Protobuf rows, both ways: arbitrary bytes into `RowsDecoder` (what bigq-emulator's
//! `AppendRows` does with a client's rows) fail with a typed error or decode, never panic;
//! and arbitrary serde rows through `RowEncoder`, `RowsDecoder` and back through the Arrow
//! → serde decoder come out as they went in.
#![no_main]

use arbitrary::Arbitrary;
use bigq_codec::de::from_record_batch;
use bigq_codec::proto::{RowEncoder, RowsDecoder, WriteSchema};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};

#[derive(Arbitrary, Serialize, Deserialize, Debug, Clone)]
struct Inner {
    a: Option<i64>,
    b: Option<String>,
}

#[derive(Arbitrary, Serialize, Deserialize, Debug, Clone)]
struct Row {
    id: i64,
    name: Option<String>,
    score: Option<f64>,
    active: bool,
    tags: Vec<i64>,
    info: Option<Inner>,
}

/// Equality with FLOAT64 compared by bits (NaN is a value BigQuery stores).
fn same(a: &Row, b: &Row) -> bool {
    a.id == b.id
        && a.name == b.name
        && a.score.map(f64::to_bits) == b.score.map(f64::to_bits)
        && a.active == b.active
        && a.tags == b.tags
        && match (&a.info, &b.info) {
            (Some(x), Some(y)) => x.a == y.a && x.b == y.b,
            (None, None) => true,
            _ => false,
        }
}

#[derive(Arbitrary, Debug)]
struct Input {
    rows: Vec<Row>,
    raw: Vec<Vec<u8>>,
}

fn schema() -> TableSchema {
    let col = TableFieldSchema::new;
    TableSchema::new(vec![
        col("id", FieldType::Int64).with_mode(FieldMode::Required),
        col("name", FieldType::String),
        col("score", FieldType::Float64),
        col("active", FieldType::Bool).with_mode(FieldMode::Required),
        col("tags", FieldType::Int64).with_mode(FieldMode::Repeated),
        TableFieldSchema::record(
            "info",
            vec![col("a", FieldType::Int64), col("b", FieldType::String)],
        ),
    ])
}

fuzz_target!(|input: Input| {
    let table = schema();
    let arrow = table.to_arrow().expect("the schema maps to Arrow");
    let write = WriteSchema::new(&table).expect("the schema maps to protobuf");

    // Untrusted bytes: an error or a batch of as many rows.
    let mut decoder = RowsDecoder::new(write.descriptor(), &table.fields, arrow.clone())
        .expect("the descriptor compiles");
    if let Ok(batch) = decoder.decode(&input.raw, &[]) {
        assert_eq!(batch.num_rows(), input.raw.len());
    }

    // Round trip.
    let bytes = RowEncoder::new(write.clone())
        .encode_rows(&input.rows)
        .expect("every row of this type encodes");
    let mut decoder = RowsDecoder::new(write.descriptor(), &table.fields, arrow)
        .expect("the descriptor compiles");
    let batch = decoder.decode(&bytes, &[]).expect("encoded rows decode");
    let back: Vec<Row> = from_record_batch(&batch).expect("decoded rows deserialize");
    assert_eq!(back.len(), input.rows.len());
    for (i, (a, b)) in input.rows.iter().zip(&back).enumerate() {
        assert!(same(a, b), "row {i}: sent {a:?}, got {b:?}");
    }
});

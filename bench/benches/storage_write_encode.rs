//! Rows to Storage Write protobuf: bigq's `RowEncoder` against the `bigquery` crate's (0.9)
//! encoder, on the same rows in the same run, and the bytes each format puts on the wire.
//!
//! The rows are the scan table of the comparison write-up (see `scan_table`: 1M rows of 20
//! columns, INT64, FLOAT64, STRING, BOOL, NUMERIC, DATE, TIMESTAMP, a STRUCT and an ARRAY),
//! decoded once into structs, then encoded one by one into a reused buffer:
//!
//! - `native`: each crate's own types (bigq's `Numeric`, `Date`, `Timestamp`; the `bigquery`
//!   crate's `BigQueryDate`, `BigQueryTimestamp` and NUMERIC as `String`);
//! - `std`: one struct for both, NUMERIC as `String`, DATE as `i32`, TIMESTAMP as `i64`.
//!
//! bigq runs with NUMERIC packed (`NumericEncoding::Packed`), the encoding the `bigquery`
//! crate always uses, so both write the same bytes (checked before timing); `native/bigq_text`
//! is bigq's default, NUMERIC as decimal text.
//!
//! Before timing, it prints the bytes of the 1M rows as `ProtoRows.serialized_rows` (each row
//! with its field key and length) for each encoder, and as Arrow IPC record-batch messages of
//! the same rows (8192-row batches, no compression), the other format `AppendRows` takes.
//!
//! `cargo bench -p bigq-bench --bench storage_write_encode -- --warm-up-time 2 --measurement-time 10`

// Shared with arrow_serde, whose stream/check helpers this bench does not use.
#[allow(dead_code)]
mod scan_table;

use std::hint::black_box;

use arrow_array::RecordBatch;
use bigq_codec::proto::{NumericEncoding, ProtoOptions, RowEncoder, WriteSchema};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigquery::{
    BigQueryFieldMode, BigQueryFieldSchema, BigQueryFieldType, BigQueryTableSchema,
    BigQueryWriteCodecBench,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scan_table::*;
use serde::Serialize;

const COLUMNS: &[(&str, FieldType)] = &[
    ("id", FieldType::Int64),
    ("user_id", FieldType::Int64),
    ("score", FieldType::Float64),
    ("ratio", FieldType::Float64),
    ("name", FieldType::String),
    ("city", FieldType::String),
    ("active", FieldType::Bool),
    ("verified", FieldType::Bool),
    ("amount", FieldType::Numeric),
    ("discount", FieldType::Numeric),
    ("created", FieldType::Date),
    ("birthday", FieldType::Date),
    ("created_at", FieldType::Timestamp),
    ("updated_at", FieldType::Timestamp),
    ("quantity", FieldType::Int64),
    ("weight", FieldType::Float64),
    ("comment", FieldType::String),
    ("rank", FieldType::Int64),
];

fn bigq_schema() -> TableSchema {
    let mut fields: Vec<TableFieldSchema> = COLUMNS
        .iter()
        .map(|(n, t)| TableFieldSchema::new(*n, t.clone()))
        .collect();
    fields[0] = fields[0].clone().with_mode(FieldMode::Required);
    fields.push(TableFieldSchema::record(
        "info",
        vec![
            TableFieldSchema::new("a", FieldType::Int64),
            TableFieldSchema::new("b", FieldType::String),
            TableFieldSchema::new("c", FieldType::Float64),
        ],
    ));
    fields.push(TableFieldSchema::new("tags", FieldType::Int64).with_mode(FieldMode::Repeated));
    TableSchema::new(fields)
}

fn bigquery_type(t: &FieldType) -> BigQueryFieldType {
    match t {
        FieldType::Int64 => BigQueryFieldType::Int64,
        FieldType::Float64 => BigQueryFieldType::Float64,
        FieldType::String => BigQueryFieldType::String { max_length: None },
        FieldType::Bool => BigQueryFieldType::Bool,
        FieldType::Numeric => BigQueryFieldType::Numeric(None),
        FieldType::Date => BigQueryFieldType::Date,
        FieldType::Timestamp => BigQueryFieldType::Timestamp,
        other => unreachable!("{other} is not in the scan table"),
    }
}

fn bigquery_field(
    name: &str,
    field_type: BigQueryFieldType,
    mode: BigQueryFieldMode,
) -> BigQueryFieldSchema {
    BigQueryFieldSchema {
        name: name.to_string(),
        field_type,
        mode,
        description: None,
        default_value_expression: None,
    }
}

fn bigquery_schema() -> BigQueryTableSchema {
    let mut fields: Vec<BigQueryFieldSchema> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            let mode = if i == 0 {
                BigQueryFieldMode::Required
            } else {
                BigQueryFieldMode::Nullable
            };
            bigquery_field(n, bigquery_type(t), mode)
        })
        .collect();
    let nullable = BigQueryFieldMode::Nullable;
    fields.push(bigquery_field(
        "info",
        BigQueryFieldType::Struct(vec![
            bigquery_field("a", BigQueryFieldType::Int64, nullable),
            bigquery_field(
                "b",
                BigQueryFieldType::String { max_length: None },
                nullable,
            ),
            bigquery_field("c", BigQueryFieldType::Float64, nullable),
        ]),
        nullable,
    ));
    fields.push(bigquery_field(
        "tags",
        BigQueryFieldType::Int64,
        BigQueryFieldMode::Repeated,
    ));
    BigQueryTableSchema { fields }
}

fn bigq_encoder(numeric: NumericEncoding) -> RowEncoder {
    let options = ProtoOptions::default().with_numeric(numeric);
    RowEncoder::new(WriteSchema::with_options(&bigq_schema(), options).unwrap())
}

/// Bytes of a row in `ProtoRows.serialized_rows`: field key, length, row.
fn framed(len: usize) -> usize {
    let mut varint = 1;
    while len >> (7 * varint) != 0 {
        varint += 1;
    }
    1 + varint + len
}

/// Encodes every row into a reused buffer; returns the framed bytes.
#[inline(never)]
fn encode_bigq<T: Serialize>(enc: &mut RowEncoder, rows: &[T], out: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for row in rows {
        out.clear();
        enc.encode(row, out).unwrap();
        bytes += framed(black_box(&*out).len());
    }
    bytes
}

#[inline(never)]
fn encode_bigquery<T: Serialize>(
    enc: &mut BigQueryWriteCodecBench,
    rows: &[T],
    out: &mut Vec<u8>,
) -> usize {
    let mut bytes = 0;
    for row in rows {
        out.clear();
        enc.encode(row, out).unwrap();
        bytes += framed(black_box(&*out).len());
    }
    bytes
}

/// Bytes of the batches as Arrow IPC record-batch messages (the schema is sent once and not
/// counted; neither is the protobuf writer schema).
fn arrow_ipc_bytes(batches: &[RecordBatch]) -> usize {
    use arrow_ipc::writer::{DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
    let generator = IpcDataGenerator::default();
    let options = IpcWriteOptions::default();
    let mut tracker = DictionaryTracker::new(false);
    batches
        .iter()
        .map(|b| {
            let (dicts, data) = generator
                .encode(b, &mut tracker, &options, &mut Default::default())
                .unwrap();
            assert!(dicts.is_empty());
            data.ipc_message.len() + data.arrow_data.len()
        })
        .sum()
}

/// Both encoders write the same rows to the same bytes (with NUMERIC packed), so neither is
/// measured skipping work.
fn check(native: &[BigqRow], theirs: &[BigqueryRow], std_rows: &[StdRow]) {
    let mut a = bigq_encoder(NumericEncoding::Packed);
    let mut b = BigQueryWriteCodecBench::new(&bigquery_schema());
    let (mut x, mut y, mut z) = (Vec::new(), Vec::new(), Vec::new());
    for i in (0..native.len()).step_by(97) {
        x.clear();
        y.clear();
        z.clear();
        a.encode(&native[i], &mut x).unwrap();
        b.encode(&theirs[i], &mut y).unwrap();
        a.encode(&std_rows[i], &mut z).unwrap();
        assert_eq!(x, y, "row {i}: bigq and bigquery write different bytes");
        assert_eq!(x, z, "row {i}: bigq's native and std rows differ");
    }
}

fn bench(c: &mut Criterion) {
    let batches = batches();
    let native: Vec<BigqRow> = decode_bigq(&batches);
    let theirs: Vec<BigqueryRow> = decode_bigquery(&batches);
    let std_rows: Vec<StdRow> = decode_bigq(&batches);
    check(&native, &theirs, &std_rows);

    let rows = native.len();
    let mut out = Vec::with_capacity(4096);
    let per_million = |bytes: usize| bytes as f64 * 1e6 / rows as f64 / 1e6;
    let packed = encode_bigq(
        &mut bigq_encoder(NumericEncoding::Packed),
        &native,
        &mut out,
    );
    let text = encode_bigq(&mut bigq_encoder(NumericEncoding::Text), &native, &mut out);
    let bigquery = encode_bigquery(
        &mut BigQueryWriteCodecBench::new(&bigquery_schema()),
        &theirs,
        &mut out,
    );
    let ipc = arrow_ipc_bytes(&batches);
    println!("bytes per 1M rows ({rows} rows encoded):");
    println!(
        "  bigq protobuf, NUMERIC packed: {:.1} MB",
        per_million(packed)
    );
    println!(
        "  bigq protobuf, NUMERIC text:   {:.1} MB",
        per_million(text)
    );
    println!(
        "  bigquery 0.9 protobuf:         {:.1} MB",
        per_million(bigquery)
    );
    println!(
        "  Arrow IPC (8192-row batches):  {:.1} MB",
        per_million(ipc)
    );
    println!(
        "  protobuf / Arrow: {:.3} (packed), {:.3} (text)",
        packed as f64 / ipc as f64,
        text as f64 / ipc as f64
    );

    let mut g = c.benchmark_group("rows_to_proto_1M");
    g.throughput(Throughput::Elements(rows as u64));
    g.sample_size(10);
    g.bench_function("bigq/native", |b| {
        let mut enc = bigq_encoder(NumericEncoding::Packed);
        b.iter(|| encode_bigq(&mut enc, black_box(&native), &mut out))
    });
    g.bench_function("bigquery/native", |b| {
        let mut enc = BigQueryWriteCodecBench::new(&bigquery_schema());
        b.iter(|| encode_bigquery(&mut enc, black_box(&theirs), &mut out))
    });
    g.bench_function("bigq/std", |b| {
        let mut enc = bigq_encoder(NumericEncoding::Packed);
        b.iter(|| encode_bigq(&mut enc, black_box(&std_rows), &mut out))
    });
    g.bench_function("bigquery/std", |b| {
        let mut enc = BigQueryWriteCodecBench::new(&bigquery_schema());
        b.iter(|| encode_bigquery(&mut enc, black_box(&std_rows), &mut out))
    });
    g.bench_function("bigq/native_text", |b| {
        let mut enc = bigq_encoder(NumericEncoding::Text);
        b.iter(|| encode_bigq(&mut enc, black_box(&native), &mut out))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

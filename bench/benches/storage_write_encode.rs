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
// The schemas and encode loops, shared with examples/profile_arrow_serde.rs (write-*).
mod write_table;

use std::hint::black_box;

use arrow_array::RecordBatch;
use bigq_codec::proto::NumericEncoding;
use bigquery::BigQueryWriteCodecBench;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scan_table::*;
use write_table::*;

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

//! Arrow batches to typed rows: bigq's decoder against the `bigquery` crate's
//! `BigQueryBatchRows`, on the same in-memory batches.
//!
//! The data has the shape of the scan table of the comparison write-up: 1M rows, 20 columns
//! of INT64, FLOAT64, STRING, BOOL, NUMERIC, DATE and TIMESTAMP, a STRUCT and an ARRAY, some
//! nullable, in batches of 8192 rows as Storage Read would send them, generated
//! deterministically (see `scan_table`). Each decoder reads it into:
//!
//! - `native`: each crate's own types for NUMERIC, DATE and TIMESTAMP (bigq's `Numeric`,
//!   `Date`, `Timestamp`; the `bigquery` crate's `BigQueryDate`, `BigQueryTimestamp`, and
//!   NUMERIC as `String`, its lossless form, since it has no decimal type of its own);
//! - `std`: one struct for both, with std types only (NUMERIC as `String`, DATE as `i32`
//!   days, TIMESTAMP as `i64` microseconds).
//!
//! `cargo bench -p bigq-bench --bench arrow_serde -- --warm-up-time 2 --measurement-time 10`

mod scan_table;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scan_table::*;

fn bench(c: &mut Criterion) {
    let batches = batches();
    check(&batches);
    let mut g = c.benchmark_group("arrow_to_rows_1M");
    g.throughput(Throughput::Elements(*ROWS as u64));
    g.sample_size(10);
    macro_rules! stream {
        ($name:literal, $f:ident, $t:ty) => {
            g.bench_function($name, |b| {
                let mut out: Vec<$t> = Vec::with_capacity(BATCH);
                b.iter(|| $f(black_box(&batches), &mut out))
            });
        };
    }
    stream!("bigq/native", stream_bigq, BigqRow);
    stream!("bigquery/native", stream_bigquery, BigqueryRow);
    stream!("bigq/native/in_place", stream_bigq_in_place, BigqRow);
    stream!("bigq/std", stream_bigq, StdRow);
    stream!("bigquery/std", stream_bigquery, StdRow);
    // Collecting all 1M rows into one vector adds the same page-fault and allocator cost
    // to both.
    g.bench_function("bigq/native/collect", |b| {
        b.iter(|| decode_bigq::<BigqRow>(black_box(&batches)))
    });
    g.bench_function("bigquery/native/collect", |b| {
        b.iter(|| decode_bigquery::<BigqueryRow>(black_box(&batches)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

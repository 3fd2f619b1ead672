//! REST rows to Arrow: bigq's streaming decoder against `serde_json::Value` + Arrow
//! builders, on a 300,000-row, 16-column `tabledata.list` page of lineitem-like rows.
//!
//! `cargo bench -p bigq-bench --bench json_rows -- --warm-up-time 2 --measurement-time 10`
//! Throughput is in rows per second (criterion's "elem/s").

use std::hint::black_box;

use bigq_bench::lineitem;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn json_rows(c: &mut Criterion) {
    let rows = lineitem::rows_for_this_run();
    let body = lineitem::body(rows);
    let schema = lineitem::schema();
    let mut g = c.benchmark_group("json_rows");
    g.throughput(Throughput::Elements(rows as u64));
    g.sample_size(10);
    g.bench_function("bigq_decoder_64KiB_chunks", |b| {
        b.iter(|| lineitem::decode_bigq(black_box(&body), &schema, 64 * 1024))
    });
    g.bench_function("serde_json_value_then_arrow", |b| {
        b.iter(|| lineitem::decode_serde_value(black_box(&body), &schema))
    });
    g.finish();
}

criterion_group!(benches, json_rows);
criterion_main!(benches);

//! Rows in the v2 gRPC API's struct encoding (`repeated google.protobuf.Struct rows` of a
//! `GetQueryResultsResponse`) to Arrow: bigq's one pass over the wire bytes
//! (`split_struct_rows`, then the REST row decoder) against prost decoding the same bytes
//! into `prost_types::Struct`s, which is all a generated client does before a cell can be
//! read (a map per row and per cell). 100,000 lineitem-like rows of 16 columns.
//!
//! `cargo bench -p bigq-bench --bench struct_rows -- --warm-up-time 2 --measurement-time 10`

use std::hint::black_box;

use bigq_bench::lineitem;
use bigq_codec::json::{ResponseDecoder, split_struct_rows, struct_rows_from_json};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The rows field of `GetQueryResultsResponse`, alone.
#[derive(Clone, PartialEq, prost::Message)]
struct Page {
    #[prost(message, repeated, tag = "7")]
    rows: Vec<prost_types::Struct>,
}

const ROWS: usize = 100_000;

fn struct_rows(c: &mut Criterion) {
    let body = lineitem::body(ROWS);
    let schema = lineitem::schema();
    let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let rows_json = serde_json::to_vec(&value["rows"]).unwrap();
    let (wire, n) = struct_rows_from_json(&rows_json, 7).unwrap();
    assert_eq!(n, ROWS);
    // Both read the same rows.
    assert_eq!(
        <Page as prost::Message>::decode(wire.as_slice())
            .unwrap()
            .rows
            .len(),
        ROWS
    );

    let mut g = c.benchmark_group("struct_rows_100k");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(10);
    g.bench_function("bigq_split_then_arrow", |b| {
        b.iter(|| {
            let split = split_struct_rows(black_box(&wire), 7).unwrap();
            let mut d = ResponseDecoder::new().with_schema(schema.clone()).unwrap();
            d.decode(&split.body).unwrap();
            d.finish().unwrap();
            let mut rows = 0;
            while let Some(b) = d.next_batch() {
                rows += b.num_rows();
            }
            assert_eq!(rows, ROWS);
        })
    });
    g.bench_function("prost_structs_only", |b| {
        b.iter(|| {
            let page = <Page as prost::Message>::decode(black_box(wire.as_slice())).unwrap();
            assert_eq!(page.rows.len(), ROWS);
            page
        })
    });
    g.finish();
}

criterion_group!(benches, struct_rows);
criterion_main!(benches);

//! Storage Write protobuf rows into Arrow: `RowsDecoder` on the rows `RowEncoder` writes, in
//! 500-row requests (the size bigq's writer sends), with NUMERIC as text (bigq's default) and
//! packed.
//!
//! The table is the write benchmark's scan table in shape (20 columns: INT64, FLOAT64,
//! STRING, BOOL, NUMERIC, DATE, TIMESTAMP, a RECORD and a REPEATED INT64), on generated rows
//! with fixed NULL rates, so the run needs no files and no network.
//!
//! `cargo bench -p bigq-codec --bench proto_decode -- --warm-up-time 2 --measurement-time 10`

use std::hint::black_box;

use bigq_codec::proto::{NumericEncoding, ProtoOptions, RowEncoder, RowsDecoder, WriteSchema};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const ROWS: usize = 100_000;
const PER_REQUEST: usize = 500;

fn schema() -> TableSchema {
    let col = TableFieldSchema::new;
    let mut cols: Vec<TableFieldSchema> = [
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
    ]
    .into_iter()
    .map(|(n, t)| col(n, t))
    .collect();
    cols[0] = cols[0].clone().with_mode(FieldMode::Required);
    cols.push(TableFieldSchema::record(
        "info",
        vec![
            col("a", FieldType::Int64),
            col("b", FieldType::String),
            col("c", FieldType::Float64),
        ],
    ));
    cols.push(col("tags", FieldType::Int64).with_mode(FieldMode::Repeated));
    TableSchema::new(cols)
}

/// splitmix64, for the same rows every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `v`, or NULL `pct` times in a hundred.
fn opt(pct: u64, v: Value, r: &mut Rng) -> Value {
    if r.below(100) < pct { Value::Null } else { v }
}

fn rows(n: usize) -> Vec<Value> {
    const CITIES: &[&str] = &["Stockholm", "Göteborg", "Malmö", "Uppsala", "Örebro"];
    const WORDS: &[&str] = &["lorem", "ipsum", "dolor", "sit", "amet", "elit"];
    let mut r = Rng(42);
    (0..n)
        .map(|i| {
            let r = &mut r;
            let city = CITIES[r.below(CITIES.len() as u64) as usize];
            let words = (0..3 + r.below(6))
                .map(|_| WORDS[r.below(WORDS.len() as u64) as usize])
                .collect::<Vec<_>>()
                .join(" ");
            json!({
                "id": i,
                "user_id": opt(10, json!(r.below(50_000_000)), r),
                "score": r.unit() * 100.0,
                "ratio": opt(20, json!(r.unit() * 1000.0), r),
                "name": format!("user_{i:07}"),
                "city": opt(5, json!(city), r),
                "active": r.below(2) == 0,
                "verified": opt(30, json!(r.below(2) == 0), r),
                "amount": format!("{}.{:02}", r.below(1_000_000), r.below(100)),
                "discount": opt(60, json!(format!("0.{:02}", r.below(100))), r),
                "created": format!("20{:02}-{:02}-{:02}", r.below(25), 1 + r.below(12), 1 + r.below(28)),
                "birthday": opt(25, json!(format!("19{:02}-{:02}-{:02}", 50 + r.below(50), 1 + r.below(12), 1 + r.below(28))), r),
                "created_at": format!("2024-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", 1 + r.below(12), 1 + r.below(28), r.below(24), r.below(60), r.below(60), r.below(1_000_000)),
                "updated_at": opt(40, json!(format!("2024-06-01T00:00:{:02}Z", r.below(60))), r),
                "quantity": r.below(1000),
                "weight": opt(15, json!(r.unit() * 1000.0), r),
                "comment": opt(30, json!(words), r),
                "rank": opt(50, json!(r.below(1_000_000)), r),
                "info": {
                    "a": opt(5, json!(r.below(1000)), r),
                    "b": opt(10, json!(format!("b{}", r.below(100))), r),
                    "c": opt(10, json!(r.unit()), r),
                },
                "tags": (0..r.below(4)).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let table = schema();
    let arrow = table.to_arrow().unwrap();
    let rows = rows(ROWS);
    let mut g = c.benchmark_group("proto_rows_to_arrow_100k");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(20);
    for (name, numeric) in [
        ("numeric_text", NumericEncoding::Text),
        ("numeric_packed", NumericEncoding::Packed),
    ] {
        let write =
            WriteSchema::with_options(&table, ProtoOptions::default().with_numeric(numeric))
                .unwrap();
        let bytes = RowEncoder::new(write.clone()).encode_rows(&rows).unwrap();
        let mut decoder =
            RowsDecoder::new(write.descriptor(), &table.fields, arrow.clone()).unwrap();
        g.bench_function(name, |b| {
            b.iter(|| {
                let n: usize = bytes
                    .chunks(PER_REQUEST)
                    .map(|request| decoder.decode(request, &[]).unwrap().num_rows())
                    .sum();
                assert_eq!(n, ROWS);
                black_box(n)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

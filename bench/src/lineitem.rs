//! The `json_rows` workload: a `tabledata.list` page of TPC-H `lineitem`-like rows, and the
//! two ways of turning it into Arrow that the benchmark compares.
//!
//! - [`decode_bigq`]: bigq's streaming [`ResponseDecoder`], fed the body in chunks.
//! - [`decode_serde_value`]: what most Rust BigQuery clients do: parse the whole body into a
//!   `serde_json::Value`, then walk `rows[].f[].v` and append each cell to Arrow builders.
//!   Both use the same cell parsers (bigq's exact decimal and date parsers, std's `i64`
//!   parser), so the difference is the JSON handling.

use std::sync::Arc;

use arrow_array::builder::{Date32Builder, Decimal128Builder, Int64Builder, StringBuilder};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_data::ArrayData;
use arrow_schema::SchemaRef;
use bigq_codec::json::{DEFAULT_BATCH_SIZE, ResponseDecoder};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq_codec::value::text;
use serde_json::Value;

/// Rows in the benchmark's page (the workload of the Java client's benchmark).
pub const ROWS: usize = 300_000;
/// Columns per row.
pub const COLUMNS: usize = 16;

/// Rows to generate: [`ROWS`] when run by `cargo bench` (which passes `--bench`), a small
/// page when run as a smoke test by `cargo test --all-targets`, where a 300,000-row page
/// in a debug build would take minutes and gigabytes.
pub fn rows_for_this_run() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        ROWS
    } else {
        2_000
    }
}

/// The `lineitem` schema, as `tables.get` would return it.
pub fn schema() -> TableSchema {
    use FieldType::*;
    let cols: [(&str, FieldType); COLUMNS] = [
        ("l_orderkey", Int64),
        ("l_partkey", Int64),
        ("l_suppkey", Int64),
        ("l_linenumber", Int64),
        ("l_quantity", Numeric),
        ("l_extendedprice", Numeric),
        ("l_discount", Numeric),
        ("l_tax", Numeric),
        ("l_returnflag", String),
        ("l_linestatus", String),
        ("l_shipdate", Date),
        ("l_commitdate", Date),
        ("l_receiptdate", Date),
        ("l_shipinstruct", String),
        ("l_shipmode", String),
        ("l_comment", String),
    ];
    TableSchema::new(
        cols.into_iter()
            .map(|(n, t)| TableFieldSchema::new(n, t).with_mode(FieldMode::Required))
            .collect(),
    )
}

/// SplitMix64: deterministic, so every run benchmarks the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.next() as usize % xs.len()]
    }
}

const WORDS: &[&str] = &[
    "furiously",
    "carefully",
    "quickly",
    "slyly",
    "blithely",
    "ironic",
    "final",
    "pending",
    "regular",
    "express",
    "special",
    "bold",
    "even",
    "deposits",
    "requests",
    "packages",
    "accounts",
    "instructions",
    "theodolites",
    "foxes",
    "pinto",
    "beans",
    "asymptotes",
    "dependencies",
    "platelets",
    "sleep",
    "haggle",
    "nag",
    "wake",
    "cajole",
    "above",
    "among",
    "across",
    "the",
    "according",
    "to",
];

fn date(days: i64) -> String {
    let (y, m, d) = text::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Cents as BigQuery's NUMERIC text: minimal, no trailing zeros (`21168.23`, `0.1`, `0`).
fn numeric(cents: u64) -> String {
    let (int, frac) = (cents / 100, cents % 100);
    match frac {
        0 => int.to_string(),
        f if f % 10 == 0 => format!("{int}.{}", f / 10),
        f => format!("{int}.{f:02}"),
    }
}

/// A `tabledata.list` body of `rows` lineitem rows, exactly as BigQuery's REST API writes
/// it (every value a string, no whitespace), generated deterministically.
pub fn body(rows: usize) -> Vec<u8> {
    let mut rng = Rng(0x11AE_17E4);
    let mut out = Vec::with_capacity(rows * 270 + 256);
    out.extend_from_slice(
        format!(
            r#"{{"kind":"bigquery#tableDataList","etag":"KmAZ9bnEpjhg3ZEGFQj9dQ==","totalRows":"{}","pageToken":"BFAKTDDZMQAQAAASAUIIBAEAAUNAICAKCAFCBMFOCU======","rows":["#,
            rows * 20
        )
        .as_bytes(),
    );
    let (mut order, mut line, mut lines) = (1u64, 0u64, 0u64);
    let (start, end) = (
        text::days_from_civil(1992, 1, 1),
        text::days_from_civil(1998, 8, 2),
    );
    let mut order_date = start;
    for r in 0..rows {
        if line == lines {
            order += 1 + rng.range(0, 3) * 8;
            line = 0;
            lines = rng.range(1, 7);
            order_date = start + rng.range(0, (end - start - 151) as u64) as i64;
        }
        line += 1;
        let part = rng.range(1, 200_000);
        let qty = rng.range(1, 50);
        let price_cents = (90_000 + (part / 10) % 20_001 + 100 * (part % 1000)) * qty;
        let ship = order_date + rng.range(1, 121) as i64;
        let commit = order_date + rng.range(30, 90) as i64;
        let receipt = ship + rng.range(1, 30) as i64;
        let comment_len = rng.range(10, 43) as usize;
        let mut comment = String::new();
        while comment.len() < comment_len {
            if !comment.is_empty() {
                comment.push(' ');
            }
            comment.push_str(rng.pick(WORDS));
        }
        comment.truncate(comment_len);
        let cells = [
            order.to_string(),
            part.to_string(),
            rng.range(1, 10_000).to_string(),
            line.to_string(),
            qty.to_string(),
            numeric(price_cents),
            numeric(rng.range(0, 10)),
            numeric(rng.range(0, 8)),
            rng.pick(&["R", "A", "N"]).to_string(),
            rng.pick(&["O", "F"]).to_string(),
            date(ship),
            date(commit),
            date(receipt),
            rng.pick(&[
                "DELIVER IN PERSON",
                "COLLECT COD",
                "NONE",
                "TAKE BACK RETURN",
            ])
            .to_string(),
            rng.pick(&["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"])
                .to_string(),
            comment,
        ];
        if r > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"f":["#);
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"v":""#);
            out.extend_from_slice(c.as_bytes());
            out.extend_from_slice(br#""}"#);
        }
        out.extend_from_slice(b"]}");
    }
    out.extend_from_slice(b"]}");
    out
}

/// bigq: the streaming decoder, fed `chunk` bytes at a time as they would arrive.
pub fn decode_bigq(body: &[u8], schema: &TableSchema, chunk: usize) -> Vec<RecordBatch> {
    let mut d = ResponseDecoder::new()
        .with_schema(schema.clone())
        .expect("valid schema");
    let mut out = Vec::new();
    for c in body.chunks(chunk) {
        d.decode(c).expect("valid body");
        out.extend(std::iter::from_fn(|| d.next_batch()));
    }
    d.finish().expect("complete body");
    out.extend(std::iter::from_fn(|| d.next_batch()));
    out
}

/// One Arrow builder per column, for the baseline.
enum Builder {
    Int(Int64Builder),
    Numeric(Decimal128Builder),
    Date(Date32Builder),
    Text(StringBuilder),
}

impl Builder {
    fn new(t: &FieldType, cap: usize) -> Builder {
        match t {
            FieldType::Int64 => Builder::Int(Int64Builder::with_capacity(cap)),
            FieldType::Numeric => Builder::Numeric(
                Decimal128Builder::with_capacity(cap)
                    .with_precision_and_scale(38, 9)
                    .expect("valid decimal type"),
            ),
            FieldType::Date => Builder::Date(Date32Builder::with_capacity(cap)),
            FieldType::String => Builder::Text(StringBuilder::with_capacity(cap, cap * 16)),
            other => unimplemented!("the lineitem workload has no {other} column"),
        }
    }

    fn append(&mut self, v: &Value) {
        let Some(s) = v.as_str() else {
            assert!(v.is_null(), "cells are strings or null");
            match self {
                Builder::Int(b) => b.append_null(),
                Builder::Numeric(b) => b.append_null(),
                Builder::Date(b) => b.append_null(),
                Builder::Text(b) => b.append_null(),
            }
            return;
        };
        match self {
            Builder::Int(b) => b.append_value(s.parse().expect("INT64")),
            Builder::Numeric(b) => {
                b.append_value(text::parse_decimal_i128(s.as_bytes(), 9).expect("NUMERIC"))
            }
            Builder::Date(b) => b.append_value(text::parse_date(s.as_bytes()).expect("DATE")),
            Builder::Text(b) => b.append_value(s),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Numeric(b) => Arc::new(b.finish()),
            Builder::Date(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// The usual way: `serde_json::from_slice::<Value>` of the whole body, then each cell into
/// an Arrow builder, in batches of the same size as bigq's.
pub fn decode_serde_value(body: &[u8], schema: &TableSchema) -> Vec<RecordBatch> {
    let arrow: SchemaRef = schema.to_arrow().expect("valid schema");
    let parsed: Value = serde_json::from_slice(body).expect("valid JSON");
    let rows = parsed["rows"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let mut builders: Vec<Builder> = schema
        .fields
        .iter()
        .map(|f| Builder::new(&f.field_type, DEFAULT_BATCH_SIZE))
        .collect();
    let mut out = Vec::new();
    for chunk in rows.chunks(DEFAULT_BATCH_SIZE) {
        for row in chunk {
            let cells = row["f"].as_array().expect("row has cells");
            assert_eq!(cells.len(), builders.len(), "row width");
            for (b, cell) in builders.iter_mut().zip(cells) {
                b.append(&cell["v"]);
            }
        }
        let columns = builders.iter_mut().map(Builder::finish).collect();
        out.push(RecordBatch::try_new(arrow.clone(), columns).expect("consistent batch"));
    }
    out
}

/// Bytes of Arrow data in the batches: every buffer's length (values, offsets, string
/// bytes, validity), not counting spare capacity.
pub fn arrow_bytes(batches: &[RecordBatch]) -> usize {
    fn walk(d: &ArrayData) -> usize {
        d.buffers().iter().map(|b| b.len()).sum::<usize>()
            + d.nulls().map_or(0, |n| n.buffer().len())
            + d.child_data().iter().map(walk).sum::<usize>()
    }
    batches
        .iter()
        .flat_map(|b| b.columns())
        .map(|c| walk(&c.to_data()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_decoders_give_the_same_batches() {
        let body = body(20_000);
        let schema = schema();
        let a = decode_bigq(&body, &schema, 64 * 1024);
        let b = decode_serde_value(&body, &schema);
        assert_eq!(a.iter().map(|b| b.num_rows()).sum::<usize>(), 20_000);
        assert_eq!(a, b);
        assert!(arrow_bytes(&a) > 20_000 * COLUMNS * 4);
    }

    #[test]
    fn body_looks_like_lineitem() {
        let b = body(3);
        let v: Value = serde_json::from_slice(&b).unwrap();
        let row = &v["rows"][0]["f"];
        assert_eq!(row.as_array().unwrap().len(), COLUMNS);
        assert!(row[10]["v"].as_str().unwrap().starts_with("199"));
    }
}

//! The fault suite: bigq's client through connections cut at random byte counts, lossy and
//! slow links, error storms, a credential that expires mid-read, and blackholed or half-open
//! connections. Tests on loopback (the cutting proxy, the storm server) run everywhere; the
//! ones on shaped links need the network test bed ([`crate::netbed`]) and skip, saying
//! why, where it cannot be had. Seeds are printed so that a failure can be replayed with
//! `BIGQ_FAULT_SEED`; `BIGQ_FAULT_ROWS` scales the large read (200k rows by default, 1M in
//! a release run).

mod auth;
mod cdc;
mod deadlines;
mod links;
mod read;
mod storms;
mod write;

use std::sync::Arc;
use std::time::Duration;

use bigq::RetryPolicy;
use bigq::arrow::RecordBatch;
use bigq::arrow::array::{
    Array, BooleanArray, Date32Array, Float64Array, Int64Array, StringArray,
    TimestampMicrosecondArray,
};
use bigq::arrow::schema::{DataType, Field, Schema, TimeUnit};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema};
use rand::{Rng, SeedableRng};

/// A retry policy with short waits, so that tests with many cuts stay quick; the total
/// budget is long enough never to be the reason a healthy test fails.
pub fn quick_policy() -> RetryPolicy {
    RetryPolicy::default()
        .with_initial_backoff(Duration::from_millis(10))
        .with_max_backoff(Duration::from_millis(100))
        .with_attempt_timeout(Duration::from_secs(20))
        .with_idle_timeout(Duration::from_secs(20))
        .with_total_timeout(Duration::from_secs(90))
}

/// The seed of this run: `BIGQ_FAULT_SEED`, or a fresh one, printed.
pub fn rng(test: &str) -> rand::rngs::StdRng {
    let seed = std::env::var("BIGQ_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random::<u64>());
    eprintln!("{test}: BIGQ_FAULT_SEED={seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// Rows of the large read: `BIGQ_FAULT_ROWS`, else 200k.
pub fn read_rows() -> usize {
    std::env::var("BIGQ_FAULT_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000)
}

/// The scan table: a column of each common type, with NULLs.
pub fn scan_schema() -> Vec<TableFieldSchema> {
    vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("name", FieldType::String),
        TableFieldSchema::new("score", FieldType::Float64),
        TableFieldSchema::new("flag", FieldType::Bool),
        TableFieldSchema::new("day", FieldType::Date),
        TableFieldSchema::new("ts", FieldType::Timestamp),
    ]
}

/// `rows` rows of the scan table in batches of `batch` rows, as bigq-emulator keeps them.
pub fn scan_batches(rows: usize, batch: usize) -> Vec<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("day", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ]));
    (0..rows)
        .step_by(batch)
        .map(|start| {
            let ids: Vec<i64> = (start..(start + batch).min(rows))
                .map(|i| i as i64)
                .collect();
            let name: StringArray = ids
                .iter()
                .map(|i| (i % 7 != 0).then(|| format!("row-{i}-{}", "x".repeat((i % 13) as usize))))
                .collect();
            let score: Float64Array = ids
                .iter()
                .map(|i| (i % 5 != 0).then_some(*i as f64 * 0.25 - 1000.0))
                .collect();
            let flag: BooleanArray = ids
                .iter()
                .map(|i| (i % 3 != 0).then_some(i % 2 == 0))
                .collect();
            let day: Date32Array = ids
                .iter()
                .map(|i| (i % 11 != 0).then_some(18_000 + (i % 4000) as i32))
                .collect();
            let ts = TimestampMicrosecondArray::from(
                ids.iter()
                    .map(|i| (i % 17 != 0).then_some(1_600_000_000_000_000 + i * 1_000_003))
                    .collect::<Vec<_>>(),
            )
            .with_timezone("UTC");
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(ids)),
                    Arc::new(name),
                    Arc::new(score),
                    Arc::new(flag),
                    Arc::new(day),
                    Arc::new(ts),
                ],
            )
            .unwrap()
        })
        .collect()
}

/// An order-independent checksum of rows: how many, and two sums of a 64-bit hash of every
/// column of each row (a row read twice, or one missing, changes all three; a row altered
/// changes the sums).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Checksum {
    pub rows: u64,
    pub sum: u64,
    pub sum_sq: u64,
}

/// splitmix64's finaliser: a cheap hash with good mixing.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Checksum {
    /// The checksum of the scan table's columns in `batches` (by name, so any column order).
    pub fn of(batches: &[RecordBatch]) -> Checksum {
        let mut c = Checksum::default();
        for b in batches {
            let col = |name: &str| {
                b.column_by_name(name)
                    .unwrap_or_else(|| panic!("no column {name}"))
                    .clone()
            };
            let (id, name, score, flag, day, ts) = (
                col("id"),
                col("name"),
                col("score"),
                col("flag"),
                col("day"),
                col("ts"),
            );
            let id = id.as_any().downcast_ref::<Int64Array>().expect("id");
            let name = name.as_any().downcast_ref::<StringArray>().expect("name");
            let score = score
                .as_any()
                .downcast_ref::<Float64Array>()
                .expect("score");
            let flag = flag.as_any().downcast_ref::<BooleanArray>().expect("flag");
            let day = day.as_any().downcast_ref::<Date32Array>().expect("day");
            let ts = ts
                .as_any()
                .downcast_ref::<TimestampMicrosecondArray>()
                .expect("ts");
            for r in 0..b.num_rows() {
                let mut h = mix(id.value(r) as u64);
                let mut add = |v: Option<u64>| {
                    h = mix(h ^ v.map_or(0x9e37_79b9_7f4a_7c15, mix));
                };
                add(name.is_valid(r).then(|| {
                    name.value(r)
                        .bytes()
                        .fold(0xcbf2_9ce4_8422_2325u64, |a, b| {
                            (a ^ b as u64).wrapping_mul(0x100_0000_01b3)
                        })
                }));
                add(score.is_valid(r).then(|| score.value(r).to_bits()));
                add(flag.is_valid(r).then(|| flag.value(r) as u64));
                add(day.is_valid(r).then(|| day.value(r) as u64));
                add(ts.is_valid(r).then(|| ts.value(r) as u64));
                c.rows += 1;
                c.sum = c.sum.wrapping_add(h);
                c.sum_sq = c.sum_sq.wrapping_add(h.wrapping_mul(h));
            }
        }
        c
    }
}

/// Random cut points: `n` distinct offsets in `0..total`, ascending.
pub fn cut_points(rng: &mut impl Rng, n: usize, total: u64) -> Vec<u64> {
    let mut points: Vec<u64> = (0..n).map(|_| rng.random_range(1..total)).collect();
    points.sort_unstable();
    points.dedup();
    points
}

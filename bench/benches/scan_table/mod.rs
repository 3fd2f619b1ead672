//! The scan table of the comparison write-up, generated in memory, and the rows it is
//! decoded into. Shared by the `arrow_serde` bench and the `profile_arrow_serde` example.

use std::hint::black_box;
use std::sync::Arc;

use arrow_array::types::Int64Type;
use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array, ListArray,
    RecordBatch, StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use bigq_codec::de::RowDecoder;
use bigq_codec::value::{Date, Numeric, Timestamp};
use serde::{Deserialize, Serialize};

/// Rows in the scan table: 1M in optimised builds (`cargo bench`, the release profile
/// example); a few batches when `cargo test` runs the bench once in debug to keep it alive.
pub static ROWS: std::sync::LazyLock<usize> = std::sync::LazyLock::new(|| {
    if cfg!(debug_assertions) && !std::env::args().any(|a| a == "--bench") {
        3 * BATCH
    } else {
        1_000_000
    }
});
pub const BATCH: usize = 8192;

/// splitmix64: a small deterministic generator.
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
    /// True with probability `pct`%.
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const CITIES: &[&str] = &[
    "Stockholm",
    "Göteborg",
    "Malmö",
    "Uppsala",
    "Västerås",
    "Örebro",
    "Linköping",
    "Helsingborg",
    "Jönköping",
    "Norrköping",
    "Lund",
    "Umeå",
];
const WORDS: &[&str] = &[
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
];

/// The table's Arrow schema; `write_table` derives the Storage Write schemas from it.
pub fn schema() -> Arc<Schema> {
    let info = Fields::from(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Utf8, true),
        Field::new("c", DataType::Float64, true),
    ]);
    let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("user_id", DataType::Int64, true),
        Field::new("score", DataType::Float64, true),
        Field::new("ratio", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("city", DataType::Utf8, true),
        Field::new("active", DataType::Boolean, true),
        Field::new("verified", DataType::Boolean, true),
        Field::new("amount", DataType::Decimal128(38, 9), true),
        Field::new("discount", DataType::Decimal128(38, 9), true),
        Field::new("created", DataType::Date32, true),
        Field::new("birthday", DataType::Date32, true),
        Field::new("created_at", ts.clone(), true),
        Field::new("updated_at", ts, true),
        Field::new("quantity", DataType::Int64, true),
        Field::new("weight", DataType::Float64, true),
        Field::new("comment", DataType::Utf8, true),
        Field::new("rank", DataType::Int64, true),
        Field::new("info", DataType::Struct(info), true),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
            false,
        ),
    ]))
}

fn make_batch(rng: &mut Rng, first: usize, n: usize) -> RecordBatch {
    let ids: Vec<i64> = (first..first + n).map(|i| i as i64).collect();
    let opt_i64 = |rng: &mut Rng, pct: u64, m: u64| -> Int64Array {
        (0..n)
            .map(|_| (!rng.chance(pct)).then(|| rng.below(m) as i64))
            .collect()
    };
    let opt_f64 = |rng: &mut Rng, pct: u64| -> Float64Array {
        (0..n)
            .map(|_| (!rng.chance(pct)).then(|| rng.f64() * 1000.0))
            .collect()
    };
    let user_id = opt_i64(rng, 10, 50_000_000);
    let score: Float64Array = (0..n).map(|_| Some(rng.f64() * 100.0)).collect();
    let ratio = opt_f64(rng, 20);
    let name: StringArray = ids.iter().map(|i| Some(format!("user_{i:07}"))).collect();
    let city: StringArray = (0..n)
        .map(|_| (!rng.chance(5)).then(|| CITIES[rng.below(CITIES.len() as u64) as usize]))
        .collect();
    let active: BooleanArray = (0..n).map(|_| Some(rng.chance(50))).collect();
    let verified: BooleanArray = (0..n)
        .map(|_| (!rng.chance(30)).then(|| rng.chance(50)))
        .collect();
    // Money: two decimal places, in units of 1e-9.
    let amount = Decimal128Array::from_iter(
        (0..n).map(|_| Some(rng.below(100_000_000) as i128 * 10_000_000)),
    )
    .with_precision_and_scale(38, 9)
    .unwrap();
    let discount = Decimal128Array::from_iter(
        (0..n).map(|_| (!rng.chance(60)).then(|| rng.below(10_000) as i128 * 10_000_000)),
    )
    .with_precision_and_scale(38, 9)
    .unwrap();
    let created: Date32Array = (0..n)
        .map(|_| Some(10_957 + rng.below(9_000) as i32))
        .collect();
    let birthday: Date32Array = (0..n)
        .map(|_| (!rng.chance(25)).then(|| -5_000 + rng.below(15_000) as i32))
        .collect();
    let base = 1_704_067_200_000_000i64;
    let created_at = TimestampMicrosecondArray::from_iter(
        (0..n).map(|_| Some(base + rng.below(31_536_000_000_000) as i64)),
    )
    .with_timezone("UTC");
    let updated_at = TimestampMicrosecondArray::from_iter(
        (0..n).map(|_| (!rng.chance(40)).then(|| base + rng.below(31_536_000_000_000) as i64)),
    )
    .with_timezone("UTC");
    let quantity: Int64Array = (0..n).map(|_| Some(rng.below(1000) as i64)).collect();
    let weight = opt_f64(rng, 15);
    let comment: StringArray = (0..n)
        .map(|_| {
            (!rng.chance(30)).then(|| {
                let words = 3 + rng.below(6) as usize;
                (0..words)
                    .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        })
        .collect();
    let rank = opt_i64(rng, 50, 1_000_000);
    let info_a = opt_i64(rng, 5, 1_000);
    let info_b: StringArray = (0..n)
        .map(|_| (!rng.chance(10)).then(|| format!("b{}", rng.below(100))))
        .collect();
    let info_c = opt_f64(rng, 10);
    let Some(DataType::Struct(info_fields)) = schema()
        .field_with_name("info")
        .ok()
        .map(|f| f.data_type().clone())
    else {
        unreachable!()
    };
    let info = StructArray::new(
        info_fields,
        vec![Arc::new(info_a), Arc::new(info_b), Arc::new(info_c)],
        None,
    );
    let tags = ListArray::from_iter_primitive::<Int64Type, _, _>((0..n).map(|_| {
        let k = rng.below(5);
        Some(
            (0..k)
                .map(|_| Some(rng.below(10_000) as i64))
                .collect::<Vec<_>>(),
        )
    }));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(user_id),
        Arc::new(score),
        Arc::new(ratio),
        Arc::new(name),
        Arc::new(city),
        Arc::new(active),
        Arc::new(verified),
        Arc::new(amount),
        Arc::new(discount),
        Arc::new(created),
        Arc::new(birthday),
        Arc::new(created_at),
        Arc::new(updated_at),
        Arc::new(quantity),
        Arc::new(weight),
        Arc::new(comment),
        Arc::new(rank),
        Arc::new(info),
        Arc::new(tags),
    ];
    RecordBatch::try_new(schema(), columns).unwrap()
}

/// The scan table's batches, in bigq's Arrow (DataFusion's major) and, with the same
/// values, in the `bigquery` crate's (arrow 60), converted through Arrow IPC before anything
/// is measured. Derefs to bigq's.
pub struct ScanBatches {
    bigq: Vec<RecordBatch>,
    theirs: Vec<arrow60_array::RecordBatch>,
}

impl std::ops::Deref for ScanBatches {
    type Target = [RecordBatch];
    fn deref(&self) -> &[RecordBatch] {
        &self.bigq
    }
}

pub fn batches() -> ScanBatches {
    let mut rng = Rng(3);
    let bigq: Vec<RecordBatch> = (0..*ROWS)
        .step_by(BATCH)
        .map(|first| make_batch(&mut rng, first, BATCH.min(*ROWS - first)))
        .collect();
    let mut ipc = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &schema()).unwrap();
    for b in &bigq {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    let theirs = arrow60_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc), None)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    ScanBatches { bigq, theirs }
}

#[derive(Deserialize, Serialize)]
#[allow(dead_code)]
pub struct Info {
    a: Option<i64>,
    b: Option<String>,
    c: Option<f64>,
}

/// The row with each crate's own types; `$numeric`, `$date`, `$ts` fill them in.
macro_rules! row_struct {
    ($name:ident, $numeric:ty, $date:ty, $ts:ty) => {
        #[derive(Deserialize, Serialize)]
        #[allow(dead_code)]
        pub struct $name {
            pub id: i64,
            user_id: Option<i64>,
            score: f64,
            ratio: Option<f64>,
            name: String,
            city: Option<String>,
            active: bool,
            verified: Option<bool>,
            amount: $numeric,
            discount: Option<$numeric>,
            created: $date,
            birthday: Option<$date>,
            created_at: $ts,
            updated_at: Option<$ts>,
            quantity: i64,
            weight: Option<f64>,
            comment: Option<String>,
            rank: Option<i64>,
            info: Info,
            tags: Vec<i64>,
        }
    };
}

row_struct!(BigqRow, Numeric, Date, Timestamp);
row_struct!(
    BigqueryRow,
    String,
    bigquery::BigQueryDate,
    bigquery::BigQueryTimestamp
);
row_struct!(StdRow, String, i32, i64);

/// [`BigqRow`] with every string borrowed from the batch: the rows' own allocations are gone
/// but for `tags`, which is what decoding costs without them (the comparison with the
/// `bigquery` crate uses owned rows).
#[derive(Deserialize)]
#[allow(dead_code)]
pub struct BigqRowRef<'a> {
    pub id: i64,
    user_id: Option<i64>,
    score: f64,
    ratio: Option<f64>,
    name: &'a str,
    city: Option<&'a str>,
    active: bool,
    verified: Option<bool>,
    amount: Numeric,
    discount: Option<Numeric>,
    created: Date,
    birthday: Option<Date>,
    created_at: Timestamp,
    updated_at: Option<Timestamp>,
    quantity: i64,
    weight: Option<f64>,
    comment: Option<&'a str>,
    rank: Option<i64>,
    #[serde(borrow)]
    info: InfoRef<'a>,
    tags: Vec<i64>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
pub struct InfoRef<'a> {
    a: Option<i64>,
    b: Option<&'a str>,
    c: Option<f64>,
}

pub fn decode_bigq<T: serde::de::DeserializeOwned>(batches: &[RecordBatch]) -> Vec<T> {
    let mut out = Vec::with_capacity(*ROWS);
    let mut decoder = RowDecoder::<T>::new();
    for b in batches {
        decoder.decode_into(b, &mut out).unwrap();
    }
    out
}

pub fn decode_bigquery<T: serde::de::DeserializeOwned>(batches: &ScanBatches) -> Vec<T> {
    let mut out = Vec::with_capacity(*ROWS);
    for b in &batches.theirs {
        for row in bigquery::BigQueryBatchRows::<T>::new(b) {
            out.push(row.unwrap());
        }
    }
    out
}

/// Both decoders read the same values, so neither is measured skipping work.
pub fn check(batches: &ScanBatches) {
    let a: Vec<StdRow> = decode_bigq(batches);
    let b: Vec<StdRow> = decode_bigquery(batches);
    assert_eq!(a.len(), *ROWS);
    assert_eq!(b.len(), *ROWS);
    for (x, y) in a.iter().zip(&b).step_by(997) {
        assert_eq!(x.id, y.id);
        assert_eq!(x.amount, y.amount);
        assert_eq!(x.discount, y.discount);
        assert_eq!(x.created_at, y.created_at);
        assert_eq!(x.birthday, y.birthday);
        assert_eq!(x.comment, y.comment);
        assert_eq!(x.tags, y.tags);
        assert_eq!(x.info.b, y.info.b);
    }
    let n: Vec<BigqRow> = decode_bigq(batches);
    assert_eq!(n[1].amount.to_string(), a[1].amount);
    assert_eq!(n[1].created_at.get(), a[1].created_at);
}

/// Decodes every batch into `out`, emptied before each batch: a consumer that handles a
/// stream batch by batch, so that the time is the decoder's (and the rows' own
/// allocations), not the page faults of a 300 MB vector. `T` may borrow from the batches
/// ([`BigqRowRef`]).
#[inline(never)]
pub fn stream_bigq<'a, T: Deserialize<'a>>(batches: &'a [RecordBatch], out: &mut Vec<T>) -> usize {
    let mut decoder = RowDecoder::<T>::new();
    let mut n = 0;
    for b in batches {
        out.clear();
        decoder.decode_into(b, out).unwrap();
        n += black_box(&out).len();
    }
    n
}

/// As [`stream_bigq`], each batch decoded into the previous batch's rows in place
/// (`RowDecoder::decode_in_place`: their strings and vectors keep their buffers).
#[inline(never)]
pub fn stream_bigq_in_place<T: serde::de::DeserializeOwned>(
    batches: &[RecordBatch],
    out: &mut Vec<T>,
) -> usize {
    let mut decoder = RowDecoder::<T>::new();
    let mut n = 0;
    for b in batches {
        decoder.decode_in_place(b, out).unwrap();
        n += black_box(&out).len();
    }
    n
}

#[inline(never)]
pub fn stream_bigquery<T: serde::de::DeserializeOwned>(
    batches: &ScanBatches,
    out: &mut Vec<T>,
) -> usize {
    let mut n = 0;
    for b in &batches.theirs {
        out.clear();
        for row in bigquery::BigQueryBatchRows::<T>::new(b) {
            out.push(row.unwrap());
        }
        n += black_box(&out).len();
    }
    n
}

/// As [`stream_bigq`], each batch decoded by `extend_from_record_batch`, which prepares the
/// batch's vectors anew each time instead of keeping them in a `RowDecoder`.
#[inline(never)]
#[allow(dead_code)]
pub fn stream_bigq_fresh<T: serde::de::DeserializeOwned>(
    batches: &[RecordBatch],
    out: &mut Vec<T>,
) -> usize {
    let mut n = 0;
    for (i, b) in batches.iter().enumerate() {
        out.clear();
        bigq_codec::de::extend_from_record_batch(b, out, (i * BATCH) as u64).unwrap();
        n += black_box(&out).len();
    }
    n
}

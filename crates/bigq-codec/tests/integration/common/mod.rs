//! Helpers shared by the integration tests: decoding a body in chunks, and rendering Arrow
//! cells back to BigQuery's REST text form, independently of the decoder's own parsers
//! (dates and times go through chrono).
#![allow(dead_code)] // each test file uses a different part of this module

use std::io::Write;
use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use base64::Engine;
use bigq_codec::CodecError;
use bigq_codec::json::ResponseDecoder;
use bigq_codec::schema::{FieldType, TableFieldSchema, TableSchema};
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Map, Value, json};

/// Prints a line to the real stderr, past the test harness's output capture, so that a
/// skipped check is visible in a plain `cargo test` run.
pub fn announce(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// Where the recordings are: `$BIGQ_RECORDINGS`, else `<repo root>/../shared/bigquery-recordings`.
pub fn recordings_dir() -> Result<PathBuf, String> {
    let dir = match std::env::var_os("BIGQ_RECORDINGS") {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bigquery-recordings")
        }
    };
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "no BigQuery recordings at {} (set BIGQ_RECORDINGS to their folder)",
            dir.display()
        ))
    }
}

/// What one decode produced.
pub struct Decoded {
    pub batches: Vec<RecordBatch>,
    pub metadata: Map<String, Value>,
    pub schema: Option<TableSchema>,
}

impl Decoded {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// Every row as REST cell values (`[{"v": ..}, ..]` unwrapped to the values).
    pub fn rest_rows(&self) -> Vec<Vec<Value>> {
        let schema = self.schema.as_ref().expect("rows imply a schema");
        let mut out = Vec::new();
        for b in &self.batches {
            for r in 0..b.num_rows() {
                out.push(
                    schema
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(c, f)| rest_value(b.column(c).as_ref(), r, f))
                        .collect(),
                );
            }
        }
        out
    }
}

/// Feeds `body` to a decoder `chunk` bytes at a time.
pub fn decode(
    body: &[u8],
    chunk: usize,
    batch_size: usize,
    schema: Option<TableSchema>,
) -> Result<Decoded, CodecError> {
    let mut d = ResponseDecoder::new().with_batch_size(batch_size);
    if let Some(s) = schema {
        d = d.with_schema(s)?;
    }
    let mut batches = Vec::new();
    for c in body.chunks(chunk.max(1)) {
        d.decode(c)?;
        batches.extend(std::iter::from_fn(|| d.next_batch()));
    }
    d.finish()?;
    batches.extend(std::iter::from_fn(|| d.next_batch()));
    Ok(Decoded {
        batches,
        schema: d.schema().cloned(),
        metadata: d.take_metadata(),
    })
}

fn single(f: &TableFieldSchema) -> TableFieldSchema {
    let mut s = f.clone();
    s.mode = None;
    s
}

/// A DATE (days since the epoch) as `YYYY-MM-DD`, through chrono.
pub fn date_text(days: i32) -> String {
    let d = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let d = if days >= 0 {
        d + chrono::Days::new(days as u64)
    } else {
        d - chrono::Days::new(days.unsigned_abs() as u64)
    };
    d.format("%Y-%m-%d").to_string()
}

/// A TIME (micros since midnight) as `HH:MM:SS[.ffffff]`.
pub fn time_text(micros: i64) -> String {
    let (s, f) = (micros / 1_000_000, micros % 1_000_000);
    let mut t = format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    if f != 0 {
        t.push_str(&format!(".{f:06}"));
    }
    t
}

/// A DATETIME (micros since 1970-01-01T00:00) as `YYYY-MM-DDTHH:MM:SS[.ffffff]`.
pub fn datetime_text(micros: i64) -> String {
    let dt = DateTime::<Utc>::from_timestamp_micros(micros).expect("datetime in range");
    let mut t = dt.format("%Y-%m-%dT%H:%M:%S").to_string();
    let f = micros.rem_euclid(1_000_000);
    if f != 0 {
        t.push_str(&format!(".{f:06}"));
    }
    t
}

/// An integer scaled by `10^scale` as minimal decimal text (`1.5`, `100`, `-0.25`).
pub fn decimal_text(unscaled: &str, scale: usize) -> String {
    let (neg, digits) = match unscaled.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, unscaled),
    };
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let frac = frac.trim_end_matches('0');
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    s.push_str(int);
    if !frac.is_empty() {
        s.push('.');
        s.push_str(frac);
    }
    s
}

/// An INTERVAL as BigQuery's canonical `Y-M D H:M:S[.F]`.
pub fn interval_text(months: i32, days: i32, nanos: i64) -> String {
    let ysign = if months < 0 { "-" } else { "" };
    let m = months.unsigned_abs();
    let tsign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let secs = n / 1_000_000_000;
    let mut s = format!(
        "{ysign}{}-{} {days} {tsign}{}:{}:{}",
        m / 12,
        m % 12,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    let frac = n % 1_000_000_000;
    if frac != 0 {
        let f = format!("{frac:09}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

/// One cell of an Arrow column rendered as BigQuery's REST `v` value: canonical text for
/// scalars, `{"f": [...]}` for records, `[{"v": ..}]` for arrays. TIMESTAMP is rendered as
/// integer microseconds (the `useInt64Timestamp` form), FLOAT64 as Rust's shortest text.
pub fn rest_value(a: &dyn Array, i: usize, f: &TableFieldSchema) -> Value {
    if f.is_repeated() {
        let list = a.as_list::<i32>();
        let items = list.value(i);
        let el = single(f);
        return Value::Array(
            (0..items.len())
                .map(|j| json!({ "v": rest_value(items.as_ref(), j, &el) }))
                .collect(),
        );
    }
    if a.is_null(i) {
        return Value::Null;
    }
    let text = match &f.field_type {
        FieldType::Int64 => a.as_primitive::<Int64Type>().value(i).to_string(),
        FieldType::Float64 => {
            let v = a.as_primitive::<Float64Type>().value(i);
            if v.is_nan() {
                "NaN".into()
            } else if v.is_infinite() {
                if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
            } else {
                v.to_string()
            }
        }
        FieldType::Numeric => {
            decimal_text(&a.as_primitive::<Decimal128Type>().value(i).to_string(), 9)
        }
        FieldType::BigNumeric => {
            decimal_text(&a.as_primitive::<Decimal256Type>().value(i).to_string(), 38)
        }
        FieldType::Bool => a.as_boolean().value(i).to_string(),
        FieldType::String | FieldType::Json | FieldType::Geography => {
            a.as_string::<i32>().value(i).to_string()
        }
        FieldType::Bytes => {
            base64::engine::general_purpose::STANDARD.encode(a.as_binary::<i32>().value(i))
        }
        FieldType::Date => date_text(a.as_primitive::<Date32Type>().value(i)),
        FieldType::Time => time_text(a.as_primitive::<Time64MicrosecondType>().value(i)),
        FieldType::DateTime => datetime_text(a.as_primitive::<TimestampMicrosecondType>().value(i)),
        FieldType::Timestamp => a
            .as_primitive::<TimestampMicrosecondType>()
            .value(i)
            .to_string(),
        FieldType::Interval => {
            let v = a.as_primitive::<IntervalMonthDayNanoType>().value(i);
            interval_text(v.months, v.days, v.nanoseconds)
        }
        FieldType::Range => {
            let s = a.as_struct();
            let el = TableFieldSchema::new(
                "el",
                f.range_element_type
                    .as_ref()
                    .expect("RANGE has an element type")
                    .element_type
                    .clone(),
            );
            let side = |c: usize| match rest_value(s.column(c).as_ref(), i, &el) {
                Value::String(t) => t,
                _ => "UNBOUNDED".to_string(),
            };
            format!("[{}, {})", side(0), side(1))
        }
        FieldType::Record => {
            let s = a.as_struct();
            let cells: Vec<Value> = f
                .fields
                .iter()
                .enumerate()
                .map(|(c, sf)| json!({ "v": rest_value(s.column(c).as_ref(), i, sf) }))
                .collect();
            return json!({ "f": cells });
        }
        other => panic!("no REST rendering for {other}"),
    };
    Value::String(text)
}

/// Parses decimal text (`1.5`, `-2`, `1.7E9`) into microseconds when read as seconds,
/// exactly, for comparing TIMESTAMP forms. `None` if it has digits below a microsecond.
fn seconds_text_to_micros(s: &str) -> Option<i128> {
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(p) => (&s[..p], s[p + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    let mut v: i128 = digits.parse().ok()?;
    let mut shift = exp + 6 - frac.len() as i32;
    while shift > 0 {
        v *= 10;
        shift -= 1;
    }
    while shift < 0 {
        if v % 10 != 0 {
            return None;
        }
        v /= 10;
        shift += 1;
    }
    Some(if neg { -v } else { v })
}

fn float_of(v: &str) -> Option<f64> {
    match v {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => v.parse().ok(),
    }
}

/// Whether a recorded REST cell value equals the rendered one, for column `f`. FLOAT64
/// compares as numbers, TIMESTAMP as instants (float seconds, integer micros or text),
/// everything else as canonical text.
pub fn rest_eq(expected: &Value, got: &Value, f: &TableFieldSchema) -> bool {
    if f.is_repeated() {
        let (Some(e), Some(g)) = (expected.as_array(), got.as_array()) else {
            // An absent array is sent as NULL or [] and decoded as [].
            return expected.is_null() && got.as_array().is_some_and(|g| g.is_empty());
        };
        let el = single(f);
        return e.len() == g.len() && e.iter().zip(g).all(|(a, b)| rest_eq(&a["v"], &b["v"], &el));
    }
    match (expected, got) {
        (Value::Null, Value::Null) => true,
        (Value::Object(e), Value::Object(g)) if f.field_type == FieldType::Record => {
            let (Some(ec), Some(gc)) = (e["f"].as_array(), g["f"].as_array()) else {
                return false;
            };
            ec.len() == f.fields.len()
                && gc.len() == f.fields.len()
                && f.fields
                    .iter()
                    .enumerate()
                    .all(|(c, sf)| rest_eq(&ec[c]["v"], &gc[c]["v"], sf))
        }
        (Value::String(e), Value::String(g)) => match f.field_type {
            FieldType::Float64 => match (float_of(e), float_of(g)) {
                (Some(a), Some(b)) => a == b || (a.is_nan() && b.is_nan()),
                _ => false,
            },
            FieldType::Timestamp => {
                // Integer text is microseconds (`useInt64Timestamp`); anything with a point
                // or exponent is float seconds (the REST default, e.g. `1.7040672E9`).
                let e = if e.contains(['.', 'e', 'E']) {
                    seconds_text_to_micros(e)
                } else {
                    e.parse::<i128>().ok()
                };
                e.is_some() && e == g.parse::<i128>().ok()
            }
            _ => e == g,
        },
        _ => false,
    }
}

/// A small deterministic PRNG (SplitMix64), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

//! Arrow arrays straight into BigQuery's REST row JSON (`{"f":[{"v":..}]}`), the other
//! direction of [`ResponseDecoder`](super::ResponseDecoder), with no intermediate
//! `serde_json::Value`: what a server (bigq-emulator) writes for `jobs.query`,
//! `jobs.getQueryResults` and `tabledata.list`.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, RecordBatch, StringArray};
//! use bigq_codec::json::encode::{EncodeOptions, write_rows};
//!
//! let batch = RecordBatch::try_from_iter([
//!     ("n", Arc::new(Int64Array::from(vec![Some(1), None])) as _),
//!     ("s", Arc::new(StringArray::from(vec!["a", "b"])) as _),
//! ])
//! .unwrap();
//! let mut out = String::new();
//! let n = write_rows(&mut out, &[batch], 0, usize::MAX, usize::MAX, EncodeOptions::default());
//! assert_eq!(n, 2);
//! assert_eq!(out, r#"{"f":[{"v":"1"},{"v":"a"}]},{"f":[{"v":null},{"v":"b"}]}"#);
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, Float16Type, Float32Type, Float64Type,
    Int8Type, Int16Type, Int32Type, Int64Type, IntervalMonthDayNanoType, Time32MillisecondType,
    Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, GenericListArray, OffsetSizeTrait, RecordBatch, StructArray,
};
use arrow_schema::{DataType, Field, Fields, IntervalUnit, TimeUnit};
use base64::Engine as _;

use crate::value::text;

/// The field metadata key that marks the two fields of a RANGE's Arrow struct (`start`,
/// `end`; the value is the field's name). A RANGE has no Arrow type of its own, so a
/// producer that keeps RANGE columns as structs (bigq-emulator does) marks their bounds,
/// and the encoder writes such a struct as BigQuery's `"[start, end)"` text.
pub const RANGE_KEY: &str = "bigq-emulator:range";

/// The Arrow type of a RANGE of `element`: a struct of `start` and `end`, marked with
/// [`RANGE_KEY`].
pub fn range_type(element: DataType) -> DataType {
    let bound = |name: &str| {
        Field::new(name, element.clone(), true)
            .with_metadata(HashMap::from([(RANGE_KEY.to_string(), name.to_string())]))
    };
    DataType::Struct(Fields::from(vec![bound("start"), bound("end")]))
}

/// The element type, when `t` is a RANGE made by [`range_type`].
pub fn range_element(t: &DataType) -> Option<&DataType> {
    let DataType::Struct(fields) = t else {
        return None;
    };
    fn mark(f: &Field) -> Option<&str> {
        f.metadata().get(RANGE_KEY).map(String::as_str)
    }
    match fields.as_ref() {
        [s, e]
            if mark(s) == Some("start")
                && mark(e) == Some("end")
                && s.data_type() == e.data_type() =>
        {
            Some(s.data_type())
        }
        _ => None,
    }
}

/// How cells are rendered.
#[derive(Clone, Copy, Debug, Default)]
pub struct EncodeOptions {
    /// `formatOptions.useInt64Timestamp`: TIMESTAMP as int64 microseconds.
    pub int64_timestamp: bool,
}

/// Writes an f64 as BigQuery (Java's `Double.toString`) renders it: `1.5`, `1.0E10`,
/// `NaN`, `Infinity`.
pub fn write_f64(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let start = out.len();
        let _ = write!(out, "{v}");
        if !out[start..].contains('.') {
            out.push_str(".0");
        }
    } else {
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        out.push_str(m);
        if !m.contains('.') {
            out.push_str(".0");
        }
        out.push('E');
        out.push_str(e);
    }
}

/// Writes a JSON string literal.
pub fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

fn write_decimal(out: &mut String, digits: String, scale: i8) {
    let (neg, digits) = match digits.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, digits.as_str()),
    };
    if scale < 0 {
        if neg {
            out.push('-');
        }
        out.push_str(digits);
        for _ in 0..(-scale) {
            out.push('0');
        }
        return;
    }
    let _ = text::format_decimal(digits, neg, scale as usize, out);
}

fn micros_of(unit: &TimeUnit, v: i64) -> i64 {
    match unit {
        TimeUnit::Second => v.saturating_mul(1_000_000),
        TimeUnit::Millisecond => v.saturating_mul(1_000),
        TimeUnit::Microsecond => v,
        TimeUnit::Nanosecond => v.div_euclid(1_000),
    }
}

fn timestamp_micros(a: &dyn Array, unit: &TimeUnit, i: usize) -> i64 {
    let v = match unit {
        TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(i),
        TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().value(i),
        TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
        TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(i),
    };
    micros_of(unit, v)
}

/// Writes the JSON value of cell `i` (without the `{"v":..}` wrapper).
fn write_value(out: &mut String, a: &dyn Array, i: usize, opts: EncodeOptions) {
    if a.is_null(i) || a.data_type() == &DataType::Null {
        // BigQuery never sends NULL for a REPEATED field: an absent array is empty.
        let list = matches!(a.data_type(), DataType::List(_) | DataType::LargeList(_));
        out.push_str(if list { "[]" } else { "null" });
        return;
    }
    macro_rules! int {
        ($t:ty) => {{
            out.push('"');
            let _ = write!(out, "{}", a.as_primitive::<$t>().value(i));
            out.push('"');
        }};
    }
    match a.data_type() {
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => int!(UInt64Type),
        DataType::Float16 => {
            out.push('"');
            write_f64(out, a.as_primitive::<Float16Type>().value(i).to_f64());
            out.push('"');
        }
        DataType::Float32 => {
            out.push('"');
            write_f64(out, a.as_primitive::<Float32Type>().value(i) as f64);
            out.push('"');
        }
        DataType::Float64 => {
            out.push('"');
            write_f64(out, a.as_primitive::<Float64Type>().value(i));
            out.push('"');
        }
        DataType::Boolean => {
            let b = a
                .as_any()
                .downcast_ref::<BooleanArray>()
                .is_some_and(|b| b.value(i));
            out.push_str(if b { "\"true\"" } else { "\"false\"" });
        }
        DataType::Utf8 => write_json_str(out, a.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => write_json_str(out, a.as_string::<i64>().value(i)),
        DataType::Utf8View => write_json_str(out, a.as_string_view().value(i)),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let bytes: &[u8] = match a.data_type() {
                DataType::Binary => a.as_binary::<i32>().value(i),
                DataType::LargeBinary => a.as_binary::<i64>().value(i),
                _ => a.as_binary_view().value(i),
            };
            out.push('"');
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(bytes));
            out.push('"');
        }
        DataType::FixedSizeBinary(_) => {
            out.push('"');
            out.push_str(
                &base64::engine::general_purpose::STANDARD
                    .encode(a.as_fixed_size_binary().value(i)),
            );
            out.push('"');
        }
        DataType::Decimal128(_, s) => {
            out.push('"');
            write_decimal(
                out,
                a.as_primitive::<Decimal128Type>().value(i).to_string(),
                *s,
            );
            out.push('"');
        }
        DataType::Decimal256(_, s) => {
            out.push('"');
            write_decimal(
                out,
                a.as_primitive::<Decimal256Type>().value(i).to_string(),
                *s,
            );
            out.push('"');
        }
        DataType::Date32 => {
            out.push('"');
            let _ = text::format_date(a.as_primitive::<Date32Type>().value(i), out);
            out.push('"');
        }
        DataType::Date64 => {
            out.push('"');
            let ms = a.as_primitive::<Date64Type>().value(i);
            let _ = text::format_date(ms.div_euclid(86_400_000) as i32, out);
            out.push('"');
        }
        DataType::Time32(unit) | DataType::Time64(unit) => {
            let micros = match unit {
                TimeUnit::Second => {
                    a.as_primitive::<Time32SecondType>().value(i) as i64 * 1_000_000
                }
                TimeUnit::Millisecond => {
                    a.as_primitive::<Time32MillisecondType>().value(i) as i64 * 1_000
                }
                TimeUnit::Microsecond => a.as_primitive::<Time64MicrosecondType>().value(i),
                TimeUnit::Nanosecond => a.as_primitive::<Time64NanosecondType>().value(i) / 1_000,
            };
            out.push('"');
            let _ = text::format_time(micros, out);
            out.push('"');
        }
        DataType::Timestamp(unit, None) => {
            out.push('"');
            let _ = text::format_datetime(timestamp_micros(a, unit, i), out);
            out.push('"');
        }
        DataType::Timestamp(unit, Some(_)) => {
            let micros = timestamp_micros(a, unit, i);
            out.push('"');
            if opts.int64_timestamp {
                let _ = write!(out, "{micros}");
            } else {
                write_f64(out, micros as f64 / 1e6);
            }
            out.push('"');
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = a.as_primitive::<IntervalMonthDayNanoType>().value(i);
            let parts = text::IntervalParts {
                months: v.months,
                days: v.days,
                nanos: v.nanoseconds,
            };
            out.push('"');
            let _ = text::format_interval(parts, out);
            out.push('"');
        }
        DataType::Struct(_) if range_element(a.data_type()).is_some() => {
            write_range(out, a.as_struct(), i, opts);
        }
        DataType::Struct(_) => {
            let s = a.as_struct();
            write_struct(out, s, i, opts);
        }
        DataType::List(_) => write_list(out, a.as_list::<i32>(), i, opts),
        DataType::LargeList(_) => write_list(out, a.as_list::<i64>(), i, opts),
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            // Arrow checks every key against the values, and `i` is a row of `a`.
            #[allow(clippy::indexing_slicing)]
            let key = d.normalized_keys()[i];
            write_value(out, d.values().as_ref(), key, opts);
        }
        other => {
            // Types with no BigQuery counterpart render as their debug text.
            write_json_str(out, &format!("<{other}>"));
        }
    }
}

/// A RANGE as BigQuery sends it: `"[start, end)"`, each bound as its element's cell text
/// (TIMESTAMP as the request asked) and `UNBOUNDED` for an open one.
fn write_range(out: &mut String, s: &StructArray, i: usize, opts: EncodeOptions) {
    out.push_str("\"[");
    for (k, bound) in s.columns().iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        if bound.is_null(i) {
            out.push_str("UNBOUNDED");
        } else {
            // The bound's cell (a quoted DATE, DATETIME or TIMESTAMP), written in place and
            // its quotes taken off.
            let start = out.len();
            write_value(out, bound.as_ref(), i, opts);
            out.pop();
            out.remove(start);
        }
    }
    out.push_str(")\"");
}

fn write_struct(out: &mut String, s: &StructArray, i: usize, opts: EncodeOptions) {
    out.push_str("{\"f\":[");
    for (k, c) in s.columns().iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"v\":");
        write_value(out, c.as_ref(), i, opts);
        out.push('}');
    }
    out.push_str("]}");
}

fn write_list<O: OffsetSizeTrait>(
    out: &mut String,
    l: &GenericListArray<O>,
    i: usize,
    opts: EncodeOptions,
) {
    let offsets = l.value_offsets();
    // Arrow checks a list's offsets (one more than its rows), and `i` is a row of `l`.
    #[allow(clippy::indexing_slicing)]
    let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
    let values = l.values();
    out.push('[');
    for j in start..end {
        if j > start {
            out.push(',');
        }
        out.push_str("{\"v\":");
        write_value(out, values.as_ref(), j, opts);
        out.push('}');
    }
    out.push(']');
}

/// Writes one row as `{"f":[{"v":..},..]}`.
pub fn write_row(out: &mut String, columns: &[ArrayRef], i: usize, opts: EncodeOptions) {
    out.push_str("{\"f\":[");
    for (k, c) in columns.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"v\":");
        write_value(out, c.as_ref(), i, opts);
        out.push('}');
    }
    out.push_str("]}");
}

/// Writes rows `start..` of `batches` (comma-separated row objects, no brackets) until
/// `max_rows` rows or about `max_bytes` bytes; returns the number of rows written.
pub fn write_rows(
    out: &mut String,
    batches: &[RecordBatch],
    start: usize,
    max_rows: usize,
    max_bytes: usize,
    opts: EncodeOptions,
) -> usize {
    let begin = out.len();
    let mut skipped = 0usize;
    let mut written = 0usize;
    for b in batches {
        let n = b.num_rows();
        if skipped + n <= start {
            skipped += n;
            continue;
        }
        let from = start.saturating_sub(skipped);
        skipped += n;
        for i in from..n {
            if written >= max_rows || (written > 0 && out.len() - begin >= max_bytes) {
                return written;
            }
            if written > 0 {
                out.push(',');
            }
            write_row(out, b.columns(), i, opts);
            written += 1;
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::Int64Type;
    use arrow_array::{Date32Array, Int64Array, ListArray, StringArray, TimestampMicrosecondArray};

    use super::*;
    use crate::json::ResponseDecoder;

    fn f(v: f64) -> String {
        let mut s = String::new();
        write_f64(&mut s, v);
        s
    }

    #[test]
    fn floats_render_like_bigquery() {
        assert_eq!(f(1704067200.0), "1.7040672E9");
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(3.25), "3.25");
        assert_eq!(f(f64::NAN), "NaN");
        assert_eq!(f(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(f(1e-5), "1.0E-5");
        assert_eq!(f(0.0), "0.0");
    }

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        write_json_str(&mut s, "a\"b\\\n\u{1}");
        assert_eq!(s, r#""a\"b\\\n\u0001""#);
    }

    #[test]
    fn decimals_drop_trailing_zeros() {
        let mut s = String::new();
        write_decimal(&mut s, "-100500000000".to_string(), 9);
        assert_eq!(s, "-100.5");
    }

    /// Rows written by the encoder and read back by bigq's REST decoder are the same
    /// values, nested and NULL ones included.
    #[test]
    fn rows_round_trip_through_the_rest_decoder() {
        let ids = Int64Array::from(vec![Some(1), None, Some(-3)]);
        let names = StringArray::from(vec![Some("a\"b"), Some(""), None]);
        let tags = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            Some(vec![]),
            Some(vec![Some(3)]),
        ]);
        let days = Date32Array::from(vec![Some(0), Some(19_000), None]);
        let ts = TimestampMicrosecondArray::from(vec![Some(1_500_000), None, Some(-1)])
            .with_timezone("UTC");
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(ids) as ArrayRef),
            ("name", Arc::new(names) as ArrayRef),
            ("tags", Arc::new(tags) as ArrayRef),
            ("day", Arc::new(days) as ArrayRef),
            ("ts", Arc::new(ts) as ArrayRef),
        ])
        .unwrap();
        for int64_timestamp in [false, true] {
            let mut rows = String::new();
            let opts = EncodeOptions { int64_timestamp };
            assert_eq!(
                write_rows(
                    &mut rows,
                    std::slice::from_ref(&batch),
                    0,
                    10,
                    usize::MAX,
                    opts
                ),
                3
            );
            let body = format!(
                r#"{{"schema":{{"fields":[{{"name":"id","type":"INTEGER"}},{{"name":"name","type":"STRING"}},{{"name":"tags","type":"INTEGER","mode":"REPEATED"}},{{"name":"day","type":"DATE"}},{{"name":"ts","type":"TIMESTAMP"}}]}},"rows":[{rows}]}}"#
            );
            let mut d = ResponseDecoder::new();
            d.decode(body.as_bytes()).unwrap();
            d.finish().unwrap();
            let back = d.next_batch().unwrap();
            assert_eq!(back.num_rows(), 3);
            let id = back.column(0).as_primitive::<Int64Type>();
            assert_eq!((id.value(0), id.is_null(1), id.value(2)), (1, true, -3));
            let name = back.column(1).as_string::<i32>();
            assert_eq!(
                (name.value(0), name.value(1), name.is_null(2)),
                ("a\"b", "", true)
            );
            let tags = back.column(2).as_list::<i32>();
            assert_eq!(tags.value_length(0), 2);
            assert_eq!(tags.value_length(1), 0);
            let day = back
                .column(3)
                .as_primitive::<arrow_array::types::Date32Type>();
            assert_eq!((day.value(1), day.is_null(2)), (19_000, true));
            let ts = back
                .column(4)
                .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
            assert_eq!(
                (ts.value(0), ts.is_null(1), ts.value(2)),
                (1_500_000, true, -1)
            );
        }
    }

    #[test]
    fn ranges_are_written_as_bigquery_text() {
        let element = DataType::Date32;
        let DataType::Struct(fields) = range_type(element.clone()) else {
            unreachable!()
        };
        let range = StructArray::new(
            fields,
            vec![
                Arc::new(Date32Array::from(vec![Some(0), None])) as ArrayRef,
                Arc::new(Date32Array::from(vec![Some(31), Some(1)])) as ArrayRef,
            ],
            None,
        );
        assert_eq!(range_element(range.data_type()), Some(&element));
        let mut out = String::new();
        write_row(
            &mut out,
            &[Arc::new(range.clone()) as ArrayRef],
            0,
            EncodeOptions::default(),
        );
        write_row(
            &mut out,
            &[Arc::new(range) as ArrayRef],
            1,
            EncodeOptions::default(),
        );
        assert_eq!(
            out,
            r#"{"f":[{"v":"[1970-01-01, 1970-02-01)"}]}{"f":[{"v":"[UNBOUNDED, 1970-01-02)"}]}"#
        );
    }
}

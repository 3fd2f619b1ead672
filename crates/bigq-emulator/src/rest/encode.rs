//! Arrow arrays straight into BigQuery's REST row JSON (`{"f":[{"v":..}]}`), with no
//! intermediate `serde_json::Value`.

use std::fmt::Write as _;

use crate::sql::types::range_element;
use base64::Engine as _;
use bigq_codec::value::text;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, GenericListArray, OffsetSizeTrait, StructArray,
};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Date64Type, Decimal128Type, Decimal256Type, Float16Type, Float32Type,
    Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, IntervalMonthDayNanoType, IntervalUnit,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimeUnit,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::arrow::record_batch::RecordBatch;

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
    use super::*;

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
}

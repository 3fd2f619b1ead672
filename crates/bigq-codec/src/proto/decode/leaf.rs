//! Leaf column builders: each leaf (non-RECORD) column gathers its values straight into Arrow
//! buffers in the table's layout, converting each protobuf scalar by the column's BigQuery type.
//!
//! The conversions are those `tabledata.insertAll` applies to the JSON value of the same
//! scalar (so a proto row and a JSON row with the same values store the same data), plus the
//! Storage Write encodings JSON has no counterpart for: NUMERIC/BIGNUMERIC from `bytes`
//! (packed), DATETIME/TIME from `int64` (packed civil time), DATE from `int32` days and
//! TIMESTAMP from `int64` microseconds. An integer or float that does not fit the column is
//! an error naming the value, never a saturated or truncated number.

use std::fmt::Write as _;
use std::mem::take;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Decimal256Array,
    Float64Array, Int64Array, StringArray, Time64MicrosecondArray, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer, i256};
use arrow_schema::{ArrowError, DataType};
use prost_types::field_descriptor_proto::Type;

use super::civil;
use crate::proto::wire::Raw;
use crate::schema::FieldType;
use crate::value::text::{self, MAX_DATE, MICROS_PER_DAY, MIN_DATE};

/// The values of one leaf (non-RECORD) column, by BigQuery type.
pub(crate) enum Leaf {
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    Bool(BooleanBufferBuilder),
    /// STRING, JSON (`json: true`) or GEOGRAPHY (`geography: true`): UTF-8 text.
    Text {
        offsets: Vec<i32>,
        data: Vec<u8>,
        json: bool,
        geography: bool,
    },
    Bytes {
        offsets: Vec<i32>,
        data: Vec<u8>,
    },
    Numeric(Vec<i128>),
    BigNumeric(Vec<i256>),
    Date(Vec<i32>),
    Time(Vec<i64>),
    DateTime(Vec<i64>),
    Timestamp(Vec<i64>),
}

pub(crate) fn bad(what: &str, raw: Raw<'_>) -> String {
    let shown = match raw {
        Raw::Int(v) => v.to_string(),
        Raw::UInt(v) => v.to_string(),
        Raw::Float(v) => float_text(v),
        Raw::Bool(v) => v.to_string(),
        Raw::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
    };
    format!("Cannot convert value to {what} (bad value): {shown}")
}

/// A double as insertAll's JSON shows it (`2.0`, `1e20`, `NaN`, `Infinity`).
fn float_text(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        serde_json::Number::from_f64(v)
            .map(|n| n.to_string())
            .unwrap_or_else(|| v.to_string())
    }
}

fn utf8(b: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(b).map_err(|_| "invalid UTF-8 in a string".to_string())
}

/// A whole double as an INT64: finite, no fraction, within range.
fn float_to_i64(f: f64) -> Option<i64> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    (f.is_finite() && f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

fn int64_of(raw: Raw<'_>) -> Result<i64, String> {
    let v = match raw {
        Raw::Int(v) => Some(v),
        Raw::UInt(v) => i64::try_from(v).ok(),
        Raw::Float(f) => float_to_i64(f),
        Raw::Bool(_) => None,
        Raw::Bytes(b) => {
            let s = utf8(b)?;
            // 1.0 and 1e3 are integers too, as in BigQuery.
            s.parse::<i64>()
                .ok()
                .or_else(|| s.parse::<f64>().ok().and_then(float_to_i64))
        }
    };
    v.ok_or_else(|| bad("integer", raw))
}

fn float64_of(raw: Raw<'_>) -> Result<f64, String> {
    Ok(match raw {
        Raw::Int(v) => v as f64,
        Raw::UInt(v) => v as f64,
        Raw::Float(f) => f,
        Raw::Bool(_) => return Err(bad("double", raw)),
        Raw::Bytes(b) => match utf8(b)? {
            "NaN" => f64::NAN,
            "Infinity" | "inf" => f64::INFINITY,
            "-Infinity" | "-inf" => f64::NEG_INFINITY,
            s => s.parse().map_err(|_| bad("double", raw))?,
        },
    })
}

fn bool_of(raw: Raw<'_>) -> Result<bool, String> {
    match raw {
        Raw::Bool(b) => Ok(b),
        Raw::Bytes(b) if b.eq_ignore_ascii_case(b"true") => Ok(true),
        Raw::Bytes(b) if b.eq_ignore_ascii_case(b"false") => Ok(false),
        _ => Err(bad("boolean", raw)),
    }
}

/// The decimal text of a scalar for NUMERIC / BIGNUMERIC, as insertAll would read it.
fn decimal_text(raw: Raw<'_>) -> Result<std::borrow::Cow<'_, str>, String> {
    Ok(match raw {
        Raw::Int(v) => v.to_string().into(),
        Raw::UInt(v) => v.to_string().into(),
        Raw::Float(v) => float_text(v).into(),
        Raw::Bool(v) => v.to_string().into(),
        Raw::Bytes(b) => utf8(b)?.into(),
    })
}

/// Minimal little-endian two's-complement bytes (the Java client's
/// `BigDecimalByteStringEncoder`), sign-extended to `N` bytes.
fn packed<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    let &last = b.last()?;
    let fill = if last & 0x80 != 0 { 0xff } else { 0 };
    let mut a = [fill; N];
    a.get_mut(..b.len())?.copy_from_slice(b);
    Some(a)
}

const NUMERIC_LIMIT: u128 = 10u128.pow(38);

fn numeric_of(raw: Raw<'_>, proto: Type) -> Result<i128, String> {
    let n = match (raw, proto) {
        (Raw::Bytes(b), Type::Bytes) => packed::<16>(b).map(i128::from_le_bytes),
        (Raw::Int(v), _) => Some(i128::from(v) * 1_000_000_000),
        (Raw::UInt(v), _) => Some(i128::from(v) * 1_000_000_000),
        _ => text::parse_decimal_i128(decimal_text(raw)?.trim().as_bytes(), 9),
    };
    n.filter(|n| n.unsigned_abs() < NUMERIC_LIMIT)
        .ok_or_else(|| bad("numeric", raw))
}

fn bignumeric_of(raw: Raw<'_>, proto: Type) -> Result<i256, String> {
    let n = match (raw, proto) {
        (Raw::Bytes(b), Type::Bytes) => packed::<32>(b).map(i256::from_le_bytes),
        _ => text::parse_decimal_i256(decimal_text(raw)?.trim().as_bytes(), 38)
            .map(|n| i256::from_le_bytes(n.to_le_bytes())),
    };
    n.ok_or_else(|| bad("bignumeric", raw))
}

fn date_of(raw: Raw<'_>) -> Result<i32, String> {
    let d = match raw {
        Raw::Int(v) => i32::try_from(v).ok(),
        Raw::UInt(v) => i32::try_from(v).ok(),
        Raw::Bytes(b) => text::parse_date(utf8(b)?.as_bytes()),
        _ => None,
    };
    d.filter(|d| (MIN_DATE..=MAX_DATE).contains(d))
        .ok_or_else(|| bad("date", raw))
}

fn time_of(raw: Raw<'_>) -> Result<i64, String> {
    let t = match raw {
        Raw::Int(v) => civil::decode_time(v),
        Raw::UInt(v) => i64::try_from(v).ok().and_then(civil::decode_time),
        Raw::Bytes(b) => text::parse_time(utf8(b)?.as_bytes()),
        _ => None,
    };
    t.ok_or_else(|| bad("time", raw))
}

fn datetime_of(raw: Raw<'_>) -> Result<i64, String> {
    let t = match raw {
        Raw::Int(v) => civil::decode_datetime(v),
        Raw::UInt(v) => i64::try_from(v).ok().and_then(civil::decode_datetime),
        Raw::Bytes(b) => text::parse_datetime(utf8(b)?.as_bytes()),
        _ => None,
    };
    t.ok_or_else(|| bad("datetime", raw))
}

const MIN_TIMESTAMP: i64 = MIN_DATE as i64 * MICROS_PER_DAY;
const MAX_TIMESTAMP: i64 = (MAX_DATE as i64 + 1) * MICROS_PER_DAY - 1;

fn timestamp_of(raw: Raw<'_>) -> Result<i64, String> {
    let t = match raw {
        // Microseconds since the epoch.
        Raw::Int(v) => Some(v),
        Raw::UInt(v) => i64::try_from(v).ok(),
        // Seconds since the epoch, as insertAll reads a JSON number.
        Raw::Float(secs) => {
            let m = (secs * 1e6).round();
            (m.is_finite() && m.abs() < 9.2e18).then_some(m as i64)
        }
        Raw::Bool(_) => None,
        Raw::Bytes(b) => {
            let s = utf8(b)?.as_bytes();
            text::parse_timestamp(s).or_else(|| text::parse_float_seconds_micros(s))
        }
    };
    t.filter(|t| (MIN_TIMESTAMP..=MAX_TIMESTAMP).contains(t))
        .ok_or_else(|| bad("timestamp", raw))
}

fn push_text(offsets: &mut Vec<i32>, data: &mut Vec<u8>, s: &[u8]) -> Result<(), String> {
    data.extend_from_slice(s);
    offsets.push(i32::try_from(data.len()).map_err(|_| "request too large".to_string())?);
    Ok(())
}

impl Leaf {
    /// Empty values for a BigQuery type (RECORD is not a leaf).
    pub(crate) fn new(t: &FieldType) -> Option<Leaf> {
        let text = |json, geography| Leaf::Text {
            offsets: vec![0],
            data: Vec::new(),
            json,
            geography,
        };
        Some(match t {
            FieldType::Int64 => Leaf::Int64(Vec::new()),
            FieldType::Float64 => Leaf::Float64(Vec::new()),
            FieldType::Bool => Leaf::Bool(BooleanBufferBuilder::new(0)),
            FieldType::String => text(false, false),
            FieldType::Json => text(true, false),
            FieldType::Geography => text(false, true),
            FieldType::Bytes => Leaf::Bytes {
                offsets: vec![0],
                data: Vec::new(),
            },
            FieldType::Numeric => Leaf::Numeric(Vec::new()),
            FieldType::BigNumeric => Leaf::BigNumeric(Vec::new()),
            FieldType::Date => Leaf::Date(Vec::new()),
            FieldType::Time => Leaf::Time(Vec::new()),
            FieldType::DateTime => Leaf::DateTime(Vec::new()),
            FieldType::Timestamp => Leaf::Timestamp(Vec::new()),
            _ => return None,
        })
    }

    /// Appends one value of protobuf type `proto`, converted to the column's type.
    #[inline]
    pub(crate) fn push(&mut self, raw: Raw<'_>, proto: Type) -> Result<(), String> {
        match self {
            Leaf::Int64(v) => v.push(int64_of(raw)?),
            Leaf::Float64(v) => v.push(float64_of(raw)?),
            Leaf::Bool(v) => v.append(bool_of(raw)?),
            // STRING and JSON take numbers and booleans as their text, as insertAll does;
            // GEOGRAPHY only text.
            Leaf::Text {
                offsets,
                data,
                geography,
                ..
            } => match raw {
                Raw::Bytes(b) => push_text(offsets, data, utf8(b)?.as_bytes())?,
                _ if *geography => return Err(bad("string", raw)),
                Raw::Float(f) => push_text(offsets, data, float_text(f).as_bytes())?,
                Raw::Int(_) | Raw::UInt(_) | Raw::Bool(_) => {
                    let mut s = String::new();
                    let _ = match raw {
                        Raw::Int(v) => write!(s, "{v}"),
                        Raw::UInt(v) => write!(s, "{v}"),
                        _ => write!(s, "{}", matches!(raw, Raw::Bool(true))),
                    };
                    push_text(offsets, data, s.as_bytes())?
                }
            },
            Leaf::Bytes { offsets, data } => match raw {
                Raw::Bytes(b) => push_text(offsets, data, b)?,
                _ => return Err(bad("bytes", raw)),
            },
            Leaf::Numeric(v) => v.push(numeric_of(raw, proto)?),
            Leaf::BigNumeric(v) => v.push(bignumeric_of(raw, proto)?),
            Leaf::Date(v) => v.push(date_of(raw)?),
            Leaf::Time(v) => v.push(time_of(raw)?),
            Leaf::DateTime(v) => v.push(datetime_of(raw)?),
            Leaf::Timestamp(v) => v.push(timestamp_of(raw)?),
        }
        Ok(())
    }

    /// Appends a placeholder under a NULL.
    pub(crate) fn push_default(&mut self) {
        match self {
            Leaf::Int64(v) | Leaf::Time(v) | Leaf::DateTime(v) | Leaf::Timestamp(v) => v.push(0),
            Leaf::Float64(v) => v.push(0.0),
            Leaf::Bool(v) => v.append(false),
            Leaf::Text { offsets, data, .. } | Leaf::Bytes { offsets, data } => {
                offsets.push(data.len() as i32)
            }
            Leaf::Numeric(v) => v.push(0),
            Leaf::BigNumeric(v) => v.push(i256::ZERO),
            Leaf::Date(v) => v.push(0),
        }
    }

    /// The values so far as an array of type `t`; the builder starts over.
    pub(crate) fn finish(
        &mut self,
        t: &DataType,
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayRef, String> {
        let e = |e: ArrowError| e.to_string();
        let bytes = |offsets: &mut Vec<i32>, data: &mut Vec<u8>| {
            let o = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
            (o, Buffer::from_vec(take(data)))
        };
        Ok(match self {
            Leaf::Int64(v) => Arc::new(Int64Array::try_new(take(v).into(), nulls).map_err(e)?),
            Leaf::Float64(v) => Arc::new(Float64Array::try_new(take(v).into(), nulls).map_err(e)?),
            Leaf::Bool(v) => Arc::new(BooleanArray::new(v.finish(), nulls)),
            Leaf::Text { offsets, data, .. } => {
                let (o, d) = bytes(offsets, data);
                Arc::new(StringArray::try_new(o, d, nulls).map_err(e)?)
            }
            Leaf::Bytes { offsets, data } => {
                let (o, d) = bytes(offsets, data);
                Arc::new(BinaryArray::try_new(o, d, nulls).map_err(e)?)
            }
            Leaf::Numeric(v) => Arc::new(
                Decimal128Array::try_new(take(v).into(), nulls)
                    .and_then(|a| a.with_precision_and_scale(38, 9))
                    .map_err(e)?,
            ),
            Leaf::BigNumeric(v) => Arc::new(
                Decimal256Array::try_new(take(v).into(), nulls)
                    .and_then(|a| a.with_precision_and_scale(76, 38))
                    .map_err(e)?,
            ),
            Leaf::Date(v) => Arc::new(Date32Array::try_new(take(v).into(), nulls).map_err(e)?),
            Leaf::Time(v) => {
                Arc::new(Time64MicrosecondArray::try_new(take(v).into(), nulls).map_err(e)?)
            }
            Leaf::DateTime(v) | Leaf::Timestamp(v) => {
                let tz = match t {
                    DataType::Timestamp(_, tz) => tz.clone(),
                    _ => None,
                };
                Arc::new(
                    TimestampMicrosecondArray::try_new(take(v).into(), nulls)
                        .map_err(e)?
                        .with_timezone_opt(tz),
                )
            }
        })
    }
}

impl Leaf {
    /// The column's BigQuery type name, for errors.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Leaf::Int64(_) => "INT64",
            Leaf::Float64(_) => "FLOAT64",
            Leaf::Bool(_) => "BOOL",
            Leaf::Text { json: true, .. } => "JSON",
            Leaf::Text {
                geography: true, ..
            } => "GEOGRAPHY",
            Leaf::Text { .. } => "STRING",
            Leaf::Bytes { .. } => "BYTES",
            Leaf::Numeric(_) => "NUMERIC",
            Leaf::BigNumeric(_) => "BIGNUMERIC",
            Leaf::Date(_) => "DATE",
            Leaf::Time(_) => "TIME",
            Leaf::DateTime(_) => "DATETIME",
            Leaf::Timestamp(_) => "TIMESTAMP",
        }
    }
}

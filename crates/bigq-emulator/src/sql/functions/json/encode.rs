//! SQL values as JSON: `TO_JSON_STRING` (struct fields in order, repeated names kept, wide
//! numbers quoted), `TO_JSON` (a JSON value: keys sorted, a repeated name's first value
//! kept, wide numbers quoted only when asked), `JSON_ARRAY` and `JSON_OBJECT`.

use std::fmt::Write as _;

use base64::Engine as _;
use datafusion::arrow::array::{Array, AsArray, StructArray};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Field, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, IntervalMonthDayNanoType, IntervalUnit, Time64MicrosecondType,
    Time64NanosecondType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::arrow::temporal_conversions::{date32_to_datetime, timestamp_us_to_datetime};
use datafusion::arrow::util::display::array_value_to_string;
use serde_json::{Map, Value};

use super::args::{Args, Cell, is_json};
use super::value::{self, WideNumbers};
use crate::sql::types::range_element;

/// How SQL values are written.
#[derive(Clone, Copy)]
pub(super) struct Mode {
    /// `TO_JSON_STRING`'s rules (every number a double cannot hold is quoted), rather than
    /// `TO_JSON`'s.
    pub(super) string: bool,
    /// `TO_JSON(.., stringify_wide_numbers => TRUE)`.
    pub(super) stringify: bool,
    /// Indentation, for `TO_JSON_STRING(.., true)`.
    pub(super) pretty: bool,
}

const JSON_MODE: Mode = Mode {
    string: false,
    stringify: false,
    pretty: false,
};

/// The largest integer every smaller one of which a double holds exactly.
const EXACT: i128 = 1 << 53;

fn newline(out: &mut String, mode: Mode, level: usize) {
    if mode.pretty {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', 2 * level));
    }
}

fn fraction(out: &mut String, micros: i64) {
    if micros == 0 {
    } else if micros % 1000 == 0 {
        let _ = write!(out, ".{:03}", micros / 1000);
    } else {
        let _ = write!(out, ".{micros:06}");
    }
}

/// A TIMESTAMP or DATETIME as microseconds since the epoch.
fn micros(a: &dyn Array, unit: &TimeUnit, i: usize) -> i64 {
    match unit {
        TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(i) * 1_000_000,
        TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().value(i) * 1000,
        TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
        TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(i) / 1000,
    }
}

fn write_integer(out: &mut String, v: i128, quote: bool) {
    if quote && !(-EXACT..=EXACT).contains(&v) {
        let _ = write!(out, "\"{v}\"");
    } else {
        let _ = write!(out, "{v}");
    }
}

fn write_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("\"NaN\"");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else if f.fract() == 0.0 && f.abs() < 1e15 {
        let _ = write!(out, "{}", f as i64);
    } else {
        value::write_double(out, f);
    }
}

/// A NUMERIC's digits, trailing fraction zeros dropped.
fn decimal_text(a: &dyn Array, i: usize) -> Result<String, String> {
    let s = array_value_to_string(a, i).map_err(|e| e.to_string())?;
    Ok(if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    })
}

fn write_decimal(out: &mut String, text: &str, mode: Mode) {
    let integral = !text.contains('.');
    let exact_int = integral
        && text
            .parse::<i128>()
            .is_ok_and(|v| (-EXACT..=EXACT).contains(&v));
    let quote = if mode.string {
        !exact_int
    } else if mode.stringify {
        // A fraction is quoted only when a double would not keep its digits.
        if integral {
            !exact_int
        } else {
            text.parse::<f64>()
                .map(|f| format!("{f}") != text)
                .unwrap_or(true)
        }
    } else {
        false
    };
    if quote {
        let _ = write!(out, "\"{text}\"");
    } else {
        out.push_str(text);
    }
}

/// An INTERVAL in ISO 8601 (`P1Y2M3DT4H5M6.5S`, `PT0S` for zero).
fn interval_text(months: i32, days: i32, nanos: i64) -> String {
    let mut s = String::from("P");
    let (y, m) = (months / 12, months % 12);
    if y != 0 {
        let _ = write!(s, "{y}Y");
    }
    if m != 0 {
        let _ = write!(s, "{m}M");
    }
    if days != 0 {
        let _ = write!(s, "{days}D");
    }
    if nanos != 0 || s.len() == 1 {
        s.push('T');
        let micros = nanos / 1000;
        let (h, rest) = (micros / 3_600_000_000, micros % 3_600_000_000);
        let (mi, rest) = (rest / 60_000_000, rest % 60_000_000);
        let (sec, frac) = (rest / 1_000_000, rest % 1_000_000);
        if h != 0 {
            let _ = write!(s, "{h}H");
        }
        if mi != 0 {
            let _ = write!(s, "{mi}M");
        }
        if sec != 0 || frac != 0 || (h == 0 && mi == 0) {
            if frac != 0 {
                let sign = if sec < 0 || frac < 0 { "-" } else { "" };
                let f = format!("{:06}", frac.abs());
                let _ = write!(s, "{sign}{}.{}S", sec.abs(), f.trim_end_matches('0'));
            } else {
                let _ = write!(s, "{sec}S");
            }
        }
    }
    s
}

/// Writes row `i` of `a` (of field `f`) as JSON text.
pub(super) fn write_sql(
    out: &mut String,
    a: &dyn Array,
    f: &Field,
    i: usize,
    mode: Mode,
    level: usize,
) -> Result<(), String> {
    if a.is_null(i) {
        out.push_str("null");
        return Ok(());
    }
    let quote = mode.string || mode.stringify;
    match a.data_type() {
        DataType::Null => out.push_str("null"),
        DataType::Boolean => out.push_str(if a.as_boolean().value(i) {
            "true"
        } else {
            "false"
        }),
        DataType::Int8 => write_integer(out, a.as_primitive::<Int8Type>().value(i).into(), quote),
        DataType::Int16 => write_integer(out, a.as_primitive::<Int16Type>().value(i).into(), quote),
        DataType::Int32 => write_integer(out, a.as_primitive::<Int32Type>().value(i).into(), quote),
        DataType::Int64 => write_integer(out, a.as_primitive::<Int64Type>().value(i).into(), quote),
        DataType::UInt8 => write_integer(out, a.as_primitive::<UInt8Type>().value(i).into(), quote),
        DataType::UInt16 => {
            write_integer(out, a.as_primitive::<UInt16Type>().value(i).into(), quote)
        }
        DataType::UInt32 => {
            write_integer(out, a.as_primitive::<UInt32Type>().value(i).into(), quote)
        }
        DataType::UInt64 => {
            write_integer(out, a.as_primitive::<UInt64Type>().value(i).into(), quote)
        }
        DataType::Float16 => write_float(out, a.as_primitive::<Float16Type>().value(i).to_f64()),
        DataType::Float32 => write_float(out, a.as_primitive::<Float32Type>().value(i).into()),
        DataType::Float64 => write_float(out, a.as_primitive::<Float64Type>().value(i)),
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            write_decimal(out, &decimal_text(a, i)?, mode)
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let s = match a.data_type() {
                DataType::Utf8 => a.as_string::<i32>().value(i),
                DataType::LargeUtf8 => a.as_string::<i64>().value(i),
                _ => a.as_string_view().value(i),
            };
            if is_json(f) {
                let v = value::parse(s, WideNumbers::Round).map_err(|e| e.to_string())?;
                out.push_str(&if mode.pretty {
                    value::to_pretty_text(&v)
                } else {
                    value::to_text(&v)
                });
            } else if f
                .metadata()
                .values()
                .any(|t| t == "google:sqlType:geography")
            {
                return Err("TO_JSON of GEOGRAPHY is not supported by bigq-emulator".into());
            } else {
                value::write_str(out, s);
            }
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let b: &[u8] = match a.data_type() {
                DataType::Binary => a.as_binary::<i32>().value(i),
                DataType::LargeBinary => a.as_binary::<i64>().value(i),
                _ => a.as_binary_view().value(i),
            };
            value::write_str(out, &base64::engine::general_purpose::STANDARD.encode(b));
        }
        DataType::Date32 => {
            let d = date32_to_datetime(a.as_primitive::<Date32Type>().value(i))
                .ok_or("DATE out of range")?;
            let _ = write!(out, "\"{}\"", d.format("%Y-%m-%d"));
        }
        DataType::Timestamp(unit, tz) => {
            let us = micros(a, unit, i);
            let dt = timestamp_us_to_datetime(us).ok_or("TIMESTAMP out of range")?;
            let _ = write!(out, "\"{}", dt.format("%Y-%m-%dT%H:%M:%S"));
            fraction(out, us.rem_euclid(1_000_000));
            out.push_str(if tz.is_some() { "Z\"" } else { "\"" });
        }
        DataType::Time64(unit) => {
            let us = match unit {
                TimeUnit::Nanosecond => a.as_primitive::<Time64NanosecondType>().value(i) / 1000,
                _ => a.as_primitive::<Time64MicrosecondType>().value(i),
            };
            let s = us / 1_000_000;
            let _ = write!(out, "\"{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
            fraction(out, us % 1_000_000);
            out.push('"');
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = a.as_primitive::<IntervalMonthDayNanoType>().value(i);
            value::write_str(out, &interval_text(v.months, v.days, v.nanoseconds));
        }
        DataType::List(inner) | DataType::LargeList(inner) => {
            let items = match a.data_type() {
                DataType::List(_) => a.as_list::<i32>().value(i),
                _ => a.as_list::<i64>().value(i),
            };
            out.push('[');
            for j in 0..items.len() {
                if j > 0 {
                    out.push(',');
                }
                newline(out, mode, level + 1);
                write_sql(out, &items, inner, j, mode, level + 1)?;
            }
            if !items.is_empty() {
                newline(out, mode, level);
            }
            out.push(']');
        }
        DataType::Struct(fields) => {
            let s: &StructArray = a.as_struct();
            let range = range_element(a.data_type()).is_some();
            out.push('{');
            for (j, field) in fields.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                newline(out, mode, level + 1);
                let name = if range {
                    if j == 0 { "start" } else { "end" }
                } else {
                    field.name()
                };
                value::write_str(out, name);
                out.push(':');
                if mode.pretty {
                    out.push(' ');
                }
                write_sql(out, s.column(j).as_ref(), field, i, mode, level + 1)?;
            }
            if !fields.is_empty() {
                newline(out, mode, level);
            }
            out.push('}');
        }
        other => {
            return Err(format!(
                "JSON of {other} values is not supported by bigq-emulator"
            ));
        }
    }
    Ok(())
}

/// Row `i` of `a` as a JSON value (`TO_JSON`'s rules).
pub(super) fn sql_value(a: &dyn Array, f: &Field, i: usize, mode: Mode) -> Result<Value, String> {
    let mut text = String::new();
    write_sql(&mut text, a, f, i, mode, 0)?;
    value::parse(&text, WideNumbers::Round)
}

/// Argument `n` at `row` as a JSON value.
pub(super) fn arg_value(a: &Args, n: usize, row: usize) -> Result<Value, String> {
    sql_value(a.arrays[n].as_ref(), &a.fields[n], row, JSON_MODE)
}

/// `TO_JSON(value, stringify_wide_numbers)`.
pub(super) fn to_json(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(stringify) = a.bool(1, row) else {
        return Ok(Cell::Null);
    };
    let mode = Mode {
        string: false,
        stringify,
        pretty: false,
    };
    let v = sql_value(a.arrays[0].as_ref(), &a.fields[0], row, mode)?;
    Ok(Cell::Text(value::to_text(&v)))
}

/// `TO_JSON_STRING(value, pretty_print)`.
pub(super) fn to_json_string(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(pretty) = a.bool(1, row) else {
        return Ok(Cell::Null);
    };
    let mode = Mode {
        string: true,
        stringify: false,
        pretty,
    };
    let mut out = String::new();
    write_sql(&mut out, a.arrays[0].as_ref(), &a.fields[0], row, mode, 0)?;
    Ok(Cell::Text(out))
}

/// `JSON_ARRAY(value, ...)`.
pub(super) fn array(a: &Args, row: usize) -> Result<Cell, String> {
    let items = (0..a.len())
        .map(|n| arg_value(a, n, row))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Cell::Text(value::to_text(&Value::Array(items))))
}

fn insert_key(
    a: &Args,
    map: &mut Map<String, Value>,
    key: Option<&str>,
    v: Value,
) -> Result<(), String> {
    let key = key.ok_or_else(|| format!("{}: A JSON object key cannot be NULL", a.function))?;
    map.entry(key.to_string()).or_insert(v);
    Ok(())
}

/// `JSON_OBJECT(key, value, ...)` and `JSON_OBJECT(keys, values)`.
pub(super) fn object(a: &Args, row: usize) -> Result<Cell, String> {
    let mut map = Map::new();
    let arrays = a.len() == 2 && matches!(a.arrays[0].data_type(), DataType::List(_));
    if arrays {
        if a.is_null(0, row) || a.is_null(1, row) {
            return Err(format!(
                "{}: the keys and values arrays cannot be NULL",
                a.function
            ));
        }
        let keys = a.arrays[0].as_list::<i32>().value(row);
        let DataType::List(value_field) = a.arrays[1].data_type() else {
            return Err(format!("{}: the values must be an ARRAY", a.function));
        };
        let values = a.arrays[1].as_list::<i32>().value(row);
        if keys.len() != values.len() {
            return Err(format!(
                "{}: The number of keys and values must match ({} keys, {} values)",
                a.function,
                keys.len(),
                values.len()
            ));
        }
        if keys.is_empty() {
            return Ok(Cell::Text("{}".into()));
        }
        let keys = keys
            .as_string_opt::<i32>()
            .ok_or_else(|| format!("{}: the keys must be an ARRAY<STRING>", a.function))?;
        for j in 0..keys.len() {
            let v = sql_value(values.as_ref(), value_field, j, JSON_MODE)?;
            insert_key(a, &mut map, (!keys.is_null(j)).then(|| keys.value(j)), v)?;
        }
    } else {
        for n in (0..a.len()).step_by(2) {
            if !matches!(a.arrays[n].data_type(), DataType::Utf8 | DataType::Null) {
                return Err(format!("{}: a key must be a STRING", a.function));
            }
            let v = arg_value(a, n + 1, row)?;
            insert_key(a, &mut map, a.text(n, row), v)?;
        }
    }
    Ok(Cell::Text(value::to_text(&Value::Object(map))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_written_in_iso_8601() {
        assert_eq!(interval_text(0, 0, 37_230_520_000_000), "PT10H20M30.52S");
        assert_eq!(interval_text(0, 0, 1_000_000_000), "PT1S");
        assert_eq!(interval_text(-25, 0, 0), "P-2Y-1M");
        assert_eq!(interval_text(0, 1, 19_800_000_000_000), "P1DT5H30M");
        assert_eq!(interval_text(0, 0, 0), "PT0S");
    }
}

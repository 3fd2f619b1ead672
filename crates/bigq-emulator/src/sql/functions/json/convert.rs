//! JSON to SQL values: `BOOL`, `INT64`, `FLOAT64` and `STRING` (an error unless the JSON is of
//! that type), their `LAX_` forms (a conversion where one makes sense, NULL otherwise) and
//! `JSON_TYPE`. A SQL NULL gives NULL; a JSON null is an error for the strict ones.

use serde_json::{Number, Value};

use super::args::{Args, Cell};
use super::value::{self, WideNumbers};

/// The JSON argument, or `None` for SQL NULL.
fn json(a: &Args, row: usize) -> Result<Option<Value>, String> {
    a.json(0, row)
}

/// `JSON_TYPE(json)`.
pub(super) fn json_type(a: &Args, row: usize) -> Result<Cell, String> {
    Ok(match json(a, row)? {
        Some(v) => Cell::Text(value::type_name(&v).to_string()),
        None => Cell::Null,
    })
}

fn not(a: &Args, what: &str, v: &Value) -> String {
    format!(
        "{}: The provided JSON input is not {what}: {}",
        a.function,
        value::to_text(v)
    )
}

/// `BOOL(json)`.
pub(super) fn bool(a: &Args, row: usize) -> Result<Cell, String> {
    match json(a, row)? {
        None => Ok(Cell::Null),
        Some(Value::Bool(b)) => Ok(Cell::Bool(b)),
        Some(v) => Err(not(a, "a boolean", &v)),
    }
}

/// A JSON number as an INT64, if it is an integer in range.
fn exact_int(n: &Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    if n.as_u64().is_some() {
        return None;
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f))
        .then_some(f as i64)
}

/// `INT64(json)`.
pub(super) fn int64(a: &Args, row: usize) -> Result<Cell, String> {
    match json(a, row)? {
        None => Ok(Cell::Null),
        Some(Value::Number(n)) => exact_int(&n).map(Cell::Int).ok_or_else(|| {
            format!(
                "{}: The provided JSON number {n} cannot be converted to an integer without loss of precision or overflow",
                a.function
            )
        }),
        Some(v) => Err(not(a, "an integer", &v)),
    }
}

/// `FLOAT64(json, wide_number_mode)`.
pub(super) fn float64(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(mode) = a.text(1, row) else {
        return Ok(Cell::Null);
    };
    let mode = WideNumbers::named(a.function, mode)?;
    match json(a, row)? {
        None => Ok(Cell::Null),
        Some(Value::Number(n)) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            let exact = match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => f as i128 == i as i128 && f.abs() < 9.3e18,
                (None, Some(u)) => f < 1.8e19 && f as u128 == u as u128,
                _ => true,
            };
            if !exact && mode == WideNumbers::Exact {
                return Err(format!(
                    "{}: The provided JSON number {n} cannot be converted to FLOAT64 without loss of precision",
                    a.function
                ));
            }
            Ok(Cell::Float(f))
        }
        Some(v) => Err(not(a, "a number", &v)),
    }
}

/// `STRING(json)`.
pub(super) fn string(a: &Args, row: usize) -> Result<Cell, String> {
    match json(a, row)? {
        None => Ok(Cell::Null),
        Some(Value::String(s)) => Ok(Cell::Text(s)),
        Some(v) => Err(not(a, "a string", &v)),
    }
}

/// `LAX_BOOL(json)`: booleans, `"true"`/`"false"` in any case, and numbers (zero false).
pub(super) fn lax_bool(a: &Args, row: usize) -> Result<Cell, String> {
    Ok(match json(a, row)? {
        Some(Value::Bool(b)) => Cell::Bool(b),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Cell::Bool(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Cell::Bool(false),
        Some(Value::Number(n)) => Cell::Bool(n.as_f64().is_some_and(|f| f != 0.0)),
        _ => Cell::Null,
    })
}

/// A double rounded half away from zero to an INT64, if in range.
fn rounded(f: f64) -> Option<i64> {
    let r = f.round();
    (r.is_finite() && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r))
        .then_some(r as i64)
}

/// `LAX_INT64(json)`: numbers rounded, booleans as 1 and 0, numeric strings.
pub(super) fn lax_int64(a: &Args, row: usize) -> Result<Cell, String> {
    let n = match json(a, row)? {
        Some(Value::Bool(b)) => Some(i64::from(b)),
        Some(Value::Number(n)) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Some(i),
            (None, Some(_)) => None,
            _ => n.as_f64().and_then(rounded),
        },
        Some(Value::String(s)) => match s.parse::<i64>() {
            Ok(i) => Some(i),
            Err(_) => s.parse::<f64>().ok().and_then(rounded),
        },
        _ => None,
    };
    Ok(n.map_or(Cell::Null, Cell::Int))
}

/// `LAX_FLOAT64(json)`: numbers and numeric strings (`"NaN"`, `"Inf"` among them).
pub(super) fn lax_float64(a: &Args, row: usize) -> Result<Cell, String> {
    let f = match json(a, row)? {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.parse::<f64>().ok(),
        _ => None,
    };
    Ok(f.map_or(Cell::Null, Cell::Float))
}

/// A FLOAT64 as `CAST(x AS STRING)` writes it: shortest digits, exponent form outside
/// 1e-4..1e15 (`1e+100`), no trailing `.0`.
pub(super) fn float_text(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let s = format!("{:e}", f);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    if (-5..15).contains(&e) {
        format!("{f}")
    } else {
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

/// `LAX_STRING(json)`: strings, booleans and numbers as text.
pub(super) fn lax_string(a: &Args, row: usize) -> Result<Cell, String> {
    Ok(match json(a, row)? {
        Some(Value::String(s)) => Cell::Text(s),
        Some(Value::Bool(b)) => Cell::Text(b.to_string()),
        Some(Value::Number(n)) => Cell::Text(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => float_text(n.as_f64().unwrap_or(0.0)),
        }),
        _ => Cell::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_as_casts_write_them() {
        assert_eq!(float_text(10.0), "10");
        assert_eq!(float_text(1e100), "1e+100");
        assert_eq!(float_text(0.1), "0.1");
        assert_eq!(float_text(1.5e-7), "1.5e-07");
    }
}

//! Reading JSON: literals, `PARSE_JSON`, and the extraction functions (`JSON_QUERY`,
//! `JSON_VALUE`, their `_ARRAY` forms and the legacy `JSON_EXTRACT*` spellings), which take
//! either a JSON value or a JSON-formatted STRING. A STRING that is not JSON, or a path that
//! finds nothing, gives NULL; so does a JSON null found in a STRING (a JSON input keeps it).

use serde_json::Value;

use super::args::{Args, Cell};
use super::path::{self, Syntax};
use super::text_path;
use super::value::{self, WideNumbers};

/// `JSON 'text'`.
pub(super) fn literal(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(text) = a.text(0, row) else {
        return Ok(Cell::Null);
    };
    let v =
        value::parse(text, WideNumbers::Exact).map_err(|e| format!("Invalid JSON literal: {e}"))?;
    Ok(Cell::Text(value::to_text(&v)))
}

/// `CAST(x AS JSON)`: only NULL and JSON values are JSON already.
pub(super) fn cast(a: &Args, row: usize) -> Result<Cell, String> {
    Ok(match a.text(0, row) {
        Some(t) => Cell::Text(t.to_string()),
        None => Cell::Null,
    })
}

/// `PARSE_JSON(text, wide_number_mode)`.
pub(super) fn parse_json(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(text) = a.text(0, row) else {
        return Ok(Cell::Null);
    };
    let Some(mode) = a.text(1, row) else {
        return Ok(Cell::Null);
    };
    let mode = WideNumbers::named("PARSE_JSON", mode)?;
    let v = value::parse(text, mode).map_err(|e| {
        format!("Invalid input to PARSE_JSON: {text:?} is not a valid JSON value ({e})")
    })?;
    Ok(Cell::Text(value::to_text(&v)))
}

/// The value argument 0 has at the path of argument 1: `Err` for a bad path, `Ok(None)`
/// when nothing is found (or the argument is NULL, or a STRING that is not JSON).
fn found(a: &Args, row: usize, syntax: Syntax) -> Result<Option<Value>, String> {
    let Some(p) = a.text(1, row) else {
        return Ok(None);
    };
    let p = path::parse(a.function, p, syntax)?;
    if a.is_json(0) {
        return Ok(a.json(0, row)?.and_then(|v| path::get(&v, &p).cloned()));
    }
    // A JSON-formatted STRING is read only as far as the value found.
    Ok(a.text(0, row)
        .and_then(|t| text_path::find(t, &p))
        .and_then(value::parse_lenient))
}

/// The text of the value argument 0 (a JSON-formatted STRING) has at the path of argument 1,
/// as written there.
fn found_text<'a>(a: &'a Args, row: usize, syntax: Syntax) -> Result<Option<&'a str>, String> {
    let Some(p) = a.text(1, row) else {
        return Ok(None);
    };
    let p = path::parse(a.function, p, syntax)?;
    Ok(a.text(0, row).and_then(|t| text_path::find(t, &p)))
}

/// `JSON_QUERY` / `JSON_EXTRACT`.
pub(super) fn query(a: &Args, row: usize, syntax: Syntax) -> Result<Cell, String> {
    if !a.is_json(0) {
        // The text found, as written (a member named twice in it stays twice).
        return Ok(match found_text(a, row, syntax)? {
            Some(t) if t != "null" => Cell::Text(text_path::compact(t)),
            _ => Cell::Null,
        });
    }
    Ok(match found(a, row, syntax)? {
        Some(Value::Null) if !a.is_json(0) => Cell::Null,
        Some(v) => Cell::Text(value::to_text(&v)),
        None => Cell::Null,
    })
}

/// `JSON_VALUE` / `JSON_EXTRACT_SCALAR`.
pub(super) fn value(a: &Args, row: usize, syntax: Syntax) -> Result<Cell, String> {
    Ok(
        match found(a, row, syntax)?.as_ref().and_then(value::scalar_text) {
            Some(s) => Cell::Text(s),
            None => Cell::Null,
        },
    )
}

/// `JSON_QUERY_ARRAY` / `JSON_EXTRACT_ARRAY`.
pub(super) fn query_array(a: &Args, row: usize, syntax: Syntax) -> Result<Cell, String> {
    Ok(match found(a, row, syntax)? {
        Some(Value::Array(items)) => {
            Cell::List(items.iter().map(|v| Some(value::to_text(v))).collect())
        }
        _ => Cell::Null,
    })
}

/// `JSON_VALUE_ARRAY` / `JSON_EXTRACT_STRING_ARRAY`: NULL unless every element is a scalar
/// (a JSON null element is a SQL NULL).
pub(super) fn value_array(a: &Args, row: usize, syntax: Syntax) -> Result<Cell, String> {
    let Some(Value::Array(items)) = found(a, row, syntax)? else {
        return Ok(Cell::Null);
    };
    let mut out = Vec::with_capacity(items.len());
    for v in &items {
        match v {
            Value::Array(_) | Value::Object(_) => return Ok(Cell::Null),
            v => out.push(value::scalar_text(v)),
        }
    }
    Ok(Cell::List(out))
}

/// `json[key]`, `json[index]` and `json.key`: the member or element, NULL where there is
/// none.
pub(super) fn subscript(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    let step = if let Some(k) = a.text(1, row) {
        path::Step::Key(k.to_string())
    } else if let Some(i) = a.int(1, row) {
        path::Step::Index(i)
    } else {
        return Ok(Cell::Null);
    };
    let got = match (&v, &step) {
        (Value::Object(_), path::Step::Key(_)) | (Value::Array(_), path::Step::Index(_)) => {
            path::get(&v, std::slice::from_ref(&step))
        }
        _ => None,
    };
    Ok(match got {
        Some(v) => Cell::Text(value::to_text(v)),
        None => Cell::Null,
    })
}

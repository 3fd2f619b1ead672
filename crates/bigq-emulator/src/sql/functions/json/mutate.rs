//! Changing and taking apart JSON values: `JSON_SET`, `JSON_REMOVE`, `JSON_STRIP_NULLS`,
//! `JSON_ARRAY_APPEND`, `JSON_ARRAY_INSERT`, `JSON_KEYS` and `JSON_FLATTEN`. A path that
//! leads nowhere the function can act leaves the value as it is; a NULL option gives the
//! value unchanged, as BigQuery does.

use std::collections::BTreeSet;

use datafusion::arrow::datatypes::DataType;
use serde_json::{Map, Value};

use super::args::{Args, Cell};
use super::encode::arg_value;
use super::path::{self, Step, Syntax};
use super::value;

fn text(v: &Value) -> Cell {
    Cell::Text(value::to_text(v))
}

/// The path argument `n`: `None` for NULL.
fn path_arg(a: &Args, n: usize, row: usize) -> Result<Option<Vec<Step>>, String> {
    a.text(n, row)
        .map(|p| path::parse(a.function, p, Syntax::Standard))
        .transpose()
}

/// An empty container for the step that goes into it.
fn container(step: &Step) -> Value {
    match step {
        Step::Key(_) => Value::Object(Map::new()),
        Step::Index(_) => Value::Array(Vec::new()),
    }
}

/// Sets the value at `steps` below `v`, creating what is missing when `create`; `false`
/// where the path cannot be followed.
fn set_at(v: &mut Value, steps: &[Step], new: Value, create: bool) -> bool {
    let Some((step, rest)) = steps.split_first() else {
        *v = new;
        return true;
    };
    if v.is_null() && create {
        *v = container(step);
    }
    let child = match (v, step) {
        (Value::Object(m), Step::Key(k)) => {
            if !m.contains_key(k) {
                if !create {
                    return false;
                }
                m.insert(k.clone(), Value::Null);
            }
            m.get_mut(k)
        }
        (Value::Array(items), Step::Index(i)) => {
            let Ok(i) = usize::try_from(*i) else {
                return false;
            };
            if i >= items.len() {
                if !create {
                    return false;
                }
                items.resize(i + 1, Value::Null);
            }
            items.get_mut(i)
        }
        _ => None,
    };
    match child {
        Some(c) => set_at(c, rest, new, create),
        None => false,
    }
}

/// `JSON_SET(json, create_if_missing, path, value, ...)`.
pub(super) fn set(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(mut v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    let original = v.clone();
    let Some(create) = a.bool(1, row) else {
        return Ok(text(&original));
    };
    for n in (2..a.len()).step_by(2) {
        let Some(p) = path_arg(a, n, row)? else {
            continue;
        };
        let new = arg_value(a, n + 1, row)?;
        let mut next = v.clone();
        if set_at(&mut next, &p, new, create) {
            v = next;
        }
    }
    Ok(text(&v))
}

/// `JSON_REMOVE(json, path, ...)`.
pub(super) fn remove(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(mut v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    for n in 1..a.len() {
        let Some(p) = path_arg(a, n, row)? else {
            continue;
        };
        let Some((last, parent)) = p.split_last() else {
            return Err(format!("{}: The JSONPath cannot be '$'", a.function));
        };
        match (path::get_mut(&mut v, parent), last) {
            (Some(Value::Object(m)), Step::Key(k)) => {
                m.remove(k);
            }
            (Some(Value::Array(items)), Step::Index(i)) => {
                if let Ok(i) = usize::try_from(*i)
                    && i < items.len()
                {
                    items.remove(i);
                }
            }
            _ => {}
        }
    }
    Ok(text(&v))
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Strips nulls (and, with `remove_empty`, emptied containers) below `v`.
fn strip(v: &mut Value, arrays: bool, remove_empty: bool) {
    match v {
        Value::Object(m) => {
            for child in m.values_mut() {
                strip(child, arrays, remove_empty);
            }
            m.retain(|_, c| {
                !c.is_null() && !(remove_empty && is_empty(c) && (arrays || c.is_object()))
            });
        }
        Value::Array(items) if arrays => {
            for child in items.iter_mut() {
                strip(child, arrays, remove_empty);
            }
            items.retain(|c| !(c.is_null() || remove_empty && is_empty(c)));
        }
        _ => {}
    }
}

/// `JSON_STRIP_NULLS(json, path, include_arrays, remove_empty)`.
pub(super) fn strip_nulls(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(mut v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    let p = path_arg(a, 1, row)?;
    let (Some(p), Some(arrays), Some(remove_empty)) = (p, a.bool(2, row), a.bool(3, row)) else {
        return Ok(text(&v));
    };
    if let Some(target) = path::get_mut(&mut v, &p) {
        strip(target, arrays, remove_empty);
        if remove_empty && is_empty(target) && (arrays || target.is_object()) {
            *target = Value::Null;
        }
    }
    Ok(text(&v))
}

/// The value argument `n` as the elements it adds: an ARRAY's elements one by one when
/// `each`, else the value itself.
fn elements(a: &Args, n: usize, row: usize, each: bool) -> Result<Vec<Value>, String> {
    let v = arg_value(a, n, row)?;
    let spread = each && matches!(a.arrays[n].data_type(), DataType::List(_));
    Ok(match v {
        Value::Array(items) if spread => items,
        v => vec![v],
    })
}

/// `JSON_ARRAY_APPEND(json, append_each_element, path, value, ...)`.
pub(super) fn array_append(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(mut v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    let Some(each) = a.bool(1, row) else {
        return Ok(text(&v));
    };
    for n in (2..a.len()).step_by(2) {
        let Some(p) = path_arg(a, n, row)? else {
            continue;
        };
        let new = elements(a, n + 1, row, each)?;
        match path::get_mut(&mut v, &p) {
            Some(Value::Array(items)) => items.extend(new),
            Some(target @ Value::Null) => *target = Value::Array(new),
            _ => {}
        }
    }
    Ok(text(&v))
}

/// `JSON_ARRAY_INSERT(json, insert_each_element, path, value, ...)`.
pub(super) fn array_insert(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(mut v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    let Some(each) = a.bool(1, row) else {
        return Ok(text(&v));
    };
    for n in (2..a.len()).step_by(2) {
        let Some(p) = path_arg(a, n, row)? else {
            continue;
        };
        let Some((Step::Index(i), parent)) = p.split_last() else {
            continue;
        };
        let Ok(i) = usize::try_from(*i) else {
            continue;
        };
        let new = elements(a, n + 1, row, each)?;
        let target = match path::get_mut(&mut v, parent) {
            Some(t @ Value::Null) => {
                *t = Value::Array(Vec::new());
                t
            }
            Some(t) => t,
            None => continue,
        };
        if let Value::Array(items) = target {
            if i > items.len() {
                items.resize(i, Value::Null);
            }
            items.splice(i..i, new);
        }
    }
    Ok(text(&v))
}

/// A key as `JSON_KEYS` writes it: double-quoted unless it is a plain name.
fn key_text(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        k.to_string()
    } else {
        let mut out = String::new();
        value::write_str(&mut out, k);
        out
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum KeysMode {
    Strict,
    Lax,
    LaxRecursive,
}

fn collect_keys(
    v: &Value,
    prefix: &str,
    depth: i64,
    max: Option<i64>,
    mode: KeysMode,
    in_array: bool,
    out: &mut BTreeSet<String>,
) {
    match v {
        Value::Object(m) => {
            if max.is_some_and(|m| depth > m) {
                return;
            }
            for (k, child) in m {
                let name = if prefix.is_empty() {
                    key_text(k)
                } else {
                    format!("{prefix}.{}", key_text(k))
                };
                collect_keys(child, &name, depth + 1, max, mode, false, out);
                out.insert(name);
            }
        }
        Value::Array(items) => {
            let enter = match mode {
                KeysMode::Strict => false,
                KeysMode::Lax => !in_array,
                KeysMode::LaxRecursive => true,
            };
            if enter {
                for item in items {
                    collect_keys(item, prefix, depth, max, mode, true, out);
                }
            }
        }
        _ => {}
    }
}

/// `JSON_KEYS(json, max_depth, mode)`.
pub(super) fn keys(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    let max = a.int(1, row);
    if max.is_some_and(|m| m <= 0) {
        return Err(format!("{}: max_depth must be positive", a.function));
    }
    let Some(mode) = a.text(2, row) else {
        return Ok(Cell::Null);
    };
    let mode = match mode.to_ascii_lowercase().as_str() {
        "strict" => KeysMode::Strict,
        "lax" => KeysMode::Lax,
        "lax recursive" => KeysMode::LaxRecursive,
        _ => {
            return Err(format!(
                "{}: Invalid JSON mode {mode:?}; expected 'strict', 'lax' or 'lax recursive'",
                a.function
            ));
        }
    };
    let mut out = BTreeSet::new();
    collect_keys(&v, "", 1, max, mode, false, &mut out);
    Ok(Cell::List(out.into_iter().map(Some).collect()))
}

fn flatten_into(v: Value, out: &mut Vec<Option<String>>) {
    match v {
        Value::Array(items) => items.into_iter().for_each(|i| flatten_into(i, out)),
        v => out.push(Some(value::to_text(&v))),
    }
}

/// `JSON_FLATTEN(json)`: the non-array values inside nested arrays, in order.
pub(super) fn flatten(a: &Args, row: usize) -> Result<Cell, String> {
    let Some(v) = a.json(0, row)? else {
        return Ok(Cell::Null);
    };
    let mut out = Vec::new();
    flatten_into(v, &mut out);
    Ok(Cell::List(out))
}

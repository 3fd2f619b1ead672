//! The arguments of one JSON function call and the cells of its result, shared by the
//! JSON function families.

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, Int64Array, StringArray};
use datafusion::arrow::datatypes::{Field, FieldRef};

use super::value;
use crate::sql::types::EXTENSION_NAME_KEY;

/// One result cell.
pub(super) enum Cell {
    Null,
    Text(String),
    Bool(bool),
    Int(i64),
    Float(f64),
    List(Vec<Option<String>>),
}

/// Whether `f` is a JSON value (not a JSON-formatted STRING).
pub(super) fn is_json(f: &Field) -> bool {
    f.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some("google:sqlType:json")
}

/// The arguments of one call, for its rows.
pub(super) struct Args<'a> {
    pub(super) function: &'static str,
    pub(super) arrays: &'a [ArrayRef],
    pub(super) fields: &'a [FieldRef],
}

impl Args<'_> {
    pub(super) fn len(&self) -> usize {
        self.arrays.len()
    }

    pub(super) fn is_json(&self, a: usize) -> bool {
        is_json(&self.fields[a])
    }

    pub(super) fn is_null(&self, a: usize, row: usize) -> bool {
        self.arrays[a].is_null(row)
    }

    /// The text of a STRING (or JSON) argument; `None` for NULL.
    pub(super) fn text(&self, a: usize, row: usize) -> Option<&str> {
        let arr = self.arrays[a].as_any().downcast_ref::<StringArray>()?;
        (!arr.is_null(row)).then(|| arr.value(row))
    }

    pub(super) fn bool(&self, a: usize, row: usize) -> Option<bool> {
        let arr = self.arrays[a].as_any().downcast_ref::<BooleanArray>()?;
        (!arr.is_null(row)).then(|| arr.value(row))
    }

    pub(super) fn int(&self, a: usize, row: usize) -> Option<i64> {
        let arr = self.arrays[a].as_any().downcast_ref::<Int64Array>()?;
        (!arr.is_null(row)).then(|| arr.value(row))
    }

    /// A JSON argument's value; `None` for SQL NULL.
    pub(super) fn json(&self, a: usize, row: usize) -> Result<Option<serde_json::Value>, String> {
        match self.text(a, row) {
            None => Ok(None),
            Some(t) => value::parse(t, value::WideNumbers::Round)
                .map(Some)
                .map_err(|e| format!("{}: invalid JSON value: {e}", self.function)),
        }
    }
}

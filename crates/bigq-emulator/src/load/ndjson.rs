//! Newline-delimited JSON: a row per line, read with serde_json and converted by the same
//! BigQuery conversions as `insertAll` rows (base64 BYTES, NUMERIC text, nested RECORD and
//! REPEATED values); schemas detected by arrow-json's inference.

use std::sync::Arc;

use arrow_json::reader::infer_json_schema_from_iterator;
use bigq_codec::schema::{FieldMode, TableFieldSchema};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::scalar::ScalarValue;
use serde_json::{Map, Value};

use super::rows::{BadRecord, BadRecords, RowsBuilder};
use crate::error::BqError;
use crate::sql::types;
use crate::sql::values::json_to_scalar;

/// The non-blank lines of a file with their line number (from 1) and byte offset.
fn lines(text: &str) -> impl Iterator<Item = (u64, u64, &str)> {
    let mut offset = 0u64;
    text.split('\n').enumerate().filter_map(move |(i, l)| {
        let at = offset;
        offset += l.len() as u64 + 1;
        let l = l.trim_end_matches('\r');
        (!l.trim().is_empty()).then_some((i as u64 + 1, at, l))
    })
}

/// arrow-json infers `Null` for a field that is null in every row; BigQuery makes it a
/// STRING.
fn no_nulls(t: &DataType) -> DataType {
    match t {
        DataType::Null => DataType::Utf8,
        DataType::List(item) => DataType::List(Arc::new(Field::new(
            item.name(),
            no_nulls(item.data_type()),
            true,
        ))),
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| Field::new(f.name(), no_nulls(f.data_type()), true))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `autodetect`: the columns arrow-json infers over every row of `text`.
pub fn detect(text: &str, uri: &str) -> Result<Vec<TableFieldSchema>, BqError> {
    let values = lines(text).map(|(line, _, l)| {
        serde_json::from_str::<Value>(l).map_err(|e| {
            datafusion::arrow::error::ArrowError::JsonError(format!("line {line}: {e}"))
        })
    });
    let inferred = infer_json_schema_from_iterator(values).map_err(|e| {
        BqError::invalid(format!(
            "Error while reading data, error message: cannot detect the schema of {uri}: {e}"
        ))
    })?;
    let schema = Schema::new(
        inferred
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), no_nulls(f.data_type()), true))
            .collect::<Vec<_>>(),
    );
    let mut fields = types::bq_schema_of(&schema)?;
    fn clear(f: &mut TableFieldSchema) {
        if f.mode == Some(FieldMode::Nullable) {
            f.mode = None;
        }
        f.fields.iter_mut().for_each(clear);
    }
    fields.iter_mut().for_each(clear);
    Ok(fields)
}

/// The member of `obj` named `name`, matched case-insensitively as BigQuery's column names
/// are.
fn member<'a>(obj: &'a Map<String, Value>, name: &str) -> &'a Value {
    obj.get(name)
        .or_else(|| {
            obj.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
        .unwrap_or(&Value::Null)
}

/// The first member of `obj` (at any depth of RECORD fields) that `fields` lacks, dotted.
fn unknown(obj: &Map<String, Value>, fields: &[TableFieldSchema]) -> Option<String> {
    for (k, v) in obj {
        let Some(f) = fields.iter().find(|f| f.name.eq_ignore_ascii_case(k)) else {
            return Some(k.clone());
        };
        let nested: Vec<&Map<String, Value>> = match v {
            Value::Object(m) => vec![m],
            Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
            _ => Vec::new(),
        };
        if f.fields.is_empty() {
            continue;
        }
        for m in nested {
            if let Some(inner) = unknown(m, &f.fields) {
                return Some(format!("{k}.{inner}"));
            }
        }
    }
    None
}

/// Reads the rows of one file into `schema`'s layout; bad rows go to `bad` (an error past
/// `maxBadRecords`). Answers the batch and the rows read.
pub fn decode(
    text: &str,
    uri: &str,
    fields: &[TableFieldSchema],
    schema: SchemaRef,
    ignore_unknown_values: bool,
    bad: &mut BadRecords,
) -> Result<(Option<RecordBatch>, u64), BqError> {
    let mut rows = RowsBuilder::new(schema);
    let mut read = 0u64;
    for (line, offset, l) in lines(text) {
        read += 1;
        let bad_record = |message: String| BadRecord {
            uri: uri.to_string(),
            line,
            offset,
            message,
        };
        let obj = match serde_json::from_str::<Value>(l) {
            Ok(Value::Object(obj)) => obj,
            Ok(_) => {
                bad.push(
                    bad_record(format!(
                        "JSON parsing error in row starting at position {offset}: Row is not a JSON object."
                    )),
                    read,
                )?;
                continue;
            }
            Err(e) => {
                bad.push(
                    bad_record(format!(
                        "JSON parsing error in row starting at position {offset}: {e}"
                    )),
                    read,
                )?;
                continue;
            }
        };
        if !ignore_unknown_values && let Some(k) = unknown(&obj, fields) {
            bad.push(
                bad_record(format!(
                    "JSON parsing error in row starting at position {offset}: No such field: {k}."
                )),
                read,
            )?;
            continue;
        }
        let values: Result<Vec<ScalarValue>, String> = fields
            .iter()
            .map(|f| {
                json_to_scalar(f, member(&obj, &f.name)).map_err(|e| {
                    format!(
                        "JSON parsing error in row starting at position {offset}: Could not convert value for field {}: {}",
                        e.location, e.message
                    )
                })
            })
            .collect();
        match values {
            Ok(v) => rows.push(v),
            Err(m) => bad.push(bad_record(m), read)?,
        }
    }
    Ok((rows.finish()?, read))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bigq_codec::schema::FieldType;

    #[test]
    fn detected_columns_take_json_types_and_nulls_become_strings() {
        let f = detect(
            "{\"a\": 1, \"b\": \"x\", \"c\": null, \"d\": [1.5], \"e\": {\"f\": true}}\n",
            "gs://b/x",
        )
        .unwrap();
        let find = |n: &str| f.iter().find(|x| x.name == n).unwrap();
        assert_eq!(find("a").field_type, FieldType::Int64);
        assert_eq!(find("b").field_type, FieldType::String);
        assert_eq!(find("c").field_type, FieldType::String);
        assert_eq!(find("d").field_type, FieldType::Float64);
        assert_eq!(find("d").mode, Some(FieldMode::Repeated));
        assert_eq!(find("e").field_type, FieldType::Record);
    }

    #[test]
    fn lines_carry_their_number_and_offset() {
        let l: Vec<_> = lines("{}\n\n{\"a\":1}\r\n").collect();
        assert_eq!(l, vec![(1, 0, "{}"), (3, 4, "{\"a\":1}")]);
    }
}

//! The emulator's first protobuf row decoder, kept for the tests only: the reference the
//! Arrow decoder is checked against, and the baseline of its speed test. It reads the wire
//! with the codec's `wire` module; what it checks is the other half, each value's
//! conversion (here through insertAll JSON and `ScalarValue`s).
//!
//! Protobuf rows as the Storage Write API receives them: serialized messages decoded with
//! the writer's `DescriptorProto` (proto2 semantics: an absent field is NULL), each field
//! matched to the table column of the same name and turned into the JSON value
//! `tabledata.insertAll` takes for that column, so the same checks apply to both paths.
//!
//! The encodings follow BigQuery's: INT64 from any integer type, FLOAT64 from double or
//! float, BOOL, STRING, BYTES, NUMERIC/BIGNUMERIC/DATETIME/TIME/JSON/GEOGRAPHY as strings,
//! DATE as int32 days since the epoch, TIMESTAMP as int64 microseconds, RECORD as a nested
//! message, REPEATED as repeated fields (packed or not).

use base64::Engine as _;
use bigq_codec::schema::{FieldType, TableFieldSchema};
use bigq_codec::value::text::{format_date, format_timestamp};
use datafusion::arrow::array::Array;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::scalar::ScalarValue;
use gcloud_sdk::prost_types::field_descriptor_proto::{Label, Type};
use gcloud_sdk::prost_types::{DescriptorProto, FieldDescriptorProto};
use serde_json::{Map, Value};

use super::{nested, wire_mismatch};
use crate::catalog::Table;
use crate::sql::values::json_to_scalar;
use bigq_codec::proto::wire::{LEN, Raw, Reader, is_packable, scalar, wire_type};

/// Rows of one request as the first decoder stored them: each decoded to insertAll JSON,
/// each cell converted to a `ScalarValue`, each column built from its scalars. Errors are
/// (row index, message).
pub fn proto_batch(
    table: &Table,
    desc: &DescriptorProto,
    serialized: &[Vec<u8>],
) -> Result<RecordBatch, Vec<(usize, String)>> {
    let mut rows = Vec::with_capacity(serialized.len());
    let mut errors = Vec::new();
    for (i, bytes) in serialized.iter().enumerate() {
        match decode_row(desc, desc, &table.schema, bytes) {
            Ok(r) => rows.push(r),
            Err(message) => errors.push((i, message)),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut columns: Vec<Vec<ScalarValue>> =
        vec![Vec::with_capacity(rows.len()); table.schema.len()];
    for (i, row) in rows.iter().enumerate() {
        for (c, f) in table.schema.iter().enumerate() {
            match json_to_scalar(f, row.get(&f.name).unwrap_or(&Value::Null)) {
                Ok(v) => columns[c].push(v),
                Err(e) => {
                    errors.push((i, format!("{}: {}", e.location, e.message)));
                    break;
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let arrays = columns
        .into_iter()
        .zip(table.arrow_schema.fields())
        .map(|(vals, f)| {
            let a = ScalarValue::iter_to_array(vals).map_err(|e| vec![(0, e.to_string())])?;
            if a.data_type() == f.data_type() {
                Ok(a)
            } else {
                datafusion::arrow::compute::cast(&a, f.data_type())
                    .map_err(|e| vec![(0, e.to_string())])
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(table.arrow_schema.clone(), arrays).map_err(|e| vec![(0, e.to_string())])
}

/// Why a row could not be decoded: the message names the field where it can.
pub type RowError = String;

/// Reads one scalar of type `t` whose wire type is `wire`, refusing groups and a wire type
/// that does not match the declared type.
fn checked_scalar<'a>(
    r: &mut Reader<'a>,
    f: &FieldDescriptorProto,
    t: Type,
    wire: u32,
) -> Result<Raw<'a>, RowError> {
    if t == Type::Group {
        return Err(format!("field {}: groups are not supported", f.name()));
    }
    if wire != wire_type(t) {
        return Err(wire_mismatch(f.name(), wire));
    }
    Ok(scalar(r, t)?)
}

/// The insertAll JSON value of a scalar for a column of type `column.field_type`.
fn to_json(
    column: &TableFieldSchema,
    f: &FieldDescriptorProto,
    raw: Raw<'_>,
) -> Result<Value, RowError> {
    let text = |b: &[u8]| {
        std::str::from_utf8(b)
            .map(|s| Value::String(s.to_string()))
            .map_err(|_| format!("field {}: invalid UTF-8 in a string", f.name()))
    };
    Ok(match (&column.field_type, raw) {
        (FieldType::Date, Raw::Int(days)) => {
            let days = i32::try_from(days)
                .map_err(|_| format!("field {}: DATE {days} out of range", f.name()))?;
            let mut s = String::new();
            let _ = format_date(days, &mut s);
            Value::String(s)
        }
        (FieldType::Timestamp, Raw::Int(micros)) => {
            let mut s = String::new();
            let _ = format_timestamp(micros, &mut s);
            Value::String(s)
        }
        (FieldType::Bytes, Raw::Bytes(b)) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (_, Raw::Bytes(b)) => text(b)?,
        (_, Raw::Int(v)) => Value::from(v),
        (_, Raw::UInt(v)) => Value::from(v),
        (_, Raw::Bool(v)) => Value::Bool(v),
        (_, Raw::Float(v)) if v.is_nan() => Value::String("NaN".into()),
        (_, Raw::Float(v)) if v.is_infinite() => {
            Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
        }
        (_, Raw::Float(v)) => Value::from(v),
    })
}

/// Decodes one serialized message of type `desc` (nested types looked up in `root`) into
/// the JSON object insertAll would take for a row of `columns`.
pub fn decode_row(
    root: &DescriptorProto,
    desc: &DescriptorProto,
    columns: &[TableFieldSchema],
    bytes: &[u8],
) -> Result<Map<String, Value>, RowError> {
    let mut out = Map::new();
    let mut r = Reader::new(bytes);
    while !r.at_end() {
        let (number, wire) = r.key()?;
        let Some(f) = desc
            .field
            .iter()
            .find(|f| i64::from(f.number()) == number as i64)
        else {
            // A field the descriptor does not declare: skipped, as proto2 keeps unknowns.
            r.skip(wire)?;
            continue;
        };
        let column = columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(f.name()))
            .ok_or_else(|| {
                format!(
                    "Input schema has more fields than BigQuery schema, extra fields: '{}'",
                    f.name()
                )
            })?;
        let t = f.r#type();
        let repeated = f.label() == Label::Repeated;
        let mut values = Vec::new();
        if repeated && wire == LEN && is_packable(t) {
            let mut packed = Reader::new(r.len_delimited()?);
            while !packed.at_end() {
                let raw = scalar(&mut packed, t)?;
                values.push(to_json(column, f, raw)?);
            }
        } else if t == Type::Message {
            let Raw::Bytes(b) = checked_scalar(&mut r, f, t, wire)? else {
                return Err(wire_mismatch(f.name(), wire));
            };
            let sub = nested(root, f.type_name()).ok_or_else(|| {
                format!("field {}: unknown message type {}", f.name(), f.type_name())
            })?;
            if column.field_type != FieldType::Record {
                return Err(format!(
                    "field {}: a message for column {} of type {}",
                    f.name(),
                    column.name,
                    column.field_type
                ));
            }
            values.push(Value::Object(decode_row(root, sub, &column.fields, b)?));
        } else {
            let raw = checked_scalar(&mut r, f, t, wire)?;
            values.push(to_json(column, f, raw)?);
        }
        if repeated {
            let entry = out
                .entry(column.name.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(a) = entry {
                a.extend(values);
            }
        } else if let Some(v) = values.pop() {
            // proto2: the last occurrence of a non-repeated field wins.
            out.insert(column.name.clone(), v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{field, key, len_field, varint};
    use super::*;
    use bigq_codec::schema::FieldMode;
    use serde_json::json;

    fn schema() -> Vec<TableFieldSchema> {
        vec![
            TableFieldSchema::new("id", FieldType::Int64),
            TableFieldSchema::new("name", FieldType::String),
            TableFieldSchema::new("score", FieldType::Float64),
            TableFieldSchema::new("day", FieldType::Date),
            TableFieldSchema::new("ts", FieldType::Timestamp),
            TableFieldSchema::new("raw", FieldType::Bytes),
            TableFieldSchema::new("tags", FieldType::Int64).with_mode(FieldMode::Repeated),
            TableFieldSchema::record("st", vec![TableFieldSchema::new("a", FieldType::Int64)]),
        ]
    }

    fn descriptor() -> DescriptorProto {
        DescriptorProto {
            name: Some("Row".into()),
            field: vec![
                field("id", 1, Type::Int64, Label::Optional),
                field("name", 2, Type::String, Label::Optional),
                field("score", 3, Type::Double, Label::Optional),
                field("day", 4, Type::Int32, Label::Optional),
                field("ts", 5, Type::Int64, Label::Optional),
                field("raw", 6, Type::Bytes, Label::Optional),
                field("tags", 7, Type::Int64, Label::Repeated),
                FieldDescriptorProto {
                    type_name: Some(".pkg.Row.Inner".into()),
                    ..field("st", 8, Type::Message, Label::Optional)
                },
            ],
            nested_type: vec![DescriptorProto {
                name: Some("Inner".into()),
                field: vec![field("a", 1, Type::Sint64, Label::Optional)],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn decodes_every_encoding_into_insert_all_json() {
        let mut m = Vec::new();
        key(&mut m, 1, 0);
        varint(&mut m, (-5i64) as u64);
        len_field(&mut m, 2, "héllo".as_bytes());
        key(&mut m, 3, 1);
        m.extend_from_slice(&2.5f64.to_le_bytes());
        key(&mut m, 4, 0);
        varint(&mut m, 19_000);
        key(&mut m, 5, 0);
        varint(&mut m, 1_500_000);
        len_field(&mut m, 6, &[0, 255]);
        // tags: one packed run and one unpacked element.
        let mut packed = Vec::new();
        varint(&mut packed, 1);
        varint(&mut packed, 2);
        len_field(&mut m, 7, &packed);
        key(&mut m, 7, 0);
        varint(&mut m, 3);
        let mut inner = Vec::new();
        key(&mut inner, 1, 0);
        varint(&mut inner, 7); // zigzag for -4
        len_field(&mut m, 8, &inner);
        // An undeclared field is skipped.
        key(&mut m, 99, 0);
        varint(&mut m, 1);

        let d = descriptor();
        let row = decode_row(&d, &d, &schema(), &m).unwrap();
        assert_eq!(
            Value::Object(row),
            json!({
                "id": -5, "name": "héllo", "score": 2.5, "day": "2022-01-08",
                "ts": "1970-01-01T00:00:01.500000Z", "raw": "AP8=", "tags": [1, 2, 3],
                "st": {"a": -4}
            })
        );
        // Every value is one insertAll takes for its column.
        let obj = decode_row(&d, &d, &schema(), &m).unwrap();
        for c in schema() {
            let v = obj.get(&c.name).cloned().unwrap_or(Value::Null);
            crate::sql::values::json_to_scalar(&c, &v)
                .unwrap_or_else(|e| panic!("{}: {v}: {}", c.name, e.message));
        }
        // Absent fields stay absent (NULL).
        assert!(decode_row(&d, &d, &schema(), &[]).unwrap().is_empty());
    }

    #[test]
    fn bad_rows_are_errors_not_panics() {
        let d = descriptor();
        let mut m = Vec::new();
        len_field(&mut m, 2, &[0xff, 0xfe]);
        assert!(
            decode_row(&d, &d, &schema(), &m)
                .unwrap_err()
                .contains("UTF-8")
        );
        assert!(
            decode_row(&d, &d, &schema(), &[0x08])
                .unwrap_err()
                .contains("truncated")
        );
        assert!(
            decode_row(&d, &d, &schema(), &[0x12, 0x05, b'a'])
                .unwrap_err()
                .contains("truncated")
        );
        // Wire type 1 (fixed64) for an int64 field.
        let mut m = Vec::new();
        key(&mut m, 1, 1);
        m.extend_from_slice(&[0; 8]);
        assert!(
            decode_row(&d, &d, &schema(), &m)
                .unwrap_err()
                .contains("wire type")
        );
        // A descriptor field with no column.
        let mut extra = descriptor();
        extra
            .field
            .push(field("nope", 20, Type::Int64, Label::Optional));
        let mut m = Vec::new();
        key(&mut m, 20, 0);
        varint(&mut m, 1);
        let e = decode_row(&extra, &extra, &schema(), &m).unwrap_err();
        assert!(e.contains("extra fields: 'nope'"), "{e}");
    }
}

//! JSON values (insertAll rows, query parameter values) to DataFusion scalars, typed by
//! a BigQuery column.

use std::sync::Arc;

use base64::Engine as _;
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use bigq_codec::value::text;
use datafusion::arrow::datatypes::{DataType, Field, Fields, i256};
use datafusion::scalar::ScalarValue;
use serde_json::Value;

use crate::sql::types::{self, UTC};

/// Why one value did not convert; the message is BigQuery's wording where known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    /// The dotted path of the field.
    pub location: String,
    /// What went wrong.
    pub message: String,
}

fn bad(field: &str, what: &str, v: &Value) -> ValueError {
    let shown = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    ValueError {
        location: field.to_string(),
        message: format!("Cannot convert value to {what} (bad value): {shown}"),
    }
}

fn text_of(v: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match v {
        Value::String(s) => Some(s.as_str().into()),
        Value::Number(n) => Some(n.to_string().into()),
        Value::Bool(b) => Some(b.to_string().into()),
        _ => None,
    }
}

/// The Arrow type of a single (non-repeated) value of `field`.
fn element_field(field: &TableFieldSchema) -> Result<DataType, ValueError> {
    let mut f = field.clone();
    f.mode = None;
    types::arrow_field(&f)
        .map(|f| f.data_type().clone())
        .map_err(|e| ValueError {
            location: field.name.clone(),
            message: e.message,
        })
}

/// Converts a JSON value to a scalar of `field`'s type (REPEATED → a list).
pub fn json_to_scalar(field: &TableFieldSchema, v: &Value) -> Result<ScalarValue, ValueError> {
    if field.mode() == FieldMode::Repeated {
        let elem = element_field(field)?;
        let mut one = field.clone();
        one.mode = None;
        let items = match v {
            Value::Null => Vec::new(),
            Value::Array(items) => items
                .iter()
                .map(|i| json_to_scalar(&one, i))
                .collect::<Result<Vec<_>, _>>()?,
            other => return Err(bad(&field.name, "array", other)),
        };
        return Ok(ScalarValue::List(ScalarValue::new_list_nullable(
            &items, &elem,
        )));
    }
    if v.is_null() {
        if field.mode() == FieldMode::Required {
            return Err(ValueError {
                location: field.name.clone(),
                message: "Missing required field.".to_string(),
            });
        }
        let t = element_field(field)?;
        return ScalarValue::try_new_null(&t).map_err(|e| ValueError {
            location: field.name.clone(),
            message: e.to_string(),
        });
    }
    let name = field.name.as_str();
    Ok(match &field.field_type {
        FieldType::Int64 => {
            let s = text_of(v).ok_or_else(|| bad(name, "integer", v))?;
            let n = match s.parse::<i64>() {
                Ok(n) => n,
                Err(_) => {
                    // 1.0 and 1e3 are integers too, as in BigQuery.
                    let f: f64 = s.parse().map_err(|_| bad(name, "integer", v))?;
                    if f.fract() != 0.0 || !f.is_finite() {
                        return Err(bad(name, "integer", v));
                    }
                    f as i64
                }
            };
            ScalarValue::Int64(Some(n))
        }
        FieldType::Float64 => {
            let s = text_of(v).ok_or_else(|| bad(name, "double", v))?;
            let f = match s.as_ref() {
                "NaN" => f64::NAN,
                "Infinity" | "inf" => f64::INFINITY,
                "-Infinity" | "-inf" => f64::NEG_INFINITY,
                s => s.parse().map_err(|_| bad(name, "double", v))?,
            };
            ScalarValue::Float64(Some(f))
        }
        FieldType::Bool => {
            let b = match v {
                Value::Bool(b) => *b,
                Value::String(s) if s.eq_ignore_ascii_case("true") => true,
                Value::String(s) if s.eq_ignore_ascii_case("false") => false,
                _ => return Err(bad(name, "boolean", v)),
            };
            ScalarValue::Boolean(Some(b))
        }
        FieldType::String | FieldType::Json | FieldType::Geography => match v {
            Value::String(s) => ScalarValue::Utf8(Some(s.clone())),
            Value::Number(_) | Value::Bool(_) if field.field_type == FieldType::String => {
                ScalarValue::Utf8(Some(text_of(v).unwrap_or_default().into_owned()))
            }
            other if field.field_type == FieldType::Json => {
                ScalarValue::Utf8(Some(other.to_string()))
            }
            _ => return Err(bad(name, "string", v)),
        },
        FieldType::Bytes => {
            let s = v.as_str().ok_or_else(|| bad(name, "bytes", v))?;
            let b = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| bad(name, "bytes", v))?;
            ScalarValue::Binary(Some(b))
        }
        FieldType::Numeric => {
            let s = text_of(v).ok_or_else(|| bad(name, "numeric", v))?;
            let n = text::parse_decimal_i128(s.trim().as_bytes(), 9)
                .filter(|n| n.unsigned_abs() < 10u128.pow(38))
                .ok_or_else(|| bad(name, "numeric", v))?;
            ScalarValue::Decimal128(Some(n), 38, 9)
        }
        FieldType::BigNumeric => {
            let s = text_of(v).ok_or_else(|| bad(name, "bignumeric", v))?;
            let n = text::parse_decimal_i256(s.trim().as_bytes(), 38)
                .ok_or_else(|| bad(name, "bignumeric", v))?;
            ScalarValue::Decimal256(Some(i256::from_le_bytes(n.to_le_bytes())), 76, 38)
        }
        FieldType::Date => {
            let s = v.as_str().ok_or_else(|| bad(name, "date", v))?;
            ScalarValue::Date32(Some(
                text::parse_date(s.as_bytes()).ok_or_else(|| bad(name, "date", v))?,
            ))
        }
        FieldType::Time => {
            let s = v.as_str().ok_or_else(|| bad(name, "time", v))?;
            ScalarValue::Time64Microsecond(Some(
                text::parse_time(s.as_bytes()).ok_or_else(|| bad(name, "time", v))?,
            ))
        }
        FieldType::DateTime => {
            let s = v.as_str().ok_or_else(|| bad(name, "datetime", v))?;
            ScalarValue::TimestampMicrosecond(
                Some(text::parse_datetime(s.as_bytes()).ok_or_else(|| bad(name, "datetime", v))?),
                None,
            )
        }
        FieldType::Timestamp => {
            let micros = match v {
                Value::Number(n) => {
                    let secs = n.as_f64().ok_or_else(|| bad(name, "timestamp", v))?;
                    (secs * 1e6).round() as i64
                }
                Value::String(s) => text::parse_timestamp(s.as_bytes())
                    .or_else(|| text::parse_float_seconds_micros(s.as_bytes()))
                    .ok_or_else(|| bad(name, "timestamp", v))?,
                _ => return Err(bad(name, "timestamp", v)),
            };
            ScalarValue::TimestampMicrosecond(Some(micros), Some(Arc::from(UTC)))
        }
        FieldType::Record => {
            let obj = v.as_object().ok_or_else(|| bad(name, "record", v))?;
            for k in obj.keys() {
                if !field.fields.iter().any(|f| &f.name == k) {
                    return Err(ValueError {
                        location: format!("{name}.{k}"),
                        message: "no such field.".to_string(),
                    });
                }
            }
            let mut fields = Vec::with_capacity(field.fields.len());
            let mut arrays = Vec::with_capacity(field.fields.len());
            for sub in &field.fields {
                let sv = json_to_scalar(sub, obj.get(&sub.name).unwrap_or(&Value::Null)).map_err(
                    |mut e| {
                        e.location = format!("{name}.{}", e.location);
                        e
                    },
                )?;
                let f = types::arrow_field(sub).map_err(|e| ValueError {
                    location: sub.name.clone(),
                    message: e.message,
                })?;
                let arr = sv.to_array().map_err(|e| ValueError {
                    location: sub.name.clone(),
                    message: e.to_string(),
                })?;
                fields.push(Arc::new(Field::new(
                    f.name(),
                    arr.data_type().clone(),
                    true,
                )));
                arrays.push(arr);
            }
            let sa =
                datafusion::arrow::array::StructArray::try_new(Fields::from(fields), arrays, None)
                    .map_err(|e| ValueError {
                        location: name.to_string(),
                        message: e.to_string(),
                    })?;
            ScalarValue::Struct(Arc::new(sa))
        }
        other => {
            return Err(ValueError {
                location: name.to_string(),
                message: format!("Unsupported by bigq-emulator: type {other}"),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_integer_names_the_value() {
        let f = TableFieldSchema::new("n", FieldType::Int64);
        let e = json_to_scalar(&f, &json!("not-a-number")).unwrap_err();
        assert_eq!(
            e.message,
            "Cannot convert value to integer (bad value): not-a-number"
        );
        assert_eq!(e.location, "n");
    }

    #[test]
    fn numeric_keeps_nine_digits() {
        let f = TableFieldSchema::new("x", FieldType::Numeric);
        assert_eq!(
            json_to_scalar(&f, &json!("1.5")).unwrap(),
            ScalarValue::Decimal128(Some(1_500_000_000), 38, 9)
        );
    }
}

//! BigQuery types and DataFusion's Arrow types, both ways, RANGE's marked struct among them.
//!
//! Tables store BigQuery's canonical Arrow layout (INT64 as Int64, NUMERIC as
//! Decimal128(38, 9), TIMESTAMP as microseconds in UTC, ...). Query results may come
//! back in whatever type DataFusion chose; [`bq_field_of`] names the BigQuery type
//! for any of them and the row encoder renders them all.

use std::collections::HashMap;
use std::sync::Arc;

use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use datafusion::arrow::datatypes::{DataType, Field, Fields, IntervalUnit, Schema, TimeUnit};
use datafusion::sql::sqlparser::ast::{self, ExactNumberInfo, StructBracketKind};

use crate::error::{BqError, BqResult};

/// The time zone stored on TIMESTAMP columns.
pub const UTC: &str = "UTC";

/// The Arrow type of one BigQuery value of `field` (ignoring REPEATED).
fn element_type(field: &TableFieldSchema) -> BqResult<DataType> {
    Ok(match &field.field_type {
        FieldType::Int64 => DataType::Int64,
        FieldType::Float64 => DataType::Float64,
        FieldType::Numeric => DataType::Decimal128(38, 9),
        FieldType::BigNumeric => DataType::Decimal256(76, 38),
        FieldType::Bool => DataType::Boolean,
        FieldType::String | FieldType::Json | FieldType::Geography => DataType::Utf8,
        FieldType::Bytes => DataType::Binary,
        FieldType::Date => DataType::Date32,
        FieldType::Time => DataType::Time64(TimeUnit::Microsecond),
        FieldType::DateTime => DataType::Timestamp(TimeUnit::Microsecond, None),
        FieldType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        FieldType::Record => {
            if field.fields.is_empty() {
                return Err(BqError::invalid(format!(
                    "Field {} is type RECORD but has no schema",
                    field.name
                )));
            }
            DataType::Struct(arrow_fields(&field.fields)?)
        }
        FieldType::Range => {
            let element = field
                .range_element_type
                .as_ref()
                .map(|r| &r.element_type)
                .ok_or_else(|| {
                    BqError::invalid(format!(
                        "Field {} is type RANGE but has no rangeElementType",
                        field.name
                    ))
                })?;
            let element = match element {
                FieldType::Date => DataType::Date32,
                FieldType::DateTime => DataType::Timestamp(TimeUnit::Microsecond, None),
                FieldType::Timestamp => {
                    DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
                }
                other => {
                    return Err(BqError::invalid(format!(
                        "Field {}: RANGE of {other} is not supported; the element type must be DATE, DATETIME or TIMESTAMP",
                        field.name
                    )));
                }
            };
            range_type(element)
        }
        other => {
            return Err(BqError::invalid(format!(
                "Unsupported by bigq-emulator: column {} of type {other}",
                field.name
            )));
        }
    })
}

/// Arrow field metadata key naming an extension type.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";

/// The extension name BigQuery tags a text column of another SQL type with (JSON,
/// GEOGRAPHY), in Storage Read schemas and in the emulator's own tables, so that a query
/// selecting such a column reports its type rather than STRING.
pub fn sql_type_tag(t: &FieldType) -> Option<&'static str> {
    match t {
        FieldType::Json => Some("google:sqlType:json"),
        FieldType::Geography => Some("google:sqlType:geography"),
        _ => None,
    }
}

/// `field` tagged with the extension name of `t`, if it has one.
pub fn tagged(field: Field, t: &FieldType) -> Field {
    match sql_type_tag(t) {
        Some(tag) => field.with_metadata(HashMap::from([(
            EXTENSION_NAME_KEY.to_string(),
            tag.to_string(),
        )])),
        None => field,
    }
}

/// The SQL type a field's extension tag names, if any.
pub(crate) fn tagged_type(field: &Field) -> Option<FieldType> {
    match field.metadata().get(EXTENSION_NAME_KEY)?.as_str() {
        "google:sqlType:json" => Some(FieldType::Json),
        "google:sqlType:geography" => Some(FieldType::Geography),
        _ => None,
    }
}

/// The Arrow field for a BigQuery column.
pub fn arrow_field(field: &TableFieldSchema) -> BqResult<Field> {
    let t = element_type(field)?;
    Ok(match field.mode() {
        FieldMode::Repeated => Field::new(
            &field.name,
            DataType::List(Arc::new(tagged(
                Field::new("item", t, true),
                &field.field_type,
            ))),
            true,
        ),
        FieldMode::Required => tagged(Field::new(&field.name, t, false), &field.field_type),
        FieldMode::Nullable => tagged(Field::new(&field.name, t, true), &field.field_type),
    })
}

/// The Arrow fields for BigQuery columns.
pub fn arrow_fields(fields: &[TableFieldSchema]) -> BqResult<Fields> {
    fields
        .iter()
        .map(arrow_field)
        .collect::<BqResult<Vec<_>>>()
        .map(Fields::from)
}

/// The Arrow schema for a BigQuery table schema.
pub fn arrow_schema(fields: &[TableFieldSchema]) -> BqResult<Schema> {
    Ok(Schema::new(arrow_fields(fields)?))
}

/// The BigQuery type of an Arrow type (any Arrow type DataFusion may produce).
pub fn bq_type_of(t: &DataType) -> BqResult<FieldType> {
    Ok(match t {
        DataType::Null
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => FieldType::Int64,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => FieldType::Float64,
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) => {
            FieldType::Numeric
        }
        DataType::Decimal256(..) => FieldType::BigNumeric,
        DataType::Boolean => FieldType::Bool,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => FieldType::String,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => FieldType::Bytes,
        DataType::Date32 | DataType::Date64 => FieldType::Date,
        DataType::Time32(_) | DataType::Time64(_) => FieldType::Time,
        DataType::Timestamp(_, None) => FieldType::DateTime,
        DataType::Timestamp(_, Some(_)) => FieldType::Timestamp,
        DataType::Struct(_) if range_element(t).is_some() => FieldType::Range,
        DataType::Struct(_) => FieldType::Record,
        DataType::Interval(IntervalUnit::MonthDayNano) => FieldType::Interval,
        DataType::Dictionary(_, v) => return bq_type_of(v),
        other => {
            return Err(BqError::invalid_query(format!(
                "Unsupported by bigq-emulator: result type {other}"
            )));
        }
    })
}

/// The BigQuery column for an Arrow field of a query result (mode NULLABLE unless
/// REPEATED, as BigQuery reports query result schemas).
pub fn bq_field_of(field: &Field) -> BqResult<TableFieldSchema> {
    let (element, repeated) = match field.data_type() {
        DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _) => {
            (item.as_ref(), true)
        }
        _ => (field, false),
    };
    let t = element.data_type();
    let bq_type = match tagged_type(element) {
        Some(tagged) if matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => {
            tagged
        }
        _ => bq_type_of(t)?,
    };
    let mut out = match range_element(t) {
        Some(element) => TableFieldSchema::range(field.name(), bq_type_of(element)?),
        None => TableFieldSchema::new(field.name(), bq_type),
    };
    if let (DataType::Struct(fields), FieldType::Record) = (t, &out.field_type) {
        out.fields = fields
            .iter()
            .map(|f| bq_field_of(f))
            .collect::<BqResult<_>>()?;
    }
    out.mode = Some(if repeated {
        FieldMode::Repeated
    } else {
        FieldMode::Nullable
    });
    Ok(out)
}

/// The BigQuery schema of a query result.
pub fn bq_schema_of(schema: &Schema) -> BqResult<Vec<TableFieldSchema>> {
    schema.fields().iter().map(|f| bq_field_of(f)).collect()
}

/// The BigQuery column type named by a GoogleSQL type in DDL.
pub fn bq_field_of_sql(name: &str, t: &ast::DataType) -> BqResult<TableFieldSchema> {
    use ast::DataType as D;
    let scalar = |ft| Ok(TableFieldSchema::new(name, ft));
    match t {
        D::Int64 | D::BigInt(_) | D::Int(_) | D::Integer(_) | D::SmallInt(_) | D::TinyInt(_) => {
            scalar(FieldType::Int64)
        }
        D::Float64 | D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => {
            scalar(FieldType::Float64)
        }
        D::Numeric(_) | D::Decimal(_) | D::Dec(_) => scalar(FieldType::Numeric),
        D::BigNumeric(_) | D::BigDecimal(_) => scalar(FieldType::BigNumeric),
        D::Bool | D::Boolean => scalar(FieldType::Bool),
        D::String(_) | D::Varchar(_) | D::Text => scalar(FieldType::String),
        D::Bytes(_) | D::Bytea => scalar(FieldType::Bytes),
        D::Date => scalar(FieldType::Date),
        D::Time(..) => scalar(FieldType::Time),
        D::Datetime(_) => scalar(FieldType::DateTime),
        D::Timestamp(..) => scalar(FieldType::Timestamp),
        D::JSON => scalar(FieldType::Json),
        D::Custom(n, m) if m.is_empty() && n.to_string().eq_ignore_ascii_case("GEOGRAPHY") => {
            scalar(FieldType::Geography)
        }
        D::Custom(n, m) if m.is_empty() && sql_type_element(&n.to_string()).is_some() => {
            let element = sql_type_element(&n.to_string()).unwrap_or("DATE");
            Ok(TableFieldSchema::range(name, FieldType::parse(element)))
        }
        D::Array(def) => {
            let inner = match def {
                ast::ArrayElemTypeDef::AngleBracket(t)
                | ast::ArrayElemTypeDef::SquareBracket(t, _)
                | ast::ArrayElemTypeDef::Parenthesis(t) => t,
                ast::ArrayElemTypeDef::None => {
                    return Err(BqError::invalid_query("ARRAY needs an element type"));
                }
            };
            let mut f = bq_field_of_sql(name, inner)?;
            if f.is_repeated() {
                return Err(BqError::invalid_query(
                    "Arrays of arrays are not supported".to_string(),
                ));
            }
            f.mode = Some(FieldMode::Repeated);
            Ok(f)
        }
        D::Struct(fields, StructBracketKind::AngleBrackets) => {
            let mut sub = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                let n = f
                    .field_name
                    .as_ref()
                    .map(|i| i.value.clone())
                    .unwrap_or_else(|| format!("_field_{}", i + 1));
                sub.push(bq_field_of_sql(&n, &f.field_type)?);
            }
            Ok(TableFieldSchema::record(name, sub))
        }
        other => Err(BqError::invalid_query(format!(
            "Type not found: {other} (unsupported by bigq-emulator)"
        ))),
    }
}

/// The SQL type DataFusion understands for a GoogleSQL type name (used when rewriting
/// CAST targets and typed literals).
pub fn datafusion_sql_type(t: &ast::DataType) -> Option<ast::DataType> {
    use ast::DataType as D;
    Some(match t {
        D::Int64 => D::BigInt(None),
        D::Float64 => D::Double(ExactNumberInfo::None),
        D::Bool => D::Boolean,
        D::String(_) => D::Varchar(None),
        D::Bytes(_) => D::Bytea,
        D::Numeric(ExactNumberInfo::None) | D::Decimal(ExactNumberInfo::None) => {
            D::Decimal(ExactNumberInfo::PrecisionAndScale(38, 9))
        }
        D::BigNumeric(_) | D::BigDecimal(_) => {
            D::Decimal(ExactNumberInfo::PrecisionAndScale(76, 38))
        }
        D::Datetime(_) => D::Timestamp(None, ast::TimezoneInfo::None),
        D::Timestamp(p, ast::TimezoneInfo::None) => D::Timestamp(*p, ast::TimezoneInfo::Tz),
        D::Array(ast::ArrayElemTypeDef::AngleBracket(inner)) => {
            let inner = datafusion_sql_type(inner).unwrap_or_else(|| (**inner).clone());
            D::Array(ast::ArrayElemTypeDef::SquareBracket(Box::new(inner), None))
        }
        D::Struct(fields, bracket) => D::Struct(
            fields
                .iter()
                .map(|f| ast::StructField {
                    field_type: datafusion_sql_type(&f.field_type)
                        .unwrap_or_else(|| f.field_type.clone()),
                    ..f.clone()
                })
                .collect(),
            *bracket,
        ),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// RANGE: a struct of `start` and `end` of the element type (DATE, DATETIME or TIMESTAMP; a
// NULL bound is UNBOUNDED), the layout BigQuery's Storage Read sends, its two fields marked
// in their metadata so that a RANGE is told apart from a user's `STRUCT<start DATE, end
// DATE>` (the mark is part of the Arrow type, so it survives every expression DataFusion
// passes the type through).

pub use bigq_codec::json::encode::{range_element, range_type};

/// The element types a RANGE may have, by their GoogleSQL names.
pub fn element_of_name(name: &str) -> Option<DataType> {
    Some(match name.to_ascii_uppercase().as_str() {
        "DATE" => DataType::Date32,
        "DATETIME" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "TIMESTAMP" => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        _ => return None,
    })
}

/// The RANGE element type a value of type `t` converts to (TIMESTAMP literals may come as
/// nanoseconds).
pub fn canonical_element(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Date32 | DataType::Date64 => Some(DataType::Date32),
        DataType::Timestamp(_, None) => element_of_name("DATETIME"),
        DataType::Timestamp(_, Some(_)) => element_of_name("TIMESTAMP"),
        _ => None,
    }
}

/// The GoogleSQL name of a RANGE element type.
pub fn element_name(t: &DataType) -> &'static str {
    match t {
        DataType::Date32 => "DATE",
        DataType::Timestamp(_, None) => "DATETIME",
        _ => "TIMESTAMP",
    }
}

/// The element type named by a `BIGQ_RANGE_<T>` type name (what the rewrite before parsing
/// writes for `RANGE<T>`), as its BigQuery name.
pub fn sql_type_element(type_name: &str) -> Option<&'static str> {
    let t = type_name.to_ascii_uppercase();
    let el = t.strip_prefix("BIGQ_RANGE_")?;
    element_of_name(el).map(|d| element_name(&d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_scalar_types() {
        for (ft, name) in [
            (FieldType::Int64, "INTEGER"),
            (FieldType::Numeric, "NUMERIC"),
            (FieldType::BigNumeric, "BIGNUMERIC"),
            (FieldType::DateTime, "DATETIME"),
            (FieldType::Timestamp, "TIMESTAMP"),
            (FieldType::Time, "TIME"),
        ] {
            let f = arrow_field(&TableFieldSchema::new("c", ft)).unwrap();
            assert_eq!(bq_field_of(&f).unwrap().field_type.as_str(), name);
        }
    }

    #[test]
    fn repeated_record_maps_to_list_of_struct() {
        let f = TableFieldSchema::record("r", vec![TableFieldSchema::new("a", FieldType::Int64)])
            .with_mode(FieldMode::Repeated);
        let back = bq_field_of(&arrow_field(&f).unwrap()).unwrap();
        assert!(back.is_repeated());
        assert_eq!(back.field_type, FieldType::Record);
        assert_eq!(back.fields[0].name, "a");
    }
}

//! Storage API table schemas (what GetWriteStream and CreateWriteStream report) as bigq's.

use gcloud_sdk::google::cloud::bigquery::storage::v1::{self as storage, table_field_schema};

use crate::error::Result;
use crate::schema::{FieldMode, FieldType, RangeElementType, TableFieldSchema, TableSchema};

/// A Storage API table schema as bigq's.
pub(crate) fn from_storage_schema(s: &storage::TableSchema) -> Result<TableSchema> {
    Ok(TableSchema::new(
        s.fields
            .iter()
            .map(from_storage_field)
            .collect::<Result<_>>()?,
    ))
}

fn from_storage_type(t: i32) -> FieldType {
    use table_field_schema::Type;
    match Type::try_from(t) {
        Ok(Type::String) => FieldType::String,
        Ok(Type::Int64) => FieldType::Int64,
        Ok(Type::Double) => FieldType::Float64,
        Ok(Type::Struct) => FieldType::Record,
        Ok(Type::Bytes) => FieldType::Bytes,
        Ok(Type::Bool) => FieldType::Bool,
        Ok(Type::Timestamp) => FieldType::Timestamp,
        Ok(Type::Date) => FieldType::Date,
        Ok(Type::Time) => FieldType::Time,
        Ok(Type::Datetime) => FieldType::DateTime,
        Ok(Type::Geography) => FieldType::Geography,
        Ok(Type::Numeric) => FieldType::Numeric,
        Ok(Type::Bignumeric) => FieldType::BigNumeric,
        Ok(Type::Interval) => FieldType::Interval,
        Ok(Type::Json) => FieldType::Json,
        Ok(Type::Range) => FieldType::Range,
        Ok(Type::Unspecified) | Err(_) => FieldType::Unknown(format!("storage type {t}")),
    }
}

fn from_storage_field(f: &storage::TableFieldSchema) -> Result<TableFieldSchema> {
    use table_field_schema::Mode;
    let mut out = TableFieldSchema::new(&f.name, from_storage_type(f.r#type));
    out.mode = Some(match Mode::try_from(f.mode) {
        Ok(Mode::Required) => FieldMode::Required,
        Ok(Mode::Repeated) => FieldMode::Repeated,
        _ => FieldMode::Nullable,
    });
    out.fields = f
        .fields
        .iter()
        .map(from_storage_field)
        .collect::<Result<_>>()?;
    out.range_element_type = f.range_element_type.as_ref().map(|e| RangeElementType {
        element_type: from_storage_type(e.r#type),
    });
    out.max_length = (f.max_length > 0).then_some(f.max_length);
    out.precision = (f.precision > 0).then_some(f.precision);
    out.scale = (f.scale > 0).then_some(f.scale);
    if !f.default_value_expression.is_empty() {
        out.default_value_expression = Some(f.default_value_expression.clone());
    }
    Ok(out)
}

//! The scan table's schema for Storage Write, as bigq and the `bigquery` crate (0.9) each
//! describe it, and the encode loops both `benches/storage_write_encode.rs` and
//! `examples/profile_arrow_serde.rs` (`write-*`) time.

use std::hint::black_box;

use arrow_schema::{DataType, FieldRef};
use bigq_codec::proto::{NumericEncoding, ProtoOptions, RowEncoder, WriteSchema};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigquery::{
    BigQueryFieldMode, BigQueryFieldSchema, BigQueryFieldType, BigQueryTableSchema,
    BigQueryWriteCodecBench,
};
use serde::Serialize;

use crate::scan_table;

/// The scan table's schema (`scan_table::schema`) as bigq's: a non-nullable column is
/// REQUIRED, a list REPEATED, a struct a RECORD.
pub fn bigq_schema() -> TableSchema {
    TableSchema::new(
        scan_table::schema()
            .fields()
            .iter()
            .map(bigq_field)
            .collect(),
    )
}

fn bigq_field(f: &FieldRef) -> TableFieldSchema {
    let scalar = |t: &DataType| match t {
        DataType::Int64 => FieldType::Int64,
        DataType::Float64 => FieldType::Float64,
        DataType::Utf8 => FieldType::String,
        DataType::Boolean => FieldType::Bool,
        DataType::Decimal128(..) => FieldType::Numeric,
        DataType::Date32 => FieldType::Date,
        DataType::Timestamp(..) => FieldType::Timestamp,
        other => unreachable!("{other} is not in the scan table"),
    };
    match f.data_type() {
        DataType::Struct(fields) => {
            TableFieldSchema::record(f.name(), fields.iter().map(bigq_field).collect())
        }
        DataType::List(item) => {
            TableFieldSchema::new(f.name(), scalar(item.data_type())).with_mode(FieldMode::Repeated)
        }
        t if !f.is_nullable() => {
            TableFieldSchema::new(f.name(), scalar(t)).with_mode(FieldMode::Required)
        }
        t => TableFieldSchema::new(f.name(), scalar(t)),
    }
}

fn bigquery_type(f: &TableFieldSchema) -> BigQueryFieldType {
    match &f.field_type {
        FieldType::Int64 => BigQueryFieldType::Int64,
        FieldType::Float64 => BigQueryFieldType::Float64,
        FieldType::String => BigQueryFieldType::String { max_length: None },
        FieldType::Bool => BigQueryFieldType::Bool,
        FieldType::Numeric => BigQueryFieldType::Numeric(None),
        FieldType::Date => BigQueryFieldType::Date,
        FieldType::Timestamp => BigQueryFieldType::Timestamp,
        FieldType::Record => {
            BigQueryFieldType::Struct(f.fields.iter().map(bigquery_field).collect())
        }
        other => unreachable!("{other} is not in the scan table"),
    }
}

fn bigquery_field(f: &TableFieldSchema) -> BigQueryFieldSchema {
    BigQueryFieldSchema {
        name: f.name.clone(),
        field_type: bigquery_type(f),
        mode: match f.mode() {
            FieldMode::Nullable => BigQueryFieldMode::Nullable,
            FieldMode::Required => BigQueryFieldMode::Required,
            FieldMode::Repeated => BigQueryFieldMode::Repeated,
        },
        description: None,
        default_value_expression: None,
    }
}

/// The same schema as the `bigquery` crate's.
pub fn bigquery_schema() -> BigQueryTableSchema {
    BigQueryTableSchema {
        fields: bigq_schema().fields.iter().map(bigquery_field).collect(),
    }
}

pub fn bigq_encoder(numeric: NumericEncoding) -> RowEncoder {
    let options = ProtoOptions::default().with_numeric(numeric);
    RowEncoder::new(WriteSchema::with_options(&bigq_schema(), options).unwrap())
}

/// Bytes of a row in `ProtoRows.serialized_rows`: field key, length, row.
pub fn framed(len: usize) -> usize {
    let mut varint = 1;
    while len >> (7 * varint) != 0 {
        varint += 1;
    }
    1 + varint + len
}

/// Encodes every row into a reused buffer; returns the framed bytes.
#[inline(never)]
pub fn encode_bigq<T: Serialize>(enc: &mut RowEncoder, rows: &[T], out: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for row in rows {
        out.clear();
        enc.encode(row, out).unwrap();
        bytes += framed(black_box(&*out).len());
    }
    bytes
}

#[inline(never)]
pub fn encode_bigquery<T: Serialize>(
    enc: &mut BigQueryWriteCodecBench,
    rows: &[T],
    out: &mut Vec<u8>,
) -> usize {
    let mut bytes = 0;
    for row in rows {
        out.clear();
        enc.encode(row, out).unwrap();
        bytes += framed(black_box(&*out).len());
    }
    bytes
}

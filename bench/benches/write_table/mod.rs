//! The scan table's schema for Storage Write, as bigq and the `bigquery` crate (0.9) each
//! describe it, and the encode loops both `benches/storage_write_encode.rs` and
//! `examples/profile_write_encode.rs` time.

use std::hint::black_box;

use bigq_codec::proto::{NumericEncoding, ProtoOptions, RowEncoder, WriteSchema};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigquery::{
    BigQueryFieldMode, BigQueryFieldSchema, BigQueryFieldType, BigQueryTableSchema,
    BigQueryWriteCodecBench,
};
use serde::Serialize;

const COLUMNS: &[(&str, FieldType)] = &[
    ("id", FieldType::Int64),
    ("user_id", FieldType::Int64),
    ("score", FieldType::Float64),
    ("ratio", FieldType::Float64),
    ("name", FieldType::String),
    ("city", FieldType::String),
    ("active", FieldType::Bool),
    ("verified", FieldType::Bool),
    ("amount", FieldType::Numeric),
    ("discount", FieldType::Numeric),
    ("created", FieldType::Date),
    ("birthday", FieldType::Date),
    ("created_at", FieldType::Timestamp),
    ("updated_at", FieldType::Timestamp),
    ("quantity", FieldType::Int64),
    ("weight", FieldType::Float64),
    ("comment", FieldType::String),
    ("rank", FieldType::Int64),
];

pub fn bigq_schema() -> TableSchema {
    let mut fields: Vec<TableFieldSchema> = COLUMNS
        .iter()
        .map(|(n, t)| TableFieldSchema::new(*n, t.clone()))
        .collect();
    fields[0] = fields[0].clone().with_mode(FieldMode::Required);
    fields.push(TableFieldSchema::record(
        "info",
        vec![
            TableFieldSchema::new("a", FieldType::Int64),
            TableFieldSchema::new("b", FieldType::String),
            TableFieldSchema::new("c", FieldType::Float64),
        ],
    ));
    fields.push(TableFieldSchema::new("tags", FieldType::Int64).with_mode(FieldMode::Repeated));
    TableSchema::new(fields)
}

fn bigquery_type(t: &FieldType) -> BigQueryFieldType {
    match t {
        FieldType::Int64 => BigQueryFieldType::Int64,
        FieldType::Float64 => BigQueryFieldType::Float64,
        FieldType::String => BigQueryFieldType::String { max_length: None },
        FieldType::Bool => BigQueryFieldType::Bool,
        FieldType::Numeric => BigQueryFieldType::Numeric(None),
        FieldType::Date => BigQueryFieldType::Date,
        FieldType::Timestamp => BigQueryFieldType::Timestamp,
        other => unreachable!("{other} is not in the scan table"),
    }
}

fn bigquery_field(
    name: &str,
    field_type: BigQueryFieldType,
    mode: BigQueryFieldMode,
) -> BigQueryFieldSchema {
    BigQueryFieldSchema {
        name: name.to_string(),
        field_type,
        mode,
        description: None,
        default_value_expression: None,
    }
}

pub fn bigquery_schema() -> BigQueryTableSchema {
    let mut fields: Vec<BigQueryFieldSchema> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            let mode = if i == 0 {
                BigQueryFieldMode::Required
            } else {
                BigQueryFieldMode::Nullable
            };
            bigquery_field(n, bigquery_type(t), mode)
        })
        .collect();
    let nullable = BigQueryFieldMode::Nullable;
    fields.push(bigquery_field(
        "info",
        BigQueryFieldType::Struct(vec![
            bigquery_field("a", BigQueryFieldType::Int64, nullable),
            bigquery_field(
                "b",
                BigQueryFieldType::String { max_length: None },
                nullable,
            ),
            bigquery_field("c", BigQueryFieldType::Float64, nullable),
        ]),
        nullable,
    ));
    fields.push(bigquery_field(
        "tags",
        BigQueryFieldType::Int64,
        BigQueryFieldMode::Repeated,
    ));
    BigQueryTableSchema { fields }
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

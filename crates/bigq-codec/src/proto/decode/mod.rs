//! Protobuf rows as the Storage Write API receives them, decoded straight into Arrow.
//!
//! A [`RowsDecoder`] is compiled once per (writer `DescriptorProto`, table schema) pair and
//! kept by the caller (the emulator keeps one per write stream): each descriptor field is
//! resolved to its table column (by name, case-insensitively) and each column gets a builder
//! in the Arrow layout the caller gives (see `leaf` and `message`). Decoding a request then walks each serialized row once, with proto2
//! semantics:
//!
//! - an absent field is NULL (an empty array if REPEATED; an error if REQUIRED), or the
//!   column's default value where the request's `missing_value_interpretations` ask for it;
//! - the last occurrence of a non-repeated field wins; repeated fields accumulate, packed or
//!   not; fields the descriptor does not declare are skipped;
//! - RECORD columns are nested messages, decoded by their own compiled message.
//!
//! Every BigQuery type takes its Storage Write encodings: INT64 from any integer type,
//! FLOAT64 from double or float, BOOL, STRING, BYTES, NUMERIC/BIGNUMERIC as decimal text
//! (`string`) or packed two's-complement (`bytes`), DATE as `int32` days, TIMESTAMP as
//! `int64` microseconds, DATETIME/TIME as text or packed civil time (`int64`, see `civil`),
//! JSON and GEOGRAPHY (WKT) as text.
//!
//! A row that does not fit is an error naming the row's column path and value; one bad row
//! fails the whole request (nothing of it is appended), with an error for every bad row.

mod civil;
mod leaf;
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// not yet audited for the no-panic rule
mod message;
#[cfg(test)]
mod tests;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use prost_types::DescriptorProto;

use self::message::{Column, Msg};
use crate::schema::TableFieldSchema;

/// Why a request's rows were not decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Rows that do not fit the table: (row index, message naming the column and value).
    Rows(Vec<(usize, String)>),
    /// The rows decoded but do not make a batch of the table's schema (a bug).
    Batch(String),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Rows(rows) => {
                f.write_str("rows do not fit the table:")?;
                for (i, e) in rows {
                    write!(f, " row {i}: {e};")?;
                }
                Ok(())
            }
            DecodeError::Batch(e) => write!(f, "decoded rows do not make a batch: {e}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// A writer descriptor compiled against a table schema: serialized rows in, a
/// [`RecordBatch`] in the table's Arrow schema out.
pub struct RowsDecoder {
    root: Msg,
    schema: SchemaRef,
    columns: Vec<TableFieldSchema>,
}

impl std::fmt::Debug for RowsDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowsDecoder")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// Why a descriptor does not compile against a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// A top-level descriptor field has no column of its name.
    ExtraField(String),
    /// The table has a column the decoder cannot fill.
    Unsupported(String),
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::ExtraField(name) => write!(
                f,
                "Input schema has more fields than BigQuery schema, extra fields: '{name}'"
            ),
            CompileError::Unsupported(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for CompileError {}

impl RowsDecoder {
    /// Compiles the writer's `desc` for a table with BigQuery columns `columns` stored
    /// as `schema`.
    pub fn new(
        desc: &DescriptorProto,
        columns: &[TableFieldSchema],
        schema: SchemaRef,
    ) -> Result<RowsDecoder, CompileError> {
        if let Some(extra) = desc.field.iter().find(|f| {
            !columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(f.name()))
        }) {
            return Err(CompileError::ExtraField(extra.name().to_string()));
        }
        let root = Msg::compile(desc, desc, columns, schema.fields(), "")
            .map_err(CompileError::Unsupported)?;
        Ok(RowsDecoder {
            root,
            schema,
            columns: columns.to_vec(),
        })
    }

    /// Whether this decoder was compiled for a table of these columns.
    pub fn is_for(&self, columns: &[TableFieldSchema], schema: &SchemaRef) -> bool {
        (std::sync::Arc::ptr_eq(&self.schema, schema) || self.schema == *schema)
            && self.columns == columns
    }

    /// Decodes `rows` into one batch. `fill` gives, per top-level column, the text value
    /// an absent field takes (BigQuery's `DEFAULT_VALUE` interpretation); `None` or a
    /// shorter slice means NULL. After an error the decoder must not be reused.
    pub fn decode(
        &mut self,
        rows: &[Vec<u8>],
        fill: &[Option<Box<str>>],
    ) -> Result<RecordBatch, DecodeError> {
        let mut errors = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if let Err(e) = self.root.decode(row, fill) {
                errors.push((i, e));
            }
        }
        if !errors.is_empty() {
            return Err(DecodeError::Rows(errors));
        }
        let arrays = self
            .root
            .cols
            .iter_mut()
            .map(Column::finish)
            .collect::<Result<Vec<_>, _>>()
            .map_err(DecodeError::Batch)?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)
            .map_err(|e| DecodeError::Batch(e.to_string()))
    }
}

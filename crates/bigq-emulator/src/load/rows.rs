//! What the text formats share: rows of typed values gathered into a batch in the table's
//! Arrow layout, and the bad records counted against `maxBadRecords`.

use std::sync::Arc;

use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::scalar::ScalarValue;
use serde_json::{Value, json};

use super::options::Format;
use crate::error::BqError;

/// One record BigQuery could not read: where, and why.
#[derive(Clone, Debug)]
pub struct BadRecord {
    /// The file's URI.
    pub uri: String,
    /// The record's first line, from 1.
    pub line: u64,
    /// The byte offset of the record's first line.
    pub offset: u64,
    /// What was wrong (BigQuery's wording, without the "Error while reading data" lead).
    pub message: String,
}

impl BadRecord {
    /// The full message, as BigQuery's `errors[]` entries word it.
    pub fn full_message(&self) -> String {
        format!(
            "Error while reading data, error message: {} File: {}; line_number: {} byte_offset_to_start_of_line: {}",
            self.message, self.uri, self.line, self.offset
        )
    }

    /// The `errors[]` entry of a job.
    pub fn to_error_proto(&self) -> Value {
        json!({"reason": "invalid", "location": self.uri, "message": self.full_message()})
    }
}

/// The bad records of one load, across its files, against `maxBadRecords`.
#[derive(Debug)]
pub struct BadRecords {
    format: Format,
    max: u64,
    /// The records skipped so far.
    pub records: Vec<BadRecord>,
}

impl BadRecords {
    /// None yet; at most `max` allowed.
    pub fn new(format: Format, max: u64) -> BadRecords {
        BadRecords {
            format,
            max,
            records: Vec::new(),
        }
    }

    /// Counts one more; past the limit, BigQuery's "too many errors" error, which names the
    /// rows read so far (`rows`) and the first bad record's line and error.
    pub fn push(&mut self, bad: BadRecord, rows: u64) -> Result<(), BqError> {
        self.records.push(bad);
        if self.records.len() as u64 <= self.max {
            return Ok(());
        }
        let first = &self.records[0];
        Err(BqError::invalid(format!(
            "Error while reading data, error message: {} table encountered too many errors, giving up. Rows: {rows}; errors: {}. Please look into the errors[] collection for more details. File: {}; Row: {}; Error: {}",
            self.format.table_word(),
            self.records.len(),
            first.uri,
            first.line,
            first.message
        ))
        .with_location(first.uri.clone()))
    }
}

/// Rows of typed values, a column each, for one batch.
#[derive(Debug)]
pub struct RowsBuilder {
    schema: SchemaRef,
    columns: Vec<Vec<ScalarValue>>,
}

impl RowsBuilder {
    /// An empty builder for a table whose Arrow schema is `schema`.
    pub fn new(schema: SchemaRef) -> RowsBuilder {
        let columns = vec![Vec::new(); schema.fields().len()];
        RowsBuilder { schema, columns }
    }

    /// Adds one row, a value per column.
    pub fn push(&mut self, row: Vec<ScalarValue>) {
        for (c, v) in self.columns.iter_mut().zip(row) {
            c.push(v);
        }
    }

    /// The rows so far.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    /// The rows as one batch in the table's layout (None when there are none).
    pub fn finish(self) -> Result<Option<RecordBatch>, BqError> {
        if self.rows() == 0 {
            return Ok(None);
        }
        let arrays = self
            .columns
            .into_iter()
            .zip(self.schema.fields())
            .map(|(vals, f)| {
                let a = ScalarValue::iter_to_array(vals)
                    .map_err(|e| BqError::internal(format!("column {}: {e}", f.name())))?;
                if a.data_type() == f.data_type() {
                    Ok(a)
                } else {
                    cast(&a, f.data_type())
                        .map_err(|e| BqError::internal(format!("column {}: {e}", f.name())))
                }
            })
            .collect::<Result<Vec<_>, BqError>>()?;
        RecordBatch::try_new(Arc::clone(&self.schema), arrays)
            .map(Some)
            .map_err(|e| BqError::internal(format!("load: {e}")))
    }
}

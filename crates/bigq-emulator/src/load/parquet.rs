//! Parquet files, read by the `parquet` crate's Arrow reader: the file's own schema
//! describes a new table, and its columns are matched by name and cast to an existing one.

use bigq_codec::schema::{FieldMode, TableFieldSchema};
use bytes::Bytes;
use datafusion::arrow::array::{ArrayRef, new_null_array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::BqError;
use crate::sql::types;

fn read_error(uri: &str, e: impl std::fmt::Display) -> BqError {
    BqError::invalid(format!(
        "Error while reading data, error message: Failed to read Parquet file {uri}: {e}"
    ))
    .with_location(uri.to_string())
}

/// The table a Parquet file describes (its columns as BigQuery maps Parquet's types).
pub fn detect(bytes: &Bytes, uri: &str) -> Result<Vec<TableFieldSchema>, BqError> {
    let b =
        ParquetRecordBatchReaderBuilder::try_new(bytes.clone()).map_err(|e| read_error(uri, e))?;
    let mut fields = types::bq_schema_of(b.schema())?;
    for (f, a) in fields.iter_mut().zip(b.schema().fields()) {
        if f.mode == Some(FieldMode::Nullable) {
            f.mode = (!a.is_nullable()).then_some(FieldMode::Required);
        }
    }
    Ok(fields)
}

/// Reads a Parquet file into `schema`'s layout: columns by name (any case), cast to the
/// table's types; a column the table lacks, or a REQUIRED one the file lacks, is an error
/// naming it. Answers the batches and the rows read.
pub fn decode(
    bytes: Bytes,
    uri: &str,
    fields: &[TableFieldSchema],
    schema: SchemaRef,
) -> Result<(Vec<RecordBatch>, u64), BqError> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .and_then(|b| b.build())
        .map_err(|e| read_error(uri, e))?;
    let mut out = Vec::new();
    let mut rows = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| read_error(uri, e))?;
        let file = batch.schema();
        if let Some(extra) = file
            .fields()
            .iter()
            .find(|c| !fields.iter().any(|f| f.name.eq_ignore_ascii_case(c.name())))
        {
            return Err(BqError::invalid(format!(
                "Provided Schema does not match Table. Cannot add fields (field: {})",
                extra.name()
            )));
        }
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(fields.len());
        for (f, target) in fields.iter().zip(schema.fields()) {
            let found = file
                .fields()
                .iter()
                .position(|c| c.name().eq_ignore_ascii_case(&f.name));
            let col = match found {
                Some(i) => {
                    let c = batch.column(i);
                    if c.data_type() == target.data_type() {
                        c.clone()
                    } else {
                        cast(c, target.data_type()).map_err(|e| {
                            BqError::invalid(format!(
                                "Error while reading data, error message: Parquet column '{}' has type {} which does not match the target type {} of field {}: {e} File: {uri}",
                                f.name,
                                c.data_type(),
                                f.field_type.as_str(),
                                f.name
                            ))
                        })?
                    }
                }
                None if f.mode() == FieldMode::Required => {
                    return Err(BqError::invalid(format!(
                        "Error while reading data, error message: Required field {} cannot be null (the Parquet file {uri} has no such column)",
                        f.name
                    )));
                }
                None => new_null_array(target.data_type(), batch.num_rows()),
            };
            if f.mode() == FieldMode::Required && col.null_count() > 0 {
                return Err(BqError::invalid(format!(
                    "Error while reading data, error message: Required field {} cannot be null File: {uri}",
                    f.name
                )));
            }
            cols.push(col);
        }
        rows += batch.num_rows() as u64;
        out.push(
            RecordBatch::try_new(schema.clone(), cols)
                .map_err(|e| BqError::internal(format!("load of {uri}: {e}")))?,
        );
    }
    Ok((out, rows))
}

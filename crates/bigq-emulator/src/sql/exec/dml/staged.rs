//! What a DML statement leaves its table as before it commits, and the row picking both
//! the statement's sink and MERGE build it with.

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::compute::interleave;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::Result;

use bigq_codec::schema::FieldMode;

use crate::catalog::Table;
use crate::error::{BqError, BqResult};
use crate::sql::exec::output::DmlStats;

/// What a statement leaves the table as, before it commits.
#[derive(Debug, Default)]
pub(super) struct Staged {
    pub batches: Vec<RecordBatch>,
    pub stats: DmlStats,
}

/// One batch of `schema` whose row `k` is row `picks[k].1` of batch `sources[picks[k].0]`.
pub(super) fn pick_rows(
    schema: &SchemaRef,
    sources: &[&RecordBatch],
    picks: &[(usize, usize)],
) -> Result<RecordBatch> {
    let cols = (0..schema.fields().len())
        .map(|c| {
            let arrays = sources
                .iter()
                .map(|b| b.column(c).as_ref())
                .collect::<Vec<&dyn Array>>();
            Ok(interleave(&arrays, picks)?)
        })
        .collect::<Result<Vec<ArrayRef>>>()?;
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

/// BigQuery's error when a REQUIRED column of `table` holds a NULL in `batches`.
pub(super) fn check_required(table: &Table, batches: &[RecordBatch]) -> BqResult<()> {
    for (i, f) in table.schema.iter().enumerate() {
        if f.mode() == FieldMode::Required && batches.iter().any(|b| b.column(i).null_count() > 0) {
            return Err(BqError::invalid_query(format!(
                "Required field {} cannot be null",
                f.name
            )));
        }
    }
    Ok(())
}

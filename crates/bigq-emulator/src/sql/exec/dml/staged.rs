//! What a DML statement leaves its table as before it commits, and the row picking both
//! the statement's sink and MERGE build it with.

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::compute::interleave;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::Result;

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

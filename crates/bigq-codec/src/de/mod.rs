//! Arrow to serde (temporary until the decoder lands).
use arrow_array::RecordBatch;
use serde::de::DeserializeOwned;

use crate::CodecError;

/// Decodes every row of `batch` into `out`.
pub fn extend_from_record_batch<T: DeserializeOwned>(_batch: &RecordBatch, _out: &mut Vec<T>, _row_offset: u64) -> Result<(), CodecError> {
    Err(CodecError::new(crate::CodecErrorKind::Deserialize, "not yet"))
}

//! What the emulator's scalar UDFs share: their arguments as arrays of
//! one length, and their result as a scalar when every argument was one.

use datafusion::arrow::array::ArrayRef;
use datafusion::common::{Result as DfResult, ScalarValue};
use datafusion::logical_expr::ColumnarValue;

/// The arguments as arrays of one length (scalars repeated), and that length.
pub(crate) fn arrays(args: &[ColumnarValue]) -> DfResult<(Vec<ArrayRef>, usize)> {
    let arrays = ColumnarValue::values_to_arrays(args)?;
    let rows = arrays.first().map_or(1, |a| a.len());
    Ok((arrays, rows))
}

/// `out` as the function's result: a scalar when every argument was a scalar.
pub(crate) fn result(out: ArrayRef, args: &[ColumnarValue]) -> DfResult<ColumnarValue> {
    Ok(
        if args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_))) {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
        } else {
            ColumnarValue::Array(out)
        },
    )
}

//! A table's rows carried over to a changed schema: columns matched by name (nested ones
//! too), new columns NULL (or empty arrays), relaxed modes, widened types cast.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, StructArray, new_null_array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, FieldRef, Fields, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;

use crate::error::{BqError, BqResult};

/// `batches` in the shape of `to`: each of `to`'s columns from the batch's column of the
/// same name, or NULLs when the batch has none.
pub fn reshape(batches: &[RecordBatch], to: &SchemaRef) -> BqResult<Vec<RecordBatch>> {
    batches
        .iter()
        .map(|b| {
            let cols = to
                .fields()
                .iter()
                .map(|f| match b.schema().index_of(f.name()) {
                    Ok(i) => column(b.column(i), f),
                    Err(_) => Ok(new_null_array(f.data_type(), b.num_rows())),
                })
                .collect::<BqResult<Vec<_>>>()?;
            RecordBatch::try_new(to.clone(), cols).map_err(|e| {
                BqError::internal(format!("bigq-emulator cannot reshape the table: {e}"))
            })
        })
        .collect()
}

fn column(a: &ArrayRef, to: &FieldRef) -> BqResult<ArrayRef> {
    if a.data_type() == to.data_type() {
        return Ok(a.clone());
    }
    match (a.data_type(), to.data_type()) {
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = a.as_struct();
            Ok(Arc::new(structure(s, fields)?))
        }
        (DataType::List(_), DataType::List(item)) => {
            let l = a.as_list::<i32>();
            let values = column(l.values(), item)?;
            let out = ListArray::try_new(
                item.clone(),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )
            .map_err(|e| BqError::internal(format!("column {}: {e}", to.name())))?;
            Ok(Arc::new(out))
        }
        _ => cast(a, to.data_type()).map_err(|e| {
            BqError::invalid_query(format!(
                "Column {} cannot be converted to its new type: {e}",
                to.name()
            ))
        }),
    }
}

fn structure(s: &StructArray, fields: &Fields) -> BqResult<StructArray> {
    let children = fields
        .iter()
        .map(|f| match s.column_by_name(f.name()) {
            Some(c) => column(c, f),
            None => Ok(new_null_array(f.data_type(), s.len())),
        })
        .collect::<BqResult<Vec<_>>>()?;
    StructArray::try_new(fields.clone(), children, s.nulls().cloned())
        .map_err(|e| BqError::internal(format!("bigq-emulator cannot reshape a RECORD: {e}")))
}

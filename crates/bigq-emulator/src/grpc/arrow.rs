//! Arrow as the Storage Read API serves it: BigQuery's Arrow schema for a table schema and
//! the catalog's batches conformed to it, encoded as Arrow IPC messages by bigq-codec.

use std::sync::Arc;

use bigq_codec::ipc::CompressionType;
pub use bigq_codec::ipc::IpcEncoder;
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, StructArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;

use crate::error::{BqError, BqResult};
use crate::sql::types;

/// The Arrow field BigQuery's Storage Read API gives a column: nullable unless REQUIRED,
/// REPEATED as a non-null list of non-null items, JSON and GEOGRAPHY as strings tagged
/// with an extension name.
pub fn wire_field(field: &TableFieldSchema) -> BqResult<Field> {
    let element = match &field.field_type {
        FieldType::Record => {
            let children = field
                .fields
                .iter()
                .map(wire_field)
                .collect::<BqResult<Vec<_>>>()?;
            Field::new(&field.name, DataType::Struct(Fields::from(children)), true)
        }
        FieldType::Json | FieldType::Geography => types::tagged(
            Field::new(&field.name, DataType::Utf8, true),
            &field.field_type,
        ),
        _ => {
            // The column as a single value (a RANGE keeps its element type).
            let mut scalar = TableFieldSchema::new(&field.name, field.field_type.clone());
            scalar.range_element_type = field.range_element_type.clone();
            types::arrow_field(&scalar)?
        }
    };
    Ok(match field.mode() {
        FieldMode::Repeated => {
            let item = Field::new("item", element.data_type().clone(), false)
                .with_metadata(element.metadata().clone());
            Field::new(&field.name, DataType::List(Arc::new(item)), false)
        }
        FieldMode::Required => element.with_nullable(false),
        FieldMode::Nullable => element.with_nullable(true),
    })
}

/// The Arrow schema of a read session over these columns.
pub fn wire_schema(fields: &[TableFieldSchema]) -> BqResult<SchemaRef> {
    let fields = fields
        .iter()
        .map(wire_field)
        .collect::<BqResult<Vec<_>>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

fn conform_error(field: &Field, what: impl std::fmt::Display) -> BqError {
    BqError::internal(format!(
        "bigq-emulator cannot serve column {} as {}: {what}",
        field.name(),
        field.data_type()
    ))
}

/// One column in the wire layout: struct children picked by name (so a projected RECORD
/// keeps only its selected fields), nullability and metadata from `to`.
fn conform_array(array: &ArrayRef, to: &Field) -> BqResult<ArrayRef> {
    match to.data_type() {
        DataType::List(item) => {
            let list = array
                .as_list_opt::<i32>()
                .ok_or_else(|| conform_error(to, format!("found {}", array.data_type())))?;
            let values = conform_array(list.values(), item)?;
            // BigQuery has no NULL arrays (an absent array is empty): drop the validity.
            let list = ListArray::try_new(item.clone(), list.offsets().clone(), values, None)
                .map_err(|e| conform_error(to, e))?;
            Ok(Arc::new(list))
        }
        DataType::Struct(fields) => {
            let st = array
                .as_struct_opt()
                .ok_or_else(|| conform_error(to, format!("found {}", array.data_type())))?;
            let children = fields
                .iter()
                .map(|f| {
                    let child = st
                        .column_by_name(f.name())
                        .ok_or_else(|| conform_error(to, format!("no field {}", f.name())))?;
                    conform_array(child, f)
                })
                .collect::<BqResult<Vec<_>>>()?;
            let st = StructArray::try_new(fields.clone(), children, st.nulls().cloned())
                .map_err(|e| conform_error(to, e))?;
            Ok(Arc::new(st))
        }
        t if t == array.data_type() => Ok(array.clone()),
        t => cast(array, t).map_err(|e| conform_error(to, e)),
    }
}

/// A batch of the catalog's layout (columns named as in `schema`, in any order, possibly
/// with more struct fields than selected) in the wire layout of `schema`.
pub fn conform_batch(batch: &RecordBatch, schema: &SchemaRef) -> BqResult<RecordBatch> {
    let columns = schema
        .fields()
        .iter()
        .map(|f: &FieldRef| {
            let col = batch
                .column_by_name(f.name())
                .ok_or_else(|| conform_error(f, "missing from the rows"))?;
            conform_array(col, f)
        })
        .collect::<BqResult<Vec<_>>>()?;
    RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| BqError::internal(format!("bigq-emulator cannot build a batch: {e}")))
}

/// Encodes the session's schema and its batches as BigQuery sends them (bigq-codec's
/// encoder), a failure being the emulator's own.
pub fn ipc_encoder(compression: Option<CompressionType>) -> BqResult<IpcEncoder> {
    IpcEncoder::new(compression).map_err(|e| BqError::internal(e.to_string()))
}

/// One record batch as an IPC message.
pub fn encode_batch(encoder: &IpcEncoder, batch: &RecordBatch) -> BqResult<Vec<u8>> {
    encoder
        .batch(batch)
        .map_err(|e| BqError::internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::types::EXTENSION_NAME_KEY;
    use arrow_ipc::reader::StreamReader;
    use datafusion::arrow::array::{Int64Array, StringArray};

    fn schema() -> Vec<TableFieldSchema> {
        vec![
            TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
            TableFieldSchema::new("j", FieldType::Json),
            TableFieldSchema::new("tags", FieldType::String).with_mode(FieldMode::Repeated),
            TableFieldSchema::record(
                "st",
                vec![
                    TableFieldSchema::new("a", FieldType::Int64),
                    TableFieldSchema::new("b", FieldType::String),
                ],
            ),
        ]
    }

    #[test]
    fn wire_schema_follows_bigquery() {
        let s = wire_schema(&schema()).unwrap();
        assert!(!s.field(0).is_nullable());
        assert_eq!(
            s.field(1).metadata().get(EXTENSION_NAME_KEY).unwrap(),
            "google:sqlType:json"
        );
        let DataType::List(item) = s.field(2).data_type() else {
            panic!("{:?}", s.field(2))
        };
        assert!(!s.field(2).is_nullable() && !item.is_nullable());
        assert_eq!(item.data_type(), &DataType::Utf8);
        assert!(matches!(s.field(3).data_type(), DataType::Struct(f) if f.len() == 2));
    }

    #[test]
    fn batches_round_trip_through_ipc_with_every_compression() {
        let fields = vec![
            TableFieldSchema::new("id", FieldType::Int64),
            TableFieldSchema::new("s", FieldType::String),
        ];
        let wire = wire_schema(&fields).unwrap();
        let stored = Arc::new(types::arrow_schema(&fields).unwrap());
        let batch = RecordBatch::try_new(
            stored,
            vec![
                Arc::new(Int64Array::from_iter_values(0..1000)),
                Arc::new(StringArray::from_iter_values(
                    (0..1000).map(|i| format!("v{i}")),
                )),
            ],
        )
        .unwrap();
        let batch = conform_batch(&batch, &wire).unwrap();
        let plain = ipc_encoder(None).unwrap().batch(&batch).unwrap().len();
        for c in [
            None,
            Some(CompressionType::LZ4_FRAME),
            Some(CompressionType::ZSTD),
        ] {
            let enc = ipc_encoder(c).unwrap();
            let mut stream = enc.schema(&wire);
            let message = enc.batch(&batch).unwrap();
            if c.is_some() {
                assert!(
                    message.len() < plain,
                    "{c:?}: {} of {plain} bytes",
                    message.len()
                );
            }
            stream.extend_from_slice(&message);
            let read: Vec<_> = StreamReader::try_new(std::io::Cursor::new(stream), None)
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(read, vec![batch.clone()], "{c:?}");
        }
    }
}

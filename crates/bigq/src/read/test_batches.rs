//! Record batches and their IPC messages as the Storage Read API sends them, for tests.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};
use bigq_codec::ipc::{CompressionType, IpcEncoder};

/// `n` rows of (`id` INT64 from `start`, `name` STRING with every third NULL).
pub(crate) fn batch(start: i64, n: usize) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let ids: Vec<i64> = (start..start + n as i64).collect();
    let names: Vec<Option<String>> = ids
        .iter()
        .map(|i| (i % 3 != 0).then(|| format!("row {i}")))
        .collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(names)),
        ],
    )
    .unwrap()
}

/// The schema as a whole IPC stream (schema message and end-of-stream marker), as
/// pyarrow-based servers send it.
pub(crate) fn schema_stream(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    StreamWriter::try_new(&mut out, &batch.schema())
        .unwrap()
        .finish()
        .unwrap();
    out
}

/// One batch as one encapsulated IPC message, as BigQuery sends it.
pub(crate) fn batch_message(batch: &RecordBatch, compression: Option<CompressionType>) -> Vec<u8> {
    IpcEncoder::new(compression).unwrap().batch(batch).unwrap()
}

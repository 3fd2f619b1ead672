//! Writing Arrow IPC as BigQuery sends it: the schema and each record batch as one
//! encapsulated IPC message (continuation marker, length, flatbuffer, body), the batch's
//! buffers optionally LZ4_FRAME or ZSTD compressed.

use arrow_array::RecordBatch;
use arrow_ipc::CompressionType;
use arrow_ipc::writer::{
    DictionaryTracker, IpcDataGenerator, IpcWriteContext, IpcWriteOptions, write_message,
};
use arrow_schema::{DataType, Schema};

use crate::error::{CodecError, CodecErrorKind};

/// Encodes a schema and its record batches as encapsulated IPC messages, the form of the
/// Storage Read API's `ArrowSchema` / `ArrowRecordBatch` and of Storage Write's Arrow rows.
#[derive(Debug, Clone)]
pub struct IpcEncoder {
    options: IpcWriteOptions,
}

impl IpcEncoder {
    /// An encoder compressing record batch buffers with `compression`, if any.
    pub fn new(compression: Option<CompressionType>) -> Result<IpcEncoder, CodecError> {
        let options = IpcWriteOptions::default()
            .try_with_compression(compression)
            .map_err(|e| CodecError::new(CodecErrorKind::Ipc, format!("Arrow IPC options: {e}")))?;
        Ok(IpcEncoder { options })
    }

    /// The serialized schema message.
    pub fn schema(&self, schema: &Schema) -> Vec<u8> {
        let mut tracker = DictionaryTracker::new(false);
        let encoded = IpcDataGenerator::default().schema_to_bytes_with_dictionary_tracker(
            schema,
            &mut tracker,
            &self.options,
        );
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = write_message(&mut out, encoded, &self.options);
        out
    }

    /// One serialized record batch message. A batch with dictionary-encoded columns is an
    /// error: BigQuery never sends dictionaries, and its readers expect none.
    pub fn batch(&self, batch: &RecordBatch) -> Result<Vec<u8>, CodecError> {
        if let Some(f) = batch
            .schema()
            .fields()
            .iter()
            .find(|f| has_dictionary(f.data_type()))
        {
            return Err(CodecError::new(
                CodecErrorKind::Ipc,
                "dictionary-encoded columns cannot be written; cast them to their value type first",
            )
            .with_column(f.name()));
        }
        let err = |e| {
            CodecError::new(
                CodecErrorKind::Ipc,
                format!("Arrow IPC encoding failed: {e}"),
            )
        };
        let mut tracker = DictionaryTracker::new(false);
        let (dictionaries, encoded) = IpcDataGenerator::default()
            .encode(
                batch,
                &mut tracker,
                &self.options,
                &mut IpcWriteContext::default(),
            )
            .map_err(err)?;
        if !dictionaries.is_empty() {
            return Err(CodecError::new(
                CodecErrorKind::Ipc,
                "Arrow IPC encoding produced dictionaries, which BigQuery never sends",
            ));
        }
        let mut out = Vec::with_capacity(encoded.ipc_message.len() + encoded.arrow_data.len() + 16);
        write_message(&mut out, encoded, &self.options).map_err(err)?;
        Ok(out)
    }
}

/// Whether `t` is or holds a dictionary.
fn has_dictionary(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(..) => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => has_dictionary(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| has_dictionary(f.data_type())),
        DataType::Union(fields, _) => fields.iter().any(|(_, f)| has_dictionary(f.data_type())),
        DataType::RunEndEncoded(_, v) => has_dictionary(v.data_type()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};
    use arrow_ipc::reader::StreamReader;
    use arrow_schema::Field;

    use super::*;
    use crate::ipc::IpcDecoder;

    fn batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..1000)),
                Arc::new(StringArray::from_iter_values(
                    (0..1000).map(|i| format!("v{i}")),
                )),
            ],
        )
        .unwrap()
    }

    /// What the encoder writes, arrow-ipc's own stream reader and bigq's decoder both read
    /// back as the batch, with every compression BigQuery offers; compression makes it smaller.
    #[test]
    fn batches_round_trip_with_every_compression() {
        let batch = batch();
        let plain = IpcEncoder::new(None).unwrap().batch(&batch).unwrap().len();
        for c in [
            None,
            Some(CompressionType::LZ4_FRAME),
            Some(CompressionType::ZSTD),
        ] {
            let enc = IpcEncoder::new(c).unwrap();
            let schema = enc.schema(&batch.schema());
            let message = enc.batch(&batch).unwrap();
            if c.is_some() {
                assert!(
                    message.len() < plain,
                    "{c:?}: {} of {plain} bytes",
                    message.len()
                );
            }
            let mut stream = schema.clone();
            stream.extend_from_slice(&message);
            let read: Vec<_> = StreamReader::try_new(std::io::Cursor::new(stream), None)
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(read, vec![batch.clone()], "{c:?}");
            let mut d = IpcDecoder::new(&schema).unwrap();
            assert_eq!(d.schema(), batch.schema());
            assert_eq!(d.decode(message).unwrap(), batch, "{c:?}");
        }
    }

    #[test]
    fn dictionaries_are_refused() {
        let values = arrow_array::DictionaryArray::<arrow_array::types::Int32Type>::from_iter([
            "red", "green", "red",
        ]);
        let schema = Arc::new(Schema::new(vec![Field::new(
            "colour",
            arrow_array::Array::data_type(&values).clone(),
            false,
        )]));
        let b = RecordBatch::try_new(schema, vec![Arc::new(values)]).unwrap();
        let e = IpcEncoder::new(None).unwrap().batch(&b).unwrap_err();
        assert_eq!(e.kind(), CodecErrorKind::Ipc, "{e}");
        assert_eq!(e.column(), Some("colour"));
        assert!(e.message().contains("dictionary-encoded"), "{e}");
    }
}

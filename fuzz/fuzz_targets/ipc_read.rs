//! The Storage Read IPC path over arbitrary messages: a valid schema and record batch, as
//! a ReadRows stream carries them (uncompressed, LZ4_FRAME or ZSTD), with arbitrary bytes
//! of the batch's body changed, and the message cut or extended. The
//! decoder returns batches or a typed error, never panics, and every batch it returns is
//! valid Arrow; the unchanged message decodes to the batch.
//!
//! A changed schema or batch header can make arrow-ipc panic, which bigq-codec turns into an error
//! (`catch_unwind`); fuzz builds abort on any panic, caught or not, so header changes are
//! left to the codec's exhaustive unit test of every byte
//! (`a_header_naming_buffers_beyond_the_body_is_an_error_not_a_panic`).
#![no_main]

use std::sync::Arc;

use arbitrary::Arbitrary;
use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use bigq_codec::ipc::{CompressionType, IpcDecoder, IpcEncoder};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    ints: Vec<Option<i64>>,
    texts: Vec<Option<String>>,
    lists: Vec<Option<Vec<Option<i64>>>>,
    compression: u8,
    /// (position, xor) changes to the batch message's body.
    batch_flips: Vec<(u16, u8)>,
    cut: Option<u16>,
    tail: Vec<u8>,
}

fn flip(bytes: &mut [u8], flips: &[(u16, u8)]) {
    for &(at, x) in flips {
        if !bytes.is_empty() {
            let i = at as usize % bytes.len();
            bytes[i] ^= x;
        }
    }
}

fuzz_target!(|input: Input| {
    let n = input
        .ints
        .len()
        .min(input.texts.len())
        .min(input.lists.len());
    let mut ints = Int64Builder::new();
    ints.extend(input.ints.iter().take(n).copied());
    let mut texts = StringBuilder::new();
    texts.extend(input.texts.iter().take(n).cloned());
    let mut lists = ListBuilder::new(Int64Builder::new());
    for l in input.lists.iter().take(n) {
        match l {
            Some(items) => {
                lists.values().extend(items.iter().copied());
                lists.append(true);
            }
            None => lists.append(false),
        }
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("i", Arc::new(ints.finish())),
        ("s", Arc::new(texts.finish())),
        ("l", Arc::new(lists.finish())),
    ];
    let batch = RecordBatch::try_from_iter(columns).expect("columns of one length");
    let compression = match input.compression % 3 {
        0 => None,
        1 => Some(CompressionType::LZ4_FRAME),
        _ => Some(CompressionType::ZSTD),
    };
    let encoder = IpcEncoder::new(compression).expect("an encoder");
    let schema = encoder.schema(&batch.schema());
    let message = encoder.batch(&batch).expect("a valid batch encodes");

    // Unchanged, the batch comes back.
    let mut d = IpcDecoder::new(&schema).expect("the schema decodes");
    let back = d.decode(message.clone()).expect("the batch decodes");
    assert_eq!(back, batch);

    // Changed: batches or errors, never a panic or an invalid batch.
    let mut message = message;
    // The body starts after the prefix (continuation marker, length) and the header.
    let header_len = i32::from_le_bytes([message[4], message[5], message[6], message[7]]);
    let body = 8 + header_len.max(0) as usize;
    if body < message.len() {
        flip(&mut message[body..], &input.batch_flips);
    }
    if let Some(cut) = input.cut {
        message.truncate(cut as usize % (message.len() + 1));
    }
    message.extend_from_slice(&input.tail);
    let Ok(mut d) = IpcDecoder::new(&schema) else {
        return;
    };
    if let Ok(batch) = d.decode(message) {
        for c in batch.columns() {
            c.to_data()
                .validate_full()
                .expect("a decoded batch is valid");
        }
    }
});

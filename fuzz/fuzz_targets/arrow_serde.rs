//! Arrow → serde over arbitrary valid batches: typed rows of every shape the decoder
//! serves (numbers, text, options, nested lists and maps) come out or fail with a typed
//! error naming the column, never a panic.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use arbitrary::Arbitrary;
use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, RecordBatch};
use bigq_codec::de::from_record_batch;
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;

#[derive(Arbitrary, Debug)]
struct Input {
    ints: Vec<Option<i64>>,
    texts: Vec<Option<String>>,
    floats: Vec<Option<f64>>,
    bools: Vec<Option<bool>>,
    lists: Vec<Option<Vec<Option<i64>>>>,
    /// Which shape to decode into.
    shape: u8,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Typed {
    i: Option<i64>,
    s: Option<String>,
    f: Option<f64>,
    b: Option<bool>,
    l: Option<Vec<Option<i64>>>,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Strict {
    i: i64,
    s: String,
    f: f64,
    b: bool,
    l: Vec<i64>,
}

fuzz_target!(|input: Input| {
    let n = [
        input.ints.len(),
        input.texts.len(),
        input.floats.len(),
        input.bools.len(),
        input.lists.len(),
    ]
    .into_iter()
    .min()
    .unwrap_or(0);
    let mut ints = Int64Builder::new();
    ints.extend(input.ints.iter().take(n).copied());
    let mut texts = StringBuilder::new();
    texts.extend(input.texts.iter().take(n).cloned());
    let floats: Float64Array = input.floats.iter().take(n).copied().collect();
    let bools: BooleanArray = input.bools.iter().take(n).copied().collect();
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
        ("f", Arc::new(floats)),
        ("b", Arc::new(bools)),
        ("l", Arc::new(lists.finish())),
    ];
    let batch = RecordBatch::try_from_iter(columns).expect("columns of one length");
    match input.shape % 4 {
        0 => {
            let rows: Vec<Typed> = from_record_batch(&batch).expect("every value fits an Option");
            assert_eq!(rows.len(), n);
        }
        1 => {
            // NULL into a non-Option field is an error naming the column.
            if let Err(e) = from_record_batch::<Strict>(&batch) {
                assert!(!e.to_string().is_empty());
            }
        }
        2 => {
            let _ = from_record_batch::<BTreeMap<String, serde_json::Value>>(&batch);
        }
        _ => {
            let _ = from_record_batch::<(Option<String>, Option<i64>)>(&batch);
        }
    }
});

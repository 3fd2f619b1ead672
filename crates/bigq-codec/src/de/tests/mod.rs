//! Tests of the Arrow-to-serde decoder, on batches built in memory.

// Tuples of many columns are what some tests are about.
#![allow(clippy::type_complexity)]

mod api;
mod errors;
mod nested;
mod positional;
mod types;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};

/// A batch of named columns, nullable.
pub(super) fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let arrays = cols.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

/// A batch with explicit fields (for metadata).
pub(super) fn batch_of(fields: Vec<Field>, arrays: Vec<ArrayRef>) -> RecordBatch {
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

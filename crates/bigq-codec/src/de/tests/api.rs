//! The entry points: row numbering across batches, random access, iteration.

use std::sync::Arc;

use arrow_array::*;
use serde::Deserialize;

use super::batch;
use crate::de::{BatchRows, RowDecoder, from_record_batch};

fn ids(from: i64, n: i64) -> RecordBatch {
    batch(vec![(
        "id",
        Arc::new(Int64Array::from_iter(
            (from..from + n).map(|i| (i % 5 != 4).then_some(i)),
        )) as ArrayRef,
    )])
}

#[derive(Deserialize, Debug, PartialEq)]
struct Id {
    id: i64,
}

#[test]
fn row_decoder_numbers_rows_over_the_whole_result() {
    let mut d = RowDecoder::<Id>::new();
    let first = d.decode(&ids(0, 4)).unwrap();
    assert_eq!(first.len(), 4);
    assert_eq!(d.rows_decoded(), 4);
    // Row 4 of the result (index 0 of this batch) is NULL.
    let e = d.decode(&ids(4, 3)).unwrap_err();
    assert_eq!(e.row(), Some(4));
    assert_eq!(d.rows_decoded(), 7);
    let mut resumed = RowDecoder::<Option<i64>>::starting_at(100);
    assert_eq!(resumed.decode(&ids(0, 2)).unwrap(), vec![Some(0), Some(1)]);
    assert_eq!(resumed.rows_decoded(), 102);
}

#[test]
fn batch_rows_iterate_and_read_at_random() {
    let b = ids(0, 6);
    let rows = BatchRows::<Option<Id>>::with_row_offset(&b, 10);
    assert_eq!(rows.len(), 6);
    assert_eq!(rows.row(2).unwrap(), Some(Id { id: 2 }));
    let e = rows.row(9).unwrap_err();
    assert_eq!(e.row(), Some(19));
    let all: Vec<_> = BatchRows::<Id>::with_row_offset(&b, 10).collect();
    assert_eq!(all.len(), 6);
    assert!(all[3].is_ok());
    assert_eq!(
        all[4].as_ref().unwrap_err().row(),
        Some(14),
        "one bad row, others still decode"
    );
    assert_eq!(all[5].as_ref().unwrap(), &Id { id: 5 });
}

#[test]
fn empty_batches_give_no_rows() {
    let b = ids(0, 0);
    assert!(from_record_batch::<Id>(&b).unwrap().is_empty());
}

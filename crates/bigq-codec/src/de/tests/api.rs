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

#[derive(Deserialize, Debug, PartialEq)]
struct Named {
    id: i64,
    name: String,
    tags: Vec<String>,
}

fn named(from: i64, n: i64, suffix: &str) -> RecordBatch {
    use arrow_array::builder::{ListBuilder, StringBuilder};
    let mut tags = ListBuilder::new(StringBuilder::new());
    for i in from..from + n {
        tags.values().append_value(format!("t{i}"));
        tags.append(true);
    }
    batch(vec![
        (
            "id",
            Arc::new(Int64Array::from_iter_values(from..from + n)) as ArrayRef,
        ),
        (
            "name",
            Arc::new(StringArray::from_iter_values(
                (from..from + n).map(|i| format!("name {i}{suffix}")),
            )) as ArrayRef,
        ),
        ("tags", Arc::new(tags.finish()) as ArrayRef),
    ])
}

#[test]
fn decode_in_place_reuses_the_rows_buffers() {
    let mut d = RowDecoder::<Named>::new();
    let mut rows = Vec::new();
    d.decode_in_place(&named(0, 3, " with a long suffix"), &mut rows)
        .unwrap();
    assert_eq!(rows.len(), 3);
    let (name, tag) = (rows[1].name.as_ptr(), rows[1].tags[0].as_ptr());
    // A shorter batch: the rows left are overwritten where they are, the rest dropped.
    d.decode_in_place(&named(10, 2, ""), &mut rows).unwrap();
    assert_eq!(
        rows,
        [
            Named {
                id: 10,
                name: "name 10".into(),
                tags: vec!["t10".into()]
            },
            Named {
                id: 11,
                name: "name 11".into(),
                tags: vec!["t11".into()]
            },
        ]
    );
    assert_eq!(
        (rows[1].name.as_ptr(), rows[1].tags[0].as_ptr()),
        (name, tag)
    );
    // A longer one: rows appended.
    d.decode_in_place(&named(20, 4, ""), &mut rows).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.id).collect::<Vec<_>>(),
        [20, 21, 22, 23]
    );
    assert_eq!(rows[3].name, "name 23");
    assert_eq!(d.rows_decoded(), 9);
    // An error clears the rows and names the row over the whole result.
    let mut ids_only = RowDecoder::<Id>::starting_at(50);
    let mut out = vec![Id { id: 1 }];
    let e = ids_only.decode_in_place(&ids(0, 6), &mut out).unwrap_err();
    assert_eq!(e.row(), Some(54));
    assert!(out.is_empty());
}

#[derive(Deserialize, Debug, PartialEq)]
struct NamedRef<'a> {
    id: i64,
    name: &'a str,
    #[serde(borrow)]
    tags: Vec<&'a str>,
}

#[test]
fn row_decoder_decodes_rows_that_borrow_from_the_batches() {
    let (first, second, bad) = (named(0, 2, ""), named(5, 1, "!"), ids(0, 1));
    let mut d = RowDecoder::<NamedRef<'_>>::new();
    let mut rows = Vec::new();
    d.decode_into(&first, &mut rows).unwrap();
    d.decode_into(&second, &mut rows).unwrap();
    assert_eq!(
        rows,
        [
            NamedRef {
                id: 0,
                name: "name 0",
                tags: vec!["t0"]
            },
            NamedRef {
                id: 1,
                name: "name 1",
                tags: vec!["t1"]
            },
            NamedRef {
                id: 5,
                name: "name 5!",
                tags: vec!["t5"]
            },
        ]
    );
    // The strings are the batches' own bytes, not copies.
    let data = first
        .column(1)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(rows[1].name.as_ptr(), data.value(1).as_ptr());
    // Errors still name the row over the whole result.
    let e = d.decode_into(&bad, &mut rows).unwrap_err();
    assert_eq!(e.row(), Some(3));
    assert_eq!(rows.len(), 3);
}

//! Errors name the column (dotted for nested fields), the row and the value.

use std::sync::Arc;

use arrow_array::*;
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};
use serde::Deserialize;

use super::batch;
use crate::CodecErrorKind;
use crate::de::{extend_from_record_batch, from_record_batch};

#[test]
fn null_into_a_non_option_names_column_and_row() {
    let b = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
        (
            "name",
            Arc::new(StringArray::from(vec![Some("a"), Some("b"), None])),
        ),
    ]);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        id: i64,
        name: String,
    }
    let e = from_record_batch::<R>(&b).unwrap_err();
    assert_eq!(e.kind(), CodecErrorKind::Deserialize);
    assert_eq!(e.column(), Some("name"));
    assert_eq!(e.row(), Some(2));
    let text = e.to_string();
    assert!(
        text.contains("NULL") && text.contains("`name`") && text.contains("row 2"),
        "{text}"
    );
    // The global row index counts the rows of earlier batches.
    let mut out: Vec<R> = Vec::new();
    let e = extend_from_record_batch(&b, &mut out, 1_000).unwrap_err();
    assert_eq!(e.row(), Some(1_002));
    assert!(out.is_empty(), "a failed batch appends nothing");
}

#[test]
fn nested_null_names_the_dotted_path() {
    let inner = StructArray::new(
        Fields::from(vec![Field::new("b", DataType::Utf8, true)]),
        vec![Arc::new(StringArray::from(vec![Some("x"), None])) as ArrayRef],
        None,
    );
    let outer = StructArray::new(
        Fields::from(vec![Field::new("inner", inner.data_type().clone(), true)]),
        vec![Arc::new(inner) as ArrayRef],
        Some(NullBuffer::from(vec![true, true])),
    );
    let b = batch(vec![("info", Arc::new(outer) as ArrayRef)]);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        b: String,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Info {
        inner: Inner,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        info: Info,
    }
    let e = from_record_batch::<R>(&b).unwrap_err();
    assert_eq!(e.column(), Some("info.inner.b"));
    assert_eq!(e.row(), Some(1));
}

#[test]
fn out_of_range_integer_names_column_row_and_value() {
    let b = batch(vec![(
        "small",
        Arc::new(Int64Array::from(vec![200, 300])) as ArrayRef,
    )]);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        small: u8,
    }
    let e = from_record_batch::<R>(&b).unwrap_err();
    assert_eq!(e.column(), Some("small"));
    assert_eq!(e.row(), Some(1));
    assert_eq!(e.value(), Some("300"));
    assert!(e.to_string().contains("u8"), "{e}");
}

#[test]
fn wrong_type_names_column_row_and_value() {
    let b = batch(vec![(
        "n",
        Arc::new(StringArray::from(vec!["seven"])) as ArrayRef,
    )]);
    let e = from_record_batch::<(i64,)>(&b).unwrap_err();
    assert_eq!(
        (e.column(), e.row(), e.value()),
        (Some("n"), Some(0), Some("seven"))
    );
    let e = from_record_batch::<(crate::value::Date,)>(&b).unwrap_err();
    assert!(e.to_string().contains("DATE"), "{e}");
    assert_eq!(e.value(), Some("seven"));
}

#[test]
fn missing_column_names_the_field_and_option_fields_may_be_missing() {
    let b = batch(vec![(
        "id",
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    )]);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Missing {
        id: i64,
        email: String,
    }
    let e = from_record_batch::<Missing>(&b).unwrap_err();
    assert_eq!(e.column(), Some("email"));
    assert_eq!(e.row(), Some(0));
    assert!(e.message().contains("email"), "{e}");
    #[derive(Deserialize, Debug)]
    struct Optional {
        id: i64,
        email: Option<String>,
        #[serde(default)]
        tags: Vec<String>,
    }
    let r: Vec<Optional> = from_record_batch(&b).unwrap();
    assert_eq!(
        (r[0].id, r[0].email.as_deref(), r[0].tags.len()),
        (1, None, 0)
    );
}

#[test]
fn unsupported_arrow_types_fail_only_when_read() {
    let union = UnionArray::try_new(
        arrow_schema::UnionFields::try_new(vec![0], vec![Field::new("a", DataType::Int32, false)])
            .unwrap(),
        vec![0i8].into(),
        None,
        vec![Arc::new(Int32Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    let b = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("u", Arc::new(union)),
    ]);
    #[derive(Deserialize)]
    struct JustId {
        id: i64,
    }
    assert_eq!(from_record_batch::<JustId>(&b).unwrap()[0].id, 1);
    let e = from_record_batch::<(i64, i64)>(&b).unwrap_err();
    assert_eq!(e.column(), Some("u"));
    assert!(e.message().contains("Union"), "{e}");
}

#[test]
fn list_item_errors_name_the_list_column() {
    let l = ListArray::from_iter_primitive::<arrow_array::types::Int64Type, _, _>(vec![
        Some(vec![Some(1)]),
        Some(vec![Some(1), Some(-5)]),
    ]);
    let b = batch(vec![("tags", Arc::new(l) as ArrayRef)]);
    let e = from_record_batch::<(Vec<u32>,)>(&b).unwrap_err();
    assert_eq!(
        (e.column(), e.row(), e.value()),
        (Some("tags"), Some(1), Some("-5"))
    );
}

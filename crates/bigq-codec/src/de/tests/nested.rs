//! STRUCT (RECORD) and LIST (REPEATED) at any depth.

use std::sync::Arc;

use arrow_array::*;
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};
use serde::Deserialize;
use serde_json::json;

use super::batch;
use crate::de::from_record_batch;

/// `orders: ARRAY<STRUCT<sku STRING, qty ARRAY<INT64>>>` over three rows:
/// `[{a,[1,2]},{b,[]}]`, `[]`, `[{c,[3]}]`.
fn orders() -> ArrayRef {
    let qty_values = Int64Array::from(vec![1, 2, 3]);
    let qty_item = Arc::new(Field::new("item", DataType::Int64, false));
    let qty = ListArray::new(
        qty_item.clone(),
        OffsetBuffer::new(vec![0, 2, 2, 3].into()),
        Arc::new(qty_values),
        None,
    );
    let fields = Fields::from(vec![
        Field::new("sku", DataType::Utf8, true),
        Field::new("qty", DataType::List(qty_item), false),
    ]);
    let order = StructArray::new(
        fields.clone(),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c"])) as ArrayRef,
            Arc::new(qty),
        ],
        None,
    );
    Arc::new(ListArray::new(
        Arc::new(Field::new("item", DataType::Struct(fields), false)),
        OffsetBuffer::new(vec![0, 2, 2, 3].into()),
        Arc::new(order),
        None,
    ))
}

#[derive(Deserialize, Debug, PartialEq)]
struct Order {
    sku: String,
    qty: Vec<i64>,
}

#[test]
fn list_of_struct_of_list() {
    let b = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
        ("orders", orders()),
    ]);
    #[derive(Deserialize, Debug, PartialEq)]
    struct Row {
        id: i64,
        orders: Vec<Order>,
    }
    let rows: Vec<Row> = from_record_batch(&b).unwrap();
    assert_eq!(
        rows,
        vec![
            Row {
                id: 1,
                orders: vec![
                    Order {
                        sku: "a".into(),
                        qty: vec![1, 2]
                    },
                    Order {
                        sku: "b".into(),
                        qty: vec![]
                    }
                ]
            },
            Row {
                id: 2,
                orders: vec![]
            },
            Row {
                id: 3,
                orders: vec![Order {
                    sku: "c".into(),
                    qty: vec![3]
                }]
            },
        ]
    );
    let v: Vec<serde_json::Value> = from_record_batch(&b).unwrap();
    assert_eq!(
        v[0],
        json!({"id": 1, "orders": [{"sku": "a", "qty": [1, 2]}, {"sku": "b", "qty": []}]})
    );
    // Tuples by position at every level.
    let t: Vec<(i64, Vec<(String, Vec<i64>)>)> = from_record_batch(&b).unwrap();
    assert_eq!(t[2], (3, vec![("c".to_string(), vec![3])]));
}

/// `info STRUCT<a INT64, b STRING, inner STRUCT<x FLOAT64>>`, NULL in row 1; `info.b`
/// NULL in row 2.
fn info() -> ArrayRef {
    let inner_fields = Fields::from(vec![Field::new("x", DataType::Float64, true)]);
    let inner = StructArray::new(
        inner_fields.clone(),
        vec![Arc::new(Float64Array::from(vec![0.5, 0.0, 2.5])) as ArrayRef],
        None,
    );
    Arc::new(StructArray::new(
        Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
            Field::new("inner", DataType::Struct(inner_fields), true),
        ]),
        vec![
            Arc::new(Int64Array::from(vec![1, 0, 3])) as ArrayRef,
            Arc::new(StringArray::from(vec![Some("x"), Some(""), None])),
            Arc::new(inner),
        ],
        Some(NullBuffer::from(vec![true, false, true])),
    ))
}

#[derive(Deserialize, Debug, PartialEq)]
struct Inner {
    x: f64,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Info {
    a: i64,
    b: Option<String>,
    inner: Inner,
}

#[test]
fn nested_structs_and_struct_nulls() {
    let b = batch(vec![("info", info())]);
    #[derive(Deserialize, Debug, PartialEq)]
    struct Row {
        info: Option<Info>,
    }
    let rows: Vec<Row> = from_record_batch(&b).unwrap();
    assert_eq!(
        rows[0].info,
        Some(Info {
            a: 1,
            b: Some("x".into()),
            inner: Inner { x: 0.5 }
        })
    );
    assert_eq!(
        rows[1].info, None,
        "a NULL struct is None, whatever its children hold"
    );
    assert_eq!(rows[2].info.as_ref().unwrap().b, None);
    let v: Vec<serde_json::Value> = from_record_batch(&b).unwrap();
    assert_eq!(v[1], json!({"info": null}));
    assert_eq!(
        v[2],
        json!({"info": {"a": 3, "b": null, "inner": {"x": 2.5}}})
    );
}

#[test]
fn the_same_struct_column_read_as_two_targets() {
    let b = batch(vec![("info", info())]);
    #[derive(Deserialize)]
    struct JustA {
        a: i64,
    }
    #[derive(Deserialize)]
    struct Row {
        info: Option<JustA>,
    }
    #[derive(Deserialize)]
    struct Row2 {
        #[serde(rename = "info")]
        full: Option<Info>,
    }
    let rows: Vec<Row> = from_record_batch(&b).unwrap();
    assert_eq!(rows[2].info.as_ref().unwrap().a, 3);
    let rows: Vec<Row2> = from_record_batch(&b).unwrap();
    assert_eq!(rows[0].full.as_ref().unwrap().inner.x, 0.5);
}

#[test]
fn large_and_fixed_size_lists() {
    let large = LargeListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(vec![
        Some(vec![Some(1), Some(2)]),
        Some(vec![]),
    ]);
    let fixed = FixedSizeListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(
        vec![Some(vec![Some(1), Some(2)]), Some(vec![Some(3), Some(4)])],
        2,
    );
    let b = batch(vec![
        ("l", Arc::new(large) as ArrayRef),
        ("f", Arc::new(fixed)),
    ]);
    let r: Vec<(Vec<i32>, [i32; 2])> = from_record_batch(&b).unwrap();
    assert_eq!(r, vec![(vec![1, 2], [1, 2]), (vec![], [3, 4])]);
    let sliced: Vec<(Vec<i32>, [i32; 2])> = from_record_batch(&b.slice(1, 1)).unwrap();
    assert_eq!(sliced, vec![(vec![], [3, 4])]);
}

#[test]
fn lists_with_null_items() {
    let l =
        ListArray::from_iter_primitive::<arrow_array::types::Int64Type, _, _>(vec![Some(vec![
            Some(1),
            None,
        ])]);
    let b = batch(vec![("l", Arc::new(l) as ArrayRef)]);
    let r: Vec<(Vec<Option<i64>>,)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].0, vec![Some(1), None]);
    let e = from_record_batch::<(Vec<i64>,)>(&b).unwrap_err();
    assert_eq!(e.column(), Some("l"));
    assert_eq!(e.row(), Some(0));
}

#[test]
fn flatten_and_aliases() {
    let b = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("userName", Arc::new(StringArray::from(vec!["ada"]))),
        ("extra", Arc::new(Float64Array::from(vec![2.5]))),
    ]);
    #[derive(Deserialize)]
    struct Aliased {
        id: i64,
        #[serde(alias = "userName")]
        user: String,
    }
    let r: Vec<Aliased> = from_record_batch(&b).unwrap();
    assert_eq!((r[0].id, r[0].user.as_str()), (1, "ada"));
    #[derive(Deserialize)]
    struct Flat {
        id: i64,
        #[serde(flatten)]
        rest: std::collections::BTreeMap<String, serde_json::Value>,
    }
    let r: Vec<Flat> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].id, 1);
    assert_eq!(r[0].rest.len(), 2);
    assert_eq!(r[0].rest["extra"], json!(2.5));
}

#[test]
fn field_names_match_columns_case_insensitively() {
    let b = batch(vec![
        ("UserId", Arc::new(Int64Array::from(vec![7])) as ArrayRef),
        ("score", Arc::new(Int64Array::from(vec![1]))),
        ("SCORE", Arc::new(Int64Array::from(vec![2]))),
    ]);
    #[derive(Deserialize)]
    struct R {
        userid: i64,
        score: i64,
    }
    let r: Vec<R> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].userid, 7);
    assert_eq!(r[0].score, 1, "an exact match wins");
}

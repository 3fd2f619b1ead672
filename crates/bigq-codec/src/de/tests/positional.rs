//! Structs read positionally after a probe, and by name when that would be wrong.

use std::fmt;
use std::sync::Arc;

use arrow_array::*;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::batch;
use crate::de::{BatchRows, from_record_batch};

fn abc() -> RecordBatch {
    batch(vec![
        (
            "c",
            Arc::new(StringArray::from(vec!["c0", "c1"])) as ArrayRef,
        ),
        ("b", Arc::new(Int64Array::from(vec![10, 11]))),
        ("a", Arc::new(Int64Array::from(vec![0, 1]))),
    ])
}

#[test]
fn fields_in_another_order_than_the_columns() {
    #[derive(Deserialize, Debug, PartialEq)]
    struct R {
        a: i64,
        b: i64,
        c: String,
        #[serde(skip)]
        skipped: u8,
    }
    let r: Vec<R> = from_record_batch(&abc()).unwrap();
    assert_eq!(
        r[1],
        R {
            a: 1,
            b: 11,
            c: "c1".into(),
            skipped: 0
        }
    );
}

#[test]
fn an_alias_that_is_also_a_column_is_read_by_name() {
    // `fields` is ["a", "x", "b"]: positionally `b` would take column `x`'s place.
    let b = batch(vec![
        ("a", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("x", Arc::new(Int64Array::from(vec![2]))),
        ("b", Arc::new(Int64Array::from(vec![3]))),
    ]);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        #[serde(alias = "x")]
        a: i64,
        b: i64,
    }
    // By name, as serde_json would, both `a` and its alias are present.
    let e = from_record_batch::<R>(&b).unwrap_err();
    assert!(e.message().contains("duplicate field `a`"), "{e}");
}

/// A hand-written struct visitor that takes only a map, as some do.
#[derive(Debug, PartialEq)]
struct MapOnly {
    a: i64,
    c: String,
}

impl<'de> Deserialize<'de> for MapOnly {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MapOnly;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<MapOnly, A::Error> {
                let (mut a, mut c) = (None, None);
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "a" => a = Some(m.next_value()?),
                        "c" => c = Some(m.next_value()?),
                        _ => {
                            m.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(MapOnly {
                    a: a.ok_or_else(|| de::Error::missing_field("a"))?,
                    c: c.ok_or_else(|| de::Error::missing_field("c"))?,
                })
            }
        }
        d.deserialize_struct("MapOnly", &["a", "c"], V)
    }
}

#[test]
fn visitors_without_a_sequence_are_read_by_name() {
    let rows: Vec<_> = BatchRows::<MapOnly>::new(&abc()).collect();
    assert_eq!(
        rows[0].as_ref().unwrap(),
        &MapOnly {
            a: 0,
            c: "c0".into()
        }
    );
    assert_eq!(
        rows[1].as_ref().unwrap(),
        &MapOnly {
            a: 1,
            c: "c1".into()
        }
    );
    // Nested in a tuple too (the probe happens below the row).
    let t: Vec<(MapOnly,)> = from_record_batch(&batch(vec![(
        "s",
        Arc::new(StructArray::from(vec![
            (
                Arc::new(arrow_schema::Field::new(
                    "c",
                    arrow_schema::DataType::Utf8,
                    false,
                )),
                Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
            ),
            (
                Arc::new(arrow_schema::Field::new(
                    "a",
                    arrow_schema::DataType::Int64,
                    false,
                )),
                Arc::new(Int64Array::from(vec![9])) as ArrayRef,
            ),
        ])) as ArrayRef,
    )]))
    .unwrap();
    assert_eq!(
        t[0].0,
        MapOnly {
            a: 9,
            c: "x".into()
        }
    );
}

#[test]
fn an_error_on_the_probed_row_is_the_same_as_by_name() {
    let b = batch(vec![
        (
            "a",
            Arc::new(Int64Array::from(vec![None, Some(1)])) as ArrayRef,
        ),
        ("b", Arc::new(Int64Array::from(vec![1, 2]))),
    ]);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        a: i64,
        b: i64,
    }
    let e = from_record_batch::<R>(&b).unwrap_err();
    assert_eq!((e.column(), e.row()), (Some("a"), Some(0)));
    let rows: Vec<_> = BatchRows::<R>::new(&b).collect();
    assert!(rows[0].is_err());
    assert_eq!(rows[1].as_ref().unwrap().a, 1);
}

//! Every Arrow type, into bigq's value types, std types and `serde_json::Value`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, MapBuilder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::*;
use arrow_buffer::{IntervalDayTime, IntervalMonthDayNano, i256};
use arrow_schema::{DataType, Field, TimeUnit};
use serde::Deserialize;
use serde_json::json;

use super::{batch, batch_of};
use crate::de::{BatchRows, from_record_batch};
use crate::schema::{FieldType, TableFieldSchema, TableSchema};
use crate::value::{
    BigNumeric, Date, DateTime, Geography, Interval, Json, Numeric, Time, Timestamp,
};

const DAY: i64 = 86_400_000_000;
/// 2024-01-01.
const D2024: i32 = 19_723;

/// One row of every BigQuery type, in the Arrow types of the schema mapping, built from
/// the schema so the test follows the contract.
fn every_type_batch() -> RecordBatch {
    let schema = TableSchema::new(vec![
        TableFieldSchema::new("i", FieldType::Int64),
        TableFieldSchema::new("f", FieldType::Float64),
        TableFieldSchema::new("n", FieldType::Numeric),
        TableFieldSchema::new("bn", FieldType::BigNumeric),
        TableFieldSchema::new("b", FieldType::Bool),
        TableFieldSchema::new("s", FieldType::String),
        TableFieldSchema::new("by", FieldType::Bytes),
        TableFieldSchema::new("d", FieldType::Date),
        TableFieldSchema::new("t", FieldType::Time),
        TableFieldSchema::new("dt", FieldType::DateTime),
        TableFieldSchema::new("ts", FieldType::Timestamp),
        TableFieldSchema::new("g", FieldType::Geography),
        TableFieldSchema::new("j", FieldType::Json),
        TableFieldSchema::new("iv", FieldType::Interval),
        TableFieldSchema::range("r", FieldType::Date),
    ])
    .to_arrow()
    .unwrap();
    let range = StructArray::from(vec![
        (
            Arc::new(Field::new("start", DataType::Date32, true)),
            Arc::new(Date32Array::from(vec![Some(D2024), Some(D2024)])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("end", DataType::Date32, true)),
            Arc::new(Date32Array::from(vec![Some(D2024 + 31), None])) as ArrayRef,
        ),
    ]);
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![-7, i64::MAX])),
        Arc::new(Float64Array::from(vec![1.5, -0.25])),
        Arc::new(
            Decimal128Array::from(vec![1_500_000_000, -1])
                .with_precision_and_scale(38, 9)
                .unwrap(),
        ),
        Arc::new(
            Decimal256Array::from(vec![
                i256::from_i128(15) * i256::from_i128(10).wrapping_pow(37),
                i256::MAX,
            ])
            .with_precision_and_scale(76, 38)
            .unwrap(),
        ),
        Arc::new(BooleanArray::from(vec![true, false])),
        Arc::new(StringArray::from(vec!["héllo", ""])),
        Arc::new(BinaryArray::from(vec![&b"\x00\xff"[..], b"abc"])),
        Arc::new(Date32Array::from(vec![D2024, 0])),
        Arc::new(Time64MicrosecondArray::from(vec![45_000_500_000, 0])),
        Arc::new(TimestampMicrosecondArray::from(vec![
            D2024 as i64 * DAY + 1,
            0,
        ])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![D2024 as i64 * DAY + 1_500_000, -1])
                .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from(vec!["POINT(1 2)", "POINT(0 0)"])),
        Arc::new(StringArray::from(vec![r#"{"a":[1,2]}"#, "null"])),
        Arc::new(IntervalMonthDayNanoArray::from(vec![
            IntervalMonthDayNano::new(14, 3, 3_723_000_000_000),
            IntervalMonthDayNano::new(-1, 0, -1_000),
        ])),
        Arc::new(range),
    ];
    RecordBatch::try_new(schema, arrays).unwrap()
}

#[derive(Deserialize, Debug, PartialEq)]
struct Typed {
    i: i64,
    f: f64,
    n: Numeric,
    bn: BigNumeric,
    b: bool,
    s: String,
    #[serde(with = "bytes")]
    by: Vec<u8>,
    d: Date,
    t: Time,
    dt: DateTime,
    ts: Timestamp,
    g: Geography,
    j: Json,
    iv: Interval,
    r: crate::value::Range<Date>,
}

/// `Vec<u8>` from a byte buffer, as `serde_bytes` does.
mod bytes {
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, b: &[u8]) -> Result<Vec<u8>, E> {
                Ok(b.to_vec())
            }
        }
        d.deserialize_byte_buf(V)
    }
}

#[test]
fn every_bigquery_type_into_bigq_value_types() {
    let rows: Vec<Typed> = from_record_batch(&every_type_batch()).unwrap();
    let r = &rows[0];
    assert_eq!(r.i, -7);
    assert_eq!(r.f, 1.5);
    assert_eq!(r.n.to_string(), "1.5");
    assert_eq!(r.bn.to_string(), "1.5");
    assert!(r.b);
    assert_eq!(r.s, "héllo");
    assert_eq!(r.by, b"\x00\xff");
    assert_eq!(r.d.to_string(), "2024-01-01");
    assert_eq!(r.t.to_string(), "12:30:00.500000");
    assert_eq!(r.dt.to_string(), "2024-01-01T00:00:00.000001");
    assert_eq!(r.ts.to_string(), "2024-01-01T00:00:01.500000Z");
    assert_eq!(r.g.0, "POINT(1 2)");
    assert_eq!(r.j.0, r#"{"a":[1,2]}"#);
    assert_eq!(r.iv, Interval::new(14, 3, 3_723_000_000_000));
    assert_eq!(r.r.start, Some(Date::new(D2024)));
    assert_eq!(r.r.end, Some(Date::new(D2024 + 31)));
    let r = &rows[1];
    assert_eq!(r.i, i64::MAX);
    assert_eq!(r.n.to_scaled(), -1);
    assert_eq!(r.bn.to_scaled(), i256::MAX);
    assert_eq!(r.ts.get(), -1);
    assert_eq!(r.r.end, None, "a NULL end is unbounded");
}

#[derive(Deserialize, Debug, PartialEq)]
struct AsText {
    i: String,
    f: String,
    n: String,
    bn: String,
    b: String,
    s: String,
    by: String,
    d: String,
    t: String,
    dt: String,
    ts: String,
    g: String,
    j: String,
    iv: String,
}

#[test]
fn every_scalar_into_string_is_its_canonical_text() {
    let rows: Vec<AsText> = from_record_batch(&every_type_batch()).unwrap();
    assert_eq!(
        rows[0],
        AsText {
            i: "-7".into(),
            f: "1.5".into(),
            n: "1.5".into(),
            bn: "1.5".into(),
            b: "true".into(),
            s: "héllo".into(),
            by: "AP8=".into(),
            d: "2024-01-01".into(),
            t: "12:30:00.500000".into(),
            dt: "2024-01-01T00:00:00.000001".into(),
            ts: "2024-01-01T00:00:01.500000Z".into(),
            g: "POINT(1 2)".into(),
            j: r#"{"a":[1,2]}"#.into(),
            iv: "1-2 3 1:2:3".into(),
        }
    );
    assert_eq!(rows[1].ts, "1969-12-31T23:59:59.999999Z");
    assert_eq!(rows[1].iv, "-0-1 0 -0:0:0.000001");
}

#[test]
fn every_type_into_json_values() {
    let rows: Vec<serde_json::Value> = from_record_batch(&every_type_batch()).unwrap();
    assert_eq!(
        rows[0],
        json!({
            "i": -7, "f": 1.5, "n": "1.5", "bn": "1.5", "b": true, "s": "héllo",
            "by": [0, 255], "d": "2024-01-01", "t": "12:30:00.500000",
            "dt": "2024-01-01T00:00:00.000001", "ts": "2024-01-01T00:00:01.500000Z",
            "g": "POINT(1 2)", "j": r#"{"a":[1,2]}"#, "iv": "1-2 3 1:2:3",
            "r": {"start": "2024-01-01", "end": "2024-02-01"},
        })
    );
    assert_eq!(rows[1]["r"], json!({"start": "2024-01-01", "end": null}));
}

#[test]
fn value_types_read_text_and_integer_columns_too() {
    let b = batch(vec![
        ("n", Arc::new(StringArray::from(vec!["12.25"])) as ArrayRef),
        (
            "ts",
            Arc::new(StringArray::from(vec!["2024-01-01 00:00:00+01"])),
        ),
        ("ts2", Arc::new(Int64Array::from(vec![7]))),
        ("d", Arc::new(StringArray::from(vec!["2024-01-01"]))),
        (
            "r",
            Arc::new(StringArray::from(vec!["[2024-01-01, UNBOUNDED)"])),
        ),
        ("n2", Arc::new(Int64Array::from(vec![3]))),
    ]);
    #[derive(Deserialize)]
    struct R {
        n: Numeric,
        ts: Timestamp,
        ts2: Timestamp,
        d: Date,
        r: crate::value::Range<Date>,
        n2: Numeric,
    }
    let r: Vec<R> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].n.to_scaled(), 12_250_000_000);
    assert_eq!(r[0].ts.get(), D2024 as i64 * DAY - 3_600_000_000);
    assert_eq!(r[0].ts2.get(), 7);
    assert_eq!(r[0].d, Date::new(D2024));
    assert_eq!(r[0].r.start, Some(Date::new(D2024)));
    assert_eq!(r[0].r.end, None);
    assert_eq!(r[0].n2, Numeric::from_i64(3));
}

#[test]
fn other_decimal_scales_are_rescaled_exactly() {
    let b = batch(vec![
        (
            "a",
            Arc::new(
                Decimal128Array::from(vec![1234])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ) as ArrayRef,
        ),
        (
            "b",
            Arc::new(
                Decimal128Array::from(vec![5])
                    .with_precision_and_scale(38, 12)
                    .unwrap(),
            ),
        ),
        (
            "c",
            Arc::new(
                Decimal128Array::from(vec![5000])
                    .with_precision_and_scale(38, 12)
                    .unwrap(),
            ),
        ),
    ]);
    let r: Vec<(Numeric, Option<String>, BigNumeric)> =
        from_record_batch(&b.project(&[0, 1, 2]).unwrap()).unwrap();
    assert_eq!(r[0].0.to_string(), "12.34");
    assert_eq!(r[0].1.as_deref(), Some("0.000000000005"));
    assert_eq!(r[0].2.to_string(), "0.000000005");
    let c: Vec<(Numeric,)> = from_record_batch(&b.project(&[2]).unwrap()).unwrap();
    assert_eq!(c[0].0.to_string(), "0.000000005");
    // 5e-12 does not fit NUMERIC's 9 digits of scale.
    let e = from_record_batch::<(Numeric,)>(&b.project(&[1]).unwrap()).unwrap_err();
    assert_eq!(e.column(), Some("b"));
    assert_eq!(e.value(), Some("0.000000000005"));
}

#[test]
fn integer_and_float_widths() {
    let b = batch(vec![
        ("i8", Arc::new(Int8Array::from(vec![-8])) as ArrayRef),
        ("i16", Arc::new(Int16Array::from(vec![-16]))),
        ("i32", Arc::new(Int32Array::from(vec![-32]))),
        ("u8", Arc::new(UInt8Array::from(vec![8]))),
        ("u16", Arc::new(UInt16Array::from(vec![16]))),
        ("u32", Arc::new(UInt32Array::from(vec![32]))),
        ("u64", Arc::new(UInt64Array::from(vec![u64::MAX]))),
        ("f32", Arc::new(Float32Array::from(vec![0.5f32]))),
        (
            "f16",
            Arc::new(Float16Array::from(vec![
                <arrow_array::types::Float16Type as ArrowPrimitiveType>::Native::from_f32(2.0),
            ])),
        ),
    ]);
    let r: Vec<(i64, i32, i64, u8, u64, u32, u64, f64, f32)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0], (-8, -16, -32, 8, 16, 32, u64::MAX, 0.5, 2.0));
    let v: Vec<serde_json::Value> = from_record_batch(&b).unwrap();
    assert_eq!(v[0]["u64"], json!(u64::MAX));
    assert_eq!(v[0]["f32"], json!(0.5));
}

#[test]
fn string_and_binary_variants() {
    let b = batch(vec![
        (
            "ls",
            Arc::new(LargeStringArray::from(vec!["large"])) as ArrayRef,
        ),
        (
            "vs",
            Arc::new(StringViewArray::from(vec![
                "a view longer than twelve bytes",
            ])),
        ),
        ("lb", Arc::new(LargeBinaryArray::from(vec![&b"lb"[..]]))),
        ("vb", Arc::new(BinaryViewArray::from(vec![&b"vb"[..]]))),
        (
            "fb",
            Arc::new(FixedSizeBinaryArray::try_from_iter(vec![b"fx"].into_iter()).unwrap()),
        ),
        (
            "dict",
            Arc::new(
                vec![Some("x"), None, Some("y"), Some("x")]
                    .into_iter()
                    .collect::<DictionaryArray<Int32Type>>()
                    .slice(0, 1),
            ),
        ),
    ]);
    #[derive(Deserialize)]
    struct R<'a> {
        ls: String,
        vs: &'a str,
        lb: &'a [u8],
        vb: Vec<u8>,
        fb: &'a [u8],
        dict: String,
    }
    let rows: Vec<R<'_>> = BatchRows::new(&b).collect::<Result<_, _>>().unwrap();
    assert_eq!(rows[0].ls, "large");
    assert_eq!(rows[0].vs, "a view longer than twelve bytes");
    assert_eq!(rows[0].lb, b"lb");
    assert_eq!(rows[0].vb, b"vb");
    assert_eq!(rows[0].fb, b"fx");
    assert_eq!(rows[0].dict, "x");
}

#[test]
fn dictionaries_resolve_keys_and_nulls() {
    let dict: DictionaryArray<Int32Type> = vec![Some("b"), None, Some("a"), Some("b")]
        .into_iter()
        .collect();
    let b = batch(vec![("c", Arc::new(dict) as ArrayRef)]);
    #[derive(Deserialize, Debug, PartialEq)]
    enum Letter {
        #[serde(rename = "a")]
        A,
        #[serde(rename = "b")]
        B,
    }
    let r: Vec<Option<Letter>> = from_record_batch(&b).unwrap();
    assert_eq!(
        r,
        vec![Some(Letter::B), None, Some(Letter::A), Some(Letter::B)]
    );
    let v: Vec<serde_json::Value> = from_record_batch(&b).unwrap();
    assert_eq!(v[1], json!({"c": null}));
    assert_eq!(v[2], json!({"c": "a"}));
}

#[test]
fn dictionary_values_may_be_null_too() {
    let dict = DictionaryArray::<Int32Type>::try_new(
        Int32Array::from(vec![Some(0), Some(1), None]),
        Arc::new(StringArray::from(vec![Some("a"), None])),
    )
    .unwrap();
    let b = batch(vec![("c", Arc::new(dict) as ArrayRef)]);
    let r: Vec<(Option<String>,)> = from_record_batch(&b).unwrap();
    assert_eq!(r, vec![(Some("a".into()),), (None,), (None,)]);
    let e = from_record_batch::<(String,)>(&b).unwrap_err();
    assert_eq!((e.column(), e.row()), (Some("c"), Some(1)));
}

#[test]
fn sliced_dictionaries_with_null_keys_and_null_values() {
    // Key NULLs at rows 1 and 4, a NULL value behind key 1 at rows 2 and 5; sliced from
    // row 1, so every bit lies off the bitmap's byte boundary.
    let dict = DictionaryArray::<Int32Type>::try_new(
        Int32Array::from(vec![
            Some(0),
            None,
            Some(1),
            Some(2),
            None,
            Some(1),
            Some(0),
        ]),
        Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
    )
    .unwrap()
    .slice(1, 6);
    let b = batch(vec![("c", Arc::new(dict) as ArrayRef)]);
    let r: Vec<(Option<String>,)> = from_record_batch(&b).unwrap();
    let got: Vec<Option<&str>> = r.iter().map(|(v,)| v.as_deref()).collect();
    assert_eq!(got, [None, None, Some("c"), None, None, Some("a")]);
    let e = from_record_batch::<(String,)>(&b).unwrap_err();
    assert_eq!((e.column(), e.row()), (Some("c"), Some(0)));
    let tail = b.slice(2, 4);
    let e = from_record_batch::<(String,)>(&tail).unwrap_err();
    assert_eq!((e.column(), e.row()), (Some("c"), Some(1)));
}

#[test]
fn timestamps_of_every_unit_and_date64() {
    let secs = D2024 as i64 * 86_400;
    let b = batch(vec![
        (
            "s",
            Arc::new(TimestampSecondArray::from(vec![secs]).with_timezone("+02:00")) as ArrayRef,
        ),
        (
            "ms",
            Arc::new(TimestampMillisecondArray::from(vec![secs * 1000 + 5]).with_timezone("UTC")),
        ),
        (
            "ns",
            Arc::new(TimestampNanosecondArray::from(vec![
                secs * 1_000_000_000 + 7_000,
            ])),
        ),
        ("d64", Arc::new(Date64Array::from(vec![secs * 1000]))),
        ("t32", Arc::new(Time32SecondArray::from(vec![3_723]))),
        ("t64", Arc::new(Time64NanosecondArray::from(vec![1_000]))),
    ]);
    let r: Vec<(Timestamp, Timestamp, DateTime, Date, Time, Time)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].0.get(), secs * 1_000_000);
    assert_eq!(r[0].1.get(), secs * 1_000_000 + 5_000);
    assert_eq!(r[0].2.get(), secs * 1_000_000 + 7);
    assert_eq!(r[0].3, Date::new(D2024));
    assert_eq!(r[0].4.to_string(), "01:02:03");
    assert_eq!(r[0].5.get(), 1);
    let t: Vec<(String, String, String, String, String, String)> = from_record_batch(&b).unwrap();
    assert_eq!(t[0].0, "2024-01-01T00:00:00Z", "an instant is shown in UTC");
    assert_eq!(t[0].1, "2024-01-01T00:00:00.005000Z");
    assert_eq!(t[0].2, "2024-01-01T00:00:00.000007");
    assert_eq!(t[0].3, "2024-01-01");
    let micros: Vec<(i64, i64, i64, i64)> =
        from_record_batch(&b.project(&[0, 1, 2, 3]).unwrap()).unwrap();
    assert_eq!(
        micros[0],
        (
            secs * 1_000_000,
            secs * 1_000_000 + 5_000,
            secs * 1_000_000 + 7,
            D2024 as i64
        )
    );
}

#[test]
fn sub_microsecond_timestamps_are_refused_not_truncated() {
    let b = batch(vec![(
        "ns",
        Arc::new(TimestampNanosecondArray::from(vec![1_001]).with_timezone("UTC")) as ArrayRef,
    )]);
    let e = from_record_batch::<(Timestamp,)>(&b).unwrap_err();
    assert_eq!(e.column(), Some("ns"));
    assert!(e.message().contains("precision"), "{e}");
    // As text it keeps every digit.
    let t: Vec<(String,)> = from_record_batch(&b).unwrap();
    assert_eq!(t[0].0, "1970-01-01T00:00:00.000001001Z");
}

#[test]
fn intervals_of_every_unit() {
    let b = batch(vec![
        (
            "ym",
            Arc::new(IntervalYearMonthArray::from(vec![14])) as ArrayRef,
        ),
        (
            "dt",
            Arc::new(IntervalDayTimeArray::from(vec![IntervalDayTime::new(
                2, 1500,
            )])),
        ),
    ]);
    let r: Vec<(Interval, Interval)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].0, Interval::new(14, 0, 0));
    assert_eq!(r[0].1, Interval::new(0, 2, 1_500_000_000));
    let t: Vec<(String, String)> = from_record_batch(&b).unwrap();
    assert_eq!(
        t[0],
        ("1-2 0 0:0:0".to_string(), "0-0 2 0:0:1.500".to_string())
    );
}

#[test]
fn arrow_maps_into_hash_maps() {
    let mut m = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
    m.keys().append_value("a");
    m.values().append_value(1);
    m.keys().append_value("b");
    m.values().append_null();
    m.append(true).unwrap();
    m.append(true).unwrap();
    let b = batch(vec![("m", Arc::new(m.finish()) as ArrayRef)]);
    let r: Vec<(HashMap<String, Option<i64>>,)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].0.len(), 2);
    assert_eq!(r[0].0["a"], Some(1));
    assert_eq!(r[0].0["b"], None);
    assert!(r[1].0.is_empty());
}

#[test]
fn extension_columns_read_as_text() {
    let schema = TableSchema::new(vec![
        TableFieldSchema::new("j", FieldType::Json),
        TableFieldSchema::new("g", FieldType::Geography),
    ])
    .to_arrow()
    .unwrap();
    let b = batch_of(
        schema.fields().iter().map(|f| f.as_ref().clone()).collect(),
        vec![
            Arc::new(StringArray::from(vec![Some(r#"{"k":true}"#)])),
            Arc::new(StringArray::from(vec![None::<&str>])),
        ],
    );
    let r: Vec<(Json, Option<Geography>)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].0.parse().unwrap(), json!({"k": true}));
    assert_eq!(r[0].1, None);
}

#[test]
fn one_column_results_read_as_bare_values() {
    let b = batch(vec![(
        "x",
        Arc::new(Int64Array::from(vec![Some(1), None])) as ArrayRef,
    )]);
    let r: Vec<Option<i64>> = from_record_batch(&b).unwrap();
    assert_eq!(r, vec![Some(1), None]);
    let e = from_record_batch::<i64>(&b).unwrap_err();
    assert_eq!((e.column(), e.row()), (Some("x"), Some(1)));
    let two = batch(vec![
        ("x", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("y", Arc::new(Int64Array::from(vec![2]))),
    ]);
    let e = from_record_batch::<i64>(&two).unwrap_err();
    assert!(e.message().contains("2 columns"), "{e}");
}

#[test]
fn floats_from_decimals_and_integers() {
    let b = batch(vec![
        (
            "n",
            Arc::new(
                Decimal128Array::from(vec![100_000_000])
                    .with_precision_and_scale(38, 9)
                    .unwrap(),
            ) as ArrayRef,
        ),
        ("i", Arc::new(Int64Array::from(vec![3]))),
    ]);
    let r: Vec<(f64, f32)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0], (0.1, 3.0));
}

#[test]
fn sliced_batches_read_the_slice() {
    let b = batch(vec![
        (
            "i",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)])) as ArrayRef,
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![
                Some("a"),
                Some("b"),
                None,
                Some("d"),
            ])),
        ),
        (
            "b",
            Arc::new(BooleanArray::from(vec![true, false, true, false])),
        ),
    ])
    .slice(1, 3);
    let r: Vec<(Option<i64>, Option<String>, bool)> = from_record_batch(&b).unwrap();
    assert_eq!(
        r,
        vec![
            (None, Some("b".into()), false),
            (Some(3), None, true),
            (Some(4), Some("d".into()), false)
        ]
    );
}

#[test]
fn null_type_columns_are_all_null() {
    let b = batch(vec![("z", Arc::new(NullArray::new(2)) as ArrayRef)]);
    let r: Vec<(Option<String>,)> = from_record_batch(&b).unwrap();
    assert_eq!(r, vec![(None,), (None,)]);
    let e = from_record_batch::<(String,)>(&b).unwrap_err();
    assert_eq!(e.column(), Some("z"));
}

#[test]
fn duration_columns_read_as_integers() {
    let b = batch(vec![(
        "d",
        Arc::new(DurationMillisecondArray::from(vec![1500])) as ArrayRef,
    )]);
    let r: Vec<(i64,)> = from_record_batch(&b).unwrap();
    assert_eq!(r[0].0, 1500);
    let _ = TimeUnit::Millisecond;
}

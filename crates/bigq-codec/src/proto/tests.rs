//! The encoder's rows decoded by prost (an independent protobuf implementation) into
//! messages declared to match the descriptor, and the errors for rows that do not fit.

use std::collections::BTreeMap;

use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};
use serde::Serialize;

use super::{NumericEncoding, ProtoOptions, RowEncoder, WriteSchema};
use crate::CodecErrorKind;
use crate::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use crate::value::{
    BigNumeric, Date, DateTime, Geography, Interval, Json, Numeric, Range, Time, Timestamp,
};

fn col(name: &str, t: FieldType) -> TableFieldSchema {
    TableFieldSchema::new(name, t)
}

fn scalars() -> TableSchema {
    TableSchema::new(vec![
        col("i", FieldType::Int64).with_mode(FieldMode::Required),
        col("f", FieldType::Float64),
        col("b", FieldType::Bool),
        col("s", FieldType::String),
        col("by", FieldType::Bytes),
        col("n", FieldType::Numeric),
        col("bn", FieldType::BigNumeric),
        col("d", FieldType::Date),
        col("t", FieldType::Time),
        col("dt", FieldType::DateTime),
        col("ts", FieldType::Timestamp),
        col("j", FieldType::Json),
        col("g", FieldType::Geography),
        col("iv", FieldType::Interval),
    ])
}

/// The message the descriptor of [`scalars`] describes, for prost.
#[derive(Clone, PartialEq, prost::Message)]
struct ScalarsPb {
    #[prost(int64, required, tag = "1")]
    i: i64,
    #[prost(double, optional, tag = "2")]
    f: Option<f64>,
    #[prost(bool, optional, tag = "3")]
    b: Option<bool>,
    #[prost(string, optional, tag = "4")]
    s: Option<String>,
    #[prost(bytes = "vec", optional, tag = "5")]
    by: Option<Vec<u8>>,
    #[prost(string, optional, tag = "6")]
    n: Option<String>,
    #[prost(string, optional, tag = "7")]
    bn: Option<String>,
    #[prost(int32, optional, tag = "8")]
    d: Option<i32>,
    #[prost(string, optional, tag = "9")]
    t: Option<String>,
    #[prost(string, optional, tag = "10")]
    dt: Option<String>,
    #[prost(int64, optional, tag = "11")]
    ts: Option<i64>,
    #[prost(string, optional, tag = "12")]
    j: Option<String>,
    #[prost(string, optional, tag = "13")]
    g: Option<String>,
    #[prost(string, optional, tag = "14")]
    iv: Option<String>,
}

#[derive(Serialize)]
struct Scalars {
    i: i64,
    f: Option<f64>,
    b: Option<bool>,
    s: Option<String>,
    #[serde(with = "bytes")]
    by: Vec<u8>,
    n: Option<Numeric>,
    bn: Option<BigNumeric>,
    d: Option<Date>,
    t: Option<Time>,
    dt: Option<DateTime>,
    ts: Option<Timestamp>,
    j: Option<Json>,
    g: Option<Geography>,
    iv: Option<Interval>,
}

mod bytes {
    pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }
}

fn encode<T: Serialize>(schema: &TableSchema, row: &T) -> Vec<u8> {
    let mut enc = RowEncoder::new(WriteSchema::new(schema).unwrap());
    let mut out = Vec::new();
    enc.encode(row, &mut out).unwrap();
    out
}

fn encode_err<T: Serialize>(schema: &TableSchema, row: &T) -> crate::CodecError {
    let mut enc = RowEncoder::new(WriteSchema::new(schema).unwrap());
    let mut out = vec![1, 2, 3];
    let e = enc.encode(row, &mut out).unwrap_err();
    assert_eq!(out, [1, 2, 3], "a failed row leaves the buffer as it was");
    e
}

#[test]
fn every_scalar_type_decodes_as_the_api_expects() {
    let row = Scalars {
        i: -5,
        f: Some(2.5),
        b: Some(true),
        s: Some("hé".into()),
        by: vec![0, 255, 7],
        n: Some("-123.450000000".parse().unwrap()),
        bn: Some("1.00000000000000000000000000000000000001".parse().unwrap()),
        d: Some(Date::from_ymd(1969, 12, 31).unwrap()),
        t: Some("12:34:56.5".parse().unwrap()),
        dt: Some("2024-02-29 23:59:59.000001".parse().unwrap()),
        ts: Some(Timestamp::new(1_704_067_200_000_001)),
        j: Some(Json(r#"{"a":[1,2]}"#.into())),
        g: Some(Geography("POINT(1 2)".into())),
        iv: Some("1-2 3 4:5:6.5".parse().unwrap()),
    };
    let pb = ScalarsPb::decode(&encode(&scalars(), &row)[..]).unwrap();
    assert_eq!(
        pb,
        ScalarsPb {
            i: -5,
            f: Some(2.5),
            b: Some(true),
            s: Some("hé".into()),
            by: Some(vec![0, 255, 7]),
            n: Some("-123.45".into()),
            bn: Some("1.00000000000000000000000000000000000001".into()),
            d: Some(-1),
            t: Some("12:34:56.500000".into()),
            dt: Some("2024-02-29T23:59:59.000001".into()),
            ts: Some(1_704_067_200_000_001),
            j: Some(r#"{"a":[1,2]}"#.into()),
            g: Some("POINT(1 2)".into()),
            iv: Some("1-2 3 4:5:6.500".into()),
        }
    );
}

#[test]
fn nulls_are_absent_fields() {
    let row = Scalars {
        i: 0,
        f: None,
        b: None,
        s: None,
        by: vec![],
        n: None,
        bn: None,
        d: None,
        t: None,
        dt: None,
        ts: None,
        j: None,
        g: None,
        iv: None,
    };
    // Only the required `i` = 0 and the empty bytes.
    assert_eq!(encode(&scalars(), &row), [0x08, 0, 0x2a, 0]);
}

#[test]
fn text_and_numbers_reach_typed_columns_as_the_value_types_do() {
    #[derive(Serialize)]
    struct Typed {
        i: i64,
        n: Numeric,
        d: Date,
        t: Time,
        dt: DateTime,
        ts: Timestamp,
        iv: Interval,
    }
    #[derive(Serialize)]
    struct Text {
        i: i64,
        n: &'static str,
        d: &'static str,
        t: &'static str,
        dt: &'static str,
        ts: &'static str,
        iv: &'static str,
    }
    #[derive(Serialize)]
    struct Numbers {
        i: u8,
        n: f64,
        d: i32,
        t: i64,
        dt: i64,
        ts: i64,
        iv: &'static str,
    }
    let typed = Typed {
        i: 1,
        n: "0.1".parse().unwrap(),
        d: "2024-01-02".parse().unwrap(),
        t: "00:00:01".parse().unwrap(),
        dt: "1970-01-01T00:00:02".parse().unwrap(),
        ts: "2024-01-01 00:00:00.25+00".parse().unwrap(),
        iv: "0-0 1 0:0:0".parse().unwrap(),
    };
    let text = Text {
        i: 1,
        n: "0.100",
        d: "2024-01-02",
        t: "00:00:01",
        dt: "1970-01-01 00:00:02",
        ts: "2024-01-01T00:00:00.250Z",
        iv: "0-0 1 0:0:0",
    };
    let numbers = Numbers {
        i: 1,
        n: 0.1,
        d: 19_724,
        t: 1_000_000,
        dt: 2_000_000,
        ts: 1_704_067_200_250_000,
        iv: "0-0 1 0:0:0",
    };
    let s = scalars();
    let a = encode(&s, &typed);
    assert_eq!(a, encode(&s, &text));
    assert_eq!(a, encode(&s, &numbers));
    let pb = ScalarsPb::decode(&a[..]).unwrap();
    assert_eq!(pb.n.as_deref(), Some("0.1"));
    assert_eq!(pb.d, Some(19_724));
}

#[test]
fn value_types_serialize_as_text_outside_the_encoder() {
    // The raw form is only for the encoder: serde_json still sees text, before and after.
    let ts = Timestamp::new(1_704_067_200_000_000);
    let before = serde_json::to_string(&ts).unwrap();
    let _ = encode(&scalars(), &serde_json::json!({"i": 1, "ts": ts}));
    assert_eq!(serde_json::to_string(&ts).unwrap(), before);
    assert_eq!(before, format!("\"{ts}\""));
}

#[test]
fn numeric_formats_like_the_value_type() {
    use crate::de::text::{StackBuf, write_decimal_i128};
    for units in [
        0i128,
        1,
        -1,
        999_999_999,
        1_000_000_000,
        -1_500_000_000,
        123_450_000_000,
        Numeric::MAX.to_scaled(),
        Numeric::MIN.to_scaled(),
        u64::MAX as i128 + 1,
    ] {
        let mut text = StackBuf::new();
        write_decimal_i128(&mut text, units, 9).unwrap();
        let want = Numeric::from_scaled(units).unwrap().to_string();
        assert_eq!(text.as_str(), want, "{units}");
    }
}

#[test]
fn packed_numeric_is_minimal_little_endian_twos_complement() {
    let schema = TableSchema::new(vec![
        col("n", FieldType::Numeric),
        col("bn", FieldType::BigNumeric),
    ]);
    let ws = WriteSchema::with_options(
        &schema,
        ProtoOptions::default().with_numeric(NumericEncoding::Packed),
    )
    .unwrap();
    assert_eq!(ws.descriptor().field[0].r#type(), Type::Bytes);
    let mut enc = RowEncoder::new(ws);
    let mut check = |n: &str, want: &[u8]| {
        let mut out = Vec::new();
        enc.encode(&serde_json::json!({ "n": n }), &mut out)
            .unwrap();
        assert_eq!(out[0], 0x0a);
        assert_eq!(out[1] as usize, want.len(), "{n}");
        assert_eq!(&out[2..], want, "{n}");
    };
    // 1.5 = 1_500_000_000 units = 0x59682F00.
    check("1.5", &[0x00, 0x2f, 0x68, 0x59]);
    check("0", &[0]);
    check("-0.000000001", &[0xff]);
    // 0.000000128 = 128 units: 0x80 needs a 0x00 above it to stay positive.
    check("0.000000128", &[0x80, 0x00]);
    check("-0.000000128", &[0x80]);
    check("-0.000000129", &[0x7f, 0xff]);
    check("0.000032767", &[0xff, 0x7f]);
    check("0.000032768", &[0x00, 0x80, 0x00]);
    // The largest NUMERIC, 10^38 - 1 units: 127 bits, 16 bytes with the sign bit clear.
    let max = "99999999999999999999999999999.999999999";
    let units = 10i128.pow(38) - 1;
    check(max, &units.to_le_bytes());
    check(&format!("-{max}"), &(-units).to_le_bytes());
    // The value types' raw path writes the same bytes as their text.
    #[derive(serde::Serialize)]
    struct N {
        n: crate::value::Numeric,
    }
    for units in [
        0i128,
        1,
        -1,
        127,
        128,
        -128,
        -129,
        1 << 40,
        -(1 << 70),
        10i128.pow(38) - 1,
    ] {
        let text = crate::value::Numeric::from_scaled(units)
            .unwrap()
            .to_string();
        let (mut raw, mut via_text) = (Vec::new(), Vec::new());
        enc.encode(
            &N {
                n: crate::value::Numeric::from_scaled(units).unwrap(),
            },
            &mut raw,
        )
        .unwrap();
        enc.encode(&serde_json::json!({ "n": text }), &mut via_text)
            .unwrap();
        assert_eq!(raw, via_text, "{units}");
    }
    let mut out = Vec::new();
    enc.encode(&serde_json::json!({ "bn": "-1" }), &mut out)
        .unwrap();
    // -10^38 as a 17-byte two's complement.
    let want = (-(10i128.pow(38))).to_le_bytes();
    assert_eq!(&out[..2], [0x12, 16]);
    assert_eq!(&out[2..], want);
}

#[derive(Clone, PartialEq, prost::Message)]
struct InfoPb {
    #[prost(int64, optional, tag = "1")]
    a: Option<i64>,
    #[prost(string, repeated, tag = "2")]
    b: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct RangePb {
    #[prost(int32, optional, tag = "1")]
    start: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    end: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct NestedPb {
    #[prost(int64, required, tag = "1")]
    id: i64,
    #[prost(message, optional, tag = "2")]
    info: Option<InfoPb>,
    #[prost(message, repeated, tag = "3")]
    items: Vec<InfoPb>,
    #[prost(int64, repeated, packed = "true", tag = "4")]
    tags: Vec<i64>,
    #[prost(message, optional, tag = "5")]
    span: Option<RangePb>,
    #[prost(double, repeated, packed = "true", tag = "6")]
    xs: Vec<f64>,
}

fn nested_schema() -> TableSchema {
    let info = || {
        vec![
            col("a", FieldType::Int64),
            col("b", FieldType::String).with_mode(FieldMode::Repeated),
        ]
    };
    TableSchema::new(vec![
        col("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::record("info", info()),
        TableFieldSchema::record("items", info()).with_mode(FieldMode::Repeated),
        col("tags", FieldType::Int64).with_mode(FieldMode::Repeated),
        TableFieldSchema::range("span", FieldType::Date),
        col("xs", FieldType::Float64).with_mode(FieldMode::Repeated),
    ])
}

#[derive(Serialize)]
struct Info {
    a: Option<i64>,
    b: Vec<String>,
}

#[derive(Serialize)]
struct Nested {
    id: i64,
    info: Option<Info>,
    items: Vec<Info>,
    tags: Vec<i64>,
    span: Option<Range<Date>>,
    xs: Vec<f64>,
}

#[test]
fn records_arrays_and_ranges_nest() {
    let long = "x".repeat(300);
    let row = Nested {
        id: 1,
        info: Some(Info {
            a: Some(-2),
            b: vec!["p".into(), long.clone()],
        }),
        items: vec![
            Info { a: None, b: vec![] },
            Info {
                a: Some(3),
                b: vec!["q".into()],
            },
        ],
        tags: (0..100).collect(),
        span: Some(Range::new(Some(Date::new(10)), None)),
        xs: vec![0.5, -1.0],
    };
    let pb = NestedPb::decode(&encode(&nested_schema(), &row)[..]).unwrap();
    assert_eq!(
        pb,
        NestedPb {
            id: 1,
            info: Some(InfoPb {
                a: Some(-2),
                b: vec!["p".into(), long],
            }),
            items: vec![
                InfoPb { a: None, b: vec![] },
                InfoPb {
                    a: Some(3),
                    b: vec!["q".into()],
                },
            ],
            tags: (0..100).collect(),
            span: Some(RangePb {
                start: Some(10),
                end: None,
            }),
            xs: vec![0.5, -1.0],
        }
    );
}

#[test]
fn a_range_as_text_or_struct_and_empty_arrays_as_nothing() {
    let text = serde_json::json!({"id": 1, "span": "[1970-01-11, UNBOUNDED)", "tags": []});
    let s = serde_json::json!({"id": 1, "span": {"start": 10, "end": null}, "tags": null});
    let typed = Nested {
        id: 1,
        info: None,
        items: vec![],
        tags: vec![],
        span: Some(Range::new(Some(Date::new(10)), None)),
        xs: vec![],
    };
    let want = encode(&nested_schema(), &typed);
    assert_eq!(encode(&nested_schema(), &text), want);
    assert_eq!(encode(&nested_schema(), &s), want);
    // id, then span { start: 10 }.
    assert_eq!(want, [0x08, 1, 0x2a, 2, 0x08, 10]);
}

#[test]
fn maps_rows_match_columns_case_insensitively() {
    let mut row = BTreeMap::new();
    row.insert("ID", serde_json::json!(4));
    row.insert("Tags", serde_json::json!([1, 2]));
    let pb = NestedPb::decode(&encode(&nested_schema(), &row)[..]).unwrap();
    assert_eq!(pb.id, 4);
    assert_eq!(pb.tags, [1, 2]);
}

#[test]
fn json_columns_take_text_or_any_serializable_value() {
    let schema = TableSchema::new(vec![
        col("j", FieldType::Json),
        col("js", FieldType::Json).with_mode(FieldMode::Repeated),
    ]);
    #[derive(Clone, PartialEq, prost::Message)]
    struct Pb {
        #[prost(string, optional, tag = "1")]
        j: Option<String>,
        #[prost(string, repeated, tag = "2")]
        js: Vec<String>,
    }
    #[derive(Serialize)]
    struct Doc {
        k: (i32, bool),
        ts: Timestamp,
    }
    #[derive(Serialize)]
    struct Row {
        j: Doc,
        js: serde_json::Value,
    }
    let row = Row {
        j: Doc {
            k: (1, true),
            ts: Timestamp::new(0),
        },
        js: serde_json::json!(["[1]", 2, {"a": null}]),
    };
    let pb = Pb::decode(&encode(&schema, &row)[..]).unwrap();
    // A Timestamp inside a JSON value is its text, as serde_json writes it anywhere else.
    let ts = serde_json::to_string(&Timestamp::new(0)).unwrap();
    assert_eq!(pb.j, Some(format!(r#"{{"k":[1,true],"ts":{ts}}}"#)));
    assert_eq!(pb.js, ["[1]", "2", r#"{"a":null}"#]);
}

#[test]
fn the_descriptor_names_numbers_and_nests_the_columns() {
    let mut cols = nested_schema().fields;
    // A column named like a generated message type does not clash with it.
    cols.push(col("M2", FieldType::String));
    let ws = WriteSchema::new(&TableSchema::new(cols)).unwrap();
    let d = ws.descriptor();
    assert_eq!(d.name(), "bigq_row");
    let names: Vec<_> = d.field.iter().map(|f| f.name()).collect();
    assert_eq!(names, ["id", "info", "items", "tags", "span", "xs", "M2"]);
    let numbers: Vec<_> = d.field.iter().map(|f| f.number()).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(d.field[0].label(), Label::Required);
    assert_eq!(d.field[1].label(), Label::Optional);
    assert_eq!(d.field[2].label(), Label::Repeated);
    assert_eq!(d.field[1].r#type(), Type::Message);
    assert_eq!(d.field[1].type_name(), "M2_");
    assert_eq!(d.field[2].type_name(), "M3");
    assert_eq!(d.field[4].type_name(), "M5");
    assert_eq!(
        d.field[3].options.as_ref().and_then(|o| o.packed),
        Some(true)
    );
    assert_eq!(d.field[2].options, None, "messages are never packed");
    let nested: Vec<_> = d.nested_type.iter().map(|t| t.name()).collect();
    assert_eq!(nested, ["M2_", "M3", "M5"]);
    let span = &d.nested_type[2];
    assert_eq!(span.field[0].name(), "start");
    assert_eq!(span.field[1].r#type(), Type::Int32);
}

#[test]
fn a_bad_schema_is_an_error_naming_the_column() {
    let e = WriteSchema::new(&TableSchema::new(vec![col("a-b", FieldType::Int64)])).unwrap_err();
    assert_eq!(e.kind(), CodecErrorKind::Schema);
    assert_eq!(e.column(), Some("a-b"));
    let e = WriteSchema::new(&TableSchema::new(vec![TableFieldSchema::record(
        "r",
        vec![col("x", FieldType::Unknown("FOO".into()))],
    )]))
    .unwrap_err();
    assert_eq!(e.column(), Some("r.x"));
    assert!(e.message().contains("FOO"), "{e}");
}

#[test]
fn rows_that_do_not_fit_are_errors_naming_column_and_value() {
    let s = nested_schema();
    // Missing REQUIRED.
    let e = encode_err(&s, &serde_json::json!({"tags": [1]}));
    assert_eq!(e.column(), Some("id"));
    assert!(e.message().contains("REQUIRED"), "{e}");
    // NULL into REQUIRED.
    let e = encode_err(&s, &serde_json::json!({"id": null}));
    assert_eq!(e.column(), Some("id"));
    // Wrong type, nested.
    let e = encode_err(&s, &serde_json::json!({"id": 1, "info": {"a": "x"}}));
    assert_eq!((e.column(), e.value()), (Some("info.a"), Some("x")));
    assert!(e.message().contains("INT64"), "{e}");
    // Not a column.
    let e = encode_err(&s, &serde_json::json!({"id": 1, "info": {"zz": 1}}));
    assert_eq!(e.column(), Some("info.zz"));
    // NULL array element.
    let e = encode_err(&s, &serde_json::json!({"id": 1, "tags": [1, null]}));
    assert_eq!(e.column(), Some("tags"));
    assert!(e.message().contains("index 1"), "{e}");
    // An array into a column that is not REPEATED, and a scalar into one that is.
    let e = encode_err(&s, &serde_json::json!({"id": [1]}));
    assert_eq!(e.column(), Some("id"));
    let e = encode_err(&s, &serde_json::json!({"id": 1, "tags": 3}));
    assert_eq!(e.column(), Some("tags"));
    // u64 past INT64.
    let e = encode_err(&s, &serde_json::json!({"id": u64::MAX}));
    assert_eq!(e.value(), Some("18446744073709551615"));
    // Not a row at all.
    let e = encode_err(&s, &5);
    assert!(e.message().contains("struct or a map"), "{e}");

    let mut short = col("s", FieldType::String);
    short.max_length = Some(3);
    let t = TableSchema::new(vec![
        short,
        col("n", FieldType::Numeric),
        col("d", FieldType::Date),
        col("ts", FieldType::Timestamp),
    ]);
    // "héé" is 3 characters in 5 bytes: it fits.
    encode(&t, &serde_json::json!({"s": "héé"}));
    let e = encode_err(&t, &serde_json::json!({"s": "abcd"}));
    assert_eq!((e.column(), e.value()), (Some("s"), Some("abcd")));
    assert_eq!(e.kind(), CodecErrorKind::Value);
    let e = encode_err(&t, &serde_json::json!({"n": "1.2.3"}));
    assert_eq!((e.column(), e.value()), (Some("n"), Some("1.2.3")));
    let e = encode_err(&t, &serde_json::json!({"n": "0.0000000001"}));
    assert_eq!(
        e.column(),
        Some("n"),
        "more than 9 decimals is not a NUMERIC"
    );
    #[derive(Serialize)]
    struct NanRow {
        n: f64,
    }
    let e = encode_err(&t, &NanRow { n: f64::NAN });
    assert_eq!((e.column(), e.value()), (Some("n"), Some("NaN")));
    let e = encode_err(&t, &serde_json::json!({"d": 3_000_000}));
    assert_eq!((e.column(), e.value()), (Some("d"), Some("3000000")));
    let e = encode_err(&t, &serde_json::json!({"ts": "yesterday"}));
    assert_eq!((e.column(), e.value()), (Some("ts"), Some("yesterday")));
}

#[test]
fn encode_rows_names_the_failing_row() {
    let mut enc = RowEncoder::new(WriteSchema::new(&nested_schema()).unwrap());
    let rows = vec![
        serde_json::json!({"id": 1}),
        serde_json::json!({"id": 2}),
        serde_json::json!({"id": "three"}),
    ];
    let e = enc.encode_rows(&rows).unwrap_err();
    assert_eq!((e.row(), e.column()), (Some(2), Some("id")));
    let ok = enc.encode_rows(&rows[..2]).unwrap();
    assert_eq!(ok, [vec![0x08, 1], vec![0x08, 2]]);
}

#[test]
fn the_key_cache_follows_rows_of_different_shapes() {
    // Two Rust types for one message, and skipped fields, through one encoder.
    #[derive(Serialize)]
    struct A {
        id: i64,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tags: Vec<i64>,
        xs: Vec<f64>,
    }
    #[derive(Serialize)]
    struct B {
        xs: Vec<f64>,
        id: i64,
    }
    let mut enc = RowEncoder::new(WriteSchema::new(&nested_schema()).unwrap());
    let mut check = |row: &dyn erased::Row, id: i64, tags: Vec<i64>, xs: Vec<f64>| {
        let mut out = Vec::new();
        row.encode(&mut enc, &mut out);
        let pb = NestedPb::decode(&out[..]).unwrap();
        assert_eq!((pb.id, pb.tags, pb.xs), (id, tags, xs));
    };
    check(
        &A {
            id: 1,
            tags: vec![],
            xs: vec![1.0],
        },
        1,
        vec![],
        vec![1.0],
    );
    check(
        &A {
            id: 2,
            tags: vec![5],
            xs: vec![],
        },
        2,
        vec![5],
        vec![],
    );
    check(
        &B {
            xs: vec![2.0],
            id: 3,
        },
        3,
        vec![],
        vec![2.0],
    );
    check(
        &A {
            id: 4,
            tags: vec![],
            xs: vec![3.0],
        },
        4,
        vec![],
        vec![3.0],
    );
}

mod erased {
    use super::*;
    pub trait Row {
        fn encode(&self, enc: &mut RowEncoder, out: &mut Vec<u8>);
    }
    impl<T: Serialize> Row for T {
        fn encode(&self, enc: &mut RowEncoder, out: &mut Vec<u8>) {
            enc.encode(self, out).unwrap();
        }
    }
}

#[test]
fn a_row_that_fails_inside_a_record_leaves_the_encoder_usable() {
    // The failing row stops inside `info`, while the root's and the record's key caches are
    // out of the encoder; the rows after it must still find every column.
    #[derive(Serialize)]
    struct BadInfo {
        a: &'static str,
    }
    #[derive(Serialize)]
    struct Bad {
        id: i64,
        info: BadInfo,
    }
    let mut enc = RowEncoder::new(WriteSchema::new(&nested_schema()).unwrap());
    let good = |id| Nested {
        id,
        info: Some(Info {
            a: Some(id * 10),
            b: vec!["x".into()],
        }),
        items: vec![],
        tags: vec![id],
        span: None,
        xs: vec![],
    };
    for round in 0..3 {
        let mut out = Vec::new();
        enc.encode(&good(round), &mut out).unwrap();
        let pb = NestedPb::decode(&out[..]).unwrap();
        assert_eq!(
            (pb.id, pb.tags.clone()),
            (round, vec![round]),
            "round {round}"
        );
        assert_eq!(pb.info.and_then(|i| i.a), Some(round * 10), "round {round}");
        let mut out = vec![7];
        let e = enc
            .encode(
                &Bad {
                    id: 9,
                    info: BadInfo { a: "nine" },
                },
                &mut out,
            )
            .unwrap_err();
        assert_eq!(e.column(), Some("info.a"));
        assert_eq!(out, [7], "a failed row leaves the buffer as it was");
    }
}

/// A change row of a table `(id INT64 REQUIRED, name STRING)`, for prost.
#[derive(Clone, PartialEq, prost::Message)]
struct ChangePb {
    #[prost(int64, required, tag = "1")]
    id: i64,
    #[prost(string, optional, tag = "2")]
    name: Option<String>,
    #[prost(string, optional, tag = "3")]
    change_type: Option<String>,
    #[prost(string, optional, tag = "4")]
    change_sequence: Option<String>,
}

#[test]
fn change_rows_carry_the_pseudo_columns() {
    use super::{ChangeSequence, ChangeType};
    #[derive(Serialize)]
    struct Row {
        id: i64,
        name: Option<&'static str>,
    }
    let table = TableSchema::new(vec![
        col("id", FieldType::Int64).with_mode(FieldMode::Required),
        col("name", FieldType::String),
    ]);
    let plain = WriteSchema::new(&table).unwrap();
    assert!(!plain.has_change_columns());
    let mut enc = RowEncoder::new(plain);
    let e = enc
        .encode_change(
            &Row { id: 1, name: None },
            ChangeType::Upsert,
            None,
            &mut Vec::new(),
        )
        .unwrap_err();
    assert_eq!(e.column(), Some("_CHANGE_TYPE"));

    let schema =
        WriteSchema::with_options(&table, ProtoOptions::default().with_change_columns(true))
            .unwrap();
    assert!(schema.has_change_columns());
    // The table schema stays the table's; the descriptor gains two optional strings.
    assert_eq!(schema.table_schema(), &table);
    let fields: Vec<_> = schema
        .descriptor()
        .field
        .iter()
        .map(|f| (f.name().to_string(), f.number(), f.r#type(), f.label()))
        .collect();
    assert_eq!(
        fields[2..],
        [
            ("_CHANGE_TYPE".to_string(), 3, Type::String, Label::Optional),
            (
                "_CHANGE_SEQUENCE_NUMBER".to_string(),
                4,
                Type::String,
                Label::Optional
            ),
        ]
    );
    let mut enc = RowEncoder::new(schema);
    let mut buf = Vec::new();
    let seq = ChangeSequence::from([1, 0xAB]);
    enc.encode_change(
        &Row {
            id: 7,
            name: Some("x"),
        },
        ChangeType::Upsert,
        Some(&seq),
        &mut buf,
    )
    .unwrap();
    assert_eq!(
        ChangePb::decode(buf.as_slice()).unwrap(),
        ChangePb {
            id: 7,
            name: Some("x".into()),
            change_type: Some("UPSERT".into()),
            change_sequence: Some("1/AB".into()),
        }
    );
    let mut buf = Vec::new();
    enc.encode_change(
        &Row { id: 8, name: None },
        ChangeType::Delete,
        None,
        &mut buf,
    )
    .unwrap();
    assert_eq!(
        ChangePb::decode(buf.as_slice()).unwrap(),
        ChangePb {
            id: 8,
            name: None,
            change_type: Some("DELETE".into()),
            change_sequence: None,
        }
    );
    // A row that does not fit leaves the buffer as it was, pseudo-columns included.
    let mut buf = vec![1, 2];
    #[derive(Serialize)]
    struct NoId {
        name: &'static str,
    }
    assert!(
        enc.encode_change(
            &NoId { name: "x" },
            ChangeType::Upsert,
            Some(&seq),
            &mut buf
        )
        .is_err()
    );
    assert_eq!(buf, [1, 2]);
}

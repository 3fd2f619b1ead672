//! Tests of the protobuf row decoder: round trips from serde rows through the encoder,
//! checked value by value against the rows; the Storage Write encodings the encoder does not
//! write, built by hand; and row errors.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{
    Array, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Decimal256Array, Float64Array,
    Int64Array, ListArray, RecordBatch, StringArray, StructArray, Time64MicrosecondArray,
    TimestampMicrosecondArray,
};
use arrow_buffer::i256;
use arrow_schema::SchemaRef;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto};
use serde_json::{Value, json};

use super::civil::{encode_datetime, encode_time};
use super::{CompileError, DecodeError, RowsDecoder};
use crate::proto::wire;
use crate::proto::{NumericEncoding, ProtoOptions, RowEncoder, WriteSchema};
use crate::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};

/// A table's columns with the Arrow schema its rows are stored in.
struct Table {
    schema: Vec<TableFieldSchema>,
    arrow_schema: SchemaRef,
}

impl Table {
    fn new(schema: Vec<TableFieldSchema>) -> Result<Table, crate::CodecError> {
        let arrow_schema = TableSchema::new(schema.clone()).to_arrow()?;
        Ok(Table {
            schema,
            arrow_schema,
        })
    }
}

fn col(name: &str, t: FieldType) -> TableFieldSchema {
    TableFieldSchema::new(name, t)
}

/// A table with every type the emulator stores, nested and repeated.
fn all_types() -> Vec<TableFieldSchema> {
    vec![
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
        col("tags", FieldType::Int64).with_mode(FieldMode::Repeated),
        col("words", FieldType::String).with_mode(FieldMode::Repeated),
        TableFieldSchema::record(
            "rec",
            vec![
                col("a", FieldType::Int64),
                col("b", FieldType::String),
                col("xs", FieldType::Float64).with_mode(FieldMode::Repeated),
                TableFieldSchema::record("deep", vec![col("z", FieldType::Date)]),
            ],
        ),
        TableFieldSchema::record(
            "recs",
            vec![col("k", FieldType::String), col("v", FieldType::Numeric)],
        )
        .with_mode(FieldMode::Repeated),
    ]
}

/// splitmix64, for deterministic rows.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `v`, or NULL one time in four.
fn maybe(v: Value, rng: &mut Rng) -> Value {
    if rng.below(4) == 0 { Value::Null } else { v }
}

/// Row `k` of the all-types table as insertAll JSON (NULLs left in as `null`).
fn all_types_row(rng: &mut Rng, k: i64) -> Value {
    let n = rng.below(1_000_000) as i64 - 500_000;
    let mut row = json!({
        "i": k * 7 - 3,
        "f": maybe(json!(n as f64 / 8.0), rng),
        "b": maybe(json!(n % 2 == 0), rng),
        "s": maybe(json!(format!("s-{n}-é✓")), rng),
        "by": maybe(json!(n.to_le_bytes().to_vec()), rng),
        "n": maybe(json!(format!("{}.{:09}", n, rng.below(1_000_000_000))), rng),
        "bn": maybe(json!(format!("-{}.{:038}", n.unsigned_abs() * 1_000_000_007, 17)), rng),
        "d": maybe(json!(format!("{:04}-{:02}-{:02}", 1 + rng.below(9999), 1 + rng.below(12), 1 + rng.below(28))), rng),
        "t": maybe(json!(format!("{:02}:{:02}:{:02}.{:06}", rng.below(24), rng.below(60), rng.below(60), rng.below(1_000_000))), rng),
        "dt": maybe(json!(format!("2024-02-{:02}T{:02}:30:00.{:06}", 1 + rng.below(29), rng.below(24), rng.below(1_000_000))), rng),
        "ts": maybe(json!(format!("2021-06-{:02}T01:02:03.{:06}Z", 1 + rng.below(30), rng.below(1_000_000))), rng),
        "j": maybe(json!(format!("{{\"k\":{n}}}")), rng),
        "g": maybe(json!(format!("POINT({n} 1)")), rng),
        "tags": (0..rng.below(4)).map(|x| x as i64 - n).collect::<Vec<_>>(),
        "words": (0..rng.below(3)).map(|x| format!("w{x}")).collect::<Vec<_>>(),
        "recs": (0..rng.below(3)).map(|x| json!({"k": format!("k{x}"), "v": format!("{x}.5")})).collect::<Vec<_>>(),
    });
    row["rec"] = maybe(
        json!({
            "a": n,
            "b": maybe(json!("inner"), rng),
            "xs": (0..rng.below(3)).map(|x| x as f64 * 0.25).collect::<Vec<_>>(),
            "deep": maybe(json!({"z": maybe(json!("2000-01-01"), rng)}), rng),
        }),
        rng,
    );
    row
}

fn write_schema(cols: &[TableFieldSchema], numeric: NumericEncoding) -> Arc<WriteSchema> {
    WriteSchema::with_options(
        &TableSchema::new(cols.to_vec()),
        ProtoOptions::default().with_numeric(numeric),
    )
    .unwrap()
}

fn encode(schema: &Arc<WriteSchema>, rows: &[Value]) -> Vec<Vec<u8>> {
    RowEncoder::new(schema.clone()).encode_rows(rows).unwrap()
}

fn decode(
    table: &Table,
    desc: &DescriptorProto,
    rows: &[Vec<u8>],
) -> Result<RecordBatch, DecodeError> {
    RowsDecoder::new(desc, &table.schema, table.arrow_schema.clone())
        .unwrap()
        .decode(rows, &[])
}

/// The row errors of a request that should fail.
fn row_errors(table: &Table, desc: &DescriptorProto, rows: &[Vec<u8>]) -> Vec<(usize, String)> {
    match decode(table, desc, rows) {
        Err(DecodeError::Rows(e)) => e,
        other => panic!("expected row errors, got {other:?}"),
    }
}

#[test]
fn packed_numerics_store_the_same_values_as_text() {
    let table = Table::new(all_types()).unwrap();
    let text = write_schema(&table.schema, NumericEncoding::Text);
    let packed = write_schema(&table.schema, NumericEncoding::Packed);
    assert_eq!(
        packed.descriptor().field[5].r#type(),
        Type::Bytes,
        "the packed descriptor puts NUMERIC in bytes"
    );
    let mut rng = Rng(11);
    let rows: Vec<Value> = (0..500).map(|k| all_types_row(&mut rng, k)).collect();
    let a = decode(&table, text.descriptor(), &encode(&text, &rows)).unwrap();
    let b = decode(&table, packed.descriptor(), &encode(&packed, &rows)).unwrap();
    assert_eq!(a, b);
    let n: &Decimal128Array = a.column(5).as_primitive();
    let first = rows.iter().position(|r| !r["n"].is_null()).unwrap();
    let want =
        crate::value::text::parse_decimal_i128(rows[first]["n"].as_str().unwrap().as_bytes(), 9);
    assert_eq!(Some(n.value(first)), want);
}

/// A descriptor field.
fn field(name: &str, number: i32, t: Type, label: Label) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(number),
        r#type: Some(t as i32),
        label: Some(label as i32),
        ..Default::default()
    }
}

fn message(fields: Vec<FieldDescriptorProto>) -> DescriptorProto {
    DescriptorProto {
        name: Some("Row".into()),
        field: fields,
        ..Default::default()
    }
}

fn varint(out: &mut Vec<u8>, v: u64) {
    wire::put_varint(out, v);
}

fn key(out: &mut Vec<u8>, number: u64, wire: u64) {
    varint(out, number << 3 | wire);
}

fn int_field(out: &mut Vec<u8>, number: u64, v: i64) {
    key(out, number, 0);
    varint(out, v as u64);
}

fn len_field(out: &mut Vec<u8>, number: u64, b: &[u8]) {
    key(out, number, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// The minimal little-endian two's-complement bytes of `v`.
fn packed_le(v: &[u8]) -> Vec<u8> {
    let mut b = v.to_vec();
    while b.len() > 1 {
        let last = b[b.len() - 1];
        let prev_sign = b[b.len() - 2] & 0x80;
        if (last == 0 && prev_sign == 0) || (last == 0xff && prev_sign != 0) {
            b.pop();
        } else {
            break;
        }
    }
    b
}

#[test]
fn storage_write_encodings_of_every_type() {
    let table = Table::new(vec![
        col("n", FieldType::Numeric),
        col("bn", FieldType::BigNumeric),
        col("t", FieldType::Time),
        col("dt", FieldType::DateTime),
        col("d", FieldType::Date),
        col("ts", FieldType::Timestamp),
        col("j", FieldType::Json),
        col("g", FieldType::Geography),
    ])
    .unwrap();
    let desc = message(vec![
        field("n", 1, Type::Bytes, Label::Optional),
        field("bn", 2, Type::Bytes, Label::Optional),
        field("t", 3, Type::Int64, Label::Optional),
        field("dt", 4, Type::Int64, Label::Optional),
        field("d", 5, Type::Int32, Label::Optional),
        field("ts", 6, Type::Int64, Label::Optional),
        field("j", 7, Type::String, Label::Optional),
        field("g", 8, Type::String, Label::Optional),
    ]);
    let mut rows = Vec::new();
    for (n, bn) in [
        (-1_500_000_000i128, -1i128),
        (99_999_999_999_999_999_999_999_999_999_999_999_999, 1 << 100),
    ] {
        let mut m = Vec::new();
        len_field(&mut m, 1, &packed_le(&n.to_le_bytes()));
        len_field(&mut m, 2, &packed_le(&i256::from_i128(bn).to_le_bytes()));
        int_field(&mut m, 3, encode_time(13, 14, 15, 16));
        int_field(&mut m, 4, encode_datetime(2024, 2, 29, 23, 59, 59, 999_999));
        int_field(&mut m, 5, -719_162);
        int_field(&mut m, 6, -62_135_596_800_000_000);
        len_field(&mut m, 7, br#"{"a":[1,2]}"#);
        len_field(&mut m, 8, b"LINESTRING(0 0, 1 1)");
        rows.push(m);
    }
    let b = decode(&table, &desc, &rows).unwrap();
    let n: &Decimal128Array = b.column(0).as_primitive();
    assert_eq!(n.value(0), -1_500_000_000);
    assert_eq!(
        n.value(1),
        99_999_999_999_999_999_999_999_999_999_999_999_999
    );
    let bn: &Decimal256Array = b.column(1).as_primitive();
    assert_eq!(bn.value(0), i256::MINUS_ONE);
    assert_eq!(bn.value(1), i256::from_i128(1 << 100));
    let t: &Time64MicrosecondArray = b.column(2).as_primitive();
    assert_eq!(t.value(0), ((13 * 60 + 14) * 60 + 15) * 1_000_000 + 16);
    let dt: &TimestampMicrosecondArray = b.column(3).as_primitive();
    assert_eq!(
        Some(dt.value(0)),
        crate::value::text::parse_datetime(b"2024-02-29T23:59:59.999999")
    );
    let d: &Date32Array = b.column(4).as_primitive();
    assert_eq!(d.value(0), -719_162);
    let ts: &TimestampMicrosecondArray = b.column(5).as_primitive();
    assert_eq!(ts.value(1), -62_135_596_800_000_000);
    assert_eq!(
        b.column(5).data_type(),
        table.arrow_schema.field(5).data_type()
    );
    let j: &StringArray = b.column(6).as_string();
    assert_eq!(j.value(0), r#"{"a":[1,2]}"#);
    let g: &StringArray = b.column(7).as_string();
    assert_eq!(g.value(1), "LINESTRING(0 0, 1 1)");
}

#[test]
fn integers_and_floats_convert_by_column_type_or_fail_naming_the_value() {
    let table = Table::new(vec![
        col("i", FieldType::Int64),
        col("f", FieldType::Float64),
        col("s", FieldType::String),
        col("n", FieldType::Numeric),
    ])
    .unwrap();
    let desc = message(vec![
        field("i", 1, Type::Uint64, Label::Optional),
        field("f", 2, Type::Sint32, Label::Optional),
        field("s", 3, Type::Double, Label::Optional),
        field("n", 4, Type::Int64, Label::Optional),
    ]);
    let mut m = Vec::new();
    int_field(&mut m, 1, 42);
    int_field(&mut m, 2, 7); // zigzag: -4
    key(&mut m, 3, 1);
    m.extend_from_slice(&2.5f64.to_le_bytes());
    int_field(&mut m, 4, -3);
    let b = decode(&table, &desc, &[m]).unwrap();
    assert_eq!(b.column(0).as_primitive::<Int64Type>().value(0), 42);
    assert_eq!(b.column(1).as_primitive::<Float64Type>().value(0), -4.0);
    assert_eq!(b.column(2).as_string::<i32>().value(0), "2.5");
    let n: &Decimal128Array = b.column(3).as_primitive();
    assert_eq!(n.value(0), -3_000_000_000);

    // A uint64 beyond INT64, and a double with a fraction: errors, not saturated numbers.
    let mut big = Vec::new();
    key(&mut big, 1, 0);
    varint(&mut big, u64::MAX);
    let e = row_errors(&table, &desc, &[big]);
    assert_eq!(
        e,
        vec![(
            0,
            "i: Cannot convert value to integer (bad value): 18446744073709551615".into()
        )]
    );
    let desc = message(vec![field("i", 1, Type::Double, Label::Optional)]);
    let mut m = Vec::new();
    key(&mut m, 1, 1);
    m.extend_from_slice(&1e20f64.to_le_bytes());
    let e = row_errors(&table, &desc, &[m]);
    assert_eq!(
        e,
        vec![(
            0,
            "i: Cannot convert value to integer (bad value): 1e+20".into()
        )]
    );
}

#[test]
fn out_of_range_dates_times_and_numerics_are_row_errors() {
    let table = Table::new(vec![
        col("d", FieldType::Date),
        col("ts", FieldType::Timestamp),
        col("dt", FieldType::DateTime),
        col("t", FieldType::Time),
        col("n", FieldType::Numeric),
    ])
    .unwrap();
    let desc = message(vec![
        field("d", 1, Type::Int32, Label::Optional),
        field("ts", 2, Type::Int64, Label::Optional),
        field("dt", 3, Type::Int64, Label::Optional),
        field("t", 4, Type::Int64, Label::Optional),
        field("n", 5, Type::Bytes, Label::Optional),
    ]);
    let one = |number: u64, v: i64| {
        let mut m = Vec::new();
        int_field(&mut m, number, v);
        m
    };
    let mut too_big = Vec::new();
    len_field(&mut too_big, 5, &packed_le(&(10i128.pow(38)).to_le_bytes()));
    let rows = vec![
        one(1, 2_932_897),               // 10000-01-01
        one(2, 253_402_300_800_000_000), // 10000-01-01T00:00:00Z
        one(3, encode_datetime(2023, 2, 29, 0, 0, 0, 0)),
        one(4, encode_time(24, 0, 0, 0)),
        too_big,
        one(1, 0), // fine
    ];
    let e = row_errors(&table, &desc, &rows);
    let idx: Vec<usize> = e.iter().map(|(i, _)| *i).collect();
    assert_eq!(idx, [0, 1, 2, 3, 4]);
    assert_eq!(
        e[0].1,
        "d: Cannot convert value to date (bad value): 2932897"
    );
    assert!(
        e[1].1.starts_with("ts: Cannot convert value to timestamp"),
        "{}",
        e[1].1
    );
    assert!(
        e[2].1.starts_with("dt: Cannot convert value to datetime"),
        "{}",
        e[2].1
    );
    assert!(
        e[3].1.starts_with("t: Cannot convert value to time"),
        "{}",
        e[3].1
    );
    assert!(
        e[4].1.starts_with("n: Cannot convert value to numeric"),
        "{}",
        e[4].1
    );
}

#[test]
fn proto2_presence_last_wins_packed_and_unknown_fields() {
    let table = Table::new(vec![
        col("id", FieldType::Int64),
        col("name", FieldType::String),
        col("tags", FieldType::Int64).with_mode(FieldMode::Repeated),
    ])
    .unwrap();
    let desc = message(vec![
        field("ID", 1, Type::Int64, Label::Optional), // matched case-insensitively
        field("name", 2, Type::String, Label::Optional),
        field("tags", 300, Type::Sint64, Label::Repeated), // beyond the dense table
    ]);
    let mut m = Vec::new();
    int_field(&mut m, 1, 1);
    int_field(&mut m, 1, 2); // the last occurrence wins
    let mut packed = Vec::new();
    varint(&mut packed, 1); // -1
    varint(&mut packed, 4); // 2
    len_field(&mut m, 300, &packed);
    int_field(&mut m, 300, 6); // 3, unpacked
    int_field(&mut m, 77, 5); // not declared: skipped
    len_field(&mut m, 78, b"skipped too");
    let empty = Vec::new();
    let b = decode(&table, &desc, &[m, empty]).unwrap();
    let id: &Int64Array = b.column(0).as_primitive();
    assert_eq!((id.value(0), id.is_null(1)), (2, true));
    assert!(b.column(1).is_null(0) && b.column(1).is_null(1));
    let tags: &ListArray = b.column(2).as_list();
    assert_eq!(
        tags.value(0).as_primitive::<Int64Type>().values().to_vec(),
        [-1, 2, 3]
    );
    // An absent repeated field is an empty array, not NULL.
    assert_eq!((tags.value(1).len(), tags.is_null(1)), (0, false));
}

fn nested_table() -> (Table, DescriptorProto) {
    let table = Table::new(vec![
        col("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::record(
            "st",
            vec![
                col("a", FieldType::Int64).with_mode(FieldMode::Required),
                col("b", FieldType::String),
            ],
        ),
    ])
    .unwrap();
    let mut desc = message(vec![
        field("id", 1, Type::Int64, Label::Optional),
        FieldDescriptorProto {
            type_name: Some(".pkg.Row.Inner".into()),
            ..field("st", 2, Type::Message, Label::Optional)
        },
    ]);
    desc.nested_type.push(DescriptorProto {
        name: Some("Inner".into()),
        field: vec![
            field("a", 1, Type::Int64, Label::Optional),
            field("b", 2, Type::String, Label::Optional),
            field("c", 3, Type::String, Label::Optional),
        ],
        ..Default::default()
    });
    (table, desc)
}

#[test]
fn records_null_or_nested_and_required_inside() {
    let (table, desc) = nested_table();
    let mut with = Vec::new();
    int_field(&mut with, 1, 1);
    let mut inner = Vec::new();
    int_field(&mut inner, 1, 9);
    len_field(&mut with, 2, &inner);
    let mut without = Vec::new();
    int_field(&mut without, 1, 2);
    let b = decode(&table, &desc, &[with.clone(), without.clone()]).unwrap();
    let st: &StructArray = b.column(1).as_struct();
    assert!(st.is_valid(0) && st.is_null(1));
    assert_eq!(st.column(0).as_primitive::<Int64Type>().value(0), 9);
    assert!(st.column(1).is_null(0));
    assert_eq!(
        b.column(1).data_type(),
        table.arrow_schema.field(1).data_type()
    );

    // A REQUIRED field missing inside a present record; a REQUIRED column missing; a nested
    // field the table does not have.
    let mut no_a = Vec::new();
    int_field(&mut no_a, 1, 3);
    len_field(&mut no_a, 2, &[]);
    let mut no_id = Vec::new();
    len_field(&mut no_id, 2, &inner);
    let mut extra = Vec::new();
    int_field(&mut extra, 1, 4);
    let mut c = Vec::new();
    len_field(&mut c, 3, b"x");
    len_field(&mut extra, 2, &c);
    let e = row_errors(&table, &desc, &[no_a, no_id, extra]);
    assert_eq!(
        e,
        vec![
            (0, "st.a: Missing required field.".to_string()),
            (1, "id: Missing required field.".to_string()),
            (
                2,
                "Input schema has more fields than BigQuery schema, extra fields: 'c'".to_string()
            ),
        ]
    );
}

#[test]
fn malformed_rows_are_errors_with_their_index_not_panics() {
    let (table, desc) = nested_table();
    let mut ok = Vec::new();
    int_field(&mut ok, 1, 1);
    let mut bad_utf8 = ok.clone();
    let mut inner = Vec::new();
    int_field(&mut inner, 1, 1);
    len_field(&mut inner, 2, &[0xff, 0xfe]);
    len_field(&mut bad_utf8, 2, &inner);
    let mut wrong_wire = Vec::new();
    key(&mut wrong_wire, 1, 1);
    wrong_wire.extend_from_slice(&[0; 8]);
    let mut message_for_int = Vec::new();
    len_field(&mut message_for_int, 1, b"abc");
    let rows = vec![
        ok.clone(),
        vec![0x08],             // truncated varint
        vec![0x12, 0x05, b'a'], // truncated length-delimited field
        bad_utf8,
        wrong_wire,
        message_for_int,
        vec![0x0b],     // a group start
        vec![0xff; 11], // a varint that never ends
        ok,
    ];
    let e = row_errors(&table, &desc, &rows);
    let idx: Vec<usize> = e.iter().map(|(i, _)| *i).collect();
    assert_eq!(idx, [1, 2, 3, 4, 5, 6, 7], "{e:?}");
    assert_eq!(e[0].1, "id: truncated varint");
    assert_eq!(e[1].1, "st: truncated field");
    assert_eq!(e[2].1, "st.b: invalid UTF-8 in a string");
    assert_eq!(
        e[3].1,
        "field id: wire type 1 does not match its declared type"
    );
    assert_eq!(
        e[4].1,
        "field id: wire type 2 does not match its declared type"
    );
    assert_eq!(
        e[5].1,
        "field id: wire type 3 does not match its declared type"
    );
    assert_eq!(e[6].1, "malformed varint");
}

#[test]
fn repeated_and_singular_must_match_the_column_mode() {
    let table = Table::new(vec![
        col("one", FieldType::Int64),
        col("many", FieldType::Int64).with_mode(FieldMode::Repeated),
    ])
    .unwrap();
    let desc = message(vec![
        field("one", 1, Type::Int64, Label::Repeated),
        field("many", 2, Type::Int64, Label::Optional),
    ]);
    let mut a = Vec::new();
    int_field(&mut a, 1, 1);
    let mut b = Vec::new();
    int_field(&mut b, 2, 1);
    let e = row_errors(&table, &desc, &[a, b]);
    assert_eq!(
        e,
        vec![
            (
                0,
                "one: repeated field one for a column that is not REPEATED".to_string()
            ),
            (
                1,
                "many: non-repeated field many for a REPEATED column".to_string()
            ),
        ]
    );
}

#[test]
fn extra_top_level_fields_fail_the_descriptor() {
    let table = Table::new(vec![col("a", FieldType::Int64)]).unwrap();
    let desc = message(vec![
        field("a", 1, Type::Int64, Label::Optional),
        field("nope", 2, Type::Int64, Label::Optional),
    ]);
    let e = RowsDecoder::new(&desc, &table.schema, table.arrow_schema.clone()).unwrap_err();
    assert_eq!(e, CompileError::ExtraField("nope".into()));
}

#[test]
fn a_decoder_is_reused_across_requests() {
    let table = Table::new(all_types()).unwrap();
    let schema = write_schema(&table.schema, NumericEncoding::Text);
    let mut rng = Rng(3);
    let rows: Vec<Value> = (0..300).map(|k| all_types_row(&mut rng, k)).collect();
    let bytes = encode(&schema, &rows);
    let mut d = RowsDecoder::new(
        schema.descriptor(),
        &table.schema,
        table.arrow_schema.clone(),
    )
    .unwrap();
    assert!(d.is_for(&table.schema, &table.arrow_schema));
    let first = d.decode(&bytes[..100], &[]).unwrap();
    let second = d.decode(&bytes[100..], &[]).unwrap();
    let whole = decode(&table, schema.descriptor(), &bytes).unwrap();
    assert_eq!((first.num_rows(), second.num_rows()), (100, 200));
    assert_eq!(whole.slice(0, 100), first);
    assert_eq!(whole.slice(100, 200), second);
}

#[test]
fn absent_fields_take_the_fill_value_when_given() {
    let table = Table::new(vec![
        col("id", FieldType::Int64),
        col("day", FieldType::Date).with_mode(FieldMode::Required),
    ])
    .unwrap();
    let desc = message(vec![field("id", 1, Type::Int64, Label::Optional)]);
    let mut m = Vec::new();
    int_field(&mut m, 1, 5);
    let mut d = RowsDecoder::new(&desc, &table.schema, table.arrow_schema.clone()).unwrap();
    let b = d
        .decode(
            &[m.clone(), Vec::new()],
            &[Some("7".into()), Some("2024-05-06".into())],
        )
        .unwrap();
    let id: &Int64Array = b.column(0).as_primitive();
    assert_eq!((id.value(0), id.value(1)), (5, 7));
    let day: &Date32Array = b.column(1).as_primitive();
    assert_eq!(
        Some(day.value(1)),
        crate::value::text::parse_date(b"2024-05-06")
    );
    // Without one, the REQUIRED column is missing.
    let e = match decode(&table, &desc, &[m]) {
        Err(DecodeError::Rows(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e, vec![(0, "day: Missing required field.".to_string())]);
}

/// The scan table of the write benchmark (bench/benches/scan_table): 20 columns, INT64,
/// FLOAT64, STRING, BOOL, NUMERIC, DATE, TIMESTAMP, a RECORD and a REPEATED INT64.
fn scan_table() -> Vec<TableFieldSchema> {
    let mut cols: Vec<TableFieldSchema> = [
        ("id", FieldType::Int64),
        ("user_id", FieldType::Int64),
        ("score", FieldType::Float64),
        ("ratio", FieldType::Float64),
        ("name", FieldType::String),
        ("city", FieldType::String),
        ("active", FieldType::Bool),
        ("verified", FieldType::Bool),
        ("amount", FieldType::Numeric),
        ("discount", FieldType::Numeric),
        ("created", FieldType::Date),
        ("birthday", FieldType::Date),
        ("created_at", FieldType::Timestamp),
        ("updated_at", FieldType::Timestamp),
        ("quantity", FieldType::Int64),
        ("weight", FieldType::Float64),
        ("comment", FieldType::String),
        ("rank", FieldType::Int64),
    ]
    .into_iter()
    .map(|(n, t)| col(n, t))
    .collect();
    cols[0] = cols[0].clone().with_mode(FieldMode::Required);
    cols.push(TableFieldSchema::record(
        "info",
        vec![
            col("a", FieldType::Int64),
            col("b", FieldType::String),
            col("c", FieldType::Float64),
        ],
    ));
    cols.push(col("tags", FieldType::Int64).with_mode(FieldMode::Repeated));
    cols
}

/// Scan-table rows with the bench's value shapes and NULL rates.
fn scan_rows(n: usize) -> Vec<Value> {
    const CITIES: &[&str] = &[
        "Stockholm",
        "Göteborg",
        "Malmö",
        "Uppsala",
        "Västerås",
        "Örebro",
    ];
    const WORDS: &[&str] = &[
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "elit",
    ];
    let mut rng = Rng(42);
    let opt =
        |pct: u64, v: Value, rng: &mut Rng| if rng.below(100) < pct { Value::Null } else { v };
    (0..n)
        .map(|i| {
            let r = &mut rng;
            let f = |r: &mut Rng| (r.next() >> 11) as f64 / (1u64 << 53) as f64;
            json!({
                "id": i,
                "user_id": opt(10, json!(r.below(50_000_000)), r),
                "score": f(r) * 100.0,
                "ratio": opt(20, json!(f(r) * 1000.0), r),
                "name": format!("user_{i:07}"),
                "city": opt(5, json!(CITIES[r.below(CITIES.len() as u64) as usize]), r),
                "active": r.below(2) == 0,
                "verified": opt(30, json!(r.below(2) == 0), r),
                "amount": format!("{}.{:02}", r.below(1_000_000), r.below(100)),
                "discount": opt(60, json!(format!("0.{:02}", r.below(100))), r),
                "created": format!("20{:02}-{:02}-{:02}", r.below(25), 1 + r.below(12), 1 + r.below(28)),
                "birthday": opt(25, json!(format!("19{:02}-{:02}-{:02}", 50 + r.below(50), 1 + r.below(12), 1 + r.below(28))), r),
                "created_at": format!("2024-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", 1 + r.below(12), 1 + r.below(28), r.below(24), r.below(60), r.below(60), r.below(1_000_000)),
                "updated_at": opt(40, json!(format!("2024-06-01T00:00:{:02}Z", r.below(60))), r),
                "quantity": r.below(1000),
                "weight": opt(15, json!(f(r) * 1000.0), r),
                "comment": opt(30, json!((0..3 + r.below(6)).map(|_| WORDS[r.below(WORDS.len() as u64) as usize]).collect::<Vec<_>>().join(" ")), r),
                "rank": opt(50, json!(r.below(1_000_000)), r),
                "info": {"a": opt(5, json!(r.below(1000)), r), "b": opt(10, json!(format!("b{}", r.below(100))), r), "c": opt(10, json!(f(r)), r)},
                "tags": (0..r.below(4)).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The decoded value at `i` of `array` (a column of BigQuery type `c`) is the row's `want`:
/// each type read back by an independent parse of the row's text (chrono for civil times,
/// decimal text for NUMERIC), NULL for `null`, an empty array for a NULL REPEATED column.
fn check_cell(c: &TableFieldSchema, array: &dyn Array, i: usize, want: &Value, path: &str) {
    if c.is_repeated() {
        let list: &ListArray = array.as_list();
        assert!(list.is_valid(i), "{path}: a REPEATED column is never NULL");
        let items = list.value(i);
        let want: &[Value] = want.as_array().map_or(&[], Vec::as_slice);
        assert_eq!(items.len(), want.len(), "{path}: array length");
        let element = TableFieldSchema {
            mode: None,
            ..c.clone()
        };
        for (k, w) in want.iter().enumerate() {
            check_cell(&element, items.as_ref(), k, w, &format!("{path}[{k}]"));
        }
        return;
    }
    if want.is_null() {
        assert!(array.is_null(i), "{path}: NULL");
        return;
    }
    assert!(array.is_valid(i), "{path}: {want} decoded as NULL");
    let text = || want.as_str().unwrap_or_else(|| panic!("{path}: {want}"));
    match c.field_type {
        FieldType::Int64 => {
            let a: &Int64Array = array.as_primitive();
            assert_eq!(Some(a.value(i)), want.as_i64(), "{path}");
        }
        FieldType::Float64 => {
            let a: &Float64Array = array.as_primitive();
            assert_eq!(Some(a.value(i)), want.as_f64(), "{path}");
        }
        FieldType::Bool => {
            let a: &BooleanArray = array.as_boolean();
            assert_eq!(Some(a.value(i)), want.as_bool(), "{path}");
        }
        FieldType::String | FieldType::Json | FieldType::Geography => {
            let a: &StringArray = array.as_string();
            assert_eq!(a.value(i), text(), "{path}");
        }
        FieldType::Bytes => {
            let a: &BinaryArray = array.as_binary();
            let bytes: Vec<u8> = serde_json::from_value(want.clone()).unwrap();
            assert_eq!(a.value(i), bytes, "{path}");
        }
        FieldType::Numeric => {
            let a: &Decimal128Array = array.as_primitive();
            assert_eq!(a.value(i).to_string(), scaled(text(), 9), "{path}");
        }
        FieldType::BigNumeric => {
            // The raw integer: arrow's decimal text drops digits beyond the precision (76),
            // and the extreme BIGNUMERICs have 77.
            let a: &Decimal256Array = array.as_primitive();
            assert_eq!(a.value(i).to_string(), scaled(text(), 38), "{path}");
        }
        FieldType::Date => {
            let a: &Date32Array = array.as_primitive();
            let d = chrono::NaiveDate::parse_from_str(text(), "%Y-%m-%d").unwrap();
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
            assert_eq!(i64::from(a.value(i)), (d - epoch).num_days(), "{path}");
        }
        FieldType::Time => {
            let a: &Time64MicrosecondArray = array.as_primitive();
            let t = chrono::NaiveTime::parse_from_str(text(), "%H:%M:%S%.f").unwrap();
            let micros = (t - chrono::NaiveTime::MIN).num_microseconds().unwrap();
            assert_eq!(a.value(i), micros, "{path}");
        }
        FieldType::DateTime => {
            let a: &TimestampMicrosecondArray = array.as_primitive();
            let dt = chrono::NaiveDateTime::parse_from_str(text(), "%Y-%m-%dT%H:%M:%S%.f").unwrap();
            assert_eq!(a.value(i), dt.and_utc().timestamp_micros(), "{path}");
        }
        FieldType::Timestamp => {
            let a: &TimestampMicrosecondArray = array.as_primitive();
            let ts = chrono::DateTime::parse_from_rfc3339(text()).unwrap();
            assert_eq!(a.value(i), ts.timestamp_micros(), "{path}");
        }
        FieldType::Record => {
            let st: &StructArray = array.as_struct();
            for (k, f) in c.fields.iter().enumerate() {
                let w = want.get(&f.name).unwrap_or(&Value::Null);
                check_cell(
                    f,
                    st.column(k).as_ref(),
                    i,
                    w,
                    &format!("{path}.{}", f.name),
                );
            }
        }
        ref other => panic!("{path}: no check for {other}"),
    }
}

/// Decimal text as the integer of its value times 10^`scale` (`-1.5`, 2 → `-150`).
fn scaled(s: &str, scale: usize) -> String {
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    assert!(
        frac.len() <= scale,
        "{s}: more than {scale} fraction digits"
    );
    let digits = format!("{int}{frac:0<scale$}");
    let digits = digits.trim_start_matches('0');
    match (negative, digits) {
        (_, "") => "0".into(),
        (true, d) => format!("-{d}"),
        (false, d) => d.into(),
    }
}

/// Every row of `batch` holds the values of `rows`.
fn check_batch(table: &Table, batch: &RecordBatch, rows: &[Value]) {
    assert_eq!(batch.num_rows(), rows.len());
    assert_eq!(batch.schema(), table.arrow_schema);
    for (c, column) in table.schema.iter().zip(batch.columns()) {
        for (i, row) in rows.iter().enumerate() {
            let want = row.get(&c.name).unwrap_or(&Value::Null);
            check_cell(c, column.as_ref(), i, want, &format!("row {i} {}", c.name));
        }
    }
}

#[test]
fn every_type_round_trips_through_the_encoder_value_by_value() {
    let table = Table::new(all_types()).unwrap();
    for numeric in [NumericEncoding::Text, NumericEncoding::Packed] {
        let schema = write_schema(&table.schema, numeric);
        let mut rng = Rng(7);
        let rows: Vec<Value> = (0..2_000).map(|k| all_types_row(&mut rng, k)).collect();
        let batch = decode(&table, schema.descriptor(), &encode(&schema, &rows)).unwrap();
        check_batch(&table, &batch, &rows);
        // NULLs where the row had none, values where it had some.
        let nulls = rows.iter().filter(|r| r["f"].is_null()).count();
        assert_eq!(batch.column(1).null_count(), nulls);
        assert!(nulls > 300 && nulls < 700, "{nulls}");
    }
}

#[test]
fn scan_table_rows_round_trip_value_by_value() {
    let table = Table::new(scan_table()).unwrap();
    let schema = write_schema(&table.schema, NumericEncoding::Text);
    let rows = scan_rows(3_000);
    let batch = decode(&table, schema.descriptor(), &encode(&schema, &rows)).unwrap();
    check_batch(&table, &batch, &rows);
}

#[test]
fn edge_values_round_trip() {
    let table = Table::new(all_types()).unwrap();
    let rows = vec![
        json!({
            "i": i64::MIN, "f": f64::MAX, "b": false, "s": "", "by": [],
            "n": "-99999999999999999999999999999.999999999",
            "bn": "578960446186580977117854925043439539266.34992332820282019728792003956564819967",
            "d": "0001-01-01", "t": "00:00:00", "dt": "0001-01-01T00:00:00",
            "ts": "0001-01-01T00:00:00Z", "j": "null", "g": "LINESTRING(0 0, 1 1)",
            "tags": [i64::MIN, 0, i64::MAX], "words": ["", "ü"],
            "rec": {"a": null, "b": null, "xs": [], "deep": null},
            "recs": [{"k": null, "v": null}],
        }),
        json!({
            "i": i64::MAX, "f": -0.0, "b": true, "s": "\u{10FFFF}", "by": [255],
            "n": "99999999999999999999999999999.999999999",
            "bn": "-578960446186580977117854925043439539266.34992332820282019728792003956564819968",
            "d": "9999-12-31", "t": "23:59:59.999999", "dt": "9999-12-31T23:59:59.999999",
            "ts": "9999-12-31T23:59:59.999999Z", "j": "[]", "g": "POINT(0 0)",
            "tags": null, "words": [], "rec": {"a": 1, "xs": [1.5], "deep": {"z": null}},
            "recs": null,
        }),
        json!({"i": 0}),
    ];
    for numeric in [NumericEncoding::Text, NumericEncoding::Packed] {
        let schema = write_schema(&table.schema, numeric);
        let batch = decode(&table, schema.descriptor(), &encode(&schema, &rows)).unwrap();
        check_batch(&table, &batch, &rows);
    }
}

#[test]
fn packed_civil_times_store_the_same_values_as_text() {
    let table = Table::new(vec![
        col("t", FieldType::Time),
        col("dt", FieldType::DateTime),
    ])
    .unwrap();
    let rows = vec![
        json!({"t": "13:14:15.000016", "dt": "2024-02-29T23:59:59.999999"}),
        json!({"t": "00:00:00", "dt": "0001-01-01T00:00:00"}),
        json!({"t": null, "dt": null}),
    ];
    let text = write_schema(&table.schema, NumericEncoding::Text);
    let from_text = decode(&table, text.descriptor(), &encode(&text, &rows)).unwrap();
    check_batch(&table, &from_text, &rows);
    let desc = message(vec![
        field("t", 1, Type::Int64, Label::Optional),
        field("dt", 2, Type::Int64, Label::Optional),
    ]);
    let mut a = Vec::new();
    int_field(&mut a, 1, encode_time(13, 14, 15, 16));
    int_field(&mut a, 2, encode_datetime(2024, 2, 29, 23, 59, 59, 999_999));
    let mut b = Vec::new();
    int_field(&mut b, 1, encode_time(0, 0, 0, 0));
    int_field(&mut b, 2, encode_datetime(1, 1, 1, 0, 0, 0, 0));
    let from_packed = decode(&table, &desc, &[a, b, Vec::new()]).unwrap();
    assert_eq!(from_packed, from_text);
}

/// The message of `desc` (`i` INT64 REQUIRED, `s` STRING, `rec` RECORD of `x` INT64), for
/// prost: an independent reading of the same bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct SmallPb {
    #[prost(int64, required, tag = "1")]
    i: i64,
    #[prost(string, optional, tag = "2")]
    s: Option<String>,
    #[prost(message, optional, tag = "3")]
    rec: Option<SmallRecPb>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct SmallRecPb {
    #[prost(int64, optional, tag = "1")]
    x: Option<i64>,
}

fn small_table() -> Table {
    Table::new(vec![
        col("i", FieldType::Int64).with_mode(FieldMode::Required),
        col("s", FieldType::String),
        TableFieldSchema::record("rec", vec![col("x", FieldType::Int64)]),
    ])
    .unwrap()
}

#[test]
fn rows_written_by_prost_decode_as_prost_reads_them() {
    use prost::Message as _;
    let table = small_table();
    let schema = write_schema(&table.schema, NumericEncoding::Text);
    let msgs = [
        SmallPb {
            i: -7,
            s: Some("é".into()),
            rec: Some(SmallRecPb { x: Some(300) }),
        },
        SmallPb {
            i: 1 << 40,
            s: None,
            rec: Some(SmallRecPb { x: None }),
        },
        SmallPb {
            i: 0,
            s: Some(String::new()),
            rec: None,
        },
    ];
    let bytes: Vec<Vec<u8>> = msgs.iter().map(|m| m.encode_to_vec()).collect();
    let b = decode(&table, schema.descriptor(), &bytes).unwrap();
    for (k, m) in msgs.iter().enumerate() {
        assert_eq!(b.column(0).as_primitive::<Int64Type>().value(k), m.i);
        let s = b.column(1).as_string::<i32>();
        assert_eq!(s.is_valid(k).then(|| s.value(k)), m.s.as_deref());
        let rec = b.column(2).as_struct();
        assert_eq!(rec.is_valid(k), m.rec.is_some());
        let x = rec.column(0).as_primitive::<Int64Type>();
        assert_eq!(
            x.is_valid(k).then(|| x.value(k)),
            m.rec.as_ref().and_then(|r| r.x)
        );
    }
    // And the encoder's rows are what prost reads.
    let rows = vec![json!({"i": -7, "s": "é", "rec": {"x": 300}})];
    let ours = encode(&schema, &rows);
    assert_eq!(SmallPb::decode(&ours[0][..]).unwrap(), msgs[0]);
}

#[test]
fn bad_encoded_rows_are_errors_naming_the_column() {
    let table = small_table();
    let schema = write_schema(&table.schema, NumericEncoding::Text);
    let rows = vec![json!({"i": 1, "s": "abc", "rec": {"x": 300}})];
    let good = encode(&schema, &rows).remove(0);
    let desc = schema.descriptor();
    // The fields come in the order of the row's keys (`i`, `rec`, `s`): cut inside the
    // record (after its key and length), inside `s`, and a REQUIRED column left out.
    let cut_rec = good[..4].to_vec();
    let cut_s = good[..good.len() - 1].to_vec();
    let mut no_i = Vec::new();
    len_field(&mut no_i, 2, b"x");
    // `s` as a varint instead of length-delimited.
    let mut wrong = Vec::new();
    int_field(&mut wrong, 1, 1);
    int_field(&mut wrong, 2, 5);
    let e = row_errors(&table, desc, &[good.clone(), cut_rec, cut_s, no_i, wrong]);
    assert_eq!(
        e,
        vec![
            (1, "rec: truncated field".to_string()),
            (2, "s: truncated field".to_string()),
            (3, "i: Missing required field.".to_string()),
            (
                4,
                "field s: wire type 0 does not match its declared type".to_string()
            ),
        ]
    );
    assert!(decode(&table, desc, &[good]).is_ok());
}

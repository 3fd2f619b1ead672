use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_buffer::{IntervalMonthDayNano, i256};

use super::*;
use crate::CodecErrorKind;

const ALL_TYPES: &str = r#"{
 "kind": "bigquery#queryResponse",
 "schema": {"fields": [
  {"name":"i","type":"INTEGER","mode":"NULLABLE"},
  {"name":"f","type":"FLOAT","mode":"NULLABLE"},
  {"name":"n","type":"NUMERIC","mode":"NULLABLE"},
  {"name":"bn","type":"BIGNUMERIC","mode":"NULLABLE"},
  {"name":"b","type":"BOOLEAN","mode":"NULLABLE"},
  {"name":"s","type":"STRING","mode":"NULLABLE"},
  {"name":"by","type":"BYTES","mode":"NULLABLE"},
  {"name":"d","type":"DATE","mode":"NULLABLE"},
  {"name":"t","type":"TIME","mode":"NULLABLE"},
  {"name":"dt","type":"DATETIME","mode":"NULLABLE"},
  {"name":"ts","type":"TIMESTAMP","mode":"NULLABLE"},
  {"name":"g","type":"GEOGRAPHY","mode":"NULLABLE"},
  {"name":"j","type":"JSON","mode":"NULLABLE"},
  {"name":"iv","type":"INTERVAL","mode":"NULLABLE"},
  {"name":"r","type":"RANGE","mode":"NULLABLE","rangeElementType":{"type":"DATE"}},
  {"name":"st","type":"RECORD","mode":"NULLABLE","fields":[
     {"name":"a","type":"INTEGER"},
     {"name":"tags","type":"STRING","mode":"REPEATED"},
     {"name":"inner","type":"RECORD","mode":"REPEATED","fields":[{"name":"x","type":"FLOAT"}]}]},
  {"name":"arr","type":"INTEGER","mode":"REPEATED"}
 ]},
 "jobReference": {"projectId":"p","jobId":"j","location":"US"},
 "totalRows": "3",
 "pageToken": "tok",
 "rows": [
  {"f":[{"v":"-9223372036854775808"},{"v":"1.5"},{"v":"99999999999999999999999999999.999999999"},
        {"v":"-578960446186580977117854925043439539266.34992332820282019728792003956564819968"},
        {"v":"true"},{"v":"h\u00e9llo \"q\"\n"},{"v":"AAEC/w=="},{"v":"2024-02-29"},{"v":"23:59:59.999999"},
        {"v":"2024-01-01T12:34:56.5"},{"v":"1.7040672E9"},{"v":"POINT(1 2)"},{"v":"{\"a\":1}"},
        {"v":"1-2 3 4:5:6.5"},{"v":"[2024-01-01, UNBOUNDED)"},
        {"v":{"f":[{"v":"7"},{"v":[{"v":"x"},{"v":"y"}]},{"v":[{"v":{"f":[{"v":"0.25"}]}}]}]}},
        {"v":[{"v":"1"},{"v":"2"},{"v":"3"}]}]},
  {"f":[{"v":null},{"v":"NaN"},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},
        {"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":[]}]},
  {"f":[{"v":"42"},{"v":"-Infinity"},{"v":"-0.000000001"},{"v":"1E-38"},{"v":"false"},{"v":""},{"v":""},
        {"v":"0001-01-01"},{"v":"00:00:00"},{"v":"9999-12-31T23:59:59.999999"},{"v":"1704067200123456"},
        {"v":null},{"v":"null"},{"v":"-0-0 -1 -0:0:0.000001"},{"v":"[UNBOUNDED, UNBOUNDED)"},
        {"v":{"f":[{"v":null},{"v":[]},{"v":[]}]}},{"v":[{"v":"4"}]}]}
 ],
 "jobComplete": true
}"#;

fn decode_chunks(
    body: &[u8],
    chunk: usize,
) -> Result<(Vec<RecordBatch>, ResponseDecoder), CodecError> {
    let mut d = ResponseDecoder::new().with_batch_size(2);
    for c in body.chunks(chunk) {
        d.decode(c)?;
    }
    d.finish()?;
    let mut out = Vec::new();
    while let Some(b) = d.next_batch() {
        out.push(b);
    }
    Ok((out, d))
}

fn concat(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select_concat(batches)
}

// A tiny concat for tests: compare batch by batch instead of pulling in arrow-select.
fn arrow_select_concat(batches: &[RecordBatch]) -> RecordBatch {
    assert!(!batches.is_empty());
    if batches.len() == 1 {
        return batches[0].clone();
    }
    panic!("use batch size large enough for one batch in this helper")
}

#[test]
fn decodes_every_type() {
    let mut d = ResponseDecoder::new();
    d.decode(ALL_TYPES.as_bytes()).unwrap();
    d.finish().unwrap();
    let b = concat(&[d.next_batch().unwrap()]);
    assert!(d.next_batch().is_none());
    assert_eq!(b.num_rows(), 3);
    assert_eq!(d.metadata()["pageToken"], "tok");
    assert_eq!(d.metadata()["jobReference"]["jobId"], "j");

    let i = b.column(0).as_primitive::<Int64Type>();
    assert_eq!(i.value(0), i64::MIN);
    assert!(i.is_null(1));
    assert_eq!(i.value(2), 42);
    let f = b.column(1).as_primitive::<Float64Type>();
    assert_eq!(f.value(0), 1.5);
    assert!(f.value(1).is_nan());
    assert_eq!(f.value(2), f64::NEG_INFINITY);
    let n = b.column(2).as_primitive::<Decimal128Type>();
    assert_eq!(
        n.value(0),
        99_999_999_999_999_999_999_999_999_999_999_999_999
    );
    assert_eq!(n.value(2), -1);
    assert_eq!(n.precision(), 38);
    assert_eq!(n.scale(), 9);
    let bn = b.column(3).as_primitive::<Decimal256Type>();
    assert_eq!(bn.value(0), i256::MIN);
    assert_eq!(bn.value(2), i256::ONE);
    let bo = b.column(4).as_boolean();
    assert!(bo.value(0) && bo.is_null(1) && !bo.value(2));
    let s = b.column(5).as_string::<i32>();
    assert_eq!(s.value(0), "héllo \"q\"\n");
    assert!(s.is_null(1));
    assert_eq!(s.value(2), "");
    let by = b.column(6).as_binary::<i32>();
    assert_eq!(by.value(0), &[0, 1, 2, 255]);
    assert_eq!(by.value(2), b"");
    let dd = b.column(7).as_primitive::<Date32Type>();
    assert_eq!(dd.value(0), 19_782);
    assert_eq!(dd.value(2), crate::value::text::MIN_DATE);
    let t = b.column(8).as_primitive::<Time64MicrosecondType>();
    assert_eq!(t.value(0), 86_399_999_999);
    let dt = b.column(9).as_primitive::<TimestampMicrosecondType>();
    assert_eq!(dt.value(0), 1_704_112_496_500_000);
    assert_eq!(dt.value(2), 253_402_300_799_999_999);
    let ts = b.column(10).as_primitive::<TimestampMicrosecondType>();
    assert_eq!(ts.value(0), 1_704_067_200_000_000);
    assert_eq!(ts.value(2), 1_704_067_200_123_456);
    assert_eq!(ts.timezone(), Some("UTC"));
    assert_eq!(b.column(11).as_string::<i32>().value(0), "POINT(1 2)");
    assert_eq!(
        b.schema().field(11).metadata()["ARROW:extension:name"],
        "google:sqlType:geography"
    );
    assert_eq!(b.column(12).as_string::<i32>().value(2), "null");
    let iv = b.column(13).as_primitive::<IntervalMonthDayNanoType>();
    assert_eq!(
        iv.value(0),
        IntervalMonthDayNano::new(14, 3, (4 * 3600 + 5 * 60 + 6) * 1_000_000_000 + 500_000_000)
    );
    assert_eq!(iv.value(2), IntervalMonthDayNano::new(0, -1, -1000));
    let r = b.column(14).as_struct();
    assert_eq!(r.column(0).as_primitive::<Date32Type>().value(0), 19_723);
    assert!(r.column(1).is_null(0));
    assert!(r.is_null(1));
    assert!(r.column(0).is_null(2) && r.column(1).is_null(2) && r.is_valid(2));
    let st = b.column(15).as_struct();
    assert_eq!(st.column(0).as_primitive::<Int64Type>().value(0), 7);
    let tags = st.column(1).as_list::<i32>();
    assert_eq!(
        tags.value(0).as_string::<i32>().iter().collect::<Vec<_>>(),
        vec![Some("x"), Some("y")]
    );
    assert_eq!(tags.value(2).len(), 0);
    let inner = st.column(2).as_list::<i32>();
    assert_eq!(
        inner
            .value(0)
            .as_struct()
            .column(0)
            .as_primitive::<Float64Type>()
            .value(0),
        0.25
    );
    assert!(st.is_null(1));
    assert!(st.is_valid(2) && st.column(0).is_null(2));
    let arr = b.column(16).as_list::<i32>();
    assert_eq!(
        arr.value(0).as_primitive::<Int64Type>().values().to_vec(),
        vec![1, 2, 3]
    );
    assert_eq!(arr.value(1).len(), 0);
    assert_eq!(
        arr.value(2).as_primitive::<Int64Type>().values().to_vec(),
        vec![4]
    );
    assert_eq!(arr.null_count(), 0);
}

#[test]
fn every_chunking_gives_the_same_batches() {
    let mut whole = ResponseDecoder::new().with_batch_size(2);
    whole.decode(ALL_TYPES.as_bytes()).unwrap();
    whole.finish().unwrap();
    let expected: Vec<RecordBatch> = std::iter::from_fn(|| whole.next_batch()).collect();
    assert_eq!(expected.len(), 2);
    for chunk in [1, 2, 3, 5, 7, 64, 100, 1000] {
        let (got, d) = decode_chunks(ALL_TYPES.as_bytes(), chunk).unwrap();
        assert_eq!(got, expected, "chunk size {chunk}");
        assert_eq!(d.metadata(), whole.metadata());
    }
}

#[test]
fn rows_before_schema() {
    let body = br#"{"rows":[{"f":[{"v":"1"}]},{"f":[{"v":"2"}]}],"totalRows":"2",
        "schema":{"fields":[{"name":"x","type":"INT64"}]}}"#;
    for chunk in [1, 4, 1000] {
        let (b, _) = decode_chunks(body, chunk).unwrap();
        let vals: Vec<i64> = b
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect();
        assert_eq!(vals, vec![1, 2]);
    }
    let no_schema = br#"{"rows":[{"f":[{"v":"1"}]}]}"#;
    let e = decode_chunks(no_schema, 1000).unwrap_err();
    assert_eq!(e.kind(), CodecErrorKind::Schema);
}

#[test]
fn given_schema_for_tabledata_list() {
    let schema: TableSchema =
        serde_json::from_str(r#"{"fields":[{"name":"x","type":"STRING"}]}"#).unwrap();
    let (batches, meta) = decode_body(
        br#"{"kind":"bigquery#tableDataList","totalRows":"1","rows":[{"f":[{"v":"a"}]}]}"#,
        Some(schema),
    )
    .unwrap();
    assert_eq!(batches[0].column(0).as_string::<i32>().value(0), "a");
    assert_eq!(meta["totalRows"], "1");
}

#[test]
fn no_rows_field_gives_no_batches() {
    let (batches, meta) = decode_body(br#"{"schema":{"fields":[{"name":"x","type":"STRING"}]},"totalRows":"0","jobComplete":true}"#, None).unwrap();
    assert!(batches.is_empty());
    assert_eq!(meta["jobComplete"], true);
}

fn err_of(body: &str) -> CodecError {
    decode_body(body.as_bytes(), None).unwrap_err()
}

#[test]
fn bad_values_name_column_and_row() {
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"},{"name":"d","type":"DATE"}]},
        "rows":[{"f":[{"v":"1"},{"v":"2024-01-01"}]},{"f":[{"v":"2"},{"v":"2024-13-01"}]}]}"#,
    );
    assert_eq!(e.kind(), CodecErrorKind::Value);
    assert_eq!(e.column(), Some("d"));
    assert_eq!(e.row(), Some(1));
    assert_eq!(e.value(), Some("2024-13-01"));
    assert!(e.to_string().contains("invalid DATE value"), "{e}");

    let e = err_of(
        r#"{"schema":{"fields":[{"name":"s","type":"RECORD","fields":[{"name":"x","type":"INT64"}]}]},
        "rows":[{"f":[{"v":{"f":[{"v":"99999999999999999999"}]}}]}]}"#,
    );
    assert_eq!(e.column(), Some("s.x"));
    assert_eq!(e.row(), Some(0));

    let e = err_of(
        r#"{"schema":{"fields":[{"name":"n","type":"NUMERIC"}]},"rows":[{"f":[{"v":"1.0000000001"}]}]}"#,
    );
    assert_eq!(e.column(), Some("n"));
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"f","type":"FLOAT"}]},"rows":[{"f":[{"v":"inf"}]}]}"#,
    );
    assert_eq!(e.column(), Some("f"));
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"b","type":"BYTES"}]},"rows":[{"f":[{"v":"!!"}]}]}"#,
    );
    assert_eq!(e.column(), Some("b"));
}

#[test]
fn malformed_bodies_are_errors() {
    for body in [
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"}]},"rows":[{"f":[{"v":"1"}]}"#,
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"}]},"rows":[{"f":[{"v":"1"},{"v":"2"}]}]}"#,
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"},{"name":"b","type":"INT64"}]},"rows":[{"f":[{"v":"1"}]}]}"#,
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"}]},"rows":[{"f":[{"v":1"}]}]}"#,
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"}]},"rows":[]} trailing"#,
        r#"{"schema":{"fields":[{"name":"a","type":"FANCY"}]},"rows":[]}"#,
        r#"{"schema":"#,
        r#"["#,
        "",
    ] {
        let e = decode_body(body.as_bytes(), None);
        assert!(e.is_err(), "accepted {body}");
    }
    let e = err_of(r#"{"schema":{"fields":[{"name":"a","type":"FANCY"}]},"rows":[]}"#);
    assert_eq!(e.column(), Some("a"));
    assert!(e.to_string().contains("FANCY"));
    let e =
        err_of(r#"{"schema":{"fields":[{"name":"a","type":"INT64"}]},"rows":[{"f":[{"v":"1"}]}"#);
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn invalid_utf8_is_an_error() {
    let mut body =
        br#"{"schema":{"fields":[{"name":"s","type":"STRING"}]},"rows":[{"f":[{"v":""#.to_vec();
    body.push(0xff);
    body.extend_from_slice(br#""}]}]}"#);
    let e = decode_body(&body, None).unwrap_err();
    assert_eq!(e.column(), Some("s"));
    assert_eq!(e.row(), Some(0));
    assert_eq!(e.kind(), CodecErrorKind::Value);
}

#[test]
fn timestamp_forms() {
    let body = r#"{"schema":{"fields":[{"name":"t","type":"TIMESTAMP"}]},"rows":[
      {"f":[{"v":"1.7040672E9"}]},{"f":[{"v":"1704067200"}]},{"f":[{"v":"-1.0E-6"}]},
      {"f":[{"v":"2024-01-01 00:00:00 UTC"}]},{"f":[{"v":"1.704067200123456E9"}]},{"f":[{"v":"0.0"}]}]}"#;
    let (b, _) = decode_body(body.as_bytes(), None).unwrap();
    let t = b[0].column(0).as_primitive::<TimestampMicrosecondType>();
    assert_eq!(
        t.values().to_vec(),
        vec![
            1_704_067_200_000_000,
            1_704_067_200,
            -1,
            1_704_067_200_000_000,
            1_704_067_200_123_456,
            0
        ]
    );
    let mut d = ResponseDecoder::new().with_timestamp_format(TimestampFormat::FloatSeconds);
    d.decode(br#"{"schema":{"fields":[{"name":"t","type":"TIMESTAMP"}]},"rows":[{"f":[{"v":"1704067200"}]}]}"#).unwrap();
    d.finish().unwrap();
    assert_eq!(
        d.next_batch()
            .unwrap()
            .column(0)
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_704_067_200_000_000
    );
}

#[test]
fn large_page_in_batches() {
    let mut body = String::from(
        r#"{"schema":{"fields":[{"name":"i","type":"INTEGER"},{"name":"s","type":"STRING"}]},"rows":["#,
    );
    for i in 0..20_000 {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&format!(r#"{{"f":[{{"v":"{i}"}},{{"v":"row {i}"}}]}}"#));
    }
    body.push_str("]}");
    let mut d = ResponseDecoder::new();
    for c in body.as_bytes().chunks(16 * 1024) {
        d.decode(c).unwrap();
    }
    d.finish().unwrap();
    let mut n = 0i64;
    while let Some(b) = d.next_batch() {
        assert!(b.num_rows() <= DEFAULT_BATCH_SIZE);
        let ints = b.column(0).as_primitive::<Int64Type>();
        let strs = b.column(1).as_string::<i32>();
        for r in 0..b.num_rows() {
            assert_eq!(ints.value(r), n);
            assert_eq!(strs.value(r), format!("row {n}"));
            n += 1;
        }
    }
    assert_eq!(n, 20_000);
}

#[test]
fn nulls_where_bigquery_cannot_have_them_are_value_errors() {
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"a","type":"INT64","mode":"REQUIRED"}]},
        "rows":[{"f":[{"v":"1"}]},{"f":[{"v":null}]}]}"#,
    );
    assert_eq!(e.kind(), CodecErrorKind::Value);
    assert_eq!((e.column(), e.row()), (Some("a"), Some(1)));
    assert!(e.to_string().contains("REQUIRED"), "{e}");
    // Nested REQUIRED under a present RECORD, and a missing `v`.
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"s","type":"RECORD","fields":[{"name":"x","type":"INT64","mode":"REQUIRED"}]}]},
        "rows":[{"f":[{"v":{"f":[{}]}}]}]}"#,
    );
    assert_eq!((e.column(), e.row()), (Some("s.x"), Some(0)));
    // A NULL RECORD may hold REQUIRED fields: they are masked by the record's NULL.
    let (b, _) = decode_body(
        br#"{"schema":{"fields":[{"name":"s","type":"RECORD","fields":[{"name":"x","type":"INT64","mode":"REQUIRED"}]}]},
        "rows":[{"f":[{"v":null}]}]}"#,
        None,
    )
    .unwrap();
    assert!(b[0].column(0).is_null(0));
    // An ARRAY element cannot be NULL; a NULL array is empty.
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"a","type":"INT64","mode":"REPEATED"}]},
        "rows":[{"f":[{"v":[{"v":"1"},{"v":null}]}]}]}"#,
    );
    assert_eq!((e.column(), e.row()), (Some("a"), Some(0)));
    assert!(e.to_string().contains("ARRAY"), "{e}");
    let (b, _) = decode_body(
        br#"{"schema":{"fields":[{"name":"a","type":"INT64","mode":"REPEATED"}]},"rows":[{"f":[{"v":null}]}]}"#,
        None,
    )
    .unwrap();
    assert_eq!(b[0].column(0).as_list::<i32>().value(0).len(), 0);
}

#[test]
fn a_row_without_cells_or_a_second_rows_field_is_an_error() {
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"}]},"rows":[{"f":[{"v":"1"}]},{"e":[{"v":"2"}]}]}"#,
    );
    assert_eq!(e.kind(), CodecErrorKind::Syntax);
    assert!(e.to_string().contains("\"f\""), "{e}");
    let e = err_of(
        r#"{"schema":{"fields":[{"name":"a","type":"INT64"}]},"rows":[{"f":[{"v":"1"}]}],"rows":[]}"#,
    );
    assert!(e.to_string().contains("second `rows`"), "{e}");
}

#[test]
fn a_row_longer_than_many_chunks() {
    let long = "x".repeat(300_000);
    let body = format!(
        r#"{{"schema":{{"fields":[{{"name":"i","type":"INTEGER"}},{{"name":"s","type":"STRING"}}]}},"rows":[{{"f":[{{"v":"1"}},{{"v":"a"}}]}},{{"f":[{{"v":"2"}},{{"v":"{long}"}}]}},{{"f":[{{"v":"3"}},{{"v":"b"}}]}}]}}"#
    );
    for chunk in [1000, 4096, 65_536] {
        let mut d = ResponseDecoder::new();
        for c in body.as_bytes().chunks(chunk) {
            d.decode(c).unwrap();
        }
        d.finish().unwrap();
        let b = d.next_batch().unwrap();
        let s = b.column(1).as_string::<i32>();
        assert_eq!(
            (s.value(0), s.value(1).len(), s.value(2)),
            ("a", 300_000, "b")
        );
        // Only the cut row's bytes were held back, not whole chunks.
        assert!(
            d.pending.capacity() < 4 * 300_000,
            "{}",
            d.pending.capacity()
        );
    }
}

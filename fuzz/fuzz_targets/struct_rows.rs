//! `google.protobuf.Struct` rows of gRPC query pages: arbitrary message bytes into
//! `split_struct_rows` fail with a typed error or give a REST-shaped body that is valid JSON
//! with as many rows as it says; and the JSON rows it gives encode back
//! (`struct_rows_from_json`) into a message that splits to the same body.
#![no_main]

use bigq_codec::json::{split_struct_rows, struct_rows_from_json};
use libfuzzer_sys::fuzz_target;

/// The key serde_json reserves for a raw value (the workspace turns on its `raw_value`
/// feature): a body holding it as a field name is valid JSON that `serde_json::Value`
/// cannot hold, so the checks below, which read the body as a `Value`, leave it out.
const SERDE_JSON_RAW_VALUE_KEY: &[u8] = b"$serde_json::private::RawValue";

fuzz_target!(|data: &[u8]| {
    let Ok(split) = split_struct_rows(data, 7) else {
        return;
    };
    if split
        .body
        .windows(SERDE_JSON_RAW_VALUE_KEY.len())
        .any(|w| w == SERDE_JSON_RAW_VALUE_KEY)
    {
        // Still valid JSON, as a parser with no reserved keys reads it.
        serde_json::from_slice::<serde::de::IgnoredAny>(&split.body)
            .expect("the body is valid JSON");
        return;
    }
    let body: serde_json::Value =
        serde_json::from_slice(&split.body).expect("the body is valid JSON");
    let rows = body["rows"].as_array().expect("the body holds a rows array");
    assert_eq!(rows.len(), split.rows);
    // Back to the wire and split again: the same body.
    let rows_json = serde_json::to_vec(&body["rows"]).expect("JSON serializes");
    let (wire, n) = struct_rows_from_json(&rows_json, 7).expect("JSON rows encode");
    assert_eq!(n, split.rows);
    let again = split_struct_rows(&wire, 7).expect("encoded rows split");
    let again: serde_json::Value =
        serde_json::from_slice(&again.body).expect("the body is valid JSON");
    assert_eq!(again, body);
});

//! Robustness: deterministic mutations of valid bodies. The decoder must never panic; a
//! mutant either fails with a useful error (a message; a bad value names its column and row)
//! or decodes to rows consistent with the unmutated body, identically in any chunking.

use crate::common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use bigq_codec::schema::TableSchema;
use bigq_codec::{CodecError, CodecErrorKind};
use common::{Decoded, Rng, decode};
use serde_json::{Map, Value};

/// Every BigQuery type, REQUIRED and nested REQUIRED/REPEATED columns, NULLs, escapes.
const ALL_TYPES: &str = r#"{"kind":"bigquery#queryResponse",
"schema":{"fields":[
 {"name":"i","type":"INTEGER","mode":"REQUIRED"},
 {"name":"f","type":"FLOAT"},{"name":"n","type":"NUMERIC"},{"name":"bn","type":"BIGNUMERIC"},
 {"name":"b","type":"BOOLEAN"},{"name":"s","type":"STRING"},{"name":"by","type":"BYTES"},
 {"name":"d","type":"DATE"},{"name":"t","type":"TIME"},{"name":"dt","type":"DATETIME"},
 {"name":"ts","type":"TIMESTAMP"},{"name":"g","type":"GEOGRAPHY"},{"name":"j","type":"JSON"},
 {"name":"iv","type":"INTERVAL"},
 {"name":"rd","type":"RANGE","rangeElementType":{"type":"DATE"}},
 {"name":"rdt","type":"RANGE","rangeElementType":{"type":"DATETIME"}},
 {"name":"rts","type":"RANGE","rangeElementType":{"type":"TIMESTAMP"}},
 {"name":"st","type":"RECORD","fields":[
   {"name":"a","type":"INTEGER","mode":"REQUIRED"},
   {"name":"tags","type":"STRING","mode":"REPEATED"},
   {"name":"inner","type":"RECORD","mode":"REPEATED","fields":[{"name":"x","type":"FLOAT"}]}]},
 {"name":"arr","type":"INTEGER","mode":"REPEATED"}]},
"jobReference":{"projectId":"p","jobId":"j","location":"US"},
"totalRows":"4","pageToken":"tok","rows":[
{"f":[{"v":"-9223372036854775808"},{"v":"1.5"},{"v":"99999999999999999999999999999.999999999"},{"v":"-1.25E-3"},{"v":"true"},{"v":"h\u00e9llo \"q\"\n\\"},{"v":"AAEC/w=="},{"v":"2024-02-29"},{"v":"23:59:59.999999"},{"v":"2024-01-01T12:34:56.5"},{"v":"1.7040672E9"},{"v":"POINT(1 2)"},{"v":"{\"a\":[1,null]}"},{"v":"1-2 3 4:5:6.5"},{"v":"[2024-01-01, UNBOUNDED)"},{"v":"[2024-01-01T00:00:00, 2024-02-01T00:00:00)"},{"v":"[1704067200000000, UNBOUNDED)"},{"v":{"f":[{"v":"7"},{"v":[{"v":"x"},{"v":"y"}]},{"v":[{"v":{"f":[{"v":"0.25"}]}}]}]}},{"v":[{"v":"1"},{"v":"2"},{"v":"3"}]}]},
{"f":[{"v":"0"},{"v":"NaN"},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":null},{"v":[]}]},
{"f":[{"v":"42"},{"v":"-Infinity"},{"v":"-0.000000001"},{"v":"1E-38"},{"v":"false"},{"v":""},{"v":""},{"v":"0001-01-01"},{"v":"00:00:00"},{"v":"9999-12-31T23:59:59.999999"},{"v":"1704067200123456"},{"v":"LINESTRING(0 0, 1 1)"},{"v":"null"},{"v":"-0-0 -1 -0:0:0.000001"},{"v":"[UNBOUNDED, UNBOUNDED)"},{"v":"[UNBOUNDED, 2024-01-01T00:00:00)"},{"v":"[1.7040672E9, 1.7040672E9)"},{"v":{"f":[{"v":"-1"},{"v":[]},{"v":[]}]}},{"v":[{"v":"4"}]}]},
{"f":[{"v":"12345"},{"v":"-2.5E-300"},{"v":"123.456"},{"v":"12345678901234567890.123456789"},{"v":"true"},{"v":"\ud83d\ude00 ok"},{"v":"aGVsbG8="},{"v":"1970-01-01"},{"v":"12:00:00"},{"v":"2000-02-29 01:02:03"},{"v":"2024-01-01 00:00:00 UTC"},{"v":"POINT(-1 -2)"},{"v":"[]"},{"v":"0-0 0 0:0:0"},{"v":"[1999-12-31, 2000-01-01)"},{"v":null},{"v":null},{"v":null},{"v":[{"v":"-5"},{"v":"6"}]}]}
],"jobComplete":true}"#;

/// A `tabledata.list` page: no schema in the body, lineitem-like columns.
const TABLEDATA: &str = r#"{"kind":"bigquery#tableDataList","etag":"e","totalRows":"1000","pageToken":"CBQ=","rows":[{"f":[{"v":"1"},{"v":"155190"},{"v":"7706"},{"v":"1"},{"v":"17"},{"v":"21168.23"},{"v":"0.04"},{"v":"0.02"},{"v":"N"},{"v":"O"},{"v":"1996-03-13"},{"v":"1996-02-12"},{"v":"1996-03-22"},{"v":"DELIVER IN PERSON"},{"v":"TRUCK"},{"v":"egular courts above the"}]},{"f":[{"v":"1"},{"v":"67310"},{"v":"7311"},{"v":"2"},{"v":"36"},{"v":"45983.16"},{"v":"0.09"},{"v":"0.06"},{"v":"N"},{"v":"O"},{"v":"1996-04-12"},{"v":"1996-02-28"},{"v":"1996-04-20"},{"v":"TAKE BACK RETURN"},{"v":"MAIL"},{"v":"ly final dependencies: slyly bold "}]},{"f":[{"v":"2"},{"v":"106170"},{"v":"1191"},{"v":"1"},{"v":"38"},{"v":"44694.46"},{"v":"0"},{"v":"0.05"},{"v":"N"},{"v":"O"},{"v":"1997-01-28"},{"v":"1997-01-14"},{"v":"1997-02-02"},{"v":"TAKE BACK RETURN"},{"v":"RAIL"},{"v":"ven requests. deposits breach a"}]}]}"#;

const TABLEDATA_SCHEMA: &str = r#"{"fields":[
 {"name":"l_orderkey","type":"INTEGER","mode":"REQUIRED"},{"name":"l_partkey","type":"INTEGER"},
 {"name":"l_suppkey","type":"INTEGER"},{"name":"l_linenumber","type":"INTEGER"},
 {"name":"l_quantity","type":"NUMERIC"},{"name":"l_extendedprice","type":"NUMERIC"},
 {"name":"l_discount","type":"NUMERIC"},{"name":"l_tax","type":"NUMERIC"},
 {"name":"l_returnflag","type":"STRING"},{"name":"l_linestatus","type":"STRING"},
 {"name":"l_shipdate","type":"DATE"},{"name":"l_commitdate","type":"DATE"},
 {"name":"l_receiptdate","type":"DATE"},{"name":"l_shipinstruct","type":"STRING"},
 {"name":"l_shipmode","type":"STRING"},{"name":"l_comment","type":"STRING"}]}"#;

struct Case {
    name: &'static str,
    body: Vec<u8>,
    schema: Option<TableSchema>,
}

fn cases() -> Vec<Case> {
    let all: Value = serde_json::from_str(ALL_TYPES).unwrap();
    let mut rows_first = String::from("{\"rows\":");
    rows_first.push_str(&all["rows"].to_string());
    for (k, v) in all
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "rows")
    {
        rows_first.push_str(&format!(",\"{k}\":{v}"));
    }
    rows_first.push('}');
    vec![
        Case {
            name: "all types",
            body: ALL_TYPES.as_bytes().to_vec(),
            schema: None,
        },
        Case {
            name: "all types, rows before schema",
            body: rows_first.into_bytes(),
            schema: None,
        },
        Case {
            name: "tabledata.list",
            body: TABLEDATA.as_bytes().to_vec(),
            schema: Some(serde_json::from_str(TABLEDATA_SCHEMA).unwrap()),
        },
    ]
}

/// What a decode gave, reduced to what is compared.
#[derive(Debug, PartialEq)]
enum Outcome {
    Rows(Vec<Vec<Value>>, Map<String, Value>),
    Failed(CodecError),
}

fn run(case: &Case, body: &[u8], chunk: usize) -> Result<Outcome, String> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        decode(body, chunk, 2, case.schema.clone()).map(|d: Decoded| {
            let rows = if d.schema.is_some() {
                d.rest_rows()
            } else {
                Vec::new()
            };
            (rows, d.metadata)
        })
    }));
    match r {
        Ok(Ok((rows, meta))) => Ok(Outcome::Rows(rows, meta)),
        Ok(Err(e)) => Ok(Outcome::Failed(e)),
        Err(p) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())),
    }
}

struct Checker<'a> {
    case: &'a Case,
    rows: Vec<Vec<Value>>,
    meta: Map<String, Value>,
    columns: Vec<String>,
    failures: Vec<String>,
    mutants: usize,
    errors: usize,
}

impl<'a> Checker<'a> {
    fn new(case: &'a Case) -> Self {
        let Ok(Outcome::Rows(rows, meta)) = run(case, &case.body, usize::MAX) else {
            panic!("{}: the unmutated body does not decode", case.name);
        };
        assert!(!rows.is_empty());
        let columns = match &case.schema {
            Some(s) => s.fields.iter().map(|f| f.name.clone()).collect(),
            None => meta["schema"]["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["name"].as_str().unwrap().to_string())
                .collect(),
        };
        Checker {
            case,
            rows,
            meta,
            columns,
            failures: Vec::new(),
            mutants: 0,
            errors: 0,
        }
    }

    fn fail(&mut self, what: &str, msg: String) {
        if self.failures.len() < 20 {
            self.failures
                .push(format!("{} / {what}: {msg}", self.case.name));
        }
    }

    /// Decodes a mutant whole and in chunks of `chunk`; returns the whole outcome, or
    /// `None` after recording a failure (a panic, or chunkings that disagree).
    fn outcome(&mut self, what: &str, body: &[u8], chunk: usize) -> Option<Outcome> {
        self.mutants += 1;
        let whole = match run(self.case, body, usize::MAX) {
            Ok(o) => o,
            Err(p) => {
                self.fail(what, format!("panicked: {p}"));
                return None;
            }
        };
        let chunked = match run(self.case, body, chunk) {
            Ok(o) => o,
            Err(p) => {
                self.fail(what, format!("panicked in chunks of {chunk}: {p}"));
                return None;
            }
        };
        let agree = match (&whole, &chunked) {
            (Outcome::Failed(a), Outcome::Failed(b)) => a.kind() == b.kind(),
            (a, b) => a == b,
        };
        if !agree {
            self.fail(
                what,
                format!("whole gives {whole:?} but chunks of {chunk} give {chunked:?}"),
            );
            return None;
        }
        if let Outcome::Failed(e) = &whole {
            self.errors += 1;
            self.check_error(what, e);
        }
        Some(whole)
    }

    fn check_error(&mut self, what: &str, e: &CodecError) {
        if e.message().is_empty() || e.to_string().is_empty() {
            self.fail(what, format!("error without a message: {e:?}"));
        }
        if e.kind() == CodecErrorKind::Value {
            let col_ok = e
                .column()
                .and_then(|c| c.split('.').next())
                .is_some_and(|c| self.columns.iter().any(|n| n == c));
            let row_ok = e.row().is_some_and(|r| (r as usize) < self.rows.len());
            if !col_ok || !row_ok {
                self.fail(what, format!("value error without column and row: {e}"));
            }
        }
    }

    /// A mutant that should not change the result at all.
    fn expect_same(&mut self, what: &str, body: &[u8], chunk: usize) {
        match self.outcome(what, body, chunk) {
            Some(Outcome::Rows(rows, meta)) if rows == self.rows && meta == self.meta => {}
            Some(other) => self.fail(what, format!("changed the result: {other:?}")),
            None => {}
        }
    }

    /// A mutant that changed a few adjacent bytes: an error, or the same rows but for at
    /// most one cell, or no rows at all when the `rows` key itself was damaged.
    fn expect_local(&mut self, what: &str, body: &[u8], chunk: usize) {
        let Some(Outcome::Rows(rows, meta)) = self.outcome(what, body, chunk) else {
            return;
        };
        if rows.is_empty() {
            let renamed = meta.keys().any(|k| !self.meta.contains_key(k));
            if !renamed {
                self.fail(what, format!("lost every row: {meta:?}"));
            }
            return;
        }
        if rows.len() != self.rows.len() {
            self.fail(
                what,
                format!("{} rows instead of {}", rows.len(), self.rows.len()),
            );
            return;
        }
        let changed = rows
            .iter()
            .zip(&self.rows)
            .flat_map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x != y))
            .count();
        if changed > 1 {
            self.fail(what, format!("{changed} cells changed"));
        }
    }

    fn expect_error(&mut self, what: &str, body: &[u8], chunk: usize, needle: &str) {
        match self.outcome(what, body, chunk) {
            Some(Outcome::Failed(e)) if e.to_string().contains(needle) => {}
            Some(other) => self.fail(what, format!("expected an error about {needle}: {other:?}")),
            None => {}
        }
    }
}

/// The body with whitespace around every structural character outside strings.
fn spaced(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for &b in body {
        if in_string {
            out.push(b);
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'{' | b'[' | b',' | b':' => out.extend_from_slice(&[b' ', b, b'\n', b'\t']),
            b'}' | b']' => out.extend_from_slice(&[b'\r', b'\n', b, b' ']),
            _ => out.push(b),
        }
    }
    out
}

/// A chunk size: mostly mid-sized, rarely tiny (a tiny chunk re-scans the row per byte,
/// which is slow in a debug build).
fn chunk_size(rng: &mut Rng) -> usize {
    if rng.below(40) == 0 {
        1 + rng.below(3)
    } else {
        [7, 16, 61, 256, 1024][rng.below(5)]
    }
}

/// Where a `"key":` occurs, as (start of the key's quote, end of its value).
fn key_spans(body: &[u8], key: &str) -> Vec<(usize, usize)> {
    let pat = format!("\"{key}\":");
    let text = std::str::from_utf8(body).unwrap();
    let mut out = Vec::new();
    for (start, _) in text.match_indices(&pat) {
        let value_start = start + pat.len();
        let mut de = serde_json::Deserializer::from_str(&text[value_start..]).into_iter::<Value>();
        if de.next().is_some_and(|v| v.is_ok()) {
            out.push((start, value_start + de.byte_offset()));
        }
    }
    out
}

#[test]
fn mutated_bodies_never_panic_and_fail_cleanly() {
    let started = std::time::Instant::now();
    // Fixed seed, so that any failure reproduces.
    let mut rng = Rng(0x5EED_B16C);
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for case in &cases() {
        let mut c = Checker::new(case);
        let body = &case.body;
        let n = body.len();

        // Truncation at every position: always an error, never a panic.
        for cut in 0..n {
            let chunk = chunk_size(&mut rng);
            match c.outcome(&format!("truncated at {cut}"), &body[..cut], chunk) {
                Some(Outcome::Failed(_)) | None => {}
                Some(o) => c.fail(&format!("truncated at {cut}"), format!("accepted: {o:?}")),
            }
        }

        // Byte flips: structural characters, digits, letters, escapes, invalid UTF-8.
        const INTERESTING: &[u8] = b"{}[]\":,\\ 0123456789-+.eEnulltruefalseUNBOUNDED\x00\xff\xc3";
        for _ in 0..900 {
            let pos = rng.below(n);
            let byte = if rng.below(2) == 0 {
                INTERESTING[rng.below(INTERESTING.len())]
            } else {
                rng.below(256) as u8
            };
            if body[pos] == byte {
                continue;
            }
            let mut m = body.clone();
            m[pos] = byte;
            c.expect_local(
                &format!("byte {pos} set to {byte:#04x}"),
                &m,
                chunk_size(&mut rng),
            );
        }

        // Inserted and deleted bytes.
        for _ in 0..400 {
            let pos = rng.below(n + 1);
            let byte = INTERESTING[rng.below(INTERESTING.len())];
            let mut m = body.clone();
            m.insert(pos, byte);
            c.expect_local(
                &format!("{byte:#04x} inserted at {pos}"),
                &m,
                chunk_size(&mut rng),
            );
            let len = 1 + rng.below(3);
            let pos = rng.below(n - len);
            let mut m = body.clone();
            m.drain(pos..pos + len);
            c.expect_local(
                &format!("{len} bytes deleted at {pos}"),
                &m,
                chunk_size(&mut rng),
            );
        }

        // Whitespace anywhere between tokens changes nothing.
        c.expect_same("whitespace between tokens", &spaced(body), 13);
        let text = std::str::from_utf8(body).unwrap();

        // Duplicated keys: a cell's or row's duplicate is ignored (the first wins, and here
        // both are equal); a duplicated top-level key is the same value again; a second
        // `rows` is an error.
        for key in [
            "v",
            "f",
            "kind",
            "totalRows",
            "pageToken",
            "schema",
            "jobReference",
        ] {
            let spans = key_spans(body, key);
            for (i, &(s, e)) in spans
                .iter()
                .enumerate()
                .step_by(spans.len().div_ceil(8).max(1))
            {
                let mut m = body[..e].to_vec();
                m.push(b',');
                m.extend_from_slice(&body[s..]);
                c.expect_same(
                    &format!("`{key}` #{i} duplicated"),
                    &m,
                    chunk_size(&mut rng),
                );
            }
        }
        if let Some(&(s, e)) = key_spans(body, "rows").first() {
            let mut m = body[..e].to_vec();
            m.push(b',');
            m.extend_from_slice(&body[s..]);
            c.expect_error("`rows` duplicated", &m, 31, "rows");
        }

        // Swapped key order and unknown keys.
        let obj: Map<String, Value> = serde_json::from_slice(body).unwrap();
        let keys: Vec<&String> = obj.keys().collect();
        for rot in 0..keys.len() {
            let mut order = keys.clone();
            order.rotate_left(rot);
            if rot % 2 == 1 {
                order.reverse();
            }
            let parts: Vec<String> = order
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        Value::String((*k).clone()),
                        if *k == "rows" {
                            // Keep the rows' bytes as they were (escapes included).
                            let (s, e) = key_spans(body, "rows")[0];
                            text[s + 7..e].to_string()
                        } else {
                            obj[*k].to_string()
                        }
                    )
                })
                .collect();
            let m = format!("{{{}}}", parts.join(","));
            c.expect_same(
                &format!("top-level keys in order {order:?}"),
                m.as_bytes(),
                17,
            );
        }
        let swapped = text
            .replace(
                r#""name":"i","type":"INTEGER""#,
                r#""type":"INTEGER","name":"i""#,
            )
            .replace(r#"{"v":"#, r#"{"x":{"v":[1,"}"]},"v":"#)
            .replace(r#"{"f":"#, r#"{"etag":"]","f":"#);
        c.expect_same(
            "keys swapped and unknown keys added",
            swapped.as_bytes(),
            29,
        );

        report.push(format!(
            "{}: {} mutants of a {n}-byte body, {} errors",
            case.name, c.mutants, c.errors
        ));
        failures.extend(c.failures);
    }
    common::announce(&format!(
        "mutations: {} in {:.1?}",
        report.join("; "),
        started.elapsed()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

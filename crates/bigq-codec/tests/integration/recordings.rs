//! The decoder against recordings of real BigQuery (`../shared/bigquery-recordings` beside
//! the repository, or `$BIGQ_RECORDINGS`).
//!
//! - `http/jobs/*/expected_response.json` are real REST bodies: those with `rows` are decoded
//!   in several chunkings and every cell is compared with the recorded one, plus the
//!   metadata. A `tabledata.list` body has no schema: it is read from the fixture's
//!   `setup.sql` (`CREATE TABLE`) and the request's `selectedFields`.
//! - `sql/*/*/expected.json` hold a schema and rows as the Python client renders them. Each is
//!   turned back into the REST body BigQuery sends (INT64 as strings, FLOAT64 as Java double
//!   text, TIMESTAMP as float seconds or int64 micros, RANGE as `[start, end)`, INTERVAL as
//!   `Y-M D H:M:S`, RECORD as `{"f":..}`, ARRAY as `[{"v":..}]`), decoded, and every value
//!   rendered back to the Python form and compared.
//!
//! When the recordings are absent the tests say so on stderr and pass.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use base64::Engine;
use bigq_codec::json::DEFAULT_BATCH_SIZE;
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use common::{announce, decode, rest_eq};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// Chunk sizes every body is fed in, with the batch size used for each.
const CHUNKINGS: [(usize, usize); 4] = [
    (1, 3),
    (7, 2),
    (4096, DEFAULT_BATCH_SIZE),
    (usize::MAX, DEFAULT_BATCH_SIZE),
];

// ---------------------------------------------------------------------------------------
// http/jobs: real REST bodies
// ---------------------------------------------------------------------------------------

#[derive(serde::Deserialize)]
struct HttpRecording<'a> {
    #[serde(borrow)]
    body: Option<&'a RawValue>,
}

/// The schema of a `tabledata.list` fixture, from its `CREATE TABLE` and `selectedFields`.
fn schema_from_setup(dir: &Path) -> Result<TableSchema, String> {
    let request: Value = fs::read_to_string(dir.join("request.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or("no readable request.json")?;
    let path = request["path"].as_str().ok_or("request without a path")?;
    let table = path
        .split_once("/tables/")
        .and_then(|(_, rest)| rest.split_once("/data"))
        .map(|(t, _)| t)
        .ok_or("request is not tabledata.list")?;
    let selected: Option<Vec<&str>> = path
        .split_once('?')
        .and_then(|(_, q)| {
            q.split('&')
                .find_map(|kv| kv.strip_prefix("selectedFields="))
        })
        .map(|v| v.split(',').collect());
    let sql = fs::read_to_string(dir.join("setup.sql"))
        .map_err(|_| "no setup.sql to take the table's schema from")?;
    let create = sql
        .split(';')
        .find(|s| {
            let s = s.trim().to_ascii_uppercase();
            s.starts_with("CREATE TABLE") && s.contains(&format!(".{}`", table.to_uppercase()))
        })
        .ok_or_else(|| format!("setup.sql does not create table `{table}`"))?;
    let open = create.find('(').ok_or("CREATE TABLE without columns")?;
    let close = create.rfind(')').ok_or("CREATE TABLE without columns")?;
    let mut fields = Vec::new();
    for col in create[open + 1..close].split(',') {
        let words: Vec<&str> = col.split_whitespace().collect();
        let (name, ty, rest) = match words.as_slice() {
            [name, ty, rest @ ..] => (*name, *ty, rest),
            _ => return Err(format!("cannot read column definition `{col}`")),
        };
        if ty.contains(['<', '(']) {
            return Err(format!("column type `{ty}` is not a plain scalar"));
        }
        let mut f = TableFieldSchema::new(name.trim_matches('`'), FieldType::parse(ty));
        match rest.join(" ").to_ascii_uppercase().as_str() {
            "" => {}
            "NOT NULL" => f = f.with_mode(FieldMode::Required),
            other => return Err(format!("column option `{other}` not understood")),
        }
        if !selected
            .as_ref()
            .is_none_or(|s| s.contains(&f.name.as_str()))
        {
            continue;
        }
        fields.push(f);
    }
    Ok(TableSchema::new(fields))
}

/// The same body with `rows` moved before every other key, so that the rows arrive before
/// the schema.
fn rows_first(body: &Value) -> Vec<u8> {
    let obj = body.as_object().expect("body is an object");
    let mut out = format!("{{\"rows\":{}", obj["rows"]);
    for (k, v) in obj.iter().filter(|(k, _)| *k != "rows") {
        out.push_str(&format!(",{}:{}", Value::String(k.clone()), v));
    }
    out.push('}');
    out.into_bytes()
}

#[test]
fn http_recordings_decode_cell_for_cell() {
    let root = match common::recordings_dir() {
        Ok(d) => d,
        Err(why) => {
            announce(&format!("SKIPPED http recordings test: {why}"));
            return;
        }
    };
    let mut dirs: Vec<_> = fs::read_dir(root.join("http/jobs"))
        .expect("http/jobs is readable")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected_response.json").is_file())
        .collect();
    dirs.sort();
    let (mut with_rows, mut checked, mut cells) = (0, 0, 0usize);
    let mut skipped: Vec<(String, String)> = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(dir.join("expected_response.json")).unwrap();
        let rec: HttpRecording = serde_json::from_str(&text).unwrap();
        let Some(raw) = rec.body else { continue };
        let body: Value = serde_json::from_str(raw.get()).unwrap();
        let Some(rows) = body.get("rows").and_then(Value::as_array) else {
            continue;
        };
        with_rows += 1;
        let given = if body.get("schema").is_some() {
            None
        } else {
            match schema_from_setup(dir) {
                Ok(s) => Some(s),
                Err(why) => {
                    skipped.push((name, why));
                    continue;
                }
            }
        };
        let mut expected_meta = body.as_object().unwrap().clone();
        expected_meta.remove("rows");
        // As recorded (pretty, server key order), and rows-first compact.
        let variants = [raw.get().as_bytes().to_vec(), rows_first(&body)];
        for (vi, bytes) in variants.iter().enumerate() {
            for (chunk, batch) in CHUNKINGS {
                let ctx = format!("{name} (variant {vi}, chunk {chunk})");
                let d = decode(bytes, chunk, batch, given.clone())
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let schema = d.schema.clone().expect("schema known");
                assert!(
                    d.batches.iter().all(|b| b.num_rows() <= batch),
                    "{ctx}: batch too large"
                );
                let got = d.rest_rows();
                assert_eq!(got.len(), rows.len(), "{ctx}: row count");
                for (r, (want, have)) in rows.iter().zip(&got).enumerate() {
                    let want = want["f"].as_array().expect("row has f");
                    assert_eq!(want.len(), schema.fields.len(), "{ctx}: row {r} width");
                    for (c, f) in schema.fields.iter().enumerate() {
                        assert!(
                            rest_eq(&want[c]["v"], &have[c], f),
                            "{ctx}: row {r} column {}: recorded {} decoded {}",
                            f.name,
                            want[c]["v"],
                            have[c]
                        );
                        cells += 1;
                    }
                }
                assert_eq!(d.metadata, expected_meta, "{ctx}: metadata");
                assert_eq!(d.metadata.get("pageToken"), body.get("pageToken"), "{ctx}");
                let total: u64 = d.metadata["totalRows"].as_str().unwrap().parse().unwrap();
                assert!(total >= rows.len() as u64, "{ctx}: totalRows {total}");
            }
        }
        checked += 1;
    }
    announce(&format!(
        "http recordings: {} fixtures, {with_rows} with rows: {checked} checked ({cells} cell \
         comparisons over all chunkings), {} skipped",
        dirs.len(),
        skipped.len()
    ));
    for (name, why) in &skipped {
        announce(&format!("  skipped {name}: {why}"));
    }
    assert!(checked > 0, "no http fixture with rows was checked");
    assert_eq!(checked + skipped.len(), with_rows);
}

// ---------------------------------------------------------------------------------------
// sql/: Python-rendered results turned back into REST bodies
// ---------------------------------------------------------------------------------------

/// How TIMESTAMP values are written in a built body.
#[derive(Clone, Copy, Debug)]
enum TsForm {
    /// The REST default: seconds as Java's `Double.toString` (`1.70532E9`).
    FloatSeconds,
    /// `formatOptions.useInt64Timestamp`: integer microseconds.
    Int64Micros,
}

/// Java's `Double.toString`, which is how BigQuery's REST API writes FLOAT64 and float
/// seconds: plain with at least one fraction digit in [1e-3, 1e7), else `d.dddE±n`.
fn java_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = v.abs();
    if v == 0.0 || (1e-3..1e7).contains(&a) {
        let s = v.to_string();
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let s = format!("{v:E}");
        let (m, e) = s.split_once('E').unwrap();
        if m.contains('.') {
            s
        } else {
            format!("{m}.0E{e}")
        }
    }
}

/// A Python `isoformat()` TIMESTAMP (`2024-01-15T12:00:00+00:00`) as micros, via chrono.
fn iso_micros(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("bad fixture timestamp {s}: {e}"))
        .timestamp_micros()
}

fn timestamp_rest(micros: i64, ts: TsForm) -> String {
    match ts {
        TsForm::FloatSeconds => java_double(micros as f64 / 1e6),
        TsForm::Int64Micros => micros.to_string(),
    }
}

/// `dateutil.relativedelta`'s fields, as the Python client builds them from an INTERVAL.
#[derive(Debug, Default, PartialEq, Eq)]
struct RelDelta {
    years: i64,
    months: i64,
    days: i64,
    hours: i64,
    minutes: i64,
    seconds: i64,
    microseconds: i64,
}

const RELDELTA_FIELDS: [&str; 7] = [
    "years",
    "months",
    "days",
    "hours",
    "minutes",
    "seconds",
    "microseconds",
];

impl RelDelta {
    fn parse(s: &str) -> RelDelta {
        let inner = s
            .strip_prefix("relativedelta(")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not a relativedelta: {s}"));
        let mut r = RelDelta::default();
        for part in inner.split(", ").filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').expect("key=value");
            let v: i64 = v.parse().unwrap_or_else(|_| panic!("bad number in {s}"));
            *r.field(k) = v;
        }
        r
    }

    fn field(&mut self, k: &str) -> &mut i64 {
        match k {
            "years" => &mut self.years,
            "months" => &mut self.months,
            "days" => &mut self.days,
            "hours" => &mut self.hours,
            "minutes" => &mut self.minutes,
            "seconds" => &mut self.seconds,
            "microseconds" => &mut self.microseconds,
            other => panic!("relativedelta field {other} not expected"),
        }
    }

    /// The fields relativedelta keeps for an INTERVAL of `months`, `days` and `nanos`: it
    /// carries microseconds into seconds, seconds into minutes, minutes into hours, hours
    /// into days (but never days into months) and months into years, each truncating
    /// toward zero. That is why the Python form is not reversible: `0-0 0 30:0:0` and
    /// `0-0 1 6:0:0` both print as `relativedelta(days=+1, hours=+6)`.
    fn from_interval(months: i32, days: i32, nanos: i64) -> RelDelta {
        assert_eq!(nanos % 1000, 0, "sub-microsecond INTERVAL");
        let micros = nanos / 1000;
        let secs = micros / 1_000_000;
        let mins = secs / 60;
        let hours = mins / 60;
        RelDelta {
            years: months as i64 / 12,
            months: months as i64 % 12,
            days: days as i64 + hours / 24,
            hours: hours % 24,
            minutes: mins % 60,
            seconds: secs % 60,
            microseconds: micros % 1_000_000,
        }
    }

    /// The REST text of the interval this relativedelta was made from (one of them).
    fn to_rest(&self) -> String {
        let months = self.years * 12 + self.months;
        let nanos = (((self.hours * 60 + self.minutes) * 60 + self.seconds) * 1_000_000
            + self.microseconds)
            * 1000;
        common::interval_text(months as i32, self.days as i32, nanos)
    }

    fn repr(&self) -> String {
        let vals = [
            self.years,
            self.months,
            self.days,
            self.hours,
            self.minutes,
            self.seconds,
            self.microseconds,
        ];
        let parts: Vec<String> = RELDELTA_FIELDS
            .iter()
            .zip(vals)
            .filter(|(_, v)| *v != 0)
            .map(|(k, v)| format!("{k}={v:+}"))
            .collect();
        format!("relativedelta({})", parts.join(", "))
    }
}

fn element_type(f: &TableFieldSchema) -> FieldType {
    f.range_element_type
        .as_ref()
        .map(|r| r.element_type.clone())
        .unwrap_or(FieldType::Date)
}

fn single(f: &TableFieldSchema) -> TableFieldSchema {
    let mut s = f.clone();
    s.mode = None;
    s
}

/// A Python-rendered scalar as BigQuery's REST text (see the module docs).
fn scalar_rest(py: &Value, ty: &FieldType, ts: TsForm, ctx: &str) -> String {
    let text = || {
        py.as_str()
            .unwrap_or_else(|| panic!("{ctx}: expected text, got {py}"))
            .to_string()
    };
    match ty {
        FieldType::Int64 => py
            .as_i64()
            .unwrap_or_else(|| panic!("{ctx}: bad int {py}"))
            .to_string(),
        FieldType::Float64 => java_double(py.as_f64().expect("float")),
        FieldType::Bool => py.as_bool().expect("bool").to_string(),
        FieldType::Json => {
            // The client parsed the JSON and the recorder printed it again; BigQuery sends
            // it compact.
            let v: Value = serde_json::from_str(&text()).expect("JSON column holds JSON");
            v.to_string()
        }
        FieldType::Timestamp => timestamp_rest(iso_micros(&text()), ts),
        FieldType::Interval => RelDelta::parse(&text()).to_rest(),
        _ => text(),
    }
}

/// A Python-rendered cell as the REST `v` value.
fn to_rest(py: &Value, f: &TableFieldSchema, ts: TsForm, ctx: &str) -> Value {
    if f.is_repeated() {
        let el = single(f);
        return match py {
            Value::Null => json!([]),
            Value::Array(items) => items
                .iter()
                .map(|i| json!({ "v": to_rest(i, &el, ts, ctx) }))
                .collect(),
            other => panic!("{ctx}: REPEATED value is {other}"),
        };
    }
    if py.is_null() {
        return Value::Null;
    }
    match f.field_type {
        FieldType::Record => {
            let cells: Vec<Value> = f
                .fields
                .iter()
                .map(|sf| json!({ "v": to_rest(&py[&sf.name], sf, ts, ctx) }))
                .collect();
            json!({ "f": cells })
        }
        FieldType::Range => {
            let el = element_type(f);
            let side = |k: &str| match &py[k] {
                Value::Null => "UNBOUNDED".to_string(),
                v => scalar_rest(v, &el, ts, ctx),
            };
            Value::String(format!("[{}, {})", side("start"), side("end")))
        }
        ref ty => Value::String(scalar_rest(py, ty, ts, ctx)),
    }
}

/// A decoded cell in the Python client's rendering, to compare with the fixture.
fn python_value(a: &dyn Array, i: usize, f: &TableFieldSchema) -> Value {
    if f.is_repeated() {
        let items = a.as_list::<i32>().value(i);
        let el = single(f);
        return (0..items.len())
            .map(|j| python_value(items.as_ref(), j, &el))
            .collect();
    }
    if a.is_null(i) {
        return Value::Null;
    }
    match &f.field_type {
        FieldType::Int64 => json!(a.as_primitive::<Int64Type>().value(i)),
        FieldType::Float64 => json!(a.as_primitive::<Float64Type>().value(i)),
        FieldType::Bool => json!(a.as_boolean().value(i)),
        FieldType::Numeric => json!(common::decimal_text(
            &a.as_primitive::<Decimal128Type>().value(i).to_string(),
            9
        )),
        FieldType::BigNumeric => json!(common::decimal_text(
            &a.as_primitive::<Decimal256Type>().value(i).to_string(),
            38
        )),
        FieldType::String | FieldType::Json | FieldType::Geography => {
            json!(a.as_string::<i32>().value(i))
        }
        FieldType::Bytes => {
            json!(base64::engine::general_purpose::STANDARD.encode(a.as_binary::<i32>().value(i)))
        }
        FieldType::Date => json!(common::date_text(a.as_primitive::<Date32Type>().value(i))),
        FieldType::Time => json!(common::time_text(
            a.as_primitive::<Time64MicrosecondType>().value(i)
        )),
        FieldType::DateTime => json!(common::datetime_text(
            a.as_primitive::<TimestampMicrosecondType>().value(i)
        )),
        FieldType::Timestamp => json!(format!(
            "{}+00:00",
            common::datetime_text(a.as_primitive::<TimestampMicrosecondType>().value(i))
        )),
        FieldType::Interval => {
            let v = a.as_primitive::<IntervalMonthDayNanoType>().value(i);
            json!(RelDelta::from_interval(v.months, v.days, v.nanoseconds).repr())
        }
        FieldType::Range => {
            let s = a.as_struct();
            let el = TableFieldSchema::new("el", element_type(f));
            json!({
                "start": python_value(s.column(0).as_ref(), i, &el),
                "end": python_value(s.column(1).as_ref(), i, &el),
            })
        }
        FieldType::Record => {
            let s = a.as_struct();
            let mut m = Map::new();
            for (c, sf) in f.fields.iter().enumerate() {
                m.insert(sf.name.clone(), python_value(s.column(c).as_ref(), i, sf));
            }
            Value::Object(m)
        }
        other => panic!("no Python rendering for {other}"),
    }
}

/// Fixture value and decoded value are the same, for column `f`.
fn python_eq(want: &Value, got: &Value, f: &TableFieldSchema) -> bool {
    if f.is_repeated() {
        let el = single(f);
        let want_items = want.as_array().map(Vec::as_slice).unwrap_or(&[]);
        return got.as_array().is_some_and(|g| {
            g.len() == want_items.len()
                && want_items.iter().zip(g).all(|(w, g)| python_eq(w, g, &el))
        });
    }
    match (&f.field_type, want, got) {
        (_, Value::Null, Value::Null) => true,
        (FieldType::Record, Value::Object(w), Value::Object(g)) => f
            .fields
            .iter()
            .all(|sf| python_eq(&w[&sf.name], &g[&sf.name], sf)),
        (FieldType::Float64, w, g) => w.as_f64().is_some() && w.as_f64() == g.as_f64(),
        (FieldType::Int64, w, g) => w.as_i64().is_some() && w.as_i64() == g.as_i64(),
        (FieldType::Json, Value::String(w), Value::String(g)) => {
            serde_json::from_str::<Value>(w).ok() == serde_json::from_str::<Value>(g).ok()
        }
        (_, w, g) => w == g,
    }
}

/// The schema as BigQuery sends it. The recorder dropped `rangeElementType`; it is put
/// back from the values (a DATE is 10 characters, a TIMESTAMP has an offset, anything else
/// is a DATETIME). A RANGE column with no bound in any row gets DATE.
fn rest_schema(fixture_schema: &Value, rows: &[Value]) -> (Vec<TableFieldSchema>, Vec<String>) {
    let mut fields: Vec<TableFieldSchema> =
        serde_json::from_value(fixture_schema.clone()).expect("fixture schema parses");
    let mut notes = Vec::new();
    for f in fields.iter_mut() {
        if f.field_type != FieldType::Range || f.range_element_type.is_some() {
            continue;
        }
        let bounds = rows
            .iter()
            .flat_map(|r| match &r[&f.name] {
                Value::Array(a) => a.clone(),
                v => vec![v.clone()],
            })
            .flat_map(|v| [v["start"].clone(), v["end"].clone()])
            .filter_map(|b| b.as_str().map(str::to_string))
            .next();
        let ty = match bounds.as_deref() {
            Some(b) if b.len() == 10 => FieldType::Date,
            Some(b) if b.contains('+') || b.ends_with('Z') => FieldType::Timestamp,
            Some(_) => FieldType::DateTime,
            None => {
                notes.push(format!("RANGE `{}` has no bounds: DATE assumed", f.name));
                FieldType::Date
            }
        };
        *f = TableFieldSchema {
            mode: f.mode,
            ..TableFieldSchema::range(f.name.clone(), ty)
        };
    }
    (fields, notes)
}

fn check_sql_fixture(name: &str, fixture: &Value) -> usize {
    let rows = fixture["rows"].as_array().expect("rows");
    let (fields, notes) = rest_schema(&fixture["schema"], rows);
    for n in notes {
        announce(&format!("  note {name}: {n}"));
    }
    let mut cells = 0;
    for ts in [TsForm::FloatSeconds, TsForm::Int64Micros] {
        let ctx = format!("{name} ({ts:?})");
        let rest_rows: Vec<Value> = rows
            .iter()
            .map(|r| {
                let cells: Vec<Value> = fields
                    .iter()
                    .map(|f| json!({ "v": to_rest(&r[&f.name], f, ts, &ctx) }))
                    .collect();
                json!({ "f": cells })
            })
            .collect();
        let body = format!(
            r#"{{"kind":"bigquery#queryResponse","schema":{{"fields":{}}},"jobReference":{{"projectId":"p","jobId":"j","location":"US"}},"totalRows":"{}","rows":{},"jobComplete":true}}"#,
            serde_json::to_string(&fields).unwrap(),
            rows.len(),
            Value::Array(rest_rows),
        );
        for (chunk, batch) in CHUNKINGS {
            let d = decode(body.as_bytes(), chunk, batch, None)
                .unwrap_or_else(|e| panic!("{ctx} chunk {chunk}: {e}\nbody: {body}"));
            assert_eq!(d.num_rows(), rows.len(), "{ctx}: row count");
            assert_eq!(d.metadata["totalRows"], json!(rows.len().to_string()));
            let mut r = 0;
            for b in &d.batches {
                for i in 0..b.num_rows() {
                    for (c, f) in fields.iter().enumerate() {
                        let got = python_value(b.column(c).as_ref(), i, f);
                        let want = &rows[r][&f.name];
                        assert!(
                            python_eq(want, &got, f),
                            "{ctx} chunk {chunk}: row {r} column {}: fixture {want} decoded {got}",
                            f.name
                        );
                        cells += 1;
                    }
                    r += 1;
                }
            }
        }
    }
    cells
}

#[test]
fn sql_recordings_round_trip_through_rest_bodies() {
    let root = match common::recordings_dir() {
        Ok(d) => d,
        Err(why) => {
            announce(&format!("SKIPPED sql recordings test: {why}"));
            return;
        }
    };
    let mut files = Vec::new();
    for group in fs::read_dir(root.join("sql")).expect("sql/ is readable") {
        for fixture in fs::read_dir(group.unwrap().path()).unwrap() {
            let p = fixture.unwrap().path().join("expected.json");
            if p.is_file() {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut checked, mut with_rows, mut cells) = (0, 0, 0);
    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &files {
        let name = p
            .parent()
            .unwrap()
            .strip_prefix(root.join("sql"))
            .unwrap()
            .display()
            .to_string();
        let fixture: Value = serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap();
        if fixture.get("error").is_some() {
            *skipped
                .entry("the query failed (error fixture)")
                .or_default() += 1;
            continue;
        }
        match fixture["schema"].as_array() {
            Some(s) if !s.is_empty() => {
                for f in s {
                    let t = format!(
                        "{}{}",
                        f["type"].as_str().unwrap(),
                        if f["mode"] == "REPEATED" { "[]" } else { "" }
                    );
                    *types.entry(t).or_default() += 1;
                }
            }
            _ => {
                *skipped.entry("no result columns (DDL/DML)").or_default() += 1;
                continue;
            }
        }
        cells += check_sql_fixture(&name, &fixture);
        checked += 1;
        if fixture["rows"].as_array().is_some_and(|r| !r.is_empty()) {
            with_rows += 1;
        }
    }
    announce(&format!(
        "sql recordings: {} fixtures: {checked} checked ({with_rows} with rows, {cells} cell \
         comparisons over 2 timestamp forms x {} chunkings), {} skipped",
        files.len(),
        CHUNKINGS.len(),
        skipped.values().sum::<usize>()
    ));
    for (why, n) in &skipped {
        announce(&format!("  skipped {n}: {why}"));
    }
    announce(&format!("  column types checked: {types:?}"));
    assert!(checked > 0, "no sql fixture was checked");
    assert_eq!(checked + skipped.values().sum::<usize>(), files.len());
}

#[test]
fn java_double_text_matches_bigquery() {
    assert_eq!(java_double(1024.0), "1024.0");
    assert_eq!(java_double(1.5e10), "1.5E10");
    assert_eq!(java_double(1e10), "1.0E10");
    assert_eq!(java_double(1.7040672e9), "1.7040672E9");
    assert_eq!(java_double(0.0001), "1.0E-4");
    assert_eq!(java_double(-2.5), "-2.5");
}

#[test]
fn relativedelta_normalises_like_dateutil() {
    let r = RelDelta::from_interval(14, 3, (4 * 3600 + 5 * 60 + 6) * 1_000_000_000);
    assert_eq!(
        r.repr(),
        "relativedelta(years=+1, months=+2, days=+3, hours=+4, minutes=+5, seconds=+6)"
    );
    assert_eq!(
        RelDelta::from_interval(0, 0, 30 * 3600 * 1_000_000_000).repr(),
        "relativedelta(days=+1, hours=+6)"
    );
    assert_eq!(RelDelta::from_interval(0, 0, 0).repr(), "relativedelta()");
    let p = RelDelta::parse("relativedelta(months=+1, days=+11, hours=+6)");
    assert_eq!(p.to_rest(), "0-1 11 6:0:0");
    assert_eq!(
        RelDelta::from_interval(-14, -1, -1000).repr(),
        "relativedelta(years=-1, months=-2, days=-1, microseconds=-1)"
    );
}

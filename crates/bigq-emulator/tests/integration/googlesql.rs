//! GoogleSQL conformance: the cases in `tests/googlesql/*.jsonl`, run against an in-process
//! emulator over REST and compared with the results BigQuery documents.
//!
//! Each line of a case file is one case:
//!
//! ```json
//! {"name": "concat_null", "sql": "SELECT CONCAT(NULL, 'x') AS r",
//!  "schema": [{"name": "r", "type": "STRING"}], "rows": [[null]]}
//! {"name": "div_zero", "sql": "SELECT 1 / 0", "error": {"reason": "invalidQuery", "message": "division by zero"}}
//! ```
//!
//! - `schema`: the result's fields (`name`, `type` in either spelling, `mode`, nested
//!   `fields`); checked when given.
//! - `rows`: each row a list of values rendered as the Python client's values are in the
//!   recorded fixtures: INT64 as a JSON number, FLOAT64 as a number (or `"NaN"`, `"Infinity"`,
//!   `"-Infinity"`), NUMERIC as a string, BOOL as `true`/`false`, BYTES as base64, DATE, TIME,
//!   DATETIME and TIMESTAMP as ISO text (a TIMESTAMP in any offset), ARRAY as a list, STRUCT
//!   as an object, RANGE as `{"start": .., "end": ..}`, JSON as its text. FLOAT64 compares
//!   within 1e-9 relative, NUMERIC by value, JSON by value, GEOGRAPHY ignoring spacing.
//!   Rows compare in order when `ordered` is true, else as a multiset.
//! - `error`: the query must fail with this `reason` and a message containing `message`.
//! - `setup`: statements run first (a dataset `ds` exists); `params`: REST
//!   `queryParameters`, with `parameterMode` NAMED unless given.
//! - `xfail`: why the case does not pass yet. Such a case may fail; when it passes, the
//!   test says so (`scripts/mark-googlesql-xfail.py` unmarks it from the test's output).
//!
//! `BIGQ_GOOGLESQL_FILTER=substring` runs only the cases whose file or name contains it;
//! `BIGQ_GOOGLESQL_WHY=1` prints why each case marked `xfail` still fails;
//! `BIGQ_GOOGLESQL_REPORT=file.json` writes the cases and passes per source (function) there,
//! from which `scripts/googlesql-table.py` writes the emulator README's function table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bigq_emulator::Emulator;
use serde_json::{Value, json};

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    sql: String,
    #[serde(default)]
    setup: Vec<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    schema: Option<Vec<Field>>,
    #[serde(default)]
    rows: Option<Vec<Vec<Value>>>,
    #[serde(default)]
    ordered: bool,
    #[serde(default)]
    error: Option<ExpectedError>,
    #[serde(default)]
    xfail: Option<String>,
    /// Where the case comes from (a page of the function reference), for readers.
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedError {
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Clone, Debug, serde::Deserialize)]
struct Field {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    fields: Vec<Field>,
}

impl Field {
    fn repeated(&self) -> bool {
        self.mode
            .as_deref()
            .is_some_and(|m| m.eq_ignore_ascii_case("REPEATED"))
    }

    fn kind(&self) -> String {
        canon_type(&self.ty)
    }

    fn element(&self) -> Field {
        Field {
            mode: None,
            ..self.clone()
        }
    }

    fn describe(&self) -> String {
        let mut s = self.kind();
        if !self.fields.is_empty() {
            let inner: Vec<String> = self
                .fields
                .iter()
                .map(|f| format!("{} {}", f.name, f.describe()))
                .collect();
            s = format!("{s}<{}>", inner.join(", "));
        }
        if self.repeated() {
            format!("ARRAY<{s}>")
        } else {
            s
        }
    }
}

fn canon_type(t: &str) -> String {
    let t = t.to_ascii_uppercase();
    match t.as_str() {
        "INT64" => "INTEGER",
        "FLOAT64" => "FLOAT",
        "BOOL" => "BOOLEAN",
        "STRUCT" => "RECORD",
        "DECIMAL" => "NUMERIC",
        "BIGDECIMAL" => "BIGNUMERIC",
        other => other,
    }
    .to_string()
}

/// Words of errors that say the emulator lacks something, which do not stand for an error
/// a case expects without naming its message.
const UNSUPPORTED: [&str; 4] = [
    "Function not found",
    "bigq-emulator does not support",
    "Unsupported by bigq-emulator",
    "not implemented",
];

/// How long one case may take.
const CASE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What one case gave.
enum Outcome {
    Pass,
    Fail(String),
}

struct Runner {
    http: reqwest::Client,
    base: String,
}

impl Runner {
    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .expect("the emulator answers");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("the emulator answers");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// Runs `sql`: the schema and the rows (REST cells), or the error object.
    async fn query(
        &self,
        sql: &str,
        params: Option<&Value>,
    ) -> Result<(Vec<Field>, Vec<Value>), Value> {
        let mut body = json!({
            "query": sql,
            "useLegacySql": false,
            "defaultDataset": {"projectId": "p", "datasetId": "ds"},
            "formatOptions": {"useInt64Timestamp": true},
            "timeoutMs": 60000,
        });
        if let Some(p) = params {
            let list = match p {
                Value::Array(_) => p.clone(),
                _ => json!([]),
            };
            let positional = list
                .as_array()
                .is_some_and(|l| l.iter().all(|x| x.get("name").is_none()));
            body["parameterMode"] = json!(if positional { "POSITIONAL" } else { "NAMED" });
            body["queryParameters"] = list;
        }
        let (status, mut v) = self.post("/queries", body).await;
        if status >= 400 || v.get("error").is_some() {
            return Err(v.get("error").cloned().unwrap_or(v));
        }
        let job = v["jobReference"]["jobId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        while v["jobComplete"] == json!(false) {
            let (status, next) = self
                .get(&format!(
                    "/queries/{job}?timeoutMs=60000&formatOptions.useInt64Timestamp=true"
                ))
                .await;
            if status >= 400 {
                return Err(next.get("error").cloned().unwrap_or(next));
            }
            v = next;
        }
        if let Some(e) = v
            .get("errors")
            .filter(|e| e.as_array().is_some_and(|a| !a.is_empty()))
        {
            return Err(json!({"errors": e, "message": e[0]["message"]}));
        }
        let schema: Vec<Field> = match v["schema"]["fields"].clone() {
            Value::Null => Vec::new(),
            f => serde_json::from_value(f).expect("a schema"),
        };
        let mut rows: Vec<Value> = v["rows"].as_array().cloned().unwrap_or_default();
        let mut token = v["pageToken"].as_str().map(str::to_string);
        while let Some(t) = token {
            let (status, page) = self
                .get(&format!(
                    "/queries/{job}?pageToken={t}&formatOptions.useInt64Timestamp=true"
                ))
                .await;
            if status >= 400 {
                return Err(page.get("error").cloned().unwrap_or(page));
            }
            rows.extend(page["rows"].as_array().cloned().unwrap_or_default());
            token = page["pageToken"].as_str().map(str::to_string);
        }
        Ok((schema, rows))
    }

    async fn run(&self, case: &Case) -> Outcome {
        for stmt in &case.setup {
            if let Err(e) = self.query(stmt, None).await {
                return Outcome::Fail(format!("setup `{stmt}` failed: {e}"));
            }
        }
        let got = self.query(&case.sql, case.params.as_ref()).await;
        match (&case.error, got) {
            (Some(want), Err(e)) => {
                let reason = e["errors"][0]["reason"].as_str().unwrap_or_default();
                let message = e["message"].as_str().unwrap_or_default();
                if let Some(r) = &want.reason
                    && r != reason
                {
                    return Outcome::Fail(format!(
                        "error reason {reason:?} ({message}), want {r:?}"
                    ));
                }
                if let Some(m) = &want.message
                    && !message.contains(m.as_str())
                {
                    return Outcome::Fail(format!(
                        "error message {message:?}, want it to contain {m:?}"
                    ));
                }
                // A function or construct the emulator lacks is never the error BigQuery
                // documents, even where the case names no message.
                if want.message.is_none() && UNSUPPORTED.iter().any(|u| message.contains(u)) {
                    return Outcome::Fail(format!(
                        "error {message:?} is not the error BigQuery gives"
                    ));
                }
                Outcome::Pass
            }
            (Some(_), Ok((_, rows))) => Outcome::Fail(format!("no error; {} rows", rows.len())),
            (None, Err(e)) => Outcome::Fail(format!(
                "error: {}",
                e["message"].as_str().unwrap_or(&e.to_string())
            )),
            (None, Ok((schema, cells))) => self.compare(case, &schema, &cells),
        }
    }

    fn compare(&self, case: &Case, schema: &[Field], cells: &[Value]) -> Outcome {
        if let Some(want) = &case.schema {
            let a: Vec<String> = schema
                .iter()
                .map(|f| format!("{} {}", f.name, f.describe()))
                .collect();
            let b: Vec<String> = want
                .iter()
                .map(|f| format!("{} {}", f.name, f.describe()))
                .collect();
            if a != b {
                return Outcome::Fail(format!("schema {a:?}, want {b:?}"));
            }
        }
        let Some(want_rows) = &case.rows else {
            return Outcome::Pass;
        };
        let rows: Vec<Vec<Value>> = cells
            .iter()
            .map(|r| {
                r["f"]
                    .as_array()
                    .map(|cells| {
                        cells
                            .iter()
                            .zip(schema)
                            .map(|(c, f)| render(&c["v"], f))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        if rows.len() != want_rows.len() {
            return Outcome::Fail(format!(
                "{} rows, want {}: got {}",
                rows.len(),
                want_rows.len(),
                short(&rows)
            ));
        }
        let row_eq = |w: &Vec<Value>, g: &Vec<Value>| {
            w.len() == g.len()
                && w.iter()
                    .zip(g)
                    .zip(schema)
                    .all(|((w, g), f)| values_equal(w, g, f))
        };
        if case.ordered {
            for (i, (w, g)) in want_rows.iter().zip(&rows).enumerate() {
                if !row_eq(w, g) {
                    return Outcome::Fail(format!("row {i}: {}, want {}", short(g), short(w)));
                }
            }
        } else {
            let mut used = vec![false; rows.len()];
            for w in want_rows {
                match (0..rows.len()).find(|&i| !used[i] && row_eq(w, &rows[i])) {
                    Some(i) => used[i] = true,
                    None => {
                        return Outcome::Fail(format!(
                            "no row {} among {}",
                            short(w),
                            short(&rows)
                        ));
                    }
                }
            }
        }
        Outcome::Pass
    }
}

fn short(v: &impl serde::Serialize) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    if s.len() > 300 {
        format!("{}…", &s[..s.floor_char_boundary(300)])
    } else {
        s
    }
}

/// A REST cell as the recorded fixtures render the Python client's value.
fn render(v: &Value, f: &Field) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    if f.repeated() {
        let e = f.element();
        return Value::Array(
            v.as_array()
                .map(|a| a.iter().map(|x| render(&x["v"], &e)).collect())
                .unwrap_or_default(),
        );
    }
    let text = v.as_str().unwrap_or_default();
    match f.kind().as_str() {
        "RECORD" => {
            let mut out = serde_json::Map::new();
            if let Some(cells) = v["f"].as_array() {
                for (c, sub) in cells.iter().zip(&f.fields) {
                    out.insert(sub.name.clone(), render(&c["v"], sub));
                }
            }
            Value::Object(out)
        }
        "INTEGER" => text
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(text.to_string())),
        "FLOAT" => match text {
            "NaN" | "Infinity" | "-Infinity" => Value::String(text.to_string()),
            _ => text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .unwrap_or_else(|| Value::String(text.to_string())),
        },
        "BOOLEAN" => Value::Bool(text == "true"),
        "TIMESTAMP" => match text.parse::<i64>() {
            Ok(micros) => Value::String(iso_timestamp(micros)),
            Err(_) => Value::String(text.to_string()),
        },
        "RANGE" => {
            let inner = text.trim_start_matches('[').trim_end_matches(')');
            let (s, e) = inner.split_once(", ").unwrap_or((inner, ""));
            // A RANGE<TIMESTAMP> bound comes as microseconds since the epoch, as the
            // Python client reads it (with `formatOptions.useInt64Timestamp`).
            let bound = |b: &str| match b.parse::<i64>() {
                _ if b == "UNBOUNDED" => Value::Null,
                Ok(micros) => Value::String(iso_timestamp(micros)),
                Err(_) => Value::String(b.to_string()),
            };
            json!({"start": bound(s), "end": bound(e)})
        }
        _ => Value::String(text.to_string()),
    }
}

/// Microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`.
fn iso_timestamp(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let mut s = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if frac != 0 {
        s.push_str(&format!(".{frac:06}"));
    }
    s.push_str("+00:00");
    s
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD[ T]HH:MM:SS[.f*][Z|±HH[:MM]| UTC]` as microseconds (a DATETIME as UTC).
fn parse_datetime(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, rest) = s.split_at_checked(10)?;
    let mut it = date.split('-');
    let (y, m, d): (i64, i64, i64) = (
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
    );
    let days = days_from_civil(y, m, d);
    let rest = rest.trim_start_matches(['T', ' ']);
    if rest.is_empty() {
        return Some(days * 86_400_000_000);
    }
    let (clock, zone) = match rest.find(['+', '-', 'Z', ' ']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let micros = parse_time(clock)?;
    let zone = zone.trim();
    let offset = match zone {
        "" | "Z" | "UTC" | "+00" | "+00:00" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let z = &z[1..];
            let (h, m) = z
                .split_once(':')
                .unwrap_or((&z[..2.min(z.len())], &z[2.min(z.len())..]));
            let h: i64 = h.parse().ok()?;
            let m: i64 = if m.is_empty() { 0 } else { m.parse().ok()? };
            sign * (h * 3600 + m * 60) * 1_000_000
        }
    };
    Some(days * 86_400_000_000 + micros - offset)
}

/// `HH:MM:SS[.f*]` as microseconds since midnight.
fn parse_time(s: &str) -> Option<i64> {
    let mut it = s.split(':');
    let h: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let sec = it.next().unwrap_or("0");
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let whole: i64 = whole.parse().ok()?;
    let mut f = frac.to_string();
    f.truncate(6);
    while f.len() < 6 {
        f.push('0');
    }
    let f: i64 = f.parse().ok()?;
    Some(((h * 60 + m) * 60 + whole) * 1_000_000 + f)
}

/// A decimal's text without insignificant zeros, for comparing by value.
fn decimal_key(s: &str) -> Option<String> {
    let s = s.trim();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        || (int.is_empty() && frac.is_empty())
    {
        return None;
    }
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let body = match (int.is_empty(), frac.is_empty()) {
        (true, true) => return Some("0".to_string()),
        (_, true) => int.to_string(),
        (true, false) => format!("0.{frac}"),
        (false, false) => format!("{int}.{frac}"),
    };
    Some(if neg { format!("-{body}") } else { body })
}

fn float_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "nan" | "+nan" | "-nan" => Some(f64::NAN),
            "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            t => t.parse().ok(),
        },
        _ => None,
    }
}

fn floats_equal(a: f64, b: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= f64::max(1e-9 * f64::max(a.abs(), b.abs()), 1e-12)
}

fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => floats_equal(
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            ),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// One expected value against one rendered value of `f`, as leniently as the recorded
/// fixtures' checker compares them.
fn values_equal(want: &Value, got: &Value, f: &Field) -> bool {
    if want.is_null() || got.is_null() {
        return want.is_null() && got.is_null();
    }
    if f.repeated() {
        let e = f.element();
        return match (want.as_array(), got.as_array()) {
            (Some(w), Some(g)) => {
                w.len() == g.len() && w.iter().zip(g).all(|(w, g)| values_equal(w, g, &e))
            }
            _ => false,
        };
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match f.kind().as_str() {
        "RECORD" => match (want.as_object(), got.as_object()) {
            (Some(w), Some(g)) => {
                w.len() == g.len()
                    && f.fields.iter().all(|sub| {
                        values_equal(
                            w.get(&sub.name).unwrap_or(&Value::Null),
                            g.get(&sub.name).unwrap_or(&Value::Null),
                            sub,
                        )
                    })
            }
            _ => false,
        },
        "INTEGER" => match (want, got) {
            (Value::Number(w), Value::Number(g)) => w.as_i64() == g.as_i64(),
            (w, g) => text(w) == text(g),
        },
        "FLOAT" => match (float_of(want), float_of(got)) {
            (Some(w), Some(g)) => floats_equal(w, g),
            _ => false,
        },
        "NUMERIC" | "BIGNUMERIC" => {
            decimal_key(&text(want)).is_some()
                && decimal_key(&text(want)) == decimal_key(&text(got))
        }
        "TIMESTAMP" | "DATETIME" => {
            let (w, g) = (text(want), text(got));
            w == g || (parse_datetime(&w).is_some() && parse_datetime(&w) == parse_datetime(&g))
        }
        "TIME" => {
            let (w, g) = (text(want), text(got));
            w == g || (parse_time(&w).is_some() && parse_time(&w) == parse_time(&g))
        }
        "JSON" => {
            let (w, g) = (text(want), text(got));
            w == g
                || match (
                    serde_json::from_str::<Value>(&w),
                    serde_json::from_str::<Value>(&g),
                ) {
                    (Ok(w), Ok(g)) => json_equal(&w, &g),
                    _ => false,
                }
        }
        "GEOGRAPHY" => {
            let norm = |s: String| {
                let s = s.trim().to_ascii_uppercase();
                let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
                s.replace(" (", "(")
                    .replace("( ", "(")
                    .replace(" )", ")")
                    .replace(", ", ",")
                    .replace(" ,", ",")
            };
            norm(text(want)) == norm(text(got))
        }
        "RANGE" => match (want.as_object(), got.as_object()) {
            (Some(w), Some(g)) => ["start", "end"].iter().all(|k| {
                let (w, g) = (
                    w.get(*k).unwrap_or(&Value::Null),
                    g.get(*k).unwrap_or(&Value::Null),
                );
                if w.is_null() || g.is_null() {
                    return w.is_null() && g.is_null();
                }
                let (w, g) = (text(w), text(g));
                w == g || (parse_datetime(&w).is_some() && parse_datetime(&w) == parse_datetime(&g))
            }),
            _ => false,
        },
        "BOOLEAN" => want == got,
        _ => text(want) == text(got),
    }
}

fn case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/googlesql");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

fn load(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).expect("read a case file");
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn googlesql_cases_match_bigquery() {
    let filter = std::env::var("BIGQ_GOOGLESQL_FILTER").unwrap_or_default();
    let emu = Emulator::builder()
        .with_project("p")
        .start()
        .await
        .expect("start");
    let runner = Runner {
        http: reqwest::Client::new(),
        base: format!("{}/bigquery/v2/projects/p", emu.rest_endpoint()),
    };
    let (status, v) = runner
        .post(
            "/datasets",
            json!({"datasetReference": {"projectId": "p", "datasetId": "ds"}}),
        )
        .await;
    assert!(status < 400, "{v}");

    let mut failures = Vec::new();
    let mut report: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    // Cases and passes by (file, source), for the emulator README's function table.
    let mut by_topic: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for path in case_files() {
        let family = path.file_stem().unwrap().to_string_lossy().to_string();
        let cases = load(&path);
        let started = std::time::Instant::now();
        let mut names = std::collections::HashSet::new();
        for case in &cases {
            assert!(
                names.insert(case.name.clone()),
                "{family}: two cases named {}",
                case.name
            );
            assert!(
                case.error.is_some() || case.rows.is_some(),
                "{family}/{}: a case expects rows or an error",
                case.name
            );
            if !filter.is_empty() && !family.contains(&filter) && !case.name.contains(&filter) {
                continue;
            }
            let entry = report.entry(family.clone()).or_default();
            entry.0 += 1;
            let outcome = match tokio::time::timeout(CASE_TIMEOUT, runner.run(case)).await {
                Ok(o) => o,
                Err(_) => Outcome::Fail(format!("no answer in {CASE_TIMEOUT:?}")),
            };
            let passed = matches!(outcome, Outcome::Pass);
            let topic = by_topic
                .entry((family.clone(), case.source.clone().unwrap_or_default()))
                .or_insert((0, 0));
            topic.0 += 1;
            topic.1 += usize::from(passed);
            match (outcome, &case.xfail) {
                (Outcome::Pass, None) => entry.1 += 1,
                (Outcome::Fail(why), None) => {
                    failures.push(format!("{family}/{}: {why}\n    {}", case.name, case.sql))
                }
                (Outcome::Fail(why), Some(_)) => {
                    entry.2 += 1;
                    if std::env::var_os("BIGQ_GOOGLESQL_WHY").is_some() {
                        eprintln!("{family}/{}: fails as marked: {why}", case.name);
                    }
                }
                (Outcome::Pass, Some(x)) => {
                    // Reported, not failed: a case whose result depends on an order the
                    // emulator does not fix yet can pass by chance.
                    entry.1 += 1;
                    eprintln!(
                        "{family}/{}: passes now, but is marked xfail ({x}); unmark it",
                        case.name
                    );
                }
            }
        }
        eprintln!("googlesql {family}: ran in {:.1?}", started.elapsed());
    }
    let (mut all, mut pass, mut xfail) = (0, 0, 0);
    for (family, (n, p, x)) in &report {
        eprintln!("googlesql {family}: {p}/{n} pass, {x} expected to fail");
        all += n;
        pass += p;
        xfail += x;
    }
    eprintln!("googlesql: {pass}/{all} cases pass, {xfail} expected to fail");
    if let Ok(path) = std::env::var("BIGQ_GOOGLESQL_REPORT") {
        let rows: Vec<Value> = by_topic
            .iter()
            .map(|((file, source), (n, p))| {
                json!({"file": file, "source": source, "cases": n, "pass": p})
            })
            .collect();
        std::fs::write(&path, serde_json::to_string_pretty(&rows).unwrap())
            .unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    assert!(
        failures.is_empty(),
        "{} GoogleSQL cases fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    emu.shutdown().await;
}

#[test]
fn the_comparison_is_as_lenient_as_the_fixture_checker_and_no_more() {
    let f = |ty: &str| Field {
        name: "x".into(),
        ty: ty.into(),
        mode: None,
        fields: vec![],
    };
    assert!(values_equal(
        &json!(0.1),
        &json!(0.1000000000001),
        &f("FLOAT64")
    ));
    assert!(!values_equal(&json!(0.1), &json!(0.1001), &f("FLOAT64")));
    assert!(values_equal(&json!("NaN"), &json!("NaN"), &f("FLOAT64")));
    assert!(values_equal(&json!("1.50"), &json!("1.5"), &f("NUMERIC")));
    assert!(!values_equal(&json!("1.5"), &json!("1.05"), &f("NUMERIC")));
    assert!(values_equal(
        &json!("2008-12-25 15:30:00+00"),
        &json!("2008-12-25T15:30:00+00:00"),
        &f("TIMESTAMP")
    ));
    assert!(values_equal(
        &json!("2008-12-25T07:30:00-08:00"),
        &json!("2008-12-25T15:30:00+00:00"),
        &f("TIMESTAMP")
    ));
    assert!(!values_equal(
        &json!("2008-12-25T15:30:01Z"),
        &json!("2008-12-25T15:30:00+00:00"),
        &f("TIMESTAMP")
    ));
    assert!(values_equal(
        &json!(r#"{"a": 1}"#),
        &json!(r#"{"a":1}"#),
        &f("JSON")
    ));
    assert!(values_equal(
        &json!("POINT(1 2)"),
        &json!("POINT (1 2)"),
        &f("GEOGRAPHY")
    ));
    assert!(!values_equal(&json!(1), &json!(null), &f("INT64")));
    assert!(!values_equal(&json!(true), &json!(false), &f("BOOL")));
    assert_eq!(iso_timestamp(1_500_000), "1970-01-01T00:00:01.500000+00:00");
    assert_eq!(iso_timestamp(-1), "1969-12-31T23:59:59.999999+00:00");
    assert_eq!(
        parse_datetime("9999-12-31 23:59:59.999999"),
        Some(253_402_300_799_999_999)
    );
}

//! Replays the recorded BigQuery REST exchanges (`http/jobs` of the recordings beside the
//! repository, or `$BIGQ_RECORDINGS`) against the emulator: same HTTP status, and every
//! recorded key present with the recorded value (`"<*>"` marks server-chosen values,
//! which must be present).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bigq_emulator::Emulator;
use serde_json::Value;

/// Fixtures for features the emulator does not have yet (load/extract/upload jobs,
/// insertId de-duplication, template tables).
const NOT_YET: &[&str] = &[
    "load_",
    "extract_",
    "export_",
    "upload_",
    "insertall_insert_id_dedup",
    "insertall_template_suffix",
];

fn recordings_dir() -> PathBuf {
    match std::env::var_os("BIGQ_RECORDINGS") {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bigquery-recordings")
        }
    }
}

fn substitute(s: &str, vars: &HashMap<String, String>) -> String {
    let mut out = s.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    out
}

fn substitute_json(v: &Value, vars: &HashMap<String, String>) -> Value {
    match v {
        Value::String(s) => Value::String(substitute(s, vars)),
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute_json(x, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), substitute_json(x, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether `actual` holds everything `expected` records; the first difference otherwise.
fn subset(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::String(s), a) if s == "<*>" => {
            if a.is_null() {
                Err(format!("{path}: missing"))
            } else {
                Ok(())
            }
        }
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let av = a.get(k).ok_or_else(|| format!("{path}.{k}: missing"))?;
                subset(ev, av, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!("{path}: {} items, want {}", a.len(), e.len()));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                subset(ev, av, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{path}: got {a}, want {e}")),
    }
}

fn pointer(v: &Value, dotted: &str) -> Option<String> {
    let mut cur = v;
    for part in dotted.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

async fn send(http: &reqwest::Client, base: &str, req: &Value) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(req["method"].as_str().unwrap_or("GET").as_bytes())
        .expect("method");
    let url = format!("{base}{}", req["path"].as_str().unwrap_or(""));
    let mut rb = http.request(method, url);
    if let Some(b) = req.get("body") {
        rb = rb.json(b);
    }
    let resp = rb.send().await.expect("send");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn replay(
    dir: &Path,
    emu: &Emulator,
    http: &reqwest::Client,
    n: usize,
) -> Result<(), String> {
    let base = emu.rest_endpoint();
    let project = emu.project().to_string();
    let dataset = format!("rec_{n}");
    let mut vars = HashMap::from([
        ("PROJECT".to_string(), project.clone()),
        ("DATASET_ID".to_string(), dataset.clone()),
        ("DATASET".to_string(), format!("{project}.{dataset}")),
    ]);
    let create = serde_json::json!({
        "method": "POST",
        "path": format!("/bigquery/v2/projects/{project}/datasets"),
        "body": {"datasetReference": {"datasetId": dataset}},
    });
    send(http, &base, &create).await;
    // The recordings ran in projects that had run jobs before (job_list_in_project pages).
    let earlier = serde_json::json!({
        "method": "POST",
        "path": format!("/bigquery/v2/projects/{project}/queries"),
        "body": {"query": "SELECT 0 AS earlier", "useLegacySql": false},
    });
    send(http, &base, &earlier).await;
    if let Ok(sql) = std::fs::read_to_string(dir.join("setup.sql")) {
        let req = serde_json::json!({
            "method": "POST",
            "path": format!("/bigquery/v2/projects/{project}/queries"),
            "body": {"query": substitute(&sql, &vars), "useLegacySql": false},
        });
        let (status, body) = send(http, &base, &req).await;
        if status != 200 {
            return Err(format!("setup.sql: {status} {body}"));
        }
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("setup_requests.json")) {
        let steps: Vec<Value> = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        for step in steps {
            let req = substitute_json(&step, &vars);
            let (status, body) = send(http, &base, &req).await;
            if status >= 300 {
                return Err(format!("setup request {}: {status} {body}", req["path"]));
            }
            if let Some(cap) = step.get("capture").and_then(Value::as_object) {
                for (k, p) in cap {
                    let v = pointer(&body, p.as_str().unwrap_or(""))
                        .ok_or_else(|| format!("capture {k}: no {p} in {body}"))?;
                    vars.insert(k.clone(), v);
                }
            }
        }
    }
    let req: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("request.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let req = substitute_json(&req, &vars);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected_response.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let (status, body) = send(http, &base, &req).await;
    if Some(status as u64) != expected["http_status"].as_u64() {
        return Err(format!(
            "status {status}, want {}: {body}",
            expected["http_status"]
        ));
    }
    subset(&expected["body"], &body, "body")
}

#[tokio::test]
async fn recorded_rest_exchanges_match() {
    let root = recordings_dir().join("http/jobs");
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(&root) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect(),
        Err(e) => panic!(
            "no recordings at {} ({e}); set BIGQ_RECORDINGS to the bigquery-recordings folder",
            root.display()
        ),
    };
    dirs.sort();
    let http = reqwest::Client::new();
    let mut failures = Vec::new();
    let mut ran = 0;
    for (n, dir) in dirs.iter().enumerate() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if NOT_YET.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        ran += 1;
        // A fresh emulator each, as each recording ran in a fresh project state.
        let emu = Emulator::builder()
            .with_project("test-project")
            .start()
            .await
            .expect("start");
        if let Err(e) = replay(dir, &emu, &http, n).await {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(ran >= 20, "only {ran} fixtures ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

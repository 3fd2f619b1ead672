//! Load jobs from `gs://` URIs served from a directory: CSV options, NDJSON, Parquet,
//! schemas given or detected, dispositions, bad records and the load statistics.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bigq_emulator::Emulator;
use datafusion::arrow::array::{Float64Array, Int64Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use serde_json::{Value, json};

use crate::common::{Rest, cells};

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Dir {
    fn new() -> Dir {
        Dir(std::env::temp_dir().join(format!("bigq-emulator-gcs-{}", uuid::Uuid::new_v4())))
    }

    /// Writes `gs://b/{name}`.
    fn put(&self, name: &str, bytes: impl AsRef<[u8]>) {
        let p = self.0.join("b").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

async fn start(dir: &Path) -> (Emulator, Rest) {
    let emu = Emulator::builder()
        .with_project("p")
        .with_gcs_dir(dir)
        .start()
        .await
        .expect("start");
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    (emu, rest)
}

/// Inserts a load job with `load` as its configuration; the job resource.
async fn load(rest: &Rest, load: Value) -> Value {
    let job = rest
        .post_ok("/jobs", json!({"configuration": {"load": load}}))
        .await;
    assert_eq!(job["status"]["state"], "DONE", "{job}");
    job
}

fn dest(table: &str) -> Value {
    json!({"projectId": "p", "datasetId": "d", "tableId": table})
}

fn schema(fields: &[(&str, &str)]) -> Value {
    json!({"fields": fields.iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>()})
}

#[tokio::test]
async fn csv_options_are_read_as_bigquery_reads_them() {
    let dir = Dir::new();
    dir.put(
        "x.csv",
        "id;name;score\n1;\"a;b\";1.5\n2;\\N;\\N\n3;\"say \"\"hi\"\"\";2\n",
    );
    let (_emu, rest) = start(&dir.0).await;
    let job = load(
        &rest,
        json!({
            "sourceUris": ["gs://b/x.csv"],
            "destinationTable": dest("t"),
            "schema": schema(&[("id", "INTEGER"), ("name", "STRING"), ("score", "FLOAT")]),
            "fieldDelimiter": ";",
            "skipLeadingRows": 1,
            "nullMarker": "\\N",
        }),
    )
    .await;
    assert!(job["status"].get("errorResult").is_none(), "{job}");
    let l = &job["statistics"]["load"];
    assert_eq!(l["inputFiles"], "1");
    assert_eq!(l["outputRows"], "3");
    assert_eq!(l["badRecords"], "0");
    assert_eq!(job["configuration"]["jobType"], "LOAD");
    assert_eq!(
        job["configuration"]["load"]["writeDisposition"],
        "WRITE_APPEND"
    );
    let v = rest
        .query("SELECT id, name, score FROM d.t ORDER BY id")
        .await;
    assert_eq!(
        cells(&v),
        vec![
            vec![json!("1"), json!("a;b"), json!("1.5")],
            vec![json!("2"), Value::Null, Value::Null],
            vec![json!("3"), json!("say \"hi\""), json!("2.0")],
        ]
    );
}

#[tokio::test]
async fn a_bad_csv_row_is_named_by_line_and_column() {
    let dir = Dir::new();
    dir.put("bad.csv", "1,a\n2,b\nx,c\n4,d\n");
    let (_emu, rest) = start(&dir.0).await;
    let cfg = |max: u64, table: &str| {
        json!({
            "sourceUris": ["gs://b/bad.csv"],
            "destinationTable": dest(table),
            "schema": schema(&[("id", "INTEGER"), ("name", "STRING")]),
            "maxBadRecords": max,
        })
    };
    let job = load(&rest, cfg(0, "strict")).await;
    let e = &job["status"]["errorResult"];
    assert_eq!(e["reason"], "invalid", "{job}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("CSV table encountered too many errors"),
        "{msg}"
    );
    assert!(msg.contains("Row: 3"), "{msg}");
    assert!(
        msg.contains("Could not parse 'x' as INT64 for field id (position 0)"),
        "{msg}"
    );
    // Nothing was written.
    assert_eq!(rest.get_status("/datasets/d/tables/strict").await, 404);

    let job = load(&rest, cfg(1, "lenient")).await;
    assert!(job["status"].get("errorResult").is_none(), "{job}");
    assert_eq!(job["statistics"]["load"]["badRecords"], "1");
    assert_eq!(job["statistics"]["load"]["outputRows"], "3");
    let errors = job["status"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{job}");
    let m = errors[0]["message"].as_str().unwrap();
    assert!(m.contains("line_number: 3"), "{m}");
    assert!(m.contains("column_name: \"id\""), "{m}");
    let v = rest.query("SELECT COUNT(*) FROM d.lenient").await;
    assert_eq!(cells(&v), vec![vec![json!("3")]]);
}

#[tokio::test]
async fn jagged_rows_quoted_newlines_and_latin1() {
    let dir = Dir::new();
    dir.put("j.csv", "1,a,x\n2\n");
    dir.put("q.csv", "1,\"two\nlines\"\n");
    dir.put("l.csv", b"1,caf\xe9\n".as_slice());
    let (_emu, rest) = start(&dir.0).await;
    let three = schema(&[("id", "INTEGER"), ("a", "STRING"), ("b", "STRING")]);
    let two = schema(&[("id", "INTEGER"), ("a", "STRING")]);
    let job = load(
        &rest,
        json!({"sourceUris": ["gs://b/j.csv"], "destinationTable": dest("j1"), "schema": three}),
    )
    .await;
    let msg = job["status"]["errorResult"]["message"].as_str().unwrap();
    assert!(msg.contains("Row: 2"), "{msg}");
    load(
        &rest,
        json!({"sourceUris": ["gs://b/j.csv"], "destinationTable": dest("j2"), "schema": three, "allowJaggedRows": true}),
    )
    .await;
    let v = rest.query("SELECT id, a, b FROM d.j2 ORDER BY id").await;
    assert_eq!(
        cells(&v),
        vec![
            vec![json!("1"), json!("a"), json!("x")],
            vec![json!("2"), Value::Null, Value::Null]
        ]
    );
    let job = load(
        &rest,
        json!({"sourceUris": ["gs://b/q.csv"], "destinationTable": dest("q1"), "schema": two}),
    )
    .await;
    assert!(job["status"].get("errorResult").is_some(), "{job}");
    load(
        &rest,
        json!({"sourceUris": ["gs://b/q.csv"], "destinationTable": dest("q2"), "schema": two, "allowQuotedNewlines": true}),
    )
    .await;
    let v = rest.query("SELECT a FROM d.q2").await;
    assert_eq!(cells(&v), vec![vec![json!("two\nlines")]]);
    load(
        &rest,
        json!({"sourceUris": ["gs://b/l.csv"], "destinationTable": dest("l"), "schema": two, "encoding": "ISO-8859-1"}),
    )
    .await;
    let v = rest.query("SELECT a FROM d.l").await;
    assert_eq!(cells(&v), vec![vec![json!("café")]]);
}

#[tokio::test]
async fn wildcards_and_dispositions() {
    let dir = Dir::new();
    dir.put("part/a-1.csv", "1\n2\n");
    dir.put("part/a-2.csv", "3\n");
    dir.put("part/other.txt", "not,a,number\n");
    let (_emu, rest) = start(&dir.0).await;
    let cfg = |extra: Value| {
        let mut c = json!({
            "sourceUris": ["gs://b/part/a-*.csv"],
            "destinationTable": dest("w"),
            "schema": schema(&[("n", "INTEGER")]),
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let job = load(&rest, cfg(json!({"createDisposition": "CREATE_NEVER"}))).await;
    assert_eq!(job["status"]["errorResult"]["reason"], "notFound", "{job}");
    let job = load(&rest, cfg(json!({}))).await;
    assert_eq!(job["statistics"]["load"]["inputFiles"], "2", "{job}");
    assert_eq!(job["statistics"]["load"]["inputFileBytes"], "6");
    load(&rest, cfg(json!({}))).await;
    let v = rest.query("SELECT COUNT(*), SUM(n) FROM d.w").await;
    assert_eq!(cells(&v), vec![vec![json!("6"), json!("12")]]);
    load(&rest, cfg(json!({"writeDisposition": "WRITE_TRUNCATE"}))).await;
    let v = rest.query("SELECT COUNT(*) FROM d.w").await;
    assert_eq!(cells(&v), vec![vec![json!("3")]]);
    let job = load(&rest, cfg(json!({"writeDisposition": "WRITE_EMPTY"}))).await;
    assert_eq!(job["status"]["errorResult"]["reason"], "duplicate", "{job}");
    let job = load(&rest, cfg(json!({"schema": schema(&[("n", "STRING")])}))).await;
    let msg = job["status"]["errorResult"]["message"].as_str().unwrap();
    assert!(
        msg.contains("Provided Schema does not match Table p:d.w"),
        "{msg}"
    );
    let job = load(&rest, cfg(json!({"sourceUris": ["gs://b/none-*.csv"]}))).await;
    assert_eq!(job["status"]["errorResult"]["reason"], "notFound", "{job}");
    assert!(
        job["status"]["errorResult"]["message"]
            .as_str()
            .unwrap()
            .contains("gs://b/none-*.csv")
    );
}

#[tokio::test]
async fn autodetect_csv_and_ndjson() {
    let dir = Dir::new();
    dir.put("h.csv", "id,name,day\n1,a,2024-01-02\n2,b,2024-01-03\n");
    dir.put(
        "r.json",
        "{\"id\": 1, \"tags\": [\"x\", \"y\"], \"who\": {\"name\": \"a\"}}\n\n{\"id\": 2, \"tags\": [], \"who\": {\"name\": \"b\"}}\n",
    );
    let (_emu, rest) = start(&dir.0).await;
    load(
        &rest,
        json!({"sourceUris": ["gs://b/h.csv"], "destinationTable": dest("h"), "autodetect": true}),
    )
    .await;
    let t = rest.get("/datasets/d/tables/h").await;
    let f = &t["schema"]["fields"];
    assert_eq!(f[0]["name"], "id");
    assert_eq!(f[0]["type"], "INTEGER");
    assert_eq!(f[2]["name"], "day");
    assert_eq!(f[2]["type"], "DATE");
    let v = rest
        .query("SELECT name FROM d.h WHERE day = '2024-01-03'")
        .await;
    assert_eq!(cells(&v), vec![vec![json!("b")]]);

    load(
        &rest,
        json!({"sourceUris": ["gs://b/r.json"], "destinationTable": dest("r"), "autodetect": true,
               "sourceFormat": "NEWLINE_DELIMITED_JSON"}),
    )
    .await;
    let v = rest
        .query("SELECT id, ARRAY_LENGTH(tags), who.name FROM d.r ORDER BY id")
        .await;
    assert_eq!(
        cells(&v),
        vec![
            vec![json!("1"), json!("2"), json!("a")],
            vec![json!("2"), json!("0"), json!("b")]
        ]
    );
    // Without a schema and without autodetect there is nothing to read the rows into.
    let job = load(
        &rest,
        json!({"sourceUris": ["gs://b/r.json"], "destinationTable": dest("none"),
               "sourceFormat": "NEWLINE_DELIMITED_JSON"}),
    )
    .await;
    assert_eq!(
        job["status"]["errorResult"]["message"],
        "No schema specified on job or table."
    );
    // An unknown field is a bad record unless ignoreUnknownValues.
    let job = load(
        &rest,
        json!({"sourceUris": ["gs://b/r.json"], "destinationTable": dest("r"),
               "sourceFormat": "NEWLINE_DELIMITED_JSON",
               "schema": {"fields": [{"name": "id", "type": "INTEGER"}]}}),
    )
    .await;
    let msg = job["status"]["errorResult"]["message"].as_str().unwrap();
    assert!(
        msg.contains("JSON table encountered too many errors"),
        "{msg}"
    );
    assert!(msg.contains("No such field: tags"), "{msg}");
}

#[tokio::test]
async fn parquet_files_carry_their_schema() {
    let dir = Dir::new();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![Some("a"), None])),
            Arc::new(Float64Array::from(vec![0.5, 1.5])),
        ],
    )
    .unwrap();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    dir.put("p.parquet", &buf);
    let (_emu, rest) = start(&dir.0).await;
    let job = load(
        &rest,
        json!({"sourceUris": ["gs://b/p.parquet"], "destinationTable": dest("pq"), "sourceFormat": "PARQUET"}),
    )
    .await;
    assert_eq!(job["statistics"]["load"]["outputRows"], "2", "{job}");
    let t = rest.get("/datasets/d/tables/pq").await;
    assert_eq!(t["schema"]["fields"][0]["mode"], "REQUIRED");
    let v = rest
        .query("SELECT id, name, score FROM d.pq ORDER BY id")
        .await;
    assert_eq!(
        cells(&v),
        vec![
            vec![json!("1"), json!("a"), json!("0.5")],
            vec![json!("2"), Value::Null, json!("1.5")]
        ]
    );
    // Appended to the table it made, matched by name.
    load(
        &rest,
        json!({"sourceUris": ["gs://b/p.parquet"], "destinationTable": dest("pq"), "sourceFormat": "PARQUET"}),
    )
    .await;
    let v = rest.query("SELECT COUNT(*) FROM d.pq").await;
    assert_eq!(cells(&v), vec![vec![json!("4")]]);
}

#[tokio::test]
async fn gs_uris_without_a_directory_are_a_clear_error() {
    let emu = Emulator::builder().with_project("p").start().await.unwrap();
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    let job = load(
        &rest,
        json!({"sourceUris": ["gs://b/x.csv"], "destinationTable": dest("t"),
               "schema": schema(&[("n", "INTEGER")])}),
    )
    .await;
    let msg = job["status"]["errorResult"]["message"].as_str().unwrap();
    assert!(msg.contains("--gcs-dir"), "{msg}");
}

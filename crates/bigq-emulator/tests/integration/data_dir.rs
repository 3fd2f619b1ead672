//! `with_data_dir` / `--data-dir`: datasets, tables and rows written through SQL, the REST
//! API and the Storage Write API survive a restart on the same directory; DROP TABLE and
//! DML rewrites leave no stale rows behind.

use std::path::{Path, PathBuf};

use bigq_codec::proto::{RowEncoder, WriteSchema};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq_emulator::Emulator;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    AppendRowsRequest, BatchCommitWriteStreamsRequest, CreateWriteStreamRequest,
    FinalizeWriteStreamRequest, ProtoRows, ProtoSchema, WriteStream, append_rows_request,
    append_rows_response, big_query_write_client::BigQueryWriteClient, write_stream,
};
use serde_json::{Value, json};
use tonic::transport::Channel;

use crate::common;

use common::Rest;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> Dir {
    Dir(std::env::temp_dir().join(format!("bigq-emulator-data-{}", uuid::Uuid::new_v4())))
}

async fn start(dir: &Path) -> Emulator {
    Emulator::builder()
        .with_project("p")
        .with_data_dir(dir)
        .start()
        .await
        .expect("start")
}

async fn query(emu: &Emulator, sql: &str) -> Value {
    Rest::new(emu).query(sql).await
}

/// The rows of a query as strings (NULL as "NULL").
async fn rows(emu: &Emulator, sql: &str) -> Vec<Vec<String>> {
    let v = query(emu, sql).await;
    v["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r["f"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c["v"].as_str().unwrap_or("NULL").to_string())
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn write_schema() -> std::sync::Arc<WriteSchema> {
    WriteSchema::new(&TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("name", FieldType::String),
        TableFieldSchema::new("amount", FieldType::Numeric),
    ]))
    .unwrap()
}

/// Appends rows `ids` on `stream` (one request) and checks the answer.
async fn append(rpc: &mut BigQueryWriteClient<Channel>, stream: &str, ids: &[i64]) {
    let schema = write_schema();
    let rows: Vec<Value> = ids
        .iter()
        .map(|i| json!({"id": i, "name": format!("w{i}"), "amount": format!("{i}.25")}))
        .collect();
    let serialized_rows = RowEncoder::new(schema.clone()).encode_rows(&rows).unwrap();
    let req = AppendRowsRequest {
        write_stream: stream.into(),
        rows: Some(append_rows_request::Rows::ProtoRows(
            append_rows_request::ProtoData {
                writer_schema: Some(ProtoSchema {
                    proto_descriptor: Some(schema.descriptor().clone()),
                }),
                rows: Some(ProtoRows { serialized_rows }),
            },
        )),
        ..Default::default()
    };
    let mut call = rpc
        .append_rows(futures::stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let r = call.message().await.unwrap().unwrap();
    assert!(
        matches!(
            r.response,
            Some(append_rows_response::Response::AppendResult(_))
        ),
        "{r:?}"
    );
}

#[tokio::test]
async fn tables_and_rows_survive_a_restart() {
    let dir = temp_dir();
    let emu = start(&dir.0).await;
    Rest::new(&emu)
        .post_ok(
            "/datasets",
            json!({"datasetReference": {"datasetId": "ds"}, "description": "kept"}),
        )
        .await;
    query(
        &emu,
        "CREATE TABLE ds.t (id INT64 NOT NULL, name STRING, amount NUMERIC)",
    )
    .await;
    query(&emu, "CREATE TABLE ds.gone (x INT64)").await;
    query(&emu, "INSERT INTO ds.gone (x) VALUES (1)").await;
    query(
        &emu,
        "INSERT INTO ds.t (id, name, amount) VALUES (1, 'one', 1.5), (2, NULL, NULL)",
    )
    .await;
    // Storage Write: the _default stream, and a PENDING stream committed.
    let mut rpc = BigQueryWriteClient::new(common::channel(&emu).await);
    let table = "projects/p/datasets/ds/tables/t";
    append(&mut rpc, &format!("{table}/streams/_default"), &[10, 11]).await;
    let pending = rpc
        .create_write_stream(CreateWriteStreamRequest {
            parent: table.into(),
            write_stream: Some(WriteStream {
                r#type: write_stream::Type::Pending as i32,
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    append(&mut rpc, &pending.name, &[20, 21, 22]).await;
    rpc.finalize_write_stream(FinalizeWriteStreamRequest {
        name: pending.name.clone(),
    })
    .await
    .unwrap();
    let commit = rpc
        .batch_commit_write_streams(BatchCommitWriteStreamsRequest {
            parent: table.into(),
            write_streams: vec![pending.name.clone()],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(commit.stream_errors.is_empty());
    // A rewrite of existing rows.
    query(&emu, "UPDATE ds.t SET name = 'uno' WHERE id = 1").await;
    append(&mut rpc, &format!("{table}/streams/_default"), &[30]).await;
    let sql = "SELECT id, name, amount FROM ds.t ORDER BY id";
    let before = rows(&emu, sql).await;
    assert_eq!(before.len(), 8);
    assert_eq!(before[0], ["1", "uno", "1.5"]);
    assert_eq!(before[7], ["30", "w30", "30.25"]);
    // On disk: the UPDATE started generation 1 (the whole table), the append after it
    // added a segment; generation 0 is gone.
    let mut files: Vec<String> = std::fs::read_dir(dir.0.join("tables/p/ds/t"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["00000001-00000000.arrows", "00000001-00000001.arrows"]
    );
    drop(rpc);
    emu.shutdown().await;

    let emu = start(&dir.0).await;
    assert_eq!(rows(&emu, sql).await, before);
    assert_eq!(rows(&emu, "SELECT x FROM ds.gone").await, [["1"]]);
    let ds = Rest::new(&emu).get("/datasets/ds").await;
    assert_eq!(ds["description"], "kept", "{ds}");
    let t = Rest::new(&emu).get("/datasets/ds/tables/t").await;
    assert_eq!(t["schema"]["fields"][0]["mode"], "REQUIRED", "{t}");
    assert_eq!(t["numRows"], "8", "{t}");

    // DROP TABLE removes the rows from the directory too; more rows after a restart are
    // added to what was loaded.
    query(&emu, "DROP TABLE ds.gone").await;
    let gone = dir.0.join("tables").join("p").join("ds").join("gone");
    assert!(!gone.exists(), "{}", gone.display());
    query(&emu, "INSERT INTO ds.t (id) VALUES (40)").await;
    drop(emu); // stopping by drop keeps the data too

    let emu = start(&dir.0).await;
    let v = query(&emu, "SELECT COUNT(*) FROM ds.t").await;
    assert_eq!(v["rows"][0]["f"][0]["v"], "9");
    let err = Rest::new(&emu)
        .post(
            "/queries",
            json!({"query": "SELECT x FROM ds.gone", "useLegacySql": false}),
        )
        .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("gone")),
        "{err}"
    );
    emu.shutdown().await;
}

/// A routine made by DDL is kept, and callable after a restart; a dropped one stays gone.
#[tokio::test]
async fn routines_survive_a_restart() {
    let dir = temp_dir();
    let emu = start(&dir.0).await;
    Rest::new(&emu).dataset("ds").await;
    query(
        &emu,
        "CREATE FUNCTION ds.twice(x INT64) RETURNS INT64 AS (x * 2)",
    )
    .await;
    query(&emu, "CREATE FUNCTION ds.gone(x INT64) AS (x)").await;
    query(&emu, "DROP FUNCTION ds.gone").await;
    emu.shutdown().await;
    let emu = start(&dir.0).await;
    assert_eq!(
        rows(&emu, "SELECT ds.twice(21)").await,
        vec![vec!["42".to_string()]]
    );
    let rest = Rest::new(&emu);
    assert_eq!(rest.get_status("/datasets/ds/routines/twice").await, 200);
    assert_eq!(rest.get_status("/datasets/ds/routines/gone").await, 404);
    emu.shutdown().await;
}

#[tokio::test]
async fn without_a_data_dir_nothing_is_kept() {
    let emu = common::emulator().await;
    Rest::new(&emu).dataset("ds").await;
    emu.shutdown().await;
    let emu = common::emulator().await;
    assert_eq!(Rest::new(&emu).get_status("/datasets/ds").await, 404);
    emu.shutdown().await;
}

#[tokio::test]
async fn a_data_dir_of_another_format_is_refused() {
    let dir = temp_dir();
    std::fs::create_dir_all(&dir.0).unwrap();
    std::fs::write(
        dir.0.join("catalog.json"),
        r#"{"format": "something-else"}"#,
    )
    .unwrap();
    let e = Emulator::builder()
        .with_data_dir(&dir.0)
        .start()
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("not a bigq-emulator data directory"),
        "{e}"
    );
}

/// `tabledata.insertAll` of one row `{"id": id}` into `ds.t`: the HTTP status and body.
async fn insert_all(emu: &Emulator, id: i64) -> (reqwest::StatusCode, Value) {
    Rest::new(emu)
        .post_status(
            "/datasets/ds/tables/t/insertAll",
            json!({"rows": [{"json": {"id": id}}]}),
        )
        .await
}

#[tokio::test]
async fn a_write_that_cannot_be_persisted_fails_and_is_undone() {
    let dir = temp_dir();
    let emu = start(&dir.0).await;
    Rest::new(&emu).dataset("ds").await;
    query(&emu, "CREATE TABLE ds.t (id INT64)").await;
    let (status, _) = insert_all(&emu, 1).await;
    assert!(status.is_success(), "{status}");
    // The table's next row file cannot be written: a directory holds its temporary name.
    let table_dir = dir.0.join("tables/p/ds/t");
    let names: Vec<String> = std::fs::read_dir(&table_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let last = names
        .iter()
        .filter_map(|n| n.strip_suffix(".arrows"))
        .max()
        .expect("a row file");
    let (generation, seq) = last.split_once('-').unwrap();
    let next = format!("{generation}-{:08}.tmp", seq.parse::<u64>().unwrap() + 1);
    std::fs::create_dir(table_dir.join(&next)).unwrap();

    let (status, body) = insert_all(&emu, 2).await;
    assert_eq!(status.as_u16(), 500, "{body}");
    assert!(
        body.to_string().contains("cannot write the data directory"),
        "{body}"
    );
    let e = Rest::new(&emu)
        .post_status(
            "/queries",
            json!({"query": "INSERT INTO ds.t (id) VALUES (3)", "useLegacySql": false}),
        )
        .await;
    assert!(
        !e.0.is_success(),
        "a DML whose rows cannot be written fails: {e:?}"
    );
    // Neither change is visible: what was not written was not made.
    assert_eq!(rows(&emu, "SELECT id FROM ds.t").await, vec![vec!["1"]]);

    std::fs::remove_dir(table_dir.join(&next)).unwrap();
    let (status, _) = insert_all(&emu, 4).await;
    assert!(status.is_success(), "{status}");
    emu.shutdown().await;
    let emu = start(&dir.0).await;
    assert_eq!(
        rows(&emu, "SELECT id FROM ds.t ORDER BY id").await,
        vec![vec!["1"], vec!["4"]]
    );
    emu.shutdown().await;
}

#[tokio::test]
async fn damaged_files_are_set_aside_at_start() {
    let dir = temp_dir();
    let emu = start(&dir.0).await;
    Rest::new(&emu).dataset("ds").await;
    query(&emu, "CREATE TABLE ds.t (id INT64)").await;
    query(&emu, "INSERT INTO ds.t (id) VALUES (1), (2)").await;
    query(&emu, "CREATE TABLE ds.u (id INT64)").await;
    query(&emu, "INSERT INTO ds.u (id) VALUES (7)").await;
    emu.shutdown().await;

    // One of t's row files is cut short.
    let table_dir = dir.0.join("tables/p/ds/t");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&table_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "arrows"))
        .collect();
    files.sort();
    let damaged = files.last().unwrap().clone();
    let bytes = std::fs::read(&damaged).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() / 2]).unwrap();

    let emu = start(&dir.0).await;
    // The emulator starts; the other table is whole, and the damaged file is kept aside.
    assert_eq!(rows(&emu, "SELECT id FROM ds.u").await, vec![vec!["7"]]);
    assert_eq!(
        rows(&emu, "SELECT COUNT(*) FROM ds.t").await,
        vec![vec!["0"]]
    );
    let mut aside = damaged.clone().into_os_string();
    aside.push(".damaged");
    assert!(Path::new(&aside).exists() && !damaged.exists());
    emu.shutdown().await;

    // A catalog cut short: the emulator starts empty and keeps the file.
    let catalog = dir.0.join("catalog.json");
    let text = std::fs::read_to_string(&catalog).unwrap();
    std::fs::write(&catalog, &text[..text.len() / 2]).unwrap();
    let emu = start(&dir.0).await;
    assert_eq!(Rest::new(&emu).get_status("/datasets/ds").await, 404);
    assert!(dir.0.join("catalog.json.damaged").exists());
    emu.shutdown().await;
}

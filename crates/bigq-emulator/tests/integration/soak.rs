//! A soak test: for a bounded time (`BIGQ_SOAK_SECS`, 20 s by default) concurrent Storage
//! Read readers, Storage Write (`AppendRows`) and `insertAll` writers (with retried
//! requests carrying the same `insertId`s) and DDL (tables created and dropped) run against
//! one emulator; then every acknowledged row must be there, none twice, the emulator
//! still serving, and its accounted memory within its budget.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bigq_emulator::Emulator;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    AppendRowsRequest, CreateReadSessionRequest, DataFormat, ProtoRows, ProtoSchema,
    ReadRowsRequest, ReadSession, append_rows_request, append_rows_response,
    big_query_read_client::BigQueryReadClient, big_query_write_client::BigQueryWriteClient,
};
use gcloud_sdk::prost_types::field_descriptor_proto::{Label, Type};
use gcloud_sdk::prost_types::{DescriptorProto, FieldDescriptorProto};
use serde_json::{Value, json};

use crate::common::Rest;

const BUDGET: usize = 64 << 20;
const ROWS_PER_REQUEST: i64 = 50;

fn descriptor() -> DescriptorProto {
    DescriptorProto {
        name: Some("Row".into()),
        field: vec![FieldDescriptorProto {
            name: Some("id".into()),
            number: Some(1),
            r#type: Some(Type::Int64 as i32),
            label: Some(Label::Optional as i32),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A protobuf row `{id}`.
fn proto_row(id: i64) -> Vec<u8> {
    let mut out = vec![1 << 3];
    let mut v = id as u64;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// Ids acknowledged by the emulator.
type Acked = Arc<Mutex<Vec<i64>>>;

async fn append_writer(emu_grpc: String, base: i64, until: Instant, acked: Acked) {
    let channel = tonic::transport::Channel::from_shared(emu_grpc)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let rpc = BigQueryWriteClient::new(channel);
    let mut next = base;
    while Instant::now() < until {
        // One connection of a few requests, then a new one.
        let mut reqs = Vec::new();
        let mut batches = Vec::new();
        for i in 0..4 {
            let ids: Vec<i64> = (next..next + ROWS_PER_REQUEST).collect();
            next += ROWS_PER_REQUEST;
            reqs.push(AppendRowsRequest {
                write_stream: "projects/p/datasets/ds/tables/w/streams/_default".into(),
                rows: Some(append_rows_request::Rows::ProtoRows(
                    append_rows_request::ProtoData {
                        writer_schema: (i == 0).then(|| ProtoSchema {
                            proto_descriptor: Some(descriptor()),
                        }),
                        rows: Some(ProtoRows {
                            serialized_rows: ids.iter().map(|id| proto_row(*id)).collect(),
                        }),
                    },
                )),
                ..Default::default()
            });
            batches.push(ids);
        }
        let mut call = match rpc.clone().append_rows(futures::stream::iter(reqs)).await {
            Ok(c) => c.into_inner(),
            Err(_) => continue,
        };
        let mut batches = batches.into_iter();
        while let Ok(Some(r)) = call.message().await {
            let ids = batches.next().expect("one answer per request");
            if matches!(
                r.response,
                Some(append_rows_response::Response::AppendResult(_))
            ) {
                acked.lock().unwrap().extend(ids);
            }
        }
    }
}

async fn insert_all_writer(rest: Rest, base: i64, until: Instant, acked: Acked) {
    let mut next = base;
    let mut round = 0u64;
    while Instant::now() < until {
        let ids: Vec<i64> = (next..next + ROWS_PER_REQUEST).collect();
        next += ROWS_PER_REQUEST;
        let rows: Vec<Value> = ids
            .iter()
            .map(|id| json!({"insertId": format!("r{id}"), "json": {"id": id}}))
            .collect();
        let body = json!({ "rows": rows });
        // Every third request is sent twice, as a client retrying a lost answer does.
        let sends = if round.is_multiple_of(3) { 2 } else { 1 };
        round += 1;
        for _ in 0..sends {
            let (status, v) = rest
                .post_status("/datasets/ds/tables/w/insertAll", body.clone())
                .await;
            assert!(
                status.is_success() && v.get("insertErrors").is_none(),
                "{v}"
            );
        }
        acked.lock().unwrap().extend(ids);
    }
}

async fn reader(emu_grpc: String, until: Instant) -> u64 {
    let channel = tonic::transport::Channel::from_shared(emu_grpc)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut rpc = BigQueryReadClient::new(channel).max_decoding_message_size(64 << 20);
    let mut sessions = 0;
    while Instant::now() < until {
        let session = rpc
            .create_read_session(CreateReadSessionRequest {
                parent: "projects/p".into(),
                read_session: Some(ReadSession {
                    table: "projects/p/datasets/ds/tables/w".into(),
                    data_format: DataFormat::Arrow as i32,
                    ..Default::default()
                }),
                max_stream_count: 2,
                preferred_min_stream_count: 0,
            })
            .await
            .expect("CreateReadSession")
            .into_inner();
        let mut rows = 0;
        for s in &session.streams {
            let mut call = rpc
                .read_rows(ReadRowsRequest {
                    read_stream: s.name.clone(),
                    offset: 0,
                    ..Default::default()
                })
                .await
                .expect("ReadRows")
                .into_inner();
            while let Some(r) = call.message().await.expect("ReadRows response") {
                rows += r.row_count;
            }
        }
        assert_eq!(
            rows, session.estimated_row_count,
            "a session serves its snapshot"
        );
        sessions += 1;
    }
    sessions
}

async fn ddl(rest: Rest, until: Instant) -> u64 {
    let mut n = 0;
    while Instant::now() < until {
        let t = format!("tmp{}", n % 3);
        rest.query(&format!(
            "CREATE OR REPLACE TABLE ds.{t} AS SELECT x FROM UNNEST(GENERATE_ARRAY(1, 100)) AS x"
        ))
        .await;
        rest.query(&format!("INSERT ds.{t} (x) VALUES (0)")).await;
        rest.query(&format!("DROP TABLE ds.{t}")).await;
        n += 1;
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn soak_concurrent_readers_writers_and_ddl() {
    let secs: u64 = std::env::var("BIGQ_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let emu = Emulator::builder()
        .with_project("p")
        .with_memory_budget(BUDGET)
        .start()
        .await
        .unwrap();
    let rest = Rest::new(&emu);
    rest.dataset("ds").await;
    rest.query("CREATE TABLE ds.w (id INT64 NOT NULL)").await;
    let until = Instant::now() + Duration::from_secs(secs);
    let acked: Acked = Arc::default();
    let mut writers = Vec::new();
    for k in 0..2 {
        writers.push(tokio::spawn(append_writer(
            emu.grpc_endpoint(),
            (k + 1) * 100_000_000,
            until,
            acked.clone(),
        )));
        writers.push(tokio::spawn(insert_all_writer(
            rest.clone(),
            (k + 3) * 100_000_000,
            until,
            acked.clone(),
        )));
    }
    let readers: Vec<_> = (0..2)
        .map(|_| tokio::spawn(reader(emu.grpc_endpoint(), until)))
        .collect();
    let ddl = tokio::spawn(ddl(rest.clone(), until));
    for w in writers {
        w.await.expect("a writer failed");
    }
    let mut sessions = 0;
    for r in readers {
        sessions += r.await.expect("a reader failed");
    }
    let ddl_rounds = ddl.await.expect("DDL failed");
    assert!(
        sessions > 0 && ddl_rounds > 0,
        "{sessions} sessions, {ddl_rounds} DDL rounds"
    );

    let acked: Vec<i64> = std::mem::take(&mut *acked.lock().unwrap());
    let expected: HashSet<i64> = acked.iter().copied().collect();
    assert_eq!(expected.len(), acked.len(), "an id was acknowledged twice");
    assert!(!acked.is_empty());
    let twice = rest
        .query("SELECT id FROM ds.w GROUP BY id HAVING COUNT(*) > 1 LIMIT 10")
        .await;
    assert!(twice.get("rows").is_none(), "rows written twice: {twice}");
    let all = rest
        .post_ok(
            "/queries",
            json!({"query": "SELECT id FROM ds.w", "useLegacySql": false, "maxResults": 10_000_000}),
        )
        .await;
    let mut found = HashSet::new();
    let mut page = all;
    loop {
        for r in page["rows"].as_array().into_iter().flatten() {
            found.insert(r["f"][0]["v"].as_str().unwrap().parse::<i64>().unwrap());
        }
        let Some(token) = page["pageToken"].as_str().map(str::to_string) else {
            break;
        };
        let job = page["jobReference"]["jobId"].as_str().unwrap().to_string();
        page = rest.get(&format!("/queries/{job}?pageToken={token}")).await;
    }
    let missing = expected.difference(&found).count();
    assert_eq!(missing, 0, "{missing} acknowledged rows are missing");
    let used = emu.memory_in_use();
    assert!(used <= BUDGET, "{used} bytes held, budget {BUDGET}");
    eprintln!(
        "soak: {secs} s, {} rows acknowledged, {sessions} read sessions, {ddl_rounds} DDL rounds, {used} bytes held",
        acked.len()
    );
}

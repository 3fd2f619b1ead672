//! The emulator under stress: cancelled and timed-out jobs roll back, `insertId`
//! de-duplication, the memory budget, idle sessions, streams and results expiring, read
//! timeouts on the REST port, and the fault layer driven over HTTP (in-process and from the
//! binary).

use std::time::{Duration, Instant};

use bigq_emulator::{Emulator, Expiry, ReadTimeouts};
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    CreateReadSessionRequest, CreateWriteStreamRequest, DataFormat, GetWriteStreamRequest,
    ReadRowsRequest, ReadSession, WriteStream, big_query_read_client::BigQueryReadClient,
    big_query_write_client::BigQueryWriteClient, write_stream,
};
use gcloud_sdk::google::rpc::{RetryInfo, Status as RpcStatus};
use gcloud_sdk::prost::Message;
use serde_json::{Value, json};
use std::io::{BufRead, Read, Write};
use tonic::Code;

use crate::common::{self, Rest};

async fn slow_emulator(delay_ms: u64) -> Emulator {
    Emulator::builder()
        .with_project("p")
        .with_query_delay(Duration::from_millis(delay_ms))
        .with_job_timeout_floor(Duration::ZERO)
        .start()
        .await
        .expect("start")
}

/// `ds.t (n INT64)` holding 1 and 2, made without a query job.
async fn table_with_rows(rest: &Rest) {
    rest.dataset("ds").await;
    rest.post_ok(
        "/datasets/ds/tables",
        json!({"tableReference": {"tableId": "t"},
               "schema": {"fields": [{"name": "n", "type": "INTEGER"}]}}),
    )
    .await;
    insert_all(rest, "t", &[(1, None), (2, None)]).await;
}

async fn insert_all(rest: &Rest, table: &str, rows: &[(i64, Option<&str>)]) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .map(|(n, id)| match id {
            Some(id) => json!({"insertId": id, "json": {"n": n}}),
            None => json!({"json": {"n": n}}),
        })
        .collect();
    rest.post_ok(
        &format!("/datasets/ds/tables/{table}/insertAll"),
        json!({ "rows": rows }),
    )
    .await
}

/// The `n` of every row of `ds.{table}`, sorted, read with `tabledata.list` (no job).
async fn values(rest: &Rest, table: &str) -> Vec<i64> {
    let v = rest.get(&format!("/datasets/ds/tables/{table}/data")).await;
    let mut out: Vec<i64> = v["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["f"][0]["v"].as_str().unwrap().parse().unwrap())
        .collect();
    out.sort();
    out
}

async fn insert_job(rest: &Rest, sql: &str, extra: Value) -> Value {
    let mut cfg = json!({"query": {"query": sql, "useLegacySql": false}});
    if let (Some(c), Some(e)) = (cfg.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    rest.post_ok("/jobs", json!({ "configuration": cfg })).await
}

fn job_id(job: &Value) -> String {
    job["jobReference"]["jobId"].as_str().unwrap().to_string()
}

/// Polls `jobs.get` until the job is DONE (at most 20 s); the job.
async fn done(rest: &Rest, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let j = rest.get(&format!("/jobs/{id}")).await;
        if j["status"]["state"] == "DONE" {
            return j;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "job never ended: {j}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn cancelled_dml_and_ddl_jobs_change_nothing() {
    let emu = slow_emulator(800).await;
    let rest = Rest::new(&emu);
    table_with_rows(&rest).await;
    let statements = [
        "INSERT ds.t (n) VALUES (3)",
        "DELETE FROM ds.t WHERE TRUE",
        "UPDATE ds.t SET n = n + 10 WHERE TRUE",
        "CREATE TABLE ds.made (x INT64)",
        "DROP TABLE ds.t",
        "CREATE TABLE ds.copy AS SELECT * FROM ds.t",
    ];
    for sql in statements {
        let job = insert_job(&rest, sql, json!({})).await;
        assert_ne!(job["status"]["state"], "DONE", "{sql}: {job}");
        let id = job_id(&job);
        let (status, cancel) = rest
            .post_status(&format!("/jobs/{id}/cancel"), json!({}))
            .await;
        assert_eq!(status, 200, "{cancel}");
        let job = &cancel["job"];
        assert_eq!(job["status"]["state"], "DONE", "{sql}: {job}");
        assert_eq!(job["status"]["errorResult"]["reason"], "stopped", "{sql}");
        // Well past the delay: the statement would have run by now.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(values(&rest, "t").await, [1, 2], "{sql} changed the table");
        for gone in ["made", "copy"] {
            let status = rest
                .get_status(&format!("/datasets/ds/tables/{gone}"))
                .await;
            assert_eq!(status, 404, "{sql} made ds.{gone}");
        }
        let after = rest.get(&format!("/jobs/{id}")).await;
        assert_eq!(after["status"]["errorResult"]["reason"], "stopped");
    }

    // A cancel after the job finished reports it done, its change made.
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table_with_rows(&rest).await;
    let job = insert_job(&rest, "INSERT ds.t (n) VALUES (3)", json!({})).await;
    assert_eq!(job["status"]["state"], "DONE");
    let cancel = rest
        .post_ok(&format!("/jobs/{}/cancel", job_id(&job)), json!({}))
        .await;
    assert_eq!(cancel["job"]["status"]["state"], "DONE");
    assert!(
        cancel["job"]["status"].get("errorResult").is_none(),
        "{cancel}"
    );
    assert_eq!(values(&rest, "t").await, [1, 2, 3]);
}

/// A statement that takes a few seconds in a debug build.
const SLOW: &str = "SELECT COUNT(*) FROM UNNEST(GENERATE_ARRAY(1, 20000)) AS a \
                    CROSS JOIN UNNEST(GENERATE_ARRAY(1, 20000)) AS b";

// Several workers: the slow statement keeps one busy while the test polls.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancelled_script_keeps_what_committed_and_runs_no_more() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table_with_rows(&rest).await;
    let script = format!("INSERT ds.t (n) VALUES (10); {SLOW}; INSERT ds.t (n) VALUES (11);");
    // jobs.query answers at once (timeoutMs 0): the script runs on.
    let (status, q) = rest
        .post_status(
            "/queries",
            json!({"query": script, "useLegacySql": false, "timeoutMs": 0}),
        )
        .await;
    assert_eq!(status, 200, "{q}");
    assert_eq!(q["jobComplete"], false, "the script ended too soon: {q}");
    let id = q["jobReference"]["jobId"].as_str().unwrap().to_string();
    let start = Instant::now();
    while values(&rest, "t").await != [1, 2, 10] {
        if start.elapsed() > Duration::from_secs(20) {
            let job = rest.get(&format!("/jobs/{id}")).await;
            panic!("the first INSERT never ran: {job}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancel = rest.post_ok(&format!("/jobs/{id}/cancel"), json!({})).await;
    assert_eq!(
        cancel["job"]["status"]["errorResult"]["reason"], "stopped",
        "{cancel}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(values(&rest, "t").await, [1, 2, 10]);
}

#[tokio::test]
async fn job_timeout_ends_the_job_and_undoes_its_change() {
    let emu = slow_emulator(1000).await;
    let rest = Rest::new(&emu);
    table_with_rows(&rest).await;
    let job = insert_job(
        &rest,
        "INSERT ds.t (n) VALUES (3)",
        json!({"jobTimeoutMs": "300"}),
    )
    .await;
    assert_eq!(job["configuration"]["jobTimeoutMs"], "300");
    let id = job_id(&job);
    let started = Instant::now();
    let j = done(&rest, &id).await;
    assert!(
        started.elapsed() < Duration::from_millis(950),
        "ended by the timeout"
    );
    let err = &j["status"]["errorResult"];
    assert_eq!(err["reason"], "timeout", "{j}");
    assert_eq!(err["message"], "Job timed out after 0.300 sec(s).");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(values(&rest, "t").await, [1, 2]);

    // jobs.query: jobTimeoutMs limits the job, timeoutMs only the wait.
    let (status, q) = rest
        .post_status(
            "/queries",
            json!({"query": "INSERT ds.t (n) VALUES (4)", "useLegacySql": false,
                   "timeoutMs": 5000, "jobTimeoutMs": 200}),
        )
        .await;
    assert_eq!(status, 400, "{q}");
    assert_eq!(q["error"]["errors"][0]["reason"], "timeout");
    let (status, q) = rest
        .post_status(
            "/queries",
            json!({"query": "INSERT ds.t (n) VALUES (5)", "useLegacySql": false,
                   "timeoutMs": 100, "jobTimeoutMs": 5000}),
        )
        .await;
    assert_eq!(status, 200, "{q}");
    assert_eq!(q["jobComplete"], false);
    let id = q["jobReference"]["jobId"].as_str().unwrap().to_string();
    let j = done(&rest, &id).await;
    assert!(j["status"].get("errorResult").is_none(), "{j}");
    assert_eq!(values(&rest, "t").await, [1, 2, 5]);

    let (status, bad) = rest
        .post_status(
            "/jobs",
            json!({"configuration": {"jobTimeoutMs": "soon",
                   "query": {"query": "SELECT 1", "useLegacySql": false}}}),
        )
        .await;
    assert_eq!(status, 400, "{bad}");
}

#[tokio::test]
async fn insert_ids_are_written_once() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table_with_rows(&rest).await;
    insert_all(
        &rest,
        "t",
        &[(3, Some("a")), (4, Some("b")), (3, Some("a"))],
    )
    .await;
    assert_eq!(values(&rest, "t").await, [1, 2, 3, 4]);
    // A retry of the same request, and rows without an id (always written).
    insert_all(&rest, "t", &[(3, Some("a")), (4, Some("b")), (5, None)]).await;
    insert_all(&rest, "t", &[(5, None)]).await;
    assert_eq!(values(&rest, "t").await, [1, 2, 3, 4, 5, 5]);
    // Racing retries: one of them writes.
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let rest = rest.clone();
            tokio::spawn(async move { insert_all(&rest, "t", &[(6, Some("race"))]).await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(values(&rest, "t").await, [1, 2, 3, 4, 5, 5, 6]);
    // Another table keeps ids of its own.
    rest.post_ok(
        "/datasets/ds/tables",
        json!({"tableReference": {"tableId": "u"},
               "schema": {"fields": [{"name": "n", "type": "INTEGER"}]}}),
    )
    .await;
    insert_all(&rest, "u", &[(3, Some("a"))]).await;
    assert_eq!(values(&rest, "u").await, [3]);
}

#[tokio::test]
async fn results_are_evicted_to_keep_within_the_memory_budget() {
    let budget = 3 << 20;
    let emu = Emulator::builder()
        .with_project("p")
        .with_memory_budget(budget)
        .start()
        .await
        .unwrap();
    let rest = Rest::new(&emu);
    // About 1 MiB of rows each.
    let sql = "SELECT n, REPEAT('x', 200) AS s FROM UNNEST(GENERATE_ARRAY(1, 4000)) AS n";
    let mut ids = Vec::new();
    for _ in 0..4 {
        let job = insert_job(&rest, sql, json!({})).await;
        assert_eq!(job["status"]["state"], "DONE", "{job}");
        ids.push(job_id(&job));
        assert!(
            emu.memory_in_use() <= budget,
            "{} > {budget}",
            emu.memory_in_use()
        );
    }
    let (status, first) = rest_get_status(&rest, &format!("/queries/{}", ids[0])).await;
    assert_eq!(status, 404, "{first}");
    assert_eq!(first["error"]["errors"][0]["reason"], "notFound");
    // The job itself is still there.
    let job = rest.get(&format!("/jobs/{}", ids[0])).await;
    assert_eq!(job["status"]["state"], "DONE");
    let last = rest.get(&format!("/queries/{}?maxResults=1", ids[3])).await;
    assert_eq!(last["totalRows"], "4000", "{last}");

    // One query past DataFusion's pool of the same size fails by name.
    let (status, v) = rest
        .post_status(
            "/queries",
            json!({"query": "SELECT s FROM (SELECT CONCAT(REPEAT('y', 50), CAST(n AS STRING)) AS s \
                             FROM UNNEST(GENERATE_ARRAY(1, 200000)) AS n) ORDER BY s DESC",
                   "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        v["error"]["errors"][0]["reason"], "resourcesExceeded",
        "{v}"
    );
}

async fn rest_get_status(rest: &Rest, path: &str) -> (u16, Value) {
    let status = rest.get_status(path).await.as_u16();
    (status, rest.get(path).await)
}

#[tokio::test]
async fn read_sessions_read_to_the_end_are_freed() {
    let emu = Emulator::builder()
        .with_project("p")
        .with_expiry(Expiry {
            read_done: Duration::ZERO,
            ..Expiry::default()
        })
        .start()
        .await
        .unwrap();
    let rest = Rest::new(&emu);
    rest.dataset("ds").await;
    rest.query("CREATE TABLE ds.r AS SELECT n FROM UNNEST(GENERATE_ARRAY(1, 5000)) AS n")
        .await;
    let mut rpc = BigQueryReadClient::new(common::channel(&emu).await);
    let session = rpc
        .create_read_session(CreateReadSessionRequest {
            parent: "projects/p".into(),
            read_session: Some(ReadSession {
                table: "projects/p/datasets/ds/tables/r".into(),
                data_format: DataFormat::Arrow as i32,
                ..Default::default()
            }),
            max_stream_count: 1,
            preferred_min_stream_count: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let stream = session.streams[0].name.clone();
    let held = emu.memory_in_use();
    assert!(held > 0, "the session's encoded rows are counted");
    let req = gcloud_sdk::google::cloud::bigquery::storage::v1::ReadRowsRequest {
        read_stream: stream.clone(),
        offset: 0,
        ..Default::default()
    };
    let mut call = rpc.read_rows(req.clone()).await.unwrap().into_inner();
    let mut rows = 0;
    while let Some(r) = call.message().await.unwrap() {
        rows += r.row_count;
    }
    assert_eq!(rows, 5000);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let e = match rpc.read_rows(req).await {
        Ok(c) => c.into_inner().message().await.unwrap_err(),
        Err(e) => e,
    };
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
}

#[tokio::test]
async fn idle_read_sessions_write_streams_and_old_results_expire() {
    let short = Duration::from_millis(1500);
    let emu = Emulator::builder()
        .with_project("p")
        .with_expiry(Expiry {
            read_idle: short,
            write_idle: short,
            job_results: short,
            ..Expiry::default()
        })
        .start()
        .await
        .unwrap();
    let rest = Rest::new(&emu);
    rest.dataset("ds").await;
    rest.query("CREATE TABLE ds.r AS SELECT n FROM UNNEST(GENERATE_ARRAY(1, 5000)) AS n")
        .await;
    let channel = common::channel(&emu).await;
    // A read session nobody reads, a PENDING write stream nobody writes to, a finished
    // query job whose rows nobody fetches.
    let mut read = BigQueryReadClient::new(channel.clone());
    let session = read
        .create_read_session(CreateReadSessionRequest {
            parent: "projects/p".into(),
            read_session: Some(ReadSession {
                table: "projects/p/datasets/ds/tables/r".into(),
                data_format: DataFormat::Arrow as i32,
                ..Default::default()
            }),
            max_stream_count: 1,
            preferred_min_stream_count: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let mut write = BigQueryWriteClient::new(channel);
    let stream = write
        .create_write_stream(CreateWriteStreamRequest {
            parent: "projects/p/datasets/ds/tables/r".into(),
            write_stream: Some(WriteStream {
                r#type: write_stream::Type::Pending as i32,
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    let job = insert_job(&rest, "SELECT n FROM ds.r", json!({})).await;
    assert_eq!(job["status"]["state"], "DONE", "{job}");
    let id = job_id(&job);
    let before = emu.memory_in_use();
    assert!(before > 0, "the session and the result are counted");

    // Well within the limit, each is still there.
    let got = write
        .get_write_stream(GetWriteStreamRequest {
            name: stream.name.clone(),
            ..Default::default()
        })
        .await;
    assert!(got.is_ok(), "{got:?}");

    // Past it (and a sweep), each is gone, and so is the memory it held.
    tokio::time::sleep(short * 3).await;
    let req = ReadRowsRequest {
        read_stream: session.streams[0].name.clone(),
        offset: 0,
        ..Default::default()
    };
    let e = match read.read_rows(req).await {
        Ok(c) => c.into_inner().message().await.unwrap_err(),
        Err(e) => e,
    };
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    let e = write
        .get_write_stream(GetWriteStreamRequest {
            name: stream.name.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    // As BigQuery answers for a stream it does not know (recorded).
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().starts_with("Invalid stream name"), "{e:?}");
    let (status, v) = rest_get_status(&rest, &format!("/queries/{id}")).await;
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["error"]["errors"][0]["reason"], "notFound", "{v}");
    assert_eq!(
        rest.get(&format!("/jobs/{id}")).await["status"]["state"],
        "DONE"
    );
    // What is left is the table's encoding kept for sessions to come, which the budget
    // bounds; the result's rows and the session are gone.
    let after = emu.memory_in_use();
    assert!(
        after < before,
        "{after} bytes held after expiry, {before} before"
    );
}

#[tokio::test]
async fn half_sent_requests_are_dropped_after_the_read_timeouts() {
    let emu = Emulator::builder()
        .with_project("p")
        .with_read_timeouts(ReadTimeouts {
            header: Duration::from_millis(300),
            body: Duration::from_millis(300),
        })
        .start()
        .await
        .unwrap();
    let addr = emu.local_addr();
    // Sends `head` and waits (at most 5 s) for the server to close the connection; how
    // long that took and what it answered.
    let ends_within = |head: &'static [u8]| {
        tokio::task::spawn_blocking(move || {
            let mut conn = std::net::TcpStream::connect(addr).unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            conn.write_all(head).unwrap();
            let start = Instant::now();
            let mut buf = Vec::new();
            let r = conn.read_to_end(&mut buf);
            assert!(r.is_ok(), "the server kept the connection open: {r:?}");
            (start.elapsed(), String::from_utf8_lossy(&buf).to_string())
        })
    };
    // Half the headers.
    let (took, answer) =
        ends_within(b"POST /bigquery/v2/projects/p/datasets HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(!answer.starts_with("HTTP/1.1 200"), "{answer}");
    // All the headers, a tenth of the body.
    let (took, answer) = ends_within(
        b"POST /bigquery/v2/projects/p/datasets HTTP/1.1\r\nHost: x\r\n\
          Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"dataset",
    )
    .await
    .unwrap();
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(!answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The server still serves.
    let rest = Rest::new(&emu);
    rest.dataset("ok").await;
}

/// The emulator's `/emulator/v1/faults` endpoint.
struct Admin {
    url: String,
    http: reqwest::Client,
}

impl Admin {
    fn new(rest_endpoint: &str) -> Admin {
        Admin {
            url: format!("{rest_endpoint}/emulator/v1/faults"),
            http: reqwest::Client::new(),
        }
    }

    async fn arm(&self, spec: Value) -> (u16, Value) {
        let r = self.http.post(&self.url).json(&spec).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    async fn get(&self) -> Value {
        self.http
            .get(&self.url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn clear(&self) {
        let r = self.http.delete(&self.url).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
}

#[tokio::test]
async fn faults_armed_over_http() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    let admin = Admin::new(&emu.rest_endpoint());
    table_with_rows(&rest).await;

    let (status, v) = admin.arm(json!({"restErrorRate": 2.0})).await;
    assert_eq!(status, 400, "{v}");
    let (status, v) = admin.arm(json!({"restErrorRates": 1.0})).await;
    assert_eq!(status, 400, "{v}");

    // Error rates: every REST request fails, 503 then 429.
    admin.arm(json!({"restErrorRate": 1.0})).await;
    let (status, v) = rest_get_status(&rest, "/datasets/ds").await;
    assert_eq!(status, 503);
    assert_eq!(v["error"]["errors"][0]["reason"], "backendError");
    assert_eq!(v["error"]["status"], "UNAVAILABLE");
    admin.arm(json!({"error": "resourceExhausted"})).await;
    let (status, v) = rest_get_status(&rest, "/datasets/ds").await;
    assert_eq!(status, 429);
    assert_eq!(v["error"]["errors"][0]["reason"], "rateLimitExceeded");
    assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED");
    assert!(admin.get().await["errorsInjected"].as_u64().unwrap() >= 4);
    admin.clear().await;
    assert_eq!(rest.get_status("/datasets/ds").await, 200);

    // A rate of one half fails about half (seeded: the same run every time).
    admin.arm(json!({"restErrorRate": 0.5, "seed": 7})).await;
    let mut failed = 0;
    for _ in 0..100 {
        if rest.get_status("/datasets/ds").await == 503 {
            failed += 1;
        }
    }
    assert!((25..=75).contains(&failed), "{failed} of 100");
    admin.clear().await;

    // gRPC: UNAVAILABLE / RESOURCE_EXHAUSTED with a RetryInfo.
    let mut rpc = BigQueryReadClient::new(common::channel(&emu).await);
    let session = |rpc: &mut BigQueryReadClient<tonic::transport::Channel>| {
        let req = CreateReadSessionRequest {
            parent: "projects/p".into(),
            read_session: Some(ReadSession {
                table: "projects/p/datasets/ds/tables/t".into(),
                data_format: DataFormat::Arrow as i32,
                ..Default::default()
            }),
            max_stream_count: 1,
            preferred_min_stream_count: 0,
        };
        let mut rpc = rpc.clone();
        async move { rpc.create_read_session(req).await }
    };
    for (error, code) in [
        ("unavailable", Code::Unavailable),
        ("resourceExhausted", Code::ResourceExhausted),
    ] {
        admin
            .arm(json!({"grpcErrorRate": 1.0, "error": error}))
            .await;
        let e = session(&mut rpc).await.unwrap_err();
        assert_eq!(e.code(), code, "{e:?}");
        let details = RpcStatus::decode(e.details()).unwrap();
        let any = &details.details[0];
        assert_eq!(any.type_url, "type.googleapis.com/google.rpc.RetryInfo");
        let retry = RetryInfo::decode(any.value.as_slice()).unwrap();
        assert!(retry.retry_delay.is_some());
    }
    admin.clear().await;
    let s = session(&mut rpc).await.unwrap().into_inner();

    // A ReadRows cut, armed over HTTP.
    admin.arm(json!({"cutReadRowsAfterRows": 1})).await;
    let mut call = rpc
        .read_rows(
            gcloud_sdk::google::cloud::bigquery::storage::v1::ReadRowsRequest {
                read_stream: s.streams[0].name.clone(),
                offset: 0,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .into_inner();
    let mut got = 0;
    let end = loop {
        match call.message().await {
            Ok(Some(r)) => got += r.row_count,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    assert_eq!(got, 1);
    assert_eq!(end.unwrap_err().code(), Code::Unavailable);
    assert_eq!(admin.get().await["readRowsCut"], 1);

    // A delay on every answer.
    admin.arm(json!({"delayMs": 300})).await;
    let start = Instant::now();
    assert_eq!(rest.get_status("/datasets/ds").await, 200);
    assert!(start.elapsed() >= Duration::from_millis(300));
    admin.clear().await;

    // An answer lost after its change was applied.
    admin.arm(json!({"dropResponsesAfterCommit": 1})).await;
    let lost = reqwest::Client::new()
        .post(format!(
            "{}/bigquery/v2/projects/p/datasets/ds/tables/t/insertAll",
            emu.rest_endpoint()
        ))
        .json(&json!({"rows": [{"json": {"n": 3}}]}))
        .send()
        .await;
    let answered = match lost {
        Ok(r) => r.text().await.is_ok(),
        Err(_) => false,
    };
    assert!(!answered, "the answer came through");
    assert_eq!(
        values(&rest, "t").await,
        [1, 2, 3],
        "the change was applied"
    );
    assert_eq!(admin.get().await["responsesDropped"], 1);
    // Disarmed once used.
    insert_all(&rest, "t", &[(4, None)]).await;
}

#[tokio::test]
async fn the_binary_takes_faults_and_a_memory_budget() {
    /// Ends the binary however the test ends.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bigq-emulator"))
        .args([
            "--port",
            "0",
            "--grpc-port",
            "0",
            "--project",
            "p",
            "--memory-budget-mb",
            "64",
            "--faults",
            r#"{"restErrorRate": 1.0, "error": "resourceExhausted"}"#,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run bigq-emulator");
    let out = child.stdout.take().unwrap();
    let _child = Kill(child);
    let url = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(out).read_line(&mut line).unwrap();
        line.trim_start_matches("bigq-emulator listening on ")
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    })
    .await
    .unwrap();
    assert!(url.starts_with("http://"), "{url}");
    let http = reqwest::Client::new();
    let r = http
        .get(format!("{url}/bigquery/v2/projects/p/datasets"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let admin = Admin::new(&url);
    admin.clear().await;
    let r = http
        .get(format!("{url}/bigquery/v2/projects/p/datasets"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_result_that_shares_the_table_buffers_is_counted_once() {
    // `SELECT *` answers with slices of the stored batches; counted by
    // their shared buffers, each slice would weigh the whole table and
    // the result would be dropped as soon as the job finished.
    let budget = 16 << 20;
    let emu = Emulator::builder()
        .with_project("p")
        .with_memory_budget(budget)
        .start()
        .await
        .unwrap();
    let rest = Rest::new(&emu);
    rest.dataset("ds").await;
    rest.query(
        "CREATE TABLE ds.wide AS SELECT n, n * 2 AS m FROM UNNEST(GENERATE_ARRAY(1, 300000)) AS n",
    )
    .await;
    let job = insert_job(&rest, "SELECT * FROM ds.wide", json!({})).await;
    assert_eq!(job["status"]["state"], "DONE", "{job}");
    let id = job_id(&job);
    let page = rest
        .get(&format!("/queries/{id}?maxResults=2&startIndex=299998"))
        .await;
    assert_eq!(page["totalRows"], "300000", "{page}");
    assert_eq!(page["rows"].as_array().map(Vec::len), Some(2), "{page}");
    assert!(
        emu.memory_in_use() <= budget,
        "{} > {budget}",
        emu.memory_in_use()
    );
}

//! What a query costs: `totalBytesProcessed` from BigQuery's data sizes of the columns read,
//! `totalBytesBilled` with its 10 MB minimum a table, and `maximumBytesBilled` refusing a
//! query, over REST (jobs.query, jobs.insert and jobs.get, dry runs) and gRPC.

use gcloud_sdk::google::cloud::bigquery::v2::job_service_client::JobServiceClient;
use gcloud_sdk::google::cloud::bigquery::v2::{PostQueryRequest, QueryRequest};
use serde_json::{Value, json};

use crate::common::{self, Rest};

/// 10 MB, the least BigQuery bills for a table read.
const TEN_MB: &str = "10485760";

/// A table of two rows: `i` INT64 (2 × 8 bytes), `s` STRING ((2 + 2) + (2 + 3) bytes) and
/// `f` FLOAT64 (one value, 8 bytes; a NULL costs nothing).
async fn table(rest: &Rest) {
    rest.dataset("d").await;
    rest.query(
        "CREATE TABLE d.t AS SELECT * FROM UNNEST([STRUCT(1 AS i, 'ab' AS s, 1.5 AS f), \
         (2, 'cde', NULL)])",
    )
    .await;
}

fn bytes(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .to_string()
}

#[tokio::test]
async fn queries_process_the_columns_they_read_and_bill_ten_mb_at_least() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table(&rest).await;
    for (sql, processed, billed) in [
        ("SELECT i FROM d.t", "16", TEN_MB),
        ("SELECT s, f FROM d.t", "17", TEN_MB),
        ("SELECT * FROM d.t", "33", TEN_MB),
        // A filter does not make a column cheaper: each column read is read whole.
        ("SELECT i FROM d.t WHERE s = 'x'", "25", TEN_MB),
        ("SELECT COUNT(*) AS n FROM d.t", "0", "0"),
        ("SELECT 1 AS x", "0", "0"),
    ] {
        let v = rest.query(sql).await;
        assert_eq!(bytes(&v, "totalBytesProcessed"), processed, "{sql}: {v}");
        assert_eq!(bytes(&v, "totalBytesBilled"), billed, "{sql}: {v}");
    }
}

#[tokio::test]
async fn a_dry_run_reports_the_bytes_and_bills_nothing() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table(&rest).await;
    let v = rest
        .post_ok(
            "/queries",
            json!({"query": "SELECT i FROM d.t", "useLegacySql": false, "dryRun": true}),
        )
        .await;
    assert_eq!(bytes(&v, "totalBytesProcessed"), "16", "{v}");
    assert_eq!(bytes(&v, "totalBytesBilled"), "0", "{v}");
    let job = rest
        .post_ok(
            "/jobs",
            json!({"configuration": {"dryRun": true, "query": {"query": "SELECT s FROM d.t",
                   "useLegacySql": false}}}),
        )
        .await;
    assert_eq!(
        bytes(&job["statistics"], "totalBytesProcessed"),
        "9",
        "{job}"
    );
    let q = &job["statistics"]["query"];
    assert_eq!(bytes(q, "totalBytesProcessed"), "9", "{job}");
    assert_eq!(bytes(q, "totalBytesBilled"), "0", "{job}");
}

#[tokio::test]
async fn a_job_reports_its_cost_in_its_statistics() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table(&rest).await;
    let job = rest
        .post_ok(
            "/jobs",
            json!({"jobReference": {"jobId": "costly"},
                   "configuration": {"query": {"query": "SELECT i, s FROM d.t",
                                               "useLegacySql": false}}}),
        )
        .await;
    assert_eq!(job["status"]["state"], "DONE", "{job}");
    let got = rest.get("/jobs/costly").await;
    assert_eq!(
        bytes(&got["statistics"], "totalBytesProcessed"),
        "25",
        "{got}"
    );
    let q = &got["statistics"]["query"];
    assert_eq!(bytes(q, "totalBytesProcessed"), "25", "{got}");
    assert_eq!(bytes(q, "totalBytesBilled"), TEN_MB, "{got}");
}

#[tokio::test]
async fn maximum_bytes_billed_refuses_a_query_that_would_bill_more() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table(&rest).await;
    let (status, v) = rest
        .post_status(
            "/queries",
            json!({"query": "SELECT i FROM d.t", "useLegacySql": false,
                   "maximumBytesBilled": "1000000"}),
        )
        .await;
    assert_eq!(status.as_u16(), 400, "{v}");
    assert_eq!(
        v["error"]["errors"][0]["reason"], "bytesBilledLimitExceeded",
        "{v}"
    );
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("1000000") && message.contains(TEN_MB),
        "{message}"
    );
    // At the limit, or for a query that bills nothing, it runs.
    let v = rest
        .post_ok(
            "/queries",
            json!({"query": "SELECT i FROM d.t", "useLegacySql": false,
                   "maximumBytesBilled": TEN_MB}),
        )
        .await;
    assert_eq!(bytes(&v, "totalBytesBilled"), TEN_MB, "{v}");
    rest.post_ok(
        "/queries",
        json!({"query": "SELECT 1 AS x", "useLegacySql": false, "maximumBytesBilled": "1"}),
    )
    .await;
    // A job fails with the same error.
    rest.post_ok(
        "/jobs",
        json!({"jobReference": {"jobId": "capped"},
               "configuration": {"query": {"query": "SELECT i FROM d.t",
                                           "useLegacySql": false,
                                           "maximumBytesBilled": "10"}}}),
    )
    .await;
    let job = rest.get("/jobs/capped").await;
    assert_eq!(
        job["status"]["errorResult"]["reason"], "bytesBilledLimitExceeded",
        "{job}"
    );
}

#[tokio::test]
async fn grpc_query_reports_the_same_cost() {
    let emu = common::emulator().await;
    let rest = Rest::new(&emu);
    table(&rest).await;
    let mut jobs = JobServiceClient::new(common::channel(&emu).await);
    let query = |sql: &str, max: Option<i64>| PostQueryRequest {
        project_id: "p".into(),
        query_request: Some(QueryRequest {
            query: sql.into(),
            use_legacy_sql: Some(false),
            maximum_bytes_billed: max,
            ..Default::default()
        }),
    };
    let r = jobs
        .query(query("SELECT s, f FROM d.t", None))
        .await
        .expect("query")
        .into_inner();
    assert_eq!(r.total_bytes_processed, Some(17));
    assert_eq!(r.total_bytes_billed, Some(10 << 20));
    let e = jobs
        .query(query("SELECT s, f FROM d.t", Some(100)))
        .await
        .expect_err("over the limit");
    assert!(e.message().contains("bytes billed"), "{e:?}");
}

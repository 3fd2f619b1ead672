//! The REST query path against a scripted server on loopback: polling, paging with page
//! tokens, retries, error bodies, and response shapes recorded from real BigQuery.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bigq::{Client, RetryPolicy};
use futures::StreamExt;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

async fn client(server: &MockServer) -> Client {
    Client::builder()
        .with_project("p")
        .with_emulator(server.uri())
        .with_retry_policy(RetryPolicy {
            initial_backoff: std::time::Duration::from_millis(1),
            ..Default::default()
        })
        .build()
        .await
        .unwrap()
}

fn rows(from: i64, to: i64) -> Vec<Value> {
    (from..=to)
        .map(|n| json!({"f": [{"v": n.to_string()}]}))
        .collect()
}

fn schema() -> Value {
    json!({"fields": [{"name": "n", "type": "INTEGER", "mode": "NULLABLE"}]})
}

#[tokio::test]
async fn polls_until_complete_then_pages() {
    let server = MockServer::start().await;
    // jobs.query answers "not complete yet" with a job.
    Mock::given(method("POST"))
        .and(path("/bigquery/v2/projects/p/queries"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "kind": "bigquery#queryResponse",
            "jobReference": {"projectId": "p", "jobId": "job1", "location": "EU"},
            "jobComplete": false,
            "jobCreationReason": {"code": "LONG_RUNNING"}
        })))
        .expect(1)
        .mount(&server)
        .await;
    // The first getQueryResults is still running; the second is done with the first page.
    let calls = Arc::new(AtomicUsize::new(0));
    struct FirstPage(Arc<AtomicUsize>);
    impl Respond for FirstPage {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                ResponseTemplate::new(200).set_body_json(json!({
                    "jobReference": {"projectId": "p", "jobId": "job1", "location": "EU"},
                    "jobComplete": false
                }))
            } else {
                // Rows before the schema, as JSON allows.
                ResponseTemplate::new(200).set_body_json(json!({
                    "rows": rows(1, 3),
                    "schema": schema(),
                    "jobReference": {"projectId": "p", "jobId": "job1", "location": "EU"},
                    "totalRows": "7",
                    "pageToken": "page2",
                    "jobComplete": true,
                    "totalBytesProcessed": "123",
                    "cacheHit": false
                }))
            }
        }
    }
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/queries/job1"))
        .and(query_param("location", "EU"))
        .and(wiremock::matchers::query_param_is_missing("pageToken"))
        .respond_with(FirstPage(calls.clone()))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/queries/job1"))
        .and(query_param("pageToken", "page2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "schema": schema(), "totalRows": "7", "pageToken": "page3", "rows": rows(4, 6), "jobComplete": true
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/queries/job1"))
        .and(query_param("pageToken", "page3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "schema": schema(), "totalRows": "7", "rows": rows(7, 7), "jobComplete": true
        })))
        .expect(1)
        .mount(&server)
        .await;

    let c = client(&server).await;
    let results = c.query("SELECT n").location("EU").run().await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        results.stats().job_creation_reason.as_deref(),
        Some("LONG_RUNNING")
    );
    assert_eq!(results.stats().total_bytes_processed, Some(123));
    assert_eq!(results.job_reference().unwrap().job_id, "job1");
    let got: Vec<(i64,)> = results.fetch_all().await.unwrap();
    assert_eq!(got, (1..=7).map(|n| (n,)).collect::<Vec<_>>());

    // The request body asked for short query mode, int64 timestamps and a request id.
    let reqs = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["jobCreationMode"], "JOB_CREATION_OPTIONAL");
    assert_eq!(body["useLegacySql"], false);
    assert_eq!(body["formatOptions"]["useInt64Timestamp"], true);
    assert_eq!(body["location"], "EU");
    assert!(body["requestId"].as_str().unwrap().len() >= 32);
}

#[tokio::test]
async fn retries_server_errors_with_the_same_request_id() {
    let server = MockServer::start().await;
    struct FlakyThenOk(Arc<AtomicUsize>);
    impl Respond for FlakyThenOk {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            match self.0.fetch_add(1, Ordering::SeqCst) {
                0 => ResponseTemplate::new(503).set_body_json(json!({"error": {"code": 503, "message": "Backend error",
                        "errors": [{"reason": "backendError", "message": "Backend error"}]}})),
                1 => ResponseTemplate::new(500).set_body_string("oops"),
                _ => ResponseTemplate::new(200).set_body_json(json!({
                    "schema": schema(), "rows": rows(1, 1), "totalRows": "1", "jobComplete": true, "queryId": "q1"})),
            }
        }
    }
    let calls = Arc::new(AtomicUsize::new(0));
    Mock::given(method("POST"))
        .and(path("/bigquery/v2/projects/p/queries"))
        .respond_with(FlakyThenOk(calls.clone()))
        .mount(&server)
        .await;
    let c = client(&server).await;
    let results = c.query("SELECT 1").run().await.unwrap();
    assert_eq!(results.stats().query_id.as_deref(), Some("q1"));
    assert!(results.job_reference().is_none());
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    let reqs = server.received_requests().await.unwrap();
    let ids: Vec<Value> = reqs
        .iter()
        .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap()["requestId"].clone())
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] == w[1]),
        "request ids differ: {ids:?}"
    );
}

/// A 429 with `Retry-After` is sent again after the wait the server asked for, not the
/// policy's (1 ms) backoff.
#[tokio::test]
async fn retry_after_is_honoured() {
    let server = MockServer::start().await;
    struct ThrottledThenOk(Arc<AtomicUsize>);
    impl Respond for ThrottledThenOk {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            match self.0.fetch_add(1, Ordering::SeqCst) {
                0 => ResponseTemplate::new(429)
                    .insert_header("Retry-After", "1")
                    .set_body_json(json!({"error": {"code": 429, "message": "slow down",
                        "errors": [{"reason": "rateLimitExceeded", "message": "slow down"}]}})),
                _ => ResponseTemplate::new(200).set_body_json(json!({
                    "tableReference": {"projectId": "p", "datasetId": "d", "tableId": "t"}})),
            }
        }
    }
    let calls = Arc::new(AtomicUsize::new(0));
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/datasets/d/tables/t"))
        .respond_with(ThrottledThenOk(calls.clone()))
        .mount(&server)
        .await;
    let c = client(&server).await;
    let started = std::time::Instant::now();
    let t = c.get_table("d.t").await.unwrap();
    assert_eq!(t.table_id(), "t");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_the_reason() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/bigquery/v2/projects/p/queries"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {"code": 400,
            "message": "Syntax error: Unexpected identifier \"SELEC\" at [1:1]",
            "errors": [{"reason": "invalidQuery", "location": "query", "message": "Syntax error"}], "status": "INVALID_ARGUMENT"}})))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server).await;
    let e = c.query("SELEC 1").run().await.unwrap_err();
    assert!(e.is_invalid_query());
    assert_eq!(e.status(), Some(400));
    assert!(!e.is_retryable());
    assert!(e.to_string().contains("SELEC"), "{e}");
}

#[tokio::test]
async fn gives_up_after_the_policy_and_reports_attempts() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/datasets/d/tables/t"))
        .respond_with(ResponseTemplate::new(503).set_body_string("unavailable"))
        .expect(3)
        .mount(&server)
        .await;
    let c = Client::builder()
        .with_project("p")
        .with_emulator(server.uri())
        .with_retry_policy(RetryPolicy {
            max_attempts: 3,
            initial_backoff: std::time::Duration::from_millis(1),
            ..Default::default()
        })
        .build()
        .await
        .unwrap();
    let e = c.get_table("d.t").await.unwrap_err();
    assert_eq!(e.attempts(), 3);
    assert!(e.is_retryable());
}

#[tokio::test]
async fn recorded_page_bodies_decode() {
    // The first page of a real BigQuery response (http/jobs/page_first_page_only), with its
    // placeholders filled in.
    let server = MockServer::start().await;
    let mut first = json!({
        "kind": "bigquery#queryResponse",
        "schema": schema(),
        "jobReference": {"projectId": "p", "jobId": "j9", "location": "US"},
        "totalRows": "100", "pageToken": "t2", "rows": rows(1, 25),
        "totalBytesProcessed": "0", "jobComplete": true, "cacheHit": false, "queryId": "q",
        "jobCreationReason": {"code": "LARGE_RESULTS"}, "totalBytesBilled": "0", "location": "US"
    });
    first["creationTime"] = "1".into();
    Mock::given(method("POST"))
        .and(path("/bigquery/v2/projects/p/queries"))
        .respond_with(ResponseTemplate::new(200).set_body_json(first))
        .mount(&server)
        .await;
    for (tok, from, next) in [
        ("t2", 26, Some("t3")),
        ("t3", 51, Some("t4")),
        ("t4", 76, None),
    ] {
        let mut body = json!({"kind": "bigquery#getQueryResultsResponse", "schema": schema(),
            "jobReference": {"projectId": "p", "jobId": "j9", "location": "US"}, "totalRows": "100",
            "rows": rows(from, from + 24), "jobComplete": true});
        if let Some(n) = next {
            body["pageToken"] = n.into();
        }
        Mock::given(method("GET"))
            .and(path("/bigquery/v2/projects/p/queries/j9"))
            .and(query_param("pageToken", tok))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .expect(1)
            .mount(&server)
            .await;
    }
    let c = client(&server).await;
    let mut stream = c
        .query("SELECT n FROM UNNEST(GENERATE_ARRAY(1, 100)) AS n ORDER BY n")
        .batches()
        .await
        .unwrap();
    let mut all = Vec::new();
    while let Some(b) = stream.next().await {
        let b = b.unwrap();
        all.extend(
            b.column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .unwrap()
                .values()
                .iter()
                .copied(),
        );
    }
    assert_eq!(all, (1..=100).collect::<Vec<i64>>());
}

#[tokio::test]
async fn a_bad_cell_names_column_and_global_row() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/bigquery/v2/projects/p/queries"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "schema": schema(), "jobReference": {"projectId": "p", "jobId": "j", "location": "US"},
            "totalRows": "4", "pageToken": "x", "rows": rows(1, 2), "jobComplete": true})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/queries/j"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "schema": schema(), "totalRows": "4", "rows": [{"f": [{"v": "3"}]}, {"f": [{"v": "four"}]}], "jobComplete": true})))
        .mount(&server)
        .await;
    let c = client(&server).await;
    let e = c.query("q").fetch_all::<(i64,)>().await.unwrap_err();
    let ce = e.codec_error().unwrap();
    assert_eq!(ce.column(), Some("n"));
    assert_eq!(ce.row(), Some(3));
    assert_eq!(ce.value(), Some("four"));
}

/// A result with more pages than the first response: with a Storage endpoint the client
/// looks up the job's destination table and reads it over gRPC; without one, or with
/// `use_storage_read(false)`, it pages through REST.
#[tokio::test]
async fn large_results_go_to_storage_read_only_where_a_storage_endpoint_is_set() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/bigquery/v2/projects/p/queries"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "schema": schema(), "rows": rows(1, 2), "totalRows": "3", "pageToken": "page2",
            "jobComplete": true, "jobCreationReason": {"code": "LARGE_RESULTS"},
            "jobReference": {"projectId": "p", "jobId": "job9", "location": "US"}
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/queries/job9"))
        .and(query_param("pageToken", "page2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "schema": schema(), "totalRows": "3", "rows": rows(3, 3), "jobComplete": true
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/jobs/job9"))
        .and(query_param("location", "US"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "jobReference": {"projectId": "p", "jobId": "job9", "location": "US"},
            "status": {"state": "DONE"},
            "configuration": {"query": {"destinationTable":
                {"projectId": "p", "datasetId": "_anon", "tableId": "result9"}}}
        })))
        .mount(&server)
        .await;

    // REST emulator only: paging, never a gRPC call (which would go to Google).
    let rest_only = client(&server).await;
    let results = rest_only.query("SELECT n").run().await.unwrap();
    assert!(!results.reads_with_storage_api());
    let got: Vec<(i64,)> = results.fetch_all().await.unwrap();
    assert_eq!(got, vec![(1,), (2,), (3,)]);

    // With a Storage endpoint (nothing listens on it here), the read goes there after
    // jobs.get, and its failure is the caller's error rather than a silent fallback.
    let with_storage = Client::builder()
        .with_project("p")
        .with_emulator(server.uri())
        .with_emulator_grpc("127.0.0.1:1")
        .with_retry_policy(RetryPolicy {
            max_attempts: 1,
            ..Default::default()
        })
        .build()
        .await
        .unwrap();
    let results = with_storage.query("SELECT n").run().await.unwrap();
    assert!(results.reads_with_storage_api());
    let batches = results.into_batches();
    assert!(batches.is_storage_read());
    let err = batches.try_collect().await.unwrap_err();
    assert!(
        err.is_retryable() || err.kind() == bigq::ErrorKind::Transport,
        "{err}"
    );
    let reqs = server.received_requests().await.unwrap();
    let gets: Vec<_> = reqs
        .iter()
        .filter(|r| r.url.path() == "/bigquery/v2/projects/p/jobs/job9")
        .collect();
    assert_eq!(gets.len(), 1, "one jobs.get for the destination table");

    // use_storage_read(false) keeps REST paging.
    let results = with_storage
        .query("SELECT n")
        .use_storage_read(false)
        .run()
        .await
        .unwrap();
    assert!(!results.reads_with_storage_api());
    let got: Vec<(i64,)> = results.fetch_all().await.unwrap();
    assert_eq!(got, vec![(1,), (2,), (3,)]);
}

/// A listing is a stream: a page is fetched when the items before it have been read, so
/// taking the first dataset costs one request however many pages there are.
#[tokio::test]
async fn listings_fetch_pages_as_they_are_read() {
    use futures::TryStreamExt;
    let server = MockServer::start().await;
    let dataset = |id: &str| json!({"datasetReference": {"projectId": "p", "datasetId": id}});
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/datasets"))
        .and(wiremock::matchers::query_param_is_missing("pageToken"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "datasets": [dataset("a"), dataset("b")], "nextPageToken": "p2"})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/datasets"))
        .and(query_param("pageToken", "p2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "datasets": [dataset("c")], "nextPageToken": ""})))
        .mount(&server)
        .await;
    let c = client(&server).await;
    let mut listing = c.list_datasets(None, false);
    let first = listing.try_next().await.unwrap().unwrap();
    assert_eq!(first.dataset_id(), "a");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    let rest: Vec<String> = listing
        .map_ok(|d| d.dataset_id().to_string())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rest, ["b", "c"]);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    // A dataset id that does not parse is the listing's one item.
    let bad: Vec<_> = c.list_tables("a/b").collect().await;
    assert!(bad.len() == 1 && bad[0].is_err(), "{bad:?}");
}

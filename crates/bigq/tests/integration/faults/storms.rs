//! Error storms: 429, 503, UNAVAILABLE and RESOURCE_EXHAUSTED on REST (wiremock) and gRPC
//! (the storm server): retried with jittered backoff, bounded by the policy's time budget,
//! ending in a typed error; a gRPC `RetryInfo` is honoured (no attempt before its delay).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bigq::{Client, RetryPolicy, Transport};
use serde_json::json;
use tonic::Code;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::read::seeded_emulator;
use crate::netbed::storm::{Reply, Storm};

const BACKOFF: Duration = Duration::from_millis(40);
const MAX_BACKOFF: Duration = Duration::from_millis(80);
const BUDGET: Duration = Duration::from_millis(1500);

/// Short waits and a short total budget.
fn storm_policy() -> RetryPolicy {
    RetryPolicy::default()
        .with_initial_backoff(BACKOFF)
        .with_max_backoff(MAX_BACKOFF)
        .with_attempt_timeout(Duration::from_secs(5))
        .with_total_timeout(BUDGET)
}

/// The gaps between consecutive instants.
fn gaps(at: &[Instant]) -> Vec<Duration> {
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

/// Jitter: the waits are spread, not the same backoff each time, and none is longer than
/// the policy's cap (with room for scheduling).
fn assert_jittered(what: &str, gaps: &[Duration]) {
    assert!(
        gaps.len() >= 5,
        "{what}: only {} retries: {gaps:?}",
        gaps.len()
    );
    let max = gaps.iter().max().unwrap();
    let min = gaps.iter().min().unwrap();
    assert!(
        *max <= MAX_BACKOFF + Duration::from_millis(150),
        "{what}: a wait beyond the cap: {gaps:?}"
    );
    assert!(
        *max - *min >= Duration::from_millis(15),
        "{what}: waits without jitter: {gaps:?}"
    );
}

/// A REST server answering `GET .../tables/t` with 429s and 503s for `storm` requests,
/// then the table; it logs when each request came.
struct RestStorm {
    storm: usize,
    seen: Arc<Mutex<Vec<Instant>>>,
}

impl Respond for RestStorm {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut seen = self.seen.lock().unwrap();
        seen.push(Instant::now());
        let n = seen.len();
        if n > self.storm {
            return ResponseTemplate::new(200).set_body_json(json!({
                "tableReference": {"projectId": "p", "datasetId": "d", "tableId": "t"}}));
        }
        if n.is_multiple_of(2) {
            ResponseTemplate::new(429).set_body_json(json!({"error": {"code": 429,
                "message": "Exceeded rate limits", "status": "RESOURCE_EXHAUSTED",
                "errors": [{"reason": "rateLimitExceeded", "message": "Exceeded rate limits"}]}}))
        } else {
            ResponseTemplate::new(503).set_body_json(json!({"error": {"code": 503,
                "message": "Backend error", "status": "UNAVAILABLE",
                "errors": [{"reason": "backendError", "message": "Backend error"}]}}))
        }
    }
}

async fn rest_storm(storm: usize) -> (MockServer, Arc<Mutex<Vec<Instant>>>, Client) {
    let server = MockServer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("GET"))
        .and(path("/bigquery/v2/projects/p/datasets/d/tables/t"))
        .respond_with(RestStorm {
            storm,
            seen: seen.clone(),
        })
        .mount(&server)
        .await;
    let client = Client::builder()
        .with_project("p")
        .with_emulator(server.uri())
        .with_retry_policy(storm_policy())
        .build()
        .await
        .unwrap();
    (server, seen, client)
}

#[tokio::test]
async fn a_rest_storm_of_429_and_503_is_ridden_out_with_jitter() {
    let (_server, seen, client) = rest_storm(8).await;
    let t = client.get_table("d.t").await.unwrap();
    assert_eq!(t.table_id(), "t");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 9, "8 failures, then the answer");
    assert_jittered("REST storm", &gaps(&seen));
}

#[tokio::test]
async fn a_rest_storm_longer_than_the_budget_ends_in_a_typed_error() {
    let (_server, seen, client) = rest_storm(usize::MAX).await;
    let t = Instant::now();
    let e = client.get_table("d.t").await.unwrap_err();
    let took = t.elapsed();
    let seen = seen.lock().unwrap().len();
    // The last answer, or the overall deadline when it passed during an attempt.
    assert!(
        matches!(e.status(), Some(429 | 503)) || e.deadline() == Some(bigq::Deadline::Total),
        "{e:?}"
    );
    assert!(
        (e.attempts() as usize).abs_diff(seen) <= 1,
        "{seen} seen: {e:?}"
    );
    assert!(seen >= 10, "{seen} attempts in {took:?}");
    assert!(
        took <= BUDGET + Duration::from_millis(300),
        "the budget bounds the storm: {took:?}"
    );
    assert!(
        e.elapsed()
            .is_some_and(|d| d <= BUDGET + Duration::from_millis(300)),
        "{e:?}"
    );
}

/// `CreateReadSession` calls the storm server saw.
fn sessions(storm: &Storm) -> Vec<Instant> {
    storm
        .log()
        .into_iter()
        .filter(|s| s.path.ends_with("/CreateReadSession"))
        .map(|s| s.at)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_storm_is_ridden_out_and_retry_info_is_honoured() {
    let (emu, want) = seeded_emulator(5_000).await;
    let hint = Duration::from_millis(600);
    let script = vec![
        Reply::Fail(Code::Unavailable, None),
        Reply::Fail(Code::Unavailable, None),
        Reply::Fail(Code::ResourceExhausted, Some(hint)),
        Reply::Fail(Code::Unavailable, None),
        Reply::Fail(Code::ResourceExhausted, Some(Duration::from_millis(50))),
        Reply::Fail(Code::Unavailable, None),
        Reply::Fail(Code::Unavailable, None),
    ];
    let (storm, addr) = Storm::start(
        "127.0.0.1:0".parse().unwrap(),
        script,
        Reply::Forward,
        Some(emu.grpc_endpoint()),
    )
    .await;
    let client = Client::builder()
        .with_project("test-project")
        .with_emulator(emu.rest_endpoint())
        .with_emulator_grpc(format!("http://{addr}"))
        .with_retry_policy(storm_policy().with_total_timeout(Duration::from_secs(20)))
        .build()
        .await
        .unwrap();
    let batches = super::read::read_all(&client).await.unwrap();
    assert_eq!(super::Checksum::of(&batches), want);
    let at = sessions(&storm);
    assert_eq!(at.len(), 8, "7 failures, then the session");
    let g = gaps(&at);
    // The attempt after the RetryInfo waits at least its delay, far beyond the backoff cap.
    assert!(
        g[2] >= hint,
        "RetryInfo asked for {hint:?}, waited {:?}",
        g[2]
    );
    let others: Vec<Duration> = g
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, d)| *d)
        .collect();
    assert!(
        others.iter().all(|d| *d < hint),
        "only the hinted wait is long: {g:?}"
    );
    emu.shutdown().await;
}

#[tokio::test]
async fn a_grpc_storm_longer_than_the_budget_ends_in_a_typed_error() {
    let (storm, addr) = Storm::start(
        "127.0.0.1:0".parse().unwrap(),
        vec![],
        Reply::Fail(Code::Unavailable, None),
        None,
    )
    .await;
    let client = Client::builder()
        .with_project("p")
        .with_emulator(format!("http://{addr}"))
        .with_emulator_grpc(format!("http://{addr}"))
        .with_transport(Transport::Grpc)
        .with_retry_policy(storm_policy())
        .build()
        .await
        .unwrap();
    let t = Instant::now();
    let e = client.read("ds.t").batches().await.unwrap_err();
    let took = t.elapsed();
    let at = sessions(&storm);
    assert_eq!(e.status(), Some(503), "UNAVAILABLE: {e:?}");
    assert_eq!(e.attempts() as usize, at.len(), "{e:?}");
    assert_jittered("gRPC storm", &gaps(&at));
    assert!(
        took <= BUDGET + Duration::from_millis(300),
        "the budget bounds the storm: {took:?}"
    );
}

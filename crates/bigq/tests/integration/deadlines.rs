//! Every call ends by a deadline: against a server on loopback that accepts connections and
//! never answers, REST and gRPC queries, admin calls and Storage Read fail with a timeout
//! that names the deadline, after retrying within the policy.

use std::net::SocketAddr;
use std::time::Duration;

use bigq::{Client, Deadline, RetryPolicy, Transport};
use tokio::net::TcpListener;

/// A server that accepts every connection and holds it open without a byte in reply.
async fn silent_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    addr
}

fn policy() -> RetryPolicy {
    RetryPolicy::default()
        .with_initial_backoff(Duration::from_millis(10))
        .with_max_backoff(Duration::from_millis(20))
        .with_attempt_timeout(Duration::from_millis(300))
        .with_total_timeout(Duration::from_millis(1000))
}

async fn client(addr: SocketAddr, transport: Transport) -> Client {
    Client::builder()
        .with_project("p")
        .with_emulator(format!("http://{addr}"))
        .with_emulator_grpc(format!("http://{addr}"))
        .with_transport(transport)
        .with_retry_policy(policy())
        .build()
        .await
        .unwrap()
}

/// The call's error, or a failure if it did not end well within a minute.
async fn ends<T>(
    what: &str,
    call: impl std::future::Future<Output = bigq::Result<T>>,
) -> bigq::Error {
    match tokio::time::timeout(Duration::from_secs(60), call).await {
        Ok(Ok(_)) => panic!("{what} succeeded against a silent server"),
        Ok(Err(e)) => e,
        Err(_) => panic!("{what} did not end by its deadline"),
    }
}

/// A timeout at the overall deadline after at least `attempts` attempts: 300 ms attempts
/// within a 1 s budget are abandoned and retried, but a long poll (a query, which asks the
/// server to hold it for seconds) gets that wait on top, so its first attempt runs into
/// the overall deadline.
fn check(what: &str, e: &bigq::Error, attempts: u32) {
    assert!(e.is_timeout(), "{what}: {e:?}");
    assert!(
        !e.is_retryable(),
        "{what}: the overall deadline ends the call: {e:?}"
    );
    assert_eq!(e.deadline(), Some(Deadline::Total), "{what}: {e:?}");
    assert!(e.attempts() >= attempts, "{what}: {e:?}");
    assert!(
        e.to_string().contains("the overall deadline"),
        "{what}: {e}"
    );
}

#[tokio::test]
async fn a_silent_server_ends_rest_calls_by_their_deadline() {
    let addr = silent_server().await;
    let c = client(addr, Transport::Rest).await;
    let e = ends("REST query", c.query("SELECT 1").batches()).await;
    check("REST query", &e, 1);
    let e = ends("REST get_table", c.get_table("ds.t")).await;
    check("REST get_table", &e, 3);
}

#[tokio::test]
async fn a_silent_server_ends_grpc_calls_by_their_deadline() {
    let addr = silent_server().await;
    let c = client(addr, Transport::Grpc).await;
    let e = ends("gRPC query", c.query("SELECT 1").batches()).await;
    check("gRPC query", &e, 1);
    let e = ends("Storage Read", c.read("ds.t").batches()).await;
    check("Storage Read", &e, 3);
}

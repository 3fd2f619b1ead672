//! Half-open connections on loopback: the proxy stops forwarding mid-response and holds both
//! sockets open (a peer gone without a FIN or RST), and new connections are accepted and
//! never answered. Every call ends by its deadline, and the error says which one.

use std::time::{Duration, Instant};

use bigq::{Client, RetryPolicy};

use super::read::{proxy_for, seeded_emulator};
use crate::netbed::proxy::{CutMode, Dir};

const TOTAL: Duration = Duration::from_secs(3);

/// The error is a timeout that names the deadline that passed, and came by the total
/// budget (with room for the last attempt to notice).
pub fn assert_names_its_deadline(what: &str, e: &bigq::Error, took: Duration, total: Duration) {
    assert!(e.is_timeout(), "{what}: not a timeout: {e:?}");
    let deadline = e
        .deadline()
        .unwrap_or_else(|| panic!("{what}: no deadline named: {e:?}"));
    assert!(
        e.to_string().contains(&deadline.to_string()),
        "{what}: the message does not say {deadline}: {e}"
    );
    assert!(
        took <= total + Duration::from_secs(2),
        "{what}: took {took:?}, the budget is {total:?}"
    );
    eprintln!("{what}: ended after {took:?}: {e}");
}

fn policy() -> RetryPolicy {
    RetryPolicy::default()
        .with_initial_backoff(Duration::from_millis(20))
        .with_max_backoff(Duration::from_millis(100))
        .with_attempt_timeout(Duration::from_millis(600))
        .with_idle_timeout(Duration::from_millis(600))
        .with_total_timeout(TOTAL)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_end_reads_and_calls_by_their_deadline() {
    let (emu, _) = seeded_emulator(50_000).await;
    let grpc = proxy_for(emu.grpc_addr()).await;
    let rest = proxy_for(emu.local_addr()).await;
    let client = Client::builder()
        .with_project("test-project")
        .with_emulator(rest.url())
        .with_emulator_grpc(grpc.url())
        .with_retry_policy(policy())
        .build()
        .await
        .unwrap();

    // Storage Read: the connection (made by a first call that went through) goes silent
    // 200 kB into the rows; the streams reopen only to find new connections unanswered.
    client.read("ds.scan").session().await.unwrap();
    grpc.cut_after(Dir::Down, 200_000, CutMode::Silence);
    grpc.blackhole_new_connections(true);
    let t = Instant::now();
    let e = super::read::read_all(&client).await.unwrap_err();
    assert_eq!(grpc.cuts_fired(), 1, "the cut fell inside the read");
    assert_names_its_deadline("Storage Read, half-open", &e, t.elapsed(), TOTAL);

    // REST: a response cut after its first bytes, then silence (on a connection made by a
    // call that went through).
    client.get_table("ds.scan").await.unwrap();
    rest.cut_after(Dir::Down, 40, CutMode::Silence);
    rest.blackhole_new_connections(true);
    let t = Instant::now();
    let e = client.get_table("ds.scan").await.unwrap_err();
    // The pool may open a new connection (unanswered) instead of reusing the cut one:
    // either way the call must end by its deadline.
    eprintln!("get_table, half-open: {} cut(s) fired", rest.cuts_fired());
    assert_names_its_deadline("get_table, half-open", &e, t.elapsed(), TOTAL);
    emu.shutdown().await;
}

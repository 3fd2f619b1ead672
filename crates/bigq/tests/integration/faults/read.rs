//! ReadRows over a large table on 4 streams, with the connection cut at random byte counts
//! by the proxy: every row arrives exactly once (checked by a checksum of all columns
//! against the rows written), whatever the cut does (reset or clean close).

use std::net::SocketAddr;
use std::time::Instant;

use bigq::Client;
use bigq::arrow::RecordBatch;

use super::{Checksum, cut_points, quick_policy, read_rows, rng, scan_batches, scan_schema};
use crate::netbed::proxy::{CutMode, Dir, Proxy};

/// bigq-emulator in-process on loopback with `ds.scan` of `rows` rows.
pub async fn seeded_emulator(rows: usize) -> (bigq_emulator::Emulator, Checksum) {
    let emu = bigq_emulator::Emulator::builder()
        .with_project("test-project")
        .start()
        .await
        .expect("start bigq-emulator");
    let batches = scan_batches(rows, 8192);
    let want = Checksum::of(&batches);
    let setup = Client::builder()
        .with_project(emu.project())
        .with_emulator(emu.rest_endpoint())
        .build()
        .await
        .unwrap();
    setup
        .create_dataset(bigq::admin::Dataset::new("ds"))
        .await
        .unwrap();
    emu.create_table_with_batches("test-project", "ds", "scan", scan_schema(), batches)
        .unwrap();
    (emu, want)
}

/// A client of the emulator's REST side, with Storage through `grpc`.
pub async fn client_via(rest: &str, grpc: &str) -> Client {
    Client::builder()
        .with_project("test-project")
        .with_emulator(rest)
        .with_emulator_grpc(grpc)
        .with_retry_policy(quick_policy())
        .build()
        .await
        .unwrap()
}

/// Reads `ds.scan` on 4 streams, all batches.
pub async fn read_all(client: &Client) -> bigq::Result<Vec<RecordBatch>> {
    let stream = client.read("ds.scan").max_streams(4).batches().await?;
    assert_eq!(stream.stream_count(), 4, "4 streams asked for");
    stream.try_collect().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_rows_cut_at_random_points_delivers_every_row_once() {
    let rows = read_rows();
    let (emu, want) = seeded_emulator(rows).await;
    assert_eq!(want.rows, rows as u64);
    let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), emu.grpc_addr()).await;
    let client = client_via(&emu.rest_endpoint(), &proxy.url()).await;

    // A clean read first: it must match, and it measures the bytes a read takes.
    let t = Instant::now();
    let clean = read_all(&client).await.unwrap();
    let clean_time = t.elapsed();
    assert_eq!(Checksum::of(&clean), want, "clean read");
    let total = proxy.bytes(Dir::Down);
    drop(clean);

    // Cuts within 5%..85% of a read's bytes, so that every one falls inside the next read.
    let mut rng = rng("read_rows_cut");
    let n = 6;
    let points = cut_points(&mut rng, n, total * 80 / 100);
    let mut last = 0;
    for (i, p) in points.iter().enumerate() {
        let at = total * 5 / 100 + p;
        let mode = if i % 2 == 0 {
            CutMode::Reset
        } else {
            CutMode::Close
        };
        proxy.cut_after(Dir::Down, at - last, mode);
        last = at;
    }
    let fired_before = proxy.cuts_fired();
    let t = Instant::now();
    let cut = read_all(&client).await.unwrap();
    let cut_time = t.elapsed();
    let fired = proxy.cuts_fired() - fired_before;
    assert_eq!(fired, points.len() as u64, "every cut fell inside the read");
    assert_eq!(Checksum::of(&cut), want, "read through {fired} cuts");
    eprintln!(
        "read_rows_cut: {rows} rows, 4 streams, {total} bytes; clean {clean_time:?}, \
         {fired} cuts {cut_time:?}, {} connections",
        proxy.connections()
    );
    emu.shutdown().await;
}

/// The loopback address of a proxy for `upstream`.
pub async fn proxy_for(upstream: SocketAddr) -> Proxy {
    Proxy::start("127.0.0.1:0".parse().unwrap(), upstream).await
}

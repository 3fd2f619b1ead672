//! Change data capture at scale through cut connections: random upserts and deletes over a
//! key space, sent out of order with sequence numbers on the `_default` stream while the
//! proxy cuts the connection at random byte counts. The `_default` stream is at least once
//! (a request resent after a cut may be applied twice), which sequence numbers make
//! harmless: the table must come out as the in-memory model says, key by key.

use std::collections::HashMap;
use std::time::Instant;

use bigq::Client;
use bigq::admin::{Dataset, Table};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq::write::{Change, ChangeSequence};
use rand::Rng;
use rand::seq::SliceRandom;
use serde::Serialize;

use super::{cut_points, quick_policy, rng};
use crate::netbed::proxy::{CutMode, Dir, Proxy};

#[derive(Debug, Clone, Serialize)]
struct Row {
    id: i64,
    v: i64,
}

/// Changes sent: `BIGQ_CDC_CHANGES`, else 1M (over a tenth as many keys).
fn changes() -> usize {
    std::env::var("BIGQ_CDC_CHANGES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_upserts_and_deletes_out_of_order_through_cuts_match_the_model() {
    let emu = bigq_emulator::Emulator::builder()
        .with_project("test-project")
        .start()
        .await
        .unwrap();
    let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), emu.grpc_addr()).await;
    let client = Client::builder()
        .with_project("test-project")
        .with_emulator(emu.rest_endpoint())
        .with_emulator_grpc(proxy.url())
        .with_retry_policy(quick_policy())
        .build()
        .await
        .unwrap();
    client.create_dataset(Dataset::new("ds")).await.unwrap();
    let schema = TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("v", FieldType::Int64),
    ]);
    client
        .create_table(Table::new("ds.cdc", schema).with_primary_key(["id"]))
        .await
        .unwrap();

    let mut rng = rng("cdc_through_cuts");
    let n = changes();
    let keys = (n / 10).max(1) as i64;
    // Change i has sequence number i + 1 (in two sections, so that sections are compared),
    // and the model applies them in that order: each key ends as its last change says.
    let mut sent: Vec<Change<Row>> = Vec::with_capacity(n);
    let mut model: HashMap<i64, Option<i64>> = HashMap::new();
    for i in 0..n as u64 {
        let id = rng.random_range(0..keys);
        let seq = ChangeSequence::from([(i + 1) >> 20, (i + 1) & 0xF_FFFF]);
        let change = if rng.random_bool(0.3) {
            model.insert(id, None);
            Change::delete(Row { id, v: 0 })
        } else {
            let v = rng.random::<i64>();
            model.insert(id, Some(v));
            Change::upsert(Row { id, v })
        };
        sent.push(change.with_sequence(seq));
    }
    sent.shuffle(&mut rng);

    // Three cuts on the request path within 10%..70% of the least the changes take.
    let bytes = n as u64 * 20;
    let points = cut_points(&mut rng, 3, bytes * 60 / 100);
    let mut last = 0;
    for (i, p) in points.iter().enumerate() {
        let at = bytes / 10 + p;
        let mode = if i % 2 == 0 {
            CutMode::Reset
        } else {
            CutMode::Close
        };
        proxy.cut_after(Dir::Up, at - last, mode);
        last = at;
    }

    let t = Instant::now();
    let mut w = client
        .write("ds.cdc")
        .default_stream()
        .max_request_bytes(512 * 1024)
        .open()
        .await
        .unwrap();
    for chunk in sent.chunks(10_000) {
        w.append_changes(chunk).await.unwrap();
    }
    let summary = w.finish().await.unwrap();
    let written = t.elapsed();
    assert_eq!(
        proxy.cuts_fired(),
        points.len() as u64,
        "every cut fell inside the write"
    );
    assert!(summary.retries >= 1, "{summary:?}");

    let got: Vec<(i64, Option<i64>)> = client
        .query("SELECT id, v FROM ds.cdc")
        .fetch_all()
        .await
        .unwrap();
    let mut table: HashMap<i64, Option<i64>> = HashMap::new();
    let duplicates: Vec<i64> = got
        .iter()
        .filter(|(id, v)| table.insert(*id, *v).is_some())
        .map(|(id, _)| *id)
        .take(5)
        .collect();
    assert!(
        duplicates.is_empty(),
        "keys with more than one row: {duplicates:?}"
    );
    let want: HashMap<i64, Option<i64>> = model
        .iter()
        .filter_map(|(id, v)| v.map(|v| (*id, Some(v))))
        .collect();
    // The first keys that differ, each with its changes in sequence order.
    let wrong: Vec<_> = (0..keys)
        .filter(|id| table.get(id) != want.get(id))
        .take(3)
        .map(|id| {
            let history: Vec<_> = sent
                .iter()
                .filter(|c| c.row.id == id)
                .map(|c| (c.kind, c.sequence.map(|s| s.to_string()), c.row.v))
                .collect();
            (id, table.get(&id).copied(), want.get(&id).copied(), history)
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} keys differ; first (key, got, want, changes in sending order): {wrong:?}",
        (0..keys).filter(|id| table.get(id) != want.get(id)).count()
    );
    eprintln!(
        "cdc_through_cuts: {n} changes over {keys} keys, {} live, {} cuts, {} requests ({} retries): written in {written:?}, {:?} in all",
        want.len(),
        proxy.cuts_fired(),
        summary.requests,
        summary.retries,
        t.elapsed()
    );
    emu.shutdown().await;
}

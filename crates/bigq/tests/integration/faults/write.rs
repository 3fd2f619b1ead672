//! AppendRows on every stream type (`_default`, COMMITTED, PENDING, BUFFERED) with the
//! connection cut at random points of the request bytes by the proxy: every row lands, none
//! twice, checked by query against figures computed from the rows sent.
//!
//! `_default` promises at least once (a request resent after a cut that lost only its
//! response is written twice), so it is written here with one request in flight: a cut on
//! the request path then always falls in a request the server has not taken, and exactly
//! once is what must come out.

use std::time::Instant;

use bigq::Client;
use bigq::admin::{Dataset, Table};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use serde::Serialize;

use super::{cut_points, quick_policy, rng};
use crate::netbed::proxy::{CutMode, Dir, Proxy};

/// The stream types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Default,
    Committed,
    Pending,
    Buffered,
}

pub const KINDS: [Kind; 4] = [
    Kind::Default,
    Kind::Committed,
    Kind::Pending,
    Kind::Buffered,
];

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    id: i64,
    name: Option<String>,
    payload: String,
}

pub fn rows(n: i64) -> Vec<Row> {
    (1..=n)
        .map(|id| Row {
            id,
            name: (id % 3 != 0).then(|| format!("row {id}")),
            payload: format!("{id:08}-{}", "p".repeat((id % 40) as usize)),
        })
        .collect()
}

/// A lower bound of the bytes the rows take on the wire.
pub fn wire_bytes(rows: &[Row]) -> u64 {
    rows.iter()
        .map(|r| 8 + r.payload.len() as u64 + r.name.as_ref().map_or(0, |n| n.len() as u64))
        .sum()
}

/// Count, distinct ids, sum of ids, sum of payload lengths.
pub type Figures = (i64, i64, i64, i64);

pub fn figures(rows: &[Row]) -> Figures {
    let n = rows.len() as i64;
    (
        n,
        n,
        rows.iter().map(|r| r.id).sum(),
        rows.iter().map(|r| r.payload.len() as i64).sum(),
    )
}

fn schema() -> TableSchema {
    TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("name", FieldType::String),
        TableFieldSchema::new("payload", FieldType::String).with_mode(FieldMode::Required),
    ])
}

/// Creates dataset `ds` (if missing) and table `ds.<table>`.
pub async fn create_table(client: &Client, table: &str) {
    match client.create_dataset(Dataset::new("ds")).await {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("create dataset: {e}"),
    }
    client
        .create_table(Table::new(format!("ds.{table}"), schema()))
        .await
        .unwrap();
}

/// Writes `rows` to `ds.<table>` through a stream of `kind`, in small requests, and makes
/// them visible.
pub async fn write(client: &Client, table: &str, kind: Kind, rows: &[Row]) -> bigq::Result<()> {
    let b = client
        .write(format!("ds.{table}"))
        .max_request_bytes(64 * 1024);
    let b = match kind {
        Kind::Default => b.default_stream().max_in_flight(1),
        Kind::Committed => b.committed(),
        Kind::Pending => b.pending(),
        Kind::Buffered => b.buffered(),
    };
    let mut w = b.open().await?;
    for (i, chunk) in rows.chunks(1000).enumerate() {
        w.append(chunk).await?;
        if kind == Kind::Buffered && i % 5 == 4 {
            w.flush().await?;
        }
    }
    match kind {
        Kind::Pending => {
            w.commit().await?;
        }
        Kind::Buffered => {
            w.flush().await?;
            w.finish().await?;
        }
        Kind::Default | Kind::Committed => {
            w.finish().await?;
        }
    }
    Ok(())
}

/// The table's [`Figures`] by query.
pub async fn table_figures(client: &Client, table: &str) -> Figures {
    let got: Vec<(i64, i64, Option<i64>, Option<i64>)> = client
        .query(format!(
            "SELECT COUNT(*), COUNT(DISTINCT id), SUM(id), SUM(LENGTH(payload)) FROM ds.{table}"
        ))
        .fetch_all()
        .await
        .unwrap();
    let (n, d, s, l) = got[0];
    (n, d, s.unwrap_or(0), l.unwrap_or(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_rows_on_every_stream_type_through_cuts_lands_every_row_once() {
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
    let mut rng = rng("append_rows_cuts");
    let data = rows(40_000);
    let want = figures(&data);
    let bytes = wire_bytes(&data);
    for kind in KINDS {
        let table = format!("w_{kind:?}").to_lowercase();
        create_table(&client, &table).await;
        // Three cuts on the request path within 10%..70% of the least the rows take, so all
        // fall inside the write; resets and clean closes alternate.
        let points = cut_points(&mut rng, 3, bytes * 60 / 100);
        let fired_before = proxy.cuts_fired();
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
        write(&client, &table, kind, &data)
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
        let fired = proxy.cuts_fired() - fired_before;
        assert_eq!(
            fired,
            points.len() as u64,
            "{kind:?}: every cut fell inside the write"
        );
        assert_eq!(proxy.cuts_pending(), 0);
        assert_eq!(
            table_figures(&client, &table).await,
            want,
            "{kind:?} through {fired} cuts"
        );
        eprintln!(
            "append_rows_cuts: {kind:?}: {} rows, {fired} cuts, {:?}",
            data.len(),
            t.elapsed()
        );
    }
    emu.shutdown().await;
}

//! bench-compare's bigq contender: runs one scenario once and prints one JSON line with
//! what it measured inside the process (wall and CPU time of the timed part, rows, the path
//! it took, peak RSS).
//!
//! `contender-bigq <scenario> [--job] [--grpc] [--pages] [--streams N]` (`--grpc`: queries
//! over the v2 gRPC services instead of REST; `--pages`: a large query result paged through
//! `getQueryResults` / `GetQueryResults`, never Storage Read; `--streams N`: table reads ask
//! for at most N streams instead of one per core), with the server in `BENCH_REST` (and `BENCH_GRPC`
//! for the Storage API), the project in `BENCH_PROJECT` and the scratch dataset in
//! `BENCH_DATASET`. Without `BENCH_REST` it talks to real BigQuery with Application Default
//! Credentials.

use std::time::Instant;

use bench_compare::{
    ContenderArgs, Measured, NotRun, ScanRow, cpu_seconds, harness_builder, needs_scan_table,
    print_outcome, recreate_scan_copy, scenario_sql,
};
use bigq::{Client, Transport};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Row200k {
    id: i64,
    x: f64,
    name: String,
    flag: bool,
}

#[tokio::main]
async fn main() {
    let args =
        ContenderArgs::parse("contender-bigq <scenario> [--job] [--grpc] [--pages] [--streams N]");
    let streams = match args.value("--streams").map(str::parse::<u32>) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(e)) => {
            print_outcome(Err(NotRun::Failed(format!("--streams: {e}"))));
            return;
        }
    };
    let outcome = run(
        &args.scenario,
        args.flag("--job"),
        args.flag("--grpc"),
        args.flag("--pages"),
        streams,
    )
    .await;
    print_outcome(outcome.map_err(NotRun::Failed));
}

async fn client(grpc: bool) -> Result<Client, String> {
    let transport = if grpc {
        Transport::Grpc
    } else {
        Transport::Rest
    };
    harness_builder()?
        .with_transport(transport)
        .build()
        .await
        .map_err(|e| e.to_string())
}

/// A read of `table`, with at most `streams` streams when given.
fn read(client: &Client, table: &str, streams: Option<u32>) -> bigq::read::ReadBuilder {
    match streams {
        Some(n) => client.read(table).max_streams(n),
        None => client.read(table),
    }
}

fn dataset() -> Result<String, String> {
    std::env::var("BENCH_DATASET").map_err(|_| "BENCH_DATASET is not set".to_string())
}

async fn run(
    scenario: &str,
    job: bool,
    grpc: bool,
    pages: bool,
    streams: Option<u32>,
) -> Result<Measured, String> {
    let e = |e: bigq::Error| e.to_string();
    // In-memory scenarios first: no server.
    if scenario == "json_300k" {
        let schema = bigq_bench::lineitem::schema();
        let body = bigq_bench::lineitem::body(300_000);
        let (t, c) = (Instant::now(), cpu_seconds());
        let batches = bigq_bench::lineitem::decode_bigq(&body, &schema, 64 * 1024);
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        return Ok(Measured::new(
            rows,
            t,
            c,
            "REST JSON body -> Arrow (bigq-codec)",
        ));
    }
    let client = client(grpc).await?;
    let wire = if grpc {
        "v2 gRPC Query"
    } else {
        "REST jobs.query"
    };
    let query = |sql: String| {
        client
            .query(sql)
            .use_query_cache(false)
            .use_storage_read(!pages)
            .job_creation_required(job)
    };
    let ds = dataset()?;
    // The scan-table scenarios go through Storage Read or Write, which are gRPC.
    if needs_scan_table(scenario)
        && std::env::var("BENCH_REST").is_ok()
        && std::env::var("BENCH_GRPC").is_err()
    {
        return Err("the server has no Storage API endpoint (BENCH_GRPC)".into());
    }
    let (t, c) = (Instant::now(), cpu_seconds());
    match scenario {
        "query_const" | "query_1k" => {
            let results = query(scenario_sql(scenario, &ds)).run().await.map_err(e)?;
            let path = if results.job_reference().is_some() {
                format!("{wire}, job created")
            } else {
                format!("{wire}, short query mode (no job)")
            };
            let batches = results.into_batches().try_collect().await.map_err(e)?;
            let rows = batches.iter().map(|b| b.num_rows()).sum();
            Ok(Measured::new(rows, t, c, &path))
        }
        "query_200k_rows" => {
            let results = query(scenario_sql(scenario, &ds)).run().await.map_err(e)?;
            let path = path_of(&results, wire);
            let rows: Vec<Row200k> = results.fetch_all().await.map_err(e)?;
            Ok(Measured::new(rows.len(), t, c, &path))
        }
        "query_200k_arrow" => {
            let results = query(scenario_sql(scenario, &ds)).run().await.map_err(e)?;
            let path = path_of(&results, wire);
            let batches = results.into_batches().try_collect().await.map_err(e)?;
            Ok(Measured::new(
                batches.iter().map(|b| b.num_rows()).sum(),
                t,
                c,
                &path,
            ))
        }
        "scan_typed" => {
            let read = read(&client, &format!("{ds}.scan"), streams);
            let rows = read.rows::<ScanRow>().await.map_err(e)?;
            let streams = rows.stream_count();
            let rows: Vec<ScanRow> = rows.try_collect().await.map_err(e)?;
            let path = format!("Storage Read, {streams} streams, typed rows decoded per stream");
            Ok(Measured::new(rows.len(), t, c, &path))
        }
        "scan_arrow" => {
            let batches = read(&client, &format!("{ds}.scan"), streams)
                .batches()
                .await
                .map_err(e)?;
            let streams = batches.stream_count();
            let batches: Vec<_> = batches.try_collect().await.map_err(e)?;
            let path = format!("Storage Read, {streams} streams, Arrow");
            Ok(Measured::new(
                batches.iter().map(|b| b.num_rows()).sum(),
                t,
                c,
                &path,
            ))
        }
        "decode" => {
            // Read the table first (not timed), then decode on one thread.
            let batches: Vec<_> = read(&client, &format!("{ds}.scan"), streams)
                .batches()
                .await
                .map_err(e)?
                .try_collect()
                .await
                .map_err(e)?;
            let (t, c) = (Instant::now(), cpu_seconds());
            let mut rows: Vec<ScanRow> = Vec::new();
            let mut offset = 0;
            for b in &batches {
                bigq_codec::de::extend_from_record_batch(b, &mut rows, offset)
                    .map_err(|e| e.to_string())?;
                offset += b.num_rows() as u64;
            }
            Ok(Measured::new(
                rows.len(),
                t,
                c,
                "Arrow batches in memory -> structs, one thread",
            ))
        }
        "write_1m_objects" => {
            // The rows are made before the clock starts; the time covers encoding them
            // into protobuf and writing them into the _default stream.
            let target = recreate_scan_copy(&client, &ds, "write_target").await?;
            let rows: Vec<ScanRow> = (1..=bench_compare::scan_rows() as i64)
                .map(ScanRow::generate)
                .collect();
            let (t, c) = (Instant::now(), cpu_seconds());
            let mut writer = client
                .write(&target)
                .default_stream()
                .open()
                .await
                .map_err(e)?;
            for chunk in rows.chunks(10_000) {
                writer.append(chunk).await.map_err(e)?;
            }
            let summary = writer.finish().await.map_err(e)?;
            let path = format!(
                "Storage Write _default, protobuf from serde, {} requests, {:.1} MB",
                summary.requests,
                summary.bytes_sent as f64 / 1e6
            );
            Ok(Measured::new(summary.rows_written as usize, t, c, &path))
        }
        "write_1m_arrow" => {
            // The batches are made before the clock starts; the time covers their IPC
            // encoding and the appends into the _default stream.
            let target = recreate_scan_copy(&client, &ds, "write_target_arrow").await?;
            let batches = bench_compare::scan_batches(bench_compare::scan_rows(), 25_000);
            let (t, c) = (Instant::now(), cpu_seconds());
            let mut writer = client
                .write(&target)
                .default_stream()
                .open()
                .await
                .map_err(e)?;
            for batch in &batches {
                writer.append_batch(batch).await.map_err(e)?;
            }
            let summary = writer.finish().await.map_err(e)?;
            let path = format!(
                "Storage Write _default, Arrow batches (append_batch), {} requests, {:.1} MB",
                summary.requests,
                summary.bytes_sent as f64 / 1e6
            );
            Ok(Measured::new(summary.rows_written as usize, t, c, &path))
        }
        other => Err(format!("unknown scenario {other:?}")),
    }
}

fn path_of(results: &bigq::query::QueryResults, wire: &str) -> String {
    if results.reads_with_storage_api() {
        format!("{wire}, then Storage Read of the destination table")
    } else {
        format!("{wire} and getQueryResults pages")
    }
}

//! What bigq adds to a raw query call, measured in one process against one server: for each
//! query scenario, a raw `JobService.Query` call (tonic, the generated client, Arrow results
//! decoded into a `RecordBatch`) and a raw REST `jobs.query` (reqwest, the body parsed as
//! JSON), interleaved with the same query through bigq on each transport, collected as Arrow
//! batches (the raw gRPC call's work) and as typed rows (`fetch_all`, more work than either
//! raw call does).
//!
//! ```sh
//! target/release/bigq-emulator --port 9050 --grpc-port 9060 --project bench-project &
//! target/release/query-overhead --rest http://127.0.0.1:9050 --grpc http://127.0.0.1:9060 \
//!     --project bench-project --iterations 300
//! ```
//!
//! Prints, per scenario and path, the median and the 10th/90th percentiles of the
//! iterations' wall time, bigq's median over the raw call's, and the median CPU time the
//! client spent on a call. The runtime has one thread, so that thread's CPU time during a
//! call is everything the client did for it (building and encoding the request, HTTP/2,
//! decoding): the part of the wall time that is the client's, where the rest is the
//! server's work and the loopback, the same for every path. bigq's CPU time minus the raw
//! call's is what bigq adds.
//!
//! `--paths raw-grpc-routed` is the raw gRPC call with the `x-goog-request-params` routing
//! header Google's clients send with every call (and bigq does); when it runs, the bigq gRPC
//! paths are compared with it (the same request on the wire), and it with `raw-grpc`.

use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use bench_compare::{ServerArgs, expected_rows, quantile, scenario_sql};
use bigq::{Client, Transport};
use clap::Parser;
use gcloud_sdk::google::cloud::bigquery::v2 as pb;
use pb::job_service_client::JobServiceClient;
use pb::query_request::{JobCreationMode, QueryResultsFormat, ResultsFormatSerializationOptions};
use serde::Deserialize;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::Channel;

/// What bigq adds to a raw query call, over gRPC and REST.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Timed iterations of each path (after 10 untimed ones).
    #[arg(long, default_value_t = 300)]
    iterations: usize,
    /// Scenarios (`query_const`, `query_1k`).
    #[arg(long, value_delimiter = ',', default_value = "query_const,query_1k")]
    only: Vec<String>,
    /// The paths to run (see `PATHS`); one alone is for profiling the client on that path.
    /// `raw-grpc-routed` (not in the default) is the raw call with the routing header.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "raw-grpc,bigq-grpc,bigq-grpc-arrow,raw-rest,bigq-rest,bigq-rest-arrow"
    )]
    paths: Vec<String>,
    /// Instead of interleaving the paths in this process, run each path alone in a process
    /// of its own (`--iterations` calls), this many rounds, the paths in turns forwards and
    /// backwards, and compare each bigq path with the raw call of the same round.
    #[arg(long, default_value_t = 0)]
    rounds: usize,
    /// Print only the median wall time (ms) and client CPU time (µs) of the one path and
    /// scenario run (a process started by `--rounds`).
    #[arg(long, hide = true)]
    machine: bool,
}

/// The paths, in the order of the table: name, label, and the raw call a bigq path is
/// compared with (see [`baseline`]).
const PATHS: [(&str, &str, Option<usize>); 7] = [
    ("raw-grpc", "raw gRPC Query", None),
    ("bigq-grpc", "bigq gRPC, typed rows", Some(0)),
    ("bigq-grpc-arrow", "bigq gRPC, Arrow batches", Some(0)),
    ("raw-rest", "raw REST jobs.query", None),
    ("bigq-rest", "bigq REST, typed rows", Some(3)),
    ("bigq-rest-arrow", "bigq REST, Arrow batches", Some(3)),
    (
        "raw-grpc-routed",
        "raw gRPC Query with the routing header",
        Some(0),
    ),
];

/// `raw-grpc-routed` in `PATHS`.
const RAW_GRPC_ROUTED: usize = 6;

/// The raw call path `k` is compared with, if that call was run: for the bigq gRPC paths
/// the raw call with the routing header when it was run (the same request on the wire),
/// else the plain one; the routed raw call with the plain one (what the header costs).
fn baseline(k: usize, chosen: &[usize]) -> Option<usize> {
    let raw = PATHS[k].2?;
    if raw == 0 && k != RAW_GRPC_ROUTED && chosen.contains(&RAW_GRPC_ROUTED) {
        Some(RAW_GRPC_ROUTED)
    } else {
        chosen.contains(&raw).then_some(raw)
    }
}

/// A row of either scenario: `query_const` has one INT64 column, `query_1k` two.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Row {
    #[serde(alias = "x")]
    n: i64,
    #[serde(default)]
    s: Option<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    let done = if args.rounds > 0 {
        rounds(&args)
    } else {
        run(args).await
    };
    if let Err(e) = done {
        eprintln!("query-overhead: {e}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<(), String> {
    let server = &args.server;
    let rest_client = server.client(Transport::Rest).await?;
    let grpc_client = server.client(Transport::Grpc).await?;
    let channel = server.raw_channel().await?;
    let http = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .map_err(|e| e.to_string())?;
    let chosen = chosen_paths(&args)?;
    // What Google's clients send with a `Query` (bigq builds the same value once per client).
    let routing = MetadataValue::try_from(format!("project_id={}", server.project))
        .map_err(|e| e.to_string())?;
    let url = format!(
        "{}/bigquery/v2/projects/{}/queries",
        server.rest, server.project
    );
    if !args.machine {
        println!(
            "| scenario | path | median ms | p10–p90 ms | bigq / raw | client CPU µs | bigq − raw CPU µs |"
        );
        println!("|---|---|---|---|---|---|---|");
    }
    for scenario in &args.only {
        let sql = scenario_sql(scenario, "");
        let expected =
            expected_rows(scenario).ok_or_else(|| format!("unknown scenario {scenario:?}"))?;
        // Per path: wall times in ms, client CPU times in µs.
        let mut times: [Vec<f64>; PATHS.len()] = Default::default();
        let mut cpu: [Vec<f64>; PATHS.len()] = Default::default();
        for i in 0..args.iterations + 10 {
            // Interleaved, so that load changes hit every path alike.
            for k in in_turns(&chosen, i) {
                let t = match k {
                    0 => timed(raw_grpc(&channel, &server.project, None, &sql, expected)).await?,
                    RAW_GRPC_ROUTED => {
                        let call =
                            raw_grpc(&channel, &server.project, Some(&routing), &sql, expected);
                        timed(call).await?
                    }
                    1 => timed(bigq_rows(&grpc_client, &sql, expected)).await?,
                    2 => timed(bigq_batches(&grpc_client, &sql, expected)).await?,
                    3 => timed(raw_rest(&http, &url, &sql, expected)).await?,
                    4 => timed(bigq_rows(&rest_client, &sql, expected)).await?,
                    _ => timed(bigq_batches(&rest_client, &sql, expected)).await?,
                };
                if i >= 10 {
                    times[k].push(t.wall.as_secs_f64() * 1e3);
                    cpu[k].push(t.cpu.as_secs_f64() * 1e6);
                }
            }
        }
        let medians: Vec<f64> = times.iter_mut().map(|t| quantile(t, 0.5)).collect();
        let cpu_us: Vec<f64> = cpu.iter_mut().map(|t| quantile(t, 0.5)).collect();
        if args.machine {
            for &k in &chosen {
                println!("{} {}", medians[k], cpu_us[k]);
            }
            continue;
        }
        for &k in &chosen {
            let (ratio, added) = match baseline(k, &chosen) {
                Some(raw) => (
                    format!("{:.3}", medians[k] / medians[raw]),
                    format!("{:+.1}", cpu_us[k] - cpu_us[raw]),
                ),
                None => (String::new(), String::new()),
            };
            let t = &mut times[k];
            println!(
                "| {scenario} | {} | {:.3} | {:.3}–{:.3} | {ratio} | {:.1} | {added} |",
                PATHS[k].1,
                medians[k],
                quantile(t, 0.1),
                quantile(t, 0.9),
                cpu_us[k],
            );
        }
    }
    Ok(())
}

/// The indices in `PATHS` of the paths asked for, or which name is unknown.
fn chosen_paths(args: &Args) -> Result<Vec<usize>, String> {
    let known = |p: &String| PATHS.iter().any(|(name, ..)| name == p);
    if let Some(p) = args.paths.iter().find(|p| !known(p)) {
        let names: Vec<&str> = PATHS.iter().map(|(name, ..)| *name).collect();
        return Err(format!("unknown path {p:?} (known: {})", names.join(", ")));
    }
    Ok((0..PATHS.len())
        .filter(|&k| args.paths.iter().any(|p| p == PATHS[k].0))
        .collect())
}

/// The paths in the order of turn `i`: forwards, then backwards, so that no path always
/// follows the same other.
fn in_turns(chosen: &[usize], i: usize) -> Vec<usize> {
    let mut order = chosen.to_vec();
    if i % 2 == 1 {
        order.reverse();
    }
    order
}

/// `--rounds`: each path alone in a process of its own, round after round; per bigq path,
/// the median over the rounds of its median over the raw call's median in the same round.
fn rounds(args: &Args) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let chosen = chosen_paths(args)?;
    println!(
        "| scenario | path | median ms | bigq / raw, median of the rounds (p25–p75) | client CPU µs | bigq − raw CPU µs (p25–p75) |"
    );
    println!("|---|---|---|---|---|---|");
    for scenario in &args.only {
        // Per path, per round: (median wall ms, median client CPU µs).
        let mut got: Vec<Vec<(f64, f64)>> = vec![Vec::new(); PATHS.len()];
        for round in 0..args.rounds {
            for k in in_turns(&chosen, round) {
                let out = std::process::Command::new(&exe)
                    .args(["--rest", &args.server.rest, "--grpc", &args.server.grpc])
                    .args(["--project", &args.server.project, "--machine"])
                    .args(["--iterations", &args.iterations.to_string()])
                    .args(["--only", scenario, "--paths", PATHS[k].0])
                    .output()
                    .map_err(|e| e.to_string())?;
                let text = String::from_utf8_lossy(&out.stdout);
                let nums: Vec<f64> = text
                    .split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect();
                let [wall, cpu] = nums[..] else {
                    return Err(format!(
                        "{} on {scenario}: {text}{}",
                        PATHS[k].0,
                        String::from_utf8_lossy(&out.stderr)
                    ));
                };
                got[k].push((wall, cpu));
            }
        }
        for &k in &chosen {
            let mut wall: Vec<f64> = got[k].iter().map(|r| r.0).collect();
            let mut cpu: Vec<f64> = got[k].iter().map(|r| r.1).collect();
            let (ratio, added) = match baseline(k, &chosen) {
                Some(raw) => {
                    let pairs = got[k].iter().zip(&got[raw]);
                    let mut ratios: Vec<f64> = pairs.clone().map(|(b, r)| b.0 / r.0).collect();
                    let mut more: Vec<f64> = pairs.map(|(b, r)| b.1 - r.1).collect();
                    (
                        format!(
                            "{:.3} ({:.3}–{:.3})",
                            quantile(&mut ratios, 0.5),
                            quantile(&mut ratios, 0.25),
                            quantile(&mut ratios, 0.75)
                        ),
                        format!(
                            "{:+.1} ({:+.1} to {:+.1})",
                            quantile(&mut more, 0.5),
                            quantile(&mut more, 0.25),
                            quantile(&mut more, 0.75)
                        ),
                    )
                }
                None => (String::new(), String::new()),
            };
            println!(
                "| {scenario} | {} | {:.3} | {ratio} | {:.1} | {added} |",
                PATHS[k].1,
                quantile(&mut wall, 0.5),
                quantile(&mut cpu, 0.5),
            );
        }
    }
    Ok(())
}

/// A call's wall time and this thread's CPU time during it.
#[derive(Clone, Copy, Default)]
struct Timed {
    wall: Duration,
    cpu: Duration,
}

async fn timed(f: impl Future<Output = Result<(), String>>) -> Result<Timed, String> {
    let cpu = thread_cpu();
    let started = Instant::now();
    f.await?;
    Ok(Timed {
        wall: started.elapsed(),
        cpu: thread_cpu().saturating_sub(cpu),
    })
}

/// CPU time of the calling thread so far.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; the clock id is a constant
    // Linux always has.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

async fn bigq_rows(client: &Client, sql: &str, expected: usize) -> Result<(), String> {
    let rows: Vec<Row> = client
        .query(sql)
        .fetch_all()
        .await
        .map_err(|e| e.to_string())?;
    check(rows.len(), expected)
}

async fn bigq_batches(client: &Client, sql: &str, expected: usize) -> Result<(), String> {
    let batches: Vec<RecordBatch> = client
        .query(sql)
        .batches()
        .await
        .map_err(|e| e.to_string())?
        .try_collect()
        .await
        .map_err(|e| e.to_string())?;
    check(batches.iter().map(|b| b.num_rows()).sum(), expected)
}

fn check(got: usize, expected: usize) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("{got} rows where {expected} were expected"))
    }
}

/// `JobService.Query` as a caller of the generated client writes it: short query mode, Arrow
/// results with LZ4 buffers, the result decoded into one `RecordBatch`; with `routing`, the
/// `x-goog-request-params` header Google's clients send (and bigq does), as metadata.
async fn raw_grpc(
    channel: &Channel,
    project: &str,
    routing: Option<&MetadataValue<Ascii>>,
    sql: &str,
    expected: usize,
) -> Result<(), String> {
    let request = pb::PostQueryRequest {
        project_id: project.to_string(),
        query_request: Some(pb::QueryRequest {
            query: sql.to_string(),
            use_legacy_sql: Some(false),
            request_id: uuid::Uuid::new_v4().to_string(),
            job_creation_mode: JobCreationMode::JobCreationOptional.into(),
            timeout_ms: Some(10_000),
            query_results_format: QueryResultsFormat::Arrow.into(),
            results_format_serialization_options: Some(
                ResultsFormatSerializationOptions::ArrowSerializationOptions(
                    pb::ArrowSerializationOptions {
                        buffer_compression:
                            pb::arrow_serialization_options::CompressionCodec::Lz4Frame.into(),
                        ..Default::default()
                    },
                ),
            ),
            ..Default::default()
        }),
    };
    let mut request = tonic::Request::new(request);
    if let Some(v) = routing {
        request
            .metadata_mut()
            .insert("x-goog-request-params", v.clone());
    }
    let resp = JobServiceClient::new(channel.clone())
        .query(request)
        .await
        .map_err(|s| s.to_string())?
        .into_inner();
    let (
        Some(pb::query_response::ResultsSchema::ArrowSchema(schema)),
        Some(pb::query_response::Results::ArrowRecordBatch(batch)),
    ) = (resp.results_schema, resp.results)
    else {
        return Err("the response has no Arrow result".into());
    };
    let batch = decode_ipc(&schema.serialized_schema, &batch.serialized_record_batch)?;
    check(batch.num_rows(), expected)
}

fn decode_ipc(schema: &[u8], batch: &[u8]) -> Result<RecordBatch, String> {
    let mut decoder = arrow_ipc::reader::StreamDecoder::new();
    let mut bytes = schema.to_vec();
    // A schema sent as a whole stream ends with the end-of-stream marker; drop it.
    if bytes.ends_with(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]) {
        bytes.truncate(bytes.len() - 8);
    }
    bytes.extend_from_slice(batch);
    let mut buf = arrow_buffer::Buffer::from(bytes);
    let mut out = None;
    while !buf.is_empty() {
        if let Some(b) = decoder.decode(&mut buf).map_err(|e| e.to_string())? {
            out = Some(b);
        }
    }
    out.ok_or_else(|| "no record batch".to_string())
}

/// REST `jobs.query` as a caller of reqwest writes it: the body parsed as JSON.
async fn raw_rest(
    http: &reqwest::Client,
    url: &str,
    sql: &str,
    expected: usize,
) -> Result<(), String> {
    let body = serde_json::json!({
        "query": sql,
        "useLegacySql": false,
        "requestId": uuid::Uuid::new_v4().to_string(),
        "jobCreationMode": "JOB_CREATION_OPTIONAL",
        "formatOptions": { "useInt64Timestamp": true },
        "timeoutMs": 10_000,
    });
    let bytes = http
        .post(url)
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .bytes()
        .await
        .map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    let rows = v["rows"].as_array().map_or(0, |r| r.len());
    check(rows, expected)
}

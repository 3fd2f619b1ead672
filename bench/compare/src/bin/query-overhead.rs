//! What bigq adds to a raw query call, measured in one process against one server: for each
//! query scenario, a raw `JobService.Query` call (tonic, the generated client, Arrow results
//! decoded into a `RecordBatch`) and a raw REST `jobs.query` (reqwest, the body parsed as
//! JSON), interleaved with the same query through bigq on each transport
//! (`fetch_all` into typed rows, so bigq does more work than the raw calls).
//!
//! ```sh
//! target/release/bigq-emulator --port 9050 --grpc-port 9060 --project bench-project &
//! target/release/query-overhead --rest http://127.0.0.1:9050 --grpc http://127.0.0.1:9060 \
//!     --project bench-project --iterations 300
//! ```
//!
//! Prints, per scenario and path, the median and the 10th/90th percentiles of the
//! iterations' wall time, and bigq's median over the raw call's.

use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use bench_compare::{ServerArgs, expected_rows, scenario_sql};
use bigq::{Client, Transport};
use clap::Parser;
use gcloud_sdk::google::cloud::bigquery::v2 as pb;
use pb::job_service_client::JobServiceClient;
use pb::query_request::{JobCreationMode, QueryResultsFormat, ResultsFormatSerializationOptions};
use serde::Deserialize;
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
    if let Err(e) = run(args).await {
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
    let url = format!(
        "{}/bigquery/v2/projects/{}/queries",
        server.rest, server.project
    );
    println!("| scenario | path | median ms | p10–p90 ms | bigq / raw |");
    println!("|---|---|---|---|---|");
    for scenario in &args.only {
        let sql = scenario_sql(scenario, "");
        let expected =
            expected_rows(scenario).ok_or_else(|| format!("unknown scenario {scenario:?}"))?;
        let mut times: [Vec<Duration>; 4] = Default::default();
        for i in 0..args.iterations + 10 {
            // Interleaved, so that load changes hit every path alike.
            let t = [
                timed(raw_grpc(&channel, &server.project, &sql, expected)).await?,
                timed(bigq_rows(&grpc_client, &sql, expected)).await?,
                timed(raw_rest(&http, &url, &sql, expected)).await?,
                timed(bigq_rows(&rest_client, &sql, expected)).await?,
            ];
            if i >= 10 {
                for (k, d) in t.into_iter().enumerate() {
                    times[k].push(d);
                }
            }
        }
        let names = [
            "raw gRPC Query",
            "bigq gRPC",
            "raw REST jobs.query",
            "bigq REST",
        ];
        let medians: Vec<f64> = times.iter_mut().map(|t| percentile(t, 0.5)).collect();
        for (k, t) in times.iter_mut().enumerate() {
            let ratio = match k {
                1 => format!("{:.3}", medians[1] / medians[0]),
                3 => format!("{:.3}", medians[3] / medians[2]),
                _ => String::new(),
            };
            println!(
                "| {scenario} | {} | {:.3} | {:.3}–{:.3} | {ratio} |",
                names[k],
                medians[k],
                percentile(t, 0.1),
                percentile(t, 0.9),
            );
        }
    }
    Ok(())
}

async fn timed(f: impl Future<Output = Result<(), String>>) -> Result<Duration, String> {
    let started = Instant::now();
    f.await?;
    Ok(started.elapsed())
}

/// The `p` quantile of `t`, in milliseconds.
fn percentile(t: &mut [Duration], p: f64) -> f64 {
    t.sort();
    let i = ((t.len() - 1) as f64 * p).round() as usize;
    t[i].as_secs_f64() * 1e3
}

async fn bigq_rows(client: &Client, sql: &str, expected: usize) -> Result<(), String> {
    let rows: Vec<Row> = client
        .query(sql)
        .fetch_all()
        .await
        .map_err(|e| e.to_string())?;
    check(rows.len(), expected)
}

fn check(got: usize, expected: usize) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("{got} rows where {expected} were expected"))
    }
}

/// `JobService.Query` as a caller of the generated client writes it: short query mode, Arrow
/// results with LZ4 buffers, the result decoded into one `RecordBatch`.
async fn raw_grpc(
    channel: &Channel,
    project: &str,
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

//! How fast a Storage Read server sends one stream: a raw `ReadRows` call (the generated
//! tonic client) that counts the Arrow bytes it receives without decoding them, next to
//! bigq reading the same table on one stream into `RecordBatch`es, interleaved in one
//! process. `CreateReadSession` is timed apart (bigq-emulator encodes the session's batches
//! there, so that `ReadRows` only sends them).
//!
//! ```sh
//! target/release/bigq-emulator --port 9050 --grpc-port 9060 --project bench &
//! # ... with the scan table in bench.ds.scan (bench-compare makes it), then:
//! target/release/read-throughput --rest http://127.0.0.1:9050 --grpc http://127.0.0.1:9060 \
//!     --project bench --table ds.scan --iterations 15
//! ```

use std::time::{Duration, Instant};

use bench_compare::ServerArgs;
use bigq::read::Compression;
use bigq::{Client, Transport};
use clap::Parser;
use gcloud_sdk::google::cloud::bigquery::storage::v1 as pb;
use pb::big_query_read_client::BigQueryReadClient;
use pb::read_session::TableReadOptions;
use tonic::transport::Channel;

/// One Storage Read stream: raw ReadRows bytes against bigq decoding the same table.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// `dataset.table` to read.
    #[arg(long, default_value = "ds.scan")]
    table: String,
    /// Timed iterations of each path (after 2 untimed ones).
    #[arg(long, default_value_t = 15)]
    iterations: usize,
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("read-throughput: {e}");
        std::process::exit(1);
    }
}

/// What one raw read measured.
struct Read {
    session: Duration,
    rows: Duration,
    bytes: u64,
}

fn codec(compression: Compression) -> i32 {
    match compression {
        Compression::None => {
            pb::arrow_serialization_options::CompressionCodec::CompressionUnspecified
        }
        Compression::Lz4Frame => pb::arrow_serialization_options::CompressionCodec::Lz4Frame,
        _ => pb::arrow_serialization_options::CompressionCodec::Zstd,
    }
    .into()
}

async fn raw_read(
    channel: &Channel,
    project: &str,
    table: &str,
    compression: Compression,
) -> Result<Read, String> {
    let mut client = BigQueryReadClient::new(channel.clone()).max_decoding_message_size(256 << 20);
    let started = Instant::now();
    let session = client
        .create_read_session(pb::CreateReadSessionRequest {
            parent: format!("projects/{project}"),
            read_session: Some(pb::ReadSession {
                table: table.to_string(),
                data_format: pb::DataFormat::Arrow.into(),
                read_options: Some(TableReadOptions {
                    output_format_serialization_options: Some(
                        pb::read_session::table_read_options::OutputFormatSerializationOptions::ArrowSerializationOptions(
                            pb::ArrowSerializationOptions { buffer_compression: codec(compression), ..Default::default() },
                        ),
                    ),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            max_stream_count: 1,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    let session_time = started.elapsed();
    let stream = session.streams.first().ok_or("no stream")?.name.clone();
    let started = Instant::now();
    let mut responses = client
        .read_rows(pb::ReadRowsRequest {
            read_stream: stream,
            offset: 0,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    let mut bytes = 0u64;
    while let Some(r) = responses.message().await.map_err(|e| e.to_string())? {
        if let Some(pb::read_rows_response::Rows::ArrowRecordBatch(b)) = r.rows {
            bytes += b.serialized_record_batch.len() as u64;
        }
    }
    Ok(Read {
        session: session_time,
        rows: started.elapsed(),
        bytes,
    })
}

/// bigq reading the table on one stream into `RecordBatch`es (session included); returns
/// the time and the rows.
async fn bigq_read(
    client: &Client,
    table: &str,
    compression: Compression,
) -> Result<(Duration, usize), String> {
    let started = Instant::now();
    let batches: Vec<arrow_array::RecordBatch> = client
        .read(table)
        .max_streams(1)
        .compression(compression)
        .batches()
        .await
        .map_err(|e| e.to_string())?
        .try_collect()
        .await
        .map_err(|e| e.to_string())?;
    Ok((
        started.elapsed(),
        batches.iter().map(|b| b.num_rows()).sum(),
    ))
}

fn median(v: &mut [f64]) -> f64 {
    bench_compare::quantile(v, 0.5)
}

async fn run(args: Args) -> Result<(), String> {
    let server = &args.server;
    let client = server.client(Transport::Rest).await?;
    let channel = server.raw_channel().await?;
    let (dataset, table) = args
        .table
        .split_once('.')
        .ok_or("--table is dataset.table")?;
    let path = format!(
        "projects/{}/datasets/{dataset}/tables/{table}",
        server.project
    );
    println!(
        "| compression | MB on the wire | raw: CreateReadSession ms | raw: ReadRows s | raw: MB/s | bigq: session + rows + decode s | bigq: MB/s of the wire bytes | rows |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for compression in [Compression::None, Compression::Lz4Frame] {
        let (mut session, mut rows, mut raw_rate, mut ours, mut ours_rate) =
            (vec![], vec![], vec![], vec![], vec![]);
        let (mut mb, mut n) = (0.0, 0);
        for i in 0..args.iterations + 2 {
            let r = raw_read(&channel, &server.project, &path, compression).await?;
            let (t, rows_read) = bigq_read(&client, &args.table, compression).await?;
            if i < 2 {
                continue;
            }
            mb = r.bytes as f64 / 1e6;
            n = rows_read;
            session.push(r.session.as_secs_f64() * 1e3);
            rows.push(r.rows.as_secs_f64());
            raw_rate.push(mb / r.rows.as_secs_f64());
            ours.push(t.as_secs_f64());
            ours_rate.push(mb / t.as_secs_f64());
        }
        println!(
            "| {compression:?} | {mb:.1} | {:.1} | {:.3} | {:.0} | {:.3} | {:.0} | {n} |",
            median(&mut session),
            median(&mut rows),
            median(&mut raw_rate),
            median(&mut ours),
            median(&mut ours_rate),
        );
    }
    Ok(())
}

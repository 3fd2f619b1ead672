//! bench-compare's contender for the `bigquery` crate (0.9, abdolence/bigquery-rs): runs one
//! scenario once the way the crate's docs and benchmark chapter do, and prints one JSON line
//! (see `bench_compare::print_outcome`).
//!
//! `contender-bigquery-rs <scenario> [--job]`, with the server in `BENCH_REST`/`BENCH_GRPC`,
//! the project in `BENCH_PROJECT` and the scratch dataset in `BENCH_DATASET`.
//!
//! The crate speaks gRPC only: queries go to the v2 `JobService` (`Query`), table reads to
//! Storage Read and writes to Storage Write. Against bigq-emulator both gRPC endpoints are the
//! emulator's gRPC port, with anonymous credentials (what the crate's own `testing` fake
//! does). Where the server does not serve a service the path needs, the run is reported as
//! unsupported with the service's name.

use std::time::Instant;

use bench_compare::{
    ARROW_WRITE_BATCH_ROWS, ContenderArgs, Measured, NotRun, SCAN_COLUMNS, cpu_seconds,
    fresh_write_table, print_outcome, scan_batches, scan_rows, scenario_sql, unserved_service,
};
use bigquery::errors::BigQueryError;
use bigquery::gcloud_sdk::google_cloud_auth::credentials::anonymous;
use bigquery::{
    BigQueryBatchRows, BigQueryDate, BigQueryDb, BigQueryDbOptions, BigQueryTableRef,
    BigQueryTimestamp,
};
use futures::TryStreamExt;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct RowConst {
    x: i64,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Row1k {
    n: i64,
    s: String,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Row200k {
    id: i64,
    x: f64,
    name: String,
    flag: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct Rec {
    a: i64,
    b: String,
}

/// The scan table's row in the crate's own types: its DATE and TIMESTAMP wrappers, and NUMERIC
/// as a `String` (the crate has no decimal type of its own; see docs/benchmarks.md).
#[derive(Debug, Serialize, Deserialize)]
struct ScanRow {
    id: i64,
    amount: f64,
    name: String,
    active: bool,
    price: String,
    day: BigQueryDate,
    ts: BigQueryTimestamp,
    maybe_int: Option<i64>,
    maybe_float: Option<f64>,
    city: Option<String>,
    flagged: Option<bool>,
    discount: Option<String>,
    shipped: Option<BigQueryDate>,
    seen: Option<BigQueryTimestamp>,
    code: String,
    score: f64,
    qty: i64,
    note: Option<String>,
    rec: Rec,
    arr: Vec<i64>,
}

impl ScanRow {
    /// Row `n` of the scan table, the values of `bench_compare::ScanRow::generate`.
    fn generate(n: i64) -> ScanRow {
        let opt = |m: i64| n % m != 0;
        let date = |days: i64| {
            BigQueryDate(
                bigquery::jiff::civil::date(1970, 1, 1)
                    .checked_add(bigquery::jiff::Span::new().days(days))
                    .expect("in range"),
            )
        };
        let ts = |secs: i64| {
            BigQueryTimestamp(bigquery::jiff::Timestamp::from_second(secs).expect("in range"))
        };
        ScanRow {
            id: n,
            amount: n as f64 * 1.5,
            name: format!("name-{n}"),
            active: n % 2 == 0,
            price: format!("{}.{:02}", n / 100, n % 100),
            day: date(18262 + n % 1000),
            ts: ts(1_704_067_200 + n),
            maybe_int: opt(5).then_some(n * 7),
            maybe_float: opt(7).then_some(n as f64 / 7.0),
            city: opt(3).then(|| format!("city-{}", n % 50)),
            flagged: opt(11).then_some(n % 3 == 0),
            discount: opt(13).then(|| {
                let m = n % 10_000;
                format!("{}.{:03}", m / 1000, m % 1000)
            }),
            shipped: opt(17).then(|| date(18779 + n % 365)),
            seen: opt(19).then(|| ts(1_735_689_600 + 60 * n)),
            code: format!("code-{}", n % 997),
            score: (n % 1000) as f64 / 10.0,
            qty: (n * 13) % 100,
            note: opt(4).then(|| format!("note for {n}")),
            rec: Rec {
                a: n,
                b: format!("s{n}"),
            },
            arr: vec![n, n + 1, n + 2],
        }
    }
}

#[tokio::main]
async fn main() {
    let args = ContenderArgs::parse("contender-bigquery-rs <scenario> [--job]");
    print_outcome(run(&args.scenario, args.flag("--job")).await);
}

/// A `BigQueryError` as a run outcome: a service the server does not serve is "unsupported".
fn outcome(e: BigQueryError) -> NotRun {
    let text = e.to_string();
    match unserved_service(&text) {
        Some(service) => NotRun::Unsupported(format!(
            "server does not serve {service} (the `bigquery` crate's path needs it): {text}"
        )),
        None => NotRun::Failed(text),
    }
}

/// Awaits one of the crate's streams (`record_batches()`, `stream_query_with_errors()`) and
/// collects it.
async fn collect<'a, T: 'a>(
    stream: impl Future<Output = Result<BoxStream<'a, Result<T, BigQueryError>>, BigQueryError>>,
) -> Result<Vec<T>, NotRun> {
    stream
        .await
        .map_err(outcome)?
        .try_collect()
        .await
        .map_err(outcome)
}

async fn db() -> Result<BigQueryDb, NotRun> {
    let project = std::env::var("BENCH_PROJECT").map_err(|_| "BENCH_PROJECT is not set")?;
    let mut options = BigQueryDbOptions::new(project);
    let Ok(grpc) = std::env::var("BENCH_GRPC") else {
        if std::env::var("BENCH_REST").is_ok() {
            return Err(NotRun::Unsupported(
                "the server has no gRPC endpoint (BENCH_GRPC); this crate speaks gRPC only".into(),
            ));
        }
        // Real BigQuery, with Application Default Credentials.
        return BigQueryDb::with_options(options).await.map_err(outcome);
    };
    // The emulator serves the v2 API and the Storage API on one gRPC port.
    let url: bigquery::url::Url = grpc.parse()?;
    options = options
        .with_bigquery_api_url(url.clone())
        .with_bigquery_storage_api_url(url);
    BigQueryDb::with_options_auth(options, anonymous::Builder::new().build())
        .await
        .map_err(outcome)
}

fn dataset() -> Result<String, NotRun> {
    Ok(std::env::var("BENCH_DATASET").map_err(|_| "BENCH_DATASET is not set")?)
}

fn table(dataset: &str, name: &str) -> Result<BigQueryTableRef, NotRun> {
    let project = std::env::var("BENCH_PROJECT").map_err(|_| "BENCH_PROJECT is not set")?;
    format!("{project}.{dataset}.{name}")
        .parse()
        .map_err(outcome)
}

fn query_path(job_created: bool) -> &'static str {
    if job_created {
        "v2 gRPC Query, job created; typed rows from Arrow via serde"
    } else {
        "v2 gRPC Query, short query mode (no job); typed rows from Arrow via serde"
    }
}

async fn run(scenario: &str, job: bool) -> Result<Measured, NotRun> {
    let db = db().await?;
    let ds = dataset()?;
    let query = |sql: String| {
        let q = db.fluent().query(sql).use_query_cache(false);
        if job { q.job_creation_required() } else { q }
    };
    macro_rules! typed_query {
        ($row:ty) => {{
            let (t, c) = (Instant::now(), cpu_seconds());
            let (rows, stats) = query(scenario_sql(scenario, &ds))
                .obj::<$row>()
                .query_with_stats()
                .await
                .map_err(outcome)?;
            Ok(Measured::new(
                rows.len(),
                t,
                c,
                query_path(stats.job.is_some()),
            ))
        }};
    }
    match scenario {
        "query_const" => typed_query!(RowConst),
        "query_1k" => typed_query!(Row1k),
        "query_200k_rows" => typed_query!(Row200k),
        "query_200k_arrow" => {
            let (t, c) = (Instant::now(), cpu_seconds());
            let batches = collect(query(scenario_sql(scenario, &ds)).record_batches()).await?;
            let rows = batches.iter().map(|b| b.num_rows()).sum();
            Ok(Measured::new(
                rows,
                t,
                c,
                "v2 gRPC Query, Arrow record batches",
            ))
        }
        "scan_typed" => {
            let scan = table(&ds, "scan")?;
            let (t, c) = (Instant::now(), cpu_seconds());
            // The columns are named with `.fields()`: without it the crate first asks the v2
            // TableService (GetTable) for the table's columns to project `ScanRow`'s fields,
            // and bigq-emulator does not serve that service. Same columns, same read.
            let rows = collect(
                db.fluent()
                    .select()
                    .fields(SCAN_COLUMNS)
                    .from(scan)
                    .obj::<ScanRow>()
                    .stream_query_with_errors(),
            )
            .await?;
            Ok(Measured::new(
                rows.len(),
                t,
                c,
                "Storage Read (streams: the crate's default, the machine's parallelism), \
                 typed rows decoded per stream; columns named with .fields() (no v2 GetTable)",
            ))
        }
        "scan_arrow" => {
            let scan = table(&ds, "scan")?;
            let (t, c) = (Instant::now(), cpu_seconds());
            let batches = collect(db.fluent().select().from(scan).record_batches()).await?;
            let rows = batches.iter().map(|b| b.num_rows()).sum();
            Ok(Measured::new(
                rows,
                t,
                c,
                "Storage Read (the crate's default streams), Arrow record batches",
            ))
        }
        "decode" => {
            // Read the table first (not timed), then decode on one thread.
            let batches = collect(
                db.fluent()
                    .select()
                    .from(table(&ds, "scan")?)
                    .record_batches(),
            )
            .await?;
            let (t, c) = (Instant::now(), cpu_seconds());
            let mut rows: Vec<ScanRow> = Vec::with_capacity(scan_rows());
            for b in &batches {
                for row in BigQueryBatchRows::<ScanRow>::new(b) {
                    rows.push(row.map_err(outcome)?);
                }
            }
            Ok(Measured::new(
                rows.len(),
                t,
                c,
                "Arrow batches in memory -> structs (BigQueryBatchRows), one thread",
            ))
        }
        "write_1m_objects" => {
            fresh_write_table(&ds, "write_target_bigquery_rs").await?;
            let target = table(&ds, "write_target_bigquery_rs")?;
            // The rows are made before the clock starts; the time covers encoding them into
            // protobuf and writing them into the default stream.
            let rows: Vec<ScanRow> = (1..=scan_rows() as i64).map(ScanRow::generate).collect();
            let (t, c) = (Instant::now(), cpu_seconds());
            let summary = db
                .fluent()
                .insert()
                .into(target)
                .objects(&rows)
                .execute()
                .await
                .map_err(outcome)?;
            if summary.rows_failed > 0 {
                return Err(NotRun::Failed(format!("{summary:?}")));
            }
            let path = format!(
                "Storage Write default stream, insert().objects(): protobuf from serde, \
                 {} requests, {:.1} MB",
                summary.batches,
                summary.bytes_sent as f64 / 1e6
            );
            Ok(Measured::new(summary.rows_written as usize, t, c, &path))
        }
        "write_1m_arrow" => {
            fresh_write_table(&ds, "write_target_bigquery_rs_arrow").await?;
            let target = table(&ds, "write_target_bigquery_rs_arrow")?;
            // The batches are made before the clock starts; the time covers their IPC
            // encoding and the appends.
            let batches = to_arrow60(&scan_batches(scan_rows(), ARROW_WRITE_BATCH_ROWS));
            let (t, c) = (Instant::now(), cpu_seconds());
            let summary = db
                .fluent()
                .insert()
                .into(target)
                .record_batches(batches)
                .execute()
                .await
                .map_err(outcome)?;
            if summary.rows_failed > 0 {
                return Err(NotRun::Failed(format!("{summary:?}")));
            }
            let path = format!(
                "Storage Write default stream, insert().record_batches(): Arrow, {} requests, \
                 {:.1} MB",
                summary.batches,
                summary.bytes_sent as f64 / 1e6
            );
            Ok(Measured::new(summary.rows_written as usize, t, c, &path))
        }
        other => Err(NotRun::Unsupported(format!(
            "no {other:?} scenario in this contender"
        ))),
    }
}

/// The batches in the `bigquery` crate's Arrow (60), through Arrow IPC: bigq-bench builds
/// them in bigq's (DataFusion's major).
fn to_arrow60(batches: &[arrow_array::RecordBatch]) -> Vec<arrow60_array::RecordBatch> {
    let Some(first) = batches.first() else {
        return Vec::new();
    };
    let mut ipc = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &first.schema())
        .expect("an IPC stream writer over a Vec");
    for b in batches {
        w.write(b).expect("writing a batch into a Vec");
    }
    w.finish().expect("finishing the IPC stream");
    drop(w);
    arrow60_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc), None)
        .expect("reading back the stream just written")
        .collect::<Result<Vec<_>, _>>()
        .expect("reading back the batches just written")
}

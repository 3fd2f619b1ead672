//! What bench-compare's driver and its Rust contenders share: the scenarios' SQL, the scan
//! table's row type, and the measurement a contender prints.

use std::time::Instant;

use bigq::value::{Date, Numeric, Timestamp};
use serde::{Deserialize, Serialize};

/// Every scenario, in the order the driver runs them (the `bigquery` crate's benchmark
/// names, plus `json_300k`, a 300,000-row REST page).
pub const SCENARIOS: &[&str] = &[
    "query_const",
    "query_1k",
    "query_200k_rows",
    "query_200k_arrow",
    "scan_typed",
    "scan_arrow",
    "decode",
    "write_1m_objects",
    "write_1m_arrow",
    "json_300k",
];

/// Scenarios that need the scan table (`write_1m_objects` and `write_1m_arrow` write rows of
/// its shape into an empty copy).
pub fn needs_scan_table(scenario: &str) -> bool {
    matches!(
        scenario,
        "scan_typed" | "scan_arrow" | "decode" | "write_1m_objects" | "write_1m_arrow"
    )
}

/// Rows each scenario returns.
pub fn expected_rows(scenario: &str) -> Option<usize> {
    Some(match scenario {
        "query_const" => 1,
        "query_1k" => 1_000,
        "query_200k_rows" | "query_200k_arrow" => 200_000,
        "scan_typed" | "scan_arrow" | "decode" | "write_1m_objects" | "write_1m_arrow" => SCAN_ROWS,
        "json_300k" => 300_000,
        _ => return None,
    })
}

/// Rows in the scan table.
pub const SCAN_ROWS: usize = 1_000_000;

/// The SQL of a query scenario (`dataset` is the scratch dataset).
pub fn scenario_sql(scenario: &str, _dataset: &str) -> String {
    match scenario {
        "query_const" => "SELECT 1 AS x".to_string(),
        "query_1k" => "SELECT n, CONCAT('row ', CAST(n AS STRING)) AS s \
                       FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS n"
            .to_string(),
        "query_200k_rows" | "query_200k_arrow" => {
            "SELECT n AS id, CAST(n AS FLOAT64) / 3 AS x, CONCAT('name ', CAST(n AS STRING)) AS name, \
             MOD(n, 2) = 0 AS flag FROM UNNEST(GENERATE_ARRAY(1, 200000)) AS n"
                .to_string()
        }
        other => panic!("{other} is not a query scenario"),
    }
}

/// The scan table of the benchmarks: `rows` rows, 20 columns (INT64, FLOAT64, STRING, BOOL,
/// NUMERIC, DATE, TIMESTAMP, a STRUCT and an ARRAY, some nullable), made with CREATE TABLE
/// AS SELECT over GENERATE_ARRAY. Written in GoogleSQL that BigQuery and bigq-emulator both
/// run.
pub fn scan_table_ctas(dataset: &str, rows: usize) -> String {
    format!(
        "CREATE OR REPLACE TABLE `{dataset}.scan` AS SELECT \
  n AS id, \
  CAST(n AS FLOAT64) * 1.5 AS amount, \
  CONCAT('name-', CAST(n AS STRING)) AS name, \
  MOD(n, 2) = 0 AS active, \
  CAST(n / 100 AS NUMERIC) AS price, \
  DATE_FROM_UNIX_DATE(18262 + MOD(n, 1000)) AS day, \
  TIMESTAMP_SECONDS(1704067200 + n) AS ts, \
  IF(MOD(n, 5) = 0, NULL, n * 7) AS maybe_int, \
  IF(MOD(n, 7) = 0, NULL, CAST(n AS FLOAT64) / 7) AS maybe_float, \
  IF(MOD(n, 3) = 0, NULL, CONCAT('city-', CAST(MOD(n, 50) AS STRING))) AS city, \
  IF(MOD(n, 11) = 0, NULL, MOD(n, 3) = 0) AS flagged, \
  IF(MOD(n, 13) = 0, NULL, CAST(MOD(n, 10000) / 1000 AS NUMERIC)) AS discount, \
  IF(MOD(n, 17) = 0, NULL, DATE_FROM_UNIX_DATE(18779 + MOD(n, 365))) AS shipped, \
  IF(MOD(n, 19) = 0, NULL, TIMESTAMP_SECONDS(1735689600 + 60 * n)) AS seen, \
  CONCAT('code-', CAST(MOD(n, 997) AS STRING)) AS code, \
  CAST(MOD(n, 1000) AS FLOAT64) / 10 AS score, \
  MOD(n * 13, 100) AS qty, \
  IF(MOD(n, 4) = 0, NULL, CONCAT('note for ', CAST(n AS STRING))) AS note, \
  STRUCT(n AS a, CONCAT('s', CAST(n AS STRING)) AS b) AS rec, \
  [n, n + 1, n + 2] AS arr \
FROM UNNEST(GENERATE_ARRAY(1, {rows})) AS n"
    )
}

/// The STRUCT column of the scan table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rec {
    pub a: i64,
    pub b: String,
}

/// A row of the scan table, as a user would type it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScanRow {
    pub id: i64,
    pub amount: f64,
    pub name: String,
    pub active: bool,
    pub price: Numeric,
    pub day: Date,
    pub ts: Timestamp,
    pub maybe_int: Option<i64>,
    pub maybe_float: Option<f64>,
    pub city: Option<String>,
    pub flagged: Option<bool>,
    pub discount: Option<Numeric>,
    pub shipped: Option<Date>,
    pub seen: Option<Timestamp>,
    pub code: String,
    pub score: f64,
    pub qty: i64,
    pub note: Option<String>,
    pub rec: Rec,
    pub arr: Vec<i64>,
}

/// What a contender measured in one run, printed as one JSON line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    /// Rows the client returned.
    pub rows: usize,
    /// Wall time of the timed part, seconds.
    pub wall_s: f64,
    /// CPU time (user + system) of the process during the timed part, seconds.
    pub cpu_s: f64,
    /// Peak resident set of the process, KiB.
    pub peak_rss_kb: u64,
    /// The path the client took (REST pages, Storage Read with N streams, ...).
    pub path: String,
}

impl Measured {
    /// Ends a measurement started at `started` (wall) with `cpu_before` CPU seconds.
    pub fn new(rows: usize, started: Instant, cpu_before: f64, path: &str) -> Self {
        Measured {
            rows,
            wall_s: started.elapsed().as_secs_f64(),
            cpu_s: cpu_seconds() - cpu_before,
            peak_rss_kb: peak_rss_kb(),
            path: path.to_string(),
        }
    }
}

/// The `p` quantile of `v` (the element at rank `round((n - 1) * p)`; NaN for none).
pub fn quantile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// User + system CPU seconds of this process so far.
pub fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid.
    let u = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr());
        u.assume_init()
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Peak resident set size of this process (`VmHWM`), KiB; 0 where /proc has no answer.
pub fn peak_rss_kb() -> u64 {
    proc_status_kb("VmHWM")
}

/// Resident set size of this process now (`VmRSS`), KiB; 0 where /proc has no answer.
pub fn rss_kb() -> u64 {
    proc_status_kb("VmRSS")
}

/// A `kB` line of `/proc/self/status`.
fn proc_status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

impl ScanRow {
    /// Row `n` (from 1) of the scan table, the same values as [`scan_table_ctas`] makes.
    pub fn generate(n: i64) -> ScanRow {
        let opt = |m: i64| n % m != 0;
        ScanRow {
            id: n,
            amount: n as f64 * 1.5,
            name: format!("name-{n}"),
            active: n % 2 == 0,
            price: Numeric::from_scaled(n as i128 * 10_000_000).expect("in range"),
            day: Date::new(18262 + (n % 1000) as i32),
            ts: Timestamp::new((1_704_067_200 + n) * 1_000_000),
            maybe_int: opt(5).then_some(n * 7),
            maybe_float: opt(7).then_some(n as f64 / 7.0),
            city: opt(3).then(|| format!("city-{}", n % 50)),
            flagged: opt(11).then_some(n % 3 == 0),
            discount: opt(13)
                .then(|| Numeric::from_scaled((n % 10_000) as i128 * 1_000_000).expect("in range")),
            shipped: opt(17).then(|| Date::new(18779 + (n % 365) as i32)),
            seen: opt(19).then(|| Timestamp::new((1_735_689_600 + 60 * n) * 1_000_000)),
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

/// Rows a write scenario writes: the driver's scan-table size (`BENCH_SCAN_ROWS`, 10k in a
/// smoke run), else [`SCAN_ROWS`].
pub fn scan_rows() -> usize {
    std::env::var("BENCH_SCAN_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SCAN_ROWS)
}

/// The scan table's columns, in order.
pub const SCAN_COLUMNS: [&str; 20] = [
    "id",
    "amount",
    "name",
    "active",
    "price",
    "day",
    "ts",
    "maybe_int",
    "maybe_float",
    "city",
    "flagged",
    "discount",
    "shipped",
    "seen",
    "code",
    "score",
    "qty",
    "note",
    "rec",
    "arr",
];

/// Rows per Arrow record batch in `write_1m_arrow`: 25,000 rows of the scan table are about
/// 5.5 MB of IPC, so a request stays under Storage Write's 10 MB limit (as in the `bigquery`
/// crate's benchmarks).
pub const ARROW_WRITE_BATCH_ROWS: usize = 25_000;

/// The scan table's schema in Arrow, as BigQuery maps its types (NUMERIC as
/// `Decimal128(38, 9)`, DATE as `Date32`, TIMESTAMP as microseconds in UTC).
pub fn scan_arrow_schema() -> arrow_schema::SchemaRef {
    use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
    let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let num = DataType::Decimal128(38, 9);
    let f = |name: &str, t: &DataType| Field::new(name, t.clone(), true);
    Schema::new(vec![
        f("id", &DataType::Int64),
        f("amount", &DataType::Float64),
        f("name", &DataType::Utf8),
        f("active", &DataType::Boolean),
        f("price", &num),
        f("day", &DataType::Date32),
        f("ts", &ts),
        f("maybe_int", &DataType::Int64),
        f("maybe_float", &DataType::Float64),
        f("city", &DataType::Utf8),
        f("flagged", &DataType::Boolean),
        f("discount", &num),
        f("shipped", &DataType::Date32),
        f("seen", &ts),
        f("code", &DataType::Utf8),
        f("score", &DataType::Float64),
        f("qty", &DataType::Int64),
        f("note", &DataType::Utf8),
        f(
            "rec",
            &DataType::Struct(Fields::from(vec![
                f("a", &DataType::Int64),
                f("b", &DataType::Utf8),
            ])),
        ),
        Field::new(
            "arr",
            DataType::List(std::sync::Arc::new(Field::new(
                "item",
                DataType::Int64,
                false,
            ))),
            false,
        ),
    ])
    .into()
}

/// Rows `first..first + rows` (from 1) of the scan table as one Arrow record batch, the same
/// values as [`ScanRow::generate`] and [`scan_table_ctas`] make.
pub fn scan_batch(first: i64, rows: usize) -> arrow_array::RecordBatch {
    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{
        ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array,
        RecordBatch, StringArray, StructArray, TimestampMicrosecondArray,
    };
    use std::sync::Arc;
    let ns = first..first + rows as i64;
    let i64s = |f: &dyn Fn(i64) -> Option<i64>| -> ArrayRef {
        Arc::new(ns.clone().map(f).collect::<Int64Array>())
    };
    let f64s = |f: &dyn Fn(i64) -> Option<f64>| -> ArrayRef {
        Arc::new(ns.clone().map(f).collect::<Float64Array>())
    };
    let strs = |f: &dyn Fn(i64) -> Option<String>| -> ArrayRef {
        Arc::new(ns.clone().map(f).collect::<StringArray>())
    };
    let bools = |f: &dyn Fn(i64) -> Option<bool>| -> ArrayRef {
        Arc::new(ns.clone().map(f).collect::<BooleanArray>())
    };
    let nums = |f: &dyn Fn(i64) -> Option<i128>| -> ArrayRef {
        let a = ns.clone().map(f).collect::<Decimal128Array>();
        Arc::new(a.with_precision_and_scale(38, 9).expect("valid"))
    };
    let dates = |f: &dyn Fn(i64) -> Option<i32>| -> ArrayRef {
        Arc::new(ns.clone().map(f).collect::<Date32Array>())
    };
    let tss = |f: &dyn Fn(i64) -> Option<i64>| -> ArrayRef {
        let a = ns.clone().map(f).collect::<TimestampMicrosecondArray>();
        Arc::new(a.with_timezone("UTC"))
    };
    let opt = |n: i64, m: i64| n % m != 0;
    let schema = scan_arrow_schema();
    let arrow_schema::DataType::Struct(rec_fields) = schema.field(18).data_type().clone() else {
        unreachable!("rec is a struct")
    };
    let rec = StructArray::new(
        rec_fields,
        vec![i64s(&|n| Some(n)), strs(&|n| Some(format!("s{n}")))],
        None,
    );
    let mut arr = ListBuilder::with_capacity(Int64Builder::with_capacity(rows * 3), rows)
        .with_field(Arc::new(arrow_schema::Field::new(
            "item",
            arrow_schema::DataType::Int64,
            false,
        )));
    for n in ns.clone() {
        arr.values().append_slice(&[n, n + 1, n + 2]);
        arr.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        i64s(&|n| Some(n)),
        f64s(&|n| Some(n as f64 * 1.5)),
        strs(&|n| Some(format!("name-{n}"))),
        bools(&|n| Some(n % 2 == 0)),
        nums(&|n| Some(n as i128 * 10_000_000)),
        dates(&|n| Some(18262 + (n % 1000) as i32)),
        tss(&|n| Some((1_704_067_200 + n) * 1_000_000)),
        i64s(&|n| opt(n, 5).then_some(n * 7)),
        f64s(&|n| opt(n, 7).then_some(n as f64 / 7.0)),
        strs(&|n| opt(n, 3).then(|| format!("city-{}", n % 50))),
        bools(&|n| opt(n, 11).then_some(n % 3 == 0)),
        nums(&|n| opt(n, 13).then_some((n % 10_000) as i128 * 1_000_000)),
        dates(&|n| opt(n, 17).then_some(18779 + (n % 365) as i32)),
        tss(&|n| opt(n, 19).then_some((1_735_689_600 + 60 * n) * 1_000_000)),
        strs(&|n| Some(format!("code-{}", n % 997))),
        f64s(&|n| Some((n % 1000) as f64 / 10.0)),
        i64s(&|n| Some((n * 13) % 100)),
        strs(&|n| opt(n, 4).then(|| format!("note for {n}"))),
        Arc::new(rec),
        Arc::new(arr.finish()),
    ];
    RecordBatch::try_new(schema, columns).expect("the columns match the schema")
}

/// `rows` rows of the scan table as record batches of `batch_rows` rows.
pub fn scan_batches(rows: usize, batch_rows: usize) -> Vec<arrow_array::RecordBatch> {
    (0..rows)
        .step_by(batch_rows)
        .map(|start| scan_batch(start as i64 + 1, batch_rows.min(rows - start)))
        .collect()
}

/// A contender's command line: `<scenario> [flags]`.
pub struct ContenderArgs {
    /// The scenario to run.
    pub scenario: String,
    flags: Vec<String>,
}

impl ContenderArgs {
    /// The process's arguments; without a scenario, prints `usage: {usage}` and exits with
    /// status 2.
    pub fn parse(usage: &str) -> Self {
        let mut args = std::env::args().skip(1);
        let Some(scenario) = args.next() else {
            eprintln!("usage: {usage}");
            std::process::exit(2);
        };
        ContenderArgs {
            scenario,
            flags: args.collect(),
        }
    }

    /// Whether `flag` (`--job`) was given.
    pub fn flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|a| a == flag)
    }

    /// The value after `option` (`--streams 4`), if it was given.
    pub fn value(&self, option: &str) -> Option<&str> {
        let at = self.flags.iter().position(|a| a == option)?;
        self.flags.get(at + 1).map(String::as_str)
    }
}

/// Why a contender did not measure a run.
#[derive(Debug)]
pub enum NotRun {
    /// The client cannot do this scenario, or the server lacks what its path needs: recorded
    /// as unsupported, with the reason, and not retried in later rounds.
    Unsupported(String),
    /// The run failed.
    Failed(String),
}

impl<E: std::fmt::Display> From<E> for NotRun {
    fn from(e: E) -> Self {
        NotRun::Failed(e.to_string())
    }
}

/// Prints a contender's one JSON line: the measurement, `{"unsupported": ..}` or
/// `{"error": ..}`.
pub fn print_outcome(outcome: Result<Measured, NotRun>) {
    let line = match outcome {
        Ok(m) => serde_json::to_string(&m).expect("a measurement serializes"),
        Err(NotRun::Unsupported(why)) => serde_json::json!({ "unsupported": why }).to_string(),
        Err(NotRun::Failed(e)) => serde_json::json!({ "error": e }).to_string(),
    };
    println!("{line}");
}

/// A bigq client builder from the driver's environment: the project in `BENCH_PROJECT`, and
/// the emulator's endpoints in `BENCH_REST` and `BENCH_GRPC` when they are set.
pub fn harness_builder() -> Result<bigq::ClientBuilder, String> {
    let project = std::env::var("BENCH_PROJECT").map_err(|_| "BENCH_PROJECT is not set")?;
    let mut b = bigq::Client::builder().with_project(project);
    if let Ok(rest) = std::env::var("BENCH_REST") {
        b = b.with_emulator(rest);
        if let Ok(grpc) = std::env::var("BENCH_GRPC") {
            b = b.with_emulator_grpc(grpc);
        }
    }
    Ok(b)
}

/// The server a tool runs against (`query-overhead`, `read-throughput`, `write-verify`): its REST
/// root, gRPC endpoint and project, from the command line.
#[derive(clap::Args, Debug, Clone)]
pub struct ServerArgs {
    /// The REST root of the server (`http://127.0.0.1:9050`).
    #[arg(long)]
    pub rest: String,
    /// The gRPC endpoint of the server (`http://127.0.0.1:9060`).
    #[arg(long)]
    pub grpc: String,
    #[arg(long, default_value = "bench-project")]
    pub project: String,
}

impl ServerArgs {
    /// A bigq client for the server, anonymous, over `transport`.
    pub async fn client(&self, transport: bigq::Transport) -> Result<bigq::Client, String> {
        bigq::Client::builder()
            .with_project(&self.project)
            .with_emulator(&self.rest)
            .with_emulator_grpc(&self.grpc)
            .with_transport(transport)
            .build()
            .await
            .map_err(|e| e.to_string())
    }

    /// A plain tonic channel to the server's gRPC port, connected, for raw calls (with the
    /// same HTTP/2 windows as bigq's).
    pub async fn raw_channel(&self) -> Result<tonic::transport::Channel, String> {
        tonic::transport::Channel::from_shared(self.grpc.clone())
            .map_err(|e| e.to_string())?
            .tcp_nodelay(true)
            .initial_stream_window_size(8 << 20)
            .initial_connection_window_size(32 << 20)
            .connect()
            .await
            .map_err(|e| e.to_string())
    }
}

/// The harness's own client (bigq) for a contender's untimed set-up, from the driver's
/// environment.
pub async fn harness_client() -> Result<bigq::Client, String> {
    harness_builder()?.build().await.map_err(|e| e.to_string())
}

/// Makes `dataset.name` an empty table with the scan table's schema, with `client`, and
/// returns its id (the untimed set-up of a write scenario).
pub async fn recreate_scan_copy(
    client: &bigq::Client,
    dataset: &str,
    name: &str,
) -> Result<String, String> {
    let target = format!("{dataset}.{name}");
    let table = client
        .get_table(&format!("{dataset}.scan"))
        .await
        .map_err(|e| e.to_string())?;
    let schema = table.schema.clone().ok_or("the scan table has no schema")?;
    let _ = client.delete_table(&target).await;
    client
        .create_table(bigq::admin::Table::new(&target, schema))
        .await
        .map_err(|e| e.to_string())?;
    Ok(target)
}

/// Makes `dataset.name` an empty table with the scan table's schema (untimed set-up of a
/// write scenario, done with the harness's client so every contender gets the same table).
pub async fn fresh_write_table(dataset: &str, name: &str) -> Result<(), String> {
    recreate_scan_copy(&harness_client().await?, dataset, name).await?;
    Ok(())
}

/// The gRPC service a failed call named, when the server answered that it does not serve it
/// (`UNIMPLEMENTED` for `/google.cloud.bigquery.v2.JobService/Query`, say).
pub fn unserved_service(error: &str) -> Option<String> {
    let lower = error.to_ascii_lowercase();
    if !(lower.contains("unimplemented") || lower.contains("does not serve")) {
        return None;
    }
    let start = error.find("google.cloud.bigquery.")?;
    let rest = &error[start..];
    let end = rest
        .find(|c: char| c == '/' || c.is_whitespace() || c == '"' || c == '\'')
        .unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Decimal128Type, Int64Type};

    #[test]
    fn unserved_service_names_the_service_of_an_unimplemented_method() {
        let emulator = "status: Unimplemented, message: \"bigq-emulator does not serve the gRPC \
                        method /google.cloud.bigquery.v2.JobService/Query\"";
        assert_eq!(
            unserved_service(emulator).as_deref(),
            Some("google.cloud.bigquery.v2.JobService")
        );
        let other = "status: InvalidArgument, message: \"google.cloud.bigquery.v2.Job bad\"";
        assert_eq!(unserved_service(other), None);
    }

    #[test]
    fn scan_columns_name_the_arrow_schema_fields_in_order() {
        let schema = scan_arrow_schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, SCAN_COLUMNS);
    }

    #[test]
    fn scan_batches_hold_the_rows_of_scan_row_generate() {
        let batches = scan_batches(30_000, ARROW_WRITE_BATCH_ROWS);
        let sizes: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
        assert_eq!(sizes, [25_000, 5_000]);
        let b = &batches[1];
        // Row n = 25_012: id, NUMERIC price n / 100 scaled by 1e9, discount NULL (n % 13 == 0).
        let i = 11;
        let n = 25_012i64;
        assert_eq!(b.column(0).as_primitive::<Int64Type>().value(i), n);
        let price = b.column(4).as_primitive::<Decimal128Type>().value(i);
        assert_eq!(price, n as i128 * 10_000_000);
        assert!(b.column(11).is_null(i));
        let row = ScanRow::generate(n);
        assert_eq!(row.discount.is_none(), b.column(11).is_null(i));
        assert_eq!(row.maybe_int.is_none(), b.column(7).is_null(i));
        let arr = b.column(19).as_list::<i32>().value(i);
        assert_eq!(arr.as_primitive::<Int64Type>().values(), &[n, n + 1, n + 2]);
    }
}

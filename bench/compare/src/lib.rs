//! What bench-compare's driver and its Rust contenders share: the scenarios' SQL, the scan
//! table's row type, and the measurement a contender prints.

use std::time::Instant;

use bigq::value::{Date, Numeric, Timestamp};
use serde::{Deserialize, Serialize};

/// Every scenario, in the order the driver runs them (seed 003's names, plus seed 000's
/// `json_300k`).
pub const SCENARIOS: &[&str] = &[
    "query_const",
    "query_1k",
    "query_200k_rows",
    "query_200k_arrow",
    "scan_typed",
    "scan_arrow",
    "decode",
    "write_1m_objects",
    "json_300k",
];

/// Scenarios that need the scan table (`write_1m_objects` writes rows of its shape into an
/// empty copy).
pub fn needs_scan_table(scenario: &str) -> bool {
    matches!(
        scenario,
        "scan_typed" | "scan_arrow" | "decode" | "write_1m_objects"
    )
}

/// Rows each scenario returns.
pub fn expected_rows(scenario: &str) -> Option<usize> {
    Some(match scenario {
        "query_const" => 1,
        "query_1k" => 1_000,
        "query_200k_rows" | "query_200k_arrow" => 200_000,
        "scan_typed" | "scan_arrow" | "decode" | "write_1m_objects" => SCAN_ROWS,
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

/// The scan table of seed 003: `rows` rows, 20 columns (INT64, FLOAT64, STRING, BOOL,
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
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
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

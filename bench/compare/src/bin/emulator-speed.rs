//! How fast a local BigQuery server answers, over raw REST, for servers side by side in one
//! run (bigq-emulator and bqemulator): `jobs.query` latency of `SELECT 1`, `CREATE TABLE AS
//! SELECT` of the scan table (20 columns), and `tabledata.list` rows/s paging through
//! that table. Rounds alternate between the servers (`SELECT 1` in blocks of 50 calls), so
//! a load that comes and goes hits both; medians are printed.
//!
//! ```text
//! target/release/bigq-emulator --port 9050 --grpc-port 9060 --project test-project &
//! scripts/bqemulator.sh start && source target/bqemulator/env
//! target/release/emulator-speed --server bigq-emulator=http://127.0.0.1:9050 \
//!     --server bqemulator=$BQEMU_REST_ENDPOINT@100000 --project test-project
//! ```
//!
//! `@N` after a server's address caps the rows its `tabledata.list` measurement reads (a slow
//! server would take minutes for the whole table); the rate is over the rows read.

use std::time::{Duration, Instant};

use bench_compare::scan_table_ctas;
use clap::Parser;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
struct Args {
    /// `name=REST root[@max rows to list]`, once per server.
    #[arg(long = "server", required = true)]
    servers: Vec<String>,
    /// The project on every server.
    #[arg(long, default_value = "test-project")]
    project: String,
    /// Rows of the scan table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Timed `SELECT 1` calls per server (after 20 untimed).
    #[arg(long, default_value_t = 300)]
    select1: usize,
    /// Timed rounds of CTAS and of the `tabledata.list` read, per server.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

struct Server {
    name: String,
    root: String,
    list_cap: Option<usize>,
}

impl Server {
    fn url(&self, project: &str, path: &str) -> String {
        format!("{}/bigquery/v2/projects/{project}{path}", self.root)
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

async fn post(http: &reqwest::Client, url: &str, body: &Value) -> Result<Value, String> {
    let r = http
        .post(url)
        .json(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = r.status();
    let v: Value = r.json().await.map_err(|e| e.to_string())?;
    if !status.is_success() || v.get("error").is_some() {
        return Err(format!("{url}: {status} {v}"));
    }
    Ok(v)
}

/// Runs `sql` to completion (polling `getQueryResults` while the job is not complete).
async fn run(http: &reqwest::Client, s: &Server, project: &str, sql: &str) -> Result<(), String> {
    let body = json!({"query": sql, "useLegacySql": false, "timeoutMs": 600_000, "maxResults": 1});
    let mut v = post(http, &s.url(project, "/queries"), &body).await?;
    while v.get("jobComplete") == Some(&Value::Bool(false)) {
        let job = v["jobReference"]["jobId"]
            .as_str()
            .ok_or("no job id")?
            .to_string();
        let loc = v["jobReference"]["location"]
            .as_str()
            .unwrap_or("US")
            .to_string();
        let url = s.url(
            project,
            &format!("/queries/{job}?timeoutMs=10000&maxResults=1&location={loc}"),
        );
        v = http
            .get(&url)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        if v.get("error").is_some() {
            return Err(format!("{url}: {v}"));
        }
    }
    Ok(())
}

/// One `tabledata.list` page: its rows (counted, not kept) and the next page's token.
#[derive(Deserialize)]
struct Page {
    #[serde(rename = "pageToken")]
    page_token: Option<String>,
    rows: Option<Vec<IgnoredAny>>,
}

/// Reads the table's rows (up to the server's cap): rows, bytes, time.
async fn list(
    http: &reqwest::Client,
    s: &Server,
    project: &str,
) -> Result<(usize, usize, Duration), String> {
    let start = Instant::now();
    let (mut rows, mut bytes) = (0usize, 0usize);
    let mut token: Option<String> = None;
    loop {
        let mut url = s.url(
            project,
            "/datasets/speed/tables/scan/data?formatOptions.useInt64Timestamp=true",
        );
        if let Some(t) = &token {
            url.push_str("&pageToken=");
            url.push_str(t);
        }
        let body = http
            .get(&url)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .bytes()
            .await
            .map_err(|e| e.to_string())?;
        bytes += body.len();
        let page: Page = serde_json::from_slice(&body).map_err(|e| {
            format!(
                "{url}: {e}: {}",
                String::from_utf8_lossy(&body[..body.len().min(300)])
            )
        })?;
        rows += page.rows.map_or(0, |r| r.len());
        token = page.page_token;
        if token.is_none() || s.list_cap.is_some_and(|c| rows >= c) {
            break;
        }
    }
    Ok((rows, bytes, start.elapsed()))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args = Args::parse();
    let servers: Vec<Server> = args
        .servers
        .iter()
        .map(|s| {
            let (name, rest) = s.split_once('=').ok_or(format!("--server {s}: name=url"))?;
            let (root, cap) = match rest.split_once('@') {
                Some((r, c)) => (r, Some(c.parse::<usize>().map_err(|e| e.to_string())?)),
                None => (rest, None),
            };
            Ok(Server {
                name: name.to_string(),
                root: root.trim_end_matches('/').to_string(),
                list_cap: cap,
            })
        })
        .collect::<Result<_, String>>()?;
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(4)
        .build()
        .map_err(|e| e.to_string())?;
    let p = &args.project;
    for s in &servers {
        let ds = json!({"datasetReference": {"projectId": p, "datasetId": "speed"}});
        let _ = post(&http, &s.url(p, "/datasets"), &ds).await;
    }

    // CTAS of the scan table, alternating servers.
    let sql = scan_table_ctas("speed", args.rows);
    let mut ctas: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
    for _ in 0..args.rounds {
        for (k, s) in servers.iter().enumerate() {
            let t = Instant::now();
            run(&http, s, p, &sql)
                .await
                .map_err(|e| format!("{} CTAS: {e}", s.name))?;
            ctas[k].push(t.elapsed());
        }
    }

    // SELECT 1, alternating in blocks of 50 calls: call by call, each call to one server
    // would land while the other is still finishing its last answer on the same 2 cores.
    let select1 = json!({"query": "SELECT 1", "useLegacySql": false});
    let mut lat: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
    let block = 50;
    for b in 0..(args.select1 + 20).div_ceil(block) {
        for (k, s) in servers.iter().enumerate() {
            for i in b * block..((b + 1) * block).min(args.select1 + 20) {
                let t = Instant::now();
                post(&http, &s.url(p, "/queries"), &select1)
                    .await
                    .map_err(|e| format!("{} SELECT 1: {e}", s.name))?;
                if i >= 20 {
                    lat[k].push(t.elapsed());
                }
            }
        }
    }

    // tabledata.list of the table the last CTAS left.
    let mut reads: Vec<Vec<(usize, usize, Duration)>> = vec![Vec::new(); servers.len()];
    for _ in 0..args.rounds {
        for (k, s) in servers.iter().enumerate() {
            reads[k].push(
                list(&http, s, p)
                    .await
                    .map_err(|e| format!("{} list: {e}", s.name))?,
            );
        }
    }

    println!(
        "{} rows, {} rounds, {} SELECT 1 calls per server\n",
        args.rows, args.rounds, args.select1
    );
    println!(
        "| server | SELECT 1 median (p90) | CTAS median | tabledata.list median | rows read | rows/s | MB/s |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (k, s) in servers.iter().enumerate() {
        let mut r = reads[k].clone();
        r.sort_by_key(|x| x.2);
        let (rows, bytes, t) = r[r.len() / 2];
        println!(
            "| {} | {:.2} ms ({:.2} ms) | {:.0} ms | {:.0} ms | {} | {:.0} | {:.1} |",
            s.name,
            median(lat[k].clone()).as_secs_f64() * 1e3,
            percentile(lat[k].clone(), 0.9).as_secs_f64() * 1e3,
            median(ctas[k].clone()).as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e3,
            rows,
            rows as f64 / t.as_secs_f64(),
            bytes as f64 / 1e6 / t.as_secs_f64(),
        );
    }
    Ok(())
}

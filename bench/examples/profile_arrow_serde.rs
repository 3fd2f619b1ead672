//! Decodes the scan table of `benches/arrow_serde.rs` in a loop, for a profiler or a
//! quick comparison on a busy machine:
//!
//! ```text
//! cargo build --release -p bigq-bench --example profile_arrow_serde
//! perf record -g target/release/examples/profile_arrow_serde bigq 10
//! target/release/examples/profile_arrow_serde compare 15
//! ```
//!
//! `bigq`, `bigq-std`, `bigquery` and `bigquery-std` decode the table `rounds` times; `compare` alternates
//! bigq and the `bigquery` crate round by round (so a load that comes and goes hits both)
//! and prints the median and fastest round of each.

#[allow(dead_code)]
#[path = "../benches/scan_table/mod.rs"]
mod scan_table;

use std::time::{Duration, Instant};

use scan_table::*;

fn timed(f: impl FnOnce() -> usize) -> Duration {
    let start = Instant::now();
    let n = f();
    assert_eq!(n, ROWS);
    start.elapsed()
}

fn summary(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{name:>16}: median {median:>10.3?} ({:.0} ns/row, {:.2} M rows/s), fastest {:.3?}",
        median.as_nanos() as f64 / ROWS as f64,
        ROWS as f64 / median.as_secs_f64() / 1e6,
        times[0]
    );
    median
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "bigq".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(10);
    let batches = batches();
    let mut bigq: Vec<BigqRow> = Vec::with_capacity(BATCH);
    let mut bigq_std: Vec<StdRow> = Vec::with_capacity(BATCH);
    let mut other: Vec<BigqueryRow> = Vec::with_capacity(BATCH);
    let mut other_std: Vec<StdRow> = Vec::with_capacity(BATCH);
    match which.as_str() {
        "compare" => {
            let (mut a, mut b, mut c, mut d) = (vec![], vec![], vec![], vec![]);
            for _ in 0..rounds {
                a.push(timed(|| stream_bigq(&batches, &mut bigq)));
                b.push(timed(|| stream_bigquery(&batches, &mut other)));
                c.push(timed(|| stream_bigq(&batches, &mut bigq_std)));
                d.push(timed(|| stream_bigquery(&batches, &mut other_std)));
            }
            let (a, b) = (summary("bigq/native", a), summary("bigquery/native", b));
            println!("{:>16}: {:.2}x", "ratio", b.as_secs_f64() / a.as_secs_f64());
            let (c, d) = (summary("bigq/std", c), summary("bigquery/std", d));
            println!("{:>16}: {:.2}x", "ratio", d.as_secs_f64() / c.as_secs_f64());
        }
        "bigq" => {
            let t: Vec<_> = (0..rounds)
                .map(|_| timed(|| stream_bigq(&batches, &mut bigq)))
                .collect();
            summary("bigq/native", t);
        }
        "bigq-std" => {
            let t: Vec<_> = (0..rounds)
                .map(|_| timed(|| stream_bigq(&batches, &mut bigq_std)))
                .collect();
            summary("bigq/std", t);
        }
        "bigquery-std" => {
            let t: Vec<_> = (0..rounds)
                .map(|_| timed(|| stream_bigquery(&batches, &mut other_std)))
                .collect();
            summary("bigquery/std", t);
        }
        _ => {
            let t: Vec<_> = (0..rounds)
                .map(|_| timed(|| stream_bigquery(&batches, &mut other)))
                .collect();
            summary("bigquery/native", t);
        }
    }
}

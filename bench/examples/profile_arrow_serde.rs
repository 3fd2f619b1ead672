//! Decodes the scan table of `benches/arrow_serde.rs` in a loop, for a profiler:
//! `cargo build --release -p bigq-bench --example profile_arrow_serde`, then
//! `perf record -g target/release/examples/profile_arrow_serde [bigq|bigquery] [rounds]`.

#[path = "../benches/scan_table/mod.rs"]
#[allow(dead_code)]
mod scan_table;

use scan_table::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "bigq".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(10);
    let batches = batches();
    let start = std::time::Instant::now();
    let mut n = 0;
    match which.as_str() {
        "bigq" => {
            let mut out: Vec<BigqRow> = Vec::with_capacity(BATCH);
            for _ in 0..rounds {
                n += stream_bigq(&batches, &mut out);
            }
        }
        "bigq-std" => {
            let mut out: Vec<StdRow> = Vec::with_capacity(BATCH);
            for _ in 0..rounds {
                n += stream_bigq(&batches, &mut out);
            }
        }
        _ => {
            let mut out: Vec<BigqueryRow> = Vec::with_capacity(BATCH);
            for _ in 0..rounds {
                n += stream_bigquery(&batches, &mut out);
            }
        }
    }
    let t = start.elapsed();
    println!(
        "{which}: {n} rows in {t:?}, {:.0} ns/row",
        t.as_nanos() as f64 / n as f64
    );
}

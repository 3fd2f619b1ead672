//! Decodes the scan table of `benches/arrow_serde.rs` in a loop, for a profiler or a
//! quick comparison on a busy machine:
//!
//! ```text
//! cargo build --release -p bigq-bench --example profile_arrow_serde
//! perf record -g target/release/examples/profile_arrow_serde bigq 10
//! target/release/examples/profile_arrow_serde compare 15
//! # both decoders with mimalloc as the global allocator instead of glibc's malloc
//! cargo build --release -p bigq-bench --example profile_arrow_serde --features mimalloc
//! ```
//!
//! `bigq`, `bigq-in-place`, `bigq-std`, `bigquery` and `bigquery-std` decode the table `rounds` times; `compare` alternates
//! bigq and the `bigquery` crate round by round (so a load that comes and goes hits both)
//! and prints the median and fastest round of each, in wall time and (on Linux) in time
//! on the CPU, which a busy machine's waits for a core do not inflate.
//!
//! `floor` alternates bigq, bigq into rows that borrow their strings from the batches
//! (`bigq-borrowed` alone: what decoding costs without the rows' own string allocations)
//! and the `bigquery` crate; `fresh` alternates bigq's `RowDecoder` with a fresh decoder
//! per batch (`extend_from_record_batch`).
//!
//! The same for the Storage Write encoders of `benches/storage_write_encode.rs` (the rows
//! decoded once, then encoded into protobuf, NUMERIC packed): `write-bigq`,
//! `write-bigquery`, and `write-compare`, which alternates them.

#[allow(dead_code)]
#[path = "../benches/scan_table/mod.rs"]
mod scan_table;
#[path = "../benches/write_table/mod.rs"]
mod write_table;

use bigq_codec::proto::NumericEncoding;
use bigquery::BigQueryWriteCodecBench;

use std::time::{Duration, Instant};

use scan_table::*;

/// With `--features mimalloc`, every decoder in this binary allocates through mimalloc
/// instead of glibc's malloc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Nanoseconds this thread has run on a CPU (Linux `schedstat`), if known.
fn on_cpu() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Wall time and time on the CPU of one round.
#[derive(Clone, Copy)]
struct Round {
    wall: Duration,
    cpu: Option<Duration>,
}

fn timed(f: impl FnOnce() -> usize) -> Round {
    let cpu0 = on_cpu();
    let start = Instant::now();
    let n = f();
    let wall = start.elapsed();
    assert_eq!(n, *ROWS);
    let cpu = cpu0.zip(on_cpu()).map(|(a, b)| Duration::from_nanos(b - a));
    Round { wall, cpu }
}

/// Prints the medians and returns them (wall, CPU).
fn summary(name: &str, rounds: Vec<Round>) -> (Duration, Option<Duration>) {
    let median = |mut v: Vec<Duration>| {
        v.sort();
        (v[v.len() / 2], v[0])
    };
    let (wall, fastest) = median(rounds.iter().map(|r| r.wall).collect());
    let cpu = rounds
        .iter()
        .map(|r| r.cpu)
        .collect::<Option<Vec<_>>>()
        .map(|v| median(v).0);
    println!(
        "{name:>16}: median {wall:>10.3?} wall ({:.0} ns/row, {:.2} M rows/s), fastest \
         {fastest:.3?}, median on CPU {}",
        wall.as_nanos() as f64 / *ROWS as f64,
        *ROWS as f64 / wall.as_secs_f64() / 1e6,
        cpu.map_or("?".to_string(), |c| format!("{c:.3?}")),
    );
    (wall, cpu)
}

fn ratio(a: (Duration, Option<Duration>), b: (Duration, Option<Duration>)) {
    let cpu = a.1.zip(b.1).map_or("?".to_string(), |(a, b)| {
        format!("{:.2}x", b.as_secs_f64() / a.as_secs_f64())
    });
    println!(
        "{:>16}: {:.2}x wall, {cpu} on CPU",
        "ratio",
        b.0.as_secs_f64() / a.0.as_secs_f64()
    );
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
    if let Some(write) = which.strip_prefix("write-") {
        let native: Vec<BigqRow> = decode_bigq(&batches);
        let theirs: Vec<BigqueryRow> = decode_bigquery(&batches);
        let mut out = Vec::with_capacity(4096);
        let mut ours = write_table::bigq_encoder(NumericEncoding::Packed);
        let mut other = BigQueryWriteCodecBench::new(&write_table::bigquery_schema());
        let mut encode_ours = |out: &mut Vec<u8>| {
            write_table::encode_bigq(&mut ours, &native, out);
            native.len()
        };
        let mut encode_other = |out: &mut Vec<u8>| {
            write_table::encode_bigquery(&mut other, &theirs, out);
            theirs.len()
        };
        match write {
            "compare" => {
                let (mut a, mut b) = (vec![], vec![]);
                for _ in 0..rounds {
                    a.push(timed(|| encode_ours(&mut out)));
                    b.push(timed(|| encode_other(&mut out)));
                }
                let (a, b) = (summary("bigq/encode", a), summary("bigquery/encode", b));
                ratio(a, b);
            }
            "bigq" => {
                let t: Vec<_> = (0..rounds)
                    .map(|_| timed(|| encode_ours(&mut out)))
                    .collect();
                summary("bigq/encode", t);
            }
            _ => {
                let t: Vec<_> = (0..rounds)
                    .map(|_| timed(|| encode_other(&mut out)))
                    .collect();
                summary("bigquery/encode", t);
            }
        }
        return;
    }
    match which.as_str() {
        "compare" => {
            let (mut a, mut b, mut c, mut d, mut e) = (vec![], vec![], vec![], vec![], vec![]);
            for _ in 0..rounds {
                e.push(timed(|| stream_bigq_in_place(&batches, &mut bigq)));
                bigq.clear();
                a.push(timed(|| stream_bigq(&batches, &mut bigq)));
                b.push(timed(|| stream_bigquery(&batches, &mut other)));
                c.push(timed(|| stream_bigq(&batches, &mut bigq_std)));
                d.push(timed(|| stream_bigquery(&batches, &mut other_std)));
            }
            let (a, b) = (summary("bigq/native", a), summary("bigquery/native", b));
            ratio(a, b);
            let (c, d) = (summary("bigq/std", c), summary("bigquery/std", d));
            ratio(c, d);
            let e = summary("bigq/in_place", e);
            ratio(e, b);
        }
        // Rows borrowing their strings: what the decode costs without the rows' own string
        // allocations, against the `bigquery` crate's owned rows.
        "floor" => {
            let mut borrowed: Vec<BigqRowRef> = Vec::with_capacity(BATCH);
            let (mut a, mut b, mut f) = (vec![], vec![], vec![]);
            for _ in 0..rounds {
                a.push(timed(|| stream_bigq(&batches, &mut bigq)));
                f.push(timed(|| stream_bigq(&batches, &mut borrowed)));
                b.push(timed(|| stream_bigquery(&batches, &mut other)));
            }
            let (a, b) = (summary("bigq/native", a), summary("bigquery/native", b));
            ratio(a, b);
            let f = summary("bigq/borrowed", f);
            ratio(f, b);
        }
        "fresh" => {
            let (mut a, mut f) = (vec![], vec![]);
            for _ in 0..rounds {
                a.push(timed(|| stream_bigq(&batches, &mut bigq)));
                f.push(timed(|| stream_bigq_fresh(&batches, &mut bigq)));
            }
            let a = summary("bigq/native", a);
            let f = summary("bigq/fresh", f);
            ratio(a, f);
        }
        "bigq-borrowed" => {
            let mut borrowed: Vec<BigqRowRef> = Vec::with_capacity(BATCH);
            let t: Vec<_> = (0..rounds)
                .map(|_| timed(|| stream_bigq(&batches, &mut borrowed)))
                .collect();
            summary("bigq/borrowed", t);
        }
        "bigq" => {
            let t: Vec<_> = (0..rounds)
                .map(|_| timed(|| stream_bigq(&batches, &mut bigq)))
                .collect();
            summary("bigq/native", t);
        }
        "bigq-in-place" => {
            let t: Vec<_> = (0..rounds)
                .map(|_| timed(|| stream_bigq_in_place(&batches, &mut bigq)))
                .collect();
            summary("bigq/in_place", t);
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

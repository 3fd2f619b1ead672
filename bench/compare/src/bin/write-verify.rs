//! Exactly-once verification of bigq's Storage Write client at scale: rows of the scan table
//! (20 columns) written by bigq through every stream type, as protobuf rows
//! from serde and as Arrow batches, into an in-process bigq-emulator, with the connection
//! cut mid-way by the emulator's fault hook for the streams that have offsets (COMMITTED,
//! PENDING, BUFFERED). Each table is then checked by query: row count, distinct ids and
//! sums over columns of every type, against the same figures computed here from the rows
//! that were sent. Exits 1 when any table differs.
//!
//! ```sh
//! cargo build --release -p bench-compare --bin write-verify
//! target/release/write-verify --rows 1000000
//! ```
//!
//! A test rather than a benchmark: its seconds are printed for orientation only.

use std::process::ExitCode;
use std::time::Instant;

use arrow_array::Array;
use bench_compare::{ARROW_WRITE_BATCH_ROWS, ScanRow, recreate_scan_copy, scan_batches};
use bench_compare::{SCAN_ROWS, ServerArgs, scan_table_ctas};
use bigq::Client;
use bigq::write::WriteSummary;
use bigq_emulator::Emulator;
use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Rows written into each table.
    #[arg(long, default_value_t = SCAN_ROWS)]
    rows: usize,
    /// The writer's request size limit (BigQuery's default, 10 MB, unless set).
    #[arg(long, default_value_t = 10 * 1024 * 1024)]
    max_request_bytes: usize,
    /// The connection is cut after this many AppendRows requests (COMMITTED, PENDING and
    /// BUFFERED streams).
    #[arg(long, default_value_t = 8)]
    cut_after: u64,
}

/// How a table is written.
#[derive(Clone, Copy)]
enum Stream {
    Default,
    Committed,
    Pending,
    Buffered,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Default => "_default",
            Stream::Committed => "COMMITTED",
            Stream::Pending => "PENDING",
            Stream::Buffered => "BUFFERED",
        }
    }

    /// Whether the stream has offsets, so a cut connection must not duplicate rows.
    fn cut(self) -> bool {
        !matches!(self, Stream::Default)
    }
}

/// The figures a table is checked by.
const CHECK_SQL: &str = "SELECT COUNT(*), COUNT(DISTINCT id), SUM(id), SUM(qty), SUM(rec.a), \
    SUM(ARRAY_LENGTH(arr)), SUM(arr[OFFSET(2)]), COUNT(note), COUNT(maybe_int), SUM(maybe_int), \
    COUNT(discount), COUNT(seen), SUM(UNIX_DATE(day)), SUM(CAST(price * 100 AS INT64)), \
    SUM(UNIX_SECONDS(ts)), SUM(LENGTH(name)), COUNTIF(active), COUNTIF(flagged), \
    SUM(CAST(score * 10 AS INT64)), COUNT(DISTINCT city)";

type Figures = [i64; 20];

/// The figures of rows `1..=rows`, computed from the rows themselves.
fn expected(rows: usize) -> Figures {
    let mut f = [0i64; 20];
    let mut cities = std::collections::BTreeSet::new();
    for n in 1..=rows as i64 {
        let r = ScanRow::generate(n);
        f[0] += 1;
        f[1] += 1;
        f[2] += r.id;
        f[3] += r.qty;
        f[4] += r.rec.a;
        f[5] += r.arr.len() as i64;
        f[6] += r.arr[2];
        f[7] += i64::from(r.note.is_some());
        f[8] += i64::from(r.maybe_int.is_some());
        f[9] += r.maybe_int.unwrap_or(0);
        f[10] += i64::from(r.discount.is_some());
        f[11] += i64::from(r.seen.is_some());
        f[12] += i64::from(r.day.get());
        f[13] += (r.price.to_scaled() / 10_000_000) as i64;
        f[14] += r.ts.get() / 1_000_000;
        f[15] += r.name.chars().count() as i64;
        f[16] += i64::from(r.active);
        f[17] += i64::from(r.flagged == Some(true));
        f[18] += (r.score * 10.0).round() as i64;
        if let Some(c) = r.city {
            cities.insert(c);
        }
    }
    f[19] = cities.len() as i64;
    f
}

async fn figures(client: &Client, table: &str) -> Result<Figures, String> {
    let batches: Vec<arrow_array::RecordBatch> = client
        .query(format!("{CHECK_SQL} FROM `{table}`"))
        .batches()
        .await
        .map_err(|e| format!("checking {table}: {e}"))?
        .try_collect()
        .await
        .map_err(|e| format!("checking {table}: {e}"))?;
    let batch = batches
        .iter()
        .find(|b| b.num_rows() == 1)
        .ok_or_else(|| format!("checking {table}: no row"))?;
    let mut f = [0i64; 20];
    for (i, v) in f.iter_mut().enumerate() {
        let col = batch.column(i);
        let ints = col
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .ok_or_else(|| format!("checking {table}: column {i} is {}", col.data_type()))?;
        *v = if ints.is_null(0) { 0 } else { ints.value(0) };
    }
    Ok(f)
}

async fn write(
    client: &Client,
    table: &str,
    stream: Stream,
    arrow: bool,
    args: &Args,
) -> Result<WriteSummary, String> {
    let e = |e: bigq::Error| format!("writing {table}: {e}");
    let b = client
        .write(table)
        .max_request_bytes(args.max_request_bytes);
    let b = match stream {
        Stream::Default => b.default_stream(),
        Stream::Committed => b.committed(),
        Stream::Pending => b.pending(),
        Stream::Buffered => b.buffered(),
    };
    let mut writer = b.open().await.map_err(e)?;
    if arrow {
        for batch in scan_batches(args.rows, ARROW_WRITE_BATCH_ROWS) {
            writer.append_batch(&batch).await.map_err(e)?;
        }
    } else {
        let rows: Vec<ScanRow> = (1..=args.rows as i64).map(ScanRow::generate).collect();
        for chunk in rows.chunks(10_000) {
            writer.append(chunk).await.map_err(e)?;
        }
    }
    match stream {
        Stream::Pending => {
            writer.flush().await.map_err(e)?;
            let seen = figures(client, table).await?[0];
            if seen != 0 {
                return Err(format!("{table}: {seen} rows visible before the commit"));
            }
            writer.commit().await.map_err(e)
        }
        Stream::Buffered => {
            writer.flush().await.map_err(e)?;
            writer.finish().await.map_err(e)
        }
        _ => writer.finish().await.map_err(e),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("write-verify: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: &Args) -> Result<bool, String> {
    let emu = Emulator::builder()
        .with_project("verify")
        .start()
        .await
        .map_err(|e| format!("starting bigq-emulator: {e}"))?;
    let server = ServerArgs {
        rest: emu.rest_endpoint(),
        grpc: emu.grpc_endpoint(),
        project: emu.project().to_string(),
    };
    let client = server.client(bigq::Transport::Rest).await?;
    client
        .create_dataset(bigq::admin::Dataset::new("ds"))
        .await
        .map_err(|e| e.to_string())?;
    // The scan table's schema, from the same CREATE TABLE AS SELECT the harness runs.
    client
        .query(scan_table_ctas("ds", 1))
        .run()
        .await
        .map_err(|e| e.to_string())?;
    let want = expected(args.rows);
    println!(
        "{} rows of the scan table per table, requests of at most {} bytes, \
         connection cut after {} requests where the stream has offsets",
        args.rows, args.max_request_bytes, args.cut_after
    );
    println!("| format | stream | cut | rows written | requests | MB sent | retries | s | check |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut all_ok = true;
    for arrow in [false, true] {
        for stream in [
            Stream::Default,
            Stream::Committed,
            Stream::Pending,
            Stream::Buffered,
        ] {
            let format = if arrow { "Arrow" } else { "protobuf" };
            let name = format!(
                "{}_{}",
                format.to_lowercase(),
                stream.name().trim_start_matches('_')
            );
            let table = recreate_scan_copy(&client, "ds", &name.to_lowercase()).await?;
            let cuts = emu.faults().append_rows_cut();
            if stream.cut() {
                emu.faults().cut_next_append_rows(args.cut_after);
            }
            let t = Instant::now();
            let summary = write(&client, &table, stream, arrow, args).await?;
            let secs = t.elapsed().as_secs_f64();
            let got = figures(&client, &table).await?;
            let mut problems = Vec::new();
            if stream.cut() && emu.faults().append_rows_cut() != cuts + 1 {
                problems.push("the cut never fired".to_string());
            }
            if summary.rows_written != args.rows as u64 {
                problems.push(format!("the writer reported {} rows", summary.rows_written));
            }
            for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
                if g != w {
                    problems.push(format!("figure {i} is {g}, expected {w}"));
                }
            }
            all_ok &= problems.is_empty();
            println!(
                "| {format} | {} | {} | {} | {} | {:.1} | {} | {secs:.2} | {} |",
                stream.name(),
                if stream.cut() { "yes" } else { "no" },
                summary.rows_written,
                summary.requests,
                summary.bytes_sent as f64 / 1e6,
                summary.retries,
                if problems.is_empty() {
                    "exactly once".to_string()
                } else {
                    problems.join("; ")
                }
            );
            // Each table is dropped once checked, so the emulator holds one at a time.
            let _ = client.delete_table(&table).await;
        }
    }
    emu.shutdown().await;
    Ok(all_ok)
}

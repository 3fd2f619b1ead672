//! How much memory a streaming Storage Read holds: the scan table read through bigq with
//! each row (or batch) dropped as soon as it is counted, as a caller that streams does. Prints
//! the process's resident memory before the read, its high-water mark during it, and the
//! size of one decoded batch, so the growth can be read in batches. One mode per process
//! (the high-water mark is the process's own).
//!
//! ```sh
//! target/release/bigq-emulator --port 9050 --grpc-port 9060 --project bench &
//! # ... with the scan table in bench.ds.scan (bench-compare makes it), then:
//! target/release/read-memory --rest http://127.0.0.1:9050 --grpc http://127.0.0.1:9060 \
//!     --project bench --table ds.scan --mode typed      # or --mode arrow
//! ```

use bench_compare::{ScanRow, ServerArgs, peak_rss_kb, rss_kb};
use bigq::Transport;
use clap::{Parser, ValueEnum};
use futures::TryStreamExt;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Mode {
    /// Rows decoded into `ScanRow` on each stream's task.
    Typed,
    /// Arrow `RecordBatch`es.
    Arrow,
}

/// Memory of one streaming Storage Read.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// `dataset.table` to read.
    #[arg(long, default_value = "ds.scan")]
    table: String,
    #[arg(long, value_enum, default_value_t = Mode::Typed)]
    mode: Mode,
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("read-memory: {e}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<(), String> {
    let client = args.server.client(Transport::Rest).await?;
    let e = |e: bigq::Error| e.to_string();
    let before = rss_kb();
    let (rows, batches, batch_bytes, streams) = match args.mode {
        Mode::Typed => {
            let mut stream = client
                .read(&args.table)
                .rows::<ScanRow>()
                .await
                .map_err(e)?;
            let streams = stream.stream_count();
            let mut rows = 0usize;
            while let Some(row) = stream.try_next().await.map_err(e)? {
                rows += usize::from(row.id != 0);
            }
            (rows, 0, 0, streams)
        }
        Mode::Arrow => {
            let mut stream = client.read(&args.table).batches().await.map_err(e)?;
            let streams = stream.stream_count();
            let (mut rows, mut batches, mut bytes) = (0, 0, 0);
            while let Some(b) = stream.try_next().await.map_err(e)? {
                rows += b.num_rows();
                batches += 1;
                bytes += b.get_array_memory_size();
            }
            (rows, batches, bytes, streams)
        }
    };
    let peak = peak_rss_kb();
    let per_batch = batch_bytes.checked_div(batches).unwrap_or(0);
    println!(
        "{{\"mode\":\"{:?}\",\"rows\":{rows},\"streams\":{streams},\"rss_before_mb\":{:.1},\
         \"peak_mb\":{:.1},\"growth_mb\":{:.1},\"batches\":{batches},\"mb_per_batch\":{:.2}}}",
        args.mode,
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        peak.saturating_sub(before) as f64 / 1024.0,
        per_batch as f64 / (1024.0 * 1024.0),
    );
    Ok(())
}

//! `bigq read`: a table through the Storage Read API, to stdout or a file; `bigq head`: its
//! first rows through tabledata.list.

use std::sync::atomic::Ordering;
use std::time::Instant;

use bigq::Transport;
use futures::StreamExt;

use crate::cli::{Format, Global, HeadArgs, ReadArgs};
use crate::error::{Failure, Result};
use crate::output::Sink;
use crate::{connect, progress};

/// Runs `bigq read`.
pub async fn run(global: &Global, args: ReadArgs) -> Result<()> {
    if args.format == Format::Table {
        return Err(Failure::new(
            "bigq read writes csv, json, ndjson or parquet (--format); use bigq query for a grid",
        ));
    }
    let client = connect::client(global, Transport::Rest).await?;
    // The row count for the bar; a table without one (or a filtered read) gets a counter.
    let total = if args.filter.is_none() {
        client
            .get_table(&args.table)
            .await
            .ok()
            .and_then(|t| t.num_rows)
    } else {
        None
    };
    let mut read = client.read(&args.table);
    if !args.columns.is_empty() {
        read = read.selected_fields(args.columns.iter().map(|c| c.trim().to_string()));
    }
    if let Some(f) = &args.filter {
        read = read.row_restriction(f);
    }
    if let Some(n) = args.streams {
        read = read.max_streams(n);
    }
    let started = Instant::now();
    let mut batches = read.batches().await?;
    let mut sink = Sink::new(args.format, batches.schema(), args.out.as_deref(), None)?;
    let bytes = sink.bytes();
    let bar = progress::rows(total);
    while let Some(batch) = batches.next().await {
        sink.write(&batch?)?;
        bar.set_position(sink.rows());
        bar.set_message(progress::rate(bytes.load(Ordering::Relaxed), started));
    }
    bar.finish_and_clear();
    let rows = sink.rows();
    sink.finish()?;
    let written = bytes.load(Ordering::Relaxed);
    eprintln!(
        "{rows} rows, {} written ({}), {} streams, {:.2?}",
        indicatif::HumanBytes(written),
        progress::rate(written, started),
        batches.stream_count(),
        started.elapsed()
    );
    Ok(())
}

/// Runs `bigq head`: the first `--rows` rows from `--start`, one page of tabledata.list (no
/// query job, so nothing is billed).
pub async fn head(global: &Global, args: HeadArgs) -> Result<()> {
    if args.format == Format::Parquet {
        return Err(Failure::new(
            "bigq head prints rows; use bigq read --format parquet for a file",
        ));
    }
    let client = connect::client(global, Transport::Rest).await?;
    let page = u32::try_from(args.rows.clamp(1, 100_000)).unwrap_or(100_000);
    let mut data = client
        .read_table_data(&args.table)
        .page_size(page)
        .start_index(args.start);
    if !args.columns.is_empty() {
        data = data.selected_fields(args.columns.iter().map(|c| c.trim().to_string()));
    }
    let mut batches = data.batches().await?;
    let mut sink = Sink::new(args.format, batches.schema(), None, Some(args.rows))?;
    while let Some(batch) = batches.next().await {
        if !sink.write(&batch?)? {
            break;
        }
    }
    sink.finish()?;
    Ok(())
}

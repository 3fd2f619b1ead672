//! `bigq query`: run a statement, stream its rows to stdout, statistics to stderr.

use std::io::IsTerminal;
use std::time::Instant;

use bigq::Transport;
use futures::StreamExt;

use crate::cli::{Global, QueryArgs};
use crate::connect;
use crate::error::Result;
use crate::output::Sink;
use crate::{params, progress};

/// Runs `bigq query`.
pub async fn run(global: &Global, args: QueryArgs) -> Result<()> {
    let transport = if args.grpc {
        Transport::Grpc
    } else {
        Transport::Rest
    };
    let client = connect::client(global, transport).await?;
    let mut q = client.query(&args.sql);
    for p in &args.params {
        let (name, param) = params::named(p)?;
        q = q.param(name, param);
    }
    for b in &args.binds {
        q = q.bind(params::positional(b)?);
    }
    if let Some(ds) = &args.dataset {
        q = q.default_dataset(ds);
    }
    q = q.job_creation_required(args.job);
    if args.no_storage_read {
        q = q.use_storage_read(false);
    }
    if args.dry_run {
        let stats = q.dry_run(true).execute().await?;
        let bytes = stats.total_bytes_processed.unwrap_or(0);
        println!(
            "{bytes} bytes would be processed ({})",
            indicatif::HumanBytes(bytes.max(0) as u64)
        );
        return Ok(());
    }

    let started = Instant::now();
    let spinner = progress::spinner("running query");
    let results = q.run().await;
    spinner.finish_and_clear();
    let results = results?;
    let stats = results.stats().clone();
    let mut sink = Sink::new(args.format, results.arrow_schema(), None, args.max_rows)?;
    // Rows go to stdout; a bar on stderr only when stdout is not the same terminal.
    let bar = (!std::io::stdout().is_terminal()).then(|| progress::rows(results.total_rows()));
    let mut batches = results.into_batches();
    while let Some(batch) = batches.next().await {
        let more = sink.write(&batch?)?;
        if let Some(bar) = &bar {
            bar.set_position(sink.rows());
        }
        if !more {
            break;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let shown = sink.rows();
    sink.finish()?;

    let mut line = match stats.total_rows {
        Some(n) if n != shown => format!("{shown} of {n} rows"),
        _ => format!("{shown} rows"),
    };
    if let Some(n) = stats.num_dml_affected_rows {
        line += &format!(", {n} rows affected");
    }
    if let Some(b) = stats.total_bytes_processed {
        line += &format!(
            ", {} bytes processed ({})",
            b,
            indicatif::HumanBytes(b.max(0) as u64)
        );
    }
    match (&stats.job_reference, &stats.query_id) {
        (Some(j), _) if !j.job_id.is_empty() => {
            line += &format!(", job {}:", j.project_id);
            if let Some(l) = &j.location {
                line += &format!("{l}.");
            }
            line += &j.job_id;
        }
        (_, Some(id)) => line += &format!(", query id {id}"),
        _ => {}
    }
    if stats.cache_hit == Some(true) {
        line += ", cached";
    }
    line += &format!(", {:.2?}", started.elapsed());
    eprintln!("{line}");
    Ok(())
}

//! `bigq write`: rows of an NDJSON or CSV file into a table through the Storage Write API.
//!
//! Rows go to a COMMITTED stream (visible as they are confirmed, exactly once) or, with
//! `--pending`, to a PENDING stream committed at the end, so that the file's rows land all
//! together or not at all. A row that does not fit the table's schema is not written: it is
//! reported with its line and column, the rows after it still go in (COMMITTED) or nothing
//! is committed (PENDING), and the command exits non-zero.

use std::io::BufReader;
use std::path::Path;

use bigq::Transport;
use serde_json::Value;

use crate::cli::{Global, InputFormat, WriteArgs};
use crate::error::{Failure, Result};
use crate::input::{self, Row, Rows};
use crate::{connect, progress};

/// Rows handed to the writer at a time.
const CHUNK: usize = 1000;
/// Bad rows listed on stderr before the rest are only counted.
const MAX_LISTED: usize = 20;

/// Runs `bigq write`.
pub async fn run(global: &Global, args: WriteArgs) -> Result<()> {
    let format = match args.format {
        Some(f) => f,
        None => format_of(&args.from)?,
    };
    let client = connect::client(global, Transport::Rest).await?;
    let table = client.get_table(&args.table).await?;
    let schema = table
        .schema
        .clone()
        .ok_or_else(|| Failure::new(format!("table {} has no schema", args.table)))?;
    let file = std::fs::File::open(&args.from).map_err(|e| Failure::file(&args.from, e))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut rows: Box<dyn Rows> = match format {
        InputFormat::Ndjson => Box::new(input::Ndjson::new(
            BufReader::new(file),
            schema.fields.clone(),
        )),
        InputFormat::Csv => Box::new(input::Csv::new(BufReader::new(file), &schema.fields)?),
    };

    let mut builder = client.write(&args.table).schema(schema);
    builder = if args.pending {
        builder.pending()
    } else {
        builder.committed()
    };
    let mut writer = builder.open().await?;
    let bar = progress::file(len);
    // The file line of each row the writer took, by the writer's row index.
    let mut lines: Vec<u64> = Vec::new();
    let mut bad: Vec<String> = Vec::new();
    let mut bad_count = 0usize;
    let mut report = |msg: String| {
        bad_count += 1;
        if bad.len() < MAX_LISTED {
            bar.suspend(|| eprintln!("{msg}"));
            bad.push(msg);
        }
    };
    loop {
        let mut chunk: Vec<Row> = Vec::with_capacity(CHUNK);
        while chunk.len() < CHUNK {
            match rows.next_row() {
                Some(Ok(r)) => chunk.push(r),
                Some(Err(e)) => report(format!("{}: {e}", args.from.display())),
                None => break,
            }
        }
        if chunk.is_empty() {
            break;
        }
        // A row the encoder refuses is reported and left out; the rest are appended.
        loop {
            let values: Vec<&Value> = chunk.iter().map(|r| &r.value).collect();
            match writer.append(&values).await {
                Ok(()) => {
                    lines.extend(chunk.iter().map(|r| r.line));
                    break;
                }
                Err(e) => {
                    let Some(c) = e.codec_error() else {
                        return Err(refused(e, &lines, &args.from));
                    };
                    let i = c.row().unwrap_or(0) as usize;
                    if i >= chunk.len() {
                        return Err(e.into());
                    }
                    let row = chunk.remove(i);
                    let mut msg = format!("{}: line {}", args.from.display(), row.line);
                    if let Some(col) = c.column() {
                        msg += &format!(", column `{col}`");
                    }
                    msg += &format!(": {}", c.message());
                    if let Some(v) = c.value() {
                        msg += &format!(" (value {v:?})");
                    }
                    report(msg);
                    if chunk.is_empty() {
                        break;
                    }
                }
            }
        }
        bar.set_position(rows.position());
        bar.set_message(format!("{} rows", lines.len()));
    }
    bar.finish_and_clear();

    if bad_count > 0 && args.pending {
        // Dropping the writer leaves the PENDING stream uncommitted: nothing is written.
        drop(writer);
        return Err(Failure::new(format!(
            "{bad_count} rows do not fit table {}; nothing was written (--pending)",
            args.table
        )));
    }
    let summary = if args.pending {
        writer.commit().await
    } else {
        writer.finish().await
    }
    .map_err(|e| refused(e, &lines, &args.from))?;
    eprintln!(
        "{} rows written to {} ({} requests, {})",
        summary.rows_written,
        args.table,
        summary.requests,
        indicatif::HumanBytes(summary.bytes_sent)
    );
    if bad_count > 0 {
        return Err(Failure::new(format!(
            "{bad_count} rows do not fit table {} and were not written",
            args.table
        )));
    }
    Ok(())
}

/// The format a file's extension names.
fn format_of(path: &Path) -> Result<InputFormat> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    match ext.as_str() {
        "ndjson" | "jsonl" | "json" => Ok(InputFormat::Ndjson),
        "csv" => Ok(InputFormat::Csv),
        _ => Err(Failure::new(format!(
            "{}: cannot tell the format from the extension; add --format ndjson or csv",
            path.display()
        ))),
    }
}

/// bigq's error, with the rows BigQuery refused given by their file line.
fn refused(e: bigq::Error, lines: &[u64], path: &Path) -> Failure {
    let mut msg = e.to_string();
    for r in e.row_errors().iter().take(MAX_LISTED) {
        match lines.get(r.row as usize) {
            Some(line) => msg += &format!("\n{}: line {line}: {}", path.display(), r.message),
            None => msg += &format!("\nrow {}: {}", r.row, r.message),
        }
    }
    Failure::new(msg)
}

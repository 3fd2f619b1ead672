//! # `bigq`, a BigQuery command-line client
//!
//! A thin layer over the [`bigq`] crate: every call to BigQuery is bigq's, and this crate
//! only parses the command line, reads input files and formats output.
//!
//! ```sh
//! bigq emulator --port 9050 --grpc-port 9060 &          # or use real BigQuery with ADC
//! export BIGQUERY_EMULATOR_HOST=127.0.0.1:9050 BIGQUERY_STORAGE_EMULATOR_HOST=127.0.0.1:9060
//! export GOOGLE_CLOUD_PROJECT=test-project
//! bigq mk-dataset shop
//! bigq mk-table shop.orders --schema id:INT64:REQUIRED,item:STRING,qty:INT64
//! bigq write shop.orders --from orders.ndjson            # Storage Write, committed stream
//! bigq query "SELECT item, SUM(qty) AS n FROM shop.orders WHERE id > @min GROUP BY item" \
//!     --param min=INT64:10 --format csv
//! bigq read shop.orders --columns id,qty --where "qty > 1" --format parquet --out orders.parquet
//! ```
//!
//! Layout: `cli.rs` (the clap definitions), `connect.rs` (the client from flags and the
//! environment), `params.rs` (`--param`/`--bind`), `input.rs` (NDJSON/CSV rows for Storage
//! Write), `output.rs` (Arrow batches to a grid, CSV, JSON, NDJSON, Parquet), `progress.rs`
//! (indicatif bars on stderr) and `cmd/` (one module per subcommand).
//!
//! Rows go to stdout, everything else (statistics, progress, errors) to stderr. An error
//! prints bigq's message and exits with status 1; bad usage exits with 2.

mod cli;
mod cmd;
mod connect;
mod error;
mod input;
mod output;
mod params;
mod progress;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bigq: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_quiet() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bigq: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> error::Result<()> {
    let g = &cli.global;
    match cli.command {
        Command::Query(args) => cmd::query::run(g, args).await,
        Command::Read(args) => cmd::read::run(g, args).await,
        Command::Head(args) => cmd::read::head(g, args).await,
        Command::Write(args) => cmd::write::run(g, args).await,
        Command::Datasets => cmd::admin::datasets(g).await,
        Command::Jobs { state, limit } => cmd::admin::jobs(g, state.as_deref(), limit).await,
        Command::Cancel { job, location } => cmd::admin::cancel(g, &job, location).await,
        Command::Tables { dataset } => cmd::admin::tables(g, &dataset).await,
        Command::Schema { table, json } => cmd::admin::schema(g, &table, json).await,
        Command::Show { table } => cmd::admin::show(g, &table).await,
        Command::MkDataset {
            dataset,
            description,
        } => cmd::admin::mk_dataset(g, &dataset, description).await,
        Command::MkTable(args) => cmd::admin::mk_table(g, args).await,
        Command::Rm {
            id,
            dataset,
            recursive,
        } => cmd::admin::rm(g, &id, dataset, recursive).await,
        Command::Emulator(args) => cmd::emulator::run(g, args).await,
    }
}

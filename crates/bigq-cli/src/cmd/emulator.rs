//! `bigq emulator`: bigq-emulator in this process until Ctrl-C.

use std::io::Write;

use bigq_emulator::Emulator;

use crate::cli::{EmulatorArgs, Global};
use crate::error::{Failure, Result};

/// Runs `bigq emulator`.
pub async fn run(global: &Global, args: EmulatorArgs) -> Result<()> {
    let project = global.project.as_deref().unwrap_or("test-project");
    let emu = Emulator::builder()
        .with_host(args.host)
        .with_port(args.port)
        .with_grpc_port(args.grpc_port)
        .with_project(project)
        .start()
        .await
        .map_err(|e| Failure::new(format!("cannot start the emulator: {e}")))?;
    let rest = emu.local_addr();
    let grpc = emu.grpc_addr();
    let mut out = std::io::stdout().lock();
    writeln!(out, "bigq emulator (project {})", emu.project())?;
    writeln!(out, "  REST  http://{rest}/bigquery/v2/")?;
    writeln!(
        out,
        "  gRPC  http://{grpc} (Storage Read/Write, v2 services)"
    )?;
    writeln!(out, "export BIGQUERY_EMULATOR_HOST={rest}")?;
    writeln!(out, "export BIGQUERY_STORAGE_EMULATOR_HOST={grpc}")?;
    writeln!(out, "export GOOGLE_CLOUD_PROJECT={}", emu.project())?;
    writeln!(out, "Ctrl-C stops it.")?;
    out.flush()?;
    drop(out);
    tokio::signal::ctrl_c().await?;
    eprintln!("stopping");
    emu.shutdown().await;
    Ok(())
}

//! `bigq-emulator`: a local BigQuery REST and Storage API (gRPC) server.
//!
//! `bigq-emulator [--host 127.0.0.1] [--port 9050] [--grpc-port 9060] [--project test-project] [--data-dir DIR]
//! [--gcs-dir DIR] [--memory-budget-mb N] [--faults JSON]`

use std::io::Write as _;
use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;

use bigq_emulator::{Emulator, EmulatorBuilder, FaultSpec};

const USAGE: &str = "usage: bigq-emulator [--host ADDR] [--port N] [--grpc-port N] [--project ID] [--query-delay-ms N] [--data-dir DIR] [--gcs-dir DIR] [--memory-budget-mb N] [--faults JSON]\n\
Serves BigQuery's REST v2 API at http://ADDR:N/bigquery/v2/ (127.0.0.1:9050 by default) and the\n\
Storage Read and Write APIs over gRPC at http://ADDR:GRPC_PORT (9060 by default). Port 0 picks a free port.\n\
--data-dir DIR keeps datasets, tables and rows in DIR across restarts (in memory without it).\n\
--gcs-dir DIR serves gs://BUCKET/OBJECT as DIR/BUCKET/OBJECT for load jobs.\n\
--memory-budget-mb N bounds what is kept beyond the tables (query results, read sessions, write\n\
  streams; 2048 by default) and the memory of one query.\n\
--faults JSON arms failures from the start, as POST /emulator/v1/faults does, e.g.\n\
  '{\"restErrorRate\": 0.1, \"error\": \"resourceExhausted\", \"delayMs\": 20}'.";

fn parse_args(args: &[String]) -> Result<EmulatorBuilder, String> {
    let mut b = Emulator::builder().with_port(9050).with_grpc_port(9060);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        b = match a.as_str() {
            "--host" => {
                let v = value()?;
                b.with_host(
                    v.parse::<IpAddr>()
                        .map_err(|_| format!("bad address {v}"))?,
                )
            }
            "--port" => {
                let v = value()?;
                b.with_port(v.parse().map_err(|_| format!("bad port {v}"))?)
            }
            "--grpc-port" => {
                let v = value()?;
                b.with_grpc_port(v.parse().map_err(|_| format!("bad port {v}"))?)
            }
            "--project" => b.with_project(value()?.clone()),
            "--data-dir" => b.with_data_dir(value()?.clone()),
            "--gcs-dir" => b.with_gcs_dir(value()?.clone()),
            "--memory-budget-mb" => {
                let v = value()?;
                let mb: usize = v.parse().map_err(|_| format!("bad budget {v}"))?;
                b.with_memory_budget(mb.saturating_mul(1 << 20))
            }
            "--faults" => {
                let v = value()?;
                let spec: FaultSpec =
                    serde_json::from_str(v).map_err(|e| format!("bad --faults {v}: {e}"))?;
                b.with_faults(spec)
            }
            "--query-delay-ms" => {
                let v = value()?;
                let ms: u64 = v.parse().map_err(|_| format!("bad delay {v}"))?;
                b.with_query_delay(Duration::from_millis(ms))
            }
            other => return Err(format!("unknown argument {other}")),
        };
    }
    Ok(b)
}

/// SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let builder = match parse_args(&args) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("bigq-emulator: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let emu = match builder.start().await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("bigq-emulator: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Written once, and a closed stdout (a caller that read the first line and went away)
    // is no reason to stop serving.
    let announcement = format!(
        "bigq-emulator listening on {} (project {})\ngrpc listening on {}\n",
        emu.rest_endpoint(),
        emu.project(),
        emu.grpc_endpoint()
    );
    let mut stdout = std::io::stdout();
    let _ = stdout
        .write_all(announcement.as_bytes())
        .and_then(|()| stdout.flush());
    if !emu.local_addr().ip().is_loopback() {
        eprintln!(
            "bigq-emulator: warning: listening on {}, beyond this machine, with no \
             authentication: anyone who can reach it can read and change every table",
            emu.local_addr().ip()
        );
    }
    stopped().await;
    emu.shutdown().await;
    ExitCode::SUCCESS
}

//! bench-compare: runs competing BigQuery clients side by side on the same server, data and
//! machine, the way the `bigquery` crate's benchmark harness does, and writes `results.json`,
//! a Markdown summary and one SVG plot per scenario.
//!
//! ```text
//! cargo build --release -p bench-compare -p bigq-emulator
//! target/release/bench-compare                        # every scenario, bigq-emulator on loopback
//! target/release/bench-compare --only query_const,scan_arrow
//! target/release/bench-compare --project my-project   # real BigQuery (ADC), scratch dataset
//! ```
//!
//! Each contender is a separate process per run (`contender-bigq`, `contender-bigquery-rs`
//! for the `bigquery` crate, `contender-gcbq` for `google-cloud-bigquery`, `python
//! contender.py`) that times itself and prints one JSON line; the driver waits for a quiet
//! machine before each run, rotates the contenders' order every round and records loopback
//! bytes. A contender that cannot run a scenario (the client lacks it, or the server lacks a
//! service its path needs) says so, and the run is recorded as unsupported with the reason.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bench_compare::{Measured, SCENARIOS, expected_rows, needs_scan_table, scan_table_ctas};
use clap::Parser;
use serde::Serialize;

#[derive(Parser, Debug)]
#[command(about = "bigq's side-by-side harness")]
struct Args {
    /// Comma-separated scenarios (default: all).
    #[arg(long)]
    only: Option<String>,
    /// Comma-separated contenders: bigq, bigq-grpc (queries over the v2 gRPC transport),
    /// bigq-job, python, bigquery-rs (the `bigquery` crate), bigquery-rs-job (the same with
    /// `.job_creation_required()`), gcbq (`google-cloud-bigquery`), bigq-streams-N (bigq with
    /// table reads capped at N streams).
    #[arg(
        long,
        default_value = "bigq,bigq-grpc,bigq-job,python,bigquery-rs,gcbq"
    )]
    contenders: String,
    /// Measured runs per contender and scenario.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Warm-up runs per contender and scenario (not reported).
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// One run, no warm-up, no waiting for a quiet machine, a small scan table: for CI,
    /// to keep the harness from rotting. Its timings mean nothing.
    #[arg(long)]
    smoke: bool,
    /// Label of the results directory (default: the UTC date and time).
    #[arg(long)]
    label: Option<String>,
    /// Where results go.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
    /// Run against real BigQuery in this project (Application Default Credentials) instead
    /// of bigq-emulator.
    #[arg(long)]
    project: Option<String>,
    /// The location of the scratch dataset on real BigQuery.
    #[arg(long, default_value = "US")]
    location: String,
    /// The bigq-emulator binary (default: next to this one).
    #[arg(long)]
    emulator_bin: Option<PathBuf>,
    /// The address bigq-emulator listens on (clients connect to it there).
    #[arg(long, default_value = "127.0.0.1")]
    emulator_host: String,
    /// Run bigq-emulator inside this network namespace (`ip netns exec`), for a shaped link
    /// between it and the clients (scripts/bench-link.sh).
    #[arg(long)]
    emulator_netns: Option<String>,
    /// The network interface whose received bytes each run records.
    #[arg(long, default_value = "lo")]
    iface: String,
    /// The Python interpreter with google-cloud-bigquery(-storage), pyarrow and pandas.
    #[arg(long, default_value = ".venv/bin/python")]
    python: PathBuf,
    /// A run starts only when the 1-minute load is under this (and no compiler runs).
    #[arg(long, default_value_t = 0.5)]
    max_load: f64,
    /// How long to wait for a quiet machine before running anyway (the run is marked).
    #[arg(long, default_value_t = 120)]
    quiet_timeout: u64,
    /// Do not repeat a run a compiler or linker was seen during (for a shared machine where
    /// builds never stop); such runs stay marked in `busy_during`.
    #[arg(long)]
    no_repeat: bool,
    /// Rows in the scan table (default 1M; --smoke uses 10k).
    #[arg(long)]
    scan_rows: Option<usize>,
}

#[derive(Debug, Serialize)]
struct Run {
    scenario: String,
    contender: String,
    round: usize,
    warmup: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    measured: Option<Measured>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Why the contender did not run the scenario (not a failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    unsupported: Option<String>,
    /// Wall time of the whole process, seconds (start-up included).
    process_s: f64,
    /// Bytes received on the loopback interface during the run (both directions of every
    /// loopback connection; 0 against real BigQuery).
    loopback_bytes: u64,
    machine: MachineState,
    /// Whether the run was repeated because the machine got busy during it.
    repeated: bool,
}

#[derive(Debug, Clone, Serialize)]
struct MachineState {
    load_1m_before: f64,
    /// Seconds waited for a quiet machine.
    waited_s: f64,
    /// Whether the machine was quiet when the run started.
    quiet: bool,
    /// Compilers or linkers seen running during the run.
    busy_during: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Results {
    label: String,
    server: String,
    started_unix: u64,
    machine: BTreeMap<String, String>,
    versions: BTreeMap<String, String>,
    setup: BTreeMap<String, f64>,
    args: String,
    runs: Vec<Run>,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(args) {
        eprintln!("bench-compare: {e}");
        std::process::exit(1);
    }
}

fn run(mut args: Args) -> Result<(), String> {
    if args.smoke {
        args.runs = 1;
        args.warmup = 0;
    }
    let scenarios: Vec<String> = match &args.only {
        Some(list) => list.split(',').map(|s| s.trim().to_string()).collect(),
        None => SCENARIOS.iter().map(|s| s.to_string()).collect(),
    };
    for s in &scenarios {
        if !SCENARIOS.contains(&s.as_str()) {
            return Err(format!(
                "unknown scenario {s:?}; known: {}",
                SCENARIOS.join(", ")
            ));
        }
    }
    let contenders: Vec<String> = args
        .contenders
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let label = args.label.clone().unwrap_or_else(utc_label);
    let out_dir = args.out.join(&label);
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let bin_dir = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .parent()
        .map(Path::to_path_buf)
        .ok_or("no directory for this binary")?;

    // The server: bigq-emulator on loopback, or BigQuery.
    let mut server = None;
    let mut env: Vec<(String, String)> = Vec::new();
    let server_name;
    match &args.project {
        Some(p) => {
            env.push(("BENCH_PROJECT".into(), p.clone()));
            server_name = format!("BigQuery (project {p}, {})", args.location);
        }
        None => {
            let bin = args
                .emulator_bin
                .clone()
                .unwrap_or_else(|| bin_dir.join("bigq-emulator"));
            let emu = Emulator::start(&bin, &args.emulator_host, args.emulator_netns.as_deref())?;
            env.push(("BENCH_PROJECT".into(), "bench-project".into()));
            env.push(("BENCH_REST".into(), emu.rest.clone()));
            if let Some(g) = &emu.grpc {
                env.push(("BENCH_GRPC".into(), g.clone()));
            }
            server_name = format!(
                "bigq-emulator {} ({}{})",
                match &args.emulator_netns {
                    Some(ns) => format!("in network namespace {ns}"),
                    None => "on loopback".to_string(),
                },
                emu.rest,
                emu.grpc
                    .as_ref()
                    .map(|g| format!(", gRPC {g}"))
                    .unwrap_or_default()
            );
            server = Some(emu);
        }
    }
    let dataset = format!("bench_compare_{}", label.replace(['-', ':', '.'], "_"));
    env.push(("BENCH_DATASET".into(), dataset.clone()));
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let client = rt.block_on(client(&env))?;
    let scan_rows = args.scan_rows.unwrap_or(if args.smoke {
        10_000
    } else {
        bench_compare::SCAN_ROWS
    });
    env.push(("BENCH_SCAN_ROWS".into(), scan_rows.to_string()));
    let mut setup = BTreeMap::new();
    rt.block_on(async {
        let mut ds = bigq::admin::Dataset::new(&dataset);
        if args.project.is_some() {
            ds = ds.with_location(&args.location);
        }
        client.create_dataset(ds).await.map_err(|e| e.to_string())?;
        if scenarios.iter().any(|s| needs_scan_table(s)) {
            let t = Instant::now();
            client
                .query(scan_table_ctas(&dataset, scan_rows))
                .execute()
                .await
                .map_err(|e| format!("creating the scan table: {e}"))?;
            setup.insert(
                format!("scan_table_ctas_{scan_rows}_rows_s"),
                t.elapsed().as_secs_f64(),
            );
        }
        Ok::<_, String>(())
    })?;
    eprintln!("server: {server_name}; dataset {dataset}; scan table {scan_rows} rows");

    let mut results = Results {
        label: label.clone(),
        server: server_name,
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        machine: machine(),
        versions: versions(&args.python),
        setup,
        args: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        runs: Vec::new(),
    };
    let outcome = measure_all(
        &args,
        &scenarios,
        &contenders,
        &bin_dir,
        &env,
        scan_rows,
        &mut results,
    );
    // The scratch dataset goes, also on failure.
    let _ = rt.block_on(client.delete_dataset(&dataset, true));
    drop(server);
    outcome?;

    let json = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
    std::fs::write(out_dir.join("results.json"), json).map_err(|e| e.to_string())?;
    let summary = summary(&results, &scenarios, &contenders);
    std::fs::write(out_dir.join("summary.md"), &summary).map_err(|e| e.to_string())?;
    for s in &scenarios {
        plot(&results, s, &contenders, &out_dir.join(format!("{s}.svg")))?;
    }
    println!("{summary}");
    eprintln!("results in {}", out_dir.display());
    let failed = results.runs.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 && args.smoke {
        return Err(format!("{failed} runs failed"));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn measure_all(
    args: &Args,
    scenarios: &[String],
    contenders: &[String],
    bin_dir: &Path,
    env: &[(String, String)],
    scan_rows: usize,
    results: &mut Results,
) -> Result<(), String> {
    for scenario in scenarios {
        let here: Vec<&String> = contenders
            .iter()
            .filter(|c| not_available(c, scenario).is_none())
            .collect();
        // Contenders that said they cannot run this scenario: not asked again.
        let mut unsupported: Vec<&String> = Vec::new();
        for round in 0..args.warmup + args.runs {
            // Rotate the order every round so drifts spread over every contender.
            let n = here.len().max(1);
            for i in 0..here.len() {
                let contender = here[(i + round) % n];
                if unsupported.contains(&contender) {
                    continue;
                }
                let mut run = run_once(args, contender, scenario, bin_dir, env)?;
                if !run.machine.busy_during.is_empty() && !args.smoke && !args.no_repeat {
                    eprintln!(
                        "  repeating: busy during the run ({:?})",
                        run.machine.busy_during
                    );
                    run = run_once(args, contender, scenario, bin_dir, env)?;
                    run.repeated = true;
                }
                run.round = round;
                run.warmup = round < args.warmup;
                if let (Some(m), Some(want)) = (&run.measured, expected_rows(scenario)) {
                    let want = if needs_scan_table(scenario) {
                        scan_rows
                    } else {
                        want
                    };
                    if m.rows != want {
                        run.error = Some(format!("returned {} rows, expected {want}", m.rows));
                    }
                }
                if let Some(why) = &run.unsupported {
                    eprintln!("{scenario} {contender}: unsupported: {why}");
                    unsupported.push(contender);
                }
                match (&run.measured, &run.error) {
                    (_, Some(e)) => eprintln!("{scenario} {contender} round {round}: FAILED {e}"),
                    (Some(m), None) => eprintln!(
                        "{scenario} {contender} round {round}: {:.3} s, {} rows, {}",
                        m.wall_s, m.rows, m.path
                    ),
                    _ => {}
                }
                results.runs.push(run);
            }
        }
    }
    Ok(())
}

/// Why a contender has no run for a scenario, or `None` where it runs it. What a contender
/// finds out only by trying (a service the server does not serve) it reports itself.
fn not_available(contender: &str, scenario: &str) -> Option<&'static str> {
    let job_variant = "a query scenario only (the job-creation variant)";
    let json = "bigq's REST JSON -> Arrow decoder in memory: no other client exposes one";
    match (contender, scenario) {
        ("bigq-job" | "bigquery-rs-job", s) if !s.starts_with("query_") => Some(job_variant),
        ("bigq-grpc", s) if !s.starts_with("query_") => Some(
            "a query scenario only (the v2 gRPC transport variant; Storage Read and Write are \
             gRPC in every variant)",
        ),
        (_, "json_300k") if contender != "bigq" => Some(json),
        ("python", "decode") => Some("no Arrow -> row-object decoder to time on its own"),
        ("gcbq", "query_200k_arrow") => Some(
            "its query client returns JSON rows only (Arrow results are behind the unstable \
             cfg google_cloud_unstable_bigquery_arrow)",
        ),
        ("gcbq", "decode") => Some(
            "no Arrow -> struct decoder: FromRow converts REST JSON rows, and Row has no public \
             constructor",
        ),
        (
            "bigq" | "bigq-grpc" | "bigq-job" | "python" | "bigquery-rs" | "bigquery-rs-job"
            | "gcbq",
            _,
        ) => None,
        _ => Some("unknown contender"),
    }
}

fn run_once(
    args: &Args,
    contender: &str,
    scenario: &str,
    bin_dir: &Path,
    env: &[(String, String)],
) -> Result<Run, String> {
    // A Rust contender: its binary, the scenario, its flags.
    let rust = |bin: &str, flags: &[&str]| {
        let mut c = Command::new(bin_dir.join(bin));
        c.arg(scenario).args(flags);
        c
    };
    let mut cmd = match contender {
        "bigq" => rust("contender-bigq", &[]),
        "bigq-grpc" => rust("contender-bigq", &["--grpc"]),
        "bigq-job" => rust("contender-bigq", &["--job"]),
        "bigquery-rs" => rust("contender-bigquery-rs", &[]),
        "bigquery-rs-job" => rust("contender-bigquery-rs", &["--job"]),
        "gcbq" => rust("contender-gcbq", &[]),
        // bigq with table reads capped at N streams, to set stream counts side by side.
        c if c.starts_with("bigq-streams-") => rust(
            "contender-bigq",
            &["--streams", &c["bigq-streams-".len()..]],
        ),
        "python" => {
            let mut c = Command::new(&args.python);
            c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("python/contender.py"));
            c.arg(scenario);
            c
        }
        other => return Err(format!("unknown contender {other:?}")),
    };
    cmd.envs(env.iter().cloned())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let machine = if args.smoke {
        MachineState {
            load_1m_before: load(),
            waited_s: 0.0,
            quiet: true,
            busy_during: Vec::new(),
        }
    } else {
        wait_quiet(args.max_load, Duration::from_secs(args.quiet_timeout))
    };
    let lo_before = rx_bytes(&args.iface);
    let started = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("starting {contender}: {e}"))?;
    let (output, busy) = watch(child)?;
    let process_s = started.elapsed().as_secs_f64();
    let loopback_bytes = rx_bytes(&args.iface).saturating_sub(lo_before);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    let mut unsupported = None;
    let (measured, error) = match serde_json::from_str::<serde_json::Value>(line) {
        Ok(v) if v.get("error").is_some() => {
            (None, Some(v["error"].as_str().unwrap_or("?").to_string()))
        }
        Ok(v) if v.get("unsupported").is_some() => {
            unsupported = Some(v["unsupported"].as_str().unwrap_or("?").to_string());
            (None, None)
        }
        Ok(v) => match serde_json::from_value::<Measured>(v) {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(format!("bad measurement line {line:?}: {e}"))),
        },
        Err(_) => {
            let tail: String = String::from_utf8_lossy(&output.stderr)
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join(" | ");
            (
                None,
                Some(format!("no measurement (exit {}): {tail}", output.status)),
            )
        }
    };
    Ok(Run {
        scenario: scenario.to_string(),
        contender: contender.to_string(),
        round: 0,
        warmup: false,
        measured,
        error,
        unsupported,
        process_s,
        loopback_bytes,
        machine: MachineState {
            busy_during: busy,
            ..machine
        },
        repeated: false,
    })
}

/// Waits for the child, sampling every half second for compilers and linkers.
fn watch(child: Child) -> Result<(std::process::Output, Vec<String>), String> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let sampler = std::thread::spawn(move || {
        let mut seen = Vec::new();
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            for p in busy_processes() {
                if !seen.contains(&p) {
                    seen.push(p);
                }
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        seen
    });
    let output = child.wait_with_output().map_err(|e| e.to_string());
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let busy = sampler.join().unwrap_or_default();
    Ok((output?, busy))
}

/// Processes that make timings meaningless on a 2-core machine: compilers and linkers.
fn busy_processes() -> Vec<String> {
    const BUSY: &[&str] = &[
        "rustc",
        "cc1",
        "cc1plus",
        "ld",
        "ld.lld",
        "mold",
        "clippy-driver",
        "rustdoc",
    ];
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        if let Ok(comm) = std::fs::read_to_string(e.path().join("comm")) {
            let comm = comm.trim();
            if BUSY.contains(&comm) && !out.iter().any(|c| c == comm) {
                out.push(comm.to_string());
            }
        }
    }
    out
}

fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

fn wait_quiet(max_load: f64, timeout: Duration) -> MachineState {
    let t = Instant::now();
    loop {
        let l = load();
        let busy = busy_processes();
        let quiet = l < max_load && busy.is_empty();
        if quiet || t.elapsed() >= timeout {
            if !quiet {
                eprintln!(
                    "  machine not quiet after {timeout:?} (load {l:.2}, {busy:?}); running anyway"
                );
            }
            return MachineState {
                load_1m_before: l,
                waited_s: t.elapsed().as_secs_f64(),
                quiet,
                busy_during: Vec::new(),
            };
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// Bytes received so far on `iface` (as this process's network namespace sees it).
fn rx_bytes(iface: &str) -> u64 {
    let prefix = format!("{iface}:");
    std::fs::read_to_string("/proc/net/dev")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.trim_start().strip_prefix(prefix.as_str()))
                .and_then(|rest| rest.split_whitespace().next().and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

async fn client(env: &[(String, String)]) -> Result<bigq::Client, String> {
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut b = bigq::Client::builder().with_project(get("BENCH_PROJECT").unwrap_or_default());
    if let Some(rest) = get("BENCH_REST") {
        b = b.with_emulator(rest);
    }
    b.build().await.map_err(|e| e.to_string())
}

/// bigq-emulator as a child process on free ports (of loopback, or of a namespace's link).
struct Emulator {
    child: Child,
    rest: String,
    grpc: Option<String>,
}

impl Emulator {
    fn start(bin: &Path, host: &str, netns: Option<&str>) -> Result<Emulator, String> {
        let help = Command::new(bin).arg("--help").output().map_err(|e| {
            format!(
                "{}: {e} (build it: cargo build --release -p bigq-emulator)",
                bin.display()
            )
        })?;
        let has_grpc = String::from_utf8_lossy(&help.stdout).contains("--grpc-port");
        // `ip netns exec` execs the binary in place, so the child is the emulator itself.
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.args(["--host", host, "--port", "0", "--project", "bench-project"]);
        if has_grpc {
            cmd.args(["--grpc-port", "0"]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let (mut rest, mut grpc) = (None, None);
        while rest.is_none() || (has_grpc && grpc.is_none()) {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                return Err("bigq-emulator exited before it was listening".into());
            };
            let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) else {
                continue;
            };
            let url = url.trim_end_matches([',', ')', '(']).to_string();
            if line.to_ascii_lowercase().contains("grpc") {
                grpc = Some(url);
            } else {
                rest = Some(url);
            }
        }
        // Keep draining its stdout so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Ok(Emulator {
            child,
            rest: rest.unwrap_or_default(),
            grpc,
        })
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn utc_label() -> String {
    let out = Command::new("date").args(["-u", "+%Y-%m-%dT%H%M"]).output();
    out.ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "run".into())
}

fn machine() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert(
        "cores".into(),
        std::thread::available_parallelism()
            .map(|n| n.get().to_string())
            .unwrap_or_default(),
    );
    if let Ok(cpu) = std::fs::read_to_string("/proc/cpuinfo")
        && let Some(model) = cpu.lines().find_map(|l| l.strip_prefix("model name"))
    {
        m.insert(
            "cpu".into(),
            model.trim_start_matches([' ', '\t', ':']).to_string(),
        );
    }
    if let Ok(mem) = std::fs::read_to_string("/proc/meminfo")
        && let Some(total) = mem.lines().next()
    {
        m.insert(
            "memory".into(),
            total.trim_start_matches("MemTotal:").trim().to_string(),
        );
    }
    if let Ok(k) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        m.insert("kernel".into(), k.trim().to_string());
    }
    m.insert("load_1m_at_start".into(), format!("{:.2}", load()));
    m
}

/// The versions of the other Rust clients the contenders were built with, from the
/// workspace's Cargo.lock as it was at build time.
fn rust_client_versions() -> Vec<(String, String)> {
    const LOCK: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"));
    let mut out = Vec::new();
    for package in LOCK.split("[[package]]") {
        let field = |key: &str| {
            let prefix = format!("{key} = \"");
            package
                .lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .map(|rest| rest.trim_end_matches('"').to_string())
        };
        if let (Some(name), Some(version)) = (field("name"), field("version"))
            && matches!(name.as_str(), "bigquery" | "google-cloud-bigquery")
        {
            out.push((format!("rust crate {name}"), version));
        }
    }
    out
}

fn versions(python: &Path) -> BTreeMap<String, String> {
    let mut v = BTreeMap::new();
    v.insert("bigq".into(), env!("CARGO_PKG_VERSION").into());
    v.extend(rust_client_versions());
    if let Ok(o) = Command::new("rustc").arg("--version").output() {
        v.insert(
            "rustc".into(),
            String::from_utf8_lossy(&o.stdout).trim().to_string(),
        );
    }
    let script = "import json, sys, google.cloud.bigquery as b, google.cloud.bigquery_storage as s, pyarrow, pandas\n\
                  print(json.dumps({'python': sys.version.split()[0], 'google-cloud-bigquery': b.__version__, \
                  'google-cloud-bigquery-storage': s.__version__, 'pyarrow': pyarrow.__version__, 'pandas': pandas.__version__}))";
    if let Ok(o) = Command::new(python).args(["-c", script]).output()
        && let Ok(map) = serde_json::from_slice::<BTreeMap<String, String>>(&o.stdout)
    {
        v.extend(map);
    }
    v
}

struct Stat {
    median: f64,
    min: f64,
    max: f64,
    cpu: f64,
    rss_mb: f64,
    rows: usize,
    n: usize,
    failed: usize,
    path: String,
}

fn stats(results: &Results, scenario: &str, contender: &str) -> Option<Stat> {
    let runs: Vec<&Run> = results
        .runs
        .iter()
        .filter(|r| r.scenario == scenario && r.contender == contender && !r.warmup)
        .collect();
    let failed = runs.iter().filter(|r| r.error.is_some()).count();
    let ok: Vec<&Measured> = runs
        .iter()
        .filter(|r| r.error.is_none())
        .filter_map(|r| r.measured.as_ref())
        .collect();
    if ok.is_empty() {
        return (failed > 0).then(|| Stat {
            median: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
            cpu: f64::NAN,
            rss_mb: f64::NAN,
            rows: 0,
            n: 0,
            failed,
            path: runs
                .iter()
                .find_map(|r| r.error.clone())
                .unwrap_or_default(),
        });
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let walls: Vec<f64> = ok.iter().map(|m| m.wall_s).collect();
    Some(Stat {
        median: med(walls.clone()),
        min: walls.iter().copied().fold(f64::INFINITY, f64::min),
        max: walls.iter().copied().fold(0.0, f64::max),
        cpu: med(ok.iter().map(|m| m.cpu_s).collect()),
        rss_mb: med(ok.iter().map(|m| m.peak_rss_kb as f64 / 1024.0).collect()),
        rows: ok[0].rows,
        n: ok.len(),
        failed,
        path: ok[0].path.clone(),
    })
}

fn summary(results: &Results, scenarios: &[String], contenders: &[String]) -> String {
    let mut s = format!(
        "# bench-compare {}\n\nServer: {}. Machine: {} cores, {}. Load at start {}.\n\n",
        results.label,
        results.server,
        results
            .machine
            .get("cores")
            .map(String::as_str)
            .unwrap_or("?"),
        results
            .machine
            .get("cpu")
            .map(String::as_str)
            .unwrap_or("?"),
        results
            .machine
            .get("load_1m_at_start")
            .map(String::as_str)
            .unwrap_or("?"),
    );
    s += &format!(
        "Versions: {}.\n\nCommand: `bench-compare {}`\n\n",
        results
            .versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        results.args
    );
    for (k, v) in &results.setup {
        s += &format!("Setup: {k} = {v:.2}\n\n");
    }
    for scenario in scenarios {
        s += &format!(
            "## {scenario}\n\n| client | median s | range s | rows/s | CPU s | peak RSS MB | vs bigq | runs | path |\n|---|---|---|---|---|---|---|---|---|\n"
        );
        let base = stats(results, scenario, "bigq").map(|b| b.median);
        for c in contenders {
            if let Some(why) = not_available(c, scenario) {
                s += &format!("| {c} | n/a | | | | | | | {} |\n", why.replace('|', "/"));
                continue;
            }
            if let Some(why) = results
                .runs
                .iter()
                .filter(|r| r.scenario == *scenario && r.contender == *c)
                .find_map(|r| r.unsupported.as_ref())
            {
                s += &format!(
                    "| {c} | unsupported | | | | | | | {} |\n",
                    why.replace('|', "/")
                );
                continue;
            }
            let Some(st) = stats(results, scenario, c) else {
                continue;
            };
            if st.n == 0 {
                s += &format!(
                    "| {c} | failed | | | | | | 0/{} | {} |\n",
                    st.failed,
                    st.path.replace('|', "/")
                );
                continue;
            }
            let ratio = base
                .filter(|b| b.is_finite())
                .map(|b| format!("{:.2}x", st.median / b))
                .unwrap_or_default();
            s += &format!(
                "| {c} | {:.3} | {:.3}-{:.3} | {:.0} | {:.3} | {:.0} | {ratio} | {}{} | {} |\n",
                st.median,
                st.min,
                st.max,
                st.rows as f64 / st.median,
                st.cpu,
                st.rss_mb,
                st.n,
                if st.failed > 0 {
                    format!(" ({} failed)", st.failed)
                } else {
                    String::new()
                },
                st.path
            );
        }
        s += "\n";
    }
    s
}

/// A bar per contender: the median wall time, with a line over the range.
fn plot(
    results: &Results,
    scenario: &str,
    contenders: &[String],
    path: &Path,
) -> Result<(), String> {
    use plotters::prelude::*;
    let bars: Vec<(String, Stat)> = contenders
        .iter()
        .filter_map(|c| {
            stats(results, scenario, c)
                .filter(|s| s.n > 0)
                .map(|s| (c.clone(), s))
        })
        .collect();
    let root = SVGBackend::new(path, (640, 360)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let top = bars
        .iter()
        .map(|(_, s)| s.max)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.15;
    let n = bars.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{scenario}: wall time, median and range"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n as f64, 0f64..top)
        .map_err(|x| e(&x))?;
    let names: Vec<String> = bars.iter().map(|(c, _)| c.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (*x - i as f64 - 0.5).abs() < 0.01 {
                names.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("seconds")
        .draw()
        .map_err(|x| e(&x))?;
    for (i, (_, s)) in bars.iter().enumerate() {
        let x = i as f64;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x + 0.2, 0.0), (x + 0.8, s.median)],
                Palette99::pick(i).filled(),
            )))
            .map_err(|x| e(&x))?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x + 0.5, s.min), (x + 0.5, s.max)],
                BLACK.stroke_width(2),
            )))
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

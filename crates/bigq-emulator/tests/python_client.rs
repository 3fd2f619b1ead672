//! The emulator driven by clients nobody here wrote: the official Python clients
//! (`google-cloud-bigquery`, `google-cloud-bigquery-storage` with pyarrow and pandas). Set
//! `BIGQ_PYTHON` to a Python that has them installed; without it these tests say so and pass.

use std::path::PathBuf;
use std::process::Command;

use bigq_emulator::Emulator;

fn python() -> Option<String> {
    match std::env::var("BIGQ_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            eprintln!("BIGQ_PYTHON is not set: skipping the Python client checks");
            None
        }
    }
}

async fn run(args: &[String]) -> std::process::Output {
    let args = args.to_vec();
    tokio::task::spawn_blocking(move || {
        Command::new(&args[0])
            .args(&args[1..])
            .output()
            .expect("run python")
    })
    .await
    .expect("join")
}

/// Runs `tests/python/<name>.py` with `args` and requires it to succeed and print
/// `<name>: ok`.
async fn run_script(py: String, name: &str, args: Vec<String>) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/python/{name}.py"));
    let mut all = vec![py, script.display().to_string()];
    all.extend(args);
    let out = run(&all).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("{name}: ok")),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn python_client_smoke() {
    let Some(py) = python() else { return };
    let emu = Emulator::builder()
        .with_project("smoke-project")
        .start()
        .await
        .expect("start");
    run_script(
        py,
        "client_smoke",
        vec![emu.rest_endpoint(), emu.project().to_string()],
    )
    .await;
}

/// Replays the recorded `sql/rest_crud` fixtures with `check_recorded_sql.py`
/// (`../shared/tools` beside the repository) and requires every one to match BigQuery.
#[tokio::test(flavor = "multi_thread")]
async fn python_client_replays_rest_crud() {
    let Some(py) = python() else { return };
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let tool = shared.join("tools/check_recorded_sql.py");
    let fixtures = match std::env::var_os("BIGQ_RECORDINGS") {
        Some(d) => PathBuf::from(d),
        None => shared.join("bigquery-recordings"),
    }
    .join("sql/rest_crud");
    assert!(tool.is_file(), "no checker at {}", tool.display());
    let emu = Emulator::builder()
        .with_project("test-project")
        .start()
        .await
        .expect("start");
    let report =
        std::env::temp_dir().join(format!("bigq-emu-rest-crud-{}.json", std::process::id()));
    let out = run(&[
        py,
        tool.display().to_string(),
        "--endpoint".into(),
        emu.rest_endpoint(),
        "--project".into(),
        emu.project().to_string(),
        "--fixtures".into(),
        fixtures.display().to_string(),
        "--json-out".into(),
        report.display().to_string(),
        "-q".into(),
    ])
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    assert!(
        stdout.contains("pass rate: 100.0%"),
        "not every rest_crud fixture matches:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.is_empty(), "no report written");
}

/// The official Storage Read client (`google-cloud-bigquery-storage`, with pyarrow and
/// pandas) reads tables and a query's destination table over gRPC, compressed or not,
/// and gets the rows `tabledata.list` gives; one of its calls is cut by the fault hook and
/// must resume.
#[tokio::test(flavor = "multi_thread")]
async fn python_storage_read_client() {
    let Some(py) = python() else { return };
    let emu = Emulator::builder()
        .with_project("read-project")
        .start()
        .await
        .expect("start");
    emu.faults().cut_next_read_rows(3_000);
    run_script(
        py,
        "storage_read",
        vec![
            emu.rest_endpoint(),
            emu.grpc_addr().to_string(),
            emu.project().to_string(),
        ],
    )
    .await;
    assert_eq!(emu.faults().read_rows_cut(), 1, "the armed cut never fired");
}

/// The official Storage Write client (`writer.AppendRowsStream`, protobuf rows with a
/// hand-made proto2 descriptor) writes into a PENDING stream and the default stream.
#[tokio::test(flavor = "multi_thread")]
async fn python_storage_write_client() {
    let Some(py) = python() else { return };
    let emu = Emulator::builder()
        .with_project("write-project")
        .start()
        .await
        .expect("start");
    run_script(
        py,
        "storage_write",
        vec![
            emu.rest_endpoint(),
            emu.grpc_addr().to_string(),
            emu.project().to_string(),
        ],
    )
    .await;
}

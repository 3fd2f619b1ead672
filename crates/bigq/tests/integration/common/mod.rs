//! Shared set-up for integration tests: a bqemulator on loopback, started by the repo's
//! script on first use (CI starts it up front and exports `BQEMU_REST_ENDPOINT`,
//! `BQEMU_GRPC_ENDPOINT` and `BQEMU_PROJECT`).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use bigq::Client;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A running bqemulator: its REST and Storage gRPC endpoints and its project.
#[derive(Debug, Clone)]
pub struct Emulator {
    pub rest: String,
    pub grpc: String,
    pub project: String,
}

/// The REST endpoint and project of a running bqemulator.
pub fn bqemulator() -> (String, String) {
    let e = emulator();
    (e.rest, e.project)
}

/// The running bqemulator, started on first use.
pub fn emulator() -> Emulator {
    static EMULATOR: OnceLock<Emulator> = OnceLock::new();
    EMULATOR
        .get_or_init(|| {
            if let Ok(rest) = std::env::var("BQEMU_REST_ENDPOINT") {
                let project =
                    std::env::var("BQEMU_PROJECT").unwrap_or_else(|_| "test-project".into());
                let grpc = std::env::var("BQEMU_GRPC_ENDPOINT").unwrap_or_default();
                return Emulator {
                    rest,
                    grpc,
                    project,
                };
            }
            let root = repo_root();
            let status = Command::new("bash")
                .arg(root.join("scripts/bqemulator.sh"))
                .arg("start")
                .status()
                .expect("run scripts/bqemulator.sh");
            assert!(status.success(), "scripts/bqemulator.sh start failed");
            let env = std::fs::read_to_string(root.join("target/bqemulator/env"))
                .expect("bqemulator env file");
            let get = |k: &str| {
                env.lines()
                    .find_map(|l| l.strip_prefix(&format!("{k}=")))
                    .map(str::to_string)
                    .expect(k)
            };
            Emulator {
                rest: get("BQEMU_REST_ENDPOINT"),
                grpc: get("BQEMU_GRPC_ENDPOINT"),
                project: get("BQEMU_PROJECT"),
            }
        })
        .clone()
}

/// bqemulator sometimes answers a query that overlaps other tests' requests with
/// `"totalRows": "0"` and no rows (seen here with bigq's tests running in parallel: the raw
/// bodies of `SELECT COUNT(*)` and constant SELECTs came back empty; 64 concurrent plain
/// SELECTs alone did not trigger it). Tests against it take this lock so they never overlap.
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

pub async fn client() -> Client {
    let e = emulator();
    let mut b = Client::builder()
        .with_project(e.project)
        .with_emulator(e.rest);
    if !e.grpc.is_empty() {
        b = b.with_emulator_grpc(e.grpc);
    }
    b.build().await.unwrap()
}

/// A client of bqemulator's REST side only. bqemulator cannot read query results through
/// Storage Read, so the query scenarios use this one and page through REST.
pub async fn rest_client() -> Client {
    let e = emulator();
    Client::builder()
        .with_project(e.project)
        .with_emulator(e.rest)
        .build()
        .await
        .unwrap()
}

/// A fresh dataset name for one test.
pub fn dataset_name(test: &str) -> String {
    format!("t_{}_{}", test, uuid_suffix())
}

fn uuid_suffix() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{:x}{:x}", n & 0xffff_ffff, std::process::id())
}

/// bigq-emulator started in-process on free loopback ports, a client of its REST and
/// Storage (gRPC) sides, and an empty dataset `ds`.
pub async fn in_process_emulator() -> (bigq_emulator::Emulator, Client) {
    in_process_emulator_over(bigq::Transport::default()).await
}

/// [`in_process_emulator`] with the client's queries and admin calls on `transport`.
pub async fn in_process_emulator_over(
    transport: bigq::Transport,
) -> (bigq_emulator::Emulator, Client) {
    let emu = bigq_emulator::Emulator::builder()
        .with_project("test-project")
        .start()
        .await
        .expect("start bigq-emulator");
    let client = Client::builder()
        .with_project(emu.project())
        .with_emulator(emu.rest_endpoint())
        .with_emulator_grpc(emu.grpc_endpoint())
        .with_transport(transport)
        .build()
        .await
        .expect("client");
    client
        .create_dataset(bigq::admin::Dataset::new("ds"))
        .await
        .expect("dataset");
    (emu, client)
}

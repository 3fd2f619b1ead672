//! Jobs: against bigq-emulator over both transports (the final statistics of polled
//! queries, the caller's job and request ids, the job timeout), and the job resources
//! recorded from BigQuery decoded as bigq reads them.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use bigq::admin::{Dataset, Job};
use bigq::{Client, Transport};
use bigq_emulator::Emulator;

async fn start() -> (Emulator, Client, Client) {
    let emu = Emulator::builder()
        .with_project("test-project")
        .with_job_timeout_floor(Duration::ZERO)
        .start()
        .await
        .expect("start bigq-emulator");
    let mut clients = Vec::new();
    for transport in [Transport::Rest, Transport::Grpc] {
        let client = Client::builder()
            .with_project(emu.project())
            .with_emulator(emu.rest_endpoint())
            .with_emulator_grpc(emu.grpc_endpoint())
            .with_transport(transport)
            .build()
            .await
            .expect("client");
        clients.push(client);
    }
    let grpc = clients.pop().expect("two clients");
    let rest = clients.pop().expect("two clients");
    (emu, rest, grpc)
}

/// A query run as a job of the caller's id is polled through `getQueryResults`, which
/// reports neither bytes billed, slot time, statement type nor referenced tables: they
/// come from the job's final statistics.
#[tokio::test]
async fn polled_queries_carry_the_job_statistics_on_both_transports() {
    let (emu, rest, grpc) = start().await;
    for (name, client) in [("rest", &rest), ("grpc", &grpc)] {
        client.create_dataset(Dataset::new(name)).await.unwrap();
        client
            .query(
                "CREATE TABLE t AS SELECT n, CONCAT('row ', CAST(n AS STRING)) AS s \
                 FROM UNNEST(GENERATE_ARRAY(1, 100)) AS n",
            )
            .default_dataset(name)
            .execute()
            .await
            .unwrap();
        let results = client
            .query(format!("SELECT s FROM {name}.t WHERE n > 90"))
            .job_id(format!("stats_select_{name}"))
            .job_statistics(true)
            .run()
            .await
            .unwrap();
        let stats = results.stats();
        assert_eq!(
            stats.job_reference.as_ref().unwrap().job_id,
            format!("stats_select_{name}")
        );
        assert_eq!(stats.statement_type.as_deref(), Some("SELECT"), "{name}");
        // Both columns are read: 100 INT64s, and 100 strings "row N" of 2 bytes each plus
        // their text.
        let text: i64 = (1..=100).map(|n| 2 + format!("row {n}").len() as i64).sum();
        assert_eq!(stats.total_bytes_processed, Some(800 + text), "{name}");
        assert_eq!(stats.total_bytes_billed, Some(10 << 20), "{name}");
        assert!(stats.total_slot_ms.is_some(), "{name}");
        assert_eq!(stats.cache_hit, Some(false), "{name}");
        assert_eq!(
            stats
                .referenced_tables
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [format!("test-project.{name}.t")],
            "{name}"
        );
        let rows: Vec<(String,)> = results.fetch_all().await.unwrap();
        assert_eq!(rows.len(), 10, "{name}");

        let dml = client
            .query(format!("UPDATE {name}.t SET s = 'x' WHERE n <= 3"))
            .job_id(format!("stats_update_{name}"))
            .execute()
            .await
            .unwrap();
        assert_eq!(dml.statement_type.as_deref(), Some("UPDATE"), "{name}");
        assert_eq!(dml.num_dml_affected_rows, Some(3), "{name}");
        let counts = dml.dml_stats.as_ref().unwrap();
        assert_eq!(counts.updated_row_count, Some(3), "{name}");
        assert_eq!(counts.inserted_row_count, Some(0), "{name}");
        assert_eq!(counts.deleted_row_count, Some(0), "{name}");
    }
    emu.shutdown().await;
}

/// Without the job's statistics a polled query has only what `getQueryResults` said.
#[tokio::test]
async fn statistics_are_read_only_when_asked_for() {
    let (emu, rest, grpc) = start().await;
    for (name, client) in [("rest", &rest), ("grpc", &grpc)] {
        let results = client
            .query("SELECT 1")
            .job_id(format!("no_stats_{name}"))
            .run()
            .await
            .unwrap();
        assert_eq!(results.stats().total_bytes_billed, None, "{name}");
        assert_eq!(results.stats().total_slot_ms, None, "{name}");
        let results = client
            .query("SELECT 1")
            .job_id(format!("stats_{name}"))
            .job_statistics(true)
            .run()
            .await
            .unwrap();
        assert_eq!(
            results.stats().statement_type.as_deref(),
            Some("SELECT"),
            "{name}"
        );
        assert_eq!(results.stats().total_bytes_billed, Some(0), "{name}");
    }
    emu.shutdown().await;
}

#[tokio::test]
async fn caller_job_and_request_ids() {
    let (emu, rest, grpc) = start().await;
    for (name, client) in [("rest", &rest), ("grpc", &grpc)] {
        let id = format!("mine_{name}");
        client.query("SELECT 1").job_id(&id).run().await.unwrap();
        let again = client
            .query("SELECT 1")
            .job_id(&id)
            .run()
            .await
            .unwrap_err();
        assert!(again.is_already_exists(), "{name}: {again}");
        assert_eq!(again.attempts(), 1, "{name}");

        let request = format!("request_{name}");
        let first = client
            .query("SELECT 2")
            .job_creation_required(true)
            .request_id(&request)
            .run()
            .await
            .unwrap();
        let second = client
            .query("SELECT 2")
            .job_creation_required(true)
            .request_id(&request)
            .run()
            .await
            .unwrap();
        assert_eq!(first.job_reference(), second.job_reference(), "{name}");
        let other = client
            .query("SELECT 2")
            .job_creation_required(true)
            .run()
            .await
            .unwrap();
        assert_ne!(first.job_reference(), other.job_reference(), "{name}");
    }
    emu.shutdown().await;
}

/// `jobTimeoutMs` reaches the server: a job slower than it is stopped there.
#[tokio::test]
async fn job_timeout_stops_the_job() {
    let emu = Emulator::builder()
        .with_project("test-project")
        .with_job_timeout_floor(Duration::ZERO)
        .with_query_delay(Duration::from_millis(1500))
        .start()
        .await
        .expect("start bigq-emulator");
    for transport in [Transport::Rest, Transport::Grpc] {
        let client = Client::builder()
            .with_project(emu.project())
            .with_emulator(emu.rest_endpoint())
            .with_emulator_grpc(emu.grpc_endpoint())
            .with_transport(transport)
            .build()
            .await
            .unwrap();
        let e = client
            .query("SELECT 1")
            .job_timeout(Duration::from_millis(200))
            .run()
            .await
            .unwrap_err();
        assert!(e.message().contains("Job timed out"), "{transport:?}: {e}");
        let ok: Vec<(i64,)> = client
            .query("SELECT 1")
            .job_timeout(Duration::from_secs(30))
            .fetch_all()
            .await
            .unwrap();
        assert_eq!(ok, [(1,)]);
    }
    emu.shutdown().await;
}

/// `$BIGQ_RECORDINGS`, else the recordings beside the repository.
fn recordings_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("BIGQ_RECORDINGS") {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bigquery-recordings")
        }
    };
    dir.is_dir().then_some(dir)
}

/// The recording with its wildcards (`"<*>"`, a value that differs from run to run)
/// taken out, so that what is left is exactly what BigQuery answered; the ids of a job
/// reference (always strings, and required) are kept as "recorded".
fn without_wildcards(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::Object(r)) = m.get_mut("jobReference") {
                r.values_mut()
                    .filter(|v| *v == "<*>")
                    .for_each(|v| *v = "recorded".into());
            }
            m.retain(|_, v| v != "<*>");
            m.values_mut().for_each(without_wildcards);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_wildcards),
        _ => {}
    }
}

/// Every job resource BigQuery answered in the recordings (`jobs.get`, `jobs.insert`,
/// `jobs.cancel`, each job of `jobs.list`) decodes, and what bigq reports of it is what
/// the recording says.
#[test]
fn recorded_job_resources_decode_exactly() {
    let Some(dir) = recordings_dir() else {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: no BigQuery recordings (set BIGQ_RECORDINGS to their folder)"
        );
        return;
    };
    let mut jobs = Vec::new();
    for entry in std::fs::read_dir(dir.join("http/jobs")).unwrap() {
        let path = entry.unwrap().path().join("expected_response.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut recorded: serde_json::Value = serde_json::from_str(&text).unwrap();
        without_wildcards(&mut recorded);
        let body = &recorded["body"];
        match body["kind"].as_str() {
            Some("bigquery#job") => jobs.push((path.clone(), body.clone())),
            Some("bigquery#jobCancelResponse") => jobs.push((path.clone(), body["job"].clone())),
            Some("bigquery#jobList") => {
                for j in body["jobs"].as_array().unwrap() {
                    jobs.push((path.clone(), j.clone()));
                }
            }
            _ => {}
        }
    }
    assert!(jobs.len() >= 3, "the recordings hold job resources");
    let mut queries = 0;
    for (path, body) in jobs {
        let job: Job = serde_json::from_value(body.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let at = |p: &str| body.pointer(p).and_then(|v| v.as_str());
        assert_eq!(job.state(), at("/status/state"), "{}", path.display());
        assert_eq!(
            job.statement_type(),
            at("/statistics/query/statementType"),
            "{}",
            path.display()
        );
        assert_eq!(
            job.query(),
            at("/configuration/query/query"),
            "{}",
            path.display()
        );
        assert_eq!(
            job.error().and_then(|e| e.reason.as_deref()),
            at("/status/errorResult/reason"),
            "{}",
            path.display()
        );
        if job.query().is_some() {
            queries += 1;
        }
    }
    assert!(queries >= 2, "the recordings hold query jobs");
}

/// `list_jobs` pages through every job, newest first, with BigQuery's filters; `delete_job`
/// removes one.
#[tokio::test]
async fn list_filter_and_delete_jobs_on_both_transports() {
    use bigq::admin::{JobState, ListJobs};
    let (emu, rest, grpc) = start().await;
    for n in 0..5 {
        rest.query(format!("SELECT {n}"))
            .job_id(format!("listed_{n}"))
            .run()
            .await
            .unwrap();
    }
    let created = |j: &Job| j.statistics().creation_time.unwrap();
    for (name, client) in [("rest", &rest), ("grpc", &grpc)] {
        let jobs: Vec<Job> = client
            .list_jobs(ListJobs::new().page_size(2))
            .try_collect()
            .await
            .unwrap();
        let ids: Vec<&str> = jobs
            .iter()
            .map(|j| j.job_reference.job_id.as_str())
            .collect();
        assert_eq!(
            ids,
            ["listed_4", "listed_3", "listed_2", "listed_1", "listed_0"],
            "{name}"
        );
        // The minimal projection leaves the configuration out; the full one has it.
        assert_eq!(jobs[0].query(), None, "{name}");
        assert_eq!(jobs[0].state(), Some("DONE"), "{name}");
        assert_eq!(jobs[0].statement_type(), Some("SELECT"), "{name}");
        let full: Vec<Job> = client
            .list_jobs(ListJobs::new().full(true).all_users(true))
            .try_collect()
            .await
            .unwrap();
        assert_eq!(full[0].query(), Some("SELECT 4"), "{name}");

        let done: Vec<Job> = client
            .list_jobs(ListJobs::new().state(JobState::Done))
            .try_collect()
            .await
            .unwrap();
        assert_eq!(done.len(), 5, "{name}");
        let running: Vec<Job> = client
            .list_jobs(
                ListJobs::new()
                    .state(JobState::Running)
                    .state(JobState::Pending),
            )
            .try_collect()
            .await
            .unwrap();
        assert!(running.is_empty(), "{name}");

        let (first, last) = (created(&jobs[4]), created(&jobs[0]));
        let window: Vec<Job> = client
            .list_jobs(
                ListJobs::new()
                    .min_creation_time(first as u64)
                    .max_creation_time(last as u64),
            )
            .try_collect()
            .await
            .unwrap();
        assert_eq!(window.len(), 5, "{name}");
        let later: Vec<Job> = client
            .list_jobs(ListJobs::new().min_creation_time(last as u64 + 1))
            .try_collect()
            .await
            .unwrap();
        assert!(later.is_empty(), "{name}");
        // bigq-emulator runs a script as one job: no job has children.
        let children: Vec<Job> = client
            .list_jobs(ListJobs::new().parent_job_id("listed_0"))
            .try_collect()
            .await
            .unwrap();
        assert!(children.is_empty(), "{name}");
    }
    let gone = rest.list_jobs(ListJobs::new()).try_collect().await.unwrap()[0]
        .job_reference
        .clone();
    rest.delete_job(&gone).await.unwrap();
    assert!(rest.get_job(&gone).await.unwrap_err().is_not_found());
    let again = grpc.delete_job(&gone).await.unwrap_err();
    assert!(again.is_not_found(), "{again}");
    let next = grpc.list_jobs(ListJobs::new()).try_collect().await.unwrap()[0]
        .job_reference
        .clone();
    assert_eq!(next.job_id, "listed_3");
    grpc.delete_job(&next).await.unwrap();
    let left: Vec<Job> = rest.list_jobs(ListJobs::new()).try_collect().await.unwrap();
    assert_eq!(left.len(), 3);
    emu.shutdown().await;
}

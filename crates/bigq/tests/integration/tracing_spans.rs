//! bigq's `tracing` spans, captured by a subscriber layer: their names, BigQuery's ids and
//! the cost fields, and never a parameter value.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bigq::admin::Dataset;
use bigq::{Client, Transport};
use bigq_emulator::Emulator;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// A span as recorded: its name and every field given a value.
#[derive(Debug, Clone)]
struct Captured {
    name: String,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<(Id, Captured)>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let name = attrs.metadata().name().to_string();
        let mut spans = self.0.lock().unwrap();
        spans.push((id.clone(), Captured { name, fields }));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, span)) = spans.iter_mut().rev().find(|(i, _)| i == id) {
            values.record(&mut Fields(&mut span.fields));
        }
    }
}

impl Capture {
    fn named(&self, name: &str) -> Vec<Captured> {
        let spans = self.0.lock().unwrap();
        spans
            .iter()
            .filter(|(_, s)| s.name == name)
            .map(|(_, s)| s.clone())
            .collect()
    }
    fn all(&self) -> Vec<Captured> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, s)| s.clone())
            .collect()
    }
}

/// Runs [`spans_in_a_process_of_their_own`] alone in a new process of this test binary:
/// `tracing` caches each callsite's interest process-wide, and a callsite first reached by
/// another test's thread while this test's subscriber was being set could stay unseen by it.
#[test]
fn spans_carry_ids_and_cost_and_no_parameter_value() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "tracing_spans::spans_in_a_process_of_their_own",
            "--ignored",
            "--test-threads=1",
        ])
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the span test failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "the span test did not run:\n{stdout}\n{stderr}"
    );
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "run in a process of its own by spans_carry_ids_and_cost_and_no_parameter_value"]
async fn spans_in_a_process_of_their_own() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let emu = Emulator::builder()
        .with_project("span-project")
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
        let name = format!("{transport:?}").to_lowercase();
        client.create_dataset(Dataset::new(&name)).await.unwrap();
        client
            .query(format!(
                "CREATE TABLE {name}.t AS SELECT n FROM UNNEST(GENERATE_ARRAY(1, 50)) AS n"
            ))
            .execute()
            .await
            .unwrap();
        // Not `execute`: the statistics are read because the span is recorded.
        let rows: Vec<(i64,)> = client
            .query(format!("SELECT n FROM {name}.t WHERE n = @secret"))
            .param("secret", 424242i64)
            .job_creation_required(true)
            .fetch_all()
            .await
            .unwrap();
        // No row has n = 424242.
        assert!(rows.is_empty());
        let batches = client
            .read(format!("{name}.t"))
            .batches()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 50);
    }

    let queries = capture.named("bigq.query");
    let selects: Vec<&Captured> = queries
        .iter()
        .filter(|q| q.fields.get("statement_type").map(String::as_str) == Some("SELECT"))
        .collect();
    assert_eq!(selects.len(), 2, "{queries:#?}");
    for (q, transport) in selects.iter().zip(["rest", "grpc"]) {
        let f = &q.fields;
        assert_eq!(f["transport"], transport);
        assert_eq!(f["project"], "span-project");
        assert!(!f["job_id"].is_empty());
        assert_eq!(f["location"], "US");
        // 50 INT64s read.
        assert_eq!(f["total_bytes_processed"], "400", "{f:?}");
        assert_eq!(f["total_bytes_billed"], (10u64 << 20).to_string(), "{f:?}");
        assert!(f.contains_key("total_slot_ms"), "{f:?}");
        assert_eq!(f["cache_hit"], "false");
        assert_eq!(f["rows"], "0");
        assert_eq!(f["attempts"], "1");
    }
    let admin = capture.named("bigq.admin");
    let ops: Vec<&str> = admin
        .iter()
        .map(|s| s.fields["operation"].as_str())
        .collect();
    assert!(ops.contains(&"datasets.insert"), "{ops:?}");
    assert!(ops.contains(&"jobs.get"), "{ops:?}");
    let insert = admin
        .iter()
        .find(|s| s.fields["operation"] == "datasets.insert" && s.fields["transport"] == "grpc")
        .unwrap();
    assert_eq!(insert.fields["dataset"], "grpc");
    let sessions = capture.named("bigq.read_session");
    assert_eq!(sessions.len(), 2);
    assert!(
        sessions[0].fields["session"].starts_with("projects/"),
        "{sessions:?}"
    );
    assert_eq!(
        sessions[0].fields["table"],
        "projects/span-project/datasets/rest/tables/t"
    );
    let streams = capture.named("bigq.read_stream");
    assert!(!streams.is_empty());
    assert!(
        streams
            .iter()
            .all(|s| s.fields["stream"].contains("/streams/"))
    );
    // No span holds the parameter's value, nor the SQL that names it.
    for span in capture.all() {
        for (k, v) in &span.fields {
            assert!(!v.contains("424242"), "{}.{k} = {v}", span.name);
            assert!(!v.contains("secret"), "{}.{k} = {v}", span.name);
        }
    }
    emu.shutdown().await;
}

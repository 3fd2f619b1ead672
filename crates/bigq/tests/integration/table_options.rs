//! Every table option on create, get, patch and update against bigq-emulator, the etag
//! precondition, and the recorded BigQuery table resources decoded exactly.

use bigq::admin::{
    ForeignKey, MaterializedViewDefinition, PartitionUnit, RangePartitioning, Table,
    TimePartitioning,
};
use bigq::schema::{FieldType, RoundingMode, TableFieldSchema, TableSchema};
use bigq::{Client, TableId, Transport};
use bigq_emulator::Emulator;

async fn start(transport: Transport) -> (Emulator, Client) {
    crate::common::in_process_emulator_over(transport).await
}

fn schema() -> TableSchema {
    let mut amount = TableFieldSchema::new("amount", FieldType::Numeric);
    amount.precision = Some(12);
    amount.scale = Some(2);
    amount.rounding_mode = Some(RoundingMode::HalfEven);
    let mut name = TableFieldSchema::new("name", FieldType::String);
    name.max_length = Some(40);
    name.collation = Some("und:ci".into());
    name.default_value_expression = Some("'unknown'".into());
    TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64),
        TableFieldSchema::new("day", FieldType::Date),
        name,
        amount,
    ])
}

#[tokio::test]
async fn every_table_option_is_kept_as_set() {
    let (emu, client) = start(Transport::Rest).await;
    let customers = TableId::new("test-project", "ds", "customers");
    let table = Table::new("ds.orders", schema())
        .with_description("orders")
        .with_friendly_name("Orders")
        .with_label("team", "sales")
        .with_expiration_time(4_102_444_800_000)
        .with_time_partitioning(
            TimePartitioning::by_column(PartitionUnit::Month, "day")
                .with_expiration_ms(7_776_000_000),
        )
        .with_require_partition_filter(true)
        .with_clustering(["name", "id"])
        .with_primary_key(["id"])
        .with_foreign_key(ForeignKey::new(
            "fk_customer",
            &customers,
            [("name", "name")],
        ))
        .with_default_collation("und:ci")
        .with_default_rounding_mode(RoundingMode::HalfAwayFromZero)
        .with_max_staleness("0-0 0 0:30:0");
    let created = client.create_table(table.clone()).await.expect("create");
    let got = client.get_table("ds.orders").await.expect("get");
    for t in [&created, &got] {
        assert_eq!(t.schema, table.schema);
        assert_eq!(t.description, table.description);
        assert_eq!(t.friendly_name, table.friendly_name);
        assert_eq!(t.labels, table.labels);
        assert_eq!(t.expiration_time, table.expiration_time);
        assert_eq!(t.time_partitioning, table.time_partitioning);
        assert_eq!(t.require_partition_filter, Some(true));
        assert_eq!(t.clustering, table.clustering);
        assert_eq!(t.table_constraints, table.table_constraints);
        assert_eq!(t.default_collation, table.default_collation);
        assert_eq!(t.default_rounding_mode, table.default_rounding_mode);
        assert_eq!(t.max_staleness, table.max_staleness);
        assert!(t.etag.is_some());
    }
    let fk = &got.table_constraints.as_ref().unwrap().foreign_keys[0];
    assert_eq!(fk.referenced_table(), customers);

    let ranged = Table::new("ds.ranged", schema())
        .with_range_partitioning(RangePartitioning::new("id", 0, 1000, 10));
    client.create_table(ranged.clone()).await.expect("create");
    let got = client.get_table("ds.ranged").await.expect("get");
    assert_eq!(got.range_partitioning, ranged.range_partitioning);
    emu.shutdown().await;
}

#[tokio::test]
async fn patch_with_a_stale_etag_is_refused_and_update_replaces() {
    let (emu, client) = start(Transport::Rest).await;
    let table = Table::new("ds.t", schema())
        .with_label("a", "1")
        .with_clustering(["id"]);
    client.create_table(table).await.expect("create");
    let first = client.get_table("ds.t").await.expect("get");
    let second = client.get_table("ds.t").await.expect("get");

    // One writer changes the labels; a patch carries only what it sets.
    let mut change = first.clone().with_label("b", "2");
    change.clustering = None;
    let patched = client.patch_table(change).await.expect("patch");
    assert_eq!(patched.labels.len(), 2);
    assert_eq!(
        patched.clustering, first.clustering,
        "a patch leaves the rest"
    );
    assert_ne!(patched.etag, first.etag);

    // The other, from the same read, is refused rather than losing the first change.
    let stale = second.with_friendly_name("mine");
    let e = client.patch_table(stale).await.unwrap_err();
    assert!(e.is_precondition_failed(), "{e}");
    let now = client.get_table("ds.t").await.expect("get");
    assert_eq!(now.friendly_name, None);
    assert_eq!(now.labels.len(), 2);

    // update replaces: what the body leaves out is cleared.
    let mut replace = now.clone();
    replace.clustering = None;
    replace.labels.clear();
    let updated = client.update_table(replace).await.expect("update");
    assert_eq!(updated.clustering, None);
    assert!(updated.labels.is_empty());
    emu.shutdown().await;
}

#[tokio::test]
async fn options_the_grpc_transport_would_drop_are_refused() {
    let (emu, client) = start(Transport::Grpc).await;
    let table = Table::new("ds.t", schema()).with_clustering(["id"]);
    let e = client.create_table(table).await.unwrap_err();
    assert!(e.to_string().contains("`clustering`"), "{e}");
    assert!(client.get_table("ds.t").await.unwrap_err().is_not_found());
    emu.shutdown().await;
}

#[tokio::test]
async fn materialized_views_are_refused_by_name() {
    let (emu, client) = start(Transport::Rest).await;
    let mv = Table::materialized_view(
        "ds.mv",
        MaterializedViewDefinition::new("SELECT 1 AS x").with_refresh(Some(3_600_000)),
    );
    let e = client.create_table(mv).await.unwrap_err();
    assert!(e.to_string().contains("materializedView"), "{e}");
    emu.shutdown().await;
}

#[tokio::test]
async fn views_are_created_from_their_query() {
    let (emu, client) = start(Transport::Rest).await;
    client
        .create_table(Table::view("ds.v", "SELECT 1 AS x, 'a' AS y"))
        .await
        .expect("view");
    let got = client.get_table("ds.v").await.expect("get");
    assert_eq!(got.table_type.as_deref(), Some("VIEW"));
    assert_eq!(
        got.view.map(|v| v.query).as_deref(),
        Some("SELECT 1 AS x, 'a' AS y")
    );
    let names: Vec<String> = got
        .schema
        .unwrap()
        .fields
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["x", "y"]);
    emu.shutdown().await;
}

/// The table resources BigQuery answered with (every `bigquery#table` body of the HTTP
/// recordings), decoded into `Table` and written back: every field bigq sends comes back
/// exactly as recorded, and the read-only ones decode to the recorded values.
#[test]
fn recorded_table_resources_decode_exactly() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/bigquery-recordings/http");
    let mut bodies = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path
                .file_name()
                .is_some_and(|n| n == "expected_response.json")
            {
                let text = std::fs::read_to_string(&path).expect("readable recording");
                let v: serde_json::Value = serde_json::from_str(&text).expect("JSON recording");
                if v.pointer("/body/kind").and_then(|k| k.as_str()) == Some("bigquery#table") {
                    bodies.push((path, v["body"].clone()));
                }
            }
        }
    }
    if bodies.is_empty() {
        eprintln!("skipped: no table resources under {}", root.display());
        return;
    }
    for (path, mut body) in bodies {
        let at = path.display();
        // Recorded times and ids are masked as "<*>": not int64 text, so not decoded.
        if let Some(m) = body.as_object_mut() {
            m.retain(|k, v| !(v == "<*>" && k.ends_with("Time")));
        }
        let table: Table = serde_json::from_value(body.clone())
            .unwrap_or_else(|e| panic!("{at}: a recorded table decodes: {e}"));
        let back = serde_json::to_value(&table).expect("encode");
        for (k, v) in back.as_object().expect("an object") {
            assert_eq!(Some(v), body.get(k), "{at}: field {k}");
        }
        let text = |k: &str| body.get(k).and_then(|v| v.as_str()).map(str::to_string);
        assert_eq!(table.etag, text("etag"), "{at}");
        assert_eq!(table.table_type, text("type"), "{at}");
        assert_eq!(table.location, text("location"), "{at}");
        assert_eq!(
            table.num_rows.map(|n| n.to_string()),
            text("numRows"),
            "{at}"
        );
        assert_eq!(
            table.num_bytes.map(|n| n.to_string()),
            text("numBytes"),
            "{at}"
        );
    }
}

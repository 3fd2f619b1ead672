//! Keeping a table in step with a Rust type against bigq-emulator, over REST and gRPC: a
//! plan over every change kind, a sync applied twice changing nothing the second time, a
//! refused change naming its column, a stale plan refused. bigq sends `tables.patch` over
//! REST only, so over gRPC the plans are checked and applying one is a clear error.

use bigq::admin::{PlanAction, RefusalReason, SchemaChange};
use bigq::schema::{FieldMode, FieldType};
use bigq::value::Numeric;
use bigq::{Client, Transport};
use bigq_emulator::Emulator;

async fn start(transport: Transport) -> (Emulator, Client) {
    crate::common::in_process_emulator_over(transport).await
}

#[derive(bigq::Schema)]
#[allow(dead_code)]
struct Address {
    city: Option<String>,
}

#[derive(bigq::Schema)]
#[allow(dead_code)]
struct V1 {
    id: i64,
    amount: Option<i64>,
    name: String,
    address: Option<Address>,
    legacy: Option<bool>,
}

#[derive(bigq::Schema)]
#[allow(dead_code)]
struct Address2 {
    city: Option<String>,
    zip: Option<String>,
}

#[derive(bigq::Schema)]
#[allow(dead_code)]
struct V2 {
    id: i64,
    amount: Option<Numeric>,
    name: Option<String>,
    address: Option<Address2>,
    #[bigq(description = "free text")]
    note: Option<String>,
    tags: Vec<String>,
}

async fn every_change_kind(transport: Transport, patches: bool) {
    let (_emu, client) = start(transport).await;
    let first = client.table("ds.orders").sync::<V1>().await.unwrap();
    assert_eq!(first.plan.action, PlanAction::Create);
    client
        .query("INSERT INTO ds.orders (id, amount, name) VALUES (1, 5, 'a')")
        .execute()
        .await
        .unwrap();

    let sync = client.table("ds.orders").allow_drop_columns(true);
    let plan = sync.plan::<V2>().await.unwrap();
    assert_eq!(plan.action, PlanAction::Alter, "{plan}");
    let lines: Vec<String> = plan.changes.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "~ column amount: INT64 -> NUMERIC",
            "~ column name: REQUIRED -> NULLABLE",
            "+ column address.zip STRING NULLABLE",
            "- column legacy",
            "+ column note STRING NULLABLE",
            "+ column tags STRING REPEATED",
        ],
        "{plan}"
    );
    assert!(
        plan.to_string()
            .starts_with("~ table test-project.ds.orders: 6 to change\n")
    );
    if !patches {
        // bigq sends tables.patch over REST only: applying the plan says so.
        let e = sync.sync::<V2>().await.unwrap_err();
        assert!(e.to_string().contains("use Transport::Rest"), "{e}");
        return;
    }

    let done = sync.sync::<V2>().await.unwrap();
    let schema = done.table.schema.clone().unwrap();
    assert_eq!(
        schema.field("amount").unwrap().field_type,
        FieldType::Numeric
    );
    assert_eq!(schema.field("name").unwrap().mode(), FieldMode::Nullable);
    assert_eq!(schema.field("address").unwrap().fields.len(), 2);
    assert_eq!(
        schema.field("note").unwrap().description.as_deref(),
        Some("free text")
    );
    assert!(schema.field("legacy").is_none());
    let rows: Vec<(i64, Numeric)> = client
        .query("SELECT id, amount FROM ds.orders")
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "the row is kept");
    assert_eq!(rows[0].1.to_string(), "5");

    // In step now: a second sync does nothing and leaves the etag as it was.
    let again = sync.sync::<V2>().await.unwrap();
    assert!(again.plan.is_empty(), "{}", again.plan);
    assert_eq!(again.table.etag, done.table.etag);
}

#[tokio::test]
async fn a_plan_over_every_change_kind_rest() {
    every_change_kind(Transport::Rest, true).await;
}

#[tokio::test]
async fn a_plan_over_every_change_kind_grpc() {
    every_change_kind(Transport::Grpc, false).await;
}

#[derive(bigq::Schema)]
#[allow(dead_code)]
struct Narrow {
    id: i64,
    amount: Option<String>,
}

async fn refused_and_stale(transport: Transport, patches: bool) {
    let (_emu, client) = start(transport).await;
    client
        .query("CREATE TABLE ds.t (id INT64 NOT NULL, amount NUMERIC, other STRING)")
        .execute()
        .await
        .unwrap();
    client
        .query("INSERT INTO ds.t (id) VALUES (1)")
        .execute()
        .await
        .unwrap();
    let plan = client.table("ds.t").plan::<Narrow>().await.unwrap();
    assert_eq!(plan.action, PlanAction::Refused);
    assert_eq!(plan.refusals.len(), 2, "{plan}");
    assert_eq!(plan.refusals[0].path, "amount");
    assert_eq!(
        plan.refusals[0].reason,
        RefusalReason::TypeChanged {
            from: FieldType::Numeric,
            to: FieldType::String
        }
    );
    assert_eq!(plan.refusals[1].path, "other");
    assert_eq!(plan.refusals[1].reason, RefusalReason::Dropped);
    let e = client.table("ds.t").sync::<Narrow>().await.unwrap_err();
    assert!(
        e.to_string()
            .contains("column amount would change type from NUMERIC to STRING"),
        "{e}"
    );
    assert!(
        e.to_string().contains("column other is in the table"),
        "{e}"
    );
    // Refused even when empty tables may be recreated: this one has a row.
    let still = client
        .table("ds.t")
        .recreate_if_empty(true)
        .plan::<Narrow>()
        .await
        .unwrap();
    assert_eq!(still.action, PlanAction::Refused);
    if !patches {
        return;
    }

    // A plan made before another change to the table is refused when applied.
    #[derive(bigq::Schema)]
    #[allow(dead_code)]
    struct More {
        id: i64,
        amount: Option<Numeric>,
        other: Option<String>,
        extra: Option<bool>,
    }
    let sync = client.table("ds.t");
    let plan = sync.plan::<More>().await.unwrap();
    assert!(matches!(&plan.changes[..], [SchemaChange::AddColumn { path, .. }] if path == "extra"));
    let mut changed = client.get_table("ds.t").await.unwrap();
    changed.description = Some("changed meanwhile".into());
    client.patch_table(changed).await.unwrap();
    let e = sync.apply(&plan).await.unwrap_err();
    assert!(e.is_precondition_failed(), "{e}");
    let t = client.get_table("ds.t").await.unwrap();
    assert!(
        t.schema.unwrap().field("extra").is_none(),
        "nothing applied"
    );
}

#[tokio::test]
async fn a_refused_change_names_its_column_and_a_stale_plan_is_refused_rest() {
    refused_and_stale(Transport::Rest, true).await;
}

#[tokio::test]
async fn a_refused_change_names_its_column_and_a_stale_plan_is_refused_grpc() {
    refused_and_stale(Transport::Grpc, false).await;
}

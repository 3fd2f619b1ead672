//! bigq over gRPC against a server nobody here wrote: the `bigquery` crate's
//! `testing::BigQueryFake` (the `bigquery` crate), which serves the BigQuery v2 JobService and
//! the Storage Read and Write APIs on a loopback port as that crate understands them. The
//! fake has no SQL engine: each query is answered as a rule scripts it, and the rule counts
//! the calls it answered, so the tests check both the rows and that bigq's requests matched.

use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq::{Client, Transport};
use bigquery::testing::BigQueryFake;
use bigquery::{BigQueryDatasetId, BigQueryTableId};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: i64,
    customer: String,
    total: f64,
    note: Option<String>,
}

const SHOP: BigQueryDatasetId = BigQueryDatasetId::from_static("shop");
const ORDERS: BigQueryTableId = BigQueryTableId::from_static("orders");

fn orders(n: i64) -> Vec<Order> {
    (1..=n)
        .map(|id| Order {
            id,
            customer: if id % 2 == 0 { "Alice" } else { "Bob" }.into(),
            total: id as f64 * 1.25,
            note: (id % 3 == 0).then(|| format!("note {id}")),
        })
        .collect()
}

/// A bigq client on the gRPC transport, pointed at the fake.
async fn client(fake: &BigQueryFake) -> Client {
    let options = fake.db().options();
    let endpoint = options.effective_bigquery_api_url();
    assert_eq!(
        endpoint.host_str(),
        Some("127.0.0.1"),
        "the fake must be on loopback"
    );
    Client::builder()
        .with_project(options.google_project_id.clone())
        .with_emulator_grpc(endpoint.as_str())
        .with_transport(Transport::Grpc)
        .build()
        .await
        .unwrap()
}

/// The orders table's schema as bigq writes it.
fn orders_schema() -> TableSchema {
    TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("customer", FieldType::String).with_mode(FieldMode::Required),
        TableFieldSchema::new("total", FieldType::Float64).with_mode(FieldMode::Required),
        TableFieldSchema::new("note", FieldType::String),
    ])
}

/// A fake holding an empty `shop.orders`, and a client for it.
async fn fake_with_orders() -> (BigQueryFake, Client) {
    let fake = BigQueryFake::start().await.unwrap();
    fake.table(SHOP.table(ORDERS), |columns| columns.from_type::<Order>())
        .create()
        .unwrap();
    let client = client(&fake).await;
    (fake, client)
}

#[tokio::test]
async fn a_query_with_parameters_returns_the_rules_rows() {
    let fake = BigQueryFake::start().await.unwrap();
    let sql = "SELECT id, customer, total, note FROM shop.orders WHERE customer = @customer AND id > @min";
    let alice: Vec<Order> = orders(40)
        .into_iter()
        .filter(|o| o.customer == "Alice")
        .collect();
    let rule = fake
        .when_query_match(sql)
        .param("customer", "Alice")
        .param("min", 0i64)
        .returns_rows(|columns| columns.from_type::<Order>(), &alice)
        .unwrap();
    let client = client(&fake).await;

    let results = client
        .query(sql)
        .param("customer", "Alice")
        .param("min", 0i64)
        .run()
        .await
        .unwrap();
    assert_eq!(results.total_rows(), Some(alice.len() as u64));
    let rows: Vec<Order> = results.fetch_all().await.unwrap();
    assert_eq!(rows, alice);
    assert_eq!(rule.calls(), 1);

    // Arrow batches of the same rows.
    let batches = client
        .query(sql)
        .param("customer", "Alice")
        .param("min", 0i64)
        .batches()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n, alice.len());
    assert_eq!(rule.calls(), 2);
}

#[tokio::test]
async fn dml_counts_come_back() {
    let fake = BigQueryFake::start().await.unwrap();
    let sql = "DELETE FROM shop.orders WHERE customer = @customer";
    let rule = fake
        .when_query_match(sql)
        .param("customer", "Bob")
        .returns_dml(
            bigquery::BigQueryStatementType::Delete,
            bigquery::BigQueryDmlStats {
                inserted: 0,
                updated: 0,
                deleted: 7,
            },
        )
        .unwrap();
    let client = client(&fake).await;
    let stats = client
        .query(sql)
        .param("customer", "Bob")
        .execute()
        .await
        .unwrap();
    assert_eq!(stats.num_dml_affected_rows, Some(7));
    assert_eq!(rule.calls(), 1);
}

#[tokio::test]
async fn a_table_read_returns_the_fakes_rows() {
    let fake = BigQueryFake::start().await.unwrap();
    let all = orders(5_000);
    fake.table(SHOP.table(ORDERS), |columns| columns.from_type::<Order>())
        .rows(&all)
        .read_streams(3)
        .create()
        .unwrap();
    let client = client(&fake).await;
    let mut rows: Vec<Order> = client.read("shop.orders").fetch_all().await.unwrap();
    rows.sort_by_key(|o| o.id);
    assert_eq!(rows, all);
}

#[tokio::test]
async fn rows_bigq_writes_are_the_rows_the_fake_holds() {
    let (fake, client) = fake_with_orders().await;
    let schema = orders_schema();
    let all = orders(2_000);
    let mut writer = client
        .write("shop.orders")
        .schema(schema)
        .committed()
        .open()
        .await
        .unwrap();
    for chunk in all.chunks(300) {
        writer.append(chunk).await.unwrap();
    }
    let summary = writer.finish().await.unwrap();
    assert_eq!(summary.rows_written, all.len() as u64);
    let written: Vec<Order> = fake.rows(SHOP.table(ORDERS)).unwrap();
    assert_eq!(written, all);
}

#[tokio::test]
async fn a_result_larger_than_its_first_page_is_read_through_storage_read() {
    let fake = BigQueryFake::start().await.unwrap();
    let all = orders(2_500);
    let unordered = "SELECT id, customer, total, note FROM shop.orders";
    let ordered = "SELECT id, customer, total, note FROM shop.orders ORDER BY id";
    for sql in [unordered, ordered] {
        fake.when_query_match(sql)
            .returns_rows(|columns| columns.from_type::<Order>(), &all)
            .unwrap();
    }
    let client = client(&fake).await;

    // The first page (100 rows, Arrow) says there is more: the job's destination table is
    // read through Storage Read, every row once, in order where the query sorts.
    let results = client.query(ordered).page_size(100).run().await.unwrap();
    assert!(results.reads_with_storage_api());
    assert!(results.job_reference().is_some());
    let rows: Vec<Order> = results.fetch_all().await.unwrap();
    assert_eq!(rows, all);

    let batches = client
        .query(unordered)
        .page_size(100)
        .batches()
        .await
        .unwrap();
    assert!(batches.is_storage_read());
    let n: usize = batches
        .try_collect()
        .await
        .unwrap()
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(n, all.len());
}

#[tokio::test]
async fn an_invalid_query_fails_once_and_an_outage_is_retried() {
    use bigquery::testing::{BigQueryFakeCode, BigQueryFakeFault};
    let fake = BigQueryFake::start().await.unwrap();
    let bad = "SELECT FROM";
    let invalid = fake
        .when_query_match(bad)
        .fails(BigQueryFakeFault::status(
            BigQueryFakeCode::InvalidArgument,
            "Syntax error: Unexpected keyword FROM at [1:8]",
        ))
        .unwrap();
    let good = "SELECT id, customer, total, note FROM shop.orders WHERE id = 1";
    let lost = fake
        .when_query_match(good)
        .times(1)
        .fails(BigQueryFakeFault::status(
            BigQueryFakeCode::Unavailable,
            "backend went away",
        ))
        .unwrap();
    let answer = fake
        .when_query_match(good)
        .returns_rows(|columns| columns.from_type::<Order>(), orders(1))
        .unwrap();
    let client = client(&fake).await;

    let e = client.query(bad).run().await.unwrap_err();
    assert!(!e.is_retryable() && e.is_invalid_query(), "{e:?}");
    assert!(e.to_string().contains("Unexpected keyword FROM"), "{e}");
    assert_eq!(invalid.calls(), 1, "INVALID_ARGUMENT is not retried");

    let rows: Vec<Order> = client.query(good).fetch_all().await.unwrap();
    assert_eq!(rows, orders(1));
    assert_eq!((lost.calls(), answer.calls()), (1, 1));
}

#[tokio::test]
async fn datasets_and_tables_over_the_v2_services() {
    use bigq::admin::{Dataset, Table};
    let fake = BigQueryFake::start().await.unwrap();
    let client = client(&fake).await;
    let mut schema = orders_schema();
    schema
        .fields
        .push(TableFieldSchema::new("tags", FieldType::String).with_mode(FieldMode::Repeated));

    let ds = client
        .create_dataset(Dataset::new("shop").with_description("orders"))
        .await
        .unwrap();
    assert_eq!(ds.dataset_id(), "shop");
    assert_eq!(
        client
            .get_dataset("shop")
            .await
            .unwrap()
            .description
            .as_deref(),
        Some("orders")
    );
    let e = client
        .create_dataset(Dataset::new("shop"))
        .await
        .unwrap_err();
    assert!(e.is_already_exists(), "{e:?}");

    let created = client
        .create_table(Table::new("shop.orders", schema.clone()))
        .await
        .unwrap();
    assert_eq!(created.table_id(), "orders");
    let got = client.get_table("shop.orders").await.unwrap();
    assert_eq!(got.schema.as_ref().map(|s| s.fields.len()), Some(5));
    assert_eq!(
        got.schema.unwrap().fields[4].mode,
        Some(FieldMode::Repeated)
    );
    let listed = client.list_tables("shop").try_collect().await.unwrap();
    assert_eq!(
        listed.iter().map(|t| t.table_id()).collect::<Vec<_>>(),
        ["orders"]
    );

    // A writer without a schema fetches the table's over TableService.GetTable.
    #[derive(Serialize)]
    struct Tagged<'a> {
        #[serde(flatten)]
        order: &'a Order,
        tags: Vec<&'a str>,
    }
    let all = orders(10);
    let rows: Vec<Tagged> = all
        .iter()
        .map(|o| Tagged {
            order: o,
            tags: vec!["x"],
        })
        .collect();
    let mut writer = client.write("shop.orders").open().await.unwrap();
    writer.append(&rows).await.unwrap();
    assert_eq!(writer.finish().await.unwrap().rows_written, 10);

    client.delete_table("shop.orders").await.unwrap();
    let e = client.get_table("shop.orders").await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    client.delete_dataset("shop", true).await.unwrap();
    assert!(client.get_dataset("shop").await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn an_arrow_batch_bigq_writes_is_the_rows_the_fake_holds() {
    use bigq::arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
    use std::sync::Arc;
    let (fake, client) = fake_with_orders().await;
    let all = orders(1_000);
    let batch = bigq::arrow::RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from_iter_values(all.iter().map(|o| o.id))) as ArrayRef,
        ),
        (
            "customer",
            Arc::new(StringArray::from_iter_values(
                all.iter().map(|o| &o.customer),
            )),
        ),
        (
            "total",
            Arc::new(Float64Array::from_iter_values(all.iter().map(|o| o.total))),
        ),
        (
            "note",
            Arc::new(StringArray::from_iter(
                all.iter().map(|o| o.note.as_deref()),
            )),
        ),
    ])
    .unwrap();
    let mut writer = client
        .write("shop.orders")
        .committed()
        .open()
        .await
        .unwrap();
    writer.append_batch(&batch).await.unwrap();
    assert_eq!(writer.finish().await.unwrap().rows_written, 1_000);
    let written: Vec<Order> = fake.rows(SHOP.table(ORDERS)).unwrap();
    assert_eq!(written, all);
}

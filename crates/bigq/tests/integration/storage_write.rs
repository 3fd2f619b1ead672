//! Storage Write (gRPC) against bqemulator's BigQueryWrite service, an independent server on
//! loopback. bqemulator takes the `_default`, COMMITTED and PENDING streams; it fails on
//! RECORD columns and does not check offsets the way BigQuery does, so the exactly-once and
//! fault handling are tested against the in-memory server in `src/write/tests.rs`.

use crate::common;

use bigq::Client;
use bigq::admin::Dataset;
use bigq::value::{Date, Numeric, Timestamp};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Row {
    id: i64,
    name: Option<String>,
    score: Option<f64>,
    flag: Option<bool>,
    day: Option<Date>,
    ts: Option<Timestamp>,
    amount: Option<Numeric>,
    arr: Vec<i64>,
}

fn rows(range: std::ops::Range<i64>) -> Vec<Row> {
    range
        .map(|n| Row {
            id: n,
            name: (n % 7 != 0).then(|| format!("name {n}")),
            score: (n % 5 != 0).then(|| n as f64 / 4.0),
            flag: (n % 3 != 0).then_some(n % 2 == 0),
            day: Some(Date::new(10_957 + (n % 9000) as i32)),
            ts: (n % 11 != 0).then(|| Timestamp::new(1_577_836_800_000_000 + n * 1_000_000)),
            amount: Some(format!("{n}.25").parse().unwrap()),
            arr: (1..=(n % 4)).collect(),
        })
        .collect()
}

/// A fresh dataset with an empty table of the columns of [`Row`].
async fn table(client: &Client, test: &str) -> (String, String) {
    let ds = common::dataset_name(test);
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    let table = format!("{ds}.w");
    client
        .query(format!(
            "CREATE TABLE `{table}` (id INT64 NOT NULL, name STRING, score FLOAT64, \
             flag BOOL, day DATE, ts TIMESTAMP, amount NUMERIC, arr ARRAY<INT64>)"
        ))
        .execute()
        .await
        .unwrap();
    (ds, table)
}

async fn read_back(client: &Client, table: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = client.read_table_data(table).fetch_all().await.unwrap();
    rows.sort_by_key(|r| r.id);
    rows
}

#[tokio::test]
async fn the_default_stream_writes_every_row_with_the_schema_fetched() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "swdef").await;

    let want = rows(0..3000);
    let mut writer = client
        .write(&table)
        .default_stream()
        .max_request_bytes(64 * 1024)
        .open()
        .await
        .unwrap();
    assert!(writer.stream_name().ends_with("/streams/_default"));
    writer.append(&want[..1000]).await.unwrap();
    writer.append(&want[1000..]).await.unwrap();
    let summary = writer.finish().await.unwrap();
    assert_eq!(summary.rows_written, 3000);
    assert!(summary.requests > 1, "{summary:?}");
    assert_eq!(summary.retries, 0);
    assert_eq!(read_back(&client, &table).await, want);

    client.delete_dataset(&ds, true).await.unwrap();
}

#[tokio::test]
async fn a_pending_stream_shows_nothing_until_committed() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "swpend").await;

    let want = rows(0..500);
    let mut writer = client.write(&table).pending().open().await.unwrap();
    writer.append(&want).await.unwrap();
    writer.flush().await.unwrap();
    assert!(read_back(&client, &table).await.is_empty());
    let summary = writer.commit().await.unwrap();
    assert_eq!(summary.rows_written, 500);
    assert_eq!(summary.finalized_rows, Some(500));
    assert!(summary.commit_time.is_some());
    assert_eq!(read_back(&client, &table).await, want);

    client.delete_dataset(&ds, true).await.unwrap();
}

#[tokio::test]
async fn a_committed_stream_writes_at_offsets() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "swcom").await;

    let want = rows(0..800);
    let mut writer = client
        .write(&table)
        .committed()
        .max_request_bytes(64 * 1024)
        .open()
        .await
        .unwrap();
    writer.append(&want).await.unwrap();
    let summary = writer.finish().await.unwrap();
    assert_eq!(summary.rows_written, 800);
    assert_eq!(read_back(&client, &table).await, want);

    client.delete_dataset(&ds, true).await.unwrap();
}

#[tokio::test]
async fn a_row_that_does_not_fit_names_its_index_and_column_and_writes_nothing() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "swbad").await;

    let mut writer = client.write(&table).open().await.unwrap();
    let bad = serde_json::json!([
        {"id": 1, "name": "a"},
        {"name": "no id"},
    ]);
    let e = writer.append(bad.as_array().unwrap()).await.unwrap_err();
    let c = e.codec_error().expect("an encode error");
    assert_eq!((c.row(), c.column()), (Some(1), Some("id")), "{e}");
    let e = writer
        .append(&[serde_json::json!({"id": 2, "day": "2024-02-30"})])
        .await
        .unwrap_err();
    let c = e.codec_error().unwrap();
    assert_eq!((c.column(), c.value()), (Some("day"), Some("2024-02-30")));
    writer.finish().await.unwrap();
    assert!(read_back(&client, &table).await.is_empty());

    client.delete_dataset(&ds, true).await.unwrap();
}

//! Storage Read scenarios run against every server with a BigQueryRead service:
//! bigq-emulator in-process (`tests/integration/emulator_storage_read.rs`) and bqemulator
//! (`tests/integration/storage_read.rs`), on the same table.
#![allow(dead_code)]

use bigq::Client;
use bigq::read::Compression;
use bigq::value::{Date, Timestamp};
use futures::TryStreamExt;
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Inner {
    pub a: i64,
    pub b: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Row {
    pub id: i64,
    pub name: Option<String>,
    pub score: Option<f64>,
    pub flag: Option<bool>,
    pub day: Option<Date>,
    pub ts: Option<Timestamp>,
    pub st: Option<Inner>,
    pub arr: Vec<i64>,
}

/// Rows in the scenarios' table.
pub const ROWS: i64 = 20_000;

/// Creates `table` (`dataset.table`) with [`ROWS`] rows of several types (CTAS over REST).
pub async fn create_table(client: &Client, table: &str) {
    client
        .query(format!(
            "CREATE TABLE `{table}` AS SELECT \
               n AS id, \
               IF(MOD(n, 7) = 0, NULL, CONCAT('name ', CAST(n AS STRING))) AS name, \
               IF(MOD(n, 5) = 0, NULL, n / 4) AS score, \
               IF(MOD(n, 3) = 0, NULL, MOD(n, 2) = 0) AS flag, \
               DATE(TIMESTAMP_SECONDS(946684800 + MOD(n, 9000) * 86400)) AS day, \
               TIMESTAMP_SECONDS(1577836800 + n) AS ts, \
               STRUCT(n * 2 AS a, IF(MOD(n, 4) = 0, NULL, 'x') AS b) AS st, \
               GENERATE_ARRAY(1, MOD(n, 4)) AS arr \
             FROM UNNEST(GENERATE_ARRAY(1, {ROWS})) AS n"
        ))
        .execute()
        .await
        .unwrap();
}

pub fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by_key(|r| r.id);
    rows
}

/// A batch's rows, decoded with bigq-codec.
pub fn rows_of(b: &bigq::arrow::RecordBatch) -> Vec<Row> {
    let mut out = Vec::new();
    bigq_codec::de::extend_from_record_batch(b, &mut out, 0).unwrap();
    out
}

/// Storage Read gives the rows `tabledata.list` gives: on one stream as typed rows, on
/// several as Arrow batches under every compression setting, stream after stream when
/// ordered (table order), and split per stream for callers who read them in parallel.
pub async fn same_rows_as_tabledata_list(client: &Client, table: &str) {
    let in_table_order: Vec<Row> = client.read_table_data(table).fetch_all().await.unwrap();
    let listed = sorted(in_table_order.clone());
    assert_eq!(listed.len(), ROWS as usize);
    assert_eq!(listed[0].id, 1);
    assert_eq!(listed[6].name, None);
    assert!(listed[3].arr.is_empty());
    assert_eq!(listed[2].arr, vec![1, 2, 3]);

    let one = client
        .read(table)
        .max_streams(1)
        .rows::<Row>()
        .await
        .unwrap();
    assert_eq!(one.stream_count(), 1);
    assert_eq!(sorted(one.try_collect().await.unwrap()), listed);

    for compression in [Compression::Lz4Frame, Compression::Zstd, Compression::None] {
        let batches = client
            .read(table)
            .max_streams(4)
            .compression(compression)
            .batches()
            .await
            .unwrap();
        assert!(batches.stream_count() > 1, "{}", batches.stream_count());
        let schema = batches.schema();
        let batches = batches.try_collect().await.unwrap();
        let mut rows = Vec::new();
        for b in &batches {
            assert_eq!(b.schema(), schema);
            rows.extend(rows_of(b));
        }
        assert_eq!(sorted(rows), listed, "{compression:?}");
    }

    // Ordered: stream after stream. Both servers split a table into row ranges in table
    // order, so an ordered read gives the rows in the order tabledata.list does.
    let ordered = client
        .read(table)
        .max_streams(4)
        .ordered(true)
        .rows::<Row>()
        .await
        .unwrap();
    assert!(ordered.stream_count() > 1);
    assert_eq!(ordered.try_collect().await.unwrap(), in_table_order);

    // Per-stream streams, read in parallel by the caller.
    let streams = client.read(table).max_streams(3).streams().await.unwrap();
    assert!(streams.len() > 1);
    let mut names: Vec<&str> = streams.iter().map(|s| s.name()).collect();
    names.dedup();
    assert_eq!(names.len(), streams.len());
    let parts = futures::future::try_join_all(streams.into_iter().map(|s| async move {
        let batches: Vec<_> = s.try_collect().await?;
        Ok::<_, bigq::Error>(batches.iter().flat_map(rows_of).collect::<Vec<_>>())
    }))
    .await
    .unwrap();
    assert!(parts.iter().all(|p| !p.is_empty()));
    assert_eq!(sorted(parts.concat()), listed);

    // Per-stream typed rows.
    let streams = client
        .read(table)
        .max_streams(3)
        .row_streams::<Row>()
        .await
        .unwrap();
    assert!(streams.len() > 1);
    let parts = futures::future::try_join_all(streams.into_iter().map(|s| s.try_collect()))
        .await
        .unwrap();
    assert!(parts.iter().all(|p| !p.is_empty()));
    assert_eq!(sorted(parts.concat()), listed);
}

//! Storage Read (gRPC) against bqemulator's BigQueryRead service, an independent server on
//! loopback. bqemulator ignores read offsets and buffer compression and cannot read query
//! results, so these tests check what it does serve: sessions, streams, projection,
//! filters, Arrow batches and errors.

mod common;

use bigq::Client;
use bigq::admin::Dataset;
use bigq::read::{Compression, Filter};
use bigq::value::{Date, Timestamp};
use futures::{StreamExt, TryStreamExt};
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Inner {
    a: i64,
    b: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Row {
    id: i64,
    name: Option<String>,
    score: Option<f64>,
    flag: Option<bool>,
    day: Option<Date>,
    ts: Option<Timestamp>,
    st: Option<Inner>,
    arr: Vec<i64>,
}

const ROWS: i64 = 20_000;

/// A fresh dataset with a 20,000-row table of several types, made with CTAS over REST.
async fn table(client: &Client, test: &str) -> (String, String) {
    let ds = common::dataset_name(test);
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    let table = format!("{ds}.scan");
    client
        .query(format!(
            "CREATE TABLE `{table}` AS SELECT \
               n AS id, \
               IF(MOD(n, 7) = 0, NULL, CONCAT('name ', CAST(n AS STRING))) AS name, \
               IF(MOD(n, 5) = 0, NULL, n / 4) AS score, \
               IF(MOD(n, 3) = 0, NULL, MOD(n, 2) = 0) AS flag, \
               DATE_ADD(DATE '2000-01-01', INTERVAL MOD(n, 9000) DAY) AS day, \
               TIMESTAMP_ADD(TIMESTAMP '2020-01-01 00:00:00+00', INTERVAL n SECOND) AS ts, \
               STRUCT(n * 2 AS a, IF(MOD(n, 4) = 0, NULL, 'x') AS b) AS st, \
               GENERATE_ARRAY(1, MOD(n, 4)) AS arr \
             FROM UNNEST(GENERATE_ARRAY(1, {ROWS})) AS n"
        ))
        .execute()
        .await
        .unwrap();
    (ds, table)
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by_key(|r| r.id);
    rows
}

#[tokio::test]
async fn same_rows_as_tabledata_list_with_one_and_several_streams() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "sread").await;

    let listed = sorted(client.read_table_data(&table).fetch_all().await.unwrap());
    assert_eq!(listed.len(), ROWS as usize);
    assert_eq!(listed[0].id, 1);
    assert_eq!(listed[6].name, None);
    assert!(listed[3].arr.is_empty());
    assert_eq!(listed[2].arr, vec![1, 2, 3]);

    // One stream, typed rows.
    let rows = client
        .read(&table)
        .max_streams(1)
        .rows::<Row>()
        .await
        .unwrap();
    assert_eq!(rows.stream_count(), 1);
    let one: Vec<Row> = rows.try_collect().await.unwrap();
    assert_eq!(sorted(one), listed);

    // Several streams, Arrow batches, every compression setting (bqemulator ignores it, but
    // the session must still be accepted and decoded).
    for compression in [Compression::Lz4Frame, Compression::Zstd, Compression::None] {
        let batches = client
            .read(&table)
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
            rows.extend(bigq_codec_rows(b));
        }
        assert_eq!(sorted(rows), listed, "{compression:?}");
    }

    // Ordered: stream after stream. bqemulator splits the table into row ranges in table
    // order, so an ordered read gives the rows in the order tabledata.list does.
    let rows = client
        .read(&table)
        .max_streams(4)
        .ordered()
        .rows::<Row>()
        .await
        .unwrap();
    assert!(rows.stream_count() > 1);
    let unsorted_list: Vec<Row> = client.read_table_data(&table).fetch_all().await.unwrap();
    assert_eq!(rows.try_collect().await.unwrap(), unsorted_list);

    // Per-stream streams, read in parallel by the caller.
    let streams = client.read(&table).max_streams(3).streams().await.unwrap();
    assert!(streams.len() > 1);
    let mut names: Vec<&str> = streams.iter().map(|s| s.name()).collect();
    names.dedup();
    assert_eq!(names.len(), streams.len());
    let parts = futures::future::try_join_all(streams.into_iter().map(|s| async move {
        let batches: Vec<_> = s.try_collect().await?;
        Ok::<_, bigq::Error>(batches.iter().flat_map(bigq_codec_rows).collect::<Vec<_>>())
    }))
    .await
    .unwrap();
    assert!(parts.iter().all(|p| !p.is_empty()));
    assert_eq!(sorted(parts.concat()), listed);

    // Per-stream typed rows.
    let streams = client
        .read(&table)
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

    client.delete_dataset(&ds, true).await.unwrap();
}

fn bigq_codec_rows(b: &bigq::arrow::RecordBatch) -> Vec<Row> {
    let mut out = Vec::new();
    bigq_codec::de::extend_from_record_batch(b, &mut out, 0).unwrap();
    out
}

#[tokio::test]
async fn projection_filter_and_typed_rows() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "sproj").await;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Small {
        id: i64,
        st: Inner,
    }
    let mut rows: Vec<Small> = client
        .read(&table)
        .selected_fields(["id", "st"])
        .row_restriction("id <= 10 AND id > 5")
        .fetch_all()
        .await
        .unwrap();
    rows.sort_by_key(|r| r.id);
    let want: Vec<Small> = (6..=10)
        .map(|n| Small {
            id: n,
            st: Inner {
                a: n * 2,
                b: (n % 4 != 0).then(|| "x".to_string()),
            },
        })
        .collect();
    assert_eq!(rows, want);

    // The same filter built from typed values, quoted by bigq.
    let mut typed: Vec<Small> = client
        .read(&table)
        .selected_fields(["id", "st"])
        .row_restriction(Filter::col("id").le(10).and(Filter::col("id").gt(5)))
        .fetch_all()
        .await
        .unwrap();
    typed.sort_by_key(|r| r.id);
    assert_eq!(typed, want);
    let named: Vec<(i64,)> = client
        .read(&table)
        .selected_fields(["id"])
        .row_restriction(
            Filter::col("name")
                .is_in(["name 8", "name 9", "it's not there"])
                .or(Filter::col("day").eq(Date::from_ymd(2000, 1, 4).unwrap())),
        )
        .fetch_all()
        .await
        .unwrap();
    let mut ids: Vec<i64> = named.into_iter().map(|r| r.0).collect();
    ids.sort();
    assert_eq!(ids, vec![3, 8, 9, 9003, 18003]);

    // The batches carry only the projected columns.
    let batches = client
        .read(&table)
        .selected_fields(["name", "id"])
        .row_restriction("id = 3")
        .batches()
        .await
        .unwrap();
    let names: Vec<String> = batches
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names.len(), 2);
    assert!(names.contains(&"id".to_string()) && names.contains(&"name".to_string()));
    let n: usize = batches
        .try_collect()
        .await
        .unwrap()
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(n, 1);

    // A row type that does not match: a NULL into a non-Option field names the column.
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Strict {
        id: i64,
        name: String,
    }
    let err = client
        .read(&table)
        .row_restriction("id <= 14")
        .fetch_all::<Strict>()
        .await
        .unwrap_err();
    assert!(err.is_decode(), "{err:?}");
    assert_eq!(err.codec_error().unwrap().column(), Some("name"), "{err:?}");

    // A panic while decoding is an error, not a quietly shorter result.
    #[derive(Debug)]
    struct Panicky;
    impl<'de> Deserialize<'de> for Panicky {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            #[derive(Deserialize)]
            struct Id {
                id: i64,
            }
            let id = Id::deserialize(d)?.id;
            assert!(id != 7, "row 7 is cursed");
            Ok(Panicky)
        }
    }
    let err = client
        .read(&table)
        .row_restriction("id <= 14")
        .fetch_all::<Panicky>()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("row 7 is cursed"), "{err}");

    // rows() streams one at a time too.
    let mut stream = client
        .read(&table)
        .row_restriction("id < 100")
        .rows::<Row>()
        .await
        .unwrap();
    let mut seen = 0;
    while let Some(r) = stream.next().await {
        assert!(r.unwrap().id < 100);
        seen += 1;
    }
    assert_eq!(seen, 99);

    client.delete_dataset(&ds, true).await.unwrap();
}

#[tokio::test]
async fn errors_before_any_row() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "serr").await;

    let missing = format!("{ds}.no_such_table");
    let err = client.read(&missing).batches().await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert!(!err.is_retryable(), "{err:?}");
    let err = client.read(&missing).fetch_all::<Row>().await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");

    let err = client
        .read(&table)
        .selected_fields(["id", "nope"])
        .batches()
        .await
        .unwrap_err();
    assert!(!err.is_retryable(), "{err:?}");
    assert!(err.to_string().contains("nope"), "{err}");

    let err = client.read("not a table id").batches().await.unwrap_err();
    assert!(err.to_string().contains("invalid table id"), "{err}");

    client.delete_dataset(&ds, true).await.unwrap();
}

#[tokio::test]
async fn empty_table_reads_no_rows() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let ds = common::dataset_name("sempty");
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    let table = format!("{ds}.empty");
    client
        .query(format!(
            "CREATE TABLE `{table}` AS SELECT n AS id FROM UNNEST(GENERATE_ARRAY(1, 10)) AS n WHERE n > 100"
        ))
        .execute()
        .await
        .unwrap();
    let rows: Vec<(i64,)> = client.read(&table).fetch_all().await.unwrap();
    assert!(rows.is_empty());
    client.delete_dataset(&ds, true).await.unwrap();
}

#[tokio::test]
async fn session_streams_split_and_read_by_name() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "ssplit").await;

    let session = client.read(&table).max_streams(1).session().await.unwrap();
    assert!(
        session.name().starts_with("projects/"),
        "{}",
        session.name()
    );
    assert_eq!(session.stream_names().len(), 1);
    assert!(session.schema().field_with_name("st").is_ok());
    let original = session.stream_names()[0].clone();

    let (primary, remainder) = session
        .split_stream(&original, 0.25)
        .await
        .unwrap()
        .expect("a 20,000-row stream can be split");
    let read = |name: String| {
        let s = session.read_stream(&name).unwrap();
        assert_eq!(s.name(), name);
        async move {
            let batches: Vec<_> = s.try_collect().await.unwrap();
            batches
                .iter()
                .flat_map(bigq_codec_rows)
                .collect::<Vec<Row>>()
        }
    };
    let head = read(primary).await;
    let tail = read(remainder).await;
    assert_eq!(head.len(), ROWS as usize / 4);
    assert_eq!(head.len() + tail.len(), ROWS as usize);
    let listed = sorted(client.read_table_data(&table).fetch_all().await.unwrap());
    assert_eq!(sorted([head, tail].concat()), listed);

    let err = session
        .split_stream(&format!("{}/streams/nope", session.name()), 0.5)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert!(session.split_stream(&original, 1.5).await.is_err());

    client.delete_dataset(&ds, true).await.unwrap();
}

#[tokio::test]
async fn responses_over_grpc_default_4_mib_limit() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let ds = common::dataset_name("sbig");
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    let table = format!("{ds}.wide");
    // bqemulator sends up to 65,536 rows per response: about 13 MB here.
    client
        .query(format!(
            "CREATE TABLE `{table}` AS SELECT n AS id, CONCAT(CAST(n AS STRING), REPEAT('x', 200)) AS s \
             FROM UNNEST(GENERATE_ARRAY(1, 70000)) AS n"
        ))
        .execute()
        .await
        .unwrap();
    let batches = client
        .read(&table)
        .max_streams(1)
        .batches()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let biggest = batches
        .iter()
        .map(|b| b.get_array_memory_size())
        .max()
        .unwrap();
    assert!(biggest > 8 << 20, "{biggest}");
    let rows: Vec<(i64, String)> = batches
        .iter()
        .flat_map(|b| {
            let mut out = Vec::new();
            bigq_codec::de::extend_from_record_batch(b, &mut out, 0).unwrap();
            out
        })
        .collect();
    assert_eq!(rows.len(), 70_000);
    let sum: i64 = rows.iter().map(|r| r.0).sum();
    assert_eq!(sum, 70_000 * 70_001 / 2);
    assert!(
        rows.iter()
            .all(|(id, s)| s.starts_with(&id.to_string()) && s.len() == id.to_string().len() + 200)
    );
    client.delete_dataset(&ds, true).await.unwrap();
}

//! Storage Read (gRPC) against bqemulator's BigQueryRead service, an independent server on
//! loopback. bqemulator ignores read offsets and buffer compression and cannot read query
//! results, so these tests check what it does serve: sessions, streams, projection,
//! filters, Arrow batches and errors.

use crate::common;
use crate::read_scenarios;

use bigq::Client;
use bigq::admin::Dataset;
use bigq::read::Filter;
use bigq::value::Date;
use futures::{StreamExt, TryStreamExt};
use serde::Deserialize;

use read_scenarios::{Inner, ROWS, Row, rows_of, sorted};

/// A fresh dataset with the scenarios' table.
async fn table(client: &Client, test: &str) -> (String, String) {
    let ds = common::dataset_name(test);
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    let table = format!("{ds}.scan");
    read_scenarios::create_table(client, &table).await;
    (ds, table)
}

#[tokio::test]
async fn same_rows_as_tabledata_list_with_one_and_several_streams() {
    let _serial = common::serial().await;
    let client = common::client().await;
    let (ds, table) = table(&client, "sread").await;
    read_scenarios::same_rows_as_tabledata_list(&client, &table).await;
    client.delete_dataset(&ds, true).await.unwrap();
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
            batches.iter().flat_map(rows_of).collect::<Vec<Row>>()
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

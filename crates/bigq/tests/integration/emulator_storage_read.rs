//! bigq's Storage Read client against bigq-emulator's BigQueryRead service, started
//! in-process (REST and gRPC on free loopback ports) for each test. Unlike bqemulator,
//! bigq-emulator honours offsets and buffer compression, so a stream cut mid-way by the
//! emulator's fault hook must resume without losing or repeating a row.

use crate::common;

use bigq::Client;
use bigq::arrow::array::Array;
use bigq::read::{Compression, Filter};
use bigq::value::Date;
use bigq_emulator::Emulator;
use futures::TryStreamExt;
use serde::Deserialize;

use crate::read_scenarios;
use read_scenarios::{Inner, ROWS, Row, rows_of};

async fn start() -> (Emulator, Client) {
    common::in_process_emulator().await
}

/// `ds.scan`: the scenarios' table.
async fn table(client: &Client) -> String {
    read_scenarios::create_table(client, "ds.scan").await;
    "ds.scan".to_string()
}

#[tokio::test]
async fn same_rows_as_tabledata_list() {
    let (emu, client) = start().await;
    let table = table(&client).await;
    read_scenarios::same_rows_as_tabledata_list(&client, &table).await;
    // bigq-emulator gives as many streams as asked for, table size permitting.
    let four = client.read(&table).max_streams(4).batches().await.unwrap();
    assert_eq!(four.stream_count(), 4);
    emu.shutdown().await;
}

#[tokio::test]
async fn projection_filter_and_errors() {
    let (emu, client) = start().await;
    let table = table(&client).await;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Small {
        id: i64,
        st: Inner,
    }
    let want: Vec<Small> = (6..=10)
        .map(|n| Small {
            id: n,
            st: Inner {
                a: n * 2,
                b: (n % 4 != 0).then(|| "x".to_string()),
            },
        })
        .collect();
    let mut rows: Vec<Small> = client
        .read(&table)
        .selected_fields(["st", "id"])
        .row_restriction(Filter::col("id").le(10).and(Filter::col("id").gt(5)))
        .fetch_all()
        .await
        .unwrap();
    rows.sort_by_key(|r| r.id);
    assert_eq!(rows, want);

    // A nested field alone.
    #[derive(Debug, Deserialize, PartialEq)]
    struct OnlyA {
        a: i64,
    }
    #[derive(Debug, Deserialize, PartialEq)]
    struct Nested {
        id: i64,
        st: OnlyA,
    }
    let batches = client
        .read(&table)
        .selected_fields(["id", "st.a"])
        .row_restriction("id = 3")
        .batches()
        .await
        .unwrap();
    let schema = batches.schema();
    let bigq::arrow::schema::DataType::Struct(sub) =
        schema.field_with_name("st").unwrap().data_type()
    else {
        panic!("{schema:?}")
    };
    assert_eq!(sub.len(), 1);
    let mut nested: Vec<Nested> = Vec::new();
    for b in batches.try_collect().await.unwrap() {
        bigq_codec::de::extend_from_record_batch(&b, &mut nested, 0).unwrap();
    }
    assert_eq!(
        nested,
        vec![Nested {
            id: 3,
            st: OnlyA { a: 6 }
        }]
    );

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

    let err = client.read("ds.no_such_table").batches().await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert!(!err.is_retryable(), "{err:?}");
    let err = client
        .read(&table)
        .selected_fields(["id", "nope"])
        .batches()
        .await
        .unwrap_err();
    assert!(!err.is_retryable(), "{err:?}");
    assert!(err.to_string().contains("nope"), "{err}");
    let err = client
        .read(&table)
        .row_restriction("nope > 1")
        .batches()
        .await
        .unwrap_err();
    assert!(!err.is_retryable(), "{err:?}");
    assert!(err.to_string().contains("nope"), "{err}");

    // An empty result: no streams, no rows.
    let none: Vec<(i64,)> = client
        .read(&table)
        .selected_fields(["id"])
        .row_restriction("id > 1000000")
        .fetch_all()
        .await
        .unwrap();
    assert!(none.is_empty());
    emu.shutdown().await;
}

#[tokio::test]
async fn split_streams_read_by_name() {
    let (emu, client) = start().await;
    let table = table(&client).await;
    let session = client.read(&table).max_streams(1).session().await.unwrap();
    assert_eq!(session.stream_names().len(), 1);
    let original = session.stream_names()[0].clone();
    let (primary, remainder) = session
        .split_stream(&original, 0.25)
        .await
        .unwrap()
        .expect("a 20,000-row stream can be split");
    let read = |name: String| {
        let s = session.read_stream(&name).unwrap();
        async move {
            let batches: Vec<_> = s.try_collect().await.unwrap();
            batches.iter().flat_map(rows_of).collect::<Vec<Row>>()
        }
    };
    let head = read(primary).await;
    let tail = read(remainder).await;
    assert_eq!(head.len(), ROWS as usize / 4);
    let listed: Vec<Row> = client.read_table_data(&table).fetch_all().await.unwrap();
    assert_eq!([head, tail].concat(), listed);
    let err = session
        .split_stream(&format!("{}/streams/nope", session.name()), 0.5)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    emu.shutdown().await;
}

/// A large-ish table read with 4 streams while the emulator cuts a stream mid-way: the
/// client resumes at the offset it reached and every row arrives exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_stream_resumes_exactly_once() {
    const N: usize = 1_000_000;
    let (emu, client) = start().await;
    client
        .query(format!(
            "CREATE TABLE ds.big AS SELECT n AS id, CONCAT('r', CAST(n AS STRING)) AS s \
             FROM UNNEST(GENERATE_ARRAY(0, {})) AS n",
            N - 1
        ))
        .execute()
        .await
        .unwrap();

    let check = |seen: &[u8], sum: u128| {
        assert!(seen.iter().all(|&c| c == 1), "some row missing or repeated");
        assert_eq!(sum, (N as u128) * (N as u128 - 1) / 2);
    };

    // Arrow batches, LZ4: one call cut after 100,000 rows, in the middle of a response.
    emu.faults().cut_next_read_rows(100_003);
    let batches = client
        .read("ds.big")
        .max_streams(4)
        .compression(Compression::Lz4Frame)
        .batches()
        .await
        .unwrap();
    assert_eq!(batches.stream_count(), 4);
    let batches = batches.try_collect().await.unwrap();
    assert_eq!(emu.faults().read_rows_cut(), 1);
    let mut seen = vec![0u8; N];
    let mut sum = 0u128;
    for b in &batches {
        let ids = b
            .column(0)
            .as_any()
            .downcast_ref::<bigq::arrow::array::Int64Array>()
            .unwrap();
        let s = b
            .column(1)
            .as_any()
            .downcast_ref::<bigq::arrow::array::StringArray>()
            .unwrap();
        for (i, id) in ids.values().iter().enumerate() {
            assert_eq!(s.value(i), format!("r{id}"));
            seen[*id as usize] += 1;
            sum += *id as u128;
        }
    }
    check(&seen, sum);

    // Typed rows, ZSTD: two cuts.
    emu.faults().cut_next_read_rows(70_000);
    emu.faults().cut_next_read_rows(1);
    let rows: Vec<(i64, String)> = client
        .read("ds.big")
        .max_streams(4)
        .compression(Compression::Zstd)
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(emu.faults().read_rows_cut(), 3);
    let mut seen = vec![0u8; N];
    let mut sum = 0u128;
    for (id, _) in &rows {
        seen[*id as usize] += 1;
        sum += *id as u128;
    }
    check(&seen, sum);
    emu.shutdown().await;
}

//! bigq's Storage Write client against bigq-emulator's BigQueryWrite service, in-process:
//! rows of every stream type land exactly once (COMMITTED and PENDING, with the connection
//! cut mid-way by the emulator's fault hook) or at least once (`_default`), checked by
//! count and checksum through SQL. Unlike bqemulator, bigq-emulator takes RECORD columns.

use crate::common;

use bigq::Client;
use bigq::admin::Table;
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq::value::{Date, Numeric, Timestamp};
use bigq_emulator::Emulator;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
struct Rec {
    a: i64,
    b: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct Row {
    id: i64,
    name: Option<String>,
    amount: Numeric,
    day: Date,
    ts: Timestamp,
    rec: Rec,
    arr: Vec<i64>,
}

const ROWS: i64 = 30_000;

fn schema() -> TableSchema {
    TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("name", FieldType::String),
        TableFieldSchema::new("amount", FieldType::Numeric),
        TableFieldSchema::new("day", FieldType::Date),
        TableFieldSchema::new("ts", FieldType::Timestamp),
        TableFieldSchema::record(
            "rec",
            vec![
                TableFieldSchema::new("a", FieldType::Int64),
                TableFieldSchema::new("b", FieldType::String),
            ],
        ),
        TableFieldSchema::new("arr", FieldType::Int64).with_mode(FieldMode::Repeated),
    ])
}

fn rows() -> Vec<Row> {
    (1..=ROWS)
        .map(|id| Row {
            id,
            name: (id % 3 != 0).then(|| format!("row {id}")),
            amount: Numeric::from_i64(id),
            day: Date::new(19_000 + (id % 365) as i32),
            ts: Timestamp::new(1_700_000_000_000_000 + id),
            rec: Rec {
                a: 2 * id,
                b: (id % 4 != 0).then(|| "x".to_string()),
            },
            arr: (0..id % 4).collect(),
        })
        .collect()
}

async fn start() -> (Emulator, Client) {
    common::in_process_emulator().await
}

/// Rows, distinct ids, sum of ids, sum of `rec.a`, elements of `arr`.
type Checksum = (i64, i64, i64, i64, i64);

/// The table's [`Checksum`] (sums of an empty table are 0).
async fn checksum(client: &Client, table: &str) -> Checksum {
    type Sums = (i64, i64, Option<i64>, Option<i64>, Option<i64>);
    let rows: Vec<Sums> = client
        .query(format!(
            "SELECT COUNT(*), COUNT(DISTINCT id), SUM(id), SUM(rec.a), \
             SUM(ARRAY_LENGTH(arr)) FROM `{table}`"
        ))
        .fetch_all()
        .await
        .unwrap();
    let (n, d, s, a, l) = rows[0];
    (n, d, s.unwrap_or(0), a.unwrap_or(0), l.unwrap_or(0))
}

fn expected() -> Checksum {
    let sum: i64 = (1..=ROWS).sum();
    let elems: i64 = (1..=ROWS).map(|id| id % 4).sum();
    (ROWS, ROWS, sum, 2 * sum, elems)
}

async fn write_all(client: &Client, table: &str, kind: &str) -> bigq::write::WriteSummary {
    let b = client.write(table).max_request_bytes(256 * 1024);
    let b = match kind {
        "committed" => b.committed(),
        "pending" => b.pending(),
        _ => b.default_stream(),
    };
    let mut writer = b.open().await.unwrap();
    for chunk in rows().chunks(2_500) {
        writer.append(chunk).await.unwrap();
    }
    if kind == "pending" {
        // Nothing is visible before the commit.
        writer.flush().await.unwrap();
        assert_eq!(checksum(client, table).await.0, 0);
        writer.commit().await.unwrap()
    } else {
        writer.finish().await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_and_pending_land_exactly_once_across_a_cut_connection() {
    let (emu, client) = start().await;
    for kind in ["committed", "pending"] {
        let table = format!("ds.{kind}");
        client
            .create_table(Table::new(&table, schema()))
            .await
            .unwrap();
        let fired = emu.faults().append_rows_cut();
        emu.faults().cut_next_append_rows(3);
        let summary = write_all(&client, &table, kind).await;
        assert_eq!(
            emu.faults().append_rows_cut(),
            fired + 1,
            "{kind}: the cut never fired"
        );
        assert!(summary.retries >= 1, "{kind}: {summary:?}");
        assert_eq!(summary.rows_written, ROWS as u64, "{kind}: {summary:?}");
        assert_eq!(checksum(&client, &table).await, expected(), "{kind}");
    }
    emu.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_stream_lands_every_row() {
    let (emu, client) = start().await;
    client
        .create_table(Table::new("ds.dflt", schema()))
        .await
        .unwrap();
    let summary = write_all(&client, "ds.dflt", "default").await;
    assert_eq!(summary.rows_written, ROWS as u64);
    assert!(summary.requests > 1, "{summary:?}");
    assert_eq!(checksum(&client, "ds.dflt").await, expected());
    // A row that does not fit the schema names its index and column; nothing of it is sent.
    let mut writer = client
        .write("ds.dflt")
        .default_stream()
        .open()
        .await
        .unwrap();
    #[derive(Serialize)]
    struct Bad {
        id: Option<i64>,
    }
    let e = writer
        .append(&[Bad { id: Some(1) }, Bad { id: None }])
        .await
        .unwrap_err();
    let c = e.codec_error().expect("an encode error");
    assert_eq!((c.row(), c.column()), (Some(1), Some("id")), "{e}");
    writer.finish().await.unwrap();
    assert_eq!(checksum(&client, "ds.dflt").await.0, ROWS);
    emu.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrow_batches_land_exactly_once_across_a_cut_connection() {
    let (emu, client) = start().await;
    for t in ["ds.src", "ds.arrow"] {
        client.create_table(Table::new(t, schema())).await.unwrap();
    }
    write_all(&client, "ds.src", "committed").await;
    // The rows as Arrow in BigQuery's own shape (NUMERIC as Decimal128(38, 9), DATE as
    // Date32, TIMESTAMP in microseconds UTC, RECORD as Struct, REPEATED as List), read back
    // through Storage Read, then written again as `arrow_rows`.
    let batches: Vec<_> = client
        .read("ds.src")
        .batches()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let fired = emu.faults().append_rows_cut();
    emu.faults().cut_next_append_rows(2);
    let mut writer = client
        .write("ds.arrow")
        .committed()
        .max_request_bytes(256 * 1024)
        .open()
        .await
        .unwrap();
    for b in &batches {
        writer.append_batch(b).await.unwrap();
    }
    let summary = writer.finish().await.unwrap();
    assert_eq!(
        emu.faults().append_rows_cut(),
        fired + 1,
        "the cut never fired"
    );
    assert!(summary.retries >= 1, "{summary:?}");
    assert!(
        summary.requests > batches.len() as u64,
        "large batches are split: {summary:?}"
    );
    assert_eq!(summary.rows_written, ROWS as u64, "{summary:?}");
    assert_eq!(checksum(&client, "ds.arrow").await, expected());

    // A column the table does not have is refused before anything is sent.
    let extra = bigq::arrow::RecordBatch::try_new(
        std::sync::Arc::new(bigq::arrow::schema::Schema::new(
            batches[0]
                .schema()
                .fields()
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    if i == 1 {
                        f.as_ref().clone().with_name("nickname")
                    } else {
                        f.as_ref().clone()
                    }
                })
                .collect::<Vec<_>>(),
        )),
        batches[0].columns().to_vec(),
    )
    .unwrap();
    let mut writer = client
        .write("ds.arrow")
        .default_stream()
        .open()
        .await
        .unwrap();
    let e = writer.append_batch(&extra).await.unwrap_err();
    assert!(e.to_string().contains("\"nickname\""), "{e}");
    assert_eq!(writer.finish().await.unwrap().requests, 0);
    assert_eq!(checksum(&client, "ds.arrow").await, expected());
    emu.shutdown().await;
}

/// RANGE columns through every path: written by the Storage Write client (protobuf from
/// serde), then read back by a query over REST (`[start, end)` cells) and through Storage
/// Read (a struct of `start` and `end`), with an UNBOUNDED end and a NULL range.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_columns_round_trip() {
    use bigq::value::Range;
    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    struct Span {
        id: i64,
        during: Option<Range<Date>>,
    }
    let (emu, client) = start().await;
    client
        .query("CREATE TABLE ds.spans (id INT64, during RANGE<DATE>)")
        .run()
        .await
        .unwrap();
    let rows = vec![
        Span {
            id: 1,
            during: Some(Range::new(Some(Date::new(19_000)), Some(Date::new(19_010)))),
        },
        Span {
            id: 2,
            during: Some(Range::new(Some(Date::new(19_005)), None)),
        },
        Span {
            id: 3,
            during: None,
        },
    ];
    let mut writer = client
        .write("ds.spans")
        .default_stream()
        .open()
        .await
        .unwrap();
    writer.append(&rows).await.unwrap();
    writer.finish().await.unwrap();
    let queried: Vec<Span> = client
        .query("SELECT id, during FROM ds.spans ORDER BY id")
        .run()
        .await
        .unwrap()
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(queried, rows);
    let contains: Vec<(i64,)> = client
        .query(
            "SELECT id FROM ds.spans WHERE RANGE_CONTAINS(during, DATE_FROM_UNIX_DATE(19007)) \
             ORDER BY id",
        )
        .run()
        .await
        .unwrap()
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(contains, [(1,), (2,)]);
    let mut read: Vec<Span> = client
        .read("ds.spans")
        .rows::<Span>()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    read.sort_by_key(|s| s.id);
    assert_eq!(read, rows);
    emu.shutdown().await;
}

/// Rows of `table`'s `id` column, by query.
async fn ids(client: &Client, table: &str) -> Vec<i64> {
    let rows: Vec<(i64,)> = client
        .query(format!("SELECT id FROM `{table}` ORDER BY id"))
        .fetch_all()
        .await
        .unwrap();
    rows.into_iter().map(|(id,)| id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickle_producer_sees_its_rows_without_a_flush() {
    let (emu, client) = start().await;
    client
        .create_table(Table::new("ds.trickle", schema()))
        .await
        .unwrap();
    for kind in ["default", "committed"] {
        let b = client
            .write("ds.trickle")
            .max_batch_delay(std::time::Duration::from_millis(20));
        let b = if kind == "committed" {
            b.committed()
        } else {
            b
        };
        let mut writer = b.open().await.unwrap();
        let base = if kind == "committed" { 100 } else { 0 };
        for i in 0..5 {
            let row = &rows()[(base + i) as usize];
            writer.append(std::slice::from_ref(row)).await.unwrap();
            // Visible within the delay and a round trip; polled with a generous bound, as
            // the machine may be busy.
            let want: Vec<i64> = (1..=base + i + 1)
                .filter(|id| *id <= 5 || *id > 100)
                .collect();
            let mut got = Vec::new();
            for _ in 0..500 {
                got = ids(&client, "ds.trickle").await;
                if got.len() >= want.len() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            assert_eq!(
                got,
                want,
                "{kind}: row {} not written without a flush",
                base + i + 1
            );
        }
        let summary = writer.finish().await.unwrap();
        assert_eq!(
            (summary.rows_written, summary.requests),
            (5, 5),
            "{kind}: {summary:?}"
        );
    }
    emu.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_open_across_alter_table_add_column_writes_the_new_column() {
    let (emu, client) = start().await;
    #[derive(Serialize)]
    struct Before {
        id: i64,
    }
    #[derive(Serialize)]
    struct After {
        id: i64,
        note: String,
    }
    let people = TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
    ]);
    for (kind, table) in [
        ("default", "ds.alter_default"),
        ("committed", "ds.alter_committed"),
    ] {
        client
            .create_table(Table::new(table, people.clone()))
            .await
            .unwrap();
        let b = client.write(table);
        let b = if kind == "committed" {
            b.committed()
        } else {
            b
        };
        let mut writer = b.open().await.unwrap();
        writer.append(&[Before { id: 1 }]).await.unwrap();
        writer.flush().await.unwrap();
        client
            .query(format!("ALTER TABLE `{table}` ADD COLUMN note STRING"))
            .execute()
            .await
            .unwrap();
        // The next response reports the new schema, and the writer takes it.
        writer.append(&[Before { id: 2 }]).await.unwrap();
        writer.flush().await.unwrap();
        assert_eq!(
            writer.summary().schema_updates,
            1,
            "{kind}: updated_schema taken"
        );
        writer
            .append(&[After {
                id: 3,
                note: "new".into(),
            }])
            .await
            .unwrap();
        let summary = writer.finish().await.unwrap();
        assert_eq!(summary.rows_written, 3, "{kind}: {summary:?}");
        let rows: Vec<(i64, Option<String>)> = client
            .query(format!("SELECT id, note FROM `{table}` ORDER BY id"))
            .fetch_all()
            .await
            .unwrap();
        assert_eq!(
            rows,
            [(1, None), (2, None), (3, Some("new".to_string()))],
            "{kind}: every row once, the new column written"
        );
    }
    // A writer that never saw a response since the change fetches the schema for the field
    // its schema lacks.
    client
        .create_table(Table::new("ds.alter_fetch", people.clone()))
        .await
        .unwrap();
    let mut writer = client.write("ds.alter_fetch").open().await.unwrap();
    client
        .query("ALTER TABLE ds.alter_fetch ADD COLUMN note STRING")
        .execute()
        .await
        .unwrap();
    writer
        .append(&[After {
            id: 1,
            note: "fetched".into(),
        }])
        .await
        .unwrap();
    let summary = writer.finish().await.unwrap();
    assert_eq!((summary.rows_written, summary.schema_updates), (1, 1));
    let rows: Vec<(i64, Option<String>)> = client
        .query("SELECT id, note FROM ds.alter_fetch")
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(rows, [(1, Some("fetched".to_string()))]);
    emu.shutdown().await;
}

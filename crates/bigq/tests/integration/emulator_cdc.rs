//! Change data capture through bigq's Writer against bigq-emulator in-process: upserts and
//! deletes merged by the primary key (single and composite), sequence numbers out of order,
//! Arrow batches with the pseudo-columns, and the refusals (a stream other than `_default`,
//! a table without a primary key, bad pseudo-column values).

use std::sync::Arc;

use bigq::Client;
use bigq::ErrorKind;
use bigq::admin::Table;
use bigq::arrow::RecordBatch;
use bigq::arrow::array::{ArrayRef, Int64Array, StringArray};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq::write::{Change, ChangeSequence};
use serde::Serialize;

use crate::common;

#[derive(Debug, Clone, Serialize)]
struct Person {
    id: i64,
    name: Option<String>,
}

fn person(id: i64, name: &str) -> Person {
    Person {
        id,
        name: Some(name.to_string()),
    }
}

#[derive(Debug, Clone, Serialize)]
struct Id {
    id: i64,
}

fn schema() -> TableSchema {
    TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("name", FieldType::String),
    ])
}

/// Creates `ds.<table>` with primary key `id` (or none).
async fn create(client: &Client, table: &str, keyed: bool) {
    let mut t = Table::new(format!("ds.{table}"), schema());
    if keyed {
        t = t.with_primary_key(["id"]);
    }
    client.create_table(t).await.unwrap();
}

async fn people(client: &Client, table: &str) -> Vec<(i64, Option<String>)> {
    client
        .query(format!("SELECT id, name FROM ds.{table} ORDER BY id, name"))
        .fetch_all()
        .await
        .unwrap()
}

fn named(rows: &[(i64, &str)]) -> Vec<(i64, Option<String>)> {
    rows.iter()
        .map(|(i, n)| (*i, Some(n.to_string())))
        .collect()
}

#[tokio::test]
async fn upserts_and_deletes_merge_by_primary_key() {
    let (_emu, client) = common::in_process_emulator().await;
    create(&client, "people", true).await;
    let mut w = client.write("ds.people").open().await.unwrap();
    // Plain rows first: an upsert replaces them, duplicates included.
    w.append(&[person(1, "one"), person(1, "one again"), person(2, "two")])
        .await
        .unwrap();
    w.flush().await.unwrap();
    w.upsert(&person(1, "uno")).await.unwrap();
    w.upsert(&person(3, "three")).await.unwrap();
    w.flush().await.unwrap();
    assert_eq!(
        people(&client, "people").await,
        named(&[(1, "uno"), (2, "two"), (3, "three")])
    );
    // Deletes by key; an absent key is no change; the later change of a key in one
    // request wins.
    w.delete(&Id { id: 2 }).await.unwrap();
    w.delete(&Id { id: 42 }).await.unwrap();
    w.upsert(&person(3, "tres")).await.unwrap();
    w.delete(&Id { id: 3 }).await.unwrap();
    w.upsert(&person(3, "drei")).await.unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.rows_written, 3 + 2 + 5);
    assert_eq!(
        people(&client, "people").await,
        named(&[(1, "uno"), (3, "drei")])
    );
}

#[tokio::test]
async fn the_highest_sequence_number_wins_whatever_the_order() {
    let (_emu, client) = common::in_process_emulator().await;
    create(&client, "seq", true).await;
    // Each change in a request of its own, so that the order of arrival is the order here.
    let mut w = client
        .write("ds.seq")
        .max_batch_rows(1)
        .open()
        .await
        .unwrap();
    w.upsert_with_sequence(&person(1, "v3"), 3).await.unwrap();
    w.upsert_with_sequence(&person(1, "v1"), 1).await.unwrap();
    w.upsert_with_sequence(&person(1, "v2"), 2).await.unwrap();
    // Sections compare as numbers: 2/A is above 2/9 and below 3.
    w.upsert_with_sequence(&person(2, "2/A"), [2, 0xA])
        .await
        .unwrap();
    w.upsert_with_sequence(&person(2, "2/9"), [2, 9])
        .await
        .unwrap();
    w.upsert_with_sequence(
        &person(2, "1/FFFF"),
        "1/ffff".parse::<ChangeSequence>().unwrap(),
    )
    .await
    .unwrap();
    // A delete below the row's number is ignored; one above deletes, and an older upsert
    // arriving after it does not bring the row back.
    w.upsert_with_sequence(&person(3, "five"), 5).await.unwrap();
    w.delete_with_sequence(&Id { id: 3 }, 4).await.unwrap();
    w.upsert_with_sequence(&person(4, "four"), 5).await.unwrap();
    w.delete_with_sequence(&Id { id: 4 }, 6).await.unwrap();
    w.upsert_with_sequence(&person(4, "late"), 5).await.unwrap();
    w.flush().await.unwrap();
    assert_eq!(
        people(&client, "seq").await,
        named(&[(1, "v3"), (2, "2/A"), (3, "five")])
    );
    // An equal number: the later write wins.
    w.append_changes(&[
        Change::upsert(person(1, "v3 again")).with_sequence(3),
        Change::upsert(person(4, "back")).with_sequence(7),
    ])
    .await
    .unwrap();
    w.finish().await.unwrap();
    assert_eq!(
        people(&client, "seq").await,
        named(&[(1, "v3 again"), (2, "2/A"), (3, "five"), (4, "back")])
    );
}

#[tokio::test]
async fn composite_primary_keys() {
    #[derive(Serialize)]
    struct Line {
        order_id: i64,
        line: i64,
        qty: Option<i64>,
    }
    let (_emu, client) = common::in_process_emulator().await;
    let schema = TableSchema::new(vec![
        TableFieldSchema::new("order_id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("line", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("qty", FieldType::Int64),
    ]);
    client
        .create_table(Table::new("ds.lines", schema).with_primary_key(["order_id", "line"]))
        .await
        .unwrap();
    let line = |order_id, line, qty| Line {
        order_id,
        line,
        qty: Some(qty),
    };
    let mut w = client.write("ds.lines").open().await.unwrap();
    w.append_changes(&[
        Change::upsert(line(1, 1, 10)),
        Change::upsert(line(1, 2, 20)),
        Change::upsert(line(2, 1, 30)),
        Change::upsert(line(1, 2, 21)),
        Change::delete(line(2, 1, 0)),
        Change::delete(line(2, 2, 0)),
    ])
    .await
    .unwrap();
    w.finish().await.unwrap();
    let got: Vec<(i64, i64, i64)> = client
        .query("SELECT order_id, line, qty FROM ds.lines ORDER BY 1, 2")
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(got, [(1, 1, 10), (1, 2, 21)]);
}

fn change_batch(
    ids: &[i64],
    names: &[&str],
    kinds: &[Option<&str>],
    seqs: &[Option<&str>],
) -> RecordBatch {
    RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef),
        (
            "name",
            Arc::new(StringArray::from(names.to_vec())) as ArrayRef,
        ),
        (
            "_CHANGE_TYPE",
            Arc::new(StringArray::from(kinds.to_vec())) as ArrayRef,
        ),
        (
            "_CHANGE_SEQUENCE_NUMBER",
            Arc::new(StringArray::from(seqs.to_vec())) as ArrayRef,
        ),
    ])
    .unwrap()
}

#[tokio::test]
async fn arrow_batches_carry_the_change_pseudo_columns() {
    let (_emu, client) = common::in_process_emulator().await;
    create(&client, "arrow", true).await;
    let mut w = client.write("ds.arrow").open().await.unwrap();
    w.append_batch(&change_batch(
        &[1, 2, 1, 3],
        &["a", "b", "old", "c"],
        &[Some("UPSERT"), Some("UPSERT"), Some("UPSERT"), None],
        &[Some("2"), Some("1"), Some("1"), None],
    ))
    .await
    .unwrap();
    w.append_batch(&change_batch(
        &[2, 1],
        &["", ""],
        &[Some("DELETE"), Some("DELETE")],
        &[Some("1/0"), Some("1")],
    ))
    .await
    .unwrap();
    w.flush().await.unwrap();
    assert_eq!(people(&client, "arrow").await, named(&[(1, "a"), (3, "c")]));

    // A _CHANGE_TYPE BigQuery does not know: row errors naming the rows, nothing written.
    let e = w
        .append_batch(&change_batch(
            &[7, 8],
            &["x", "y"],
            &[Some("UPSERT"), Some("MERGE")],
            &[None, None],
        ))
        .await
        .and(w.flush().await)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Api);
    let rows: Vec<u64> = e.row_errors().iter().map(|r| r.row).collect();
    assert_eq!(rows.len(), 1);
    assert!(
        e.row_errors()[0]
            .message
            .contains("not a valid CHANGE_TYPE: MERGE"),
        "{e:?}"
    );
    assert_eq!(people(&client, "arrow").await, named(&[(1, "a"), (3, "c")]));
}

#[tokio::test]
async fn change_rows_are_refused_off_the_default_stream_and_without_a_primary_key() {
    let (_emu, client) = common::in_process_emulator().await;
    create(&client, "keyed", true).await;
    create(&client, "bare", false).await;

    // PENDING, BUFFERED and COMMITTED streams: refused before anything is sent.
    for kind in ["pending", "buffered", "committed"] {
        let b = client.write("ds.keyed");
        let b = match kind {
            "pending" => b.pending(),
            "buffered" => b.buffered(),
            _ => b.committed(),
        };
        let mut w = b.open().await.unwrap();
        let e = w.upsert(&person(1, "a")).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{kind}: {e:?}");
        assert!(e.message().contains("_default stream"), "{kind}: {e}");
        assert!(e.message().contains(&kind.to_uppercase()), "{kind}: {e}");
        let e = w
            .append_batch(&change_batch(&[1], &["a"], &[Some("UPSERT")], &[None]))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{kind}: {e:?}");
        // The writer stays usable for plain rows.
        w.append(&[person(5, "plain")]).await.unwrap();
        w.flush().await.unwrap();
        assert_eq!(w.summary().rows_written, 1);
    }

    // A table without a primary key: BigQuery's INVALID_ARGUMENT, not retried.
    let mut w = client.write("ds.bare").open().await.unwrap();
    w.upsert(&person(1, "a")).await.unwrap();
    let e = w.flush().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Api, "{e:?}");
    assert_eq!(e.status(), Some(400), "{e:?}");
    assert!(e.message().contains("primary key"), "{e}");
    assert!(!e.is_retryable());
    assert!(people(&client, "bare").await.is_empty());
}

//! Client scenarios run against every server the tests have: bigq-emulator in-process
//! (`tests/integration/emulator.rs`) and bqemulator as a second opinion (`tests/integration/bqemulator.rs`).
#![allow(dead_code)]

use bigq::Client;
use bigq::admin::{Dataset, Table};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq::value::{Date, Numeric, Timestamp};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Person {
    id: i64,
    name: String,
    score: Option<f64>,
    born: Option<Date>,
    tags: Vec<String>,
}

fn people_schema() -> TableSchema {
    TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("name", FieldType::String),
        TableFieldSchema::new("score", FieldType::Float64),
        TableFieldSchema::new("born", FieldType::Date),
        TableFieldSchema::new("tags", FieldType::String).with_mode(FieldMode::Repeated),
    ])
}

fn people(n: i64) -> Vec<Person> {
    (0..n)
        .map(|i| Person {
            id: i,
            name: format!("person {i}"),
            score: if i % 3 == 0 {
                None
            } else {
                Some(i as f64 / 4.0)
            },
            born: if i % 5 == 0 {
                None
            } else {
                Date::from_ymd(
                    1990 + (i % 30) as i32,
                    1 + (i % 12) as u32,
                    1 + (i % 28) as u32,
                )
            },
            tags: (0..(i % 3)).map(|t| format!("t{t}")).collect(),
        })
        .collect()
}

pub async fn create_insert_query_typed_and_arrow(client: &Client) {
    let ds = crate::common::dataset_name("people");
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    let again = client.create_dataset(Dataset::new(&ds)).await.unwrap_err();
    assert!(again.is_already_exists(), "{again:?}");
    let listed = client
        .list_datasets(None, false)
        .try_collect()
        .await
        .unwrap();
    let mine = listed.iter().find(|d| d.dataset_id() == ds);
    assert_eq!(
        mine.map(|d| d.project_id()),
        Some(client.project()),
        "{listed:?}"
    );
    let table = format!("{ds}.people");
    let created = client
        .create_table(Table::new(&table, people_schema()))
        .await
        .unwrap();
    assert_eq!(created.table_id(), "people");
    let rows = people(50);
    client.insert_rows(&table, &rows).await.unwrap();

    let got: Vec<Person> = client
        .query(format!(
            "SELECT id, name, score, born, tags FROM `{table}` WHERE id >= @min ORDER BY id"
        ))
        .param("min", 10i64)
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(got, rows[10..].to_vec());

    // Positional parameters, an array parameter, and Arrow output.
    let results = client
        .query(format!(
            "SELECT id FROM `{table}` WHERE id IN UNNEST(?) AND name != ? ORDER BY id"
        ))
        .bind(vec![1i64, 2, 3, 49])
        .bind("person 2")
        .run()
        .await
        .unwrap();
    assert_eq!(results.total_rows(), Some(3));
    let batches = results.into_batches().try_collect().await.unwrap();
    let ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(ids, vec![1, 3, 49]);

    // tabledata.list through the same decoder, paged, with selected fields.
    let listed: Vec<Person> = client
        .read_table_data(&table)
        .page_size(7)
        .fetch_all()
        .await
        .unwrap();
    let mut listed = listed;
    listed.sort_by_key(|p| p.id);
    assert_eq!(listed, rows);
    #[derive(Deserialize, Debug, PartialEq)]
    struct Name {
        name: String,
    }
    let names: Vec<Name> = client
        .read_table_data(&table)
        .selected_fields(["name"])
        .page_size(20)
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(names.len(), 50);

    let listed_tables = client.list_tables(&ds).try_collect().await.unwrap();
    assert!(listed_tables.iter().any(|t| t.table_id() == "people"));
    client.delete_table(&table).await.unwrap();
    let gone = client.get_table(&table).await.unwrap_err();
    assert!(gone.is_not_found(), "{gone:?}");
    client.delete_dataset(&ds, true).await.unwrap();
    assert!(client.get_dataset(&ds).await.unwrap_err().is_not_found());
    let listed = client
        .list_datasets(None, false)
        .try_collect()
        .await
        .unwrap();
    assert!(!listed.iter().any(|d| d.dataset_id() == ds), "{listed:?}");
}

/// A sorted result over several pages comes back in order, through REST pages and, where
/// the client has a Storage endpoint, through Storage Read of the destination table.
pub async fn pages_stream_in_order(client: &Client) {
    for storage in [false, true] {
        let results = client
            .query(
                "SELECT n, CAST(n AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 2500)) AS n ORDER BY n",
            )
            .page_size(300)
            .use_storage_read(storage)
            .run()
            .await
            .unwrap();
        assert_eq!(results.total_rows(), Some(2500));
        if !storage {
            assert!(!results.reads_with_storage_api());
        }
        let mut rows = results.into_rows::<(i64, String)>();
        let mut expected = 1;
        while let Some(r) = rows.next().await {
            let (n, s) = r.unwrap();
            assert_eq!(n, expected, "storage read: {storage}");
            assert_eq!(s, n.to_string());
            expected += 1;
        }
        assert_eq!(expected, 2501);
    }
}

/// An unsorted result larger than its first page: every row exactly once, as typed rows and
/// as Arrow, whichever path the client takes. Returns whether it took Storage Read.
pub async fn large_result_every_row_once(client: &Client) -> bool {
    let sql = "SELECT n, n * n AS sq FROM UNNEST(GENERATE_ARRAY(1, 20000)) AS n";
    let results = client.query(sql).page_size(1000).run().await.unwrap();
    let storage = results.reads_with_storage_api();
    let mut rows: Vec<(i64, i64)> = results.fetch_all().await.unwrap();
    rows.sort();
    assert_eq!(rows.len(), 20_000);
    assert!(
        rows.iter()
            .enumerate()
            .all(|(i, (n, sq))| *n == i as i64 + 1 && *sq == n * n)
    );
    let batches = client.query(sql).page_size(1000).batches().await.unwrap();
    assert_eq!(batches.is_storage_read(), storage);
    let batches = batches.try_collect().await.unwrap();
    let total: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(total, 20_000);
    storage
}

pub async fn scalar_types_and_struct_params(client: &Client) {
    #[derive(Deserialize, Debug)]
    struct Row {
        i: i64,
        f: f64,
        b: bool,
        s: String,
        n: Numeric,
        d: Date,
        ts: Timestamp,
        arr: Vec<i64>,
        st: Inner,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct Inner {
        a: i64,
        b: String,
    }
    let rows: Vec<Row> = client
        .query(
            "SELECT @i AS i, @f AS f, @b AS b, @s AS s, @n AS n, @d AS d, @ts AS ts, @arr AS arr, \
             STRUCT(@st.a AS a, @st.b AS b) AS st",
        )
        .param("i", -5i64)
        .param("f", 2.5f64)
        .param("b", true)
        .param("s", "héllo")
        .param("n", "12.25".parse::<Numeric>().unwrap())
        .param("d", Date::from_ymd(2024, 2, 29).unwrap())
        .param(
            "ts",
            "2024-01-02T03:04:05.123456Z".parse::<Timestamp>().unwrap(),
        )
        .param("arr", vec![3i64, 1, 2])
        .param(
            "st",
            bigq::query::Param::structure([("a", 7i64.into()), ("b", "x".into())]),
        )
        .fetch_all()
        .await
        .unwrap();
    let r = &rows[0];
    assert_eq!((r.i, r.f, r.b, r.s.as_str()), (-5, 2.5, true, "héllo"));
    assert_eq!(r.n.to_string(), "12.25");
    assert_eq!(r.d.to_string(), "2024-02-29");
    assert_eq!(r.ts.to_string(), "2024-01-02T03:04:05.123456Z");
    assert_eq!(r.arr, vec![3, 1, 2]);
    assert_eq!(
        r.st,
        Inner {
            a: 7,
            b: "x".into()
        }
    );
}

pub async fn errors_are_typed(client: &Client) {
    let e = client.query("SELEC 1").run().await.unwrap_err();
    assert!(e.is_invalid_query(), "{e:?}");
    let e = client
        .query("SELECT * FROM `no_such_dataset.t`")
        .run()
        .await
        .unwrap_err();
    assert!(e.is_not_found() || e.is_invalid_query(), "{e:?}");
    let e = client.get_table("no_such_dataset.t").await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(e.status(), Some(404));

    // NULL into a non-Option field names the column and the row.
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct NotNull {
        x: i64,
    }
    let e = client
        .query("SELECT IF(n = 3, NULL, n) AS x FROM UNNEST(GENERATE_ARRAY(1, 5)) AS n ORDER BY n")
        .fetch_all::<NotNull>()
        .await
        .unwrap_err();
    let c = e.codec_error().expect("a decode error");
    assert_eq!(c.column(), Some("x"));
    assert_eq!(c.row(), Some(2));
}

pub async fn dml_and_dry_run_statistics(client: &Client) {
    let ds = crate::common::dataset_name("dml");
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    client
        .query(format!(
            "CREATE TABLE `{ds}.t` AS SELECT n FROM UNNEST(GENERATE_ARRAY(1, 10)) AS n"
        ))
        .execute()
        .await
        .unwrap();
    let stats = client
        .query(format!("DELETE FROM `{ds}.t` WHERE n > 7"))
        .execute()
        .await
        .unwrap();
    assert_eq!(stats.num_dml_affected_rows, Some(3));
    let count: Vec<(i64,)> = client
        .query(format!("SELECT COUNT(*) FROM `{ds}.t`"))
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(count, vec![(7,)]);
    let dry = client
        .query(format!("SELECT n FROM `{ds}.t`"))
        .dry_run(true)
        .run()
        .await
        .unwrap();
    assert_eq!(dry.schema().fields[0].name, "n");
    assert!(dry.into_batches().try_collect().await.unwrap().is_empty());
    client.delete_dataset(&ds, true).await.unwrap();
}

/// Not run against bqemulator: it ignores `destinationTable` in query jobs (the result goes
/// to an anonymous table, which `jobs.get` names).
pub async fn query_into_destination_table_and_get_job(client: &Client) {
    use bigq::query::WriteDisposition;
    let ds = crate::common::dataset_name("dest");
    client.create_dataset(Dataset::new(&ds)).await.unwrap();
    let sql = "SELECT n, n * 2 AS twice FROM UNNEST(GENERATE_ARRAY(1, 5)) AS n";
    let results = client
        .query(sql)
        .destination_table(format!("{ds}.out"))
        .run()
        .await
        .unwrap();
    let job = results.job_reference().expect("a query job").clone();
    let mut got: Vec<(i64, i64)> = results.fetch_all().await.unwrap();
    got.sort();
    assert_eq!(got, (1..=5).map(|n| (n, 2 * n)).collect::<Vec<_>>());

    // The job says where it wrote; the table holds the rows.
    let found = client.get_job(&job).await.unwrap();
    assert!(found.is_done(), "{found:?}");
    assert_eq!(found.error(), None);
    let dest = found.destination_table().expect("a destination table");
    assert_eq!(
        (dest.dataset.as_str(), dest.table.as_str()),
        (ds.as_str(), "out")
    );
    let mut stored: Vec<(i64, i64)> = client
        .read_table_data(format!("{ds}.out"))
        .fetch_all()
        .await
        .unwrap();
    stored.sort();
    assert_eq!(stored, got);

    // WRITE_EMPTY (the default) refuses a table with rows; WRITE_APPEND adds to it.
    let again = client
        .query(sql)
        .destination_table(format!("{ds}.out"))
        .run()
        .await;
    assert!(again.is_err(), "a second write into a full table must fail");
    client
        .query(sql)
        .destination_table(format!("{ds}.out"))
        .write_disposition(WriteDisposition::Append)
        .execute()
        .await
        .unwrap();
    let count: Vec<(i64,)> = client
        .query(format!("SELECT COUNT(*) FROM `{ds}.out`"))
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(count, vec![(10,)]);
    let missing = client
        .get_job(&bigq::query::JobReference {
            project_id: client.project().to_string(),
            job_id: "no_such_job".into(),
            location: None,
        })
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing:?}");
    client.delete_dataset(&ds, true).await.unwrap();
}

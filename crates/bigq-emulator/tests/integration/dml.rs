//! DML whose WHERE, FROM or USING reads other rows: subqueries, correlated EXISTS,
//! UPDATE .. FROM and MERGE, with the counts and rows BigQuery gives.

use serde_json::{Value, json};

use crate::common::{Rest, emulator};

/// The rows of `sql` as strings (NULL as `None`).
async fn rows(api: &Rest, sql: &str) -> Vec<Vec<Option<String>>> {
    let v = api.query(sql).await;
    v["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r["f"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c["v"].as_str().map(str::to_string))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// `ds.t` (id, v): (1, 10) .. (5, 50); `ds.s` (k, w): (2, 200), (4, 400), (NULL, 0).
async fn setup() -> (bigq_emulator::Emulator, Rest) {
    let emu = emulator().await;
    let api = Rest::new(&emu);
    api.dataset("ds").await;
    api.query("CREATE TABLE ds.t (id INT64, v INT64)").await;
    api.query("INSERT INTO ds.t VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)")
        .await;
    api.query("CREATE TABLE ds.s (k INT64, w INT64)").await;
    api.query("INSERT INTO ds.s VALUES (2, 200), (4, 400), (NULL, 0)")
        .await;
    (emu, api)
}

fn stats(v: &Value) -> (String, Value) {
    (
        v["numDmlAffectedRows"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        v["dmlStats"].clone(),
    )
}

async fn error_of(api: &Rest, sql: &str) -> String {
    let v = api
        .post("/queries", json!({"query": sql, "useLegacySql": false}))
        .await;
    v["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{sql} did not fail: {v}"))
        .to_string()
}

async fn ids(api: &Rest) -> Vec<Vec<Option<String>>> {
    rows(api, "SELECT id, v FROM ds.t ORDER BY id").await
}

#[tokio::test]
async fn delete_where_in_subquery_deletes_only_the_matches() {
    let (_emu, api) = setup().await;
    let v = api
        .query("DELETE FROM ds.t WHERE id IN (SELECT k FROM ds.s)")
        .await;
    assert_eq!(stats(&v).0, "2", "{v}");
    assert_eq!(v["dmlStats"]["deletedRowCount"], "2");
    assert_eq!(
        ids(&api).await,
        vec![
            vec![s("1"), s("10")],
            vec![s("3"), s("30")],
            vec![s("5"), s("50")]
        ]
    );
}

#[tokio::test]
async fn delete_not_in_a_set_with_null_deletes_nothing() {
    // `id NOT IN (2, 4, NULL)` is FALSE or NULL for every id.
    let (_emu, api) = setup().await;
    let v = api
        .query("DELETE FROM ds.t WHERE id NOT IN (SELECT k FROM ds.s)")
        .await;
    assert_eq!(stats(&v).0, "0", "{v}");
    assert_eq!(ids(&api).await.len(), 5);
}

#[tokio::test]
async fn delete_correlated_exists_through_the_target_alias() {
    let (_emu, api) = setup().await;
    let v = api
        .query("DELETE FROM ds.t AS o WHERE EXISTS (SELECT 1 FROM ds.s WHERE s.k = o.id AND s.w > 300)")
        .await;
    assert_eq!(stats(&v).0, "1", "{v}");
    let left = ids(&api).await;
    assert_eq!(left.len(), 4);
    assert!(!left.contains(&vec![s("4"), s("40")]));
}

#[tokio::test]
async fn delete_comparing_with_an_aggregate_of_the_target_itself() {
    let (_emu, api) = setup().await;
    let v = api
        .query("DELETE FROM ds.t WHERE v > (SELECT AVG(v) FROM ds.t)")
        .await;
    assert_eq!(stats(&v).0, "2", "{v}");
    assert_eq!(ids(&api).await.len(), 3);
}

#[tokio::test]
async fn update_where_in_subquery_updates_only_the_matches() {
    let (_emu, api) = setup().await;
    let v = api
        .query("UPDATE ds.t SET v = v * 10 WHERE id IN (SELECT k FROM ds.s)")
        .await;
    assert_eq!(stats(&v).0, "2", "{v}");
    assert_eq!(v["dmlStats"]["updatedRowCount"], "2");
    assert_eq!(
        ids(&api).await,
        vec![
            vec![s("1"), s("10")],
            vec![s("2"), s("200")],
            vec![s("3"), s("30")],
            vec![s("4"), s("400")],
            vec![s("5"), s("50")]
        ]
    );
}

#[tokio::test]
async fn update_from_takes_the_joined_row_and_leaves_the_others() {
    let (_emu, api) = setup().await;
    let v = api
        .query("UPDATE ds.t SET v = s.w + t.id FROM ds.s WHERE t.id = s.k")
        .await;
    assert_eq!(stats(&v).0, "2", "{v}");
    assert_eq!(
        ids(&api).await,
        vec![
            vec![s("1"), s("10")],
            vec![s("2"), s("202")],
            vec![s("3"), s("30")],
            vec![s("4"), s("404")],
            vec![s("5"), s("50")]
        ]
    );
}

#[tokio::test]
async fn update_from_a_subquery_with_an_alias() {
    let (_emu, api) = setup().await;
    let v = api
        .query("UPDATE ds.t AS o SET v = 0 FROM (SELECT k FROM ds.s WHERE w > 300) AS x WHERE x.k = o.id")
        .await;
    assert_eq!(stats(&v).0, "1", "{v}");
    assert!(ids(&api).await.contains(&vec![s("4"), s("0")]));
}

#[tokio::test]
async fn update_from_two_matching_rows_is_an_error_and_changes_nothing() {
    let (_emu, api) = setup().await;
    api.query("INSERT INTO ds.s VALUES (2, 201)").await;
    let e = error_of(&api, "UPDATE ds.t SET v = s.w FROM ds.s WHERE t.id = s.k").await;
    assert!(
        e.contains("UPDATE/MERGE must match at most one source row for each target row"),
        "{e}"
    );
    assert_eq!(ids(&api).await[1], vec![s("2"), s("20")]);
}

#[tokio::test]
async fn merge_clauses_apply_first_match_per_row() {
    let (_emu, api) = setup().await;
    api.query("INSERT INTO ds.s VALUES (6, 600), (7, 5)").await;
    let v = api
        .query(
            "MERGE ds.t T USING (SELECT k AS id, w AS v FROM ds.s) S ON T.id = S.id \
             WHEN MATCHED AND S.v > 300 THEN DELETE \
             WHEN MATCHED THEN UPDATE SET v = S.v \
             WHEN NOT MATCHED AND S.v > 100 THEN INSERT (id, v) VALUES (S.id, S.v * 2) \
             WHEN NOT MATCHED THEN INSERT ROW \
             WHEN NOT MATCHED BY SOURCE AND T.v >= 30 THEN UPDATE SET v = T.v + 1",
        )
        .await;
    let (n, st) = stats(&v);
    assert_eq!(st["deletedRowCount"], "1", "{v}");
    assert_eq!(st["updatedRowCount"], "3", "{v}");
    assert_eq!(st["insertedRowCount"], "3", "{v}");
    assert_eq!(n, "7");
    assert_eq!(
        rows(&api, "SELECT id, v FROM ds.t ORDER BY id").await,
        vec![
            vec![None, s("0")],
            vec![s("1"), s("10")],
            vec![s("2"), s("200")],
            vec![s("3"), s("31")],
            vec![s("5"), s("51")],
            vec![s("6"), s("1200")],
            vec![s("7"), s("5")]
        ]
    );
}

#[tokio::test]
async fn merge_not_matched_by_source_delete_and_null_keys() {
    // A NULL key matches nothing: the target's NULL row is "not matched by source" and the
    // source's is inserted.
    let (_emu, api) = setup().await;
    api.query("INSERT INTO ds.t VALUES (NULL, 99)").await;
    let v = api
        .query(
            "MERGE ds.t USING ds.s ON t.id = s.k \
             WHEN NOT MATCHED BY SOURCE THEN DELETE \
             WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.k, s.w)",
        )
        .await;
    let (n, st) = stats(&v);
    assert_eq!(st["deletedRowCount"], "4", "{v}");
    assert_eq!(st["insertedRowCount"], "1", "{v}");
    assert_eq!(n, "5");
    assert_eq!(
        ids(&api).await,
        vec![
            vec![None, s("0")],
            vec![s("2"), s("20")],
            vec![s("4"), s("40")]
        ]
    );
}

#[tokio::test]
async fn merge_two_source_rows_for_one_target_row_is_an_error() {
    let (_emu, api) = setup().await;
    api.query("INSERT INTO ds.s VALUES (2, 201)").await;
    let e = error_of(
        &api,
        "MERGE ds.t USING ds.s ON t.id = s.k WHEN MATCHED THEN UPDATE SET v = s.w",
    )
    .await;
    assert!(
        e.contains("UPDATE/MERGE must match at most one source row for each target row"),
        "{e}"
    );
    assert_eq!(ids(&api).await[1], vec![s("2"), s("20")]);
    // With no clause for matched rows nothing is changed twice: no error.
    let v = api
        .query("MERGE ds.t USING ds.s ON t.id = s.k WHEN NOT MATCHED THEN INSERT (id) VALUES (s.k)")
        .await;
    assert_eq!(v["dmlStats"]["insertedRowCount"], "1", "{v}");
}

#[tokio::test]
async fn bigquery_checks_come_first() {
    let (_emu, api) = setup().await;
    let e = error_of(&api, "DELETE FROM ds.t").await;
    assert!(e.contains("DELETE must have a WHERE clause"), "{e}");
    let e = error_of(&api, "UPDATE ds.t SET v = 1").await;
    assert!(e.contains("UPDATE must have a WHERE clause"), "{e}");
    let e = error_of(&api, "UPDATE ds.t SET nope = 1 WHERE TRUE").await;
    assert!(e.contains("Unrecognized name: nope"), "{e}");
    let e = error_of(
        &api,
        "MERGE ds.t USING ds.s ON t.id = s.k WHEN MATCHED THEN INSERT (id) VALUES (1)",
    )
    .await;
    assert!(
        e.contains("INSERT is not allowed in a MATCHED merge clause"),
        "{e}"
    );
    api.query("CREATE VIEW ds.vw AS SELECT id FROM ds.t").await;
    let e = error_of(&api, "DELETE FROM ds.vw WHERE TRUE").await;
    assert!(e.contains("view"), "{e}");
    assert_eq!(ids(&api).await.len(), 5);
}

#[tokio::test]
async fn dry_runs_change_nothing() {
    let (_emu, api) = setup().await;
    for sql in [
        "DELETE FROM ds.t WHERE id IN (SELECT k FROM ds.s)",
        "UPDATE ds.t SET v = 0 WHERE TRUE",
        "MERGE ds.t USING ds.s ON t.id = s.k WHEN MATCHED THEN DELETE",
        "TRUNCATE TABLE ds.t",
    ] {
        let v = api
            .post(
                "/queries",
                json!({"query": sql, "useLegacySql": false, "dryRun": true}),
            )
            .await;
        assert!(v.get("error").is_none(), "{sql}: {v}");
    }
    assert_eq!(ids(&api).await.len(), 5);
    let v = api.query("TRUNCATE TABLE ds.t").await;
    assert_eq!(v["dmlStats"]["deletedRowCount"], "5", "{v}");
    assert!(ids(&api).await.is_empty());
}

#[tokio::test]
async fn insert_takes_coercible_values_and_names_the_rest() {
    let (_emu, api) = setup().await;
    api.query(
        "CREATE TABLE ds.typed (n NUMERIC, f FLOAT64, d DATE, dt DATETIME, ts TIMESTAMP, \
         s STRUCT<a INT64, b STRING>, r INT64 NOT NULL)",
    )
    .await;
    // Literals coerce further than expressions: a STRING literal to DATE and TIMESTAMP, a
    // floating-point literal to NUMERIC; INT64 goes to NUMERIC and FLOAT64, DATE to
    // DATETIME; a STRUCT goes by position.
    api.query(
        "INSERT INTO ds.typed VALUES (1.25, 2, '2024-01-02', DATE '2024-01-03', \
         '2024-01-04 05:06:07+00', (1, 'x'), 1)",
    )
    .await;
    api.query(
        "INSERT INTO ds.typed (n, f, dt, r) SELECT id AS a, id AS b, DATE '2024-02-01', id AS c FROM ds.t \
         WHERE id = 2",
    )
    .await;
    assert_eq!(
        rows(
            &api,
            "SELECT CAST(n AS STRING), f, d, dt, ts, s.a, s.b, r FROM ds.typed ORDER BY r"
        )
        .await,
        vec![
            vec![
                s("1.25"),
                s("2.0"),
                s("2024-01-02"),
                s("2024-01-03T00:00:00"),
                s("1.704344767E9"),
                s("1"),
                s("x"),
                s("1")
            ],
            vec![
                s("2"),
                s("2.0"),
                None,
                s("2024-02-01T00:00:00"),
                None,
                None,
                None,
                s("2")
            ],
        ]
    );
    for (sql, message) in [
        (
            "INSERT INTO ds.t (id) SELECT 'x'",
            "Query column 1 has type STRING which cannot be inserted into column id, which has type INT64",
        ),
        (
            "INSERT INTO ds.t (id, v) SELECT 1, 2.5",
            "Query column 2 has type FLOAT64 which cannot be inserted into column v, which has type INT64",
        ),
        (
            "INSERT INTO ds.t VALUES (1.5, 1)",
            "Value has type FLOAT64 which cannot be inserted into column id, which has type INT64",
        ),
        (
            "INSERT INTO ds.typed (d, r) SELECT CONCAT('2024-01-0', '1'), 1",
            "Query column 1 has type STRING which cannot be inserted into column d, which has type DATE",
        ),
        (
            "INSERT INTO ds.typed (dt, r) VALUES (TIMESTAMP '2024-01-01', 1)",
            "Value has type TIMESTAMP which cannot be inserted into column dt, which has type DATETIME",
        ),
        (
            "INSERT INTO ds.t VALUES (1)",
            "Inserted row has wrong column count; Has 1, expected 2",
        ),
        (
            "INSERT INTO ds.t (id) SELECT 1, 2",
            "Inserted row has wrong column count; Has 2, expected 1",
        ),
        (
            "INSERT INTO ds.typed (f) VALUES (1)",
            "Required field r cannot be null",
        ),
        (
            "INSERT INTO ds.t (nope) VALUES (1)",
            "Column nope is not present in table",
        ),
    ] {
        let e = error_of(&api, sql).await;
        assert!(e.contains(message), "{sql}: {e}");
    }
    // Nothing a failed INSERT wrote is left behind.
    assert_eq!(ids(&api).await.len(), 5);
    assert_eq!(
        rows(&api, "SELECT COUNT(*) FROM ds.typed").await,
        vec![vec![s("2")]]
    );
}

#[tokio::test]
async fn concurrent_dml_loses_no_row() {
    let (_emu, api) = setup().await;
    // INSERTs append to the table as it is when each commits; an UPDATE or DELETE whose
    // table changed while it ran is run again on the new rows.
    let mut tasks = Vec::new();
    for i in 0..12 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            let sql = match i % 3 {
                0 => "UPDATE ds.t SET v = v + 1 WHERE id <= 5".to_string(),
                _ => format!("INSERT INTO ds.t VALUES ({}, 0), ({}, 0)", 100 + i, 200 + i),
            };
            api.query(&sql).await;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(
        rows(&api, "SELECT COUNT(*), SUM(IF(id <= 5, v, 0)) FROM ds.t").await,
        // 5 rows and 8 INSERTs of 2; the 4 UPDATEs each added 1 to the first five rows.
        vec![vec![s("21"), s(&(150 + 4 * 5).to_string())]]
    );
}

/// The recorded BigQuery DML fixtures (`sql/rest_crud/dml_*`): each one's set-up and
/// statements run as a script, and the final query's rows compared with BigQuery's.
#[tokio::test]
async fn recorded_dml_fixtures_give_bigquerys_rows() {
    let root = match std::env::var_os("BIGQ_RECORDINGS") {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/bigquery-recordings"),
    }
    .join("sql/rest_crud");
    let Ok(dirs) = std::fs::read_dir(&root) else {
        eprintln!("no recordings at {}: skipped", root.display());
        return;
    };
    let mut fixtures = dirs
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("dml_"))
        })
        .collect::<Vec<_>>();
    fixtures.sort();
    assert!(!fixtures.is_empty());
    let mut failures = Vec::new();
    for dir in &fixtures {
        let emu = emulator().await;
        let api = Rest::new(&emu);
        api.dataset("ds").await;
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f))
                .map(|s| s.replace("${DATASET}", "ds"))
                .ok()
        };
        let expected: Value =
            serde_json::from_str(&read("expected.json").expect("expected.json")).unwrap();
        if let Some(setup) = read("setup.sql") {
            api.query(&setup).await;
        }
        let sql = read("query.sql").expect("query.sql");
        let v = api
            .post("/queries", json!({"query": sql, "useLegacySql": false}))
            .await;
        if v.get("error").is_some() {
            failures.push(format!("{}: {}", dir.display(), v["error"]));
            continue;
        }
        let names = expected["schema"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>();
        let want = expected["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                names
                    .iter()
                    .map(|n| match &r[n] {
                        Value::Null => None,
                        Value::String(s) => Some(s.clone()),
                        // ARRAY and STRUCT cells are compared by the REST tests.
                        Value::Array(_) | Value::Object(_) => Some("(nested)".to_string()),
                        other => Some(other.to_string()),
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();
        let got = v["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        r["f"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|c| match &c["v"] {
                                Value::Null => None,
                                Value::String(s) => Some(s.clone()),
                                _ => Some("(nested)".to_string()),
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        if got != want {
            failures.push(format!("{}: got {got:?}, BigQuery {want:?}", dir.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

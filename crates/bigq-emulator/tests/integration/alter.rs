//! ALTER TABLE in each form BigQuery documents, `CREATE SNAPSHOT TABLE .. CLONE`, and the
//! schema changes `tables.patch` accepts and refuses.

use bigq_emulator::Emulator;
use serde_json::{Value, json};

use crate::common::{Rest, cells, emulator};

async fn error_of(rest: &Rest, sql: &str) -> String {
    let v = rest
        .post("/queries", json!({"query": sql, "useLegacySql": false}))
        .await;
    v["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{sql} should fail: {v}"))
        .to_string()
}

async fn fields(rest: &Rest, table: &str) -> Vec<Value> {
    let t = rest.get(&format!("/datasets/d/tables/{table}")).await;
    t["schema"]["fields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

async fn patch(emu: &Emulator, table: &str, body: Value) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .patch(format!(
            "{}/bigquery/v2/projects/p/datasets/d/tables/{table}",
            emu.rest_endpoint()
        ))
        .json(&body)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

/// SET DATA TYPE widens INT64 to NUMERIC and FLOAT64 keeping the values, and refuses what
/// BigQuery's coercions do not allow, naming both types.
#[tokio::test]
async fn alter_column_set_data_type_widens_and_refuses() {
    let emu = emulator().await;
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    rest.query("CREATE TABLE d.t (a INT64, b INT64, s STRING)")
        .await;
    rest.query("INSERT INTO d.t VALUES (7, 2, 'x')").await;
    rest.query("ALTER TABLE d.t ALTER COLUMN a SET DATA TYPE NUMERIC, ALTER COLUMN b SET DATA TYPE FLOAT64")
        .await;
    let f = fields(&rest, "t").await;
    assert_eq!(
        (f[0]["type"].as_str(), f[1]["type"].as_str()),
        (Some("NUMERIC"), Some("FLOAT"))
    );
    let v = rest.query("SELECT a / 2, b / 4 FROM d.t").await;
    assert_eq!(cells(&v), [[json!("3.5"), json!("0.5")]]);
    let e = error_of(&rest, "ALTER TABLE d.t ALTER COLUMN s SET DATA TYPE INT64").await;
    assert_eq!(
        e,
        "ALTER TABLE ALTER COLUMN SET DATA TYPE requires that the existing column type (STRING) is assignable to the new type (INT64)"
    );
    let e = error_of(&rest, "ALTER TABLE d.t ALTER COLUMN a SET DATA TYPE INT64").await;
    assert!(
        e.contains("(NUMERIC) is assignable to the new type (INT64)"),
        "{e}"
    );
    let e = error_of(
        &rest,
        "ALTER TABLE d.t ALTER COLUMN nope SET DATA TYPE INT64",
    )
    .await;
    assert_eq!(e, "Column not found: nope");
}

/// DROP NOT NULL relaxes a REQUIRED column (NULLs may then be inserted); SET NOT NULL is
/// refused; SET DEFAULT and DROP DEFAULT set and clear the default value expression.
#[tokio::test]
async fn alter_column_drop_not_null_and_defaults() {
    let emu = emulator().await;
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    rest.query("CREATE TABLE d.t (id INT64 NOT NULL, n STRING)")
        .await;
    rest.query("INSERT INTO d.t VALUES (1, 'a')").await;
    rest.query("ALTER TABLE d.t ALTER COLUMN id DROP NOT NULL")
        .await;
    assert_eq!(fields(&rest, "t").await[0].get("mode"), None);
    rest.query("INSERT INTO d.t VALUES (NULL, 'b')").await;
    let v = rest
        .query("SELECT COUNT(*) FROM d.t WHERE id IS NULL")
        .await;
    assert_eq!(cells(&v), [[json!("1")]]);
    let e = error_of(&rest, "ALTER TABLE d.t ALTER COLUMN n SET NOT NULL").await;
    assert!(e.contains("column n cannot be made REQUIRED"), "{e}");
    rest.query("ALTER TABLE d.t ALTER COLUMN n SET DEFAULT 'none'")
        .await;
    assert_eq!(
        fields(&rest, "t").await[1]["defaultValueExpression"],
        "'none'"
    );
    rest.query("ALTER TABLE d.t ALTER COLUMN n DROP DEFAULT")
        .await;
    assert_eq!(
        fields(&rest, "t").await[1].get("defaultValueExpression"),
        None
    );
}

/// RENAME COLUMN keeps the values under the new name; a clash or a missing column is refused.
/// ADD COLUMN IF NOT EXISTS skips a column that is there.
#[tokio::test]
async fn rename_column_and_add_column_if_not_exists() {
    let emu = emulator().await;
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    rest.query("CREATE TABLE d.t (a INT64, b STRING)").await;
    rest.query("INSERT INTO d.t VALUES (1, 'x')").await;
    rest.query("ALTER TABLE d.t RENAME COLUMN a TO c").await;
    let v = rest.query("SELECT c, b FROM d.t").await;
    assert_eq!(cells(&v), [[json!("1"), json!("x")]]);
    assert_eq!(
        error_of(&rest, "ALTER TABLE d.t RENAME COLUMN c TO b").await,
        "Column already exists: b"
    );
    assert_eq!(
        error_of(&rest, "ALTER TABLE d.t RENAME COLUMN zz TO y").await,
        "Column not found: zz"
    );
    rest.query("ALTER TABLE d.t ADD COLUMN IF NOT EXISTS b INT64, ADD COLUMN IF NOT EXISTS e BOOL")
        .await;
    let f = fields(&rest, "t").await;
    let names: Vec<&str> = f.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["c", "b", "e"]);
    assert_eq!(f[1]["type"], "STRING", "the existing b is left as it was");
    assert_eq!(
        error_of(&rest, "ALTER TABLE d.t ADD COLUMN e BOOL").await,
        "Column already exists: e"
    );
}

/// SET OPTIONS sets and clears the description, friendly name and labels; an unknown option
/// is an error naming it.
#[tokio::test]
async fn alter_table_set_options() {
    let emu = emulator().await;
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    rest.query("CREATE TABLE d.t (a INT64)").await;
    rest.query(
        "ALTER TABLE d.t SET OPTIONS (description = 'all', friendly_name = 'T', labels = [('team', 'x'), ('env', 'dev')])",
    )
    .await;
    let t = rest.get("/datasets/d/tables/t").await;
    assert_eq!(t["description"], "all");
    assert_eq!(t["friendlyName"], "T");
    assert_eq!(t["labels"], json!({"team": "x", "env": "dev"}));
    rest.query("ALTER TABLE d.t SET OPTIONS (description = NULL, labels = NULL)")
        .await;
    let t = rest.get("/datasets/d/tables/t").await;
    assert_eq!(t.get("description"), None, "{t}");
    assert_eq!(t.get("labels"), None, "{t}");
    let e = error_of(&rest, "ALTER TABLE d.t SET OPTIONS (kms_key_name = 'k')").await;
    assert!(e.contains("kms_key_name"), "{e}");
}

/// CREATE SNAPSHOT TABLE copies the rows and records its base; the base may then change.
#[tokio::test]
async fn create_snapshot_table_clone() {
    let emu = emulator().await;
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    rest.query("CREATE TABLE d.t AS SELECT 1 AS a UNION ALL SELECT 2")
        .await;
    rest.query("CREATE SNAPSHOT TABLE d.snap CLONE d.t").await;
    rest.query("DELETE FROM d.t WHERE TRUE").await;
    let v = rest.query("SELECT COUNT(*) FROM d.snap").await;
    assert_eq!(cells(&v), [[json!("2")]]);
    let s = rest.get("/datasets/d/tables/snap").await;
    assert_eq!(
        s["snapshotDefinition"]["baseTableReference"]["tableId"], "t",
        "{s}"
    );
    let e = error_of(&rest, "CREATE SNAPSHOT TABLE d.snap CLONE d.t").await;
    assert!(e.starts_with("Already Exists"), "{e}");
}

/// tables.patch adds nested columns and relaxes REQUIRED ones, keeping the rows, and refuses
/// a type change, a tightened mode, a REQUIRED addition and a missing column with BigQuery's
/// messages, each naming the column.
#[tokio::test]
async fn tables_patch_grows_nested_and_refuses_with_bigquery_messages() {
    let emu = emulator().await;
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    rest.query("CREATE TABLE d.t (id INT64 NOT NULL, addr STRUCT<city STRING>)")
        .await;
    rest.query("INSERT INTO d.t VALUES (1, STRUCT('Oslo'))")
        .await;
    let (status, t) = patch(
        &emu,
        "t",
        json!({"schema": {"fields": [
            {"name": "id", "type": "INTEGER", "mode": "NULLABLE"},
            {"name": "addr", "type": "RECORD", "fields": [
                {"name": "city", "type": "STRING"}, {"name": "zip", "type": "STRING"}]},
            {"name": "tags", "type": "STRING", "mode": "REPEATED"}]}}),
    )
    .await;
    assert_eq!(status, 200, "{t}");
    let v = rest.query("SELECT id, addr.city, addr.zip FROM d.t").await;
    assert_eq!(cells(&v), [[json!("1"), json!("Oslo"), Value::Null]]);
    rest.query("INSERT INTO d.t (id) VALUES (NULL)").await;
    let refused = [
        (
            json!([{"name": "id", "type": "STRING"}]),
            "Field id has changed type from INTEGER to STRING",
        ),
        (
            json!([{"name": "id", "type": "INTEGER", "mode": "REQUIRED"}]),
            "Field id has changed mode from NULLABLE to REQUIRED",
        ),
        (
            json!([{"name": "id", "type": "INTEGER"},
                   {"name": "addr", "type": "RECORD", "fields": [
                       {"name": "city", "type": "INTEGER"}, {"name": "zip", "type": "STRING"}]}]),
            "Field addr.city has changed type from STRING to INTEGER",
        ),
        (
            json!([{"name": "id", "type": "INTEGER"},
                   {"name": "addr", "type": "RECORD", "fields": [
                       {"name": "city", "type": "STRING"}, {"name": "zip", "type": "STRING"}]},
                   {"name": "tags", "type": "STRING", "mode": "REPEATED"},
                   {"name": "must", "type": "BOOLEAN", "mode": "REQUIRED"}]),
            "Cannot add required fields to an existing schema. (field: must)",
        ),
        (
            json!([{"name": "id", "type": "INTEGER"}]),
            "Field addr is missing in new schema",
        ),
    ];
    for (fields, message) in refused {
        let (status, e) = patch(&emu, "t", json!({"schema": {"fields": fields}})).await;
        assert_eq!(status, 400, "{e}");
        assert_eq!(
            e["error"]["message"],
            format!("Provided Schema does not match Table p:d.t. {message}")
        );
    }
}

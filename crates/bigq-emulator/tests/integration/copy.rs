//! Copy jobs: one or several source tables into a destination, under the dispositions.

use serde_json::{Value, json};

use crate::common::{Rest, emulator};

fn table(t: &str) -> Value {
    json!({"projectId": "p", "datasetId": "d", "tableId": t})
}

/// Inserts a copy job; the job resource, which must be done.
async fn copy(rest: &Rest, cfg: Value) -> Value {
    let job = rest
        .post_ok("/jobs", json!({"configuration": {"copy": cfg}}))
        .await;
    assert_eq!(job["status"]["state"], "DONE", "{job}");
    job
}

fn count(v: &Value) -> Value {
    v["rows"][0]["f"][0]["v"].clone()
}

#[tokio::test]
async fn copies_follow_the_write_and_create_dispositions() {
    let emu = emulator().await;
    let rest = Rest::new(&emu);
    rest.dataset("d").await;
    rest.query("CREATE TABLE d.a AS SELECT 1 AS n UNION ALL SELECT 2")
        .await;
    rest.query("CREATE TABLE d.b AS SELECT 3 AS n").await;
    rest.query("CREATE TABLE d.s AS SELECT 'x' AS n").await;

    let job = copy(
        &rest,
        json!({"sourceTables": [table("a"), table("b")], "destinationTable": table("c")}),
    )
    .await;
    assert!(job["status"].get("errorResult").is_none(), "{job}");
    assert_eq!(job["configuration"]["jobType"], "COPY");
    assert_eq!(
        job["configuration"]["copy"]["writeDisposition"],
        "WRITE_EMPTY"
    );
    assert_eq!(job["statistics"]["copy"]["copiedRows"], "3");
    let v = rest.query("SELECT COUNT(*), SUM(n) FROM d.c").await;
    assert_eq!(v["rows"][0]["f"][1]["v"], "6");

    // WRITE_EMPTY (the default) refuses a table with rows.
    let job = copy(
        &rest,
        json!({"sourceTable": table("a"), "destinationTable": table("c")}),
    )
    .await;
    assert_eq!(job["status"]["errorResult"]["reason"], "duplicate", "{job}");
    copy(&rest, json!({"sourceTable": table("a"), "destinationTable": table("c"), "writeDisposition": "WRITE_APPEND"})).await;
    assert_eq!(count(&rest.query("SELECT COUNT(*) FROM d.c").await), "5");
    copy(&rest, json!({"sourceTable": table("b"), "destinationTable": table("c"), "writeDisposition": "WRITE_TRUNCATE"})).await;
    assert_eq!(count(&rest.query("SELECT COUNT(*) FROM d.c").await), "1");

    let job = copy(&rest, json!({"sourceTable": table("a"), "destinationTable": table("new"), "createDisposition": "CREATE_NEVER"})).await;
    assert_eq!(job["status"]["errorResult"]["reason"], "notFound", "{job}");
    let job = copy(
        &rest,
        json!({"sourceTables": [table("a"), table("s")], "destinationTable": table("mixed")}),
    )
    .await;
    assert!(
        job["status"]["errorResult"]["message"]
            .as_str()
            .unwrap()
            .contains("Incompatible table schema"),
        "{job}"
    );
    let job = copy(
        &rest,
        json!({"sourceTable": table("missing"), "destinationTable": table("z")}),
    )
    .await;
    assert_eq!(job["status"]["errorResult"]["reason"], "notFound", "{job}");
    // A snapshot copies the rows too.
    copy(&rest, json!({"sourceTable": table("a"), "destinationTable": table("snap"), "operationType": "SNAPSHOT"})).await;
    assert_eq!(count(&rest.query("SELECT COUNT(*) FROM d.snap").await), "2");
}

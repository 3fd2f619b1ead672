//! Drives the emulator over HTTP with raw JSON and checks BigQuery's wire shapes.

use crate::common::cells;
use bigq_emulator::Emulator;
use serde_json::{Value, json};

struct Ctx {
    emu: Emulator,
    http: reqwest::Client,
}

impl Ctx {
    async fn new() -> Ctx {
        let emu = Emulator::builder()
            .with_project("p")
            .start()
            .await
            .expect("start");
        Ctx {
            emu,
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/bigquery/v2/projects/p{path}", self.emu.rest_endpoint())
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut rb = self.http.request(method, self.url(path));
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.expect("send");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        let v = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON {e}: {text}"))
        };
        (status, v)
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    async fn query(&self, sql: &str) -> Value {
        let (status, v) = self
            .post("/queries", json!({"query": sql, "useLegacySql": false}))
            .await;
        assert_eq!(status, 200, "{sql}: {v}");
        v
    }

    async fn dataset(&self, id: &str) {
        let (status, v) = self
            .post("/datasets", json!({"datasetReference": {"datasetId": id}}))
            .await;
        assert_eq!(status, 200, "{v}");
    }
}

#[tokio::test]
async fn select_literals_encode_like_bigquery() {
    let c = Ctx::new().await;
    let v = c
        .query(
            "SELECT 1 AS i, 2.5 AS f, 'x' AS s, TRUE AS b, NULL AS n, \
             CAST('NaN' AS FLOAT64) AS nan, NUMERIC '1.50' AS num, DATE '2024-01-15' AS d, \
             TIMESTAMP '2024-01-01 00:00:00 UTC' AS ts, DATETIME '2024-01-15 10:30:00' AS dt, \
             b'abc' AS by",
        )
        .await;
    assert_eq!(v["kind"], "bigquery#queryResponse");
    assert_eq!(v["jobComplete"], true);
    assert_eq!(v["totalRows"], "1");
    let types: Vec<&str> = v["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "INTEGER",
            "FLOAT",
            "STRING",
            "BOOLEAN",
            "INTEGER",
            "FLOAT",
            "NUMERIC",
            "DATE",
            "TIMESTAMP",
            "DATETIME",
            "BYTES"
        ]
    );
    assert_eq!(v["schema"]["fields"][0]["mode"], "NULLABLE");
    assert_eq!(
        cells(&v)[0],
        vec![
            json!("1"),
            json!("2.5"),
            json!("x"),
            json!("true"),
            Value::Null,
            json!("NaN"),
            json!("1.5"),
            json!("2024-01-15"),
            json!("1.7040672E9"),
            json!("2024-01-15T10:30:00"),
            json!("YWJj"),
        ]
    );
}

#[tokio::test]
async fn generate_array_pages_through_get_query_results() {
    let c = Ctx::new().await;
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT n FROM UNNEST(GENERATE_ARRAY(1, 100)) AS n ORDER BY n", "useLegacySql": false, "maxResults": 25}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["totalRows"], "100");
    assert_eq!(cells(&v).len(), 25);
    assert_eq!(cells(&v)[24][0], "25");
    let job = v["jobReference"]["jobId"].as_str().unwrap().to_string();
    let token = v["pageToken"].as_str().unwrap().to_string();
    let (status, page) = c
        .get(&format!("/queries/{job}?pageToken={token}&maxResults=80"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(page["kind"], "bigquery#getQueryResultsResponse");
    assert_eq!(cells(&page).len(), 75);
    assert_eq!(cells(&page)[74][0], "100");
    assert!(page.get("pageToken").is_none());
}

#[tokio::test]
async fn short_query_mode_skips_the_job_when_it_fits() {
    let c = Ctx::new().await;
    let (_, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT 1 AS x", "useLegacySql": false, "jobCreationMode": "JOB_CREATION_OPTIONAL"}),
        )
        .await;
    assert!(v.get("jobReference").is_none(), "{v}");
    assert!(v["queryId"].is_string());
    assert_eq!(cells(&v)[0][0], "1");
    let (_, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT n FROM UNNEST(GENERATE_ARRAY(1, 10)) AS n", "useLegacySql": false,
                   "jobCreationMode": "JOB_CREATION_OPTIONAL", "maxResults": 5}),
        )
        .await;
    assert!(v["jobReference"]["jobId"].is_string(), "{v}");
    assert_eq!(v["jobCreationReason"]["code"], "LARGE_RESULTS");
}

#[tokio::test]
async fn errors_have_bigquery_shape() {
    let c = Ctx::new().await;
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT NOT_A_FUNCTION(1)", "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(v["error"]["code"], 400);
    assert_eq!(v["error"]["errors"][0]["reason"], "invalidQuery");
    assert_eq!(v["error"]["errors"][0]["domain"], "global");
    assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");

    let (status, v) = c.get("/datasets/missing").await;
    assert_eq!(status, 404);
    assert_eq!(v["error"]["errors"][0]["reason"], "notFound");

    c.dataset("d").await;
    let (status, v) = c
        .post("/datasets", json!({"datasetReference": {"datasetId": "d"}}))
        .await;
    assert_eq!(status, 409);
    assert_eq!(v["error"]["errors"][0]["reason"], "duplicate");

    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT * FROM d.nope", "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 404, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("p:d.nope"));

    let (status, v) = c.post("/queries", json!({"query": "SELEC 1"})).await;
    assert_eq!(status, 400);
    assert_eq!(v["error"]["errors"][0]["reason"], "invalidQuery");
}

#[tokio::test]
async fn ddl_dml_and_tabledata() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    c.query("CREATE TABLE `p.d.t` (id INT64, name STRING, amount NUMERIC, tags ARRAY<STRING>, info STRUCT<a INT64, b STRING>)")
        .await;
    let v = c
        .query("INSERT INTO d.t (id, name, amount, tags, info) VALUES (1, 'a', NUMERIC '10.50', ['x', 'y'], STRUCT(7 AS a, 'q' AS b)), (2, 'b', NULL, [], NULL)")
        .await;
    assert_eq!(v["numDmlAffectedRows"], "2", "{v}");
    assert_eq!(v["dmlStats"]["insertedRowCount"], "2");
    let v = c.query("UPDATE `p.d.t` SET name = 'z' WHERE id = 2").await;
    assert_eq!(v["numDmlAffectedRows"], "1");

    let (status, t) = c.get("/datasets/d/tables/t").await;
    assert_eq!(status, 200);
    assert_eq!(t["kind"], "bigquery#table");
    assert_eq!(t["numRows"], "2");
    assert_eq!(
        t["schema"]["fields"][0],
        json!({"name": "id", "type": "INTEGER"})
    );
    assert_eq!(t["schema"]["fields"][3]["mode"], "REPEATED");

    let (status, data) = c.get("/datasets/d/tables/t/data").await;
    assert_eq!(status, 200);
    assert_eq!(data["kind"], "bigquery#tableDataList");
    assert_eq!(data["totalRows"], "2");
    let rows = cells(&data);
    assert_eq!(rows[0][2], "10.5");
    assert_eq!(rows[0][3], json!([{"v": "x"}, {"v": "y"}]));
    assert_eq!(rows[0][4], json!({"f": [{"v": "7"}, {"v": "q"}]}));
    assert_eq!(rows[1][1], "z");

    let (_, page) = c
        .get("/datasets/d/tables/t/data?maxResults=1&startIndex=1&selectedFields=name")
        .await;
    assert_eq!(cells(&page), vec![vec![json!("z")]]);

    let v = c.query("DELETE FROM d.t WHERE id = 1").await;
    assert_eq!(v["numDmlAffectedRows"], "1");
    c.query("DROP TABLE d.t").await;
    let (status, _) = c.get("/datasets/d/tables/t").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn insert_all_reports_bad_rows() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    c.query("CREATE TABLE d.t (n INT64, ts TIMESTAMP)").await;
    let (status, v) = c
        .post(
            "/datasets/d/tables/t/insertAll",
            json!({"skipInvalidRows": true, "rows": [{"json": {"n": 1, "ts": "2024-01-01T00:00:00Z"}}, {"json": {"n": "not-a-number"}}]}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["kind"], "bigquery#tableDataInsertAllResponse");
    assert_eq!(v["insertErrors"][0]["index"], 1);
    assert_eq!(
        v["insertErrors"][0]["errors"][0]["message"],
        "Cannot convert value to integer (bad value): not-a-number"
    );
    let (_, data) = c
        .get("/datasets/d/tables/t/data?formatOptions.useInt64Timestamp=true")
        .await;
    assert_eq!(
        cells(&data),
        vec![vec![json!("1"), json!("1704067200000000")]]
    );
}

#[tokio::test]
async fn parameters_named_and_positional() {
    let c = Ctx::new().await;
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT @x + 1 AS a, @s AS s, ARRAY_LENGTH(@arr) AS n", "useLegacySql": false,
                   "parameterMode": "NAMED",
                   "queryParameters": [
                       {"name": "x", "parameterType": {"type": "INT64"}, "parameterValue": {"value": "41"}},
                       {"name": "s", "parameterType": {"type": "STRING"}, "parameterValue": {"value": "hi"}},
                       {"name": "arr", "parameterType": {"type": "ARRAY", "arrayType": {"type": "INT64"}},
                        "parameterValue": {"arrayValues": [{"value": "1"}, {"value": "2"}]}}
                   ]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(cells(&v)[0], vec![json!("42"), json!("hi"), json!("2")]);
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT ? * 2 AS a", "useLegacySql": false, "parameterMode": "POSITIONAL",
                   "queryParameters": [{"parameterType": {"type": "FLOAT64"}, "parameterValue": {"value": "1.5"}}]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(cells(&v)[0][0], "3.0");
}

#[tokio::test]
async fn jobs_insert_get_list_and_dry_run() {
    let c = Ctx::new().await;
    let (status, job) = c
        .post("/jobs", json!({"configuration": {"query": {"query": "SELECT 7 AS lucky", "useLegacySql": false}}}))
        .await;
    assert_eq!(status, 200, "{job}");
    assert_eq!(job["kind"], "bigquery#job");
    assert_eq!(job["status"]["state"], "DONE");
    assert_eq!(job["statistics"]["query"]["statementType"], "SELECT");
    let id = job["jobReference"]["jobId"].as_str().unwrap().to_string();
    let (_, got) = c.get(&format!("/jobs/{id}")).await;
    assert_eq!(got["jobReference"]["jobId"], id.as_str());
    let (_, res) = c.get(&format!("/queries/{id}")).await;
    assert_eq!(cells(&res)[0][0], "7");
    let (_, list) = c
        .get("/jobs?maxResults=1&stateFilter=done&projection=minimal")
        .await;
    assert_eq!(list["kind"], "bigquery#jobList");
    assert_eq!(list["jobs"].as_array().unwrap().len(), 1);
    let (_, cancel) = c.post(&format!("/jobs/{id}/cancel"), json!({})).await;
    assert_eq!(cancel["kind"], "bigquery#jobCancelResponse");

    let (status, dry) = c
        .post(
            "/queries",
            json!({"query": "SELECT 1 AS x, 'hi' AS s", "dryRun": true, "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(dry["schema"]["fields"][1]["type"], "STRING");
    assert!(dry.get("rows").is_none());
    assert!(dry["jobReference"].get("jobId").is_none());
}

#[tokio::test]
async fn datasets_and_tables_crud() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    let (status, t) = c
        .post(
            "/datasets/d/tables",
            json!({"tableReference": {"projectId": "p", "datasetId": "d", "tableId": "t"},
                   "schema": {"fields": [{"name": "a", "type": "INTEGER", "mode": "REQUIRED"}]}}),
        )
        .await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["type"], "TABLE");
    let (_, list) = c.get("/datasets/d/tables").await;
    assert_eq!(list["totalItems"], 1);
    assert_eq!(list["tables"][0]["tableReference"]["tableId"], "t");
    let (_, dl) = c.get("/datasets").await;
    assert_eq!(dl["datasets"][0]["datasetReference"]["datasetId"], "d");
    let (status, v) = c.send(reqwest::Method::DELETE, "/datasets/d", None).await;
    assert_eq!(status, 400, "{v}");
    let (status, _) = c
        .send(
            reqwest::Method::DELETE,
            "/datasets/d?deleteContents=true",
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (status, _) = c.get("/datasets/d").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn query_job_writes_its_destination_table() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    c.query("CREATE TABLE d.t (id INT64, label STRING)").await;
    c.query("INSERT INTO d.t VALUES (1, 'seed')").await;
    let cfg = |disp: &str| {
        json!({"configuration": {"query": {
            "query": "SELECT 100 AS id, 'appended' AS label", "useLegacySql": false,
            "destinationTable": {"projectId": "p", "datasetId": "d", "tableId": "t"},
            "writeDisposition": disp}}})
    };
    let (status, job) = c.post("/jobs", cfg("WRITE_APPEND")).await;
    assert_eq!(status, 200, "{job}");
    assert_eq!(job["status"]["state"], "DONE", "{job}");
    assert_eq!(
        job["configuration"]["query"]["destinationTable"]["tableId"],
        "t"
    );
    let (_, data) = c.get("/datasets/d/tables/t/data").await;
    assert_eq!(data["totalRows"], "2");
    let (_, job) = c.post("/jobs", cfg("WRITE_EMPTY")).await;
    assert_eq!(job["status"]["errorResult"]["reason"], "duplicate", "{job}");
    let (_, job) = c.post("/jobs", cfg("WRITE_TRUNCATE")).await;
    let id = job["jobReference"]["jobId"].as_str().unwrap().to_string();
    let (_, res) = c.get(&format!("/queries/{id}")).await;
    assert_eq!(cells(&res), vec![vec![json!("100"), json!("appended")]]);
}

#[tokio::test]
async fn bad_input_gets_bigquery_errors_and_the_server_stays_up() {
    let c = Ctx::new().await;
    let resp = c
        .http
        .post(c.url("/queries"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["errors"][0]["reason"], "invalid");
    let (status, v) = c.post("/queries", json!({"useLegacySql": false})).await;
    assert_eq!(status, 400, "{v}");
    let (status, v) = c.get("/no/such/thing").await;
    assert_eq!(status, 404);
    assert_eq!(v["error"]["errors"][0]["reason"], "notFound");
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT 1 AS x", "useLegacySql": false}),
        )
        .await;
    assert_eq!((status, cells(&v)[0][0].clone()), (200, json!("1")));
}

#[tokio::test]
async fn slow_jobs_report_job_complete_false_until_done() {
    let emu = Emulator::builder()
        .with_project("p")
        .with_query_delay(std::time::Duration::from_millis(300))
        .start()
        .await
        .unwrap();
    let c = Ctx {
        emu,
        http: reqwest::Client::new(),
    };
    let (_, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT 5 AS x", "useLegacySql": false, "timeoutMs": 10}),
        )
        .await;
    assert_eq!(v["jobComplete"], false, "{v}");
    assert!(v.get("rows").is_none());
    let id = v["jobReference"]["jobId"].as_str().unwrap().to_string();
    let (_, v) = c.get(&format!("/queries/{id}?timeoutMs=10000")).await;
    assert_eq!(v["jobComplete"], true, "{v}");
    assert_eq!(cells(&v)[0][0], "5");
}

#[tokio::test]
async fn common_googlesql_functions_map_onto_datafusion() {
    let c = Ctx::new().await;
    let v = c
        .query(
            "SELECT [1,2,3][OFFSET(1)] AS a, [1,2,3][ORDINAL(1)] AS b, \
             DATE_TRUNC(DATE '2024-05-17', MONTH) AS c, \
             DATE_ADD(DATE '2024-01-31', INTERVAL 1 DAY) AS d, \
             DATE_DIFF(DATE '2024-02-01', DATE '2024-01-01', DAY) AS e, \
             TIMESTAMP_DIFF(TIMESTAMP '2024-01-02 00:00:00 UTC', TIMESTAMP '2024-01-01 00:00:00 UTC', HOUR) AS f, \
             UNIX_SECONDS(TIMESTAMP '2024-01-01 00:00:00 UTC') AS g, \
             FORMAT_DATE('%Y%m', DATE '2024-05-17') AS h, \
             REGEXP_CONTAINS('abc', r'b') AS i, DIV(7, 2) AS j, 7 / 2 AS k, MOD(7, 3) AS l",
        )
        .await;
    assert_eq!(
        cells(&v)[0],
        [
            "2",
            "1",
            "2024-05-01",
            "2024-02-01",
            "31",
            "24",
            "1704067200",
            "202405",
            "true",
            "3",
            "3.5",
            "1"
        ]
        .map(|s| json!(s))
        .to_vec()
    );
    // Dates and timestamps from integer columns (the bench's scan table is built this way).
    let v = c
        .query(
            "SELECT DATE_FROM_UNIX_DATE(19723 + n) AS d, TIMESTAMP_SECONDS(1704067200 + n) AS t \
             FROM UNNEST([0, 1]) AS n ORDER BY n",
        )
        .await;
    assert_eq!(v["schema"]["fields"][0]["type"], "DATE");
    assert_eq!(cells(&v)[1][0], json!("2024-01-02"));
    assert_eq!(cells(&v)[0][0], json!("2024-01-01"));
    let v = c
        .query("SELECT x, o FROM UNNEST(['a', 'b']) AS x WITH OFFSET AS o ORDER BY o")
        .await;
    assert_eq!(
        cells(&v),
        vec![vec![json!("a"), json!("0")], vec![json!("b"), json!("1")]]
    );
}

#[tokio::test]
async fn in_unnest_and_arrays_of_structs() {
    let c = Ctx::new().await;
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT x FROM UNNEST([1, 2, 3, 4]) AS x WHERE x IN UNNEST(@ids) AND x NOT IN UNNEST([4]) ORDER BY x",
                   "useLegacySql": false,
                   "queryParameters": [{"name": "ids", "parameterType": {"type": "ARRAY", "arrayType": {"type": "INT64"}},
                                        "parameterValue": {"arrayValues": [{"value": "2"}, {"value": "4"}]}}]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(cells(&v), vec![vec![json!("2")]]);
    let v = c
        .query("SELECT s.a, s.b FROM UNNEST([STRUCT(1 AS a, 'x' AS b), STRUCT(2, 'y')]) AS s ORDER BY s.a")
        .await;
    assert_eq!(cells(&v)[1], vec![json!("2"), json!("y")]);
    let v = c
        .query("SELECT STRUCT<a INT64, b STRING>(1, 'x') AS s")
        .await;
    assert_eq!(v["schema"]["fields"][0]["fields"][1]["name"], "b");
}

#[tokio::test]
async fn array_subqueries_and_null_arrays() {
    let c = Ctx::new().await;
    let v = c
        .query(
            "SELECT ARRAY(SELECT x * 2 FROM UNNEST([1, 2]) AS x ORDER BY x) AS a, \
             CAST(NULL AS ARRAY<INT64>) AS n",
        )
        .await;
    assert_eq!(v["schema"]["fields"][0]["mode"], "REPEATED");
    assert_eq!(
        cells(&v)[0],
        vec![json!([{"v": "2"}, {"v": "4"}]), json!([])]
    );
}

#[tokio::test]
async fn tables_patch_and_a_query_result_table_through_tables_get() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    c.query("CREATE TABLE d.t (id INT64 NOT NULL)").await;
    c.query("INSERT INTO d.t VALUES (1), (2)").await;
    let (status, t) = c
        .send(
            reqwest::Method::PATCH,
            "/datasets/d/tables/t",
            Some(json!({"description": "ids", "schema": {"fields": [
                {"name": "id", "type": "INTEGER", "mode": "REQUIRED"},
                {"name": "note", "type": "STRING"}]}})),
        )
        .await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["description"], "ids");
    assert_eq!(t["schema"]["fields"][1]["name"], "note");
    assert_eq!(t["numRows"], "2");
    let v = c.query("SELECT id, note FROM d.t ORDER BY id").await;
    assert_eq!(
        cells(&v),
        vec![vec![json!("1"), Value::Null], vec![json!("2"), Value::Null]]
    );
    let (status, e) = c
        .send(
            reqwest::Method::PUT,
            "/datasets/d/tables/t",
            Some(json!({"schema": {"fields": [{"name": "other", "type": "STRING"}]}})),
        )
        .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Provided Schema does not match Table p:d.t"),
        "{e}"
    );

    // A query job's anonymous destination table is a table like any other for tables.get.
    let v = c.query("SELECT 'x' AS s").await;
    let id = v["jobReference"]["jobId"].as_str().unwrap().to_string();
    let (_, job) = c.get(&format!("/jobs/{id}")).await;
    let dest = &job["configuration"]["query"]["destinationTable"];
    let (status, t) = c
        .get(&format!(
            "/datasets/{}/tables/{}",
            dest["datasetId"].as_str().unwrap(),
            dest["tableId"].as_str().unwrap()
        ))
        .await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["numRows"], "1");
    assert_eq!(t["schema"]["fields"][0]["name"], "s");
    let (_, basic) = c.get("/datasets/d/tables/t?view=BASIC").await;
    assert!(basic.get("numRows").is_none(), "{basic}");
    assert_eq!(basic["schema"]["fields"][0]["name"], "id");
    let (_, full) = c.get("/datasets/d/tables/t?view=FULL").await;
    assert_eq!(full["numRows"], "2");
    let (status, e) = c.get("/datasets/d/tables/t?view=SOME").await;
    assert_eq!(status, 400);
    assert_eq!(e["error"]["message"], "Invalid value for view: SOME");
}

/// A query selecting JSON and GEOGRAPHY columns reports those types (not STRING), through
/// projections, UNION ALL and CREATE TABLE AS SELECT, while a string function of them is a
/// STRING; GEOGRAPHY values come back as BigQuery's WKT.
#[tokio::test]
async fn json_and_geography_columns_keep_their_types_in_results() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    c.query("CREATE TABLE d.g (j JSON, g GEOGRAPHY, ga ARRAY<GEOGRAPHY>, s STRING)")
        .await;
    c.query("INSERT INTO d.g (g, ga, s) VALUES (ST_GEOGPOINT(-122.4, 37.8), [ST_GEOGFROMTEXT('LINESTRING(0 0,1 1)')], 'x')")
        .await;
    let types = |v: &Value| -> Vec<(String, String)> {
        v["schema"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let mode = f["mode"].as_str().unwrap_or("NULLABLE");
                (f["type"].as_str().unwrap().to_string(), mode.to_string())
            })
            .collect()
    };
    let t = |a: &str, b: &str| (a.to_string(), b.to_string());
    let v = c
        .query("SELECT j, g, ga, ST_ASTEXT(g) AS wkt, UPPER(s) AS u FROM d.g")
        .await;
    assert_eq!(
        types(&v),
        vec![
            t("JSON", "NULLABLE"),
            t("GEOGRAPHY", "NULLABLE"),
            t("GEOGRAPHY", "REPEATED"),
            t("STRING", "NULLABLE"),
            t("STRING", "NULLABLE"),
        ],
        "{v}"
    );
    assert_eq!(
        cells(&v)[0][1..4],
        [
            json!("POINT(-122.4 37.8)"),
            json!([{"v": "LINESTRING(0 0, 1 1)"}]),
            json!("POINT(-122.4 37.8)")
        ]
    );
    let v = c
        .query("SELECT g FROM d.g UNION ALL SELECT g FROM d.g")
        .await;
    assert_eq!(types(&v), vec![t("GEOGRAPHY", "NULLABLE")], "{v}");
    c.query("CREATE TABLE d.g2 AS SELECT j, g FROM d.g").await;
    let (_, table) = c.get("/datasets/d/tables/g2").await;
    assert_eq!(table["schema"]["fields"][0]["type"], "JSON", "{table}");
    assert_eq!(table["schema"]["fields"][1]["type"], "GEOGRAPHY", "{table}");
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT ST_GEOGFROMTEXT('POINT(1)')", "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Invalid WKT"),
        "{v}"
    );
}

/// Range interval literals (`'Y-M'`, `'D H:M:S'`, signs per group) are read as BigQuery
/// reads them, INTERVAL results come back typed and in canonical text, and a malformed
/// literal is an invalidQuery naming it.
#[tokio::test]
async fn range_interval_literals() {
    let c = Ctx::new().await;
    let v = c
        .query(
            "SELECT EXTRACT(DAY FROM INTERVAL '7 12:0:0' DAY TO SECOND), \
             EXTRACT(HOUR FROM INTERVAL '7 12:0:0' DAY TO SECOND), \
             EXTRACT(YEAR FROM INTERVAL '5-3' YEAR TO MONTH), \
             EXTRACT(MONTH FROM INTERVAL '-1-2' YEAR TO MONTH), \
             EXTRACT(MICROSECOND FROM INTERVAL '0 0:0:0.123456' DAY TO SECOND), \
             DATETIME '2024-01-15 12:00:00' + INTERVAL '1 6' DAY TO HOUR, \
             EXTRACT(MINUTE FROM INTERVAL '-2:30' HOUR TO MINUTE)",
        )
        .await;
    assert_eq!(
        cells(&v)[0],
        vec![
            json!("7"),
            json!("12"),
            json!("5"),
            json!("-2"),
            json!("123456"),
            json!("2024-01-16T18:00:00"),
            json!("-30")
        ],
        "{v}"
    );
    // INTERVAL results are typed INTERVAL, in BigQuery's canonical text.
    let v = c
        .query("SELECT INTERVAL '-1-2 3 -4:5:6.5' YEAR TO SECOND AS i, INTERVAL 0 DAY AS z")
        .await;
    assert_eq!(v["schema"]["fields"][0]["type"], "INTERVAL", "{v}");
    assert_eq!(
        cells(&v)[0],
        vec![json!("-1-2 3 -4:5:6.500"), json!("0-0 0 0:0:0")],
        "{v}"
    );
    let v = c
        .query(
            "SELECT JUSTIFY_DAYS(INTERVAL 40 DAY), JUSTIFY_HOURS(INTERVAL 30 HOUR), \
             JUSTIFY_INTERVAL(INTERVAL '0-0 40 30:0:0' YEAR TO SECOND), \
             MAKE_INTERVAL(1, 2, 3, 4, 5, 6)",
        )
        .await;
    assert_eq!(
        cells(&v)[0],
        vec![
            json!("0-1 10 0:0:0"),
            json!("0-0 1 6:0:0"),
            json!("0-1 11 6:0:0"),
            json!("1-2 3 4:5:6")
        ],
        "{v}"
    );
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT EXTRACT(YEAR FROM INTERVAL '1-x' YEAR TO MONTH)", "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["errors"][0]["reason"], "invalidQuery", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Invalid interval literal"),
        "{v}"
    );
}

#[tokio::test]
async fn temporary_tables_live_in_their_script_or_session() {
    let c = Ctx::new().await;
    // A script: the table is visible to the statements after it, then gone.
    let v = c
        .query(
            "CREATE TEMP TABLE t AS SELECT 1 AS id; INSERT INTO t VALUES (2); \
             SELECT id FROM t ORDER BY id",
        )
        .await;
    assert_eq!(cells(&v), vec![vec![json!("1")], vec![json!("2")]]);
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT * FROM t", "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 400, "a script's temporary table outlived it: {v}");
    // Its hidden dataset is gone.
    let (_, v) = c.get("/datasets").await;
    assert!(v.get("datasets").is_none(), "{v}");
    // One statement alone cannot make one.
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "CREATE TEMP TABLE t (x INT64)", "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert!(
        v.to_string().contains("requires a script or session"),
        "{v}"
    );

    // A session: made by one query, named by the next ones.
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "CREATE TEMP TABLE s AS SELECT 'a' AS k", "useLegacySql": false,
                   "createSession": true}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let id = v["sessionInfo"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no sessionInfo: {v}"))
        .to_string();
    // The session's hidden dataset holds the table but is not listed.
    let (_, v) = c.get("/datasets").await;
    assert!(v.get("datasets").is_none(), "{v}");
    let in_session = |sql: &str| {
        json!({"query": sql, "useLegacySql": false,
               "connectionProperties": [{"key": "session_id", "value": id}]})
    };
    let (status, v) = c
        .post("/queries", in_session("INSERT INTO s VALUES ('b')"))
        .await;
    assert_eq!(status, 200, "{v}");
    let (status, v) = c
        .post("/queries", in_session("SELECT k FROM s ORDER BY k"))
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(cells(&v), vec![vec![json!("a")], vec![json!("b")]]);
    assert_eq!(v["sessionInfo"]["sessionId"], json!(id));
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT 1", "useLegacySql": false,
                   "connectionProperties": [{"key": "session_id", "value": "made-up"}]}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        v["error"]["message"],
        json!("Invalid input session id."),
        "{v}"
    );
}

#[tokio::test]
async fn result_columns_are_named_as_bigquery_names_them() {
    let c = Ctx::new().await;
    let names = |v: &Value| -> Vec<String> {
        v["schema"]["fields"]
            .as_array()
            .unwrap_or_else(|| panic!("no schema: {v}"))
            .iter()
            .map(|f| f["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    // Anonymous columns are f0_, f1_, ... counted among themselves; a column keeps its name,
    // a path its last part; a set operation takes the names of its first query.
    let v = c
        .query(
            "SELECT 1, x, 'a' AS b, COUNT(*), s.k FROM UNNEST([1]) AS x, \
             (SELECT STRUCT(2 AS k) AS s) GROUP BY x, s.k",
        )
        .await;
    assert_eq!(names(&v), ["f0_", "x", "b", "f1_", "k"]);
    let v = c.query("SELECT 1, 1 UNION ALL SELECT 2, 3").await;
    assert_eq!(names(&v), ["f0_", "f1_"]);
}

#[tokio::test]
async fn unnest_of_structs_without_an_alias_has_their_fields_as_columns() {
    let c = Ctx::new().await;
    let v = c
        .query(
            "SELECT id, label FROM UNNEST([STRUCT(10 AS id, 'ten' AS label), STRUCT(20, 'twenty')]) \
             ORDER BY id",
        )
        .await;
    assert_eq!(
        cells(&v),
        vec![
            vec![json!("10"), json!("ten")],
            vec![json!("20"), json!("twenty")]
        ]
    );
    // Two of them joined; an alias keeps the struct whole; scalars stay one column.
    let v = c
        .query("SELECT a, b FROM UNNEST([STRUCT(1 AS a)]) JOIN UNNEST([STRUCT(1 AS b)]) ON a = b")
        .await;
    assert_eq!(cells(&v), vec![vec![json!("1"), json!("1")]]);
    let v = c
        .query("SELECT s.a FROM UNNEST([STRUCT(7 AS a)]) AS s")
        .await;
    assert_eq!(cells(&v), vec![vec![json!("7")]]);
    let v = c.query("SELECT * FROM UNNEST([1, 2])").await;
    assert_eq!(cells(&v), vec![vec![json!("1")], vec![json!("2")]]);
    // In an INSERT too.
    c.dataset("d").await;
    c.query("CREATE TABLE d.t (id INT64, label STRING)").await;
    c.query(
        "INSERT INTO d.t (id, label) SELECT id, label FROM UNNEST([STRUCT(1 AS id, 'one' AS label)])",
    )
    .await;
    let v = c.query("SELECT id, label FROM d.t").await;
    assert_eq!(cells(&v), vec![vec![json!("1"), json!("one")]]);
}

#[tokio::test]
async fn script_variables_declare_set_and_live_in_a_session() {
    let c = Ctx::new().await;
    let v = c
        .query(
            "DECLARE a, b STRING DEFAULT 'x'; DECLARE n INT64 DEFAULT (SELECT COUNT(*) FROM \
             UNNEST([1, 2, 3])); DECLARE t TIMESTAMP; SET b = CONCAT(a, 'y'); \
             SELECT a, b, n * 2 AS m, t",
        )
        .await;
    let fields: Vec<(&str, &str)> = v["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            ("a", "STRING"),
            ("b", "STRING"),
            ("m", "INTEGER"),
            ("t", "TIMESTAMP")
        ]
    );
    assert_eq!(
        cells(&v),
        vec![vec![json!("x"), json!("xy"), json!("6"), Value::Null]]
    );
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SET z = 1; SELECT 1", "useLegacySql": false}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert!(v.to_string().contains("Unrecognized variable: z"), "{v}");
    // A session keeps its variables for the queries after.
    let (_, v) = c
        .post(
            "/queries",
            json!({"query": "DECLARE k INT64 DEFAULT 41", "useLegacySql": false,
                   "createSession": true}),
        )
        .await;
    let id = v["sessionInfo"]["sessionId"].as_str().unwrap().to_string();
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT k + 1 AS answer", "useLegacySql": false,
                   "connectionProperties": [{"key": "session_id", "value": id}]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(cells(&v), vec![vec![json!("42")]]);
}

#[tokio::test]
async fn range_start_and_end_of_a_null_range_are_null() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    c.query("CREATE TABLE d.r (id INT64, during RANGE<DATE>)")
        .await;
    c.query(
        "INSERT INTO d.r (id, during) VALUES (1, RANGE<DATE> '[2024-01-01, UNBOUNDED)'), (2, NULL)",
    )
    .await;
    let v = c
        .query("SELECT id, RANGE_START(during), RANGE_END(during) FROM d.r ORDER BY id")
        .await;
    assert_eq!(
        cells(&v),
        vec![
            vec![json!("1"), json!("2024-01-01"), Value::Null],
            vec![json!("2"), Value::Null, Value::Null]
        ]
    );
}

#[tokio::test]
async fn unknown_fields_wrong_types_and_oversized_bodies_are_refused_by_name() {
    let c = Ctx::new().await;
    let error = |v: &Value| {
        (
            v["error"]["errors"][0]["reason"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            v["error"]["message"].as_str().unwrap_or("").to_string(),
        )
    };
    // A misspelt option is an error, not a query run with the default.
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT 1", "useLegacySQL": false}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        error(&v),
        (
            "invalid".into(),
            "Invalid JSON payload received. Unknown name \"useLegacySQL\" at 'query_request': \
             Cannot find field."
                .into()
        )
    );
    let (status, v) = c
        .post(
            "/queries",
            json!({"query": "SELECT 1", "useLegacySql": false, "maxResults": "many"}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        error(&v).1,
        "Invalid value at 'query_request.max_results' (TYPE_INT64), \"many\""
    );
    c.dataset("d").await;
    let (status, v) = c
        .post(
            "/datasets/d/tables",
            json!({"tableReference": {"projectId": "p", "datasetId": "d", "tableId": "t"},
                   "schema": {"fields": [{"name": "x", "type": "INT64", "mod": "REQUIRED"}]}}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert!(
        error(&v).1.contains("\"mod\" at 'table.schema.fields[0]'"),
        "{v}"
    );
    let (status, v) = c
        .post(
            "/jobs",
            json!({"configuration": {"query": {"query": "SELECT 1", "useLegacySql": "no"}}}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        error(&v).1,
        "Invalid value at 'job.configuration.query.use_legacy_sql' (TYPE_BOOL), \"no\""
    );
    // Over BigQuery's 10 MB request limit: BigQuery's JSON error shape, not plain text.
    let big = vec![b' '; 10 * 1024 * 1024 + 1];
    let resp = c
        .http
        .post(c.url("/queries"))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 413);
    let v: Value = resp.json().await.unwrap();
    assert!(
        error(&v).1.contains("exceeds the limit: 10485760 bytes"),
        "{v}"
    );
    // The server is still there.
    assert_eq!(cells(&c.query("SELECT 2").await)[0][0], json!("2"));
}

#[tokio::test]
async fn a_client_leaving_mid_response_leaves_the_server_healthy() {
    let c = Ctx::new().await;
    c.dataset("d").await;
    c.query(
        "CREATE TABLE d.big AS SELECT n, CONCAT('row ', CAST(n AS STRING)) AS s \
             FROM UNNEST(GENERATE_ARRAY(1, 200000)) AS n",
    )
    .await;
    for _ in 0..3 {
        let mut resp = c
            .http
            .get(c.url("/datasets/d/tables/big/data?maxResults=200000"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        // One chunk of the body, then the connection is dropped.
        assert!(resp.chunk().await.unwrap().is_some());
        drop(resp);
    }
    let (status, v) = c.get("/datasets/d/tables/big/data?maxResults=2").await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["totalRows"], json!("200000"));
    assert_eq!(cells(&c.query("SELECT 3").await)[0][0], json!("3"));
}

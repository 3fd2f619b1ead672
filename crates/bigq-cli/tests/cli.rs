//! The `bigq` binary against bigq-emulator on loopback: every test starts its own emulator
//! in-process and runs the built binary as a child process.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use bigq_emulator::Emulator;
use tokio::io::{AsyncBufReadExt, BufReader};

const BIN: &str = env!("CARGO_BIN_EXE_bigq");

/// Runs `bigq args..` with only the environment variables `envs`.
async fn bigq<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
    envs: &[(String, String)],
) -> Output {
    tokio::process::Command::new(BIN)
        .args(args)
        .env_clear()
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .output()
        .await
        .expect("bigq runs")
}

/// Fails the test, showing bigq's stderr, unless the run succeeded.
fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

struct Env {
    emu: Emulator,
    dir: PathBuf,
}

impl Env {
    async fn new(name: &str) -> Env {
        let emu = Emulator::builder()
            .with_project("cli-project")
            .start()
            .await
            .expect("emulator starts");
        let dir = std::env::temp_dir().join(format!("bigq-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Env { emu, dir }
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Runs `bigq args..` pointed at the emulator through the environment.
    async fn run(&self, args: &[&str]) -> Output {
        let envs = [
            ("BIGQUERY_EMULATOR_HOST", self.emu.local_addr().to_string()),
            (
                "BIGQUERY_STORAGE_EMULATOR_HOST",
                self.emu.grpc_addr().to_string(),
            ),
            ("GOOGLE_CLOUD_PROJECT", "cli-project".to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v));
        let out = bigq(args, &envs).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "bigq panicked: {stderr}");
        out
    }

    /// Runs `bigq args..` and returns stdout, failing the test unless it succeeded.
    async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.status.success(),
            "bigq {args:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A dataset `shop` with a table `orders` holding the five rows of [`ORDERS`].
    async fn shop(&self) {
        self.ok(&["mk-dataset", "shop"]).await;
        self.ok(&[
            "mk-table",
            "shop.orders",
            "--schema",
            "id:INT64:REQUIRED,item:STRING,qty:INT64,price:FLOAT64",
        ])
        .await;
        let path = self.file("orders.ndjson", ORDERS);
        let out = self.write_orders(&path, &[]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains("5 rows written to shop.orders"), "{stderr}");
    }

    /// Runs `bigq write shop.orders --from path extra..`.
    async fn write_orders(&self, path: &Path, extra: &[&str]) -> Output {
        let mut args = vec!["write", "shop.orders", "--from", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.run(&args).await
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// INT64 as a JSON number and as text (BigQuery's own JSON exports), a blank line, a NULL.
const ORDERS: &str = r#"{"id": 1, "item": "apple", "qty": 3, "price": 0.5}
{"id": "2", "item": "pear", "qty": "1", "price": 0.75}

{"id": 3, "item": "fig", "qty": 7, "price": 2.25}
{"id": 4, "item": "kiwi", "qty": null, "price": 1.0}
{"id": 5, "item": "plum", "qty": 2, "price": 0.25}
"#;

const BY_QTY: &str = "SELECT id, item, qty FROM shop.orders WHERE qty >= @min ORDER BY id";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_with_a_parameter_as_csv_json_ndjson_and_table() {
    let env = Env::new("query").await;
    env.shop().await;

    let csv = env
        .ok(&["query", BY_QTY, "--param", "min=INT64:2", "--format", "csv"])
        .await;
    assert_eq!(csv, "id,item,qty\n1,apple,3\n3,fig,7\n5,plum,2\n");

    let json = env
        .ok(&[
            "query",
            BY_QTY,
            "--param",
            "min=INT64:3",
            "--format",
            "json",
        ])
        .await;
    assert_eq!(
        json,
        "[{\"id\":1,\"item\":\"apple\",\"qty\":3},{\"id\":3,\"item\":\"fig\",\"qty\":7}]\n"
    );

    let ndjson = env
        .ok(&[
            "query",
            "SELECT id, qty FROM shop.orders WHERE id = ? OR qty IS NULL ORDER BY id",
            "--bind",
            "INT64:2",
            "--format",
            "ndjson",
        ])
        .await;
    assert_eq!(ndjson, "{\"id\":2,\"qty\":1}\n{\"id\":4,\"qty\":null}\n");

    let out = env
        .run(&["query", BY_QTY, "--param", "min=INT64:2", "--max-rows", "2"])
        .await;
    assert!(out.status.success());
    let grid = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        grid,
        "+----+-------+-----+\n\
         | id | item  | qty |\n\
         +----+-------+-----+\n\
         | 1  | apple | 3   |\n\
         | 3  | fig   | 7   |\n\
         +----+-------+-----+\n"
    );
    // Statistics on stderr: rows shown of the total, and how long it took.
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("2 of 3 rows"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_options_grpc_job_and_dry_run() {
    let env = Env::new("options").await;
    env.shop().await;
    let expected = "id,item,qty\n1,apple,3\n3,fig,7\n5,plum,2\n";
    let grpc = env
        .ok(&[
            "query",
            BY_QTY,
            "--param",
            "min=INT64:2",
            "--format",
            "csv",
            "--grpc",
        ])
        .await;
    assert_eq!(grpc, expected);

    let out = env
        .run(&[
            "query",
            BY_QTY,
            "--param",
            "min=INT64:2",
            "--format",
            "csv",
            "--job",
            "--no-storage-read",
        ])
        .await;
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(", job cli-project:"), "{stderr}");

    let dry = env
        .ok(&["query", "SELECT * FROM shop.orders", "--dry-run"])
        .await;
    assert!(
        dry.ends_with("bytes would be processed)\n") || dry.contains(" bytes would be processed"),
        "{dry}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_values_print_as_text() {
    let env = Env::new("types").await;
    let sql = "SELECT NUMERIC '1.5' AS n, TIMESTAMP '2024-01-02 03:04:05.25' AS t, \
               DATE '2024-01-02' AS d, TIME '03:04:05' AS tm";
    // TIMESTAMP columns carry the zone "UTC": printed as such, not an error.
    assert_eq!(
        env.ok(&["query", sql, "--format", "csv"]).await,
        "n,t,d,tm\n1.5,2024-01-02T03:04:05.250Z,2024-01-02,03:04:05\n"
    );
    assert_eq!(
        env.ok(&["query", sql, "--format", "ndjson"]).await,
        "{\"n\":\"1.5\",\"t\":\"2024-01-02T03:04:05.250Z\",\"d\":\"2024-01-02\",\"tm\":\"03:04:05\"}\n"
    );
    // NUMERIC and BIGNUMERIC as BigQuery renders them, at any depth and in the grid too.
    let numbers = "SELECT NUMERIC '3' AS i, NUMERIC '-0.25' AS f, BIGNUMERIC '1.10' AS b, \
                   [NUMERIC '2.50'] AS a, STRUCT(NUMERIC '7.0' AS x) AS s";
    assert_eq!(
        env.ok(&["query", numbers, "--format", "ndjson"]).await,
        "{\"i\":\"3\",\"f\":\"-0.25\",\"b\":\"1.1\",\"a\":[\"2.5\"],\"s\":{\"x\":\"7\"}}\n"
    );
    assert_eq!(
        env.ok(&["query", numbers, "--format", "csv"]).await,
        "i,f,b,a,s\n3,-0.25,1.1,\"[\"\"2.5\"\"]\",\"{\"\"x\"\":\"\"7\"\"}\"\n"
    );
    let grid = env.ok(&["query", numbers]).await;
    assert!(
        grid.contains("| 3 ") && grid.contains("| -0.25 ") && !grid.contains("000"),
        "{grid}"
    );
    // BYTES as base64, as BigQuery prints them.
    assert_eq!(
        env.ok(&[
            "query",
            "SELECT b'ab' AS b, CAST(NULL AS BYTES) AS n",
            "--format",
            "json"
        ])
        .await,
        "[{\"b\":\"YWI=\",\"n\":null}]\n"
    );
    // ARRAY and STRUCT columns go into CSV as JSON text.
    assert_eq!(
        env.ok(&[
            "query",
            "SELECT 1 AS id, [1, 2] AS a, STRUCT(3 AS x, 'y' AS y) AS s",
            "--format",
            "csv"
        ])
        .await,
        "id,a,s\n1,\"[1,2]\",\"{\"\"x\"\":3,\"\"y\"\":\"\"y\"\"}\"\n"
    );
    // Struct members keep the column's order, as in the JSON formats.
    assert_eq!(
        env.ok(&[
            "query",
            "SELECT STRUCT(3 AS y, 'a' AS x) AS s",
            "--format",
            "csv"
        ])
        .await,
        "s\n\"{\"\"y\"\":3,\"\"x\"\":\"\"a\"\"}\"\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_prints_the_first_rows_without_a_query() {
    let env = Env::new("head").await;
    env.shop().await;
    let csv = env
        .ok(&["head", "shop.orders", "-n", "2", "--format", "csv"])
        .await;
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert_eq!(lines[0], "id,item,qty,price");
    let some = env
        .ok(&[
            "head",
            "shop.orders",
            "-n",
            "1",
            "--start",
            "4",
            "--columns",
            "item",
            "--format",
            "ndjson",
        ])
        .await;
    assert_eq!(some.lines().count(), 1, "{some}");
    assert!(some.starts_with("{\"item\":"), "{some}");
    let grid = env.ok(&["head", "shop.orders"]).await;
    assert!(grid.contains("| id ") && grid.contains("apple"), "{grid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_to_csv_and_parquet() {
    let env = Env::new("read").await;
    env.shop().await;

    let csv = env
        .ok(&["read", "shop.orders", "--format", "csv", "--streams", "1"])
        .await;
    let mut lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.remove(0), "id,item,qty,price");
    lines.sort();
    assert_eq!(
        lines,
        [
            "1,apple,3,0.5",
            "2,pear,1,0.75",
            "3,fig,7,2.25",
            "4,kiwi,,1.0",
            "5,plum,2,0.25"
        ]
    );

    let path = env.dir.join("big.parquet");
    env.ok(&[
        "read",
        "shop.orders",
        "--columns",
        "id,qty",
        "--where",
        "qty > 1",
        "--format",
        "parquet",
        "--out",
        path.to_str().unwrap(),
    ])
    .await;
    let mut rows = parquet_rows(&path);
    rows.sort();
    assert_eq!(rows, [(1, 3), (3, 7), (5, 2)]);

    let out = env
        .run(&["read", "shop.orders", "--format", "parquet"])
        .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("--out FILE.parquet"), "{stderr}");
}

/// `(id, qty)` of every row of a Parquet file of two INT64 columns.
fn parquet_rows(path: &Path) -> Vec<(i64, i64)> {
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let names: Vec<_> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, ["id", "qty"]);
        let id = batch.column(0).as_primitive::<Int64Type>();
        let qty = batch.column(1).as_primitive::<Int64Type>();
        rows.extend((0..batch.num_rows()).map(|i| (id.value(i), qty.value(i))));
    }
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rows_are_reported_with_line_and_column() {
    let env = Env::new("bad").await;
    env.shop().await;
    let bad = env.file(
        "bad.ndjson",
        "{\"id\": 10, \"qty\": 1}\n\n{\"id\": 11, \"qty\": \"many\"}\n{\"id\": 12, \"qty\": 4}\n",
    );

    // PENDING: nothing is committed.
    let out = env.write_orders(&bad, &["--pending"]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("{}: line 3, column `qty`", bad.display())),
        "{stderr}"
    );
    assert!(stderr.contains("(value \"many\")"), "{stderr}");
    assert!(
        stderr.contains("nothing was written (--pending)"),
        "{stderr}"
    );
    let count = "SELECT COUNT(*) AS n FROM shop.orders WHERE id >= 10";
    assert_eq!(env.ok(&["query", count, "--format", "csv"]).await, "n\n0\n");

    // COMMITTED: the rows that fit go in, the one that does not is reported.
    let out = env.write_orders(&bad, &[]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("line 3, column `qty`"), "{stderr}");
    assert!(stderr.contains("2 rows written"), "{stderr}");
    assert!(stderr.contains("1 rows do not fit"), "{stderr}");
    assert_eq!(env.ok(&["query", count, "--format", "csv"]).await, "n\n2\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_files_write_too() {
    let env = Env::new("csv").await;
    env.shop().await;
    let csv = env.file(
        "more.csv",
        "id,item,qty,price\n20,\"melon, large\",1,3.5\n21,lime,,0.1\n22,date,x,1\n",
    );
    let out = env.write_orders(&csv, &[]).await;
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("line 4, column `qty`"), "{stderr}");
    let got = env
        .ok(&[
            "query",
            "SELECT id, item, qty FROM shop.orders WHERE id >= 20 ORDER BY id",
            "--format",
            "csv",
        ])
        .await;
    assert_eq!(got, "id,item,qty\n20,\"melon, large\",1\n21,lime,\n");

    // --pending with rows that all fit: committed together.
    let good = env.file("good.csv", "qty,id\n9,30\n8,31\n");
    let out = env.write_orders(&good, &["--pending"]).await;
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("2 rows written to shop.orders"), "{stderr}");
    let got = env
        .ok(&[
            "query",
            "SELECT id, qty FROM shop.orders WHERE id >= 30 ORDER BY id",
            "--format",
            "csv",
        ])
        .await;
    assert_eq!(got, "id,qty\n30,9\n31,8\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_commands() {
    let env = Env::new("admin").await;
    env.shop().await;
    env.ok(&["mk-dataset", "empty"]).await;
    assert_eq!(env.ok(&["datasets"]).await, "empty\nshop\n");
    assert_eq!(env.ok(&["tables", "shop"]).await, "orders\tTABLE\n");
    assert_eq!(
        env.ok(&["schema", "shop.orders"]).await,
        "id INT64 REQUIRED\nitem STRING\nqty INT64\nprice FLOAT64\n"
    );
    let json = env.ok(&["schema", "shop.orders", "--json"]).await;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["name"], "id");
    assert_eq!(v[0]["mode"], "REQUIRED");

    env.ok(&["rm", "shop.orders"]).await;
    assert_eq!(env.ok(&["tables", "shop"]).await, "");
    let out = env.run(&["schema", "shop.orders"]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("bigq: BigQuery error 404"), "{stderr}");
    env.ok(&["rm", "--dataset", "empty"]).await;
    assert_eq!(env.ok(&["datasets"]).await, "shop\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mk_table_options_and_show() {
    let env = Env::new("show").await;
    env.ok(&["mk-dataset", "shop"]).await;
    env.ok(&[
        "mk-table",
        "shop.events",
        "--schema",
        "id:INT64:REQUIRED,day:DATE,customer:STRING",
        "--time-partitioning",
        "DAY:day",
        "--partition-expiration",
        "86400000",
        "--require-partition-filter",
        "--clustering",
        "customer,id",
        "--label",
        "team=sales",
        "--friendly-name",
        "Events",
        "--description",
        "all events",
        "--expiration",
        "4102444800000",
    ])
    .await;
    let out = env.ok(&["show", "shop.events"]).await;
    for want in [
        "table: cli-project.shop.events\n",
        "type: TABLE\n",
        "rows: 0\n",
        "description: all events\n",
        "friendly name: Events\n",
        r#"labels: {"team":"sales"}"#,
        "expiration: 4102444800000\n",
        r#"time partitioning: {"type":"DAY","field":"day","expirationMs":"86400000"}"#,
        "require partition filter: true\n",
        "clustering: customer,id\n",
        "schema:\n  id INT64 REQUIRED\n  day DATE\n  customer STRING\n",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
    env.ok(&[
        "mk-table",
        "shop.ranged",
        "--schema",
        "id:INT64",
        "--range-partitioning",
        "id:0:100:10",
    ])
    .await;
    let out = env.ok(&["show", "shop.ranged"]).await;
    assert!(
        out.contains(r#"range partitioning: {"field":"id","range":{"start":"0","end":"100","interval":"10"}}"#),
        "{out}"
    );
    let bad = env
        .run(&[
            "mk-table",
            "shop.bad",
            "--schema",
            "id:INT64",
            "--time-partitioning",
            "WEEK",
        ])
        .await;
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("unknown unit WEEK"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_exit_non_zero_with_the_message() {
    let env = Env::new("errors").await;
    let out = env
        .run(&["query", "SELECT nope FROM missing_ds.missing_table"])
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("bigq: "), "{stderr}");
    assert!(stderr.contains("missing_ds"), "{stderr}");

    let out = env
        .run(&["query", "SELECT @x", "--param", "x=INTEGRAL:1"])
        .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "bigq: --param \"x=INTEGRAL:1\": unknown type INTEGRAL\n"
    );

    // No project anywhere: a configuration error, not a panic.
    let host = env.emu.local_addr().to_string();
    let out = bigq(
        ["query", "SELECT 1"],
        &[("BIGQUERY_EMULATOR_HOST".to_string(), host)],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("bigq: configuration error: no project"),
        "{stderr}"
    );

    // Bad usage is clap's: status 2.
    let out = env.run(&["query"]).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulator_subcommand_serves_until_killed() {
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "emulator",
            "--port",
            "0",
            "--grpc-port",
            "0",
            "--project",
            "child-project",
        ])
        .env_clear()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut env = Vec::new();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(kv) = line.strip_prefix("export ") {
                let (k, v) = kv.split_once('=').unwrap();
                env.push((k.to_string(), v.to_string()));
            }
            if line.starts_with("Ctrl-C") {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("the emulator prints its endpoints");
    let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "BIGQUERY_EMULATOR_HOST",
            "BIGQUERY_STORAGE_EMULATOR_HOST",
            "GOOGLE_CLOUD_PROJECT"
        ]
    );
    assert_eq!(env[2].1, "child-project");

    let out = bigq(
        ["query", "SELECT 1 AS x, 'a' AS y", "--format", "csv"],
        &env,
    )
    .await;
    assert_ok(&out);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "x,y\n1,a\n");
    let out = bigq(["mk-dataset", "d"], &env).await;
    assert_ok(&out);
    let out = bigq(["datasets"], &env).await;
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "d\n");

    child.kill().await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_results_stream_whole_or_cut_at_max_rows() {
    let env = Env::new("large").await;
    let sql = "SELECT x, CONCAT('row-', CAST(x AS STRING)) AS s \
               FROM UNNEST(GENERATE_ARRAY(1, 30000)) AS x ORDER BY x";
    let csv = env.ok(&["query", sql, "--format", "csv"]).await;
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 30001);
    assert_eq!(lines[0], "x,s");
    for (i, line) in lines[1..].iter().enumerate() {
        assert_eq!(*line, format!("{},row-{}", i + 1, i + 1));
    }

    let out = env
        .run(&["query", sql, "--format", "ndjson", "--max-rows", "2"])
        .await;
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"x\":1,\"s\":\"row-1\"}\n{\"x\":2,\"s\":\"row-2\"}\n"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("2 of 30000 rows"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn global_flags_instead_of_the_environment() {
    let env = Env::new("flags").await;
    let rest = env.emu.local_addr().to_string();
    let grpc = env.emu.grpc_addr().to_string();
    let run = |args: Vec<&str>| {
        let flags = [
            "--project",
            "flag-project",
            "--emulator",
            rest.as_str(),
            "--emulator-grpc",
            grpc.as_str(),
        ];
        let all: Vec<String> = flags.into_iter().chain(args).map(String::from).collect();
        async move { bigq(all, &[]).await }
    };
    let out = run(vec!["mk-dataset", "flagged"]).await;
    assert_ok(&out);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "created dataset flag-project.flagged\n"
    );
    let out = run(vec![
        "mk-table",
        "flagged.t",
        "--schema",
        "id:INT64,name:STRING",
    ])
    .await;
    assert_ok(&out);
    let out = run(vec![
        "query",
        "INSERT INTO flagged.t (id, name) VALUES (1, 'a'), (2, 'b')",
    ])
    .await;
    assert_ok(&out);
    // Storage Read goes to the gRPC flag's address.
    let out = run(vec![
        "read",
        "flagged.t",
        "--format",
        "ndjson",
        "--streams",
        "1",
    ])
    .await;
    assert_ok(&out);
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        ["{\"id\":1,\"name\":\"a\"}", "{\"id\":2,\"name\":\"b\"}"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_lists_with_state_and_bytes_billed_and_cancel_reports_the_job() {
    let env = Env::new("jobs").await;
    env.shop().await;
    for _ in 0..2 {
        env.ok(&["query", "SELECT * FROM shop.orders", "--job"])
            .await;
    }
    let listed = env.ok(&["jobs", "--state", "done", "--limit", "2"]).await;
    let lines: Vec<Vec<&str>> = listed.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 2, "{listed}");
    for l in &lines {
        assert_eq!(l.len(), 4, "{listed}");
        assert_eq!(l[1], "DONE", "{listed}");
        assert!(l[3] == "-" || l[3].parse::<u64>().is_ok(), "{listed}");
    }
    let first = lines[0][0].to_string();
    let cancelled = env.ok(&["cancel", &first]).await;
    // Cancelling a finished job leaves it done.
    assert_eq!(cancelled, format!("{first}\tDONE\n"));
    let bad = env.run(&["jobs", "--state", "asleep"]).await;
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--state asleep"));
}

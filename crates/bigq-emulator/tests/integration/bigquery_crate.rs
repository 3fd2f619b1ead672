//! The emulator against a BigQuery client nobody here wrote: the `bigquery` crate (0.9),
//! which speaks only gRPC — the v2 services for datasets, tables and queries, Storage
//! Write for inserts and Storage Read for table reads and large results.

use bigq_emulator::Emulator;
use bigquery::gcloud_sdk::GoogleAuthHeaders;
use bigquery::gcloud_sdk::google_cloud_auth::credentials::anonymous;
use bigquery::*;
use serde::{Deserialize, Serialize};

const SHOP: BigQueryDatasetId = BigQueryDatasetId::from_static("shop");
const ORDERS: BigQueryTableId = BigQueryTableId::from_static("orders");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: i64,
    customer: String,
    total: f64,
    tags: Vec<String>,
}

#[derive(Debug, PartialEq, Deserialize)]
struct N {
    n: i64,
    sq: i64,
}

/// A client whose v2 and Storage endpoints are the emulator's gRPC port, sending no token.
async fn client(emu: &Emulator) -> BigQueryDb {
    let url: bigquery::url::Url = emu.grpc_endpoint().parse().unwrap();
    let options = BigQueryDbOptions::new(emu.project().to_string())
        .with_bigquery_api_url(url.clone())
        .with_bigquery_storage_api_url(url)
        .with_max_retries(0);
    BigQueryDb::with_options_auth(
        options,
        GoogleAuthHeaders::from(anonymous::Builder::new().build()),
    )
    .await
    .expect("client")
}

fn orders() -> Vec<Order> {
    vec![
        Order {
            id: 1,
            customer: "ada".into(),
            total: 12.5,
            tags: vec!["new".into()],
        },
        Order {
            id: 2,
            customer: "bob".into(),
            total: 3.25,
            tags: vec![],
        },
        Order {
            id: 3,
            customer: "ada".into(),
            total: 40.0,
            tags: vec!["vip".into(), "repeat".into()],
        },
    ]
}

#[tokio::test]
async fn bigquery_crate_creates_writes_queries_and_reads() {
    let emu = Emulator::builder()
        .with_project("crate-project")
        .start()
        .await
        .unwrap();
    let db = client(&emu).await;

    // Dataset and table, through DatasetService and TableService.
    let ds = db
        .fluent()
        .schema()
        .dataset(SHOP)
        .create()
        .description("Shop data")
        .execute()
        .await
        .expect("create dataset");
    assert_eq!(ds.description.as_deref(), Some("Shop data"));
    let got = db
        .fluent()
        .schema()
        .dataset(SHOP)
        .get()
        .await
        .expect("get dataset");
    assert_eq!(got.description.as_deref(), Some("Shop data"));
    db.fluent()
        .schema()
        .table(SHOP.table(ORDERS))
        .columns(|c| {
            c.fields([
                c.field("id").int64().required(),
                c.field("customer").string(),
                c.field("total").float64(),
                c.field("tags").string().repeated(),
            ])
        })
        .sync()
        .await
        .expect("create table");

    // Rows in, through Storage Write.
    let summary = db
        .fluent()
        .insert()
        .into(SHOP.table(ORDERS))
        .objects(&orders())
        .execute()
        .await
        .expect("insert");
    assert_eq!(summary.rows_written, 3);

    // A query with named parameters, answered inline in Arrow.
    let mut ada: Vec<Order> = db
        .fluent()
        .query(
            "SELECT id, customer, total, tags FROM shop.orders \
             WHERE customer = @customer AND total >= @min ORDER BY id",
        )
        .param("customer", "ada")
        .param("min", 10.0)
        .obj::<Order>()
        .query()
        .await
        .expect("query");
    ada.sort_by_key(|o| o.id);
    assert_eq!(ada, [orders()[0].clone(), orders()[2].clone()]);

    // The table read back, through Storage Read.
    let mut all: Vec<Order> = db
        .fluent()
        .select()
        .from(SHOP.table(ORDERS))
        .obj()
        .query()
        .await
        .expect("read");
    all.sort_by_key(|o| o.id);
    assert_eq!(all, orders());

    // 1,000 rows from GENERATE_ARRAY.
    let mut ns: Vec<N> = db
        .fluent()
        .query("SELECT n, n * n AS sq FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS n")
        .obj::<N>()
        .query()
        .await
        .expect("query_1k");
    ns.sort_by_key(|r| r.n);
    assert_eq!(ns.len(), 1000);
    assert!(
        ns.iter()
            .enumerate()
            .all(|(i, r)| r.n == i as i64 + 1 && r.sq == r.n * r.n)
    );

    // A DML count.
    let outcome = db
        .fluent()
        .query("UPDATE shop.orders SET total = total * 2 WHERE customer = @customer")
        .param("customer", "ada")
        .execute()
        .await
        .expect("update");
    assert_eq!(outcome.num_dml_affected_rows, Some(2));
    assert_eq!(outcome.statement_type, Some(BigQueryStatementType::Update));
    let totals: Vec<f64> = {
        #[derive(Deserialize)]
        struct T {
            total: f64,
        }
        db.fluent()
            .query("SELECT total FROM shop.orders ORDER BY id")
            .obj::<T>()
            .query()
            .await
            .expect("totals")
            .into_iter()
            .map(|t| t.total)
            .collect()
    };
    assert_eq!(totals, [25.0, 3.25, 80.0]);

    // More rows than the first response may carry: the crate finishes the job
    // (GetQueryResults, GetJob) and reads its destination table through Storage Read.
    let (mut big, stats) = db
        .fluent()
        .query("SELECT n, n * n AS sq FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS n")
        .inline_rows_limit(100)
        .obj::<N>()
        .query_with_stats()
        .await
        .expect("query through a job");
    big.sort_by_key(|r| r.n);
    assert_eq!(big.len(), 1000);
    assert_eq!(
        big[999],
        N {
            n: 1000,
            sq: 1_000_000
        }
    );
    assert_eq!(stats.total_rows, Some(1000));
    assert_eq!(stats.statement_type, Some(BigQueryStatementType::Select));
    let job = stats.job.expect("a job for a result past the inline limit");
    let details = db.get_job(&job).await.expect("get job");
    assert_eq!(details.reference.job_id, job.job_id);
    db.delete_job(&job).await.expect("delete job");
    assert!(db.get_job(&job).await.is_err());

    // A short query: no job, its rows inline; an empty result; the default dataset and a
    // positional parameter.
    let (one, stats) = db
        .fluent()
        .query("SELECT id AS n, id * id AS sq FROM orders WHERE id = ?")
        .default_dataset(SHOP)
        .positional_param(2)
        .obj::<N>()
        .query_with_stats()
        .await
        .expect("short query");
    assert_eq!(one, [N { n: 2, sq: 4 }]);
    assert!(stats.job.is_none(), "{stats:?}");
    assert_eq!(stats.total_rows, Some(1));
    let none: Vec<N> = db
        .fluent()
        .query("SELECT n, n AS sq FROM UNNEST([1, 2]) AS n WHERE n > 5")
        .obj::<N>()
        .query()
        .await
        .expect("empty result");
    assert!(none.is_empty());

    // An invalid query is an error naming the problem.
    let err = db
        .fluent()
        .query("SELECT no_such_column FROM shop.orders")
        .execute()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no_such_column"), "{err}");

    // A dataset with a table in it is not deleted unless asked to.
    assert!(db.fluent().schema().dataset(SHOP).delete().await.is_err());
    db.fluent()
        .schema()
        .dataset(SHOP)
        .dangerously_delete_with_contents()
        .await
        .expect("delete dataset");
    assert!(db.fluent().schema().dataset(SHOP).get().await.is_err());
}

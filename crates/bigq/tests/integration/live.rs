//! Against real BigQuery. Runs only when `BIGQ_LIVE_TESTS=1` and `GOOGLE_CLOUD_PROJECT` are
//! set, with Application Default Credentials; CI has neither and skips it (and says so).

use bigq::Client;

fn live() -> bool {
    let on = std::env::var("BIGQ_LIVE_TESTS").is_ok_and(|v| v == "1")
        && std::env::var("GOOGLE_CLOUD_PROJECT").is_ok_and(|v| !v.is_empty());
    if !on {
        eprintln!("skipped: set BIGQ_LIVE_TESTS=1 and GOOGLE_CLOUD_PROJECT to run live tests");
    }
    on
}

#[tokio::test]
async fn live_short_query_and_job_query() {
    if !live() {
        return;
    }
    let client = Client::from_env().await.unwrap();
    let short = client
        .query("SELECT 1 AS x")
        .use_query_cache(false)
        .run()
        .await
        .unwrap();
    let stats = short.stats().clone();
    let rows: Vec<(i64,)> = short.fetch_all().await.unwrap();
    assert_eq!(rows, vec![(1,)]);
    assert!(stats.query_id.is_some() || stats.job_reference.is_some());

    let job = client
        .query("SELECT 1 AS x")
        .job_creation_required(true)
        .run()
        .await
        .unwrap();
    assert!(job.job_reference().is_some());
    assert_eq!(
        job.stats().job_creation_reason.as_deref(),
        Some("REQUESTED")
    );

    let many = client
        .query("SELECT n, CAST(n AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 200000)) AS n")
        .run()
        .await
        .unwrap();
    let all: Vec<(i64, String)> = many.fetch_all().await.unwrap();
    assert_eq!(all.len(), 200_000);
}

/// A result larger than the first response is read through Storage Read from the job's
/// destination table; an ORDER BY result comes back in order.
#[tokio::test]
async fn live_large_result_through_storage_read() {
    if !live() {
        return;
    }
    let client = Client::from_env().await.unwrap();
    let sql =
        "SELECT n, REPEAT('x', 100) AS pad FROM UNNEST(GENERATE_ARRAY(1, 300000)) AS n ORDER BY n";
    let results = client.query(sql).page_size(1000).run().await.unwrap();
    assert!(results.reads_with_storage_api());
    let rows: Vec<(i64, String)> = results.fetch_all().await.unwrap();
    assert_eq!(rows.len(), 300_000);
    assert!(
        rows.iter()
            .enumerate()
            .all(|(i, (n, _))| *n == i as i64 + 1)
    );
}

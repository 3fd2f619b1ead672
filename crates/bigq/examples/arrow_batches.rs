//! Streams a query result as Arrow record batches, page by page, without holding the whole
//! result in memory.
//!
//! `BIGQUERY_EMULATOR_HOST=127.0.0.1:9050 GOOGLE_CLOUD_PROJECT=test-project cargo run -p bigq --example arrow_batches`

use futures::StreamExt;

#[tokio::main]
async fn main() -> bigq::Result<()> {
    let client = bigq::Client::from_env().await?;
    let mut batches = client
        .query("SELECT n, n * n AS square, CAST(n AS STRING) AS label FROM UNNEST(GENERATE_ARRAY(1, 100000)) AS n")
        .page_size(20_000)
        .batches()
        .await?;
    println!("schema: {:?}", batches.schema());
    let (mut rows, mut count) = (0usize, 0usize);
    while let Some(batch) = batches.next().await {
        let batch = batch?;
        rows += batch.num_rows();
        count += 1;
    }
    println!("{rows} rows in {count} batches");
    Ok(())
}

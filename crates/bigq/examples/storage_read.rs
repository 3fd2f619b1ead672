//! Reads a table through the Storage Read API, every stream on its own task, as typed rows
//! decoded next to the network reads.
//!
//! `GOOGLE_CLOUD_PROJECT=my-project cargo run -p bigq --example storage_read -- dataset.table`
//! (or with `BIGQUERY_STORAGE_EMULATOR_HOST=127.0.0.1:9060` for an emulator).

use bigq::read::Filter;
use futures::StreamExt;

#[derive(serde::Deserialize)]
struct Row {
    id: i64,
    name: Option<String>,
}

#[tokio::main]
async fn main() -> bigq::Result<()> {
    let table = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "my_dataset.my_table".into());
    let client = bigq::Client::from_env().await?;
    let mut rows = client
        .read(&table)
        .selected_fields(["id", "name"])
        .row_restriction(Filter::col("id").ge(0))
        .rows::<Row>()
        .await?;
    println!("{} streams", rows.stream_count());
    let (mut n, mut named) = (0u64, 0u64);
    let mut max_id = i64::MIN;
    while let Some(row) = rows.next().await {
        let row = row?;
        n += 1;
        named += row.name.is_some() as u64;
        max_id = max_id.max(row.id);
    }
    println!("{n} rows, {named} with a name, largest id {max_id}");
    Ok(())
}

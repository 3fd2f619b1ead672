//! Writes rows through the Storage Write API: the `_default` stream (at least once) and a
//! PENDING stream committed at the end (all rows or none).
//!
//! `cargo run -p bigq --example storage_write -- dataset.table` against a table with columns
//! `id INT64 NOT NULL, name STRING, day DATE, amount NUMERIC`; set `BIGQUERY_EMULATOR_HOST`
//! and `BIGQUERY_STORAGE_EMULATOR_HOST` to use an emulator.

use bigq::value::{Date, Numeric};

#[derive(serde::Serialize)]
struct Row {
    id: i64,
    name: Option<String>,
    day: Date,
    amount: Numeric,
}

#[tokio::main]
async fn main() -> bigq::Result<()> {
    let table = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "my_dataset.my_table".to_string());
    let client = bigq::Client::from_env().await?;
    let rows: Vec<Row> = (0..10_000)
        .map(|id| Row {
            id,
            name: (id % 3 != 0).then(|| format!("row {id}")),
            day: Date::new(19_000 + (id % 365) as i32),
            amount: Numeric::from_i64(id),
        })
        .collect();

    let mut writer = client.write(&table).default_stream().open().await?;
    for chunk in rows.chunks(1000) {
        writer.append(chunk).await?;
    }
    let summary = writer.finish().await?;
    println!(
        "_default: {} rows in {} requests, {} bytes, {} retries",
        summary.rows_written, summary.requests, summary.bytes_sent, summary.retries
    );

    let mut writer = client.write(&table).pending().open().await?;
    writer.append(&rows).await?;
    let summary = writer.commit().await?;
    println!(
        "pending: {} rows committed at {:?}",
        summary.rows_written, summary.commit_time
    );
    Ok(())
}

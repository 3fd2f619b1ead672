//! The main job: create a dataset and a table, insert rows, query them with parameters, and
//! print typed rows and the query statistics.
//!
//! Runs against whatever `Client::from_env` finds: `BIGQUERY_EMULATOR_HOST` for an emulator,
//! otherwise `GOOGLE_CLOUD_PROJECT` with Application Default Credentials.
//! `scripts/quickstart.sh` starts a local emulator when no project is configured.

use bigq::admin::{Dataset, Table};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq::value::{Date, Numeric};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
struct Order {
    id: i64,
    customer: String,
    amount: Numeric,
    placed: Date,
    items: Vec<String>,
}

#[tokio::main]
async fn main() -> bigq::Result<()> {
    let client = bigq::Client::from_env().await?;
    let dataset = format!("bigq_quickstart_{}", std::process::id());
    client
        .create_dataset(Dataset::new(&dataset).with_description("bigq quickstart"))
        .await?;
    let result = run(&client, &dataset).await;
    // Clean up whatever happened.
    client.delete_dataset(&dataset, true).await?;
    result
}

async fn run(client: &bigq::Client, dataset: &str) -> bigq::Result<()> {
    let table = format!("{dataset}.orders");
    let schema = TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("customer", FieldType::String),
        TableFieldSchema::new("amount", FieldType::Numeric),
        TableFieldSchema::new("placed", FieldType::Date),
        TableFieldSchema::new("items", FieldType::String).with_mode(FieldMode::Repeated),
    ]);
    client.create_table(Table::new(&table, schema)).await?;
    let orders: Vec<Order> = (1..=6)
        .map(|i| Order {
            id: i,
            customer: ["ada", "grace", "linus"][i as usize % 3].to_string(),
            amount: format!("{}.{:02}", i * 10, i * 7 % 100)
                .parse()
                .expect("a valid NUMERIC"),
            placed: Date::from_ymd(2024, 1, i as u32).expect("a valid date"),
            items: (0..i % 3).map(|k| format!("item-{k}")).collect(),
        })
        .collect();
    client.insert_rows(&table, &orders).await?;

    let results = client
        .query(format!(
            "SELECT id, customer, amount, placed, items FROM `{table}` \
             WHERE placed >= @since AND customer IN UNNEST(@who) ORDER BY id"
        ))
        .param("since", Date::from_ymd(2024, 1, 2).expect("a valid date"))
        .param("who", vec!["ada", "grace"])
        .run()
        .await?;
    let stats = results.stats().clone();
    let rows: Vec<Order> = results.fetch_all().await?;
    for r in &rows {
        println!("{r:?}");
    }
    println!(
        "{} rows; job: {:?}; query id: {:?}; bytes processed: {:?}; cache hit: {:?}",
        rows.len(),
        stats.job_reference.map(|j| j.job_id),
        stats.query_id,
        stats.total_bytes_processed,
        stats.cache_hit
    );
    Ok(())
}

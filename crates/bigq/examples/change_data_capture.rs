//! Change data capture through the Storage Write API: upserts and deletes merged into a
//! table by its primary key, with sequence numbers that order the changes of each key
//! whatever order they arrive in.
//!
//! `cargo run -p bigq --example change_data_capture` runs against bigq-emulator in-process.

use bigq::admin::{Dataset, Table};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use bigq::write::Change;

#[derive(serde::Serialize)]
struct Account {
    id: i64,
    owner: String,
    balance: i64,
}

#[derive(serde::Serialize)]
struct AccountId {
    id: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let emulator = bigq_emulator::Emulator::start().await?;
    let client = bigq::Client::builder()
        .with_project(emulator.project())
        .with_emulator(emulator.rest_endpoint())
        .with_emulator_grpc(emulator.grpc_endpoint())
        .build()
        .await?;
    client.create_dataset(Dataset::new("bank")).await?;
    let schema = TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("owner", FieldType::String),
        TableFieldSchema::new("balance", FieldType::Int64),
    ]);
    // Change rows need a primary key (NOT ENFORCED, as BigQuery's are).
    client
        .create_table(Table::new("bank.accounts", schema).with_primary_key(["id"]))
        .await?;

    // Only the `_default` stream takes change rows.
    let mut writer = client
        .write("bank.accounts")
        .default_stream()
        .open()
        .await?;
    let account = |id, owner: &str, balance| Account {
        id,
        owner: owner.to_string(),
        balance,
    };
    writer.upsert(&account(1, "ada", 100)).await?;
    writer.upsert(&account(2, "bob", 50)).await?;
    writer.upsert(&account(1, "ada", 120)).await?; // replaces account 1
    writer.delete(&AccountId { id: 2 }).await?;

    // With sequence numbers, the highest wins: the change numbered 7 arrives first and
    // stays, the one numbered 6 is ignored.
    writer
        .upsert_with_sequence(&account(3, "cy", 70), 7)
        .await?;
    writer
        .upsert_with_sequence(&account(3, "cy", 60), 6)
        .await?;
    // Many at once, with sequence numbers of up to four sections.
    writer
        .append_changes(&[
            Change::upsert(account(4, "di", 10)).with_sequence([1, 0]),
            Change::upsert(account(4, "di", 40)).with_sequence([1, 1]),
        ])
        .await?;
    let summary = writer.finish().await?;
    println!(
        "{} change rows in {} requests",
        summary.rows_written, summary.requests
    );

    let accounts: Vec<(i64, String, i64)> = client
        .query("SELECT id, owner, balance FROM bank.accounts ORDER BY id")
        .fetch_all()
        .await?;
    for (id, owner, balance) in &accounts {
        println!("{id} {owner} {balance}");
    }
    assert_eq!(
        accounts,
        [
            (1, "ada".to_string(), 120),
            (3, "cy".to_string(), 70),
            (4, "di".to_string(), 40)
        ]
    );
    Ok(())
}

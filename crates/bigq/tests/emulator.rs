//! bigq against bigq-emulator, started in-process on a free loopback port for each test.

mod common;
mod scenarios;

use bigq::Client;
use bigq_emulator::Emulator;

async fn start() -> Emulator {
    Emulator::builder()
        .with_project("test-project")
        .start()
        .await
        .expect("start bigq-emulator")
}

async fn client(emu: &Emulator) -> Client {
    Client::builder()
        .with_project(emu.project())
        .with_emulator(emu.rest_endpoint())
        // Large query results are read through its Storage Read side.
        .with_emulator_grpc(emu.grpc_endpoint())
        .build()
        .await
        .expect("client")
}

#[tokio::test]
async fn create_insert_query_typed_and_arrow() {
    let emu = start().await;
    let client = client(&emu).await;
    scenarios::create_insert_query_typed_and_arrow(&client).await;
    emu.shutdown().await;
}

#[tokio::test]
async fn pages_stream_in_order() {
    let emu = start().await;
    let client = client(&emu).await;
    scenarios::pages_stream_in_order(&client).await;
    emu.shutdown().await;
}

#[tokio::test]
async fn scalar_types_and_struct_params() {
    let emu = start().await;
    let client = client(&emu).await;
    scenarios::scalar_types_and_struct_params(&client).await;
    emu.shutdown().await;
}

#[tokio::test]
async fn errors_are_typed() {
    let emu = start().await;
    let client = client(&emu).await;
    scenarios::errors_are_typed(&client).await;
    emu.shutdown().await;
}

#[tokio::test]
async fn dml_and_dry_run_statistics() {
    let emu = start().await;
    let client = client(&emu).await;
    scenarios::dml_and_dry_run_statistics(&client).await;
    emu.shutdown().await;
}

#[tokio::test]
async fn query_into_destination_table_and_get_job() {
    let emu = start().await;
    let client = client(&emu).await;
    scenarios::query_into_destination_table_and_get_job(&client).await;
    emu.shutdown().await;
}

#[tokio::test]
async fn large_result_every_row_once_through_storage_read() {
    let emu = start().await;
    let client = client(&emu).await;
    assert!(
        scenarios::large_result_every_row_once(&client).await,
        "a client with bigq-emulator's Storage endpoint reads large results through it"
    );
    emu.shutdown().await;
}

//! bigq against bigq-emulator, started in-process on free loopback ports for each test:
//! every scenario over both transports, REST (`rest::`) and the v2 gRPC services
//! (`grpc::`), with large results read through the emulator's Storage Read side.

use crate::scenarios;

use bigq::{Client, Transport};
use bigq_emulator::Emulator;

async fn start() -> Emulator {
    Emulator::builder()
        .with_project("test-project")
        .start()
        .await
        .expect("start bigq-emulator")
}

async fn client(emu: &Emulator, transport: Transport) -> Client {
    Client::builder()
        .with_project(emu.project())
        .with_emulator(emu.rest_endpoint())
        .with_emulator_grpc(emu.grpc_endpoint())
        .with_transport(transport)
        .build()
        .await
        .expect("client")
}

/// Runs `scenario` against a fresh emulator with a client on `transport`.
async fn run<F: AsyncFnOnce(&Client)>(transport: Transport, scenario: F) {
    let emu = start().await;
    let client = client(&emu, transport).await;
    assert_eq!(client.transport(), transport);
    scenario(&client).await;
    emu.shutdown().await;
}

async fn every_row_once_through_storage_read(client: &Client) {
    assert!(
        scenarios::large_result_every_row_once(client).await,
        "a client with bigq-emulator's Storage endpoint reads large results through it"
    );
}

/// One test per scenario and transport.
macro_rules! over_both_transports {
    ($($scenario:path => $name:ident),* $(,)?) => {
        mod rest {
            use super::*;
            $(#[tokio::test]
            async fn $name() {
                run(Transport::Rest, $scenario).await;
            })*
        }
        mod grpc {
            use super::*;
            $(#[tokio::test]
            async fn $name() {
                run(Transport::Grpc, $scenario).await;
            })*
        }
    };
}

over_both_transports! {
    scenarios::create_insert_query_typed_and_arrow => create_insert_query_typed_and_arrow,
    scenarios::pages_stream_in_order => pages_stream_in_order,
    scenarios::scalar_types_and_struct_params => scalar_types_and_struct_params,
    scenarios::errors_are_typed => errors_are_typed,
    scenarios::dml_and_dry_run_statistics => dml_and_dry_run_statistics,
    scenarios::query_into_destination_table_and_get_job => query_into_destination_table_and_get_job,
    every_row_once_through_storage_read => large_result_every_row_once_through_storage_read,
}

//! bigq against bqemulator, an independent BigQuery emulator (REST over DuckDB), on
//! loopback. bqemulator diverges from BigQuery in known ways (query errors as HTTP 200,
//! NUMERIC padded to scale 9, TIMESTAMP always int64, no short query mode, `destinationTable` of query jobs ignored); the
//! tests work around them and never rely on them.

use crate::common;
use crate::scenarios;

#[tokio::test]
async fn create_insert_query_typed_and_arrow() {
    let _serial = common::serial().await;
    let client = common::rest_client().await;
    scenarios::create_insert_query_typed_and_arrow(&client).await;
}

#[tokio::test]
async fn pages_stream_in_order() {
    let _serial = common::serial().await;
    let client = common::rest_client().await;
    scenarios::pages_stream_in_order(&client).await;
}

#[tokio::test]
async fn scalar_types_and_struct_params() {
    let _serial = common::serial().await;
    let client = common::rest_client().await;
    scenarios::scalar_types_and_struct_params(&client).await;
}

#[tokio::test]
async fn errors_are_typed() {
    let _serial = common::serial().await;
    let client = common::rest_client().await;
    scenarios::errors_are_typed(&client).await;
}

#[tokio::test]
async fn dml_and_dry_run_statistics() {
    let _serial = common::serial().await;
    let client = common::rest_client().await;
    scenarios::dml_and_dry_run_statistics(&client).await;
}

#[tokio::test]
async fn large_result_every_row_once() {
    let _serial = common::serial().await;
    let client = common::rest_client().await;
    assert!(!scenarios::large_result_every_row_once(&client).await);
}

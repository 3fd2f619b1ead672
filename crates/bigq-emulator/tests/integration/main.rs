//! The integration tests, one module per subject, linked into one test binary (each
//! binary of its own links the whole dependency tree again: time and disk).

// Shared set-up.
mod common;

mod alter;
mod bigquery_crate;
mod copy;
mod cost;
mod data_dir;
mod dml;
mod googlesql;
mod grpc_v2;
mod http_recordings;
mod load;
mod python_client;
mod rest;
mod soak;
mod storage_read;
mod storage_write;
mod stress;
mod tpch;

//! The integration tests, one module per subject, linked into one test binary (each
//! binary of its own links the whole dependency tree again: time and disk).

// Shared set-up.
mod common;
mod netbed;
mod read_scenarios;
mod scenarios;

mod bigquery_fake;
mod bqemulator;
mod deadlines;
mod emulator;
mod emulator_cdc;

mod emulator_storage_read;
mod emulator_storage_write;
mod faults;
mod jobs;
mod live;
mod mock_rest;
mod schema_derive;
mod storage_read;
mod storage_write;
mod table_options;
mod table_sync;
mod tracing_spans;

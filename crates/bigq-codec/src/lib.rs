//! Sans-IO codecs for BigQuery.
//!
//! This crate holds everything bigq does to bytes without touching a network or a runtime:
//!
//! - [`schema`]: BigQuery table schemas and their mapping onto Arrow.
//! - [`value`]: BigQuery's value types (exact [`Numeric`](value::Numeric) and
//!   [`BigNumeric`](value::BigNumeric), civil [`Date`](value::Date), [`Time`](value::Time),
//!   [`DateTime`](value::DateTime), [`Timestamp`](value::Timestamp), [`Interval`](value::Interval),
//!   [`Range`](value::Range), [`Json`](value::Json), [`Geography`](value::Geography)) with their
//!   canonical text forms.
//! - [`json`]: a push decoder that turns a REST v2 response body (`jobs.query`,
//!   `jobs.getQueryResults`, `tabledata.list`) into Arrow record batches in one streaming pass.
//! - [`de`]: the one Arrow-to-serde decoder every read path uses for typed rows.
//! - [`ipc`]: Arrow IPC messages as the Storage APIs carry them, read and written.
//! - [`proto`]: serde rows into protobuf rows for Storage Write, with their descriptor.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
// Bytes from servers and values from users must never panic: every unwrap, expect, index or
// slice left in non-test code carries a narrow allow saying why it cannot fail.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod de;
mod error;
pub mod int64_text;
pub mod ipc;
pub mod json;
pub mod proto;
pub mod schema;
pub mod value;

pub use error::{CodecError, CodecErrorKind};

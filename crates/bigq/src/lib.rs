//! # bigq — a fast, complete BigQuery client
//!
//! bigq runs queries over BigQuery's REST API and decodes results in one streaming pass
//! straight into Apache Arrow, then into your own types with serde.
//!
//! ```no_run
//! use bigq::Client;
//!
//! #[derive(serde::Deserialize, Debug)]
//! struct Row {
//!     word: String,
//!     n: i64,
//! }
//!
//! # async fn run() -> bigq::Result<()> {
//! // GOOGLE_CLOUD_PROJECT, Application Default Credentials, or BIGQUERY_EMULATOR_HOST.
//! let client = Client::from_env().await?;
//! let results = client
//!     .query("SELECT word, COUNT(*) AS n FROM UNNEST(SPLIT(@text, ' ')) AS word GROUP BY word")
//!     .param("text", "a b a")
//!     .run()
//!     .await?;
//! println!("bytes processed: {:?}", results.stats().total_bytes_processed);
//! let rows: Vec<Row> = results.fetch_all().await?;
//! # Ok(()) }
//! ```
//!
//! - Typed rows: any `T: serde::Deserialize`; NULL needs `Option`, REPEATED is `Vec`, RECORD is
//!   a nested struct. BigQuery's own types are in [`value`].
//! - Arrow: [`query::QueryBuilder::batches`] gives a `Stream` of `RecordBatch`es.
//! - Short query mode is the default; [`query::QueryBuilder::job_creation_required`] turns
//!   it off.
//! - Errors: one [`Error`] with [`Error::is_not_found`], [`Error::is_retryable`],
//!   [`Error::reason`], and decode errors that name the column and row.
#![warn(missing_docs)]

pub mod admin;
mod auth;
mod client;
mod error;
pub mod query;
mod retry;

pub use auth::{BIGQUERY_SCOPE, Credentials};
pub use client::{Client, ClientBuilder};
pub use error::{CodecError, Error, ErrorKind, Result};
pub use retry::RetryPolicy;

/// BigQuery schemas.
pub mod schema {
    pub use bigq_codec::schema::{
        FieldMode, FieldType, RangeElementType, TableFieldSchema, TableSchema,
    };
}

/// BigQuery's value types.
pub mod value {
    pub use bigq_codec::value::*;
}

/// Arrow, as bigq uses it (the `arrow-array` and `arrow-schema` crates).
pub mod arrow {
    pub use arrow_array::{self as array, RecordBatch};
    pub use arrow_schema::{self as schema, SchemaRef};
}

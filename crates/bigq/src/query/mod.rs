//! Queries: the builder, the run (job retries, polling), the results and their pages, over
//! the client's transport (REST `jobs.query` / `jobs.getQueryResults`, or the v2 gRPC
//! `JobService`).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> bigq::Result<()> {
//! # let emulator = bigq_emulator::Emulator::builder().start().await.unwrap();
//! # let client = bigq::Client::builder()
//! #     .with_project(emulator.project())
//! #     .with_emulator(emulator.rest_endpoint())
//! #     .build()
//! #     .await?;
//! #[derive(serde::Deserialize, Debug, PartialEq)]
//! struct Row { name: String, total: i64 }
//!
//! let rows: Vec<Row> = client
//!     .query(
//!         "SELECT name, SUM(n) AS total \
//!          FROM (SELECT 'a' AS name, 1 AS n UNION ALL SELECT 'b', 2 UNION ALL SELECT 'a', 3) \
//!          WHERE n >= @min GROUP BY name ORDER BY name",
//!     )
//!     .param("min", 1i64)
//!     .fetch_all()
//!     .await?;
//! assert_eq!(rows, [Row { name: "a".into(), total: 4 }, Row { name: "b".into(), total: 2 }]);
//! # Ok(()) }
//! ```

mod builder;
pub(crate) mod grpc;
pub(crate) mod pages;
mod params;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod rest;
mod results;
pub(crate) mod rows;

pub use builder::QueryBuilder;
pub use pages::BatchStream;
pub use params::{Param, ParamType, ParamValue, ToParam};
pub use request::WriteDisposition;
pub use response::{DmlStats, JobReference, QueryStats};
pub use results::QueryResults;
pub use rows::RowStream;

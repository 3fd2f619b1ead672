//! # bigq-emulator
//!
//! A local BigQuery: the REST v2 API answered with BigQuery's exact shapes, over a real
//! SQL engine (Apache DataFusion, with GoogleSQL parsed in BigQuery's dialect and mapped
//! onto it). Runs in-process for tests or as the `bigq-emulator` binary.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let emu = bigq_emulator::Emulator::builder()
//!     .with_project("test-project")
//!     .start()
//!     .await?;
//! println!("REST endpoint: {}", emu.rest_endpoint());
//! println!("Storage API (gRPC) endpoint: {}", emu.grpc_endpoint());
//! emu.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! ## Keeping data across restarts
//!
//! In memory by default. With [`EmulatorBuilder::with_data_dir`] (`--data-dir DIR` for the
//! binary) datasets, tables (schema, metadata) and rows are kept in a directory and loaded
//! again at the next start:
//!
//! - `DIR/catalog.json`: projects, datasets and tables with their schemas and metadata, no
//!   rows; rewritten whole (temporary file + rename) when any of it changes;
//! - `DIR/tables/{project}/{dataset}/{table}/{generation}-{sequence}.arrows`: the rows as
//!   Arrow IPC streams in the table's Arrow layout. A commit that only adds rows (DML
//!   `INSERT`, `insertAll`, a Storage Write append, commit or flush) adds one segment; one
//!   that changes existing rows (`UPDATE`, `DELETE`, `MERGE`, `TRUNCATE`, `ALTER TABLE`,
//!   `CREATE OR REPLACE`) writes the table as a new generation and deletes the old one.
//!   `DROP TABLE` deletes the table's folder.
//!
//! Files are written (temporary name, then rename) while the change commits, before the
//! request that made it is answered, so a crash of the emulator loses at most the requests
//! in flight; shutdown ([`Emulator::shutdown`], dropping the [`Emulator`], SIGINT or SIGTERM
//! for the binary) syncs them to the disk. Storage Write streams that are not yet committed
//! (PENDING before `BatchCommitWriteStreams`, BUFFERED rows not flushed) and query jobs
//! live in memory only.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let emu = bigq_emulator::Emulator::builder()
//!     .with_data_dir("/tmp/bigq-emulator-data")
//!     .start()
//!     .await?;
//! // ... create tables, write rows ...
//! emu.shutdown().await; // the next start on the same directory sees them again
//! # Ok(())
//! # }
//! ```
//!
//! Layout: `emulator` is the front door ([`Emulator`], [`EmulatorBuilder`]); `state` is what
//! both wires serve (the catalog, the SQL engine over it, query jobs and sessions); `catalog`
//! holds projects, datasets and tables (Arrow batches in memory, and the data directory in
//! `catalog/persist.rs`); `sql/` parses, rewrites and runs GoogleSQL (`exec/` runs scripts,
//! queries, DDL and DML, `rewrite/` maps GoogleSQL onto DataFusion, `functions/` lists and
//! makes BigQuery's functions by family); `jobs` keeps jobs; `load/` runs load jobs from `gs://` URIs, which `gcs` serves from
//! the `--gcs-dir` directory, and `copy` runs copy jobs; `api/` holds the operations
//! both wires share, over which `rest/` (REST v2: HTTP and JSON) and `grpc/` (the Storage Read
//! and Write APIs and the v2 Job, Dataset and Table services, on a port of their own) decode
//! requests and encode answers.
#![warn(missing_docs)]

mod api;
mod catalog;
mod copy;
mod emulator;
mod error;
mod faults;
mod gcs;
mod grpc;
mod insert_ids;
mod jobs;
mod load;
mod memory;
mod rest;
mod sql;
mod state;

pub use crate::emulator::{Emulator, EmulatorBuilder};
pub use crate::error::BqError;
pub use crate::faults::{FaultError, FaultSpec, Faults};
pub use crate::memory::Expiry;
pub use crate::rest::ReadTimeouts;

//! # bigq-emulator
//!
//! A local BigQuery over a real SQL engine (Apache DataFusion, with GoogleSQL parsed in
//! BigQuery's dialect and mapped onto it).
//!
//! Layout: `catalog` holds projects, datasets and tables (Arrow batches in memory);
//! `sql/` parses, rewrites and runs GoogleSQL.
#![warn(missing_docs)]

pub mod catalog;
pub mod error;
pub mod sql;

pub use crate::catalog::Catalog;
pub use crate::error::BqError;

//! A query's settings as the builder collects them, for a transport to encode (REST's
//! `jobs.query` body in [`super::rest`], the v2 `QueryRequest` in [`super::grpc`]).

use std::collections::BTreeMap;
use std::time::Duration;

use super::params::Param;
use crate::error::{Error, Result};
use crate::ids::DatasetId;

/// What a query does to a destination table that already has rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteDisposition {
    /// Replace the table's rows (`WRITE_TRUNCATE`).
    Truncate,
    /// Add to them (`WRITE_APPEND`).
    Append,
    /// Fail unless the table is empty (`WRITE_EMPTY`, BigQuery's default).
    Empty,
}

impl WriteDisposition {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WriteDisposition::Truncate => "WRITE_TRUNCATE",
            WriteDisposition::Append => "WRITE_APPEND",
            WriteDisposition::Empty => "WRITE_EMPTY",
        }
    }
}

/// The settings of one query, the same whichever transport sends it.
#[derive(Debug, Clone)]
pub(crate) struct QueryRequest {
    /// The project the query runs (and is billed) in.
    pub(crate) project: String,
    pub(crate) sql: String,
    pub(crate) named: Vec<(String, Param)>,
    pub(crate) positional: Vec<Param>,
    pub(crate) default_dataset: Option<DatasetId>,
    pub(crate) location: Option<String>,
    pub(crate) dry_run: bool,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) maximum_bytes_billed: Option<i64>,
    pub(crate) use_query_cache: Option<bool>,
    pub(crate) job_creation_required: bool,
    pub(crate) page_size: Option<u32>,
    pub(crate) write_disposition: Option<WriteDisposition>,
    /// `jobTimeoutMs`: BigQuery stops the job after this long.
    pub(crate) job_timeout: Option<Duration>,
}

impl QueryRequest {
    pub(crate) fn new(project: String, sql: String, location: Option<String>) -> Self {
        QueryRequest {
            project,
            sql,
            named: Vec::new(),
            positional: Vec::new(),
            default_dataset: None,
            location,
            dry_run: false,
            labels: BTreeMap::new(),
            maximum_bytes_billed: None,
            use_query_cache: None,
            job_creation_required: false,
            page_size: None,
            write_disposition: None,
            job_timeout: None,
        }
    }

    /// `jobTimeoutMs` in milliseconds (at least one: zero would mean "no limit").
    pub(crate) fn job_timeout_ms(&self) -> Option<i64> {
        self.job_timeout
            .map(|t| i64::try_from(t.as_millis()).unwrap_or(i64::MAX).max(1))
    }

    pub(crate) fn check_params(&self) -> Result<()> {
        if !self.named.is_empty() && !self.positional.is_empty() {
            return Err(Error::config(
                "a query cannot mix named (@p) and positional (?) parameters",
            ));
        }
        Ok(())
    }
}

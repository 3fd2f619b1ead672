//! Datasets, tables, jobs, `tabledata.list` and `tabledata.insertAll`.

mod datasets;
mod grpc;
mod jobs;
mod tabledata;
mod tables;

pub use datasets::{Dataset, DatasetListItem};
pub(crate) use grpc::schema_from_proto;
pub use jobs::{Job, JobError};
pub use tabledata::{InsertError, TableDataBuilder};
pub use tables::{Table, TableListItem};

use crate::error::{Error, Result};

/// A dataset id, with its project.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DatasetId {
    /// The project.
    pub project: String,
    /// The dataset.
    pub dataset: String,
}

/// A table id, with its project and dataset.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableId {
    /// The project.
    pub project: String,
    /// The dataset.
    pub dataset: String,
    /// The table.
    pub table: String,
}

impl std::fmt::Display for TableId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.project, self.dataset, self.table)
    }
}

fn check_part(kind: &str, s: &str, whole: &str) -> Result<()> {
    if s.is_empty() || s.contains('/') {
        return Err(Error::config(format!("invalid {kind} in {whole:?}")));
    }
    Ok(())
}

/// Parses `dataset` or `project.dataset` (or `project:dataset`).
pub(crate) fn parse_dataset(default_project: &str, s: &str) -> Result<DatasetId> {
    let (p, d) = match s.split_once(':').or_else(|| s.split_once('.')) {
        Some((p, d)) => (p.to_string(), d.to_string()),
        None => (default_project.to_string(), s.to_string()),
    };
    check_part("project", &p, s)?;
    check_part("dataset", &d, s)?;
    if d.contains('.') {
        return Err(Error::config(format!("invalid dataset id {s:?}")));
    }
    Ok(DatasetId {
        project: p,
        dataset: d,
    })
}

/// Parses `dataset.table` or `project.dataset.table` (or `project:dataset.table`).
pub(crate) fn parse_table(default_project: &str, s: &str) -> Result<TableId> {
    let (project, rest) = match s.split_once(':') {
        Some((p, r)) => (Some(p), r),
        None => (None, s),
    };
    let parts: Vec<&str> = rest.split('.').collect();
    let (p, d, t) = match (project, parts.as_slice()) {
        (Some(p), [d, t]) => (p, *d, *t),
        (None, [d, t]) => (default_project, *d, *t),
        (None, [p, d, t]) => (*p, *d, *t),
        _ => {
            return Err(Error::config(format!(
                "invalid table id {s:?}: use dataset.table or project.dataset.table"
            )));
        }
    };
    check_part("project", p, s)?;
    check_part("dataset", d, s)?;
    check_part("table", t, s)?;
    Ok(TableId {
        project: p.to_string(),
        dataset: d.to_string(),
        table: t.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(parse_table("p", "d.t").unwrap().to_string(), "p.d.t");
        assert_eq!(parse_table("p", "q.d.t").unwrap().project, "q");
        assert_eq!(parse_table("p", "q:d.t").unwrap().project, "q");
        assert!(parse_table("p", "t").is_err());
        assert!(parse_table("p", "a.b.c.d").is_err());
        assert!(parse_table("p", "d..t").is_err());
        assert_eq!(parse_dataset("p", "d").unwrap().project, "p");
        assert_eq!(parse_dataset("p", "q.d").unwrap().project, "q");
    }
}

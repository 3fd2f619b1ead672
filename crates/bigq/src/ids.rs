//! Dataset and table ids: typed, parsed from `project.dataset.table` text, and accepted by
//! the client's methods either way.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A dataset id, with its project.
///
/// Parsed from `project.dataset` (or `project:dataset`); where a method takes
/// [`IntoDatasetId`], a bare `dataset` is in the client's project.
///
/// ```
/// use bigq::DatasetId;
/// let id: DatasetId = "my-project.sales".parse()?;
/// assert_eq!(id, DatasetId::new("my-project", "sales"));
/// assert_eq!(id.to_string(), "my-project.sales");
/// assert_eq!(id.table("orders").to_string(), "my-project.sales.orders");
/// assert!("sales".parse::<DatasetId>().is_err(), "no project");
/// # Ok::<(), bigq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DatasetId {
    /// The project.
    pub project: String,
    /// The dataset.
    pub dataset: String,
}

/// A table id, with its project and dataset.
///
/// Parsed from `project.dataset.table` (or `project:dataset.table`); where a method takes
/// [`IntoTableId`], `dataset.table` is in the client's project.
///
/// ```
/// use bigq::TableId;
/// let id: TableId = "my-project.sales.orders".parse()?;
/// assert_eq!(id, TableId::new("my-project", "sales", "orders"));
/// assert_eq!(id.to_string(), "my-project.sales.orders");
/// assert_eq!("my-project:sales.orders".parse::<TableId>()?, id);
/// assert!("sales.orders".parse::<TableId>().is_err(), "no project");
/// # Ok::<(), bigq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableId {
    /// The project.
    pub project: String,
    /// The dataset.
    pub dataset: String,
    /// The table.
    pub table: String,
}

impl DatasetId {
    /// A dataset id from its parts.
    pub fn new(project: impl Into<String>, dataset: impl Into<String>) -> Self {
        DatasetId {
            project: project.into(),
            dataset: dataset.into(),
        }
    }

    /// The id of the table `table` in this dataset.
    pub fn table(&self, table: impl Into<String>) -> TableId {
        TableId::new(self.project.clone(), self.dataset.clone(), table)
    }
}

impl TableId {
    /// A table id from its parts.
    pub fn new(
        project: impl Into<String>,
        dataset: impl Into<String>,
        table: impl Into<String>,
    ) -> Self {
        TableId {
            project: project.into(),
            dataset: dataset.into(),
            table: table.into(),
        }
    }

    /// The dataset the table is in.
    pub fn dataset_id(&self) -> DatasetId {
        DatasetId::new(self.project.clone(), self.dataset.clone())
    }

    /// The table's resource path in the Storage APIs
    /// (`projects/{p}/datasets/{d}/tables/{t}`).
    pub(crate) fn path(&self) -> String {
        format!(
            "projects/{}/datasets/{}/tables/{}",
            self.project, self.dataset, self.table
        )
    }
}

impl fmt::Display for DatasetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.project, self.dataset)
    }
}

impl fmt::Display for TableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.project, self.dataset, self.table)
    }
}

impl FromStr for DatasetId {
    type Err = Error;

    /// Parses `project.dataset` or `project:dataset`.
    fn from_str(s: &str) -> Result<Self> {
        if s.contains(['.', ':']) {
            parse_dataset("", s)
        } else {
            Err(Error::config(format!(
                "invalid dataset id {s:?}: use project.dataset"
            )))
        }
    }
}

impl FromStr for TableId {
    type Err = Error;

    /// Parses `project.dataset.table` or `project:dataset.table`.
    fn from_str(s: &str) -> Result<Self> {
        if s.contains(':') || s.split('.').count() == 3 {
            parse_table("", s)
        } else {
            Err(Error::config(format!(
                "invalid table id {s:?}: use project.dataset.table"
            )))
        }
    }
}

/// A table id as the client's methods take it: a [`TableId`], or text in the form
/// `dataset.table` (in the client's project) or `project.dataset.table`.
///
/// Implemented for `&str`, `String`, `&String`, `TableId` and `&TableId`; text that is
/// not a table id is an error of the call it is given to.
pub trait IntoTableId: sealed::Table {}

/// A dataset id as the client's methods take it: a [`DatasetId`], or text in the form
/// `dataset` (in the client's project) or `project.dataset`.
///
/// Implemented for `&str`, `String`, `&String`, `DatasetId` and `&DatasetId`.
pub trait IntoDatasetId: sealed::Dataset {}

mod sealed {
    use super::{DatasetId, Result, TableId};

    /// Resolves an id, with `default_project` for text that names none.
    pub trait Table {
        fn resolve(self, default_project: &str) -> Result<TableId>;
    }

    /// Resolves a dataset id, with `default_project` for text that names none.
    pub trait Dataset {
        fn resolve(self, default_project: &str) -> Result<DatasetId>;
    }
}

impl sealed::Table for &str {
    fn resolve(self, default_project: &str) -> Result<TableId> {
        parse_table(default_project, self)
    }
}

impl sealed::Table for String {
    fn resolve(self, default_project: &str) -> Result<TableId> {
        parse_table(default_project, &self)
    }
}

impl sealed::Table for &String {
    fn resolve(self, default_project: &str) -> Result<TableId> {
        parse_table(default_project, self)
    }
}

impl sealed::Table for TableId {
    fn resolve(self, _: &str) -> Result<TableId> {
        check_table(&self.project, &self.dataset, &self.table, &self.to_string())?;
        Ok(self)
    }
}

impl sealed::Table for &TableId {
    fn resolve(self, default_project: &str) -> Result<TableId> {
        self.clone().resolve(default_project)
    }
}

impl sealed::Dataset for &str {
    fn resolve(self, default_project: &str) -> Result<DatasetId> {
        parse_dataset(default_project, self)
    }
}

impl sealed::Dataset for String {
    fn resolve(self, default_project: &str) -> Result<DatasetId> {
        parse_dataset(default_project, &self)
    }
}

impl sealed::Dataset for &String {
    fn resolve(self, default_project: &str) -> Result<DatasetId> {
        parse_dataset(default_project, self)
    }
}

impl sealed::Dataset for DatasetId {
    fn resolve(self, _: &str) -> Result<DatasetId> {
        let whole = self.to_string();
        check_part("project", &self.project, &whole)?;
        check_part("dataset", &self.dataset, &whole)?;
        Ok(self)
    }
}

impl sealed::Dataset for &DatasetId {
    fn resolve(self, default_project: &str) -> Result<DatasetId> {
        self.clone().resolve(default_project)
    }
}

impl<T: sealed::Table> IntoTableId for T {}
impl<T: sealed::Dataset> IntoDatasetId for T {}

/// Resolves `id` with the client's `project` for text that names none.
pub(crate) fn table_id(project: &str, id: impl IntoTableId) -> Result<TableId> {
    sealed::Table::resolve(id, project)
}

/// Resolves `id` with the client's `project` for text that names none.
pub(crate) fn dataset_id(project: &str, id: impl IntoDatasetId) -> Result<DatasetId> {
    sealed::Dataset::resolve(id, project)
}

fn check_part(kind: &str, s: &str, whole: &str) -> Result<()> {
    if s.is_empty() || s.contains('/') {
        return Err(Error::config(format!("invalid {kind} in {whole:?}")));
    }
    Ok(())
}

fn check_table(p: &str, d: &str, t: &str, whole: &str) -> Result<()> {
    check_part("project", p, whole)?;
    check_part("dataset", d, whole)?;
    check_part("table", t, whole)
}

/// Parses `dataset` or `project.dataset` (or `project:dataset`).
fn parse_dataset(default_project: &str, s: &str) -> Result<DatasetId> {
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
fn parse_table(default_project: &str, s: &str) -> Result<TableId> {
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
    check_table(p, d, t, s)?;
    Ok(TableId::new(p, d, t))
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

    #[test]
    fn typed_and_text_ids_resolve_alike() {
        let typed = TableId::new("q", "d", "t");
        assert_eq!(table_id("p", "q.d.t").unwrap(), typed);
        assert_eq!(table_id("p", &typed).unwrap(), typed);
        assert_eq!(table_id("p", String::from("d.t")).unwrap().project, "p");
        assert!(table_id("p", TableId::new("q", "", "t")).is_err());
        assert!(table_id("p", "q.d/x.t").is_err());
        assert_eq!(
            dataset_id("p", "d").unwrap(),
            DatasetId::new("p", "d"),
            "a bare dataset is in the client's project"
        );
        assert_eq!(
            dataset_id("p", DatasetId::new("q", "d")).unwrap().project,
            "q"
        );
        assert!("q.d.t.x".parse::<TableId>().is_err());
        assert!("d".parse::<DatasetId>().is_err());
        assert_eq!(
            "q:d".parse::<DatasetId>().unwrap(),
            DatasetId::new("q", "d")
        );
    }
}

//! Where names in a query resolve: the project that runs it, the request's default
//! dataset, and a script's or session's temporary tables and variables.

use std::collections::HashSet;

use datafusion::sql::sqlparser::ast::{Expr, Ident, ObjectName, ObjectNamePart};

use crate::catalog::TableRef;
use crate::error::{BqError, BqResult};

/// Where unqualified names resolve.
#[derive(Clone, Debug, Default)]
pub struct NameContext {
    /// The project that runs the query.
    pub project: String,
    /// The default dataset (`defaultDataset` of the request), if any.
    pub default_dataset: Option<(String, String)>,
    /// The temporary tables of the script or session, found first for a one-part name.
    pub temp: Option<TempScope>,
    /// The script's (or session's) variables, by lower-case name, as literals.
    pub vars: Vars,
    /// The script's (or session's) temporary SQL functions.
    pub routines: crate::sql::routines::Routines,
    /// The script's (or session's) open transaction.
    pub transaction: Transaction,
}

/// A script's or session's open transaction: the project's tables as they were when it
/// began (`ROLLBACK` puts them back).
pub type Transaction = std::sync::Arc<
    std::sync::Mutex<
        Option<std::collections::HashMap<TableRef, std::sync::Arc<crate::catalog::Table>>>,
    >,
>;

/// Script variables (`DECLARE`, `SET`), by lower-case name, each as the literal of its value.
pub type Vars = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Expr>>>;

/// Datasets that hold temporary tables start with this (and are not listed).
pub const TEMP_DATASET_PREFIX: &str = "_bigq_temp_";

/// Where a script's or a session's temporary tables live: a hidden dataset, and the names
/// created in it so far (shared by every statement of the script or session).
#[derive(Clone, Debug, Default)]
pub struct TempScope {
    /// The project of the hidden dataset.
    pub project: String,
    /// The hidden dataset.
    pub dataset: String,
    tables: std::sync::Arc<std::sync::Mutex<HashSet<String>>>,
    /// The session's variables.
    pub vars: Vars,
    /// The session's temporary SQL functions.
    pub routines: crate::sql::routines::Routines,
    /// The session's open transaction.
    pub transaction: Transaction,
}

impl TempScope {
    /// A scope with a fresh hidden dataset name in `project` (the dataset is made when the
    /// first temporary table is).
    pub fn new(project: &str) -> Self {
        TempScope {
            project: project.to_string(),
            dataset: format!("{TEMP_DATASET_PREFIX}{}", uuid::Uuid::new_v4().simple()),
            tables: Default::default(),
            vars: Default::default(),
            routines: Default::default(),
            transaction: Default::default(),
        }
    }

    fn table_ref(&self, name: &str) -> TableRef {
        TableRef {
            project: self.project.clone(),
            dataset: self.dataset.clone(),
            table: name.to_ascii_lowercase(),
        }
    }

    /// The temporary table `name`, if the scope made one.
    pub fn get(&self, name: &str) -> Option<TableRef> {
        let tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables
            .contains(&name.to_ascii_lowercase())
            .then(|| self.table_ref(name))
    }

    /// Records the temporary table `name` and returns where it lives.
    pub fn add(&self, name: &str) -> TableRef {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables.insert(name.to_ascii_lowercase());
        self.table_ref(name)
    }
}

/// The parts of a (possibly backquoted, dotted) name: `` `p.d.t` `` is three parts.
pub fn name_parts(name: &ObjectName) -> BqResult<Vec<String>> {
    let mut out = Vec::new();
    for part in &name.0 {
        match part {
            ObjectNamePart::Identifier(id) => {
                if id.quote_style == Some('`') {
                    out.extend(id.value.split('.').map(str::to_string));
                } else {
                    out.push(id.value.clone());
                }
            }
            other => return Err(BqError::unsupported(format!("name part {other}"))),
        }
    }
    Ok(out)
}

/// Resolves a table name to its address.
pub fn resolve(name: &ObjectName, cx: &NameContext) -> BqResult<TableRef> {
    let parts = name_parts(name)?;
    resolve_parts(&parts, cx)
}

pub fn resolve_parts(parts: &[String], cx: &NameContext) -> BqResult<TableRef> {
    match parts {
        [p, d, t] => Ok(TableRef {
            project: p.clone(),
            dataset: d.clone(),
            table: t.clone(),
        }),
        [d, t] => Ok(TableRef {
            project: cx.project.clone(),
            dataset: d.clone(),
            table: t.clone(),
        }),
        [t] => {
            if let Some(temp) = cx.temp.as_ref().and_then(|s| s.get(t)) {
                return Ok(temp);
            }
            match &cx.default_dataset {
                Some((p, d)) => Ok(TableRef {
                    project: p.clone(),
                    dataset: d.clone(),
                    table: t.clone(),
                }),
                None => Err(BqError::invalid_query(format!(
                    "Table \"{t}\" must be qualified with a dataset (e.g. dataset.table)."
                ))),
            }
        }
        _ => Err(BqError::invalid_query(format!(
            "Invalid table name: {}",
            parts.join(".")
        ))),
    }
}

/// The three-part name DataFusion resolves against the catalog.
pub fn qualified_name(t: &TableRef) -> ObjectName {
    let id = |s: &str| ObjectNamePart::Identifier(Ident::with_quote('`', s));
    ObjectName(vec![id(&t.project), id(&t.dataset), id(&t.table)])
}

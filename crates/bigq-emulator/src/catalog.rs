//! The catalog: projects → datasets → tables, with BigQuery schemas and Arrow data in
//! memory, and the DataFusion providers that let SQL see it (catalog = project,
//! schema = dataset).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use bigq_codec::schema::TableFieldSchema;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{CatalogProvider, CatalogProviderList, MemTable, SchemaProvider};
use datafusion::datasource::TableProvider;
use datafusion::error::DataFusionError;

use crate::error::{BqError, BqResult};
use crate::sql::types;

mod persist;

/// Milliseconds since the epoch, as BigQuery reports creation times.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A table's address.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableRef {
    /// Project id.
    pub project: String,
    /// Dataset id.
    pub dataset: String,
    /// Table id.
    pub table: String,
}

impl TableRef {
    /// The table `table` of dataset `dataset` in project `project`.
    pub fn new(
        project: impl Into<String>,
        dataset: impl Into<String>,
        table: impl Into<String>,
    ) -> TableRef {
        TableRef {
            project: project.into(),
            dataset: dataset.into(),
            table: table.into(),
        }
    }
}

impl fmt::Display for TableRef {
    /// BigQuery's `project:dataset.table` form used in error messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}.{}", self.project, self.dataset, self.table)
    }
}

/// Whether a catalog entry is a table or a view.
#[derive(Clone, Debug)]
pub enum TableKind {
    /// A table with data.
    Table,
    /// A view, with its defining GoogleSQL query.
    View {
        /// The view's query text.
        query: String,
    },
}

/// A table: its BigQuery schema and its rows as Arrow batches in the canonical layout.
#[derive(Clone, Debug)]
pub struct Table {
    /// BigQuery columns.
    pub schema: Vec<TableFieldSchema>,
    /// The Arrow schema the batches follow.
    pub arrow_schema: SchemaRef,
    /// The rows.
    pub batches: Vec<RecordBatch>,
    /// Table or view.
    pub kind: TableKind,
    /// Creation time, ms since the epoch.
    pub creation_time: i64,
    /// Last modification time, ms since the epoch.
    pub last_modified_time: i64,
    /// Description.
    pub description: Option<String>,
}

impl Table {
    /// An empty table with this schema.
    pub fn new(schema: Vec<TableFieldSchema>) -> BqResult<Table> {
        let arrow_schema = Arc::new(types::arrow_schema(&schema)?);
        let now = now_millis();
        Ok(Table {
            schema,
            arrow_schema,
            batches: Vec::new(),
            kind: TableKind::Table,
            creation_time: now,
            last_modified_time: now,
            description: None,
        })
    }

    /// The number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// An approximate size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.batches.iter().map(|b| b.get_array_memory_size()).sum()
    }
}

/// A dataset.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Tables by id.
    pub tables: BTreeMap<String, Arc<Table>>,
    /// Creation time, ms since the epoch.
    pub creation_time: i64,
    /// Last modification time, ms since the epoch.
    pub last_modified_time: i64,
    /// Location (`US` unless given).
    pub location: String,
    /// Description.
    pub description: Option<String>,
    /// Friendly name.
    pub friendly_name: Option<String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
}

impl Dataset {
    /// An empty dataset in `location`.
    pub fn new(location: Option<String>) -> Dataset {
        let now = now_millis();
        Dataset {
            tables: BTreeMap::new(),
            creation_time: now,
            last_modified_time: now,
            location: location.unwrap_or_else(|| "US".to_string()),
            description: None,
            friendly_name: None,
            labels: BTreeMap::new(),
        }
    }
}

#[derive(Default, Debug)]
struct State {
    projects: BTreeMap<String, BTreeMap<String, Dataset>>,
}

/// The catalog of all projects, datasets and tables. Cheap to share (`Arc`).
#[derive(Default, Debug)]
pub struct Catalog {
    state: RwLock<State>,
    /// With a data directory: its files, brought up to date after every change.
    store: Option<persist::Store>,
}

/// Read access to one project's datasets.
pub struct ReadGuard<'a>(RwLockReadGuard<'a, State>);

/// Write access to all projects. With a data directory, the changes are written to it
/// when the guard is dropped, before the lock is released.
pub struct WriteGuard<'a>(RwLockWriteGuard<'a, State>, Option<&'a persist::Store>);

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        if let Some(store) = self.1
            && let Err(e) = store.sync(&self.0)
        {
            // A guard cannot fail; the change is in memory and the next sync retries.
            eprintln!("bigq-emulator: cannot write the data directory: {e}");
        }
    }
}

fn dataset_not_found(project: &str, dataset: &str) -> BqError {
    BqError::not_found(format!(
        "Not found: Dataset {project}:{dataset} was not found in location US"
    ))
}

fn table_not_found(t: &TableRef) -> BqError {
    BqError::not_found(format!("Not found: Table {t} was not found in location US"))
}

impl ReadGuard<'_> {
    /// A dataset.
    pub fn dataset(&self, project: &str, dataset: &str) -> BqResult<&Dataset> {
        self.0
            .projects
            .get(project)
            .and_then(|p| p.get(dataset))
            .ok_or_else(|| dataset_not_found(project, dataset))
    }

    /// Whether a project has ever held a dataset.
    pub fn has_project(&self, project: &str) -> bool {
        self.0.projects.contains_key(project)
    }

    /// The datasets of a project.
    pub fn datasets(&self, project: &str) -> impl Iterator<Item = (&String, &Dataset)> {
        self.0.projects.get(project).into_iter().flatten()
    }

    /// A table (or view).
    pub fn table(&self, t: &TableRef) -> BqResult<Arc<Table>> {
        self.dataset(&t.project, &t.dataset)?
            .tables
            .get(&t.table)
            .cloned()
            .ok_or_else(|| table_not_found(t))
    }
}

impl WriteGuard<'_> {
    /// A dataset, mutable.
    pub fn dataset_mut(&mut self, project: &str, dataset: &str) -> BqResult<&mut Dataset> {
        self.0
            .projects
            .get_mut(project)
            .and_then(|p| p.get_mut(dataset))
            .ok_or_else(|| dataset_not_found(project, dataset))
    }

    /// Makes a project known (with no datasets yet): the emulator's own project exists from
    /// the start, so a missing dataset in it is `notFound`, as in BigQuery, not `accessDenied`.
    pub fn add_project(&mut self, project: &str) {
        self.0.projects.entry(project.to_string()).or_default();
    }

    /// Creates a dataset; `duplicate` when it exists.
    pub fn create_dataset(&mut self, project: &str, dataset: &str, ds: Dataset) -> BqResult<()> {
        let p = self.0.projects.entry(project.to_string()).or_default();
        if p.contains_key(dataset) {
            return Err(BqError::duplicate(format!(
                "Already Exists: Dataset {project}:{dataset}"
            )));
        }
        p.insert(dataset.to_string(), ds);
        Ok(())
    }

    /// Deletes a dataset; with `delete_contents` false it must be empty.
    pub fn delete_dataset(
        &mut self,
        project: &str,
        dataset: &str,
        delete_contents: bool,
    ) -> BqResult<()> {
        let ds = self.dataset_mut(project, dataset)?;
        if !delete_contents && !ds.tables.is_empty() {
            return Err(
                BqError::invalid(format!("Dataset {project}:{dataset} is still in use"))
                    .with_location(dataset.to_string()),
            );
        }
        if let Some(p) = self.0.projects.get_mut(project) {
            p.remove(dataset);
        }
        Ok(())
    }

    /// A table (or view).
    pub fn table(&mut self, t: &TableRef) -> BqResult<Arc<Table>> {
        self.dataset_mut(&t.project, &t.dataset)?
            .tables
            .get(&t.table)
            .cloned()
            .ok_or_else(|| table_not_found(t))
    }

    /// Creates a table; `duplicate` when it exists unless `replace`.
    pub fn create_table(&mut self, t: &TableRef, table: Table, replace: bool) -> BqResult<()> {
        let ds = self.dataset_mut(&t.project, &t.dataset)?;
        if !replace && ds.tables.contains_key(&t.table) {
            return Err(BqError::duplicate(format!("Already Exists: Table {t}")));
        }
        ds.tables.insert(t.table.clone(), Arc::new(table));
        Ok(())
    }

    /// Replaces a table's rows (and schema), keeping its creation time.
    pub fn put_table(&mut self, t: &TableRef, mut table: Table) -> BqResult<()> {
        let ds = self.dataset_mut(&t.project, &t.dataset)?;
        table.last_modified_time = now_millis();
        ds.tables.insert(t.table.clone(), Arc::new(table));
        Ok(())
    }

    /// Deletes a table; `notFound` when absent.
    pub fn delete_table(&mut self, t: &TableRef) -> BqResult<Arc<Table>> {
        self.dataset_mut(&t.project, &t.dataset)?
            .tables
            .remove(&t.table)
            .ok_or_else(|| table_not_found(t))
    }
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Arc<Catalog> {
        Arc::new(Catalog::default())
    }

    /// Read access.
    pub fn read(&self) -> ReadGuard<'_> {
        ReadGuard(self.state.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Write access.
    pub fn write(&self) -> WriteGuard<'_> {
        WriteGuard(
            self.state.write().unwrap_or_else(|e| e.into_inner()),
            self.store.as_ref(),
        )
    }

    /// A catalog kept in the directory `dir` (created if missing): what an earlier run left
    /// there is loaded, and every change is written back (see `catalog/persist.rs` for the
    /// format).
    pub fn open(dir: &std::path::Path) -> std::io::Result<Arc<Catalog>> {
        let (store, state) = persist::Store::open(dir)?;
        Ok(Arc::new(Catalog {
            state: RwLock::new(state),
            store: Some(store),
        }))
    }

    /// With a data directory: writes any change not yet written and syncs the files to the
    /// disk. Called on shutdown.
    pub fn flush(&self) -> std::io::Result<()> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let state = self.state.write().unwrap_or_else(|e| e.into_inner());
        store.sync(&state)?;
        store.flush()
    }

    /// The DataFusion view of this catalog.
    pub fn provider(self: &Arc<Self>) -> Arc<dyn CatalogProviderList> {
        Arc::new(ProjectList(self.clone()))
    }
}

/// DataFusion's catalog list: one catalog per project.
#[derive(Debug)]
struct ProjectList(Arc<Catalog>);

impl CatalogProviderList for ProjectList {
    fn register_catalog(
        &self,
        _name: String,
        _catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        None
    }

    fn catalog_names(&self) -> Vec<String> {
        self.0.read().0.projects.keys().cloned().collect()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        Some(Arc::new(ProjectProvider {
            catalog: self.0.clone(),
            project: name.to_string(),
        }))
    }
}

#[derive(Debug)]
struct ProjectProvider {
    catalog: Arc<Catalog>,
    project: String,
}

impl CatalogProvider for ProjectProvider {
    fn schema_names(&self) -> Vec<String> {
        self.catalog
            .read()
            .datasets(&self.project)
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        self.catalog.read().dataset(&self.project, name).ok()?;
        Some(Arc::new(DatasetProvider {
            catalog: self.catalog.clone(),
            project: self.project.clone(),
            dataset: name.to_string(),
        }))
    }
}

#[derive(Debug)]
struct DatasetProvider {
    catalog: Arc<Catalog>,
    project: String,
    dataset: String,
}

impl DatasetProvider {
    fn snapshot(&self, name: &str) -> Option<Arc<Table>> {
        self.catalog
            .read()
            .dataset(&self.project, &self.dataset)
            .ok()?
            .tables
            .get(name)
            .cloned()
    }
}

/// Splits a table's batches over partitions so scans run on several cores.
fn partitions(table: &Table) -> Vec<Vec<RecordBatch>> {
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(table.batches.len())
        .max(1);
    let mut parts = vec![Vec::new(); n];
    for (i, b) in table.batches.iter().enumerate() {
        parts[i % n].push(b.clone());
    }
    parts
}

#[async_trait::async_trait]
impl SchemaProvider for DatasetProvider {
    fn table_names(&self) -> Vec<String> {
        self.catalog
            .read()
            .dataset(&self.project, &self.dataset)
            .map(|d| d.tables.keys().cloned().collect())
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        let Some(t) = self.snapshot(name) else {
            return Ok(None);
        };
        let mem = MemTable::try_new(t.arrow_schema.clone(), partitions(&t))?;
        Ok(Some(Arc::new(mem)))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.snapshot(name).is_some()
    }
}

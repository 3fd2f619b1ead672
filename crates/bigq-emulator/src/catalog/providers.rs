//! DataFusion's view of the catalog: a catalog per project, a schema per dataset.

use std::sync::Arc;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{CatalogProvider, CatalogProviderList, MemTable, SchemaProvider};
use datafusion::datasource::TableProvider;
use datafusion::error::DataFusionError;

use super::handle::Catalog;
use super::model::Table;

impl Catalog {
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

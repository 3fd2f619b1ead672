//! The catalog of all projects, with read and write access under one lock, and its data
//! directory brought up to date on every change.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::{BqError, BqResult};

use super::model::{Dataset, State, Table, TableRef, now_millis};
use super::persist;

/// The catalog of all projects, datasets and tables. Cheap to share (`Arc`).
#[derive(Default, Debug)]
pub struct Catalog {
    state: RwLock<State>,
    /// With a data directory: its files, brought up to date after every change.
    store: Option<persist::Store>,
}

/// Read access to one project's datasets.
pub struct ReadGuard<'a>(pub(super) RwLockReadGuard<'a, State>);

/// Write access to all projects. With a data directory, [`commit`](Self::commit) writes
/// the changes to it before the caller answers; a change that cannot be written is undone
/// and the commit fails, so nothing is acknowledged that a restart would lose. A guard
/// dropped without a commit writes too, but can only report a failure (and undo the change)
/// in the log: every path that acknowledges a change commits.
pub struct WriteGuard<'a> {
    state: RwLockWriteGuard<'a, State>,
    store: Option<&'a persist::Store>,
    /// With a data directory: the state before the changes, to undo them when they cannot
    /// be written.
    before: Option<State>,
    committed: bool,
    /// The gate of the work making the changes, asked at the commit.
    gate: Option<Arc<dyn super::gate::CommitGate>>,
}

impl WriteGuard<'_> {
    /// Writes the changes to the data directory (with one), synced to the disk; when they
    /// cannot be written they are undone and the error says why.
    ///
    /// Under a [`CommitGate`](super::gate::CommitGate) (a query job), the gate decides first:
    /// when it refuses (the job was cancelled or timed out) the changes are undone and its
    /// error returned.
    pub fn commit(mut self) -> BqResult<()> {
        self.committed = true;
        let Some(gate) = self.gate.take() else {
            return self.persist();
        };
        match gate.commit(&mut || self.persist()) {
            Ok(()) => Ok(()),
            Err(e) => {
                if let Some(before) = self.before.take() {
                    *self.state = before;
                }
                Err(e)
            }
        }
    }

    fn persist(&mut self) -> BqResult<()> {
        let Some(store) = self.store else {
            return Ok(());
        };
        let Err(e) = store.sync(&self.state) else {
            return Ok(());
        };
        if let Some(before) = self.before.take() {
            *self.state = before;
            // The files may hold part of the change: bring them back to the state kept.
            if let Err(again) = store.sync(&self.state) {
                eprintln!("bigq-emulator: cannot write the data directory: {again}");
            }
        }
        Err(BqError::internal(format!(
            "the change was not made: cannot write the data directory: {e}"
        )))
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        if !self.committed
            && let Err(e) = self.persist()
        {
            eprintln!("bigq-emulator: {e}");
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

    /// Whether any dataset holds a routine.
    pub fn has_routines(&self) -> bool {
        self.0
            .projects
            .values()
            .flat_map(|p| p.values())
            .any(|d| !d.routines.is_empty())
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
        self.state
            .projects
            .get_mut(project)
            .and_then(|p| p.get_mut(dataset))
            .ok_or_else(|| dataset_not_found(project, dataset))
    }

    /// Makes a project known (with no datasets yet): the emulator's own project exists from
    /// the start, so a missing dataset in it is `notFound`, as in BigQuery, not `accessDenied`.
    pub fn add_project(&mut self, project: &str) {
        self.state.projects.entry(project.to_string()).or_default();
    }

    /// Creates a dataset; `duplicate` when it exists.
    pub fn create_dataset(&mut self, project: &str, dataset: &str, ds: Dataset) -> BqResult<()> {
        let p = self.state.projects.entry(project.to_string()).or_default();
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
        if let Some(p) = self.state.projects.get_mut(project) {
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

    /// Creates (or with `replace`, replaces) a routine from its resource; the stored
    /// resource, with its reference and times. `duplicate` when it exists unless `replace`.
    pub fn put_routine(
        &mut self,
        project: &str,
        dataset: &str,
        id: &str,
        mut resource: serde_json::Map<String, serde_json::Value>,
        replace: bool,
    ) -> BqResult<serde_json::Map<String, serde_json::Value>> {
        let ds = self.dataset_mut(project, dataset)?;
        let now = now_millis();
        let created = match ds.routines.get(id) {
            Some(_) if !replace => {
                return Err(BqError::duplicate(format!(
                    "Already Exists: Routine {project}:{dataset}.{id}"
                )));
            }
            Some(old) => old
                .get("creationTime")
                .cloned()
                .unwrap_or_else(|| now.to_string().into()),
            None => now.to_string().into(),
        };
        resource.insert(
            "routineReference".into(),
            serde_json::json!({"projectId": project, "datasetId": dataset, "routineId": id}),
        );
        resource.insert("creationTime".into(), created);
        resource.insert("lastModifiedTime".into(), now.to_string().into());
        ds.routines.insert(id.to_string(), resource.clone());
        Ok(resource)
    }

    /// Deletes a routine; `notFound` when absent.
    pub fn delete_routine(&mut self, project: &str, dataset: &str, id: &str) -> BqResult<()> {
        self.dataset_mut(project, dataset)?
            .routines
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| {
                BqError::not_found(format!("Not found: Routine {project}:{dataset}.{id}"))
            })
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

    /// Write access; see [`WriteGuard::commit`].
    pub fn write(&self) -> WriteGuard<'_> {
        let state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let gate = super::gate::current();
        // Datasets hold their tables behind `Arc`s: the copy is of names, not rows.
        let before = (self.store.is_some() || gate.is_some()).then(|| state.clone());
        WriteGuard {
            state,
            store: self.store.as_ref(),
            before,
            committed: false,
            gate,
        }
    }

    /// Makes a change under the write lock and commits it: the change's result, or the
    /// error of the change or of writing it to the data directory (the change undone).
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut WriteGuard<'_>) -> BqResult<T>,
    ) -> BqResult<T> {
        let mut w = self.write();
        let out = change(&mut w)?;
        w.commit()?;
        Ok(out)
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
}

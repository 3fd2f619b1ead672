//! Datasets: insert, get, patch / update, delete, list.

use std::collections::BTreeMap;

use super::PageRequest;
use crate::catalog::{Dataset, now_millis};
use crate::error::BqError;
use crate::state::AppState;

/// The settable fields of a dataset. `None` leaves a field as it is; for labels, a `None`
/// value removes that label.
#[derive(Clone, Debug, Default)]
pub struct DatasetFields {
    /// `description` (`Some(None)` clears it).
    pub description: Option<Option<String>>,
    /// `friendlyName` (`Some(None)` clears it).
    pub friendly_name: Option<Option<String>>,
    /// Label changes.
    pub labels: BTreeMap<String, Option<String>>,
    /// The other settable fields the body sets (see [`Dataset::options`]); a JSON null
    /// clears one.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The `If-Match` etag of a patch: the dataset must still have it.
    pub if_match: Option<String>,
}

impl DatasetFields {
    fn apply(&self, ds: &mut Dataset, replace: bool) {
        if replace {
            ds.description = None;
            ds.friendly_name = None;
            ds.labels.clear();
            ds.options.clear();
        }
        for (k, v) in &self.options {
            if v.is_null() {
                ds.options.remove(k);
            } else {
                ds.options.insert(k.clone(), v.clone());
            }
        }
        if let Some(d) = &self.description {
            ds.description = d.clone();
        }
        if let Some(d) = &self.friendly_name {
            ds.friendly_name = d.clone();
        }
        for (k, v) in &self.labels {
            match v {
                Some(v) => {
                    ds.labels.insert(k.clone(), v.clone());
                }
                None => {
                    ds.labels.remove(k);
                }
            }
        }
    }
}

fn not_found(project: &str, id: &str) -> BqError {
    BqError::not_found(format!("Not found: Dataset {project}:{id}"))
}

/// `datasets.insert`: the created dataset.
pub fn insert(
    s: &AppState,
    project: &str,
    id: &str,
    location: Option<String>,
    fields: &DatasetFields,
) -> Result<Dataset, BqError> {
    if id.is_empty() {
        return Err(BqError::invalid(
            "Required parameter is missing: datasetReference.datasetId",
        ));
    }
    if id.len() > 1024 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(BqError::invalid(format!(
            "Invalid dataset ID \"{id}\". Dataset IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long."
        )));
    }
    let mut ds = Dataset::new(location.filter(|l| !l.is_empty()));
    fields.apply(&mut ds, false);
    s.catalog
        .update(|w| w.create_dataset(project, id, ds.clone()))?;
    Ok(ds)
}

/// `datasets.get`.
pub fn get(s: &AppState, project: &str, id: &str) -> Result<Dataset, BqError> {
    s.catalog
        .read()
        .dataset(project, id)
        .cloned()
        .map_err(|_| not_found(project, id))
}

/// `datasets.patch` (`replace` false) or `datasets.update` (`replace` true: fields not
/// given are cleared): the changed dataset.
pub fn patch(
    s: &AppState,
    project: &str,
    id: &str,
    fields: &DatasetFields,
    replace: bool,
) -> Result<Dataset, BqError> {
    let mut w = s.catalog.write();
    let ds = w
        .dataset_mut(project, id)
        .map_err(|_| not_found(project, id))?;
    if let Some(etag) = &fields.if_match
        && etag != "*"
        && *etag != ds.etag()
    {
        return Err(BqError::condition_not_met(format!(
            "Precondition check failed: dataset {project}:{id} changed since etag {etag} was read"
        )));
    }
    fields.apply(ds, replace);
    ds.last_modified_time = now_millis();
    ds.generation += 1;
    let patched = ds.clone();
    w.commit()?;
    Ok(patched)
}

/// `datasets.delete`; with `delete_contents` false the dataset must hold no table.
pub fn delete(s: &AppState, project: &str, id: &str, delete_contents: bool) -> Result<(), BqError> {
    match s
        .catalog
        .update(|w| w.delete_dataset(project, id, delete_contents))
    {
        Err(e) if e.reason == "notFound" => Err(not_found(project, id)),
        r => r,
    }
}

/// `datasets.list`: one page of `(id, dataset)`, the next page's token, and the etag seed.
pub fn list(
    s: &AppState,
    project: &str,
    page: PageRequest,
) -> (Vec<(String, Dataset)>, Option<String>, usize) {
    let r = s.catalog.read();
    let all: Vec<(String, Dataset)> = r
        .datasets(project)
        // The hidden datasets of scripts' and sessions' temporary tables.
        .filter(|(id, _)| !id.starts_with(crate::sql::names::TEMP_DATASET_PREFIX))
        .map(|(id, ds)| (id.clone(), ds.clone()))
        .collect();
    let (items, next) = page.slice(&all);
    (items, next, all.len())
}

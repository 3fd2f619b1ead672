//! `google.cloud.bigquery.v2.DatasetService` over [`crate::api::datasets`].

use std::sync::Arc;

use gcloud_sdk::google::cloud::bigquery::v2::{
    Access, Dataset, DatasetList, DatasetReference, DeleteDatasetRequest, GetDatasetRequest,
    InsertDatasetRequest, ListDatasetsRequest, ListFormatDataset, UpdateOrPatchDatasetRequest,
};

use crate::api::PageRequest;
use crate::api::datasets::{self as core, DatasetFields};
use crate::api::etag;
use crate::catalog::Dataset as CoreDataset;
use crate::error::BqError;
use crate::state::AppState;

fn message(s: &AppState, project: &str, id: &str, ds: &CoreDataset) -> Dataset {
    let access = |role: &str, group: &str| Access {
        role: role.into(),
        special_group: group.into(),
        ..Default::default()
    };
    Dataset {
        kind: "bigquery#dataset".into(),
        etag: ds.etag(),
        id: format!("{project}:{id}"),
        self_link: format!(
            "{}/bigquery/v2/projects/{project}/datasets/{id}",
            s.base_url
        ),
        dataset_reference: Some(DatasetReference {
            dataset_id: id.into(),
            project_id: project.into(),
        }),
        friendly_name: ds.friendly_name.clone(),
        description: ds.description.clone(),
        labels: ds.labels.clone().into_iter().collect(),
        access: vec![
            access("WRITER", "projectWriters"),
            access("OWNER", "projectOwners"),
            access("READER", "projectReaders"),
        ],
        creation_time: ds.creation_time,
        last_modified_time: ds.last_modified_time,
        location: ds.location.clone(),
        r#type: "DEFAULT".into(),
        max_time_travel_hours: Some(168),
        ..Default::default()
    }
}

/// The fields a v2 `Dataset` sets. Proto3 cannot tell an unset label from an empty one,
/// so patching labels adds or replaces them; `UpdateDataset` replaces all.
fn fields(d: &Dataset) -> DatasetFields {
    DatasetFields {
        description: d.description.clone().map(Some),
        friendly_name: d.friendly_name.clone().map(Some),
        labels: d
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect(),
        options: Default::default(),
        if_match: Some(d.etag.clone()).filter(|e| !e.is_empty()),
    }
}

/// `GetDataset`.
pub async fn get(s: Arc<AppState>, req: GetDatasetRequest) -> Result<Dataset, BqError> {
    let ds = core::get(&s, &req.project_id, &req.dataset_id)?;
    Ok(message(&s, &req.project_id, &req.dataset_id, &ds))
}

/// `InsertDataset`.
pub async fn insert(s: Arc<AppState>, req: InsertDatasetRequest) -> Result<Dataset, BqError> {
    let d = req.dataset.unwrap_or_default();
    let r = d.dataset_reference.clone().unwrap_or_default();
    let project = if r.project_id.is_empty() {
        req.project_id.clone()
    } else {
        r.project_id.clone()
    };
    let location = (!d.location.is_empty()).then(|| d.location.clone());
    let ds = core::insert(&s, &project, &r.dataset_id, location, &fields(&d))?;
    Ok(message(&s, &project, &r.dataset_id, &ds))
}

/// `PatchDataset` (`replace` false) and `UpdateDataset` (`replace` true).
pub async fn patch(
    s: Arc<AppState>,
    req: UpdateOrPatchDatasetRequest,
    replace: bool,
) -> Result<Dataset, BqError> {
    let d = req.dataset.unwrap_or_default();
    let ds = core::patch(&s, &req.project_id, &req.dataset_id, &fields(&d), replace)?;
    Ok(message(&s, &req.project_id, &req.dataset_id, &ds))
}

/// `DeleteDataset`.
pub async fn delete(s: Arc<AppState>, req: DeleteDatasetRequest) -> Result<(), BqError> {
    core::delete(&s, &req.project_id, &req.dataset_id, req.delete_contents)
}

/// `ListDatasets`.
pub async fn list(s: Arc<AppState>, req: ListDatasetsRequest) -> Result<DatasetList, BqError> {
    let page = PageRequest::from_token(Some(&req.page_token), req.max_results.map(|m| m as usize))?;
    let (items, next, total) = core::list(&s, &req.project_id, page);
    Ok(DatasetList {
        kind: "bigquery#datasetList".into(),
        etag: etag(total as i64),
        next_page_token: next.unwrap_or_default(),
        datasets: items
            .iter()
            .map(|(id, ds)| ListFormatDataset {
                kind: "bigquery#dataset".into(),
                id: format!("{}:{id}", req.project_id),
                dataset_reference: Some(DatasetReference {
                    dataset_id: id.clone(),
                    project_id: req.project_id.clone(),
                }),
                labels: ds.labels.clone().into_iter().collect(),
                friendly_name: ds.friendly_name.clone(),
                location: ds.location.clone(),
                r#type: "DEFAULT".into(),
                ..Default::default()
            })
            .collect(),
        unreachable: Vec::new(),
    })
}

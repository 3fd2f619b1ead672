use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::error::Result;
use crate::ids::{IntoDatasetId, dataset_id};
use crate::paging::{ListStream, Pages};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DatasetReference {
    pub(crate) project_id: String,
    pub(crate) dataset_id: String,
}

/// A dataset (the REST `Dataset` resource, the fields bigq knows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Dataset {
    pub(crate) dataset_reference: DatasetReference,
    /// The location (`US`, `EU`, a region).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A friendly name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friendly_name: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Default lifetime of new tables, in milliseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "bigq_codec::int64_text::opt_i64::serialize",
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub default_table_expiration_ms: Option<i64>,
    /// Creation time, milliseconds since the epoch.
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub creation_time: Option<i64>,
}

impl Dataset {
    /// A dataset to create; `id` is `dataset` or `project.dataset` (the project is filled in
    /// from the client when absent).
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        let (p, d) = match id.split_once('.') {
            Some((p, d)) => (p.to_string(), d.to_string()),
            None => (String::new(), id),
        };
        Dataset {
            dataset_reference: DatasetReference {
                project_id: p,
                dataset_id: d,
            },
            location: None,
            description: None,
            friendly_name: None,
            labels: BTreeMap::new(),
            default_table_expiration_ms: None,
            creation_time: None,
        }
    }

    /// Sets the location.
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// Adds a label.
    pub fn with_label(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.labels.insert(k.into(), v.into());
        self
    }

    /// The project.
    pub fn project(&self) -> &str {
        &self.dataset_reference.project_id
    }

    /// The dataset id.
    pub fn dataset_id(&self) -> &str {
        &self.dataset_reference.dataset_id
    }
}

/// A dataset as `datasets.list` describes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DatasetListItem {
    pub(crate) dataset_reference: DatasetReference,
    /// The location.
    #[serde(default)]
    pub location: Option<String>,
    /// A friendly name.
    #[serde(default)]
    pub friendly_name: Option<String>,
    /// Labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

impl DatasetListItem {
    /// The project id.
    pub fn project_id(&self) -> &str {
        &self.dataset_reference.project_id
    }

    /// The dataset id.
    pub fn dataset_id(&self) -> &str {
        &self.dataset_reference.dataset_id
    }
}

impl Client {
    /// Creates a dataset. Fails with [`is_already_exists`](crate::Error::is_already_exists)
    /// when it exists. A dataset without a project or location gets the client's.
    pub async fn create_dataset(&self, mut dataset: Dataset) -> Result<Dataset> {
        if dataset.dataset_reference.project_id.is_empty() {
            dataset.dataset_reference.project_id = self.inner.project.clone();
        }
        if dataset.location.is_none() {
            dataset.location = self.inner.location.clone();
        }
        self.inner.api.create_dataset(dataset).await
    }

    /// Gets a dataset: a [`DatasetId`](crate::DatasetId), `dataset` (in the client's
    /// project) or `project.dataset`.
    pub async fn get_dataset(&self, id: impl IntoDatasetId) -> Result<Dataset> {
        let id = dataset_id(&self.inner.project, id)?;
        self.inner.api.get_dataset(&id).await
    }

    /// Lists the datasets of `project` (the client's when `None`); with `all`, hidden
    /// datasets (whose id starts with `_`) too. Pages are fetched as the stream is read.
    pub fn list_datasets(&self, project: Option<&str>, all: bool) -> ListStream<DatasetListItem> {
        let api = self.inner.api.clone();
        let project = project.unwrap_or(&self.inner.project).to_string();
        ListStream::new(Pages::lazy(None, move |token| {
            let (api, project) = (api.clone(), project.clone());
            async move { api.list_datasets(&project, all, token).await }
        }))
    }

    /// Deletes a dataset; with `delete_contents` its tables too (otherwise a non-empty
    /// dataset is an error).
    pub async fn delete_dataset(
        &self,
        id: impl IntoDatasetId,
        delete_contents: bool,
    ) -> Result<()> {
        let id = dataset_id(&self.inner.project, id)?;
        self.inner.api.delete_dataset(&id, delete_contents).await
    }
}

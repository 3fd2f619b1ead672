use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::parse_dataset;
use crate::client::rest::{Idempotent, Request};
use crate::client::{Client, Transport};
use crate::error::Result;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct DatasetReference {
    pub(super) project_id: String,
    pub(super) dataset_id: String,
}

/// A dataset (the REST `Dataset` resource, the fields bigq knows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Dataset {
    pub(super) dataset_reference: DatasetReference,
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
    pub(super) dataset_reference: DatasetReference,
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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DatasetList {
    #[serde(default)]
    datasets: Vec<DatasetListItem>,
    #[serde(default)]
    next_page_token: Option<String>,
}

impl Client {
    /// Creates a dataset. Fails with [`is_already_exists`](crate::Error::is_already_exists)
    /// when it exists.
    pub async fn create_dataset(&self, mut dataset: Dataset) -> Result<Dataset> {
        if dataset.dataset_reference.project_id.is_empty() {
            dataset.dataset_reference.project_id = self.inner.project.clone();
        }
        if dataset.location.is_none() {
            dataset.location = self.inner.location.clone();
        }
        if self.inner.transport == Transport::Grpc {
            return Box::pin(self.grpc_create_dataset(dataset)).await;
        }
        let project = dataset.dataset_reference.project_id.clone();
        let path = ["projects", project.as_str(), "datasets"];
        // Creating the same dataset twice fails with `duplicate`, so a retry is harmless.
        self.call(Request::post(&path, &dataset, Idempotent::Yes)?)
            .await
    }

    /// Gets a dataset by `dataset` or `project.dataset`.
    pub async fn get_dataset(&self, id: &str) -> Result<Dataset> {
        let id = parse_dataset(&self.inner.project, id)?;
        if self.inner.transport == Transport::Grpc {
            return Box::pin(self.grpc_get_dataset(&id)).await;
        }
        self.call(Request::get(&[
            "projects",
            &id.project,
            "datasets",
            &id.dataset,
        ]))
        .await
    }

    /// Lists the datasets of `project` (the client's when `None`), every page; with `all`,
    /// hidden datasets (whose id starts with `_`) too.
    ///
    /// ```no_run
    /// # async fn run(client: bigq::Client) -> bigq::Result<()> {
    /// for d in client.list_datasets(None, false).await? {
    ///     println!("{} ({})", d.dataset_id(), d.location.as_deref().unwrap_or("?"));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_datasets(
        &self,
        project: Option<&str>,
        all: bool,
    ) -> Result<Vec<DatasetListItem>> {
        let project = project.unwrap_or(&self.inner.project);
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let (items, next) = if self.inner.transport == Transport::Grpc {
                Box::pin(self.grpc_list_datasets(project, all, token.as_deref())).await?
            } else {
                let path = ["projects", project, "datasets"];
                let mut req = Request::get(&path);
                if all {
                    req = req.query("all", true);
                }
                if let Some(t) = &token {
                    req = req.query("pageToken", t);
                }
                let page: DatasetList = self.call(req).await?;
                (
                    page.datasets,
                    page.next_page_token.filter(|t| !t.is_empty()),
                )
            };
            out.extend(items);
            match next {
                Some(t) => token = Some(t),
                None => return Ok(out),
            }
        }
    }

    /// Deletes a dataset; with `delete_contents` its tables too (otherwise a non-empty
    /// dataset is an error).
    pub async fn delete_dataset(&self, id: &str, delete_contents: bool) -> Result<()> {
        let id = parse_dataset(&self.inner.project, id)?;
        if self.inner.transport == Transport::Grpc {
            return Box::pin(self.grpc_delete_dataset(&id, delete_contents)).await;
        }
        let path = [
            "projects",
            id.project.as_str(),
            "datasets",
            id.dataset.as_str(),
        ];
        let req = Request::delete(&path).query("deleteContents", delete_contents);
        self.call_empty(req).await
    }
}

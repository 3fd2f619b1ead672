use std::collections::BTreeMap;

use bigq_codec::schema::RoundingMode;
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
    /// Default lifetime of new tables' partitions, in milliseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "bigq_codec::int64_text::opt_i64"
    )]
    pub default_partition_expiration_ms: Option<i64>,
    /// Table and other names in the dataset compare case-insensitively.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_case_insensitive: Option<bool>,
    /// How far back time travel reaches, in hours (48 to 168, a multiple of 24).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "bigq_codec::int64_text::opt_i64"
    )]
    pub max_time_travel_hours: Option<i64>,
    /// The rounding mode of new tables' NUMERIC and BIGNUMERIC columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_rounding_mode: Option<RoundingMode>,
    /// The collation of new tables' STRING columns (`und:ci` or `""`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_collation: Option<String>,
    /// The resource's version, sent by [`Client::patch_dataset`] as a precondition.
    #[serde(default, skip_serializing)]
    pub etag: Option<String>,
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
            default_partition_expiration_ms: None,
            is_case_insensitive: None,
            max_time_travel_hours: None,
            default_rounding_mode: None,
            default_collation: None,
            etag: None,
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

    /// Sets the friendly name.
    pub fn with_friendly_name(mut self, name: impl Into<String>) -> Self {
        self.friendly_name = Some(name.into());
        self
    }

    /// Sets the default lifetime of new tables, in milliseconds.
    pub fn with_default_table_expiration_ms(mut self, ms: i64) -> Self {
        self.default_table_expiration_ms = Some(ms);
        self
    }

    /// Sets the default lifetime of new tables' partitions, in milliseconds.
    pub fn with_default_partition_expiration_ms(mut self, ms: i64) -> Self {
        self.default_partition_expiration_ms = Some(ms);
        self
    }

    /// Makes names in the dataset case-insensitive.
    pub fn with_case_insensitive(mut self, yes: bool) -> Self {
        self.is_case_insensitive = Some(yes);
        self
    }

    /// Sets how far back time travel reaches, in hours.
    pub fn with_max_time_travel_hours(mut self, hours: i64) -> Self {
        self.max_time_travel_hours = Some(hours);
        self
    }

    /// Sets the default rounding mode of new NUMERIC and BIGNUMERIC columns.
    pub fn with_default_rounding_mode(mut self, mode: RoundingMode) -> Self {
        self.default_rounding_mode = Some(mode);
        self
    }

    /// Sets the default collation of new STRING columns.
    pub fn with_default_collation(mut self, collation: impl Into<String>) -> Self {
        self.default_collation = Some(collation.into());
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
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use bigq::admin::Dataset;
    /// let created = client
    ///     .create_dataset(Dataset::new("sales").with_description("orders and refunds"))
    ///     .await?;
    /// assert_eq!(created.dataset_id(), "sales");
    /// assert_eq!(created.project(), client.project());
    /// let again = client.create_dataset(Dataset::new("sales")).await.unwrap_err();
    /// assert!(again.is_already_exists());
    /// # Ok(()) }
    /// ```
    pub async fn create_dataset(&self, mut dataset: Dataset) -> Result<Dataset> {
        if dataset.dataset_reference.project_id.is_empty() {
            dataset.dataset_reference.project_id = self.inner.project.clone();
        }
        if dataset.location.is_none() {
            dataset.location = self.inner.location.clone();
        }
        self.inner.api.create_dataset(dataset).await
    }

    /// Changes the fields `dataset` sets (`datasets.patch`). With an
    /// [`etag`](Dataset::etag) (a dataset from [`get_dataset`](Client::get_dataset) has
    /// one) a dataset changed since is not overwritten: the call fails with
    /// [`Error::is_precondition_failed`](crate::Error::is_precondition_failed).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use bigq::admin::Dataset;
    /// use bigq::schema::RoundingMode;
    /// client
    ///     .create_dataset(
    ///         Dataset::new("ds")
    ///             .with_default_partition_expiration_ms(86_400_000)
    ///             .with_case_insensitive(true)
    ///             .with_max_time_travel_hours(48)
    ///             .with_default_rounding_mode(RoundingMode::HalfEven)
    ///             .with_default_collation("und:ci"),
    ///     )
    ///     .await?;
    /// let read = client.get_dataset("ds").await?;
    /// assert_eq!(read.max_time_travel_hours, Some(48));
    /// assert_eq!(read.default_rounding_mode, Some(RoundingMode::HalfEven));
    /// let patched = client.patch_dataset(read.clone().with_label("team", "a")).await?;
    /// assert_eq!(patched.labels["team"], "a");
    /// assert_eq!(patched.is_case_insensitive, Some(true));
    /// let stale = read.with_description("lost?");
    /// assert!(client.patch_dataset(stale).await.unwrap_err().is_precondition_failed());
    /// # Ok(()) }
    /// ```
    pub async fn patch_dataset(&self, mut dataset: Dataset) -> Result<Dataset> {
        if dataset.dataset_reference.project_id.is_empty() {
            dataset.dataset_reference.project_id = self.inner.project.clone();
        }
        self.inner.api.patch_dataset(dataset).await
    }

    /// Gets a dataset: a [`DatasetId`](crate::DatasetId), `dataset` (in the client's
    /// project) or `project.dataset`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use bigq::DatasetId;
    /// # client.create_dataset(bigq::admin::Dataset::new("sales").with_label("team", "a")).await?;
    /// let by_name = client.get_dataset("sales").await?;
    /// let by_id = client.get_dataset(DatasetId::new(client.project(), "sales")).await?;
    /// assert_eq!(by_name.labels["team"], "a");
    /// assert_eq!(by_id.dataset_id(), by_name.dataset_id());
    /// assert!(client.get_dataset("missing").await.unwrap_err().is_not_found());
    /// # Ok(()) }
    /// ```
    pub async fn get_dataset(&self, id: impl IntoDatasetId) -> Result<Dataset> {
        let id = dataset_id(&self.inner.project, id)?;
        self.inner.api.get_dataset(&id).await
    }

    /// Lists the datasets of `project` (the client's when `None`); with `all`, hidden
    /// datasets (whose id starts with `_`) too. Pages are fetched as the stream is read.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use futures::TryStreamExt;
    /// # for name in ["a", "b", "c"] {
    /// #     client.create_dataset(bigq::admin::Dataset::new(name)).await?;
    /// # }
    /// // A stream: read it item by item ...
    /// let mut datasets = client.list_datasets(None, false);
    /// let mut names = Vec::new();
    /// while let Some(d) = datasets.try_next().await? {
    ///     names.push(d.dataset_id().to_string());
    /// }
    /// names.sort();
    /// assert_eq!(names, ["a", "b", "c"]);
    /// // ... or collect it.
    /// let all = client.list_datasets(None, false).try_collect().await?;
    /// assert_eq!(all.len(), 3);
    /// # Ok(()) }
    /// ```
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
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client
    /// #     .query("CREATE TABLE ds.people AS SELECT 1 AS id, 'Ada' AS name UNION ALL SELECT 2, 'Grace' UNION ALL SELECT 3, 'Linus'")
    /// #     .execute()
    /// #     .await?;
    /// client.delete_dataset("ds", true).await?;
    /// assert!(client.get_dataset("ds").await.unwrap_err().is_not_found());
    /// # Ok(()) }
    /// ```
    pub async fn delete_dataset(
        &self,
        id: impl IntoDatasetId,
        delete_contents: bool,
    ) -> Result<()> {
        let id = dataset_id(&self.inner.project, id)?;
        self.inner.api.delete_dataset(&id, delete_contents).await
    }
}

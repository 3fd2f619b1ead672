//! The [`Client`] and its builder.

mod builder;
pub(crate) mod grpc;
pub(crate) mod rest;

use std::sync::Arc;

pub use builder::ClientBuilder;

use crate::auth::Credentials;
use crate::retry::RetryPolicy;

/// How a [`Client`] reaches BigQuery's v2 API (queries, jobs, datasets, tables); the Storage
/// Read and Write APIs are gRPC either way.
///
/// The API above the transport is the same: every query option, polling, paging, large
/// results through Storage Read, the admin calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// REST v2 (`jobs.query`, ...), with results decoded from JSON in one streaming pass.
    #[default]
    Rest,
    /// The v2 gRPC services (`google.cloud.bigquery.v2.JobService`, ...): the first page of
    /// a query's result comes as Arrow (LZ4-compressed buffers), decoded like Storage Read.
    /// Later pages (`GetQueryResults`) have no Arrow form in the API; by default they are
    /// read through Storage Read, and otherwise decoded from their struct encoding.
    /// `tabledata.list` and `tabledata.insertAll` have no gRPC form and stay on REST.
    Grpc,
}

/// A BigQuery client.
///
/// Cheap to clone: clones share one connection pool and one credential cache.
///
/// ```no_run
/// # async fn run() -> bigq::Result<()> {
/// let client = bigq::Client::from_env().await?;
/// let n: Vec<(i64,)> = client.query("SELECT 1").fetch_all().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) project: String,
    /// The routing header of the v2 calls in `project` (`project_id={project}`), made once.
    pub(crate) project_routing: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
    pub(crate) location: Option<String>,
    /// `{root}/bigquery/v2`, no trailing slash.
    pub(crate) rest_base: String,
    /// `rest_base` parsed, once.
    pub(crate) rest_base_url: reqwest::Url,
    pub(crate) http: reqwest::Client,
    /// The Storage API's gRPC channel, connected on first use.
    pub(crate) grpc: grpc::GrpcChannel,
    /// How jobs, datasets and tables are reached: REST or the v2 gRPC services.
    pub(crate) transport: Transport,
    /// The BigQuery v2 gRPC services' channel (used with [`Transport::Grpc`]), connected on
    /// first use.
    pub(crate) v2: grpc::GrpcChannel,
    /// Whether large query results may be read through the Storage API (see the builder).
    pub(crate) storage_for_queries: bool,
    pub(crate) credentials: Credentials,
    pub(crate) retry: RetryPolicy,
}

impl Client {
    /// A builder for a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured from the environment: `GOOGLE_CLOUD_PROJECT` (or
    /// `GCLOUD_PROJECT`) for the project, `BIGQUERY_EMULATOR_HOST` for a REST emulator and
    /// `BIGQUERY_STORAGE_EMULATOR_HOST` for a Storage API (gRPC) emulator (both with
    /// anonymous credentials), and Application Default Credentials otherwise.
    pub async fn from_env() -> crate::Result<Client> {
        ClientBuilder::default().from_env().build().await
    }

    /// The project jobs run in, unless a call names another.
    pub fn project(&self) -> &str {
        &self.inner.project
    }

    /// The default location for jobs, if set.
    pub fn location(&self) -> Option<&str> {
        self.inner.location.as_deref()
    }

    /// The REST endpoint (`.../bigquery/v2`).
    pub fn rest_endpoint(&self) -> &str {
        &self.inner.rest_base
    }

    /// The BigQuery Storage API (gRPC) endpoint.
    pub fn storage_endpoint(&self) -> &str {
        self.inner.grpc.endpoint()
    }

    /// The BigQuery v2 gRPC endpoint, used with [`Transport::Grpc`].
    pub fn grpc_endpoint(&self) -> &str {
        self.inner.v2.endpoint()
    }

    /// The transport of v2 calls (queries, jobs, datasets, tables).
    pub fn transport(&self) -> Transport {
        self.inner.transport
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("project", &self.inner.project)
            .field("location", &self.inner.location)
            .field("rest_endpoint", &self.inner.rest_base)
            .field("storage_endpoint", &self.inner.grpc.endpoint())
            .field("transport", &self.inner.transport)
            .field("credentials", &self.inner.credentials)
            .finish()
    }
}

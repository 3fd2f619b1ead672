//! [`ClientBuilder`]: the client's settings, and the connections and transport it is built
//! with.

use std::sync::Arc;
use std::time::Duration;

use super::grpc::{Grpc, GrpcChannel};
use super::handle::{Client, Inner};
use super::rest::Rest;
use crate::auth::Credentials;
use crate::error::{Error, Result, SourceText};
use crate::retry::RetryPolicy;
use crate::transport::{GrpcApi, RestApi, Traced, Transport, V2Api};

impl Client {
    /// A builder for a client.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .build()
    ///     .await?;
    /// let rows: Vec<(i64,)> = client.query("SELECT 1").fetch_all().await?;
    /// assert_eq!(rows, [(1,)]);
    /// # Ok(()) }
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured from the environment: `GOOGLE_CLOUD_PROJECT` (or
    /// `GCLOUD_PROJECT`) for the project, `BIGQUERY_EMULATOR_HOST` for a REST emulator and
    /// `BIGQUERY_STORAGE_EMULATOR_HOST` for a Storage API (gRPC) emulator (both with
    /// anonymous credentials), and Application Default Credentials otherwise.
    ///
    /// ```standalone_crate
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # // SAFETY: this doctest runs in a process of its own, on one thread.
    /// # unsafe {
    /// #     std::env::set_var("GOOGLE_CLOUD_PROJECT", emulator.project());
    /// #     std::env::set_var("BIGQUERY_EMULATOR_HOST", emulator.rest_endpoint());
    /// #     std::env::set_var("BIGQUERY_STORAGE_EMULATOR_HOST", emulator.grpc_endpoint());
    /// # }
    /// // With GOOGLE_CLOUD_PROJECT, BIGQUERY_EMULATOR_HOST and BIGQUERY_STORAGE_EMULATOR_HOST set:
    /// let client = bigq::Client::from_env().await?;
    /// assert_eq!(client.project(), emulator.project());
    /// assert_eq!(client.storage_endpoint(), emulator.grpc_endpoint());
    /// let rows: Vec<(i64,)> = client.query("SELECT 1").fetch_all().await?;
    /// assert_eq!(rows, [(1,)]);
    /// # Ok(()) }
    /// ```
    pub async fn from_env() -> Result<Client> {
        ClientBuilder::default().from_env().build().await
    }
}

/// The default REST root.
pub const DEFAULT_ENDPOINT: &str = "https://bigquery.googleapis.com";

/// The default BigQuery Storage API (gRPC) endpoint.
pub const DEFAULT_STORAGE_ENDPOINT: &str = "https://bigquerystorage.googleapis.com";

/// The default BigQuery v2 gRPC endpoint (the same host as REST).
pub const DEFAULT_GRPC_ENDPOINT: &str = DEFAULT_ENDPOINT;

/// The environment variable naming a Storage API (gRPC) emulator, `host:port` or a URL.
pub const STORAGE_EMULATOR_HOST_ENV: &str = "BIGQUERY_STORAGE_EMULATOR_HOST";

/// Builds a [`Client`]. Setters take the form `with_*`; nothing connects until
/// [`build`](Self::build).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> bigq::Result<()> {
/// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
/// use bigq::{Client, Credentials};
/// let client = Client::builder()
///     .with_project("my-project")
///     .with_location("EU")
///     .with_endpoint(emulator.rest_endpoint())
///     .with_credentials(Credentials::anonymous())
///     .build()
///     .await?;
/// assert_eq!(client.project(), "my-project");
/// assert_eq!(client.location(), Some("EU"));
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
#[must_use]
pub struct ClientBuilder {
    project: Option<String>,
    location: Option<String>,
    endpoint: Option<String>,
    storage_endpoint: Option<String>,
    grpc_endpoint: Option<String>,
    transport: Transport,
    credentials: Option<Credentials>,
    retry: Option<RetryPolicy>,
    connect_timeout: Option<Duration>,
    user_agent: Option<String>,
}

impl ClientBuilder {
    /// Sets the project jobs run in and that unqualified names belong to.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::builder().with_project("analytics").start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project("analytics")
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.project(), "analytics");
    /// // Unqualified names are in that project.
    /// client.create_dataset(bigq::admin::Dataset::new("sales")).await?;
    /// assert_eq!(client.get_dataset("analytics.sales").await?.project(), "analytics");
    /// # Ok(()) }
    /// ```
    pub fn with_project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Sets the default location for jobs (`US`, `EU`, `europe-north2`, ...).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_location("EU")
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.location(), Some("EU"));
    /// // New datasets are created there unless they say otherwise.
    /// let ds = client.create_dataset(bigq::admin::Dataset::new("eu_data")).await?;
    /// assert_eq!(ds.location.as_deref(), Some("EU"));
    /// # Ok(()) }
    /// ```
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// Sets the REST root, for example `http://127.0.0.1:9050` for an emulator (bigq
    /// appends `/bigquery/v2`). Defaults to `https://bigquery.googleapis.com`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_endpoint(emulator.rest_endpoint())
    ///     .with_credentials(bigq::Credentials::anonymous())
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.rest_endpoint(), format!("{}/bigquery/v2", emulator.rest_endpoint()));
    /// let rows: Vec<(String,)> = client.query("SELECT 'over REST'").fetch_all().await?;
    /// assert_eq!(rows[0].0, "over REST");
    /// # Ok(()) }
    /// ```
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Points the client at an emulator: sets the endpoint and anonymous credentials.
    /// `host` may be `127.0.0.1:9050` or a full URL.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .build()
    ///     .await?;
    /// assert!(format!("{client:?}").contains("Anonymous"));
    /// let rows: Vec<(i64,)> = client.query("SELECT 40 + 2").fetch_all().await?;
    /// assert_eq!(rows, [(42,)]);
    /// # Ok(()) }
    /// ```
    pub fn with_emulator(mut self, host: impl AsRef<str>) -> Self {
        self.endpoint = Some(emulator_url(host.as_ref()));
        self.credentials = Some(Credentials::anonymous());
        self
    }

    /// Sets the BigQuery Storage API (gRPC) endpoint used by [`Client::read`], for example
    /// `http://127.0.0.1:9060` for an emulator. Defaults to
    /// `https://bigquerystorage.googleapis.com`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_storage_endpoint(emulator.grpc_endpoint())
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.storage_endpoint(), emulator.grpc_endpoint());
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client.query("CREATE TABLE ds.t AS SELECT 7 AS n").execute().await?;
    /// let rows: Vec<(i64,)> = client.read("ds.t").fetch_all().await?;
    /// assert_eq!(rows, [(7,)]);
    /// # Ok(()) }
    /// ```
    pub fn with_storage_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.storage_endpoint = Some(endpoint.into());
        self
    }

    /// Points the gRPC side at an emulator: sets the Storage API endpoint and the v2 gRPC
    /// endpoint (an emulator serves both on one port) and anonymous credentials. `host` may
    /// be `127.0.0.1:9060` or a full URL. Use it with [`with_emulator`](Self::with_emulator)
    /// when the emulator serves REST and gRPC on different ports.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_emulator_grpc(emulator.grpc_endpoint())
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.storage_endpoint(), emulator.grpc_endpoint());
    /// assert_eq!(client.grpc_endpoint(), emulator.grpc_endpoint());
    /// # Ok(()) }
    /// ```
    pub fn with_emulator_grpc(mut self, host: impl AsRef<str>) -> Self {
        let url = emulator_url(host.as_ref());
        self.storage_endpoint = Some(url.clone());
        self.grpc_endpoint = Some(url);
        self.credentials = Some(Credentials::anonymous());
        self
    }

    /// Sets the BigQuery v2 gRPC endpoint used with [`Transport::Grpc`]. Defaults to
    /// `https://bigquery.googleapis.com`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// use bigq::Transport;
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_grpc_endpoint(emulator.grpc_endpoint())
    ///     .with_credentials(bigq::Credentials::anonymous())
    ///     .with_transport(Transport::Grpc)
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.grpc_endpoint(), emulator.grpc_endpoint());
    /// let rows: Vec<(String,)> = client.query("SELECT 'over gRPC'").fetch_all().await?;
    /// assert_eq!(rows[0].0, "over gRPC");
    /// # Ok(()) }
    /// ```
    pub fn with_grpc_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.grpc_endpoint = Some(endpoint.into());
        self
    }

    /// Sets how queries, jobs, datasets and tables are reached: [`Transport::Rest`] (the
    /// default) or [`Transport::Grpc`]. With gRPC, [`build`](Self::build) connects (waiting
    /// up to a second, then going on in the background), so the first call finds the
    /// connection open; a connection that fails there is not an error of `build` but is
    /// retried, and reported, by the first call.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// use bigq::{Client, Transport};
    /// let client = Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_emulator_grpc(emulator.grpc_endpoint())
    ///     .with_transport(Transport::Grpc)
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.transport(), Transport::Grpc);
    /// let rows: Vec<(i64,)> = client.query("SELECT 1").fetch_all().await?;
    /// assert_eq!(rows, [(1,)]);
    /// # Ok(()) }
    /// ```
    pub fn with_transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Sets the credentials (Application Default Credentials when not set).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// use bigq::Credentials;
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_endpoint(emulator.rest_endpoint())
    ///     .with_credentials(Credentials::anonymous())
    ///     .build()
    ///     .await?;
    /// let rows: Vec<(bool,)> = client.query("SELECT TRUE").fetch_all().await?;
    /// assert_eq!(rows, [(true,)]);
    /// # Ok(()) }
    /// ```
    pub fn with_credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Sets the retry policy for RPCs.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// use bigq::RetryPolicy;
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_retry_policy(RetryPolicy::default().with_max_attempts(3))
    ///     .build()
    ///     .await?;
    /// // A table that does not exist is not worth a second attempt.
    /// let e = client.get_table("ds.missing").await.unwrap_err();
    /// assert!(e.is_not_found() && e.attempts() == 1);
    /// # Ok(()) }
    /// ```
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Sets the TCP connect timeout (default 10 s).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// use std::time::Duration;
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_connect_timeout(Duration::from_secs(2))
    ///     .build()
    ///     .await?;
    /// let rows: Vec<(i64,)> = client.query("SELECT 1").fetch_all().await?;
    /// assert_eq!(rows, [(1,)]);
    /// # Ok(()) }
    /// ```
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Appends to the `User-Agent` header.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_user_agent("my-app/1.0")
    ///     .build()
    ///     .await?;
    /// let rows: Vec<(i64,)> = client.query("SELECT 1").fetch_all().await?;
    /// assert_eq!(rows, [(1,)]);
    /// # Ok(()) }
    /// ```
    pub fn with_user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = Some(agent.into());
        self
    }

    /// Fills what is not set yet from the environment: `GOOGLE_CLOUD_PROJECT` or
    /// `GCLOUD_PROJECT`, `BIGQUERY_EMULATOR_HOST` (REST endpoint and anonymous credentials)
    /// and `BIGQUERY_STORAGE_EMULATOR_HOST` (Storage API endpoint and anonymous credentials).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// // Settings given before `from_env` are kept; only what is missing comes from the
    /// // environment.
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_emulator_grpc(emulator.grpc_endpoint())
    ///     .from_env()
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.project(), emulator.project());
    /// assert_eq!(client.storage_endpoint(), emulator.grpc_endpoint());
    /// # Ok(()) }
    /// ```
    pub fn from_env(mut self) -> Self {
        if self.project.is_none() {
            self.project = ["GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"]
                .iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
        }
        if self.endpoint.is_none()
            && let Ok(host) = std::env::var("BIGQUERY_EMULATOR_HOST")
            && !host.is_empty()
        {
            let creds = self.credentials.take();
            self = self.with_emulator(host);
            if creds.is_some() {
                self.credentials = creds;
            }
        }
        if self.storage_endpoint.is_none()
            && let Ok(host) = std::env::var(STORAGE_EMULATOR_HOST_ENV)
            && !host.is_empty()
        {
            let creds = self.credentials.take();
            self = self.with_emulator_grpc(host);
            if creds.is_some() {
                self.credentials = creds;
            }
        }
        self
    }

    /// Builds the client. Loads Application Default Credentials unless credentials were
    /// given.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.project(), emulator.project());
    /// // A builder without a project is an error of `build`.
    /// let e = bigq::Client::builder().with_emulator(emulator.rest_endpoint()).build().await;
    /// assert!(e.unwrap_err().to_string().contains("no project"));
    /// # Ok(()) }
    /// ```
    pub async fn build(self) -> Result<Client> {
        let project = self.project.ok_or_else(|| {
            Error::config("no project: call with_project or set GOOGLE_CLOUD_PROJECT")
        })?;
        if project.is_empty() || project.contains('/') {
            return Err(Error::config(format!("invalid project id {project:?}")));
        }
        let root = endpoint_url("endpoint", self.endpoint, DEFAULT_ENDPOINT)?;
        let rest_base = if root.ends_with("/bigquery/v2") {
            root.to_string()
        } else {
            format!("{root}/bigquery/v2")
        };
        let rest_base_url = reqwest::Url::parse(&rest_base)
            .map_err(|e| Error::config(format!("invalid endpoint: {e}")))?;
        // Queries read large results through the Storage API only where it is the same
        // service as the REST side: both Google's, or a Storage endpoint set explicitly.
        // A REST emulator alone must not send reads to Google.
        let storage_for_queries = self.storage_endpoint.is_some() || root == DEFAULT_ENDPOINT;
        let grpc_for_queries = self.grpc_endpoint.is_some() || root == DEFAULT_ENDPOINT;
        let storage_endpoint = endpoint_url(
            "storage endpoint",
            self.storage_endpoint,
            DEFAULT_STORAGE_ENDPOINT,
        )?;
        let grpc_endpoint =
            endpoint_url("gRPC endpoint", self.grpc_endpoint, DEFAULT_GRPC_ENDPOINT)?;
        let connect_timeout = self.connect_timeout.unwrap_or(Duration::from_secs(10));
        let credentials = match self.credentials {
            Some(c) => c,
            None => Credentials::application_default()?,
        };
        let user_agent: String = match self.user_agent {
            Some(extra) => format!("bigq/{} {extra}", env!("CARGO_PKG_VERSION")),
            None => format!("bigq/{}", env!("CARGO_PKG_VERSION")),
        };
        let retry = self.retry.unwrap_or_default();
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .pool_idle_timeout(Duration::from_secs(60))
            // A response body that stops arriving ends by the policy's idle timeout.
            .read_timeout(retry.idle_timeout)
            .tcp_nodelay(true)
            .user_agent(user_agent.clone())
            .build()
            .map_err(|e| {
                Error::config("cannot build the HTTP client").with_source(SourceText(e.to_string()))
            })?;
        let mut grpc = GrpcChannel::new(storage_endpoint, connect_timeout, user_agent.clone());
        let mut v2 = GrpcChannel::new(grpc_endpoint, connect_timeout, user_agent);
        if credentials.is_anonymous() {
            // An emulator's REST side alone: gRPC calls would go to Google anonymously.
            if !storage_for_queries {
                grpc = grpc.refusing(format!(
                    "no Storage API endpoint for the emulator at {root}: set one with \
                     with_emulator_grpc or {STORAGE_EMULATOR_HOST_ENV}"
                ));
            }
            if !grpc_for_queries {
                v2 = v2.refusing(format!(
                    "no gRPC endpoint for the emulator at {root}: set one with \
                     with_emulator_grpc or with_grpc_endpoint"
                ));
            }
        }
        v2.share_with(&grpc);
        let grpc_side = |channel| {
            Arc::new(Grpc::new(
                channel,
                credentials.clone(),
                retry.clone(),
                project.clone(),
            ))
        };
        let (storage, v2) = (grpc_side(grpc), grpc_side(v2));
        let rest = Arc::new(Rest::new(
            rest_base,
            rest_base_url,
            http,
            credentials.clone(),
            retry.clone(),
        ));
        // The transport is chosen here, once: every v2 call goes through `api`.
        let api: Arc<dyn V2Api> = match self.transport {
            Transport::Rest => Arc::new(Traced::new(Arc::new(RestApi::new(rest.clone())), "rest")),
            Transport::Grpc => {
                // Queries, jobs and admin calls all go over the v2 channel: connect it now.
                v2.channel().warm_up(WARM_UP_WAIT).await;
                Arc::new(Traced::new(Arc::new(GrpcApi::new(v2.clone())), "grpc"))
            }
        };
        Ok(Client {
            inner: Arc::new(Inner {
                project,
                location: self.location,
                rest,
                storage,
                v2,
                api,
                transport: self.transport,
                storage_for_queries,
                credentials,
                retry,
            }),
        })
    }
}

/// How long [`ClientBuilder::build`] waits for a gRPC client's connection before leaving it
/// to finish in the background.
const WARM_UP_WAIT: Duration = Duration::from_secs(1);

/// An endpoint as given (or `default`), without a trailing slash; `what` names it in the
/// error for one that is not http(s).
fn endpoint_url(what: &str, given: Option<String>, default: &str) -> Result<String> {
    let url = given.as_deref().unwrap_or(default).trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Error::config(format!(
            "{what} {url:?} must start with http:// or https://"
        )));
    }
    Ok(url.to_string())
}

fn emulator_url(host: &str) -> String {
    if host.contains("://") {
        host.to_string()
    } else {
        format!("http://{host}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn emulator_endpoint_and_errors() {
        let c = Client::builder()
            .with_project("p")
            .with_emulator("127.0.0.1:9050")
            .build()
            .await
            .unwrap();
        assert_eq!(c.rest_endpoint(), "http://127.0.0.1:9050/bigquery/v2");
        assert!(format!("{c:?}").contains("Anonymous"));
        assert_eq!(c.storage_endpoint(), DEFAULT_STORAGE_ENDPOINT);
        // A REST emulator alone: a Storage read is refused instead of going to Google.
        let e = c.read("d.t").batches().await.unwrap_err();
        assert!(e.to_string().contains("no Storage API endpoint"), "{e}");
        let c = Client::builder()
            .with_project("p")
            .with_emulator("127.0.0.1:9050")
            .with_emulator_grpc("127.0.0.1:9060/")
            .build()
            .await
            .unwrap();
        assert_eq!(c.storage_endpoint(), "http://127.0.0.1:9060");
        let e = Client::builder()
            .with_project("p")
            .with_storage_endpoint("grpc://x")
            .with_credentials(Credentials::anonymous())
            .build()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("storage endpoint"), "{e}");
        let e = Client::builder()
            .with_emulator("127.0.0.1:1")
            .build()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("no project"), "{e}");
        let e = Client::builder()
            .with_project("p")
            .with_endpoint("ftp://x")
            .with_credentials(Credentials::anonymous())
            .build()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("http://"), "{e}");
        // An endpoint that is not a URL fails when the client is built, not at its first call.
        let e = Client::builder()
            .with_project("p")
            .with_endpoint("http://bad host:80")
            .with_credentials(Credentials::anonymous())
            .build()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("invalid endpoint"), "{e}");
    }

    /// With gRPC the client connects while it is built, before any call, on one connection
    /// when the v2 and Storage APIs share an endpoint; with REST it does not. Nobody answers
    /// on the port here, so `build` also shows that a connection that does not complete
    /// is not an error.
    #[tokio::test]
    async fn grpc_clients_connect_once_ahead_of_the_first_call() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let build = |transport| {
            Client::builder()
                .with_project("p")
                .with_emulator(format!("127.0.0.1:{}", addr.port()))
                .with_emulator_grpc(format!("127.0.0.1:{}", addr.port()))
                .with_transport(transport)
                .build()
        };
        let accept = || tokio::time::timeout(Duration::from_millis(300), listener.accept());
        let rest = build(Transport::Rest).await.unwrap();
        assert!(
            accept().await.is_err(),
            "a REST client connected to the gRPC port"
        );
        let grpc = build(Transport::Grpc).await.unwrap();
        let (_conn, _) = tokio::time::timeout(Duration::from_secs(10), listener.accept())
            .await
            .expect("the gRPC client did not connect while built")
            .unwrap();
        assert!(
            accept().await.is_err(),
            "a second connection for the Storage API"
        );
        assert!(Arc::ptr_eq(
            &grpc.inner.v2.channel().cell(),
            &grpc.inner.storage.channel().cell()
        ));
        assert!(!Arc::ptr_eq(
            &rest.inner.v2.channel().cell(),
            &Client::builder()
                .with_project("p")
                .with_emulator("127.0.0.1:9")
                .with_grpc_endpoint("http://127.0.0.1:10")
                .with_storage_endpoint("http://127.0.0.1:11")
                .build()
                .await
                .unwrap()
                .inner
                .storage
                .channel()
                .cell()
        ));
    }
}

//! The [`Client`]: a cheap-to-clone handle on what its clones share.

use std::sync::Arc;

use super::grpc::Grpc;
use super::rest::Rest;
use crate::auth::Credentials;
use crate::retry::RetryPolicy;
use crate::transport::{GrpcApi, RestApi, Traced, Transport, V2Api};

/// A BigQuery client.
///
/// Cheap to clone: clones share one connection pool and one credential cache.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> bigq::Result<()> {
/// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
/// #[derive(serde::Deserialize)]
/// struct Row {
///     word: String,
///     n: i64,
/// }
/// let client = bigq::Client::builder()
///     .with_project(emulator.project())
///     .with_emulator(emulator.rest_endpoint())
///     .build()
///     .await?;
/// let rows: Vec<Row> = client
///     .query("SELECT word, COUNT(*) AS n FROM UNNEST(@words) AS word GROUP BY word ORDER BY word")
///     .param("words", vec!["a", "b", "a"])
///     .fetch_all()
///     .await?;
/// assert_eq!((rows[0].word.as_str(), rows[0].n), ("a", 2));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) project: String,
    pub(crate) location: Option<String>,
    /// REST v2: the REST transport's connection, and `tabledata.list` / `insertAll` (which
    /// have no gRPC form) whatever the transport.
    pub(crate) rest: Arc<Rest>,
    /// The Storage API's gRPC channel, connected on first use.
    pub(crate) storage: Arc<Grpc>,
    /// The BigQuery v2 gRPC services' channel (used with [`Transport::Grpc`]).
    pub(crate) v2: Arc<Grpc>,
    /// The v2 operations (queries, jobs, datasets, tables) over the transport chosen when
    /// the client was built.
    pub(crate) api: Arc<dyn V2Api>,
    pub(crate) transport: Transport,
    /// Whether large query results may be read through the Storage API (see the builder).
    pub(crate) storage_for_queries: bool,
    pub(crate) credentials: Credentials,
    pub(crate) retry: RetryPolicy,
}

impl Client {
    /// This client with another retry policy and deadlines, sharing its connections and
    /// credentials: for the calls (or the part of a program) that need deadlines of their
    /// own. The read timeout of REST response bodies stays the one the client was built
    /// with.
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
    /// use std::time::Duration;
    /// use bigq::RetryPolicy;
    ///
    /// let quick = client.with_retry_policy(
    ///     RetryPolicy::default()
    ///         .with_attempt_timeout(Duration::from_secs(5))
    ///         .with_total_timeout(Duration::from_secs(20)),
    /// );
    /// let rows: Vec<(i64,)> = quick.query("SELECT 1").fetch_all().await?;
    /// assert_eq!(rows, vec![(1,)]);
    /// assert_eq!(quick.retry_policy().total_timeout, Duration::from_secs(20));
    /// assert_eq!(client.retry_policy(), &RetryPolicy::default());
    /// # Ok(()) }
    /// ```
    pub fn with_retry_policy(&self, policy: RetryPolicy) -> Client {
        let i = &self.inner;
        let rest = Arc::new(i.rest.with_retry(policy.clone()));
        let storage = Arc::new(i.storage.with_retry(policy.clone()));
        let v2 = Arc::new(i.v2.with_retry(policy.clone()));
        let api: Arc<dyn V2Api> = match i.transport {
            Transport::Rest => Arc::new(Traced::new(Arc::new(RestApi::new(rest.clone())), "rest")),
            Transport::Grpc => Arc::new(Traced::new(Arc::new(GrpcApi::new(v2.clone())), "grpc")),
        };
        Client {
            inner: Arc::new(Inner {
                project: i.project.clone(),
                location: i.location.clone(),
                rest,
                storage,
                v2,
                api,
                transport: i.transport,
                storage_for_queries: i.storage_for_queries,
                credentials: i.credentials.clone(),
                retry: policy,
            }),
        }
    }

    /// The retry policy and deadlines of this client's calls.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// let client = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .with_retry_policy(bigq::RetryPolicy::never())
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.retry_policy().max_attempts, 1);
    /// # Ok(()) }
    /// ```
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The project jobs run in, unless a call names another.
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
    /// assert_eq!(client.project(), emulator.project());
    /// # Ok(()) }
    /// ```
    pub fn project(&self) -> &str {
        &self.inner.project
    }

    /// The default location for jobs, if set.
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
    /// assert_eq!(client.location(), None);
    /// let eu = bigq::Client::builder()
    ///     .with_project(emulator.project())
    ///     .with_location("EU")
    ///     .with_emulator(emulator.rest_endpoint())
    ///     .build()
    ///     .await?;
    /// assert_eq!(eu.location(), Some("EU"));
    /// # Ok(()) }
    /// ```
    pub fn location(&self) -> Option<&str> {
        self.inner.location.as_deref()
    }

    /// The REST endpoint (`.../bigquery/v2`).
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
    /// assert_eq!(client.rest_endpoint(), format!("{}/bigquery/v2", emulator.rest_endpoint()));
    /// # Ok(()) }
    /// ```
    pub fn rest_endpoint(&self) -> &str {
        &self.inner.rest.base
    }

    /// The BigQuery Storage API (gRPC) endpoint.
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
    /// assert_eq!(client.storage_endpoint(), emulator.grpc_endpoint());
    /// # Ok(()) }
    /// ```
    pub fn storage_endpoint(&self) -> &str {
        self.inner.storage.channel().endpoint()
    }

    /// The BigQuery v2 gRPC endpoint, used with [`Transport::Grpc`].
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
    /// assert_eq!(client.grpc_endpoint(), emulator.grpc_endpoint());
    /// # Ok(()) }
    /// ```
    pub fn grpc_endpoint(&self) -> &str {
        self.inner.v2.channel().endpoint()
    }

    /// The transport of v2 calls (queries, jobs, datasets, tables).
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
    /// use bigq::Transport;
    /// assert_eq!(client.transport(), Transport::Rest);
    /// # Ok(()) }
    /// ```
    pub fn transport(&self) -> Transport {
        self.inner.transport
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("project", &self.inner.project)
            .field("location", &self.inner.location)
            .field("rest_endpoint", &self.inner.rest.base)
            .field("storage_endpoint", &self.storage_endpoint())
            .field("transport", &self.inner.transport)
            .field("credentials", &self.inner.credentials)
            .finish()
    }
}

//! Sending gRPC requests to the BigQuery Storage API and the v2 services: the channel, the
//! per-call metadata (credentials and the `x-goog-request-params` routing header), unary
//! calls with retries (through the retry driver), and gRPC statuses as bigq [`Error`]s.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Status};

use crate::auth::Credentials;
use crate::error::{Error, ErrorKind, Result, SourceText};
use crate::retry::{self, Failure, RetryPolicy, retry_info};

/// The largest gRPC message bigq accepts. BigQuery's ReadRows responses stay under 128 MiB;
/// the limit leaves room above that.
pub(crate) const MAX_DECODING_MESSAGE_SIZE: usize = 256 * 1024 * 1024;

/// A gRPC endpoint and its channel: connected on first use, so that a client can be built
/// before (or outside) the runtime that first calls with it, or ahead of the first call by
/// [`warm_up`](Self::warm_up).
#[derive(Clone)]
pub(crate) struct GrpcChannel {
    endpoint: String,
    connect_timeout: Duration,
    user_agent: String,
    /// Why this channel must not be used, if it must not (a REST emulator without a Storage
    /// emulator would otherwise send anonymous Storage calls to Google).
    refused: Option<String>,
    /// Shared with the other service's channel when both name the same endpoint (an
    /// emulator serving the v2 and Storage APIs on one port): one connection for both.
    channel: Arc<tokio::sync::OnceCell<Channel>>,
}

impl GrpcChannel {
    pub(crate) fn new(endpoint: String, connect_timeout: Duration, user_agent: String) -> Self {
        GrpcChannel {
            endpoint,
            connect_timeout,
            user_agent,
            refused: None,
            channel: Arc::new(tokio::sync::OnceCell::new()),
        }
    }

    /// A channel that fails every call with `why` instead of connecting.
    pub(crate) fn refusing(mut self, why: String) -> Self {
        self.refused = Some(why);
        self
    }

    /// Uses `other`'s connection when both channels serve and name the same endpoint.
    pub(crate) fn share_with(&mut self, other: &GrpcChannel) {
        if self.endpoint == other.endpoint && self.refused.is_none() && other.refused.is_none() {
            self.channel = other.channel.clone();
        }
    }

    #[cfg(test)]
    pub(crate) fn cell(&self) -> Arc<tokio::sync::OnceCell<Channel>> {
        self.channel.clone()
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The channel (one HTTP/2 connection, reconnected by tonic when it breaks). Waits for
    /// a [`warm_up`](Self::warm_up) still connecting.
    pub(crate) async fn channel(&self) -> Result<Channel> {
        self.channel
            .get_or_try_init(|| async { Ok(self.endpoint_config()?.connect_lazy()) })
            .await
            .cloned()
    }

    /// Starts connecting, on the current Tokio runtime (nothing without one), and waits up
    /// to `wait` for the connection, so that the first call does not pay for the TCP, TLS
    /// and HTTP/2 handshakes. A connection still being made after `wait` goes on in the
    /// background (the first call waits for it). A failure here is not an error: the
    /// channel is then left to connect on first use, where the call reports what went wrong.
    pub(crate) async fn warm_up(&self, wait: Duration) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(endpoint) = self.endpoint_config() else {
            return;
        };
        let cell = self.channel.clone();
        let connecting = runtime.spawn(async move {
            let _ = cell
                .get_or_init(|| async {
                    match endpoint.connect().await {
                        Ok(channel) => channel,
                        Err(_) => endpoint.connect_lazy(),
                    }
                })
                .await;
        });
        let _ = tokio::time::timeout(wait, connecting).await;
    }

    fn endpoint_config(&self) -> Result<Endpoint> {
        if let Some(why) = &self.refused {
            return Err(Error::config(why.clone()));
        }
        let bad = |e: tonic::transport::Error| {
            Error::config(format!("invalid gRPC endpoint {:?}", self.endpoint))
                .with_source(SourceText(e.to_string()))
        };
        let mut ep = Endpoint::from_shared(self.endpoint.clone())
            .map_err(bad)?
            .user_agent(self.user_agent.clone())
            .map_err(bad)?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true)
            // Fixed large windows rather than hyper's adaptive ones, which start every new
            // connection at HTTP/2's 64 KiB and grow only as pings measure the link: a
            // first Query page or ReadRows message of several MB would otherwise crawl
            // through many window updates. 8 MiB per stream covers a 1 Gbit/s link with a
            // 60 ms round trip; 32 MiB per connection lets four read streams run at once.
            .initial_stream_window_size(8 << 20)
            .initial_connection_window_size(32 << 20)
            // A connection that died without a word (a NAT or load balancer dropping it) is
            // found by TCP keep-alive probes: after 30 s without traffic, a probe every
            // 10 s, given up after 3 unanswered. Done by the kernel, they cost a call
            // nothing; HTTP/2 PINGs (hyper's keep-alive) would find a hung peer too, but
            // re-arm a timer at every poll of the connection, over 1% of the client's work
            // on a small query.
            .tcp_keepalive(Some(Duration::from_secs(30)))
            .tcp_keepalive_interval(Some(Duration::from_secs(10)))
            .tcp_keepalive_retries(Some(3));
        if self.endpoint.starts_with("https://") {
            ep = ep
                .tls_config(ClientTlsConfig::new().with_webpki_roots())
                .map_err(bad)?;
        }
        Ok(ep)
    }
}

/// Encodes a routing header value as Google's clients do (RFC 3986 unreserved characters
/// kept, everything else percent-encoded).
pub(crate) fn routing_value(key: &str, value: &str) -> String {
    let mut out = String::with_capacity(key.len() + 1 + value.len() * 3 / 2);
    out.push_str(key);
    out.push('=');
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `x-goog-request-params` value routing a call by `key` = `value`; `None` if it is not
/// a valid header value (it always is: [`routing_value`] writes ASCII).
pub(crate) fn routing_header(
    key: &str,
    value: &str,
) -> Option<MetadataValue<tonic::metadata::Ascii>> {
    MetadataValue::try_from(routing_value(key, value)).ok()
}

/// One gRPC service's side of a client: its channel, the credentials, the retry policy,
/// and the routing header of the client's project, made once.
pub(crate) struct Grpc {
    channel: GrpcChannel,
    credentials: Credentials,
    retry: RetryPolicy,
    project: String,
    /// `project_id={project}`, the routing header of most v2 calls.
    project_routing: Option<MetadataValue<tonic::metadata::Ascii>>,
}

/// A unary RPC's name (for logs) and routing header.
pub(crate) struct Rpc<'a> {
    pub(crate) name: &'static str,
    pub(crate) routing_key: &'a str,
    pub(crate) routing: &'a str,
    /// How long the request asks the server to hold it (`timeout_ms`): an attempt may take
    /// that much longer than the policy's attempt timeout.
    pub(crate) server_wait: Duration,
}

impl Grpc {
    pub(crate) fn new(
        channel: GrpcChannel,
        credentials: Credentials,
        retry: RetryPolicy,
        project: String,
    ) -> Self {
        Grpc {
            project_routing: routing_header("project_id", &project),
            channel,
            credentials,
            retry,
            project,
        }
    }

    /// The same channel and credentials under another retry policy.
    pub(crate) fn with_retry(&self, retry: RetryPolicy) -> Self {
        Grpc {
            channel: self.channel.clone(),
            credentials: self.credentials.clone(),
            retry,
            project: self.project.clone(),
            project_routing: self.project_routing.clone(),
        }
    }

    /// The channel.
    pub(crate) fn channel(&self) -> &GrpcChannel {
        &self.channel
    }

    /// A gRPC request carrying the credentials' headers and the routing header
    /// `x-goog-request-params: {key}={value}`.
    pub(crate) async fn request<T>(
        &self,
        message: T,
        routing_key: &str,
        routing: &str,
    ) -> Result<tonic::Request<T>> {
        let headers = self.credentials.headers().await?;
        let mut metadata = MetadataMap::from_headers(headers);
        let params = match &self.project_routing {
            Some(v) if routing_key == "project_id" && routing == self.project => v.clone(),
            _ => routing_header(routing_key, routing)
                .ok_or_else(|| Error::config("the routing header is not valid ASCII"))?,
        };
        metadata.insert("x-goog-request-params", params);
        Ok(tonic::Request::from_parts(
            metadata,
            tonic::Extensions::default(),
            message,
        ))
    }

    /// Sends a unary call, retrying as the client's policy allows (waiting what a
    /// `RetryInfo` asks for, when the status carries one). Only for calls that are safe to
    /// repeat (reads, and writes carrying a request or job id).
    ///
    /// `call` sends one attempt on a fresh client stub over the channel.
    pub(crate) async fn unary<Req, Resp, F, Fut>(
        &self,
        rpc: Rpc<'_>,
        message: Req,
        call: F,
    ) -> Result<Resp>
    where
        Req: Clone,
        F: Fn(Channel, tonic::Request<Req>) -> Fut,
        Fut: Future<Output = std::result::Result<tonic::Response<Resp>, Status>>,
    {
        let (rpc, message, call) = (&rpc, &message, &call);
        retry::run_waiting(&self.retry, rpc.name, rpc.server_wait, move || async move {
            // A channel that cannot connect, and a transient failure to get a token, are
            // retried (their errors are retryable); a refused endpoint or bad credentials not.
            let channel = self.channel.channel().await.map_err(Failure::of)?;
            let request = self
                .request(message.clone(), rpc.routing_key, rpc.routing)
                .await
                .map_err(Failure::of)?;
            // Boxed: v2 messages (a `Job`, a `QueryResponse`) are kilobytes each, and nested
            // unboxed in the caller's future they overflow a 2 MiB stack in debug builds.
            match Box::pin(call(channel, request)).await {
                Ok(resp) => Ok(resp.into_inner()),
                Err(status) => Err(Failure::of(status_error(&status))),
            }
        })
        .await
    }

    /// A unary call to the BigQuery v2 services, routed by `project_id`; see
    /// [`unary`](Self::unary).
    pub(crate) async fn v2_unary<Req, Resp, F, Fut>(
        &self,
        name: &'static str,
        project: &str,
        message: Req,
        call: F,
    ) -> Result<Resp>
    where
        Req: Clone,
        F: Fn(Channel, tonic::Request<Req>) -> Fut,
        Fut: Future<Output = std::result::Result<tonic::Response<Resp>, Status>>,
    {
        self.v2_unary_waiting(name, project, Duration::ZERO, message, call)
            .await
    }

    /// [`v2_unary`](Self::v2_unary) for a request that asks the server to hold it for up
    /// to `server_wait`.
    pub(crate) async fn v2_unary_waiting<Req, Resp, F, Fut>(
        &self,
        name: &'static str,
        project: &str,
        server_wait: Duration,
        message: Req,
        call: F,
    ) -> Result<Resp>
    where
        Req: Clone,
        F: Fn(Channel, tonic::Request<Req>) -> Fut,
        Fut: Future<Output = std::result::Result<tonic::Response<Resp>, Status>>,
    {
        let rpc = Rpc {
            name,
            routing_key: "project_id",
            routing: project,
            server_wait,
        };
        self.unary(rpc, message, call).await
    }
}

/// A tonic client on `channel` for a call with a codec of bigq's own (what a generated
/// client's method does before it calls): responses as large as Storage Read's, and the
/// channel ready.
pub(crate) async fn ready_client(
    channel: Channel,
) -> std::result::Result<tonic::client::Grpc<Channel>, Status> {
    let mut rpc =
        tonic::client::Grpc::new(channel).max_decoding_message_size(MAX_DECODING_MESSAGE_SIZE);
    rpc.ready()
        .await
        .map_err(|e| Status::unavailable(format!("the channel is not ready: {e}")))?;
    Ok(rpc)
}

/// A protobuf string field as an option: proto3 sends an absent string as empty.
pub(crate) fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Whether a failed ReadRows call may be reopened at the offset already read: the server is
/// unavailable, the HTTP/2 stream was reset or the connection broken under the call, or the server is throttling and
/// says when to come back (RESOURCE_EXHAUSTED with a RetryInfo; without one it is a quota
/// that waiting will not fix).
pub(crate) fn is_resumable(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable => true,
        // CANCELLED made by the client's transport (hyper's "operation was canceled", with
        // the broken connection as its source), not sent by the server: the connection
        // went, the read did not end.
        Code::Cancelled => std::error::Error::source(status).is_some(),
        Code::ResourceExhausted => retry_info(status).is_some(),
        Code::Internal => {
            let m = status.message();
            m.contains("RST_STREAM") || m.contains("stream reset") || m.contains("GOAWAY")
        }
        Code::Unknown => {
            // A connection broken mid-body surfaces as UNKNOWN with the h2 error as text;
            // one that broke before the call could start (closed or reset under a channel
            // that had not noticed yet) as UNKNOWN "transport error".
            let m = status.message();
            m.contains("connection reset")
                || m.contains("error reading a body")
                || m.contains("transport error")
        }
        _ => false,
    }
}

/// A gRPC status as a bigq error. The code becomes the HTTP status and BigQuery reason the
/// REST API would give, so `is_not_found`, `is_retryable`, `is_auth` work the same way.
pub(crate) fn status_error(status: &Status) -> Error {
    let (http, reason) = match status.code() {
        Code::NotFound => (404, "notFound"),
        Code::InvalidArgument | Code::OutOfRange => (400, "invalid"),
        Code::FailedPrecondition => (400, "failedPrecondition"),
        Code::AlreadyExists => (409, "duplicate"),
        Code::Aborted => (409, "aborted"),
        Code::PermissionDenied => (403, "accessDenied"),
        Code::Unauthenticated => (401, "unauthorized"),
        Code::ResourceExhausted => (429, "rateLimitExceeded"),
        Code::Unavailable => (503, "backendError"),
        Code::Internal => (500, "internalError"),
        Code::DeadlineExceeded => (504, "timeout"),
        Code::Unimplemented => (501, "notImplemented"),
        Code::Cancelled => (499, "stopped"),
        Code::Unknown | Code::DataLoss | Code::Ok => (500, "unknown"),
    };
    let message = if status.message().is_empty() {
        format!("gRPC status {:?}", status.code())
    } else {
        status.message().to_string()
    };
    let err = if status.code() == Code::DeadlineExceeded {
        Error::new(ErrorKind::Timeout, message)
    } else {
        Error::api(http, Some(reason.to_string()), message)
    };
    let err = err.with_retry_delay(retry_info(status));
    match std::error::Error::source(status) {
        Some(source) => err.with_source(SourceText(source.to_string())),
        None => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Client;
    use crate::retry::tests::throttled;

    #[test]
    fn routing_header_is_percent_encoded() {
        assert_eq!(
            routing_value("read_session.table", "projects/p/datasets/d/tables/t"),
            "read_session.table=projects%2Fp%2Fdatasets%2Fd%2Ftables%2Ft"
        );
        assert_eq!(
            routing_value("read_stream", "a-b_c.d~e"),
            "read_stream=a-b_c.d~e"
        );
    }

    #[tokio::test]
    async fn requests_carry_the_routing_header() {
        let client = Client::builder()
            .with_project("p")
            .with_credentials(crate::Credentials::anonymous())
            .build()
            .await
            .unwrap();
        let req = client
            .inner
            .storage
            .request(
                (),
                "read_stream",
                "projects/p/locations/US/sessions/s/streams/0",
            )
            .await
            .unwrap();
        assert_eq!(
            req.metadata().get("x-goog-request-params").unwrap(),
            "read_stream=projects%2Fp%2Flocations%2FUS%2Fsessions%2Fs%2Fstreams%2F0"
        );
        // Anonymous credentials add no authorization header.
        assert!(req.metadata().get("authorization").is_none());
    }

    /// A unary call throttled with a RetryInfo waits what it asks for, then is sent again;
    /// a status that is not retryable is returned at once.
    #[tokio::test]
    async fn unary_calls_honour_retry_info() {
        let grpc = Grpc::new(
            GrpcChannel::new(
                "http://127.0.0.1:9".into(),
                Duration::from_secs(1),
                "t".into(),
            ),
            Credentials::anonymous(),
            RetryPolicy::default().with_initial_backoff(Duration::from_millis(1)),
            "p".into(),
        );
        let rpc = || Rpc {
            name: "Test",
            routing_key: "project_id",
            routing: "p",
            server_wait: Duration::ZERO,
        };
        let calls = std::sync::atomic::AtomicU32::new(0);
        let started = std::time::Instant::now();
        let got = grpc
            .unary(rpc(), (), |_, _| {
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    match n {
                        0 => Err(throttled(Duration::from_millis(200))),
                        _ => Ok(tonic::Response::new(n)),
                    }
                }
            })
            .await
            .unwrap();
        assert_eq!(got, 1);
        assert!(
            started.elapsed() >= Duration::from_millis(200),
            "{:?}",
            started.elapsed()
        );

        let e = grpc
            .unary(rpc(), (), |_, _| async {
                Err::<tonic::Response<()>, _>(Status::not_found("gone"))
            })
            .await
            .unwrap_err();
        assert!(e.is_not_found() && e.attempts() == 1, "{e:?}");
    }

    #[test]
    fn statuses_map_to_errors() {
        let e = status_error(&Status::not_found("Table p:d.t not found"));
        assert!(e.is_not_found() && !e.is_retryable(), "{e:?}");
        assert_eq!(e.message(), "Table p:d.t not found");
        let e = status_error(&Status::invalid_argument("no column nope"));
        assert!(!e.is_retryable() && !e.is_not_found());
        assert!(e.to_string().contains("no column nope"), "{e}");
        assert!(status_error(&Status::unavailable("x")).is_retryable());
        assert!(status_error(&Status::permission_denied("x")).is_auth());
        assert!(status_error(&Status::deadline_exceeded("x")).is_timeout());
    }

    #[test]
    fn resumable_statuses() {
        assert!(is_resumable(&Status::unavailable("down")));
        let t = throttled(Duration::from_millis(1500));
        assert_eq!(retry_info(&t), Some(Duration::from_millis(1500)));
        assert!(is_resumable(&t));
        // The error carries the server's hint, for the retry driver.
        assert_eq!(
            status_error(&t).retry_delay(),
            Some(Duration::from_millis(1500))
        );
        assert!(!is_resumable(&Status::resource_exhausted("quota exceeded")));
        assert_eq!(retry_info(&Status::unavailable("x")), None);
        assert!(is_resumable(&Status::internal(
            "Received RST_STREAM with error code 2"
        )));
        assert!(!is_resumable(&Status::internal("bad things")));
        assert!(is_resumable(&Status::unknown("transport error")));
        assert!(!is_resumable(&Status::unknown("bad things")));
        assert!(!is_resumable(&Status::invalid_argument("x")));
        assert!(!is_resumable(&Status::not_found("x")));
    }
}

//! Sending REST requests: URLs, auth headers, retries (through the retry driver), and
//! BigQuery's error bodies.

use std::future::Future;
use std::time::Duration;

use reqwest::{Method, Response};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::auth::Credentials;
use crate::error::{Error, ErrorKind, Result, SourceText};
use crate::retry::{Attempts, Failure, RetryPolicy, retry_after};

/// Whether a request may be sent again after a failure that may have reached the server.
/// Every request bigq sends today is (reads, deletes, and writes that carry a request id,
/// insert ids or a client-chosen name); a non-idempotent one is retried only when the
/// connection failed before it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idempotent {
    /// Safe to send again.
    Yes,
}

/// A REST request.
pub(crate) struct Request<'a> {
    pub method: Method,
    pub path: &'a [&'a str],
    pub query: Vec<(&'static str, String)>,
    /// Shared, so a retried request resends the same bytes without copying them.
    pub body: Option<bytes::Bytes>,
    pub idempotent: Idempotent,
    /// How long the request asks the server to hold it (`timeoutMs`): an attempt may take
    /// that much longer than the policy's attempt timeout.
    pub server_wait: Duration,
    /// An `If-Match` etag: the server refuses the request (412) if the resource changed.
    pub if_match: Option<String>,
}

impl<'a> Request<'a> {
    pub fn get(path: &'a [&'a str]) -> Self {
        Request {
            method: Method::GET,
            path,
            query: Vec::new(),
            body: None,
            idempotent: Idempotent::Yes,
            server_wait: Duration::ZERO,
            if_match: None,
        }
    }

    pub fn delete(path: &'a [&'a str]) -> Self {
        Request {
            method: Method::DELETE,
            path,
            query: Vec::new(),
            body: None,
            idempotent: Idempotent::Yes,
            server_wait: Duration::ZERO,
            if_match: None,
        }
    }

    pub fn post(
        path: &'a [&'a str],
        body: &impl serde::Serialize,
        idempotent: Idempotent,
    ) -> Result<Self> {
        let body = serde_json::to_vec(body).map_err(|e| {
            Error::new(ErrorKind::Encode, "cannot encode the request body").with_source(e)
        })?;
        Ok(Request {
            method: Method::POST,
            path,
            query: Vec::new(),
            body: Some(body.into()),
            idempotent,
            server_wait: Duration::ZERO,
            if_match: None,
        })
    }

    /// The request with another method (PATCH and PUT bodies are built as POST's are).
    pub fn with_method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Only if the resource's etag is still `etag`.
    pub fn if_match(mut self, etag: Option<String>) -> Self {
        self.if_match = etag;
        self
    }

    pub fn query(mut self, key: &'static str, value: impl ToString) -> Self {
        self.query.push((key, value.to_string()));
        self
    }

    /// The request asks the server to hold it for up to `wait` before answering.
    pub fn waiting(mut self, wait: Duration) -> Self {
        self.server_wait = wait;
        self
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
pub(crate) struct ErrorDetail {
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub errors: Vec<ErrorProto>,
}

/// BigQuery's `ErrorProto`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ErrorProto {
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub location: Option<String>,
}

/// Builds an API error from a failed response's status and body.
pub(crate) fn api_error(status: u16, body: &[u8]) -> Error {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(b) => {
            let first = b.error.errors.first();
            let reason = first.and_then(|e| e.reason.clone());
            let message = if b.error.message.is_empty() {
                first.and_then(|e| e.message.clone()).unwrap_or_default()
            } else {
                b.error.message
            };
            Error::api(status, reason, message)
        }
        Err(_) => {
            let head = body.get(..body.len().min(512)).unwrap_or_default();
            let text = String::from_utf8_lossy(head).into_owned();
            Error::api(
                status,
                None,
                if text.is_empty() {
                    format!("HTTP {status}")
                } else {
                    text
                },
            )
        }
    }
}

pub(crate) fn transport_error(e: reqwest::Error) -> Error {
    let kind = if e.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Transport
    };
    let what = if e.is_connect() {
        "cannot connect to BigQuery"
    } else if e.is_body() || e.is_decode() {
        "the connection broke while reading the response"
    } else {
        "the request failed"
    };
    // reqwest's own timeouts are the connect timeout (part of an attempt) and the read
    // timeout, which the client sets to the policy's idle timeout: name which one passed.
    let deadline = match (e.is_timeout(), e.is_connect()) {
        (false, _) => None,
        (true, true) => Some(crate::Deadline::Attempt),
        (true, false) => Some(crate::Deadline::Idle),
    };
    let mut error = match deadline {
        Some(d) => Error::new(kind, format!("{what}: {d} passed")).with_deadline(d),
        None => Error::new(kind, what),
    };
    error = error.with_source(SourceText(e.without_url().to_string()));
    error
}

/// The REST side of a client: the HTTP connection pool, the `{root}/bigquery/v2` base URL,
/// the credentials and the retry policy. Shared by the REST transport and the calls that
/// have no gRPC form (`tabledata.list`, `tabledata.insertAll`).
pub(crate) struct Rest {
    /// `{root}/bigquery/v2`, no trailing slash.
    pub(crate) base: String,
    /// `base` parsed, once.
    base_url: reqwest::Url,
    http: reqwest::Client,
    credentials: Credentials,
    retry: RetryPolicy,
}

impl Rest {
    pub(crate) fn new(
        base: String,
        base_url: reqwest::Url,
        http: reqwest::Client,
        credentials: Credentials,
        retry: RetryPolicy,
    ) -> Self {
        Rest {
            base,
            base_url,
            http,
            credentials,
            retry,
        }
    }

    /// The retry policy of the client's RPCs.
    pub(crate) fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// The same connection pool and credentials under another retry policy.
    pub(crate) fn with_retry(&self, retry: RetryPolicy) -> Self {
        Rest {
            base: self.base.clone(),
            base_url: self.base_url.clone(),
            http: self.http.clone(),
            credentials: self.credentials.clone(),
            retry,
        }
    }

    fn url(&self, path: &[&str]) -> Result<reqwest::Url> {
        let mut url = self.base_url.clone();
        url.path_segments_mut()
            .map_err(|_| Error::config("the endpoint cannot have a path"))?
            .extend(path);
        Ok(url)
    }

    /// Sends a request, retrying as the policy allows, and returns the successful response
    /// with its body unread.
    pub(crate) async fn send(&self, req: Request<'_>) -> Result<Response> {
        self.send_then(req, |resp| async move { Ok(resp) }).await
    }

    /// Sends a request and hands the successful response to `finish` (which reads its
    /// body), retrying as the policy allows when either fails retryably.
    ///
    /// Each attempt waits for the response's headers for at most the policy's attempt
    /// timeout (plus the request's server wait) and never past the total deadline; the body
    /// is bounded by the HTTP client's read timeout (the policy's idle timeout). A 401 is
    /// sent once more with the credentials' headers fetched again, since a token can expire
    /// between being fetched and being checked.
    pub(crate) async fn send_then<T, F, Fut>(&self, req: Request<'_>, finish: F) -> Result<T>
    where
        F: Fn(Response) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let url = self.url(req.path)?;
        let mut attempts = Attempts::new(&self.retry);
        let mut reauthenticated = false;
        loop {
            let once = async {
                self.send_once(&req, url.clone())
                    .await
                    .map_err(|(e, before_sending)| {
                        let safe = req.idempotent == Idempotent::Yes || before_sending;
                        Failure {
                            retryable: e.is_retryable() && safe,
                            error: e,
                        }
                    })
            };
            let failure = match attempts
                .within(req.server_wait, "BigQuery request", once)
                .await
            {
                Ok(resp) => match finish(resp).await {
                    Ok(value) => return Ok(value),
                    Err(e) => Failure {
                        retryable: e.is_retryable() && req.idempotent == Idempotent::Yes,
                        error: e,
                    },
                },
                Err(failure) => failure,
            };
            if failure.error.status() == Some(401)
                && !reauthenticated
                && !self.credentials.is_anonymous()
            {
                reauthenticated = true;
                tracing::debug!(error = %failure.error, "401: sending again with fresh credentials");
                continue;
            }
            match attempts.retry(&failure.error, failure.retryable) {
                Some(wait) => {
                    tracing::debug!(
                        attempt = attempts.attempt() - 1,
                        error = %failure.error,
                        ?wait,
                        "retrying a BigQuery request"
                    );
                    tokio::time::sleep(wait).await;
                }
                None => return Err(attempts.give_up(failure.error)),
            }
        }
    }

    /// One attempt: the response, or the error and whether it came before the request was
    /// sent (so that sending it again cannot repeat it).
    async fn send_once(
        &self,
        req: &Request<'_>,
        url: reqwest::Url,
    ) -> std::result::Result<Response, (Error, bool)> {
        let headers = self.credentials.headers().await.map_err(|e| (e, true))?;
        let mut b = self.http.request(req.method.clone(), url).headers(headers);
        if !req.query.is_empty() {
            b = b.query(&req.query);
        }
        if let Some(etag) = &req.if_match {
            b = b.header(reqwest::header::IF_MATCH, etag.as_str());
        }
        if let Some(body) = &req.body {
            b = b
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        let resp = b.send().await.map_err(|e| {
            let before = e.is_connect();
            (transport_error(e), before)
        })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let delay = retry_after(resp.headers());
        let body = resp
            .bytes()
            .await
            .map_err(|e| (transport_error(e), false))?;
        Err((
            api_error(status.as_u16(), &body).with_retry_delay(delay),
            false,
        ))
    }

    /// Sends a request and decodes the JSON body.
    pub(crate) async fn call<T: DeserializeOwned>(&self, req: Request<'_>) -> Result<T> {
        self.send_then(req, |resp| async move {
            let body = resp.bytes().await.map_err(transport_error)?;
            serde_json::from_slice(&body).map_err(|e| {
                Error::new(
                    ErrorKind::Decode,
                    format!("unexpected response from BigQuery: {e}"),
                )
            })
        })
        .await
    }

    /// Sends a request whose response body is ignored (deletes, cancels).
    pub(crate) async fn call_empty(&self, req: Request<'_>) -> Result<()> {
        self.send_then(req, |resp| async move {
            resp.bytes().await.map_err(transport_error)?;
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bigquery_error_bodies() {
        let e = api_error(
            404,
            br#"{"error":{"code":404,"message":"Not found: Dataset p:d","errors":[{"message":"Not found: Dataset p:d","domain":"global","reason":"notFound"}],"status":"NOT_FOUND"}}"#,
        );
        assert!(e.is_not_found());
        assert_eq!(e.reason(), Some("notFound"));
        assert_eq!(e.message(), "Not found: Dataset p:d");
        let e = api_error(502, b"<html>bad gateway</html>");
        assert!(e.is_retryable());
        assert!(e.message().contains("bad gateway"));
    }
}

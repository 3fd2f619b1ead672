//! bigq's error type.

use std::fmt;
use std::time::Duration;

pub use bigq_codec::CodecError;

/// A `Result` with bigq's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The client is misconfigured (no project, a bad endpoint, ...).
    Config,
    /// Credentials could not be loaded or refused to give a token.
    Auth,
    /// The request did not reach BigQuery or the connection broke.
    Transport,
    /// A deadline passed.
    Timeout,
    /// BigQuery answered with an error (HTTP status, reason and message are kept).
    Api,
    /// A query or job finished with an error.
    Job,
    /// A response body or row could not be decoded; see [`Error::codec_error`].
    Decode,
    /// Rows could not be encoded or a request body could not be built.
    Encode,
}

struct Inner {
    kind: ErrorKind,
    message: String,
    status: Option<u16>,
    reason: Option<String>,
    location: Option<String>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    codec: Option<CodecError>,
    row_errors: Vec<RowError>,
    /// How long the server asked to wait before the request is sent again (gRPC's
    /// `google.rpc.RetryInfo`, HTTP's `Retry-After`).
    retry_delay: Option<Duration>,
    attempts: u32,
    elapsed: Option<Duration>,
    /// For timeouts: which deadline passed.
    deadline: Option<Deadline>,
}

/// Which deadline a [`Timeout`](ErrorKind::Timeout) error ran into; see [`Error::deadline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deadline {
    /// One attempt took longer than the policy's
    /// [`attempt_timeout`](crate::RetryPolicy::attempt_timeout) (the call is retried if
    /// attempts and time are left).
    Attempt,
    /// The call's overall deadline passed: the policy's
    /// [`total_timeout`](crate::RetryPolicy::total_timeout), or the caller's own (a query's
    /// [`timeout`](crate::query::QueryBuilder::timeout)).
    Total,
    /// A stream (ReadRows, AppendRows, a REST response body) sent nothing for the policy's
    /// [`idle_timeout`](crate::RetryPolicy::idle_timeout) (a stream that can resume does).
    Idle,
}

impl fmt::Display for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Deadline::Attempt => "the attempt deadline",
            Deadline::Total => "the overall deadline",
            Deadline::Idle => "the idle timeout",
        })
    }
}

/// A row BigQuery refused, from a Storage Write append's `row_errors`; see
/// [`Error::row_errors`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    /// The row's index as the writer counts rows: 0 for the first row it was given, across
    /// every append.
    pub row: u64,
    /// BigQuery's message.
    pub message: String,
}

/// An error from bigq.
///
/// It is opaque: ask it what it is with [`kind`](Error::kind) and the `is_*` predicates, and
/// for API errors read BigQuery's [`reason`](Error::reason) (`notFound`, `invalidQuery`,
/// `duplicate`, ...) and [`status`](Error::status). Decode errors name the column and row
/// through [`codec_error`](Error::codec_error). Tokens and credentials never appear in it.
pub struct Error(Box<Inner>);

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            status: None,
            reason: None,
            location: None,
            source: None,
            codec: None,
            row_errors: Vec::new(),
            retry_delay: None,
            attempts: 1,
            elapsed: None,
            deadline: None,
        }))
    }

    /// `what` ran into `deadline`, `after` this long.
    pub(crate) fn deadline_passed(deadline: Deadline, after: Duration, what: &str) -> Self {
        let mut e = Self::new(
            ErrorKind::Timeout,
            format!("{what}: {deadline} ({after:.1?}) passed"),
        );
        e.0.deadline = Some(deadline);
        e
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }

    pub(crate) fn api(status: u16, reason: Option<String>, message: impl Into<String>) -> Self {
        let mut e = Self::new(ErrorKind::Api, message);
        e.0.status = Some(status);
        e.0.reason = reason;
        e
    }

    pub(crate) fn job(
        reason: Option<String>,
        message: impl Into<String>,
        location: Option<String>,
    ) -> Self {
        let mut e = Self::new(ErrorKind::Job, message);
        e.0.reason = reason;
        e.0.location = location;
        e
    }

    /// Names the deadline that ended the call (a timeout reqwest reported).
    pub(crate) fn with_deadline(mut self, deadline: Deadline) -> Self {
        self.0.deadline = Some(deadline);
        self
    }

    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }

    /// A row that could not be encoded for writing.
    pub(crate) fn encode(e: CodecError) -> Self {
        let mut err = Error::new(ErrorKind::Encode, e.to_string());
        err.0.codec = Some(e);
        err
    }

    /// Attaches the rows BigQuery refused.
    pub(crate) fn with_row_errors(mut self, rows: Vec<RowError>) -> Self {
        self.0.row_errors = rows;
        self
    }

    /// The same error with BigQuery's reason `reason`.
    pub(crate) fn with_reason(mut self, reason: &str) -> Self {
        self.0.reason = Some(reason.to_string());
        self
    }

    pub(crate) fn with_attempts(mut self, attempts: u32, elapsed: Duration) -> Self {
        self.0.attempts = attempts;
        self.0.elapsed = Some(elapsed);
        self
    }

    /// The same error with the wait the server asked for before trying again.
    pub(crate) fn with_retry_delay(mut self, delay: Option<Duration>) -> Self {
        self.0.retry_delay = delay;
        self
    }

    /// How long the server asked to wait before the request is sent again, if it said.
    pub(crate) fn retry_delay(&self) -> Option<Duration> {
        self.0.retry_delay
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The message, as BigQuery or bigq gave it.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The HTTP status BigQuery answered with, for API errors.
    pub fn status(&self) -> Option<u16> {
        self.0.status
    }

    /// BigQuery's error reason (`notFound`, `invalidQuery`, `duplicate`, `accessDenied`,
    /// `backendError`, `rateLimitExceeded`, ...).
    pub fn reason(&self) -> Option<&str> {
        self.0.reason.as_deref()
    }

    /// Where in the request the error is, when BigQuery says (for example `query`).
    pub fn location(&self) -> Option<&str> {
        self.0.location.as_deref()
    }

    /// The codec error, with its column, row and value, for [`ErrorKind::Decode`] and
    /// [`ErrorKind::Encode`].
    pub fn codec_error(&self) -> Option<&CodecError> {
        self.0.codec.as_ref()
    }

    /// The rows a Storage Write append was refused for (BigQuery's `row_errors`), each with
    /// the index of the row as the writer counts them (0 for the first row it was given) and
    /// BigQuery's message. Empty for other errors.
    pub fn row_errors(&self) -> &[RowError] {
        &self.0.row_errors
    }

    /// How many attempts were made before giving up.
    pub fn attempts(&self) -> u32 {
        self.0.attempts
    }

    /// Time spent on the attempts, when retried.
    pub fn elapsed(&self) -> Option<Duration> {
        self.0.elapsed
    }

    /// The thing does not exist (HTTP 404 or reason `notFound`).
    pub fn is_not_found(&self) -> bool {
        self.0.status == Some(404) || self.reason() == Some("notFound")
    }

    /// The thing exists already (HTTP 409 or reason `duplicate`).
    pub fn is_already_exists(&self) -> bool {
        self.0.status == Some(409) || self.reason() == Some("duplicate")
    }

    /// The resource changed since it was read: an update sent with its etag was refused
    /// (HTTP 412, reason `conditionNotMet`, gRPC `FAILED_PRECONDITION`).
    pub fn is_precondition_failed(&self) -> bool {
        self.0.status == Some(412) || self.reason() == Some("conditionNotMet")
    }

    /// The query is invalid (reason `invalidQuery`).
    pub fn is_invalid_query(&self) -> bool {
        self.reason() == Some("invalidQuery")
    }

    /// Permission or credentials problem.
    pub fn is_auth(&self) -> bool {
        self.0.kind == ErrorKind::Auth
            || matches!(self.0.status, Some(401 | 403))
                && !matches!(self.reason(), Some("rateLimitExceeded" | "quotaExceeded"))
    }

    /// A deadline passed.
    pub fn is_timeout(&self) -> bool {
        self.0.kind == ErrorKind::Timeout
    }

    /// For a timeout, which deadline passed (`None` for a timeout the transport reported
    /// without saying, and for other errors).
    pub fn deadline(&self) -> Option<Deadline> {
        self.0.deadline
    }

    /// A row or body could not be decoded.
    pub fn is_decode(&self) -> bool {
        self.0.kind == ErrorKind::Decode
    }

    /// Trying the same request again may succeed: a broken connection, an attempt or a
    /// stream that timed out (not the overall deadline), HTTP 408, 429, 500, 502, 503, 504,
    /// or the reasons `backendError`, `rateLimitExceeded`, `internalError`,
    /// `jobBackendError`.
    pub fn is_retryable(&self) -> bool {
        match self.0.kind {
            ErrorKind::Transport => true,
            ErrorKind::Timeout => self.0.deadline != Some(Deadline::Total),
            ErrorKind::Api | ErrorKind::Job => {
                matches!(self.0.status, Some(408 | 429 | 500 | 502 | 503 | 504))
                    || matches!(
                        self.reason(),
                        Some(
                            "backendError"
                                | "rateLimitExceeded"
                                | "internalError"
                                | "jobBackendError"
                                | "jobInternalError"
                        )
                    )
            }
            _ => false,
        }
    }
}

impl From<CodecError> for Error {
    fn from(e: CodecError) -> Self {
        let mut err = Error::new(ErrorKind::Decode, e.to_string());
        err.0.codec = Some(e);
        err
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.kind {
            ErrorKind::Api => {
                write!(f, "BigQuery error")?;
                if let Some(s) = self.0.status {
                    write!(f, " {s}")?;
                }
                if let Some(r) = &self.0.reason {
                    write!(f, " ({r})")?;
                }
                write!(f, ": {}", self.0.message)?;
            }
            ErrorKind::Job => {
                write!(f, "query failed")?;
                if let Some(r) = &self.0.reason {
                    write!(f, " ({r})")?;
                }
                write!(f, ": {}", self.0.message)?;
            }
            ErrorKind::Decode => write!(f, "decode error: {}", self.0.message)?,
            ErrorKind::Config => write!(f, "configuration error: {}", self.0.message)?,
            ErrorKind::Auth => write!(f, "authentication error: {}", self.0.message)?,
            ErrorKind::Transport => write!(f, "transport error: {}", self.0.message)?,
            ErrorKind::Timeout => write!(f, "timed out: {}", self.0.message)?,
            ErrorKind::Encode => write!(f, "encode error: {}", self.0.message)?,
        }
        if self.0.attempts > 1 {
            write!(f, " (after {} attempts", self.0.attempts)?;
            if let Some(e) = self.0.elapsed {
                write!(f, " in {:.1?}", e)?;
            }
            write!(f, ")")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.0.kind)
            .field("message", &self.0.message);
        if let Some(s) = self.0.status {
            d.field("status", &s);
        }
        if let Some(r) = &self.0.reason {
            d.field("reason", r);
        }
        if let Some(c) = &self.0.codec {
            d.field("codec", c);
        }
        if let Some(deadline) = self.0.deadline {
            d.field("deadline", &deadline);
        }
        if self.0.attempts > 1 {
            d.field("attempts", &self.0.attempts);
        }
        if let Some(s) = &self.0.source {
            d.field("source", &s.to_string());
        }
        d.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        if let Some(c) = &self.0.codec {
            return Some(c);
        }
        self.0
            .source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

/// Wraps an error from the HTTP stack, keeping its text but not its type.
#[derive(Debug)]
pub(crate) struct SourceText(pub String);

impl fmt::Display for SourceText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SourceText {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates() {
        let e = Error::api(404, Some("notFound".into()), "Not found: Table p:d.t");
        assert!(e.is_not_found() && !e.is_retryable());
        assert_eq!(
            e.to_string(),
            "BigQuery error 404 (notFound): Not found: Table p:d.t"
        );
        let e = Error::api(503, Some("backendError".into()), "try again");
        assert!(e.is_retryable());
        let e = Error::api(403, Some("rateLimitExceeded".into()), "slow down");
        assert!(e.is_retryable() && !e.is_auth());
        let e = Error::job(
            Some("invalidQuery".into()),
            "Syntax error",
            Some("query".into()),
        );
        assert!(e.is_invalid_query() && !e.is_retryable());
        let codec = bigq_codec::CodecError::new(bigq_codec::CodecErrorKind::Value, "bad")
            .with_column("c")
            .with_row(3);
        let e = Error::from(codec);
        assert!(e.is_decode());
        assert_eq!(e.codec_error().unwrap().row(), Some(3));
        assert!(std::error::Error::source(&e).is_some());
    }
}

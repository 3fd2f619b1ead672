//! Errors as BigQuery sends them: an HTTP status, a reason and a message.

use std::fmt;

/// A BigQuery error: HTTP status, `errors[].reason` and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BqError {
    /// The HTTP status (400, 403, 404, 409, 500, ...).
    pub(crate) status: u16,
    /// BigQuery's reason: `invalidQuery`, `notFound`, `duplicate`, `invalid`, ...
    pub(crate) reason: &'static str,
    /// The message, worded as BigQuery words it where known.
    pub(crate) message: String,
    /// `errors[].location`, when BigQuery names one (a query position or a field).
    pub(crate) location: Option<String>,
}

impl BqError {
    /// The HTTP status BigQuery answers with (400, 403, 404, 409, 500, ...).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// BigQuery's reason: `invalidQuery`, `notFound`, `duplicate`, `invalid`, ...
    pub fn reason(&self) -> &str {
        self.reason
    }

    /// The message, worded as BigQuery words it where known.
    pub fn message(&self) -> &str {
        &self.message
    }
    fn new(status: u16, reason: &'static str, message: impl Into<String>) -> Self {
        BqError {
            status,
            reason,
            message: message.into(),
            location: None,
        }
    }

    /// 400 `invalidQuery`.
    pub(crate) fn invalid_query(message: impl Into<String>) -> Self {
        Self::new(400, "invalidQuery", message)
    }

    /// 400 `invalid`.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(400, "invalid", message)
    }

    /// 404 `notFound`.
    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "notFound", message)
    }

    /// 409 `duplicate`.
    pub(crate) fn duplicate(message: impl Into<String>) -> Self {
        Self::new(409, "duplicate", message)
    }

    /// 403 `accessDenied`.
    pub(crate) fn access_denied(message: impl Into<String>) -> Self {
        Self::new(403, "accessDenied", message)
    }

    /// 500 `internalError`.
    /// 412 `conditionNotMet`: an `If-Match` etag that is no longer the resource's.
    pub(crate) fn condition_not_met(message: impl Into<String>) -> Self {
        BqError::new(412, "conditionNotMet", message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "internalError", message)
    }

    /// 400 `bytesBilledLimitExceeded`: a query that would bill more than its
    /// `maximumBytesBilled`, worded as BigQuery words it.
    pub(crate) fn bytes_billed_limit_exceeded(limit: u64, billed: u64) -> Self {
        Self::new(
            400,
            "bytesBilledLimitExceeded",
            format!("Query exceeded limit for bytes billed: {limit}. {billed} or higher required."),
        )
    }

    /// 400 `invalidQuery` for a construct the emulator does not support, naming it.
    pub(crate) fn unsupported(what: impl fmt::Display) -> Self {
        Self::invalid_query(format!("Unsupported by bigq-emulator: {what}"))
    }

    /// Sets `errors[].location`.
    pub(crate) fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// The gRPC-style status name BigQuery puts in `error.status`.
    pub(crate) fn status_name(&self) -> &'static str {
        match self.status {
            400 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            409 => "ALREADY_EXISTS",
            412 => "FAILED_PRECONDITION",
            429 => "RESOURCE_EXHAUSTED",
            501 => "UNIMPLEMENTED",
            503 => "UNAVAILABLE",
            _ => "INTERNAL",
        }
    }

    /// The `{"error": {...}}` body.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut item = serde_json::json!({
            "message": self.message,
            "domain": "global",
            "reason": self.reason,
        });
        if let Some(loc) = &self.location {
            item["location"] = loc.clone().into();
            item["locationType"] = "other".into();
        }
        serde_json::json!({
            "error": {
                "code": self.status,
                "message": self.message,
                "errors": [item],
                "status": self.status_name(),
            }
        })
    }

    /// The `errorResult` / `errors[]` entry of a failed job.
    pub(crate) fn to_error_proto(&self) -> serde_json::Value {
        let mut item = serde_json::json!({"reason": self.reason, "message": self.message});
        if let Some(loc) = &self.location {
            item["location"] = loc.clone().into();
        }
        item
    }
}

impl fmt::Display for BqError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.reason, self.message)
    }
}

impl std::error::Error for BqError {}

/// Shorthand for results carrying a [`BqError`].
pub type BqResult<T> = Result<T, BqError>;

//! Credentials: Application Default Credentials through Google's `google-cloud-auth`, or
//! none for emulators.

use std::fmt;

use http::HeaderMap;

use crate::error::{Error, ErrorKind, Result, SourceText};

/// The OAuth scope bigq asks for.
pub const BIGQUERY_SCOPE: &str = "https://www.googleapis.com/auth/bigquery";

/// How bigq authenticates its requests.
///
/// Build one with [`Credentials::application_default`] (service account keys, authorized
/// user, metadata server, impersonation and workload identity federation, as Google's own
/// clients find them) or [`Credentials::anonymous`] (no `Authorization` header, for
/// emulators). The value never shows a token in `Debug` output.
#[derive(Clone)]
pub struct Credentials {
    inner: Kind,
}

#[derive(Clone)]
enum Kind {
    Anonymous,
    Google(google_cloud_auth::credentials::Credentials),
}

impl Credentials {
    /// No credentials: requests carry no `Authorization` header. For emulators.
    pub fn anonymous() -> Self {
        Credentials {
            inner: Kind::Anonymous,
        }
    }

    /// Application Default Credentials, with the BigQuery scope.
    pub fn application_default() -> Result<Self> {
        let creds = google_cloud_auth::credentials::Builder::default()
            .with_scopes([BIGQUERY_SCOPE])
            .build()
            .map_err(|e| {
                Error::new(
                    ErrorKind::Auth,
                    "cannot load Application Default Credentials",
                )
                .with_source(SourceText(e.to_string()))
            })?;
        Ok(Credentials {
            inner: Kind::Google(creds),
        })
    }

    /// Credentials built with `google-cloud-auth` by the caller (a service account key, an
    /// impersonated account, external accounts, ...).
    pub fn from_google_auth(credentials: google_cloud_auth::credentials::Credentials) -> Self {
        Credentials {
            inner: Kind::Google(credentials),
        }
    }

    /// Whether these are anonymous credentials.
    pub fn is_anonymous(&self) -> bool {
        matches!(self.inner, Kind::Anonymous)
    }

    /// The headers to add to a request (empty for anonymous credentials).
    pub(crate) async fn headers(&self) -> Result<HeaderMap> {
        match &self.inner {
            Kind::Anonymous => Ok(HeaderMap::new()),
            Kind::Google(c) => match c.headers(http::Extensions::new()).await {
                Ok(google_cloud_auth::credentials::CacheableResource::New { data, .. }) => Ok(data),
                Ok(google_cloud_auth::credentials::CacheableResource::NotModified) => Err(
                    Error::new(ErrorKind::Auth, "credentials returned no headers"),
                ),
                Err(e) => {
                    let mut err = Error::new(ErrorKind::Auth, "cannot get an access token");
                    if e.is_transient() {
                        err = Error::new(
                            ErrorKind::Transport,
                            "cannot get an access token (transient)",
                        );
                    }
                    Err(err.with_source(SourceText(e.to_string())))
                }
            },
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner {
            Kind::Anonymous => f.write_str("Credentials::Anonymous"),
            Kind::Google(_) => f.write_str("Credentials::Google(..)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn anonymous_adds_no_header() {
        let c = Credentials::anonymous();
        assert!(c.headers().await.unwrap().is_empty());
        assert_eq!(format!("{c:?}"), "Credentials::Anonymous");
    }
}

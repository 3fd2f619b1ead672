//! A credential that expires mid-read: the server refuses the old token from a moment on,
//! the token provider's first refresh fails (a transient error of the token endpoint) and
//! the next gives a new token; the streams cut mid-way reopen with it and the read ends
//! with every row once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bigq::{Client, Credentials};
use google_cloud_auth::credentials::{CacheableResource, CredentialsProvider, EntityTag};
use google_cloud_auth::errors::CredentialsError;
use http::{Extensions, HeaderMap, HeaderValue};

use super::read::{read_all, seeded_emulator};
use super::{Checksum, quick_policy};
use crate::netbed::storm::{Reply, Storm};

/// Gives `Bearer old` until `expired` is raised; then fails once, transiently, and gives
/// `Bearer new` from then on.
#[derive(Debug)]
struct Expiring {
    expired: Arc<AtomicBool>,
    refresh_failures: AtomicUsize,
    calls: AtomicUsize,
}

impl CredentialsProvider for Expiring {
    async fn headers(
        &self,
        _: Extensions,
    ) -> Result<CacheableResource<HeaderMap>, CredentialsError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let token = if !self.expired.load(Ordering::SeqCst) {
            "Bearer old"
        } else if self.refresh_failures.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(CredentialsError::from_msg(
                true,
                "the token endpoint answered 503",
            ));
        } else {
            "Bearer new"
        };
        let mut data = HeaderMap::new();
        data.insert(http::header::AUTHORIZATION, HeaderValue::from_static(token));
        Ok(CacheableResource::New {
            entity_tag: EntityTag::new(),
            data,
        })
    }

    async fn universe_domain(&self) -> Option<String> {
        Some("googleapis.com".into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_expires_mid_read_is_refreshed_and_the_read_goes_on() {
    let (emu, want) = seeded_emulator(40_000).await;
    let expired = Arc::new(AtomicBool::new(false));
    let (storm, addr) = Storm::start(
        "127.0.0.1:0".parse().unwrap(),
        vec![],
        Reply::Forward,
        Some(emu.grpc_endpoint()),
    )
    .await;
    // The session and the 4 streams' first ReadRows carry the old token; then it expires.
    storm.expire_after(5, "Bearer new", expired.clone());
    // Every stream is cut a quarter of the way, so each reopens after the expiry.
    for _ in 0..4 {
        emu.faults().cut_next_read_rows(2_500);
    }
    let provider = Arc::new(Expiring {
        expired: expired.clone(),
        refresh_failures: AtomicUsize::new(0),
        calls: AtomicUsize::new(0),
    });
    let credentials = Credentials::from_google_auth(
        google_cloud_auth::credentials::Credentials::from(ArcProvider(provider.clone())),
    );
    let client = Client::builder()
        .with_project("test-project")
        .with_emulator(emu.rest_endpoint())
        .with_emulator_grpc(format!("http://{addr}"))
        // After the emulator's endpoints, which set anonymous credentials.
        .with_credentials(credentials)
        .with_retry_policy(quick_policy().with_total_timeout(Duration::from_secs(30)))
        .build()
        .await
        .unwrap();
    let batches = read_all(&client).await.unwrap();
    assert_eq!(Checksum::of(&batches), want, "every row once");
    assert_eq!(emu.faults().read_rows_cut(), 4, "every stream was cut");
    assert!(expired.load(Ordering::SeqCst), "the token expired mid-read");
    assert!(
        provider.refresh_failures.load(Ordering::SeqCst) >= 2,
        "the refresh failed once, then gave the new token"
    );
    let log = storm.log();
    let resumed_with_new = log
        .iter()
        .filter(|s| {
            s.path.ends_with("/ReadRows") && s.authorization.as_deref() == Some("Bearer new")
        })
        .count();
    assert!(
        resumed_with_new >= 1,
        "streams reopened with the new token: {log:?}"
    );
    assert!(
        log.iter().all(|s| s.authorization.is_some()),
        "every call carried a token"
    );
    emu.shutdown().await;
}

/// A provider shared with the test, so that it can look at what happened.
#[derive(Debug)]
struct ArcProvider(Arc<Expiring>);

impl CredentialsProvider for ArcProvider {
    async fn headers(
        &self,
        e: Extensions,
    ) -> Result<CacheableResource<HeaderMap>, CredentialsError> {
        self.0.headers(e).await
    }

    async fn universe_domain(&self) -> Option<String> {
        self.0.universe_domain().await
    }
}

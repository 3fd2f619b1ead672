//! A gRPC server of its own for error storms: it answers each call with the next reply of a
//! script (a status, with a `RetryInfo` if asked, or the call forwarded to an upstream such
//! as bigq-emulator), logs when each call came and with which `authorization`, and can
//! refuse every token but one with UNAUTHENTICATED (an expired credential).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service};
use tonic::transport::Channel;
use tonic::{Code, Status};

/// One answer of the script.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Fail with this code, and a `google.rpc.RetryInfo` asking for the delay if given.
    Fail(Code, Option<Duration>),
    /// Forward the call to the upstream.
    Forward,
}

/// A call the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    pub path: String,
    pub authorization: Option<String>,
}

#[derive(Debug)]
struct State {
    script: Mutex<VecDeque<Reply>>,
    /// The reply once the script is used up.
    then: Reply,
    upstream: Option<Channel>,
    log: Mutex<Vec<Seen>>,
    /// When set, calls carrying another `authorization` fail UNAUTHENTICATED.
    accept: Mutex<Option<String>>,
    /// After this many calls, accept only this `authorization` and raise the flag.
    expire: Mutex<Option<(usize, String, Arc<AtomicBool>)>>,
}

/// The server's handle; clones share the script and the log.
#[derive(Debug, Clone)]
pub struct Storm {
    state: Arc<State>,
}

/// A status carrying a `RetryInfo`, as BigQuery sends RESOURCE_EXHAUSTED.
pub fn status(code: Code, retry_delay: Option<Duration>) -> Status {
    use gcloud_sdk::google::rpc::{RetryInfo, Status as RpcStatus};
    use gcloud_sdk::prost::Message;
    use gcloud_sdk::prost_types::{Any, Duration as PbDuration};
    let message = format!("storm: {code:?}");
    let Some(delay) = retry_delay else {
        return Status::new(code, message);
    };
    let info = RetryInfo {
        retry_delay: Some(PbDuration {
            seconds: delay.as_secs() as i64,
            nanos: delay.subsec_nanos() as i32,
        }),
    };
    let rpc = RpcStatus {
        code: code as i32,
        message: message.clone(),
        details: vec![Any {
            type_url: "type.googleapis.com/google.rpc.RetryInfo".into(),
            value: info.encode_to_vec(),
        }],
    };
    Status::with_details(code, message, rpc.encode_to_vec().into())
}

impl Storm {
    /// Serves on `listen` (port 0 picks one): `script` first, then `then` for every call;
    /// `upstream` is where [`Reply::Forward`] goes. Returns the handle and the bound address;
    /// the server runs until the runtime ends.
    pub async fn start(
        listen: SocketAddr,
        script: Vec<Reply>,
        then: Reply,
        upstream: Option<String>,
    ) -> (Storm, SocketAddr) {
        let upstream = upstream.map(|u| {
            Channel::from_shared(u)
                .expect("upstream URL")
                .connect_lazy()
        });
        let storm = Storm {
            state: Arc::new(State {
                script: Mutex::new(script.into()),
                then,
                upstream,
                log: Mutex::default(),
                accept: Mutex::default(),
                expire: Mutex::default(),
            }),
        };
        let listener = tokio::net::TcpListener::bind(listen).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let svc = storm.clone();
        tokio::spawn(async move {
            let incoming = tonic::transport::server::TcpIncoming::from(listener);
            let _ = tonic::transport::Server::builder()
                .serve_with_incoming_shutdown(svc, incoming, std::future::pending())
                .await;
        });
        (storm, addr)
    }

    /// The calls seen so far.
    pub fn log(&self) -> Vec<Seen> {
        self.state.log.lock().unwrap().clone()
    }

    /// The token in use expires once `calls` calls have been seen: from then on only
    /// `authorization` is accepted, and `expired` is raised (the clock a credential provider
    /// sharing it reads).
    pub fn expire_after(&self, calls: usize, authorization: &str, expired: Arc<AtomicBool>) {
        *self.state.expire.lock().unwrap() = Some((calls, authorization.to_string(), expired));
    }

    /// From now on only `authorization` is accepted.
    pub fn accept_only(&self, authorization: &str) {
        *self.state.accept.lock().unwrap() = Some(authorization.to_string());
    }
}

impl Service<http::Request<Body>> for Storm {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let state = self.state.clone();
        Box::pin(async move {
            let authorization = req
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let calls = {
                let mut log = state.log.lock().unwrap();
                log.push(Seen {
                    at: Instant::now(),
                    path: req.uri().path().to_string(),
                    authorization: authorization.clone(),
                });
                log.len()
            };
            if let Some((after, token, flag)) = state.expire.lock().unwrap().as_ref()
                && calls > *after
            {
                *state.accept.lock().unwrap() = Some(token.clone());
                flag.store(true, Ordering::SeqCst);
            }
            let accepted = state.accept.lock().unwrap().clone();
            if accepted.is_some() && accepted != authorization {
                return Ok(
                    Status::unauthenticated("storm: the access token has expired").into_http(),
                );
            }
            let reply = state
                .script
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| state.then.clone());
            match (reply, &state.upstream) {
                (Reply::Fail(code, delay), _) => Ok(status(code, delay).into_http()),
                (Reply::Forward, Some(upstream)) => {
                    let mut ch = upstream.clone();
                    if let Err(e) = std::future::poll_fn(|cx| ch.poll_ready(cx)).await {
                        return Ok(Status::unavailable(format!("storm upstream: {e}")).into_http());
                    }
                    match ch.call(req).await {
                        Ok(resp) => Ok(resp),
                        Err(e) => {
                            Ok(Status::unavailable(format!("storm upstream: {e}")).into_http())
                        }
                    }
                }
                (Reply::Forward, None) => {
                    Ok(Status::unimplemented("storm: no upstream").into_http())
                }
            }
        })
    }
}

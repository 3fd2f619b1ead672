//! The REST server loop: HTTP/1.1 connections served by hyper with read timeouts, so a
//! client that opens a connection and sends half a request is dropped instead of holding
//! a connection (and a task) for ever.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

/// How long the server waits for a client's request.
#[derive(Clone, Copy, Debug)]
pub struct ReadTimeouts {
    /// For the request line and headers, from the first byte (hyper's `header_read_timeout`).
    pub header: Duration,
    /// For the whole body once the headers are in.
    pub body: Duration,
}

impl Default for ReadTimeouts {
    fn default() -> Self {
        ReadTimeouts {
            header: Duration::from_secs(30),
            body: Duration::from_secs(60),
        }
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then waits for the requests in
/// flight.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    timeouts: ReadTimeouts,
    shutdown: impl Future<Output = ()>,
) {
    // Outside the router, where the body type may change to the timed one.
    let app = tower::ServiceBuilder::new()
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            timeouts.body,
        ))
        .service(app);
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: wait a moment rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let conn = builder.serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    graceful.shutdown().await;
}

//! The gRPC router: one tower service on the gRPC port that dispatches each call by its method
//! path to the Storage Read and Write services and the v2 services, and serves them.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::SinkExt;
use gcloud_sdk::google::cloud::bigquery::storage::v1::append_rows_response;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    AppendRowsRequest, AppendRowsResponse, BatchCommitWriteStreamsRequest,
    BatchCommitWriteStreamsResponse, CreateReadSessionRequest, CreateWriteStreamRequest,
    FinalizeWriteStreamRequest, FinalizeWriteStreamResponse, FlushRowsRequest, FlushRowsResponse,
    GetWriteStreamRequest, ReadRowsRequest, ReadRowsResponse, ReadSession, SplitReadStreamRequest,
    SplitReadStreamResponse, WriteStream,
};
use tokio::net::TcpListener;
use tonic::body::Body;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status, Streaming};

use super::read::ReadService;
use super::service::{BoxFuture, grpc, unimplemented};
use super::v2;
use super::write::WriteService;
use crate::faults::{grpc_drops, grpc_fault};
use crate::state::AppState;

/// The method paths served.
const CREATE_READ_SESSION: &str =
    "/google.cloud.bigquery.storage.v1.BigQueryRead/CreateReadSession";
const READ_ROWS: &str = "/google.cloud.bigquery.storage.v1.BigQueryRead/ReadRows";
const SPLIT_READ_STREAM: &str = "/google.cloud.bigquery.storage.v1.BigQueryRead/SplitReadStream";
const WRITE: &str = "/google.cloud.bigquery.storage.v1.BigQueryWrite/";

/// The gRPC router: a tower service dispatching on the method path.
#[derive(Clone, Debug)]
pub(crate) struct Router {
    read: Arc<ReadService>,
    write: Arc<WriteService>,
    app: Arc<AppState>,
}

impl Router {
    /// A router over the Storage Read and Write services and the v2 services on `app`.
    pub(crate) fn new(
        read: Arc<ReadService>,
        write: Arc<WriteService>,
        app: Arc<AppState>,
    ) -> Router {
        Router { read, write, app }
    }
}

/// A unary Write method: decode, call, encode.
macro_rules! unary_write {
    ($write:expr, $req:expr, $Req:ty, $Resp:ty, $method:ident) => {
        Box::pin(async move {
            let write = $write;
            let svc = tower::service_fn(move |r: Request<$Req>| {
                let write = write.clone();
                async move { write.$method(r.into_inner()).map(Response::new) }
            });
            Ok(grpc::<$Resp, $Req>().unary(svc, $req).await)
        })
    };
}

impl tower::Service<http::Request<Body>> for Router {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    /// Serves the call, through the armed faults: an error rate answers before the call
    /// runs; the delay and a dropped answer come after it ran.
    fn call(&mut self, req: http::Request<Body>) -> BoxFuture {
        let faults = self.write.faults().clone();
        if let Some(e) = faults.draw_error(true) {
            return Box::pin(async move { Ok(grpc_fault(e).into_http()) });
        }
        let drops = grpc_drops(req.uri().path());
        let served = self.dispatch(req);
        Box::pin(async move {
            let resp = served.await?;
            let delay = faults.delay();
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if drops && faults.take_drop() {
                return Ok(Status::unavailable(LOST).into_http());
            }
            Ok(resp)
        })
    }
}

/// The status of a call whose answer an armed fault dropped after it ran.
const LOST: &str = "bigq-emulator fault: the answer was dropped after the change was applied";

impl Router {
    /// The call, by its method path.
    fn dispatch(&mut self, req: http::Request<Body>) -> BoxFuture {
        let read = self.read.clone();
        let write = self.write.clone();
        let path = req.uri().path().to_string();
        if let Some(method) = path.strip_prefix(v2::PREFIX) {
            return v2::call(self.app.clone(), method, req).unwrap_or_else(|| unimplemented(&path));
        }
        if let Some(method) = path.strip_prefix(WRITE) {
            return match method {
                "CreateWriteStream" => unary_write!(
                    write,
                    req,
                    CreateWriteStreamRequest,
                    WriteStream,
                    create_write_stream
                ),
                "GetWriteStream" => {
                    unary_write!(
                        write,
                        req,
                        GetWriteStreamRequest,
                        WriteStream,
                        get_write_stream
                    )
                }
                "FinalizeWriteStream" => unary_write!(
                    write,
                    req,
                    FinalizeWriteStreamRequest,
                    FinalizeWriteStreamResponse,
                    finalize_write_stream
                ),
                "FlushRows" => {
                    unary_write!(write, req, FlushRowsRequest, FlushRowsResponse, flush_rows)
                }
                "BatchCommitWriteStreams" => unary_write!(
                    write,
                    req,
                    BatchCommitWriteStreamsRequest,
                    BatchCommitWriteStreamsResponse,
                    batch_commit
                ),
                "AppendRows" => Box::pin(async move {
                    let svc = tower::service_fn(move |r: Request<Streaming<AppendRowsRequest>>| {
                        let write = write.clone();
                        async move { Ok::<_, Status>(Response::new(append_rows(write, r.into_inner()))) }
                    });
                    Ok(grpc::<AppendRowsResponse, AppendRowsRequest>()
                        .streaming(svc, req)
                        .await)
                }),
                _ => unimplemented(&path),
            };
        }
        match path.as_str() {
            CREATE_READ_SESSION => Box::pin(async move {
                let svc = tower::service_fn(move |r: Request<CreateReadSessionRequest>| {
                    let read = read.clone();
                    async move {
                        read.create_read_session(r.into_inner())
                            .await
                            .map(Response::new)
                    }
                });
                Ok(grpc::<ReadSession, CreateReadSessionRequest>()
                    .unary(svc, req)
                    .await)
            }),
            READ_ROWS => Box::pin(async move {
                let svc = tower::service_fn(move |r: Request<ReadRowsRequest>| {
                    let read = read.clone();
                    async move {
                        read.read_rows(r.into_inner())
                            .map(|responses| Response::new(futures::stream::iter(responses)))
                    }
                });
                Ok(grpc::<ReadRowsResponse, ReadRowsRequest>()
                    .server_streaming(svc, req)
                    .await)
            }),
            SPLIT_READ_STREAM => Box::pin(async move {
                let svc = tower::service_fn(move |r: Request<SplitReadStreamRequest>| {
                    let read = read.clone();
                    async move { read.split_read_stream(r.into_inner()).map(Response::new) }
                });
                Ok(grpc::<SplitReadStreamResponse, SplitReadStreamRequest>()
                    .unary(svc, req)
                    .await)
            }),
            _ => unimplemented(&path),
        }
    }
}

/// One `AppendRows` connection: requests answered in order on a task of their own, the
/// writer schema and stream name carried from request to request as BigQuery allows.
fn append_rows(
    write: Arc<WriteService>,
    mut inbound: Streaming<AppendRowsRequest>,
) -> futures::channel::mpsc::Receiver<Result<AppendRowsResponse, Status>> {
    let (mut tx, rx) = futures::channel::mpsc::channel(16);
    let cut = write.faults().take_append_cut();
    tokio::spawn(async move {
        let mut name = String::new();
        let mut schema = None;
        let mut table_schema = None;
        let mut answered = 0u64;
        loop {
            let req = match inbound.message().await {
                Ok(Some(r)) => r,
                Ok(None) => return,
                Err(s) => {
                    let _ = tx.send(Err(s)).await;
                    return;
                }
            };
            if cut.is_some_and(|c| answered >= c) {
                write.faults().append_cut_fired();
                let _ = tx
                    .send(Err(Status::unavailable(format!(
                        "bigq-emulator fault hook: the connection was cut after {answered} requests"
                    ))))
                    .await;
                return;
            }
            let resp = write.append(req, &mut name, &mut schema, &mut table_schema);
            answered += 1;
            let applied = matches!(
                resp.response,
                Some(append_rows_response::Response::AppendResult(_))
            );
            if applied && write.faults().take_drop() {
                let _ = tx.send(Err(Status::unavailable(LOST))).await;
                return;
            }
            if tx.send(Ok(resp)).await.is_err() {
                return;
            }
        }
    });
    rx
}

/// Serves `router` on `listener` (HTTP/2, plaintext) until `shutdown` completes.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> Result<(), tonic::transport::Error> {
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    tonic::transport::Server::builder()
        // Large windows so one stream can fill loopback bandwidth.
        .initial_stream_window_size(8 << 20)
        .initial_connection_window_size(32 << 20)
        .max_frame_size((1 << 20) - 1)
        // A peer that vanishes without closing (a killed client, a cut network) is noticed
        // and its connection freed instead of held open.
        .http2_keepalive_interval(Some(std::time::Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(std::time::Duration::from_secs(10)))
        .tcp_keepalive(Some(std::time::Duration::from_secs(60)))
        .serve_with_incoming_shutdown(router, incoming, shutdown)
        .await
}

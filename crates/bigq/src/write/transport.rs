//! The Storage Write RPCs the writer makes, behind a trait: over the client's gRPC channel,
//! or in tests an in-memory server that can cut connections and lose responses.

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    AppendRowsRequest, AppendRowsResponse, BatchCommitWriteStreamsRequest,
    BatchCommitWriteStreamsResponse, CreateWriteStreamRequest, FinalizeWriteStreamRequest,
    FinalizeWriteStreamResponse, FlushRowsRequest, FlushRowsResponse, GetWriteStreamRequest,
    WriteStream, big_query_write_client::BigQueryWriteClient,
};
use gcloud_sdk::prost::Message;
use tonic::Status;

use crate::client::Client;
use crate::client::grpc::{MAX_DECODING_MESSAGE_SIZE, ready_client, status_error};
use crate::error::{Error, ErrorKind, Result as BqResult};
use crate::retry::{self, Failure, RetryPolicy};

/// The responses of one AppendRows connection.
pub(crate) type Responses = BoxStream<'static, Result<AppendRowsResponse, Status>>;
/// The requests of one AppendRows connection, as the writer queues them. Shared, not
/// owned: the writer keeps every unconfirmed request to send it again after a reconnect,
/// and a request is up to 20 MB.
pub(crate) struct Requests(pub(crate) tokio::sync::mpsc::Receiver<Arc<AppendRowsRequest>>);

impl futures::Stream for Requests {
    type Item = Arc<AppendRowsRequest>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Arc<AppendRowsRequest>>> {
        self.0.poll_recv(cx)
    }
}

/// The AppendRows codec: prost's encoding of a shared request (prost encodes from a
/// reference, so the writer's copy is sent as it is), and tonic-prost's decoder for the
/// responses.
#[derive(Debug, Clone, Copy, Default)]
struct AppendRowsCodec;

impl tonic::codec::Codec for AppendRowsCodec {
    type Encode = Arc<AppendRowsRequest>;
    type Decode = AppendRowsResponse;
    type Encoder = AppendRowsCodec;
    type Decoder = tonic_prost::ProstDecoder<AppendRowsResponse>;

    fn encoder(&mut self) -> Self::Encoder {
        AppendRowsCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::new(tonic::codec::BufferSettings::default())
    }
}

impl tonic::codec::Encoder for AppendRowsCodec {
    type Item = Arc<AppendRowsRequest>;
    type Error = Status;

    fn encode(
        &mut self,
        item: Arc<AppendRowsRequest>,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), Status> {
        item.encode(dst)
            .map_err(|e| Status::internal(format!("encoding an AppendRows request: {e}")))
    }
}

/// The method path of AppendRows.
const APPEND_ROWS: &str = "/google.cloud.bigquery.storage.v1.BigQueryWrite/AppendRows";

type Call<T> = BoxFuture<'static, Result<T, Status>>;

/// The RPCs of `google.cloud.bigquery.storage.v1.BigQueryWrite`.
pub(crate) trait WriteTransport: Send + Sync + 'static {
    /// Opens AppendRows on `stream`, sending `requests` as they come.
    fn append_rows(&self, stream: &str, requests: Requests) -> Call<Responses>;
    fn create_write_stream(&self, req: CreateWriteStreamRequest) -> Call<WriteStream>;
    fn get_write_stream(&self, req: GetWriteStreamRequest) -> Call<WriteStream>;
    fn finalize_write_stream(
        &self,
        req: FinalizeWriteStreamRequest,
    ) -> Call<FinalizeWriteStreamResponse>;
    fn batch_commit_write_streams(
        &self,
        req: BatchCommitWriteStreamsRequest,
    ) -> Call<BatchCommitWriteStreamsResponse>;
    fn flush_rows(&self, req: FlushRowsRequest) -> Call<FlushRowsResponse>;
}

/// The RPCs over the client's channel, each with the credentials and the routing header.
pub(crate) struct GrpcWrite {
    pub(crate) client: Client,
}

fn to_status(e: Error) -> Status {
    if e.is_auth() {
        Status::unauthenticated(e.to_string())
    } else if e.kind() == ErrorKind::Config {
        Status::invalid_argument(e.to_string())
    } else {
        Status::unavailable(e.to_string())
    }
}

/// A control call (CreateWriteStream, GetWriteStream, FlushRows, FinalizeWriteStream,
/// BatchCommitWriteStreams) through the retry driver: each attempt bounded by the policy's
/// attempt timeout, retryable statuses (UNAVAILABLE, DEADLINE_EXCEEDED, a throttle with a
/// RetryInfo, ...) sent again within its budget. Each is safe to repeat: a stream created
/// twice leaves an unused stream, and flushing, finalizing or committing again changes
/// nothing more.
pub(crate) async fn control<T>(
    policy: &RetryPolicy,
    name: &'static str,
    call: impl Fn() -> Call<T>,
) -> BqResult<T> {
    retry::run(policy, name, || async {
        call()
            .await
            .map_err(|status| Failure::of(status_error(&status)))
    })
    .await
}

/// One unary call: a request with its routing header, the client over the channel.
macro_rules! unary {
    ($self:ident, $req:ident, $key:literal, $value:expr, $method:ident) => {{
        let client = $self.client.clone();
        Box::pin(async move {
            let routing = $value($req.clone());
            let storage = &client.inner.storage;
            let channel = storage.channel().channel().await.map_err(to_status)?;
            let request = storage
                .request($req, $key, &routing)
                .await
                .map_err(to_status)?;
            let mut rpc = BigQueryWriteClient::new(channel)
                .max_decoding_message_size(MAX_DECODING_MESSAGE_SIZE);
            Ok(rpc.$method(request).await?.into_inner())
        })
    }};
}

impl WriteTransport for GrpcWrite {
    fn append_rows(&self, stream: &str, requests: Requests) -> Call<Responses> {
        let client = self.client.clone();
        let stream = stream.to_string();
        Box::pin(async move {
            let storage = &client.inner.storage;
            let channel = storage.channel().channel().await.map_err(to_status)?;
            let (metadata, extensions, ()) = storage
                .request((), "write_stream", &stream)
                .await
                .map_err(to_status)?
                .into_parts();
            let request = tonic::Request::from_parts(metadata, extensions, requests);
            // What the generated client's `append_rows` does, with the codec above.
            let mut rpc = ready_client(channel).await?;
            let path = http::uri::PathAndQuery::from_static(APPEND_ROWS);
            let responses = rpc
                .streaming(request, path, AppendRowsCodec)
                .await?
                .into_inner();
            Ok(responses.boxed())
        })
    }

    fn create_write_stream(&self, req: CreateWriteStreamRequest) -> Call<WriteStream> {
        unary!(
            self,
            req,
            "parent",
            |r: CreateWriteStreamRequest| r.parent,
            create_write_stream
        )
    }

    fn get_write_stream(&self, req: GetWriteStreamRequest) -> Call<WriteStream> {
        unary!(
            self,
            req,
            "name",
            |r: GetWriteStreamRequest| r.name,
            get_write_stream
        )
    }

    fn finalize_write_stream(
        &self,
        req: FinalizeWriteStreamRequest,
    ) -> Call<FinalizeWriteStreamResponse> {
        unary!(
            self,
            req,
            "name",
            |r: FinalizeWriteStreamRequest| r.name,
            finalize_write_stream
        )
    }

    fn batch_commit_write_streams(
        &self,
        req: BatchCommitWriteStreamsRequest,
    ) -> Call<BatchCommitWriteStreamsResponse> {
        unary!(
            self,
            req,
            "parent",
            |r: BatchCommitWriteStreamsRequest| r.parent,
            batch_commit_write_streams
        )
    }

    fn flush_rows(&self, req: FlushRowsRequest) -> Call<FlushRowsResponse> {
        unary!(
            self,
            req,
            "write_stream",
            |r: FlushRowsRequest| r.write_stream,
            flush_rows
        )
    }
}

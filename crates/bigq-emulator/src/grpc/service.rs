//! What the gRPC services share: the prost codec with the size limit on requests, the boxed
//! future a call answers with, BigQuery errors as gRPC statuses, and the answer to a method
//! not served.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;

use tonic::body::Body;
use tonic::server::Grpc;
use tonic::{Code, Status};
use tonic_prost::ProstCodec;

use crate::error::BqError;

/// The largest request message accepted (BigQuery takes AppendRows requests up to 10 MB).
const MAX_REQUEST_BYTES: usize = 20 << 20;

/// A BigQuery error as the gRPC status the Storage API answers with.
pub(crate) fn status(e: &BqError) -> Status {
    let code = match e.status {
        400 => Code::InvalidArgument,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::NotFound,
        409 => Code::AlreadyExists,
        501 => Code::Unimplemented,
        503 => Code::Unavailable,
        _ => Code::Internal,
    };
    Status::new(code, e.message.clone())
}

/// The server half of a call answering `Enc` to `Dec` requests, which it takes up to
/// [`MAX_REQUEST_BYTES`].
pub(crate) fn grpc<Enc, Dec>() -> Grpc<ProstCodec<Enc, Dec>>
where
    Enc: gcloud_sdk::prost::Message + Send + 'static,
    Dec: gcloud_sdk::prost::Message + Default + Send + 'static,
{
    Grpc::new(ProstCodec::default()).max_decoding_message_size(MAX_REQUEST_BYTES)
}

/// What a call answers with, once it has run.
pub(crate) type BoxFuture =
    Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

/// The answer to a method the emulator does not serve: UNIMPLEMENTED, naming it.
pub(crate) fn unimplemented(path: &str) -> BoxFuture {
    let status = Status::unimplemented(format!(
        "bigq-emulator does not serve the gRPC method {path}"
    ));
    Box::pin(async move { Ok(status.into_http()) })
}

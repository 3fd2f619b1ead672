//! The [`Client`], its builder, and its connections: REST (`rest.rs`) and gRPC
//! (`grpc.rs`), each sending with the client's credentials and retry policy.

mod builder;
pub(crate) mod grpc;
mod handle;
pub(crate) mod rest;

pub use builder::ClientBuilder;
pub use handle::Client;

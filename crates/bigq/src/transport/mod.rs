//! How a client reaches BigQuery's v2 API (queries, jobs, datasets, tables): the
//! [`Transport`] chosen when the client is built, the operations every transport provides
//! ([`V2Api`]), their REST and gRPC implementations, and the `tracing` spans of their
//! admin calls (`traced.rs`).

mod api;
mod grpc;
mod rest;
mod traced;

pub use api::Transport;
pub(crate) use api::V2Api;
pub(crate) use grpc::GrpcApi;
pub(crate) use rest::RestApi;
pub(crate) use traced::Traced;

//! How a client reaches BigQuery's v2 API (queries, jobs, datasets, tables): the
//! [`Transport`] chosen when the client is built, the operations every transport provides
//! ([`V2Api`]), and their REST and gRPC implementations.

mod api;
mod grpc;
mod rest;

pub use api::Transport;
pub(crate) use api::V2Api;
pub(crate) use grpc::GrpcApi;
pub(crate) use rest::RestApi;

//! The BigQuery Storage API over gRPC: `google.cloud.bigquery.storage.v1.BigQueryRead` and
//! `BigQueryWrite`; and on the same port the v2 API's `JobService`, `DatasetService` and
//! `TableService` (`v2/`).
//!
//! The protobuf messages are the ones `gcloud-sdk` generates for clients; this module
//! serves them with tonic's server half (`tonic::server::Grpc` and the prost codec) behind
//! a small router that matches the method path, so no code is generated here.

pub(crate) mod arrow;
mod changes;
pub(crate) mod read;
mod router;
mod service;
pub(crate) mod v2;
pub(crate) mod write;

pub(crate) use self::router::{Router, serve};

//! BigQuery REST v2 over HTTP, answering with BigQuery's exact shapes: `router` routes each
//! endpoint to its handler in `datasets`, `tables`, `routines` or `jobs`, which read JSON requests
//! (`http`, with the bodies checked by `check` against the resources' `fields`) into the
//! operations of [`crate::api`] and write their answers as JSON (rows by bigq-codec's REST encoder).

mod check;
mod datasets;
#[rustfmt::skip]
mod fields;
mod http;
mod jobs;
mod router;
mod routines;
mod serve;
mod tables;

pub(crate) use self::router::router;
pub use self::serve::ReadTimeouts;
pub(crate) use self::serve::serve;

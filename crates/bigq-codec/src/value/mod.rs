//! BigQuery's value types.
//!
//! Each type keeps BigQuery's exact representation (no `f64` for NUMERIC, microseconds for
//! times) and has the canonical text form BigQuery uses in REST responses and query
//! parameters as its `Display` and `FromStr`. They deserialize from any bigq row (fast, from
//! the Arrow value) and from their text form (any other serde format).

mod error;
pub(crate) mod magic;
mod serde_impls;
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// not yet audited for the no-panic rule
pub mod text;
mod types;

#[cfg(any(feature = "chrono", feature = "jiff", feature = "time"))]
mod convert;
#[cfg(any(feature = "chrono", feature = "jiff", feature = "time"))]
pub use convert::ConversionError;

pub use error::ParseValueError;
pub(crate) use serde_impls::{RANGE_FIELDS, RawSerializeGuard, interval_bytes};
pub use types::*;

//! BigQuery's value types.
//!
//! Each type keeps BigQuery's exact representation (no `f64` for NUMERIC, microseconds for
//! times) and has the canonical text form BigQuery uses in REST responses and query
//! parameters as its `Display` and `FromStr`. They deserialize from any bigq row (fast, from
//! the Arrow value) and from their text form (any other serde format).

mod serde_impls;
pub mod text;
mod types;

#[cfg(any(feature = "chrono", feature = "jiff", feature = "time"))]
mod convert;
#[cfg(any(feature = "chrono", feature = "jiff", feature = "time"))]
pub use convert::ConversionError;

pub(crate) use serde_impls::{RANGE_FIELDS, RawSerializeGuard, interval_bytes};
pub use types::*;

/// Error returned when a text does not parse as a BigQuery value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseValueError {
    type_name: &'static str,
    input: String,
}

impl ParseValueError {
    pub(crate) fn new(type_name: &'static str, input: &str) -> Self {
        Self {
            type_name,
            input: input.chars().take(64).collect(),
        }
    }

    /// The BigQuery type that was expected.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl std::fmt::Display for ParseValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid {} value {:?}", self.type_name, self.input)
    }
}

impl std::error::Error for ParseValueError {}

/// Newtype-struct names through which bigq's row deserializer hands a value type its raw
/// Arrow value instead of text. Other deserializers see an ordinary newtype struct.
pub(crate) mod magic {
    /// What every name below starts with.
    pub const PREFIX: &str = "$bigq::";
    pub const NUMERIC: &str = "$bigq::Numeric";
    pub const BIGNUMERIC: &str = "$bigq::BigNumeric";
    pub const DATE: &str = "$bigq::Date";
    pub const TIME: &str = "$bigq::Time";
    pub const DATETIME: &str = "$bigq::DateTime";
    pub const TIMESTAMP: &str = "$bigq::Timestamp";
    pub const INTERVAL: &str = "$bigq::Interval";
    pub const RANGE: &str = "$bigq::Range";
    pub const JSON: &str = "$bigq::Json";
    pub const GEOGRAPHY: &str = "$bigq::Geography";
}

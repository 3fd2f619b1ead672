//! Newtype-struct names through which bigq's row deserializer hands a value type its raw
//! Arrow value instead of text. Other deserializers see an ordinary newtype struct.

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

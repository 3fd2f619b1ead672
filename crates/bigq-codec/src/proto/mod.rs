//! Rows for the BigQuery Storage Write API in protobuf, both ways: encoded straight from
//! serde, and decoded straight into Arrow.
//!
//! [`WriteSchema`] turns a table schema into the `DescriptorProto` the API takes as the writer
//! schema; [`RowEncoder`] writes rows of any `T: Serialize` in that message's wire format,
//! with no intermediate dynamic message. The async writer in `bigq` puts the rows into
//! `AppendRowsRequest`s. [`RowsDecoder`] is the other side, as the API receives them: any
//! writer descriptor compiled against a table schema, serialized rows into a `RecordBatch`
//! (the emulator's Storage Write server). Both go over one [`wire`] module; everything here
//! is sans-IO.
//!
//! What each column takes (besides `Option` for NULL in a NULLABLE column):
//!
//! | column | Rust values |
//! |---|---|
//! | INT64 | integers (`u64` above `i64::MAX` is an error) |
//! | FLOAT64 | `f64`, `f32`, integers up to 2⁵³ (NaN and ±∞ are FLOAT64 values) |
//! | BOOL | `bool` |
//! | STRING | text (`maxLength` checked), unit enum variants by name |
//! | BYTES | `&[u8]` / `serde_bytes`, or a sequence of `u8` (`Vec<u8>`) |
//! | NUMERIC, BIGNUMERIC | [`Numeric`](crate::value::Numeric), [`BigNumeric`](crate::value::BigNumeric), decimal text, integers, finite floats (by their shortest text) |
//! | DATE | [`Date`](crate::value::Date), `YYYY-MM-DD` text, days since 1970-01-01 |
//! | TIME, DATETIME | [`Time`](crate::value::Time), [`DateTime`](crate::value::DateTime), literal text, microseconds |
//! | TIMESTAMP | [`Timestamp`](crate::value::Timestamp), timestamp text (RFC 3339 or BigQuery's), microseconds since the epoch |
//! | JSON | [`Json`](crate::value::Json) or text (the JSON document), or any other value, written as its `serde_json` encoding |
//! | GEOGRAPHY | [`Geography`](crate::value::Geography) or WKT / GeoJSON text |
//! | INTERVAL | [`Interval`](crate::value::Interval) or interval text |
//! | RANGE | [`Range`](crate::value::Range), a struct `{start, end}`, or `[start, end)` text |
//! | RECORD | a struct or map |
//! | REPEATED | a sequence; NULL is an empty array, a NULL element is an error |
//!
//! Types from chrono, jiff or time reach a column through their serde text.

mod change;
mod decode;
mod schema;
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// not yet audited for the no-panic rule
mod ser;
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// not yet audited for the no-panic rule
pub mod wire;

#[cfg(test)]
mod tests;

pub use change::{
    CHANGE_SEQUENCE_COLUMN, CHANGE_TYPE_COLUMN, ChangeSequence, ChangeType, is_change_column,
};
pub use decode::{CompileError, DecodeError, RowsDecoder};
pub use schema::{NumericEncoding, ProtoOptions, WriteSchema};
pub use ser::RowEncoder;

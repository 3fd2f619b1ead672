//! Arrow to serde: the one decoder every typed read of bigq goes through.
//!
//! REST pages are decoded to Arrow first ([`crate::json`]); Storage Read and the gRPC query
//! API hand Arrow over directly. Either way a [`RecordBatch`](arrow_array::RecordBatch)
//! becomes rows of any `T: Deserialize`:
//!
//! ```
//! # use std::sync::Arc;
//! # use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
//! #[derive(serde::Deserialize, Debug, PartialEq)]
//! struct Person {
//!     id: i64,
//!     name: Option<String>,
//! }
//!
//! # let batch = RecordBatch::try_from_iter([
//! #     ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
//! #     ("name", Arc::new(StringArray::from(vec![Some("Ada"), None])) as ArrayRef),
//! # ])?;
//! let people: Vec<Person> = bigq_codec::de::from_record_batch(&batch)?;
//! assert_eq!(people[1], Person { id: 2, name: None });
//!
//! // Tuples take the columns by position; maps and `serde_json::Value` by name.
//! let pairs: Vec<(i64, Option<String>)> = bigq_codec::de::from_record_batch(&batch)?;
//! assert_eq!(pairs[0], (1, Some("Ada".to_string())));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How values are read
//!
//! | Target | Columns |
//! |---|---|
//! | struct | STRUCT (RECORD), or the row: fields by name (exact, then ASCII case-insensitive); extra columns are ignored |
//! | tuple, `Vec<T>` | STRUCT or the row by position; LIST (REPEATED) items |
//! | map, `serde_json::Value` | STRUCT or the row by column name; Arrow `Map` |
//! | `Option<T>` | `None` for NULL; NULL into anything else is an error |
//! | integers | any Arrow integer (range-checked), DATE as days, TIME/DATETIME/TIMESTAMP as microseconds, whole decimals |
//! | `f32`, `f64` | floats, integers, decimals (nearest `f64`) |
//! | `String`, `&str` | strings; any other scalar as its canonical BigQuery text (BYTES as base64) |
//! | `Vec<u8>`, `&[u8]`, `serde_bytes` | BYTES (borrowed) and strings |
//! | unit enums | strings, by variant name |
//! | [`Numeric`](crate::value::Numeric), [`Date`](crate::value::Date), ... | the raw Arrow value (no text in between); text or integers from other columns |
//! | one value (`i64`, `String`, ...) as the whole row | the column of a one-column result |
//!
//! `deserialize_any` (used by `serde_json::Value` and untagged enums) gives integers,
//! floats, booleans, strings and bytes as they are, decimals and dates and times as their
//! canonical text, STRUCT as a map and LIST as a sequence.
//!
//! Every type of the [schema mapping](crate::schema) is read, and the other common Arrow
//! types too: all integer and float widths, `LargeUtf8`, `Utf8View`, `LargeBinary`,
//! `BinaryView`, `FixedSizeBinary`, `LargeList`, `FixedSizeList`, `Map`, dictionaries,
//! timestamps and times of every unit, `Date64`, `Duration` and every interval unit.
//! A column of another type is an error naming it, raised only if a target reads it.
//!
//! # Errors
//!
//! A [`CodecError`](crate::CodecError) of kind
//! [`Deserialize`](crate::CodecErrorKind::Deserialize) naming the column (a dotted path
//! for nested fields), the row over the whole result and, for a value that did not fit,
//! the value: `NULL into a non-Option field (column `info.b`, row 17)`.

//!
//! # How it is fast
//!
//! - Per batch, not per cell: each column is downcast once into plain slices, and each
//!   target struct's fields are matched to columns once (keyed by the address of serde's
//!   `FIELDS` list). [`RowDecoder`] also keeps the per-batch
//!   vectors from one batch to the next.
//! - Structs are handed to serde's derived visitors as a sequence, not a map, once the
//!   first row of a batch has shown that to be right (no key is compared per row); a struct
//!   with `#[serde(alias)]` or a hand-written map-only visitor falls back to keys, which
//!   are the `&'static str`s of `FIELDS` (exactly what derive matches, aliases included).
//! - Each typed read inlines only the column type it usually meets; every other type is
//!   out of line. bigq's value types get the Arrow integer itself, no text in between.
//! - Text (dates, decimals) is written into a buffer on the stack; `String` targets get
//!   one allocation, from a borrowed `&str`, or none with
//!   [`RowDecoder::decode_in_place`], which decodes a batch into the previous batch's rows
//!   and so reuses their `String` and `Vec` buffers (derived types need serde_derive's
//!   `deserialize_in_place` feature).
//!
//! Decoding the 1M-row, 20-column scan table of the benchmarks (`bench/benches/
//! arrow_serde.rs`) into a derived struct takes about 2.3 G instructions, a third of them
//! in the allocator for the rows' own strings.

mod access;
mod cell;
mod column;
mod error;
mod node;
mod row;
mod rows;
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// not yet audited for the no-panic rule
pub(crate) mod text;

#[cfg(test)]
mod tests;

pub use rows::{BatchRows, RowDecoder, extend_from_record_batch, from_record_batch};

//! BigQuery table schemas: written by hand ([`TableSchema::new`]) or derived from a row type
//! with `#[derive(bigq::Schema)]` and [`TableSchema::of`].
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> bigq::Result<()> {
//! # let emulator = bigq_emulator::Emulator::start().await.unwrap();
//! # let client = bigq::Client::builder()
//! #     .with_project(emulator.project())
//! #     .with_emulator(emulator.rest_endpoint())
//! #     .with_emulator_grpc(emulator.grpc_endpoint())
//! #     .build()
//! #     .await?;
//! # client.create_dataset(bigq::admin::Dataset::new("shop")).await?;
//! use bigq::admin::Table;
//! use bigq::schema::{FieldMode, FieldType, TableSchema};
//! use bigq::value::{Numeric, Timestamp};
//!
//! #[derive(serde::Deserialize, bigq::Schema)]
//! #[serde(rename_all = "camelCase")]
//! struct Order {
//!     order_id: i64,
//!     #[bigq(description = "the buyer", max_length = 64)]
//!     customer: String,
//!     #[bigq(precision = 12, scale = 2)]
//!     amount: Numeric,
//!     #[bigq(default = "CURRENT_TIMESTAMP()", mode = "NULLABLE")]
//!     placed_at: Timestamp,
//!     tags: Vec<String>,
//!     note: Option<String>,
//! }
//!
//! let schema = TableSchema::of::<Order>();
//! let placed = &schema.fields[3];
//! assert_eq!((placed.name.as_str(), placed.field_type.clone()), ("placedAt", FieldType::Timestamp));
//! assert_eq!(schema.fields[4].mode(), FieldMode::Repeated);
//!
//! let table = client.create_table(Table::new("shop.orders", schema.clone())).await?;
//! assert_eq!(table.schema, Some(schema));
//! # Ok(()) }
//! ```
//!
//! ## The mapping
//!
//! | Rust field | column |
//! |---|---|
//! | `T` | `T`'s type, REQUIRED |
//! | `Option<T>` | NULLABLE |
//! | `Vec<T>`, `Option<Vec<T>>` | REPEATED (BigQuery has no NULL arrays) |
//! | `i64`, `i32`, `i16`, `i8`, `u32`, `u16`, `u64` | INT64 |
//! | `f64`, `f32` | FLOAT64 |
//! | `bool` | BOOL |
//! | `String`, `char` | STRING |
//! | `Vec<u8>` | BYTES |
//! | [`Numeric`](crate::value::Numeric), [`BigNumeric`](crate::value::BigNumeric) | NUMERIC, BIGNUMERIC |
//! | [`Date`](crate::value::Date), [`Time`](crate::value::Time), [`DateTime`](crate::value::DateTime), [`Timestamp`](crate::value::Timestamp) | DATE, TIME, DATETIME, TIMESTAMP |
//! | [`Interval`](crate::value::Interval), [`Json`](crate::value::Json) (and `serde_json::Value`), [`Geography`](crate::value::Geography) | INTERVAL, JSON, GEOGRAPHY |
//! | [`Range<Date>`](crate::value::Range) (`DateTime`, `Timestamp`) | `RANGE<DATE>` (`DATETIME`, `TIMESTAMP`) |
//! | a struct deriving `Schema` | RECORD of its fields |
//! | a newtype deriving `Schema` | its inner type's column |
//! | an enum of unit variants deriving `Schema` | STRING (serde reads variants by name) |
//! | chrono (feature `chrono`) | `NaiveDate` DATE, `NaiveTime` TIME, `NaiveDateTime` DATETIME, `DateTime<Tz>` TIMESTAMP, `TimeDelta` INTERVAL |
//! | jiff (feature `jiff`) | `civil::Date`, `civil::Time`, `civil::DateTime`, `Timestamp`, `Span` |
//! | time (feature `time`) | `Date`, `Time`, `PrimitiveDateTime`, `OffsetDateTime`, `Duration` |
//!
//! A BigQuery array holds neither NULLs nor arrays, so `Vec<Option<T>>` and `Vec<Vec<T>>`
//! have no column type and do not compile:
//!
//! ```compile_fail
//! #[derive(bigq::Schema)]
//! struct Row {
//!     scores: Vec<Option<i64>>,
//! }
//! ```
//!
//! and `mode` cannot make an array something else:
//!
//! ```compile_fail
//! #[derive(bigq::Schema)]
//! struct Row {
//!     #[bigq(mode = "NULLABLE")]
//!     scores: Vec<i64>,
//! }
//! # fn main() { let _ = bigq::schema::TableSchema::of::<Row>(); }
//! ```
//!
//! ## Why a derive
//!
//! A schema could be read from `Deserialize` alone, by running the type's deserializer
//! against a recording deserializer, but serde's data model loses what a schema needs: a
//! `Numeric` and a `String` both ask for a string, a `Timestamp` for an integer, an
//! `Option` only says "option" when the value is present, an untagged or flattened type
//! asks for "anything", and there is nowhere to say a column's description, precision or
//! default. A derive sees the field types themselves, maps each through [`ColumnSchema`]
//! (so a wrong type is a compile error, not a wrong schema at run time), and reads serde's
//! own `rename`, `rename_all`, `skip` and `flatten` so that the columns are named as the row
//! decoder looks them up.

pub use bigq_codec::schema::{
    ColumnSchema, FieldMode, FieldType, PolicyTags, RangeElementType, RoundingMode, Schema,
    TableFieldSchema, TableSchema, ValueSchema,
};

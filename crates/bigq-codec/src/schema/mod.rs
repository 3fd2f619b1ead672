//! BigQuery table schemas and their Arrow mapping.
//!
//! The Arrow types are the ones the BigQuery Storage Read API uses, so that rows decoded from
//! REST JSON and rows read through Storage Read are the same `RecordBatch`es:
//!
//! | BigQuery | Arrow |
//! |---|---|
//! | INT64 | `Int64` |
//! | FLOAT64 | `Float64` |
//! | NUMERIC | `Decimal128(38, 9)` |
//! | BIGNUMERIC | `Decimal256(76, 38)` |
//! | BOOL | `Boolean` |
//! | STRING | `Utf8` |
//! | BYTES | `Binary` |
//! | DATE | `Date32` |
//! | TIME | `Time64(Microsecond)` |
//! | DATETIME | `Timestamp(Microsecond, None)` |
//! | TIMESTAMP | `Timestamp(Microsecond, "UTC")` |
//! | GEOGRAPHY | `Utf8`, extension `google:sqlType:geography` |
//! | JSON | `Utf8`, extension `google:sqlType:json` |
//! | INTERVAL | `Interval(MonthDayNano)` |
//! | `RANGE<T>` | `Struct { start: T, end: T }` |
//! | RECORD | `Struct` |
//! | REPEATED x | `List(x)`, never null (an absent array is empty) |

mod of_type;
mod types;

pub use of_type::{ColumnSchema, Schema, ValueSchema};
pub use types::{
    EXTENSION_NAME_KEY, FieldMode, FieldType, GEOGRAPHY_EXTENSION, JSON_EXTENSION, PolicyTags,
    RangeElementType, RoundingMode, TableFieldSchema, TableSchema,
};

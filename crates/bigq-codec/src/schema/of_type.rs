//! Schemas of Rust types: the traits `#[derive(bigq::Schema)]` implements, and their
//! implementations for the types bigq's row decoder reads.
//!
//! Three traits, because a Rust field's type decides both a column's type and its mode:
//!
//! - [`ValueSchema`]: one value (`i64`, `String`, a struct as a RECORD), with no mode;
//! - [`ColumnSchema`]: a field's column, type and mode: `T` is REQUIRED, `Option<T>` is
//!   NULLABLE, `Vec<T>` (and `Option<Vec<T>>`, since BigQuery has no NULL arrays) is REPEATED;
//! - [`Schema`]: a row type's columns.
//!
//! BigQuery arrays cannot hold NULL or arrays, so `Vec<Option<T>>` and `Vec<Vec<T>>` have no
//! column type and do not compile (`Vec<u8>` is BYTES, so `Vec<Vec<u8>>` is REPEATED BYTES).

use super::types::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use crate::value::{
    BigNumeric, Date, DateTime, Geography, Interval, Json, Numeric, Range, Time, Timestamp,
};

impl TableSchema {
    /// The schema of a row type: its columns as `#[derive(bigq::Schema)]` (or a hand-written
    /// [`Schema`]) declares them, named as serde reads them.
    pub fn of<T: Schema + ?Sized>() -> Self {
        TableSchema::new(T::fields())
    }
}

/// A row type with a BigQuery schema: usually `#[derive(bigq::Schema)]`.
pub trait Schema {
    /// The columns, in field order, named as serde reads them.
    fn fields() -> Vec<TableFieldSchema>;
}

/// A type that is one BigQuery value: its column type, with no mode.
pub trait ValueSchema {
    /// The column of this name and type (mode unset; sub-fields for a RECORD).
    fn value_schema(name: &str) -> TableFieldSchema;
}

/// A field type with a BigQuery column: type and mode.
pub trait ColumnSchema {
    /// The column's mode.
    const MODE: FieldMode;

    /// The column of this name.
    fn column_schema(name: &str) -> TableFieldSchema;
}

/// A value is a REQUIRED column.
impl<T: ValueSchema + ?Sized> ColumnSchema for T {
    const MODE: FieldMode = FieldMode::Required;
    fn column_schema(name: &str) -> TableFieldSchema {
        T::value_schema(name).with_mode(FieldMode::Required)
    }
}

impl<T: ValueSchema> ColumnSchema for Option<T> {
    const MODE: FieldMode = FieldMode::Nullable;
    fn column_schema(name: &str) -> TableFieldSchema {
        T::value_schema(name).with_mode(FieldMode::Nullable)
    }
}

impl<T: ValueSchema> ColumnSchema for Vec<T> {
    const MODE: FieldMode = FieldMode::Repeated;
    fn column_schema(name: &str) -> TableFieldSchema {
        T::value_schema(name).with_mode(FieldMode::Repeated)
    }
}

/// BigQuery has no NULL arrays: a NULL array reads as an empty one.
impl<T: ValueSchema> ColumnSchema for Option<Vec<T>> {
    const MODE: FieldMode = FieldMode::Repeated;
    fn column_schema(name: &str) -> TableFieldSchema {
        T::value_schema(name).with_mode(FieldMode::Repeated)
    }
}

impl<T: ValueSchema + ?Sized> ValueSchema for Box<T> {
    fn value_schema(name: &str) -> TableFieldSchema {
        T::value_schema(name)
    }
}

macro_rules! scalar {
    ($field_type:expr => $($t:ty),+ $(,)?) => {$(
        impl ValueSchema for $t {
            fn value_schema(name: &str) -> TableFieldSchema {
                TableFieldSchema::new(name, $field_type)
            }
        }
    )+};
}

scalar!(FieldType::Int64 => i64, i32, i16, i8, u32, u16, u64);
scalar!(FieldType::Float64 => f64, f32);
scalar!(FieldType::Bool => bool);
scalar!(FieldType::String => String, str, char);
scalar!(FieldType::Bytes => Vec<u8>, [u8]);
scalar!(FieldType::Numeric => Numeric);
scalar!(FieldType::BigNumeric => BigNumeric);
scalar!(FieldType::Date => Date);
scalar!(FieldType::Time => Time);
scalar!(FieldType::DateTime => DateTime);
scalar!(FieldType::Timestamp => Timestamp);
scalar!(FieldType::Interval => Interval);
scalar!(FieldType::Json => Json, serde_json::Value);
scalar!(FieldType::Geography => Geography);

macro_rules! range {
    ($element:expr => $($t:ty),+ $(,)?) => {$(
        impl ValueSchema for Range<$t> {
            fn value_schema(name: &str) -> TableFieldSchema {
                TableFieldSchema::range(name, $element)
            }
        }
    )+};
}

range!(FieldType::Date => Date);
range!(FieldType::DateTime => DateTime);
range!(FieldType::Timestamp => Timestamp);

#[cfg(feature = "chrono")]
mod chrono_types {
    use super::*;

    scalar!(FieldType::Date => chrono::NaiveDate);
    scalar!(FieldType::Time => chrono::NaiveTime);
    scalar!(FieldType::DateTime => chrono::NaiveDateTime);
    scalar!(FieldType::Interval => chrono::TimeDelta);

    impl<Tz: chrono::TimeZone> ValueSchema for chrono::DateTime<Tz> {
        fn value_schema(name: &str) -> TableFieldSchema {
            TableFieldSchema::new(name, FieldType::Timestamp)
        }
    }
}

#[cfg(feature = "jiff")]
mod jiff_types {
    use super::*;

    scalar!(FieldType::Date => jiff::civil::Date);
    scalar!(FieldType::Time => jiff::civil::Time);
    scalar!(FieldType::DateTime => jiff::civil::DateTime);
    scalar!(FieldType::Timestamp => jiff::Timestamp);
    scalar!(FieldType::Interval => jiff::Span);
}

#[cfg(feature = "time")]
mod time_types {
    use super::*;

    scalar!(FieldType::Date => time::Date);
    scalar!(FieldType::Time => time::Time);
    scalar!(FieldType::DateTime => time::PrimitiveDateTime);
    scalar!(FieldType::Timestamp => time::OffsetDateTime);
    scalar!(FieldType::Interval => time::Duration);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col<T: ColumnSchema + ?Sized>() -> (FieldType, FieldMode) {
        let c = T::column_schema("c");
        let mode = c.mode();
        (c.field_type, mode)
    }

    #[test]
    fn modes_follow_option_and_vec() {
        assert_eq!(col::<i64>(), (FieldType::Int64, FieldMode::Required));
        assert_eq!(
            col::<Option<String>>(),
            (FieldType::String, FieldMode::Nullable)
        );
        assert_eq!(col::<Vec<f64>>(), (FieldType::Float64, FieldMode::Repeated));
        assert_eq!(
            col::<Option<Vec<bool>>>(),
            (FieldType::Bool, FieldMode::Repeated)
        );
        assert_eq!(col::<Vec<u8>>(), (FieldType::Bytes, FieldMode::Required));
        assert_eq!(
            col::<Vec<Vec<u8>>>(),
            (FieldType::Bytes, FieldMode::Repeated)
        );
        assert_eq!(
            col::<Option<Vec<u8>>>(),
            (FieldType::Bytes, FieldMode::Nullable)
        );
        assert_eq!(<Vec<i32> as ColumnSchema>::MODE, FieldMode::Repeated);
    }

    #[test]
    fn value_types_map_to_their_bigquery_types() {
        assert_eq!(col::<Numeric>().0, FieldType::Numeric);
        assert_eq!(col::<BigNumeric>().0, FieldType::BigNumeric);
        assert_eq!(col::<Date>().0, FieldType::Date);
        assert_eq!(col::<Time>().0, FieldType::Time);
        assert_eq!(col::<DateTime>().0, FieldType::DateTime);
        assert_eq!(col::<Timestamp>().0, FieldType::Timestamp);
        assert_eq!(col::<Interval>().0, FieldType::Interval);
        assert_eq!(col::<Json>().0, FieldType::Json);
        assert_eq!(col::<serde_json::Value>().0, FieldType::Json);
        assert_eq!(col::<Geography>().0, FieldType::Geography);
        let r = <Range<Timestamp> as ColumnSchema>::column_schema("r");
        assert_eq!(r.field_type, FieldType::Range);
        assert_eq!(
            r.range_element_type.map(|e| e.element_type),
            Some(FieldType::Timestamp)
        );
    }

    #[cfg(feature = "chrono")]
    #[test]
    fn chrono_types() {
        assert_eq!(col::<chrono::NaiveDate>().0, FieldType::Date);
        assert_eq!(col::<chrono::NaiveDateTime>().0, FieldType::DateTime);
        assert_eq!(
            col::<Option<chrono::DateTime<chrono::Utc>>>(),
            (FieldType::Timestamp, FieldMode::Nullable)
        );
    }
}

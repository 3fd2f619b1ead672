//! Which values a column takes: BigQuery's coercion rules for the values an INSERT writes.
//!
//! A value goes into a column of its own type, or of a type its type coerces to (INT64 to
//! NUMERIC, BIGNUMERIC or FLOAT64; NUMERIC to BIGNUMERIC or FLOAT64; BIGNUMERIC to FLOAT64;
//! DATE to DATETIME). A literal (or query parameter) coerces further: a STRING literal to
//! DATE, DATETIME, TIME and TIMESTAMP, a floating-point literal to NUMERIC and BIGNUMERIC.
//! Anything else is BigQuery's "cannot be inserted" error, never a silent cast.

use datafusion::arrow::datatypes::{DataType, Field};

use crate::error::BqError;
use crate::sql::functions::bq_type_name;
use crate::sql::types::EXTENSION_NAME_KEY;

/// Where an inserted value comes from, as BigQuery's message names it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Source {
    /// Column `n` (1-based) of the `INSERT .. SELECT` query.
    QueryColumn(usize),
    /// A `VALUES` row's value.
    Value,
}

/// BigQuery's error unless a value of `from`'s type may be inserted into the column `to`;
/// `literal` when every value of the column is a literal or a query parameter.
pub(super) fn check_insertable(
    from: &Field,
    to: &Field,
    literal: bool,
    source: Source,
) -> Result<(), BqError> {
    if insertable(from, to, literal) {
        return Ok(());
    }
    let (from_name, to_name) = (type_name(from), type_name(to));
    let what = match source {
        Source::QueryColumn(n) => format!("Query column {n} has type {from_name}"),
        Source::Value => format!("Value has type {from_name}"),
    };
    Err(BqError::invalid_query(format!(
        "{what} which cannot be inserted into column {}, which has type {to_name}",
        to.name()
    )))
}

fn insertable(from: &Field, to: &Field, literal: bool) -> bool {
    match (tag(from), tag(to)) {
        // JSON and GEOGRAPHY are tagged strings; a tagged value goes only where its tag is.
        (Some(a), Some(b)) => return a == b,
        (Some(_), None) => return false,
        // An untagged string into JSON or GEOGRAPHY: functions that make either do not all
        // tag what they return, so it is let through (and parsed as it is stored).
        (None, Some(_)) => return is_string(from.data_type()),
        (None, None) => {}
    }
    coercible(from.data_type(), to.data_type(), literal)
}

fn coercible(from: &DataType, to: &DataType, literal: bool) -> bool {
    use DataType as D;
    match (from, to) {
        (D::Null, _) => true,
        (a, b) if is_string(a) && is_string(b) => true,
        (a, b) if is_bytes(a) && is_bytes(b) => true,
        (a, b) if a.is_integer() => {
            b.is_integer() || b.is_floating() || matches!(b, D::Decimal128(..) | D::Decimal256(..))
        }
        (a, b) if a.is_floating() => {
            b.is_floating() || (literal && matches!(b, D::Decimal128(..) | D::Decimal256(..)))
        }
        (D::Decimal128(..), b) => {
            b.is_floating() || matches!(b, D::Decimal128(..) | D::Decimal256(..))
        }
        (D::Decimal256(..), b) => b.is_floating() || matches!(b, D::Decimal256(..)),
        (D::Boolean, D::Boolean) => true,
        (D::Date32, D::Date32 | D::Timestamp(_, None)) => true,
        (D::Time64(_), D::Time64(_)) => true,
        (D::Timestamp(_, None), D::Timestamp(_, None)) => true,
        (D::Timestamp(_, Some(_)), D::Timestamp(_, Some(_))) => true,
        (a, D::Date32 | D::Time64(_) | D::Timestamp(..)) if is_string(a) => literal,
        (D::Interval(_), D::Interval(_)) => true,
        (D::List(a) | D::LargeList(a), D::List(b) | D::LargeList(b)) => insertable(a, b, literal),
        // STRUCTs go by position, each field by the same rules; a RANGE is a STRUCT of its
        // bounds, so its element type must match in the same way.
        (D::Struct(a), D::Struct(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(x, y)| insertable(x, y, literal))
        }
        _ => false,
    }
}

fn tag(f: &Field) -> Option<&str> {
    f.metadata().get(EXTENSION_NAME_KEY).map(String::as_str)
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_bytes(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

fn type_name(f: &Field) -> String {
    match tag(f) {
        Some("google:sqlType:json") => "JSON".into(),
        Some("google:sqlType:geography") => "GEOGRAPHY".into(),
        _ => bq_type_name(f.data_type()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{DataType as D, Field, TimeUnit};

    use super::*;

    fn f(t: D) -> Field {
        Field::new("c", t, true)
    }

    #[test]
    fn follows_the_coercion_table() {
        let ts = D::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let dt = D::Timestamp(TimeUnit::Microsecond, None);
        let yes = [
            (D::Int64, D::Float64),
            (D::Int64, D::Decimal128(38, 9)),
            (D::Int64, D::Decimal256(76, 38)),
            (D::Decimal128(38, 9), D::Float64),
            (D::Decimal128(38, 9), D::Decimal256(76, 38)),
            (D::Date32, dt.clone()),
            (D::Null, ts.clone()),
        ];
        for (a, b) in yes {
            assert!(
                insertable(&f(a.clone()), &f(b.clone()), false),
                "{a} -> {b}"
            );
        }
        let no = [
            (D::Float64, D::Int64),
            (D::Float64, D::Decimal128(38, 9)),
            (D::Decimal128(38, 9), D::Int64),
            (D::Utf8, D::Int64),
            (D::Utf8, D::Date32),
            (D::Int64, ts.clone()),
            (ts.clone(), dt.clone()),
            (D::Binary, D::Utf8),
            (D::Boolean, D::Int64),
        ];
        for (a, b) in no {
            assert!(
                !insertable(&f(a.clone()), &f(b.clone()), false),
                "{a} -> {b}"
            );
        }
    }

    #[test]
    fn literals_coerce_further() {
        let ts = D::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        for t in [D::Date32, D::Time64(TimeUnit::Microsecond), ts] {
            assert!(insertable(&f(D::Utf8), &f(t.clone()), true), "{t}");
        }
        assert!(insertable(&f(D::Float64), &f(D::Decimal128(38, 9)), true));
        assert!(!insertable(&f(D::Float64), &f(D::Int64), true));
        assert!(!insertable(&f(D::Utf8), &f(D::Int64), true));
    }

    #[test]
    fn structs_go_by_position_and_json_by_tag() {
        let s =
            |a: D, b: D| D::Struct(vec![Field::new("x", a, true), Field::new("y", b, true)].into());
        assert!(insertable(
            &f(s(D::Int64, D::Utf8)),
            &f(s(D::Float64, D::Utf8)),
            false
        ));
        assert!(!insertable(
            &f(s(D::Utf8, D::Int64)),
            &f(s(D::Int64, D::Utf8)),
            false
        ));
        let list = |t: D| D::List(Arc::new(Field::new("item", t, true)));
        assert!(!insertable(&f(list(D::Utf8)), &f(list(D::Int64)), false));
        let json = crate::sql::types::tagged(f(D::Utf8), &bigq_codec::schema::FieldType::Json);
        assert!(!insertable(&json, &f(D::Utf8), false));
        assert!(insertable(&json, &json, false));
        let err = check_insertable(&json, &f(D::Utf8), false, Source::Value).unwrap_err();
        assert_eq!(
            err.message,
            "Value has type JSON which cannot be inserted into column c, which has type STRING"
        );
    }
}

//! Row filters built from typed values, so that strings, dates and column names are quoted
//! the way BigQuery's SQL wants them.

use std::fmt::Write;

use crate::error::{Error, Result};
use crate::schema::{FieldType, Schema, TableFieldSchema};
use crate::value::{BigNumeric, Date, DateTime, Numeric, Time, Timestamp};

/// A row filter for [`ReadBuilder::row_restriction`](super::ReadBuilder::row_restriction),
/// built from typed values.
///
/// ```
/// use bigq::read::Filter;
///
/// let f = Filter::col("name")
///     .eq("O'Brien")
///     .and(Filter::col("address.city").is_in(["Oslo", "Umeå"]))
///     .and(!Filter::col("score").is_null());
/// assert_eq!(
///     f.sql(),
///     r"((`name` = 'O\'Brien') AND (`address`.`city` IN ('Oslo', 'Umeå'))) AND (NOT (`score` IS NULL))"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    sql: String,
}

impl Filter {
    /// A column, or a nested field named with dots (`address.city`).
    pub fn col(name: &str) -> Column {
        let mut path = String::with_capacity(name.len() + 2);
        for (i, part) in name.split('.').enumerate() {
            if i > 0 {
                path.push('.');
            }
            path.push('`');
            for c in part.chars() {
                if matches!(c, '`' | '\\') {
                    path.push('\\');
                }
                path.push(c);
            }
            path.push('`');
        }
        Column { path }
    }

    /// A column of `T`'s schema (`#[derive(bigq::Schema)]`), nested fields named with dots;
    /// a name `T` has no column for is an error naming it, before anything is sent.
    ///
    /// ```
    /// use bigq::read::Filter;
    ///
    /// #[derive(bigq::Schema)]
    /// struct Order {
    ///     id: i64,
    ///     shipping: Address,
    /// }
    /// #[derive(bigq::Schema)]
    /// struct Address {
    ///     city: String,
    /// }
    /// let f = Filter::col_of::<Order>("shipping.city")?.eq("Oslo");
    /// assert_eq!(f.sql(), "`shipping`.`city` = 'Oslo'");
    /// let e = Filter::col_of::<Order>("shipping.town").unwrap_err();
    /// assert!(e.to_string().contains("no column `shipping.town`"), "{e}");
    /// # Ok::<(), bigq::Error>(())
    /// ```
    pub fn col_of<T: Schema + ?Sized>(name: &str) -> Result<Column> {
        let fields = T::fields();
        let mut level: &[TableFieldSchema] = &fields;
        let mut parts = name.split('.').peekable();
        while let Some(part) = parts.next() {
            let field = level.iter().find(|f| f.name.eq_ignore_ascii_case(part));
            let last = parts.peek().is_none();
            match field {
                Some(_) if last => {}
                // A field of a REPEATED RECORD is not one value a row filter can compare.
                Some(f) if f.field_type == FieldType::Record && !f.is_repeated() => {
                    level = &f.fields;
                }
                _ => {
                    let known: Vec<&str> = level.iter().map(|f| f.name.as_str()).collect();
                    return Err(Error::config(format!(
                        "`{}` has no column `{name}` to filter on (its columns here: {})",
                        std::any::type_name::<T>(),
                        known.join(", ")
                    )));
                }
            }
        }
        Ok(Filter::col(name))
    }

    /// A filter written in SQL by hand, used as it is.
    pub fn raw(sql: impl Into<String>) -> Filter {
        Filter { sql: sql.into() }
    }

    /// Rows matching both filters.
    pub fn and(self, other: Filter) -> Filter {
        Filter {
            sql: format!("({}) AND ({})", self.sql, other.sql),
        }
    }

    /// Rows matching either filter.
    pub fn or(self, other: Filter) -> Filter {
        Filter {
            sql: format!("({}) OR ({})", self.sql, other.sql),
        }
    }

    /// The SQL text sent to BigQuery.
    pub fn sql(&self) -> &str {
        &self.sql
    }
}

impl std::ops::Not for Filter {
    type Output = Filter;

    /// Rows not matching the filter.
    fn not(self) -> Filter {
        Filter {
            sql: format!("NOT ({})", self.sql),
        }
    }
}

impl From<Filter> for String {
    fn from(f: Filter) -> String {
        f.sql
    }
}

impl std::fmt::Display for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sql)
    }
}

/// A column in a [`Filter`], compared with typed values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    path: String,
}

impl Column {
    fn cmp(self, op: &str, v: impl Into<Literal>) -> Filter {
        Filter {
            sql: format!("{} {op} {}", self.path, v.into().0),
        }
    }

    /// `column = value`.
    pub fn eq(self, v: impl Into<Literal>) -> Filter {
        self.cmp("=", v)
    }

    /// `column != value`.
    pub fn ne(self, v: impl Into<Literal>) -> Filter {
        self.cmp("!=", v)
    }

    /// `column < value`.
    pub fn lt(self, v: impl Into<Literal>) -> Filter {
        self.cmp("<", v)
    }

    /// `column <= value`.
    pub fn le(self, v: impl Into<Literal>) -> Filter {
        self.cmp("<=", v)
    }

    /// `column > value`.
    pub fn gt(self, v: impl Into<Literal>) -> Filter {
        self.cmp(">", v)
    }

    /// `column >= value`.
    pub fn ge(self, v: impl Into<Literal>) -> Filter {
        self.cmp(">=", v)
    }

    /// `column BETWEEN low AND high` (both ends included).
    pub fn between(self, low: impl Into<Literal>, high: impl Into<Literal>) -> Filter {
        Filter {
            sql: format!(
                "{} BETWEEN {} AND {}",
                self.path,
                low.into().0,
                high.into().0
            ),
        }
    }

    /// `column IN (v1, v2, ...)`; an empty list matches no row.
    pub fn is_in<L: Into<Literal>>(self, values: impl IntoIterator<Item = L>) -> Filter {
        let mut list = String::new();
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                list.push_str(", ");
            }
            list.push_str(&v.into().0);
        }
        if list.is_empty() {
            return Filter {
                sql: "FALSE".into(),
            };
        }
        Filter {
            sql: format!("{} IN ({list})", self.path),
        }
    }

    /// `column IS NULL`.
    pub fn is_null(self) -> Filter {
        Filter {
            sql: format!("{} IS NULL", self.path),
        }
    }

    /// `column IS NOT NULL`.
    pub fn is_not_null(self) -> Filter {
        Filter {
            sql: format!("{} IS NOT NULL", self.path),
        }
    }
}

/// A value written as a BigQuery SQL literal (strings escaped, dates and timestamps typed,
/// non-finite floats cast).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal(String);

impl Literal {
    /// The SQL text.
    pub fn sql(&self) -> &str {
        &self.0
    }
}

fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

macro_rules! int_literal {
    ($($t:ty),*) => {$(
        impl From<$t> for Literal {
            fn from(v: $t) -> Literal {
                Literal(v.to_string())
            }
        }
    )*};
}
int_literal!(i8, i16, i32, u8, u16, u32);

impl From<i64> for Literal {
    fn from(v: i64) -> Literal {
        if v == i64::MIN {
            // `-9223372036854775808` is a minus applied to a literal out of range.
            return Literal(format!("CAST('{v}' AS INT64)"));
        }
        Literal(v.to_string())
    }
}

impl From<f64> for Literal {
    fn from(v: f64) -> Literal {
        if v.is_nan() {
            Literal("CAST('NaN' AS FLOAT64)".into())
        } else if v.is_infinite() {
            let sign = if v > 0.0 { "" } else { "-" };
            Literal(format!("CAST('{sign}inf' AS FLOAT64)"))
        } else {
            // Debug keeps every digit needed to read the same f64 back, and a decimal point.
            Literal(format!("{v:?}"))
        }
    }
}

impl From<f32> for Literal {
    fn from(v: f32) -> Literal {
        Literal::from(v as f64)
    }
}

impl From<bool> for Literal {
    fn from(v: bool) -> Literal {
        Literal(if v { "TRUE" } else { "FALSE" }.into())
    }
}

impl From<&str> for Literal {
    fn from(v: &str) -> Literal {
        Literal(quoted(v))
    }
}

impl From<String> for Literal {
    fn from(v: String) -> Literal {
        Literal(quoted(&v))
    }
}

impl From<&String> for Literal {
    fn from(v: &String) -> Literal {
        Literal(quoted(v))
    }
}

macro_rules! typed_literal {
    ($($t:ty => $kw:literal),*) => {$(
        impl From<$t> for Literal {
            fn from(v: $t) -> Literal {
                Literal(format!(concat!($kw, " '{}'"), v))
            }
        }
    )*};
}
typed_literal!(
    Date => "DATE",
    Time => "TIME",
    DateTime => "DATETIME",
    Timestamp => "TIMESTAMP",
    Numeric => "NUMERIC",
    BigNumeric => "BIGNUMERIC"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_quoted() {
        assert_eq!(
            Literal::from("it's a \\ test\n").sql(),
            r"'it\'s a \\ test\n'"
        );
        assert_eq!(Literal::from("\u{1}").sql(), r"'\u0001'");
        assert_eq!(Literal::from(-5i64).sql(), "-5");
        assert_eq!(
            Literal::from(i64::MIN).sql(),
            "CAST('-9223372036854775808' AS INT64)"
        );
        assert_eq!(Literal::from(0.1f64).sql(), "0.1");
        assert_eq!(Literal::from(3.0f64).sql(), "3.0");
        assert_eq!(
            Literal::from(f64::NEG_INFINITY).sql(),
            "CAST('-inf' AS FLOAT64)"
        );
        assert_eq!(Literal::from(f64::NAN).sql(), "CAST('NaN' AS FLOAT64)");
        assert_eq!(Literal::from(true).sql(), "TRUE");
        assert_eq!(
            Literal::from(Date::from_ymd(2024, 2, 29).unwrap()).sql(),
            "DATE '2024-02-29'"
        );
        assert_eq!(
            Literal::from("12.5".parse::<Numeric>().unwrap()).sql(),
            "NUMERIC '12.5'"
        );
        let ts: Timestamp = "2024-01-02 03:04:05.5+00".parse().unwrap();
        assert_eq!(
            Literal::from(ts).sql(),
            "TIMESTAMP '2024-01-02T03:04:05.500000Z'"
        );
    }

    #[test]
    fn filters_compose() {
        assert_eq!(Filter::col("a`b").eq(1).sql(), r"`a\`b` = 1");
        assert_eq!(
            Filter::col("x")
                .between(1, 5)
                .or(Filter::col("y").is_not_null())
                .sql(),
            "(`x` BETWEEN 1 AND 5) OR (`y` IS NOT NULL)"
        );
        assert_eq!(Filter::col("x").is_in(Vec::<i64>::new()).sql(), "FALSE");
        assert_eq!(String::from(!Filter::raw("a > 1")), "NOT (a > 1)");
    }
}

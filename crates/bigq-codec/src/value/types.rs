use std::fmt;
use std::str::FromStr;

use arrow_buffer::i256;

use super::error::ParseValueError;
use super::text::{self, IntervalParts};

/// NUMERIC: an exact decimal with 38 digits of precision and 9 of scale, kept as an integer
/// count of 10⁻⁹.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Numeric(i128);

impl Numeric {
    /// The scale of NUMERIC (digits after the point).
    pub const SCALE: u32 = 9;
    /// The precision of NUMERIC (digits in all).
    pub const PRECISION: u32 = 38;
    /// The largest NUMERIC, 99999999999999999999999999999.999999999.
    pub const MAX: Numeric = Numeric(99_999_999_999_999_999_999_999_999_999_999_999_999);
    /// The smallest NUMERIC.
    pub const MIN: Numeric = Numeric(-99_999_999_999_999_999_999_999_999_999_999_999_999);

    /// A NUMERIC from its value in units of 10⁻⁹, or `None` past 38 digits.
    pub const fn from_scaled(units: i128) -> Option<Self> {
        if units > Self::MAX.0 || units < Self::MIN.0 {
            None
        } else {
            Some(Numeric(units))
        }
    }

    /// The value in units of 10⁻⁹ (the Arrow `Decimal128(38, 9)` representation).
    pub const fn to_scaled(self) -> i128 {
        self.0
    }

    /// A whole number.
    pub fn from_i64(v: i64) -> Self {
        Numeric(v as i128 * 1_000_000_000)
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text::format_decimal(&self.0.unsigned_abs().to_string(), self.0 < 0, 9, f)
    }
}

impl fmt::Debug for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Numeric({self})")
    }
}

impl FromStr for Numeric {
    type Err = ParseValueError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        text::parse_decimal_i128(s.trim().as_bytes(), 9)
            .and_then(Numeric::from_scaled)
            .ok_or_else(|| ParseValueError::new("NUMERIC", s))
    }
}

/// BIGNUMERIC: an exact decimal with 38 digits of scale and 76+ digits of precision, kept
/// as an `i256` count of 10⁻³⁸ (the Arrow `Decimal256(76, 38)` representation).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BigNumeric(i256);

impl BigNumeric {
    /// The scale of BIGNUMERIC.
    pub const SCALE: u32 = 38;

    /// A BIGNUMERIC from its value in units of 10⁻³⁸. Every `i256` is a valid BIGNUMERIC.
    pub const fn from_scaled(units: i256) -> Self {
        BigNumeric(units)
    }

    /// The value in units of 10⁻³⁸.
    pub const fn to_scaled(self) -> i256 {
        self.0
    }
}

impl fmt::Display for BigNumeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.0 < i256::ZERO;
        let s = self.0.to_string();
        let digits = s.trim_start_matches('-');
        text::format_decimal(digits, neg, 38, f)
    }
}

impl fmt::Debug for BigNumeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BigNumeric({self})")
    }
}

impl FromStr for BigNumeric {
    type Err = ParseValueError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        text::parse_decimal_i256(s.trim().as_bytes(), 38)
            .map(BigNumeric)
            .ok_or_else(|| ParseValueError::new("BIGNUMERIC", s))
    }
}

macro_rules! int_backed {
    ($(#[$m:meta])* $name:ident($repr:ty), $bq:literal, $parse:path, $fmt:path, $unit:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name($repr);

        impl $name {
            #[doc = concat!("From the number of ", $unit, ".")]
            pub const fn new(v: $repr) -> Self {
                $name(v)
            }

            #[doc = concat!("The number of ", $unit, ".")]
            pub const fn get(self) -> $repr {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                $fmt(self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self)
            }
        }

        impl FromStr for $name {
            type Err = ParseValueError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $parse(s.trim().as_bytes()).map($name).ok_or_else(|| ParseValueError::new($bq, s))
            }
        }
    };
}

int_backed!(
    /// DATE: a civil date, as days since 1970-01-01 (the Arrow `Date32` representation).
    Date(i32), "DATE", text::parse_date, text::format_date, "days since 1970-01-01"
);
int_backed!(
    /// TIME: a time of day, as microseconds since midnight (Arrow `Time64(µs)`).
    Time(i64), "TIME", text::parse_time, text::format_time, "microseconds since midnight"
);
int_backed!(
    /// DATETIME: a civil date and time with no zone, as microseconds since
    /// 1970-01-01T00:00:00 (Arrow `Timestamp(µs, None)`).
    DateTime(i64), "DATETIME", text::parse_datetime, text::format_datetime,
    "microseconds since 1970-01-01T00:00:00"
);
int_backed!(
    /// TIMESTAMP: an instant, as microseconds since the Unix epoch (Arrow
    /// `Timestamp(µs, "UTC")`). Never decoded through `f64`.
    Timestamp(i64), "TIMESTAMP", text::parse_timestamp, text::format_timestamp,
    "microseconds since the Unix epoch"
);

impl Date {
    /// A date from year, month and day, or `None` if it does not exist.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Option<Self> {
        let s = format!("{year:04}-{month:02}-{day:02}");
        text::parse_date(s.as_bytes()).map(Date)
    }

    /// Year, month and day.
    pub fn to_ymd(self) -> (i32, u32, u32) {
        let (y, m, d) = text::civil_from_days(self.0 as i64);
        (y as i32, m, d)
    }
}

impl Time {
    /// A time from hour, minute, second and microsecond, or `None` if out of range.
    pub fn from_hms_micro(h: u32, m: u32, s: u32, micro: u32) -> Option<Self> {
        (h < 24 && m < 60 && s < 60 && micro < 1_000_000)
            .then(|| Time(((h as i64 * 60 + m as i64) * 60 + s as i64) * 1_000_000 + micro as i64))
    }
}

impl DateTime {
    /// A datetime from a date and a time of day.
    pub fn from_parts(date: Date, time: Time) -> Self {
        DateTime(date.0 as i64 * text::MICROS_PER_DAY + time.0)
    }

    /// The date part.
    pub fn date(self) -> Date {
        Date(self.0.div_euclid(text::MICROS_PER_DAY) as i32)
    }

    /// The time-of-day part.
    pub fn time(self) -> Time {
        Time(self.0.rem_euclid(text::MICROS_PER_DAY))
    }
}

impl Timestamp {
    /// Whole seconds since the epoch and the microseconds past them.
    pub fn to_seconds_micros(self) -> (i64, u32) {
        (
            self.0.div_euclid(1_000_000),
            self.0.rem_euclid(1_000_000) as u32,
        )
    }
}

/// INTERVAL: months, days and nanoseconds, each signed, as BigQuery keeps them (Arrow
/// `Interval(MonthDayNano)`). BigQuery's precision is microseconds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    /// Years and months, as months.
    pub months: i32,
    /// Days.
    pub days: i32,
    /// The time part, in nanoseconds.
    pub nanos: i64,
}

impl Interval {
    /// An interval from its three parts.
    pub const fn new(months: i32, days: i32, nanos: i64) -> Self {
        Interval {
            months,
            days,
            nanos,
        }
    }
}

impl From<IntervalParts> for Interval {
    fn from(p: IntervalParts) -> Self {
        Interval {
            months: p.months,
            days: p.days,
            nanos: p.nanos,
        }
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text::format_interval(
            IntervalParts {
                months: self.months,
                days: self.days,
                nanos: self.nanos,
            },
            f,
        )
    }
}

impl fmt::Debug for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Interval({self})")
    }
}

impl FromStr for Interval {
    type Err = ParseValueError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        text::parse_interval(s.trim().as_bytes())
            .map(Interval::from)
            .ok_or_else(|| ParseValueError::new("INTERVAL", s))
    }
}

/// `RANGE<T>`: a half-open range `[start, end)`; `None` is an unbounded end.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Range<T> {
    /// The inclusive start, or `None` for unbounded.
    pub start: Option<T>,
    /// The exclusive end, or `None` for unbounded.
    pub end: Option<T>,
}

impl<T> Range<T> {
    /// A range from its two ends.
    pub const fn new(start: Option<T>, end: Option<T>) -> Self {
        Range { start, end }
    }
}

impl<T: fmt::Display> fmt::Display for Range<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        match &self.start {
            Some(s) => write!(f, "{s}")?,
            None => f.write_str("UNBOUNDED")?,
        }
        f.write_str(", ")?;
        match &self.end {
            Some(e) => write!(f, "{e}")?,
            None => f.write_str("UNBOUNDED")?,
        }
        f.write_str(")")
    }
}

impl<T: FromStr> FromStr for Range<T> {
    type Err = ParseValueError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseValueError::new("RANGE", s);
        let inner = s
            .trim()
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(err)?;
        let (a, b) = inner.split_once(',').ok_or_else(err)?;
        let end = |x: &str| -> Result<Option<T>, ParseValueError> {
            let x = x.trim();
            if x.eq_ignore_ascii_case("UNBOUNDED") || x.eq_ignore_ascii_case("NULL") {
                Ok(None)
            } else {
                x.parse().map(Some).map_err(|_| err())
            }
        };
        Ok(Range {
            start: end(a)?,
            end: end(b)?,
        })
    }
}

/// JSON: a JSON document as BigQuery renders it.
#[derive(Clone, PartialEq, Eq, Hash, Default, Debug)]
pub struct Json(pub String);

impl Json {
    /// Parses the document into a `serde_json::Value`.
    pub fn parse(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.0)
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// GEOGRAPHY: a geography in Well-Known Text, as BigQuery renders it.
#[derive(Clone, PartialEq, Eq, Hash, Default, Debug)]
pub struct Geography(pub String);

impl fmt::Display for Geography {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_text_round_trips() {
        for s in [
            "0",
            "1.5",
            "-0.000000001",
            "99999999999999999999999999999.999999999",
            "123",
        ] {
            assert_eq!(s.parse::<Numeric>().unwrap().to_string(), s);
        }
        assert!("100000000000000000000000000000".parse::<Numeric>().is_err());
        assert!("1.0000000001".parse::<Numeric>().is_err());
    }

    #[test]
    fn bignumeric_text_round_trips() {
        for s in [
            "0",
            "1.5",
            "-1.00000000000000000000000000000000000001",
            "578960446186580977117854925043439539266.34992332820282019728792003956564819967",
        ] {
            assert_eq!(s.parse::<BigNumeric>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn civil_types() {
        let d: Date = "2024-03-01".parse().unwrap();
        assert_eq!(d.to_ymd(), (2024, 3, 1));
        assert_eq!(d.to_string(), "2024-03-01");
        let dt: DateTime = "2024-03-01T10:20:30.000001".parse().unwrap();
        assert_eq!(dt.date(), d);
        assert_eq!(dt.time().to_string(), "10:20:30.000001");
        let ts: Timestamp = "1970-01-01 00:00:01+00".parse().unwrap();
        assert_eq!(ts.get(), 1_000_000);
        let r: Range<Date> = "[2024-01-01, UNBOUNDED)".parse().unwrap();
        assert_eq!(r.end, None);
        assert_eq!(r.to_string(), "[2024-01-01, UNBOUNDED)");
    }
}

//! Conversions between bigq's value types and the date-time types of `chrono`, `jiff` and
//! `time` (each behind the feature of the same name).
//!
//! | bigq | chrono | jiff | time |
//! |---|---|---|---|
//! | [`Date`] | `NaiveDate` | `civil::Date` | `Date` |
//! | [`Time`] | `NaiveTime` | `civil::Time` | `Time` |
//! | [`DateTime`] | `NaiveDateTime` | `civil::DateTime` | `PrimitiveDateTime` |
//! | [`Timestamp`] | `DateTime<Tz>` (to `DateTime<Utc>`) | `Timestamp` | `OffsetDateTime` |
//! | [`Interval`] | `TimeDelta` | `Span` | `Duration` |
//!
//! bigq's types hold microseconds, the others nanoseconds: a value with digits below a
//! microsecond does not convert (round it first, e.g. chrono's `trunc_subsecs(6)` or jiff's
//! `round(Unit::Microsecond)`) rather than being cut silently. Values outside the other
//! type's range, leap seconds, and an [`Interval`] with months or days into an exact
//! duration fail the same way, with a [`ConversionError`].

use std::fmt;

use super::text::MICROS_PER_DAY;
#[allow(unused_imports)] // each feature's conversions use some of them
use super::types::{Date, DateTime, Interval, Time, Timestamp};

/// A value that has no equal in the type it is converted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionError {
    from: &'static str,
    to: &'static str,
    reason: &'static str,
}

impl ConversionError {
    fn new(from: &'static str, to: &'static str, reason: &'static str) -> Self {
        ConversionError { from, to, reason }
    }
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot convert {} to {}: {}",
            self.from, self.to, self.reason
        )
    }
}

impl std::error::Error for ConversionError {}

const SUB_MICRO: &str = "it has digits below a microsecond";
const RANGE: &str = "out of range";

/// Microseconds since midnight from parts, refusing sub-microsecond nanoseconds.
fn time_micros(secs_of_day: i64, nanos: u32, from: &'static str) -> Result<Time, ConversionError> {
    if nanos >= 1_000_000_000 {
        return Err(ConversionError::new(
            from,
            "Time",
            "leap seconds do not exist in BigQuery",
        ));
    }
    if !nanos.is_multiple_of(1_000) {
        return Err(ConversionError::new(from, "Time", SUB_MICRO));
    }
    Ok(Time::new(secs_of_day * 1_000_000 + (nanos / 1_000) as i64))
}

/// Hour, minute, second and microsecond of a valid [`Time`].
fn hms_micro(t: Time, to: &'static str) -> Result<(u32, u32, u32, u32), ConversionError> {
    let us = t.get();
    if !(0..MICROS_PER_DAY).contains(&us) {
        return Err(ConversionError::new("Time", to, RANGE));
    }
    let secs = us / 1_000_000;
    Ok((
        (secs / 3600) as u32,
        (secs / 60 % 60) as u32,
        (secs % 60) as u32,
        (us % 1_000_000) as u32,
    ))
}

/// An interval that is an exact duration: no months or days.
#[cfg(any(feature = "chrono", feature = "time"))]
fn exact_nanos(i: Interval, to: &'static str) -> Result<i64, ConversionError> {
    if i.months != 0 || i.days != 0 {
        return Err(ConversionError::new(
            "Interval",
            to,
            "months and days are not a fixed length of time",
        ));
    }
    Ok(i.nanos)
}

#[cfg(feature = "chrono")]
mod chrono_impls {
    use chrono::{
        Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, TimeZone, Timelike, Utc,
    };

    use super::*;

    /// `NaiveDate::num_days_from_ce` of 1970-01-01.
    const CE_TO_UNIX: i32 = 719_163;

    impl From<NaiveDate> for Date {
        fn from(d: NaiveDate) -> Self {
            Date::new(d.num_days_from_ce() - CE_TO_UNIX)
        }
    }

    impl TryFrom<Date> for NaiveDate {
        type Error = ConversionError;
        fn try_from(d: Date) -> Result<Self, ConversionError> {
            d.get()
                .checked_add(CE_TO_UNIX)
                .and_then(NaiveDate::from_num_days_from_ce_opt)
                .ok_or(ConversionError::new("Date", "NaiveDate", RANGE))
        }
    }

    impl TryFrom<NaiveTime> for Time {
        type Error = ConversionError;
        fn try_from(t: NaiveTime) -> Result<Self, ConversionError> {
            time_micros(
                t.num_seconds_from_midnight() as i64,
                t.nanosecond(),
                "NaiveTime",
            )
        }
    }

    impl TryFrom<Time> for NaiveTime {
        type Error = ConversionError;
        fn try_from(t: Time) -> Result<Self, ConversionError> {
            let (h, m, s, us) = hms_micro(t, "NaiveTime")?;
            NaiveTime::from_hms_micro_opt(h, m, s, us).ok_or(ConversionError::new(
                "Time",
                "NaiveTime",
                RANGE,
            ))
        }
    }

    impl TryFrom<NaiveDateTime> for DateTime {
        type Error = ConversionError;
        fn try_from(dt: NaiveDateTime) -> Result<Self, ConversionError> {
            Ok(DateTime::from_parts(
                dt.date().into(),
                Time::try_from(dt.time()).map_err(|e| ConversionError {
                    to: "DateTime",
                    ..e
                })?,
            ))
        }
    }

    impl TryFrom<DateTime> for NaiveDateTime {
        type Error = ConversionError;
        fn try_from(dt: DateTime) -> Result<Self, ConversionError> {
            let err = |e: ConversionError| ConversionError {
                from: "DateTime",
                ..e
            };
            Ok(NaiveDate::try_from(dt.date())
                .map_err(err)?
                .and_time(NaiveTime::try_from(dt.time()).map_err(err)?))
        }
    }

    impl<Tz: TimeZone> TryFrom<chrono::DateTime<Tz>> for Timestamp {
        type Error = ConversionError;
        fn try_from(dt: chrono::DateTime<Tz>) -> Result<Self, ConversionError> {
            let nanos = dt.timestamp_subsec_nanos();
            if nanos >= 1_000_000_000 {
                return Err(ConversionError::new(
                    "chrono::DateTime",
                    "Timestamp",
                    "leap seconds do not exist in BigQuery",
                ));
            }
            if !nanos.is_multiple_of(1_000) {
                return Err(ConversionError::new(
                    "chrono::DateTime",
                    "Timestamp",
                    SUB_MICRO,
                ));
            }
            Ok(Timestamp::new(dt.timestamp_micros()))
        }
    }

    impl TryFrom<Timestamp> for chrono::DateTime<Utc> {
        type Error = ConversionError;
        fn try_from(t: Timestamp) -> Result<Self, ConversionError> {
            Utc.timestamp_micros(t.get())
                .single()
                .ok_or(ConversionError::new("Timestamp", "chrono::DateTime", RANGE))
        }
    }

    impl TryFrom<TimeDelta> for Interval {
        type Error = ConversionError;
        fn try_from(d: TimeDelta) -> Result<Self, ConversionError> {
            d.num_nanoseconds()
                .map(|n| Interval::new(0, 0, n))
                .ok_or(ConversionError::new("TimeDelta", "Interval", RANGE))
        }
    }

    impl TryFrom<Interval> for TimeDelta {
        type Error = ConversionError;
        fn try_from(i: Interval) -> Result<Self, ConversionError> {
            Ok(TimeDelta::nanoseconds(exact_nanos(i, "TimeDelta")?))
        }
    }
}

#[cfg(feature = "jiff")]
mod jiff_impls {
    use jiff::Span;
    use jiff::civil;

    use super::*;
    use crate::value::text::{civil_from_days, days_from_civil};

    impl From<civil::Date> for Date {
        fn from(d: civil::Date) -> Self {
            // jiff's years are -9999..=9999, so the day count fits an i32.
            Date::new(days_from_civil(d.year() as i64, d.month() as u32, d.day() as u32) as i32)
        }
    }

    impl TryFrom<Date> for civil::Date {
        type Error = ConversionError;
        fn try_from(d: Date) -> Result<Self, ConversionError> {
            let err = || ConversionError::new("Date", "jiff::civil::Date", RANGE);
            let (y, m, day) = civil_from_days(d.get() as i64);
            let y = i16::try_from(y).map_err(|_| err())?;
            civil::Date::new(y, m as i8, day as i8).map_err(|_| err())
        }
    }

    impl TryFrom<civil::Time> for Time {
        type Error = ConversionError;
        fn try_from(t: civil::Time) -> Result<Self, ConversionError> {
            let secs = (t.hour() as i64 * 60 + t.minute() as i64) * 60 + t.second() as i64;
            time_micros(secs, t.subsec_nanosecond() as u32, "jiff::civil::Time")
        }
    }

    impl TryFrom<Time> for civil::Time {
        type Error = ConversionError;
        fn try_from(t: Time) -> Result<Self, ConversionError> {
            let (h, m, s, us) = hms_micro(t, "jiff::civil::Time")?;
            civil::Time::new(h as i8, m as i8, s as i8, us as i32 * 1_000)
                .map_err(|_| ConversionError::new("Time", "jiff::civil::Time", RANGE))
        }
    }

    impl TryFrom<civil::DateTime> for DateTime {
        type Error = ConversionError;
        fn try_from(dt: civil::DateTime) -> Result<Self, ConversionError> {
            Ok(DateTime::from_parts(
                dt.date().into(),
                Time::try_from(dt.time()).map_err(|e| ConversionError {
                    to: "DateTime",
                    ..e
                })?,
            ))
        }
    }

    impl TryFrom<DateTime> for civil::DateTime {
        type Error = ConversionError;
        fn try_from(dt: DateTime) -> Result<Self, ConversionError> {
            let err = |e: ConversionError| ConversionError {
                from: "DateTime",
                ..e
            };
            Ok(civil::Date::try_from(dt.date())
                .map_err(err)?
                .to_datetime(civil::Time::try_from(dt.time()).map_err(err)?))
        }
    }

    impl TryFrom<jiff::Timestamp> for Timestamp {
        type Error = ConversionError;
        fn try_from(t: jiff::Timestamp) -> Result<Self, ConversionError> {
            if t.subsec_nanosecond() % 1_000 != 0 {
                return Err(ConversionError::new(
                    "jiff::Timestamp",
                    "Timestamp",
                    SUB_MICRO,
                ));
            }
            Ok(Timestamp::new(t.as_microsecond()))
        }
    }

    impl TryFrom<Timestamp> for jiff::Timestamp {
        type Error = ConversionError;
        fn try_from(t: Timestamp) -> Result<Self, ConversionError> {
            jiff::Timestamp::from_microsecond(t.get())
                .map_err(|_| ConversionError::new("Timestamp", "jiff::Timestamp", RANGE))
        }
    }

    impl TryFrom<Span> for Interval {
        type Error = ConversionError;
        fn try_from(s: Span) -> Result<Self, ConversionError> {
            let err = || ConversionError::new("jiff::Span", "Interval", RANGE);
            let months = s.get_years() as i64 * 12 + s.get_months() as i64;
            let days = s.get_weeks() as i64 * 7 + s.get_days() as i64;
            let nanos = [
                (s.get_hours() as i64, 3_600_000_000_000i64),
                (s.get_minutes(), 60_000_000_000),
                (s.get_seconds(), 1_000_000_000),
                (s.get_milliseconds(), 1_000_000),
                (s.get_microseconds(), 1_000),
                (s.get_nanoseconds(), 1),
            ]
            .into_iter()
            .try_fold(0i64, |acc, (v, unit)| acc.checked_add(v.checked_mul(unit)?))
            .ok_or_else(err)?;
            Ok(Interval::new(
                i32::try_from(months).map_err(|_| err())?,
                i32::try_from(days).map_err(|_| err())?,
                nanos,
            ))
        }
    }

    impl TryFrom<Interval> for Span {
        type Error = ConversionError;
        /// Fails where jiff's limits are narrower, or when the parts have different signs
        /// (a jiff span has one sign).
        fn try_from(i: Interval) -> Result<Self, ConversionError> {
            let err = || {
                ConversionError::new(
                    "Interval",
                    "jiff::Span",
                    "out of range, or its parts have different signs",
                )
            };
            let span = Span::new()
                .try_months(i.months)
                .and_then(|s| s.try_days(i.days))
                .and_then(|s| s.try_nanoseconds(i.nanos))
                .map_err(|_| err())?;
            // A span has one sign, which the last unit set decides for all of them.
            let same = span.get_months() == i.months
                && span.get_days() == i.days
                && span.get_nanoseconds() == i.nanos;
            same.then_some(span).ok_or_else(err)
        }
    }
}

#[cfg(feature = "time")]
mod time_impls {
    use super::*;

    /// Julian day number of 1970-01-01.
    const UNIX_JULIAN_DAY: i32 = 2_440_588;

    impl From<time::Date> for Date {
        fn from(d: time::Date) -> Self {
            Date::new(d.to_julian_day() - UNIX_JULIAN_DAY)
        }
    }

    impl TryFrom<Date> for time::Date {
        type Error = ConversionError;
        fn try_from(d: Date) -> Result<Self, ConversionError> {
            d.get()
                .checked_add(UNIX_JULIAN_DAY)
                .and_then(|j| time::Date::from_julian_day(j).ok())
                .ok_or(ConversionError::new("Date", "time::Date", RANGE))
        }
    }

    impl TryFrom<time::Time> for Time {
        type Error = ConversionError;
        fn try_from(t: time::Time) -> Result<Self, ConversionError> {
            let secs = (t.hour() as i64 * 60 + t.minute() as i64) * 60 + t.second() as i64;
            time_micros(secs, t.nanosecond(), "time::Time")
        }
    }

    impl TryFrom<Time> for time::Time {
        type Error = ConversionError;
        fn try_from(t: Time) -> Result<Self, ConversionError> {
            let (h, m, s, us) = hms_micro(t, "time::Time")?;
            time::Time::from_hms_micro(h as u8, m as u8, s as u8, us)
                .map_err(|_| ConversionError::new("Time", "time::Time", RANGE))
        }
    }

    impl TryFrom<time::PrimitiveDateTime> for DateTime {
        type Error = ConversionError;
        fn try_from(dt: time::PrimitiveDateTime) -> Result<Self, ConversionError> {
            Ok(DateTime::from_parts(
                dt.date().into(),
                Time::try_from(dt.time()).map_err(|e| ConversionError {
                    to: "DateTime",
                    ..e
                })?,
            ))
        }
    }

    impl TryFrom<DateTime> for time::PrimitiveDateTime {
        type Error = ConversionError;
        fn try_from(dt: DateTime) -> Result<Self, ConversionError> {
            let err = |e: ConversionError| ConversionError {
                from: "DateTime",
                ..e
            };
            Ok(time::PrimitiveDateTime::new(
                time::Date::try_from(dt.date()).map_err(err)?,
                time::Time::try_from(dt.time()).map_err(err)?,
            ))
        }
    }

    impl TryFrom<time::OffsetDateTime> for Timestamp {
        type Error = ConversionError;
        fn try_from(t: time::OffsetDateTime) -> Result<Self, ConversionError> {
            let nanos = t.unix_timestamp_nanos();
            if nanos % 1_000 != 0 {
                return Err(ConversionError::new(
                    "OffsetDateTime",
                    "Timestamp",
                    SUB_MICRO,
                ));
            }
            i64::try_from(nanos / 1_000)
                .map(Timestamp::new)
                .map_err(|_| ConversionError::new("OffsetDateTime", "Timestamp", RANGE))
        }
    }

    impl TryFrom<Timestamp> for time::OffsetDateTime {
        type Error = ConversionError;
        fn try_from(t: Timestamp) -> Result<Self, ConversionError> {
            time::OffsetDateTime::from_unix_timestamp_nanos(t.get() as i128 * 1_000)
                .map_err(|_| ConversionError::new("Timestamp", "OffsetDateTime", RANGE))
        }
    }

    impl TryFrom<time::Duration> for Interval {
        type Error = ConversionError;
        fn try_from(d: time::Duration) -> Result<Self, ConversionError> {
            i64::try_from(d.whole_nanoseconds())
                .map(|n| Interval::new(0, 0, n))
                .map_err(|_| ConversionError::new("time::Duration", "Interval", RANGE))
        }
    }

    impl TryFrom<Interval> for time::Duration {
        type Error = ConversionError;
        fn try_from(i: Interval) -> Result<Self, ConversionError> {
            Ok(time::Duration::nanoseconds(exact_nanos(
                i,
                "time::Duration",
            )?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> Date {
        s.parse().unwrap()
    }

    #[cfg(feature = "chrono")]
    #[test]
    fn chrono_round_trips() {
        use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Utc};
        for s in [
            "0001-01-01",
            "1969-12-31",
            "1970-01-01",
            "2024-02-29",
            "9999-12-31",
        ] {
            let n = NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
            assert_eq!(Date::from(n), date(s), "{s}");
            assert_eq!(NaiveDate::try_from(date(s)).unwrap(), n);
        }
        assert!(NaiveDate::try_from(Date::new(i32::MAX)).is_err());
        let t = NaiveTime::from_hms_micro_opt(23, 59, 59, 999_999).unwrap();
        assert_eq!(Time::try_from(t).unwrap().to_string(), "23:59:59.999999");
        assert_eq!(NaiveTime::try_from(Time::try_from(t).unwrap()).unwrap(), t);
        let ns = NaiveTime::from_hms_nano_opt(0, 0, 0, 1).unwrap();
        assert!(
            Time::try_from(ns)
                .unwrap_err()
                .to_string()
                .contains("microsecond")
        );
        let leap = NaiveTime::from_hms_milli_opt(23, 59, 59, 1_500).unwrap();
        assert!(Time::try_from(leap).is_err());
        assert!(NaiveTime::try_from(Time::new(-1)).is_err());
        let dt: DateTime = "2024-03-01T10:20:30.000001".parse().unwrap();
        let n = NaiveDateTime::try_from(dt).unwrap();
        assert_eq!(n.to_string(), "2024-03-01 10:20:30.000001");
        assert_eq!(DateTime::try_from(n).unwrap(), dt);
        let ts: Timestamp = "1969-12-31T23:59:59.5Z".parse().unwrap();
        let c = chrono::DateTime::<Utc>::try_from(ts).unwrap();
        assert_eq!(c.timestamp_micros(), -500_000);
        assert_eq!(Timestamp::try_from(c).unwrap(), ts);
        let offset = chrono::DateTime::parse_from_rfc3339("2024-01-01T01:00:00+01:00").unwrap();
        assert_eq!(
            Timestamp::try_from(offset).unwrap().to_string(),
            "2024-01-01T00:00:00Z"
        );
        let iv = Interval::try_from(TimeDelta::milliseconds(1_500)).unwrap();
        assert_eq!(iv, Interval::new(0, 0, 1_500_000_000));
        assert_eq!(
            TimeDelta::try_from(iv).unwrap(),
            TimeDelta::milliseconds(1_500)
        );
        assert!(TimeDelta::try_from(Interval::new(1, 0, 0)).is_err());
    }

    #[cfg(feature = "jiff")]
    #[test]
    fn jiff_round_trips() {
        use jiff::{Span, civil};
        for s in [
            "0001-01-01",
            "1969-12-31",
            "1970-01-01",
            "2024-02-29",
            "9999-12-31",
        ] {
            let j: civil::Date = s.parse().unwrap();
            assert_eq!(Date::from(j), date(s), "{s}");
            assert_eq!(civil::Date::try_from(date(s)).unwrap(), j);
        }
        assert!(civil::Date::try_from(Date::new(5_000_000)).is_err());
        let t = civil::Time::new(12, 30, 0, 500_000_000).unwrap();
        let b = Time::try_from(t).unwrap();
        assert_eq!(b.to_string(), "12:30:00.500000");
        assert_eq!(civil::Time::try_from(b).unwrap(), t);
        assert!(Time::try_from(civil::Time::new(0, 0, 0, 1).unwrap()).is_err());
        let dt: civil::DateTime = "2024-03-01T10:20:30.000001".parse().unwrap();
        let b = DateTime::try_from(dt).unwrap();
        assert_eq!(b.to_string(), "2024-03-01T10:20:30.000001");
        assert_eq!(civil::DateTime::try_from(b).unwrap(), dt);
        let ts: jiff::Timestamp = "1969-12-31T23:59:59.5Z".parse().unwrap();
        let b = Timestamp::try_from(ts).unwrap();
        assert_eq!(b.get(), -500_000);
        assert_eq!(jiff::Timestamp::try_from(b).unwrap(), ts);
        let ns = jiff::Timestamp::from_nanosecond(1).unwrap();
        assert!(Timestamp::try_from(ns).is_err());
        let span = Span::new()
            .years(1)
            .months(2)
            .weeks(1)
            .days(3)
            .hours(4)
            .milliseconds(5);
        let iv = Interval::try_from(span).unwrap();
        assert_eq!(iv, Interval::new(14, 10, 4 * 3_600_000_000_000 + 5_000_000));
        let back = Span::try_from(iv).unwrap();
        assert_eq!(back.get_months(), 14);
        assert_eq!(back.get_days(), 10);
        assert!(
            Span::try_from(Interval::new(1, 0, -1)).is_err(),
            "mixed signs"
        );
    }

    #[cfg(feature = "time")]
    #[test]
    fn time_round_trips() {
        for (y, m, d) in [
            (1, 1, 1),
            (1969, 12, 31),
            (1970, 1, 1),
            (2024, 2, 29),
            (9999, 12, 31),
        ] {
            let t =
                time::Date::from_calendar_date(y, time::Month::try_from(m).unwrap(), d).unwrap();
            let b = Date::from(t);
            assert_eq!(b.to_ymd(), (y, m as u32, d as u32));
            assert_eq!(time::Date::try_from(b).unwrap(), t);
        }
        assert!(time::Date::try_from(Date::new(i32::MAX)).is_err());
        let t = time::Time::from_hms_micro(1, 2, 3, 4).unwrap();
        let b = Time::try_from(t).unwrap();
        assert_eq!(b.to_string(), "01:02:03.000004");
        assert_eq!(time::Time::try_from(b).unwrap(), t);
        assert!(Time::try_from(time::Time::from_hms_nano(0, 0, 0, 1).unwrap()).is_err());
        let dt: DateTime = "2024-03-01T10:20:30.000001".parse().unwrap();
        let p = time::PrimitiveDateTime::try_from(dt).unwrap();
        assert_eq!(DateTime::try_from(p).unwrap(), dt);
        let ts = Timestamp::new(-500_000);
        let o = time::OffsetDateTime::try_from(ts).unwrap();
        assert_eq!(o.unix_timestamp_nanos(), -500_000_000);
        assert_eq!(Timestamp::try_from(o).unwrap(), ts);
        let d = time::Duration::milliseconds(-1_500);
        let iv = Interval::try_from(d).unwrap();
        assert_eq!(iv.nanos, -1_500_000_000);
        assert_eq!(time::Duration::try_from(iv).unwrap(), d);
        assert!(time::Duration::try_from(Interval::new(0, 1, 0)).is_err());
    }

    #[test]
    fn errors_say_what_failed() {
        let e = ConversionError::new("Time", "NaiveTime", RANGE);
        assert_eq!(
            e.to_string(),
            "cannot convert Time to NaiveTime: out of range"
        );
        assert!(hms_micro(Time::new(MICROS_PER_DAY), "x").is_err());
        assert_eq!(date("1970-01-02").get(), 1);
    }
}

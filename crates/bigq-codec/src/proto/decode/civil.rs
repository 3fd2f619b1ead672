//! DATETIME and TIME as packed `int64`s, the encoding of the Java client's
//! `CivilTimeEncoder` that the Storage Write API takes besides text:
//!
//! - TIME: `hour << 32 | minute << 26 | second << 20 | micros` (hour in 5 bits, minute and
//!   second in 6, micros in 20);
//! - DATETIME: `year << 46 | month << 42 | day << 37 | hour << 32 | minute << 26 |
//!   second << 20 | micros` (year in 14 bits, month in 4, day in 5).
//!
//! Decoding checks every field's range and that no bit outside the layout is set.

use crate::value::text::{MICROS_PER_DAY, days_from_civil};

const MICRO_BITS: u32 = 20;
/// TIME uses the low 37 bits; DATETIME the low 60.
const TIME_BITS: u32 = 37;
const DATETIME_BITS: u32 = 60;

fn time_of(bits: u64) -> Option<i64> {
    let micros = bits & 0xF_FFFF;
    let secs = bits >> MICRO_BITS;
    let (h, m, s) = ((secs >> 12) & 0x1F, (secs >> 6) & 0x3F, secs & 0x3F);
    (h < 24 && m < 60 && s < 60 && micros < 1_000_000)
        .then(|| ((h * 60 + m) * 60 + s) as i64 * 1_000_000 + micros as i64)
}

/// A packed TIME as microseconds since midnight, or `None` if it is not a valid one.
pub(crate) fn decode_time(v: i64) -> Option<i64> {
    let v = u64::try_from(v).ok()?;
    if v >> TIME_BITS != 0 {
        return None;
    }
    time_of(v)
}

/// A packed DATETIME as microseconds since 1970-01-01T00:00:00, or `None` if it is not a
/// valid one (years 1 to 9999, real calendar days).
pub(crate) fn decode_datetime(v: i64) -> Option<i64> {
    let v = u64::try_from(v).ok()?;
    if v >> DATETIME_BITS != 0 {
        return None;
    }
    let time = time_of(v & ((1 << TIME_BITS) - 1))?;
    let date = v >> TIME_BITS;
    let (y, m, d) = ((date >> 9) & 0x3FFF, (date >> 5) & 0xF, date & 0x1F);
    if !(1..=9999).contains(&y) || !(1..=12).contains(&m) || d == 0 {
        return None;
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if d > month_days {
        return None;
    }
    let days = days_from_civil(y as i64, m as u32, d as u32);
    Some(days * MICROS_PER_DAY + time)
}

/// The packed TIME of `h:m:s.micros` (for tests and examples).
#[cfg(test)]
pub(crate) fn encode_time(h: u64, m: u64, s: u64, micros: u64) -> i64 {
    ((h << 12 | m << 6 | s) << MICRO_BITS | micros) as i64
}

/// The packed DATETIME of `y-mo-d h:m:s.micros` (for tests and examples).
#[cfg(test)]
pub(crate) fn encode_datetime(y: u64, mo: u64, d: u64, h: u64, m: u64, s: u64, us: u64) -> i64 {
    ((y << 9 | mo << 5 | d) << TIME_BITS) as i64 | encode_time(h, m, s, us)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::text::{parse_datetime, parse_time};

    #[test]
    fn packed_civil_times_decode_to_micros() {
        assert_eq!(
            decode_time(encode_time(23, 59, 58, 123_456)),
            parse_time(b"23:59:58.123456")
        );
        assert_eq!(decode_time(0), Some(0));
        assert_eq!(
            decode_datetime(encode_datetime(2024, 2, 29, 12, 30, 1, 5)),
            parse_datetime(b"2024-02-29T12:30:01.000005")
        );
        assert_eq!(
            decode_datetime(encode_datetime(1, 1, 1, 0, 0, 0, 0)),
            parse_datetime(b"0001-01-01T00:00:00")
        );
        assert_eq!(
            decode_datetime(encode_datetime(9999, 12, 31, 23, 59, 59, 999_999)),
            parse_datetime(b"9999-12-31T23:59:59.999999")
        );
    }

    #[test]
    fn invalid_packed_civil_times_are_refused() {
        assert_eq!(decode_time(encode_time(24, 0, 0, 0)), None);
        assert_eq!(decode_time(encode_time(1, 60, 0, 0)), None);
        assert_eq!(decode_time(encode_time(1, 0, 0, 1_000_000)), None);
        assert_eq!(decode_time(1 << 40), None);
        assert_eq!(decode_time(-1), None);
        assert_eq!(
            decode_datetime(encode_datetime(2023, 2, 29, 0, 0, 0, 0)),
            None
        );
        assert_eq!(decode_datetime(encode_datetime(0, 1, 1, 0, 0, 0, 0)), None);
        assert_eq!(
            decode_datetime(encode_datetime(2023, 13, 1, 0, 0, 0, 0)),
            None
        );
        assert_eq!(decode_datetime(1 << 61), None);
    }
}

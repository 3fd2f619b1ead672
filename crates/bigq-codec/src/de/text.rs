//! Canonical text of Arrow values, written into a buffer on the stack: what
//! `deserialize_any`, `deserialize_str` and error messages show for decimals, dates and
//! times. The forms are those of [`crate::value::text`], which the tests check.

use std::fmt;

use arrow_buffer::i256;
use arrow_schema::TimeUnit;

use crate::value::text::civil_from_days;

/// A small string buffer on the stack. Every value this module writes fits; a write past
/// the end fails instead of cutting the text.
pub(crate) struct StackBuf {
    buf: [u8; 256],
    len: usize,
}

/// The two-digit pairs `00` to `99`, for writing integers two digits at a time as itoa does.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// `10^k` for `k` in `0..=19`.
const POW10_U64: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// The text of a decimal whose unscaled value fits a `u64` and whose scale is in `0..=19`:
/// every NUMERIC of up to 19 significant digits, which is nearly all money. It is written
/// back to front into a buffer just big enough (sign, 20 digits, point, 19 digits), so a
/// NUMERIC read as a `String` costs no 128-bit division and no clearing of a [`StackBuf`].
pub(crate) struct SmallDecimal {
    buf: [u8; 44],
    start: usize,
}

impl SmallDecimal {
    /// The text of `unscaled * 10^-scale` with no trailing zeros after the point, or `None`
    /// if the value is not one this type writes (see [`write_decimal_i128`] for the rest).
    #[inline]
    pub(crate) fn new(unscaled: i128, scale: i8) -> Option<Self> {
        let abs = u64::try_from(unscaled.unsigned_abs()).ok()?;
        let unit = *POW10_U64.get(usize::try_from(scale).ok()?)?;
        let mut s = SmallDecimal {
            buf: [0; 44],
            start: 44,
        };
        let (int, mut frac) = (abs / unit, abs % unit);
        if frac != 0 {
            let mut width = scale as usize;
            while frac % 100 == 0 {
                frac /= 100;
                width -= 2;
            }
            if frac % 10 == 0 {
                frac /= 10;
                width -= 1;
            }
            s.push_digits(frac, width);
            s.push_byte(b'.');
        }
        s.push_digits(int, 1);
        if unscaled < 0 {
            s.push_byte(b'-');
        }
        Some(s)
    }

    #[inline(always)]
    fn push_byte(&mut self, b: u8) {
        self.start -= 1;
        self.buf[self.start] = b;
    }

    /// Writes `v`, zero-padded to at least `width` (at least 1) digits, in front of the
    /// text so far.
    #[inline(always)]
    fn push_digits(&mut self, mut v: u64, width: usize) {
        let end = self.start;
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            self.start -= 2;
            self.buf[self.start..self.start + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if v >= 10 {
            let pair = v as usize * 2;
            self.start -= 2;
            self.buf[self.start..self.start + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else if v > 0 || self.start == end {
            self.push_byte(b'0' + v as u8);
        }
        while end - self.start < width {
            self.push_byte(b'0');
        }
    }

    #[inline]
    pub(crate) fn as_str(&self) -> &str {
        let bytes = &self.buf[self.start..];
        // SAFETY: `new` writes only ASCII digits, `-` and `.` from `start` on.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }
}

impl StackBuf {
    #[inline]
    pub(crate) fn new() -> Self {
        StackBuf {
            buf: [0; 256],
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn as_str(&self) -> &str {
        let bytes = &self.buf[..self.len];
        // SAFETY: the buffer is private to this module, whose every write is ASCII (digits,
        // signs, `.`, `:`, `-`, `T`, `Z`) or a whole `str` (`push_str`, `fmt::Write`), so it
        // holds UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    #[inline]
    fn push(&mut self, b: u8) -> fmt::Result {
        let slot = self.buf.get_mut(self.len).ok_or(fmt::Error)?;
        *slot = b;
        self.len += 1;
        Ok(())
    }

    #[inline]
    fn push_bytes(&mut self, bytes: &[u8]) -> fmt::Result {
        let end = self.len + bytes.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    /// Writes `v` zero-padded to `width` digits (at most 20).
    #[inline]
    fn push_padded(&mut self, v: u64, width: usize) -> fmt::Result {
        // Two digits at a time from a table, as itoa does.
        let mut tmp = [b'0'; 20];
        let mut i = tmp.len();
        let mut v = v;
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if v >= 10 {
            let pair = v as usize * 2;
            i -= 2;
            tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else if v > 0 {
            i -= 1;
            tmp[i] = b'0' + v as u8;
        }
        let start = i.min(tmp.len() - width.min(tmp.len()));
        self.push_bytes(&tmp[start..])
    }

    pub(crate) fn push_str(&mut self, s: &str) -> fmt::Result {
        self.push_bytes(s.as_bytes())
    }

    pub(crate) fn push_u64(&mut self, v: u64) -> fmt::Result {
        self.push_padded(v, 1)
    }

    pub(crate) fn push_i64(&mut self, v: i64) -> fmt::Result {
        if v < 0 {
            self.push(b'-')?;
        }
        self.push_u64(v.unsigned_abs())
    }
}

impl fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_bytes(s.as_bytes())
    }
}

/// Writes an `f64` the way BigQuery renders FLOAT64 (`NaN`, `Infinity`, `-Infinity` for the
/// non-finite values).
pub(crate) fn write_f64(out: &mut StackBuf, v: f64) -> fmt::Result {
    use fmt::Write;
    if v.is_nan() {
        out.write_str("NaN")
    } else if v.is_infinite() {
        out.write_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        write!(out, "{v}")
    }
}

/// Writes the decimal `unscaled * 10^-scale` with no trailing zeros after the point.
pub(crate) fn write_decimal_i128(out: &mut StackBuf, unscaled: i128, scale: i8) -> fmt::Result {
    if let Some(small) = SmallDecimal::new(unscaled, scale) {
        return out.push_str(small.as_str());
    }
    let mut digits = [0u8; 80];
    let n = digits_u128(unscaled.unsigned_abs(), &mut digits);
    place_point(out, unscaled < 0, &digits[digits.len() - n..], scale)
}

/// Writes the decimal `unscaled * 10^-scale` with no trailing zeros after the point.
pub(crate) fn write_decimal_i256(out: &mut StackBuf, unscaled: i256, scale: i8) -> fmt::Result {
    if let Some(small) = unscaled.to_i128() {
        return write_decimal_i128(out, small, scale);
    }
    let neg = unscaled < i256::ZERO;
    // |i256::MIN| does not fit an i256, so work on the value made negative: truncating
    // division then leaves remainders in (-10^18, 0].
    let chunk = i256::from_i128(1_000_000_000_000_000_000);
    let mut v = if neg {
        unscaled
    } else {
        unscaled.wrapping_neg()
    };
    let mut digits = [0u8; 80];
    let mut end = digits.len();
    while v != i256::ZERO {
        let (q, r) = (v.wrapping_div(chunk), v.wrapping_rem(chunk));
        v = q;
        let mut part = r.to_i128().unwrap_or(0).unsigned_abs() as u64;
        let more = v != i256::ZERO;
        let mut k = 0;
        while part > 0 || (more && k < 18) {
            end -= 1;
            digits[end] = b'0' + (part % 10) as u8;
            part /= 10;
            k += 1;
        }
    }
    place_point(out, neg, &digits[end..], scale)
}

/// The decimal digits of `v`, right-aligned in `buf`; returns how many.
fn digits_u128(mut v: u128, buf: &mut [u8; 80]) -> usize {
    let mut end = buf.len();
    if v == 0 {
        end -= 1;
        buf[end] = b'0';
        return 1;
    }
    // Peel off 19 digits at a time so that most divisions are of a u64.
    while v > 0 {
        let (mut part, more) = if v > u64::MAX as u128 {
            let p = (v % 10_000_000_000_000_000_000) as u64;
            v /= 10_000_000_000_000_000_000;
            (p, true)
        } else {
            let p = v as u64;
            v = 0;
            (p, false)
        };
        let mut k = 0;
        while part > 0 || (more && k < 19) {
            end -= 1;
            buf[end] = b'0' + (part % 10) as u8;
            part /= 10;
            k += 1;
        }
    }
    buf.len() - end
}

fn place_point(out: &mut StackBuf, neg: bool, digits: &[u8], scale: i8) -> fmt::Result {
    let all_zero = digits.iter().all(|&d| d == b'0');
    if neg && !all_zero {
        out.push(b'-')?;
    }
    if scale <= 0 {
        out.push_bytes(digits)?;
        if !all_zero {
            for _ in 0..scale.unsigned_abs() {
                out.push(b'0')?;
            }
        }
        return Ok(());
    }
    let scale = scale as usize;
    let (int, frac) = if digits.len() > scale {
        digits.split_at(digits.len() - scale)
    } else {
        (&b"0"[..], digits)
    };
    out.push_bytes(int)?;
    let pad = scale - frac.len();
    let frac_end = frac.iter().rposition(|&d| d != b'0').map_or(0, |p| p + 1);
    if frac_end > 0 {
        out.push(b'.')?;
        for _ in 0..pad {
            out.push(b'0')?;
        }
        out.push_bytes(&frac[..frac_end])?;
    }
    Ok(())
}

/// Writes a date, `YYYY-MM-DD`, from days since 1970-01-01.
pub(crate) fn write_date(out: &mut StackBuf, days: i64) -> fmt::Result {
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        out.push_padded(y as u64, 4)?;
        out.push(b'-')?;
        out.push_padded(m as u64, 2)?;
        out.push(b'-')?;
        out.push_padded(d as u64, 2)
    } else {
        use fmt::Write;
        write!(out, "{y:04}-{m:02}-{d:02}")
    }
}

/// Writes a time of day, `HH:MM:SS[.ffffff]`, with nine fraction digits when the
/// nanoseconds are not whole microseconds.
pub(crate) fn write_time(out: &mut StackBuf, secs: i64, nanos: u32) -> fmt::Result {
    let secs = secs.max(0) as u64;
    out.push_padded(secs / 3600, 2)?;
    out.push(b':')?;
    out.push_padded((secs / 60) % 60, 2)?;
    out.push(b':')?;
    out.push_padded(secs % 60, 2)?;
    if nanos != 0 {
        out.push(b'.')?;
        if nanos.is_multiple_of(1000) {
            out.push_padded((nanos / 1000) as u64, 6)?;
        } else {
            out.push_padded(nanos as u64, 9)?;
        }
    }
    Ok(())
}

/// Writes a date and time, `YYYY-MM-DDTHH:MM:SS[.ffffff]`, from seconds since the epoch.
pub(crate) fn write_datetime(out: &mut StackBuf, secs: i64, nanos: u32) -> fmt::Result {
    write_date(out, secs.div_euclid(86_400))?;
    out.push(b'T')?;
    write_time(out, secs.rem_euclid(86_400), nanos)
}

/// Writes an instant, `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`.
pub(crate) fn write_timestamp(out: &mut StackBuf, secs: i64, nanos: u32) -> fmt::Result {
    write_datetime(out, secs, nanos)?;
    out.push(b'Z')
}

/// Splits a count of `unit`s into whole seconds and nanoseconds past them.
#[inline]
pub(crate) fn secs_nanos(v: i64, unit: TimeUnit) -> (i64, u32) {
    let per_sec: i64 = match unit {
        TimeUnit::Second => return (v, 0),
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let nanos_per = 1_000_000_000 / per_sec;
    (
        v.div_euclid(per_sec),
        (v.rem_euclid(per_sec) * nanos_per) as u32,
    )
}

/// A count of `unit`s as microseconds, or `None` if that loses precision or overflows.
#[inline]
pub(crate) fn to_micros(v: i64, unit: TimeUnit) -> Option<i64> {
    match unit {
        TimeUnit::Microsecond => Some(v),
        TimeUnit::Second => v.checked_mul(1_000_000),
        TimeUnit::Millisecond => v.checked_mul(1_000),
        TimeUnit::Nanosecond => (v % 1_000 == 0).then_some(v / 1_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::text as canon;

    fn text(f: impl FnOnce(&mut StackBuf) -> fmt::Result) -> String {
        let mut b = StackBuf::new();
        f(&mut b).unwrap();
        b.as_str().to_string()
    }

    #[test]
    fn temporal_text_matches_the_canonical_formatters() {
        let mut days = -800_000i64;
        while days < 3_000_000 {
            let mut want = String::new();
            canon::format_date(days as i32, &mut want).unwrap();
            assert_eq!(text(|b| write_date(b, days)), want, "days {days}");
            days += 997;
        }
        for micros in [
            0i64,
            1,
            999_999,
            1_000_000,
            86_399_999_999,
            45_000_500_000,
            -1,
            -86_400_000_001,
            1_704_067_200_123_456,
            253_402_300_799_999_999,
            -62_135_596_800_000_000,
        ] {
            let (s, n) = secs_nanos(micros, TimeUnit::Microsecond);
            let mut want = String::new();
            canon::format_timestamp(micros, &mut want).unwrap();
            assert_eq!(text(|b| write_timestamp(b, s, n)), want);
            let mut want = String::new();
            canon::format_datetime(micros, &mut want).unwrap();
            assert_eq!(text(|b| write_datetime(b, s, n)), want);
            if (0..86_400_000_000).contains(&micros) {
                let mut want = String::new();
                canon::format_time(micros, &mut want).unwrap();
                assert_eq!(text(|b| write_time(b, s, n)), want);
            }
        }
        let (s, n) = secs_nanos(1_500_000_001, TimeUnit::Nanosecond);
        assert_eq!(
            text(|b| write_timestamp(b, s, n)),
            "1970-01-01T00:00:01.500000001Z"
        );
        assert_eq!(secs_nanos(-1, TimeUnit::Millisecond), (-1, 999_000_000));
    }

    #[test]
    fn decimal_text_matches_numeric_display() {
        for s in [
            "0",
            "1",
            "-1",
            "1.5",
            "-0.000000001",
            "123456789.987654321",
            "99999999999999999999999999999.999999999",
            "-99999999999999999999999999999.999999999",
            "10000000000000000000",
            "18446744073709551616.1",
            "-0.5",
            "9223372036854775807",
            "18446744073.709551615",
            "0.000000001",
        ] {
            let n: crate::value::Numeric = s.parse().unwrap();
            assert_eq!(text(|b| write_decimal_i128(b, n.to_scaled(), 9)), s);
        }
        assert_eq!(
            text(|b| write_decimal_i128(b, i128::MIN, 0)),
            i128::MIN.to_string()
        );
        assert_eq!(text(|b| write_decimal_i128(b, 12, -3)), "12000");
        assert_eq!(text(|b| write_decimal_i128(b, 0, -3)), "0");
        assert_eq!(text(|b| write_decimal_i128(b, 5, 3)), "0.005");
        assert_eq!(text(|b| write_decimal_i128(b, -12_300, 2)), "-123");
        assert_eq!(
            text(|b| write_decimal_i128(b, 1, 19)),
            "0.0000000000000000001"
        );
        assert_eq!(
            text(|b| write_decimal_i128(b, 1, 20)),
            "0.00000000000000000001"
        );
        for s in [
            "0",
            "1.5",
            "-1.00000000000000000000000000000000000001",
            "578960446186580977117854925043439539266.34992332820282019728792003956564819967",
            "-578960446186580977117854925043439539266.34992332820282019728792003956564819967",
            "100000000000000000000000000000000000000",
        ] {
            let n: crate::value::BigNumeric = s.parse().unwrap();
            assert_eq!(text(|b| write_decimal_i256(b, n.to_scaled(), 38)), s);
        }
        assert_eq!(
            text(|b| write_decimal_i256(b, i256::MIN, 0)),
            i256::MIN.to_string()
        );
    }

    /// The u64 fast path writes what the general 128-bit path writes.
    #[test]
    fn small_decimal_matches_the_general_path() {
        let general = |unscaled: i128, scale: i8| {
            let mut digits = [0u8; 80];
            let n = digits_u128(unscaled.unsigned_abs(), &mut digits);
            let mut b = StackBuf::new();
            place_point(&mut b, unscaled < 0, &digits[digits.len() - n..], scale).unwrap();
            b.as_str().to_string()
        };
        let mut values: Vec<i128> = vec![0, 1, 9, 10, 99, 100, 101, 1_000_000_000, 1_500_000_000];
        values.extend([u64::MAX as i128, u64::MAX as i128 - 1, 10i128.pow(19)]);
        values.extend([
            12_340_000_000,
            100_000_000_000_000_007,
            999_999_999_999_999_999,
        ]);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly values with trailing zeros, as money in units of 1e-9 has.
            values.push((x >> (x % 64)) as i128 * 10i128.pow((x % 12) as u32) % (u64::MAX as i128));
        }
        for v in values {
            for neg in [v, -v] {
                for scale in 0..=19 {
                    let small = SmallDecimal::new(neg, scale).expect("fits");
                    assert_eq!(small.as_str(), general(neg, scale), "{neg} scale {scale}");
                }
            }
        }
        assert!(SmallDecimal::new(u64::MAX as i128 + 1, 9).is_none());
        assert!(SmallDecimal::new(-(u64::MAX as i128) - 1, 9).is_none());
        assert!(SmallDecimal::new(1, 20).is_none());
        assert!(SmallDecimal::new(1, -1).is_none());
        assert_eq!(SmallDecimal::new(-5, 1).unwrap().as_str(), "-0.5");
        assert_eq!(
            SmallDecimal::new(-(u64::MAX as i128), 19).unwrap().as_str(),
            "-1.8446744073709551615"
        );
    }

    #[test]
    fn to_micros_refuses_lost_precision() {
        assert_eq!(to_micros(1_000, TimeUnit::Nanosecond), Some(1));
        assert_eq!(to_micros(1_001, TimeUnit::Nanosecond), None);
        assert_eq!(to_micros(2, TimeUnit::Second), Some(2_000_000));
        assert_eq!(to_micros(i64::MAX, TimeUnit::Second), None);
    }
}

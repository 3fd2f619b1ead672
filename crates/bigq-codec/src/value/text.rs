//! Fast parsers and formatters for BigQuery's canonical text forms.
//!
//! They work on bytes, allocate nothing and return `None` for anything malformed or out of
//! range; callers attach the column and row.

use arrow_buffer::i256;

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp as i64 + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number (days since 1970-01-01).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

#[inline]
fn digits(s: &[u8], n: usize) -> Option<u32> {
    if s.len() < n {
        return None;
    }
    let mut v = 0u32;
    for &c in &s[..n] {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u32;
    }
    Some(v)
}

/// Microseconds per day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
/// Smallest date BigQuery accepts, 0001-01-01, as days since the epoch.
pub const MIN_DATE: i32 = -719_162;
/// Largest date BigQuery accepts, 9999-12-31, as days since the epoch.
pub const MAX_DATE: i32 = 2_932_896;

/// Parses `YYYY-MM-DD` (the year may have 1 to 4 digits), returning the number of bytes used.
fn parse_date_prefix(s: &[u8]) -> Option<(i32, usize)> {
    let dash = s.iter().position(|&c| c == b'-')?;
    if dash == 0 || dash > 4 {
        return None;
    }
    let y = digits(s, dash)? as i64;
    let rest = &s[dash + 1..];
    // Month and day may be one or two digits in BigQuery's lenient literal forms.
    let (m, mlen) = one_or_two(rest)?;
    if rest.get(mlen) != Some(&b'-') {
        return None;
    }
    let rest2 = &rest[mlen + 1..];
    let (d, dlen) = one_or_two(rest2)?;
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) || y == 0 {
        return None;
    }
    Some((days_from_civil(y, m, d) as i32, dash + 1 + mlen + 1 + dlen))
}

fn one_or_two(s: &[u8]) -> Option<(u32, usize)> {
    let a = s.first()?.wrapping_sub(b'0');
    if a > 9 {
        return None;
    }
    match s.get(1).map(|c| c.wrapping_sub(b'0')) {
        Some(b) if b <= 9 => Some((a as u32 * 10 + b as u32, 2)),
        _ => Some((a as u32, 1)),
    }
}

/// Parses a DATE, `YYYY-MM-DD`, into days since 1970-01-01.
#[inline]
pub fn parse_date(s: &[u8]) -> Option<i32> {
    // The canonical form, as BigQuery sends it.
    if let &[y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = s {
        let dg = |c: u8| c.wrapping_sub(b'0');
        let all = [y0, y1, y2, y3, m0, m1, d0, d1];
        if all.iter().all(|&c| dg(c) <= 9) {
            let y = dg(y0) as u32 * 1000 + dg(y1) as u32 * 100 + dg(y2) as u32 * 10 + dg(y3) as u32;
            let m = dg(m0) as usize * 10 + dg(m1) as usize;
            let d = dg(d0) as u32 * 10 + dg(d1) as u32;
            let leap = y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
            if y == 0 || !(1..=12).contains(&m) || d == 0 {
                return None;
            }
            let month_days = match m {
                2 => 28 + leap as u32,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            if d > month_days {
                return None;
            }
            // Days since 0001-01-01, all unsigned with constant divisors.
            const BEFORE_MONTH: [u32; 13] =
                [0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
            let p = y - 1;
            let days = p * 365 + p / 4 - p / 100 + p / 400 + BEFORE_MONTH[m] + d - 1
                + (leap && m > 2) as u32;
            return Some(days as i32 + MIN_DATE);
        }
    }
    let (d, n) = parse_date_prefix(s)?;
    (n == s.len()).then_some(d)
}

/// Parses `HH:MM:SS[.ffffff]` at the start of `s`, returning micros and bytes used.
fn parse_time_prefix(s: &[u8]) -> Option<(i64, usize)> {
    let (h, hl) = one_or_two(s)?;
    if s.get(hl) != Some(&b':') {
        return None;
    }
    let r = &s[hl + 1..];
    let (mi, ml) = one_or_two(r)?;
    if r.get(ml) != Some(&b':') {
        return None;
    }
    let r2 = &r[ml + 1..];
    let (sec, sl) = one_or_two(r2)?;
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let mut used = hl + 1 + ml + 1 + sl;
    let mut micros = 0i64;
    if s.get(used) == Some(&b'.') {
        used += 1;
        let mut n = 0;
        while let Some(&c) = s.get(used) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if n < 6 {
                micros = micros * 10 + d as i64;
            } else if d != 0 {
                // BigQuery has microsecond precision: more digits must be zeros.
                return None;
            }
            n += 1;
            used += 1;
        }
        if n == 0 {
            return None;
        }
        for _ in n..6 {
            micros *= 10;
        }
    }
    Some((
        ((h as i64 * 60 + mi as i64) * 60 + sec as i64) * 1_000_000 + micros,
        used,
    ))
}

/// Parses a TIME, `HH:MM:SS[.ffffff]`, into microseconds since midnight.
pub fn parse_time(s: &[u8]) -> Option<i64> {
    let (t, n) = parse_time_prefix(s)?;
    (n == s.len()).then_some(t)
}

/// Parses a DATETIME, `YYYY-MM-DD[T| ]HH:MM:SS[.ffffff]` (or a bare date), into microseconds
/// since 1970-01-01T00:00:00.
pub fn parse_datetime(s: &[u8]) -> Option<i64> {
    let (d, n) = parse_date_prefix(s)?;
    if n == s.len() {
        return Some(d as i64 * MICROS_PER_DAY);
    }
    if !matches!(s[n], b'T' | b't' | b' ') {
        return None;
    }
    let (t, m) = parse_time_prefix(&s[n + 1..])?;
    (n + 1 + m == s.len()).then_some(d as i64 * MICROS_PER_DAY + t)
}

/// Parses a TIMESTAMP literal: a date, optionally a time, and an optional zone offset (`Z`,
/// `UTC`, `+HH`, `+HH:MM`, `+HHMM`); no zone means UTC. Returns microseconds since the epoch.
pub fn parse_timestamp(s: &[u8]) -> Option<i64> {
    let (d, n) = parse_date_prefix(s)?;
    let mut micros = d as i64 * MICROS_PER_DAY;
    let mut rest = &s[n..];
    if rest.is_empty() {
        return Some(micros);
    }
    if matches!(rest[0], b'T' | b't' | b' ') {
        let (t, m) = parse_time_prefix(&rest[1..])?;
        micros += t;
        rest = &rest[1 + m..];
    }
    while rest.first() == Some(&b' ') {
        rest = &rest[1..];
    }
    if rest.is_empty() || rest == b"Z" || rest == b"z" || rest.eq_ignore_ascii_case(b"UTC") {
        return Some(micros);
    }
    let sign = match rest[0] {
        b'+' => -1,
        b'-' => 1,
        _ => return None,
    };
    let r = &rest[1..];
    let (h, hl) = one_or_two(r)?;
    let r = &r[hl..];
    let mi = match r.len() {
        0 => 0,
        2 => digits(r, 2)?,
        3 if r[0] == b':' => digits(&r[1..], 2)?,
        _ => return None,
    };
    if h > 14 || mi > 59 {
        return None;
    }
    Some(micros + sign * (h as i64 * 3600 + mi as i64 * 60) * 1_000_000)
}

/// Parses an integer, optionally signed.
#[inline]
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, body) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() || body.len() > 19 {
        return None;
    }
    if body.len() <= 18 {
        // Cannot overflow: no checks per digit.
        let mut v: i64 = 0;
        for &c in body {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + d as i64;
        }
        return Some(if neg { -v } else { v });
    }
    let mut v: u64 = 0;
    for &c in body {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    if neg {
        if v <= i64::MAX as u64 + 1 {
            Some((v as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// A decimal number split into its digits and a power of ten: `digits * 10^exp`.
struct DecimalParts<'a> {
    neg: bool,
    int: &'a [u8],
    frac: &'a [u8],
    exp: i64,
}

fn split_decimal(s: &[u8]) -> Option<DecimalParts<'_>> {
    let (neg, mut body) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let mut exp = 0i64;
    if let Some(e) = body.iter().position(|&c| c == b'e' || c == b'E') {
        exp = parse_i64(&body[e + 1..])?;
        if exp.abs() > 10_000 {
            return None;
        }
        body = &body[..e];
    }
    let (int, frac) = match body.iter().position(|&c| c == b'.') {
        Some(p) => (&body[..p], &body[p + 1..]),
        None => (body, &body[body.len()..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    Some(DecimalParts {
        neg,
        int,
        frac,
        exp,
    })
}

/// Parses a decimal text (plain or with an exponent) into an integer scaled by `10^scale`,
/// exactly. Digits beyond the scale must be zero; values that do not fit return `None`.
#[inline]
pub fn parse_decimal_i128(s: &[u8], scale: u32) -> Option<i128> {
    if let Some(v) = plain_decimal_i128(s, scale) {
        return Some(v);
    }
    parse_decimal_i128_general(s, scale)
}

/// `[-]d{0,18}[.d{0,scale}]`, the form BigQuery sends NUMERIC in, in two `u64`s; `None`
/// for anything else (which the general parser then decides).
#[inline(always)]
fn plain_decimal_i128(s: &[u8], scale: u32) -> Option<i128> {
    if scale > 18 {
        return None;
    }
    let (neg, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let mut i = 0;
    let mut int: u64 = 0;
    while i < body.len().min(18) {
        let d = body[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        int = int * 10 + d as u64;
        i += 1;
    }
    let int_digits = i;
    let mut frac: u64 = 0;
    let mut frac_digits = 0;
    if body.get(i) == Some(&b'.') {
        i += 1;
        while i < body.len() && frac_digits < scale as usize {
            let d = body[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            frac = frac * 10 + d as u64;
            frac_digits += 1;
            i += 1;
        }
    }
    if i != body.len() || int_digits + frac_digits == 0 {
        return None;
    }
    let v = int as i128 * POW10[scale as usize] as i128
        + (frac * POW10[scale as usize - frac_digits]) as i128;
    Some(if neg { -v } else { v })
}

const POW10: [u64; 19] = {
    let mut t = [1u64; 19];
    let mut i = 1;
    while i < 19 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

fn parse_decimal_i128_general(s: &[u8], scale: u32) -> Option<i128> {
    let p = split_decimal(s)?;
    // value = int.frac * 10^exp; scaled = digits * 10^(exp - frac.len() + scale)
    let shift = p.exp - p.frac.len() as i64 + scale as i64;
    let mut v: i128 = 0;
    let all = p.int.iter().chain(p.frac);
    let total = p.int.len() + p.frac.len();
    // When shift < 0, the last -shift digits must be zeros and are dropped.
    let keep = if shift < 0 {
        total as i64 + shift
    } else {
        total as i64
    };
    for (i, &c) in all.enumerate() {
        let d = (c - b'0') as i128;
        if (i as i64) < keep {
            v = v.checked_mul(10)?.checked_add(d)?;
        } else if d != 0 {
            return None;
        }
    }
    for _ in 0..shift.max(0) {
        if v == 0 {
            break;
        }
        v = v.checked_mul(10)?;
    }
    Some(if p.neg { -v } else { v })
}

/// Parses a decimal text into an `i256` scaled by `10^scale`, exactly.
pub fn parse_decimal_i256(s: &[u8], scale: u32) -> Option<i256> {
    let p = split_decimal(s)?;
    let shift = p.exp - p.frac.len() as i64 + scale as i64;
    let ten = i256::from_i128(10);
    // Accumulate with the sign applied, so that i256::MIN parses.
    let sign = if p.neg { i256::MINUS_ONE } else { i256::ONE };
    let mut v = i256::ZERO;
    let total = p.int.len() + p.frac.len();
    let keep = if shift < 0 {
        total as i64 + shift
    } else {
        total as i64
    };
    for (i, &c) in p.int.iter().chain(p.frac).enumerate() {
        let d = i256::from_i128((c - b'0') as i128);
        if (i as i64) < keep {
            v = v.checked_mul(ten)?.checked_add(d.checked_mul(sign)?)?;
        } else if d != i256::ZERO {
            return None;
        }
    }
    for _ in 0..shift.max(0) {
        if v == i256::ZERO {
            break;
        }
        v = v.checked_mul(ten)?;
    }
    Some(v)
}

/// Parses BigQuery's float-seconds TIMESTAMP form (`1.7040672E9`, `1704067200.123456`,
/// `-1.0E-6`) into microseconds, exactly: the decimal digits are scaled, never passed
/// through `f64`. Precision beyond a microsecond is rounded half to even.
pub fn parse_float_seconds_micros(s: &[u8]) -> Option<i64> {
    let p = split_decimal(s)?;
    let shift = p.exp - p.frac.len() as i64 + 6;
    let mut v: i128 = 0;
    let total = p.int.len() + p.frac.len();
    let keep = if shift < 0 {
        total as i64 + shift
    } else {
        total as i64
    };
    let mut first_dropped: Option<u8> = None;
    let mut rest_nonzero = false;
    for (i, &c) in p.int.iter().chain(p.frac).enumerate() {
        let d = c - b'0';
        if (i as i64) < keep {
            v = v.checked_mul(10)?.checked_add(d as i128)?;
        } else if first_dropped.is_none() {
            first_dropped = Some(d);
        } else if d != 0 {
            rest_nonzero = true;
        }
    }
    if keep < 0 {
        // Every digit is below a microsecond; what counts is whether it is at least half.
        first_dropped = if keep == -1 { first_dropped } else { Some(0) };
        if keep < -1 {
            rest_nonzero = false;
        }
    }
    if let Some(fd) = first_dropped
        && (fd > 5 || (fd == 5 && (rest_nonzero || v % 2 == 1)))
    {
        v += 1;
    }
    for _ in 0..shift.max(0) {
        if v == 0 {
            break;
        }
        v = v.checked_mul(10)?;
    }
    let v = if p.neg { -v } else { v };
    i64::try_from(v).ok()
}

/// The parts of an INTERVAL: months, days and nanoseconds, each signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IntervalParts {
    /// Years and months, as months.
    pub months: i32,
    /// Days.
    pub days: i32,
    /// Hours, minutes, seconds and fractions, as nanoseconds.
    pub nanos: i64,
}

/// Parses BigQuery's canonical INTERVAL text, `[-]Y-M [-]D [-]H:M:S[.F]`.
pub fn parse_interval(s: &[u8]) -> Option<IntervalParts> {
    let s = std::str::from_utf8(s).ok()?;
    let mut it = s.split(' ');
    let ym = it.next()?;
    let d = it.next()?;
    let hms = it.next()?;
    if it.next().is_some() {
        return None;
    }
    let (yneg, ym) = strip_sign(ym);
    let (y, m) = ym.split_once('-')?;
    let y: i64 = y.parse().ok()?;
    let m: i64 = m.parse().ok()?;
    let months = y.checked_mul(12)?.checked_add(m)? * if yneg { -1 } else { 1 };
    let (dneg, d) = strip_sign(d);
    let days: i64 = d.parse::<i64>().ok()? * if dneg { -1 } else { 1 };
    let (tneg, hms) = strip_sign(hms);
    let mut parts = hms.splitn(3, ':');
    let h: i64 = parts.next()?.parse().ok()?;
    let mi: i64 = parts.next()?.parse().ok()?;
    let sec = parts.next()?;
    let (sec, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let sec: i64 = sec.parse().ok()?;
    if frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut f: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        f *= 10;
    }
    let nanos = h
        .checked_mul(3_600_000_000_000)?
        .checked_add(mi.checked_mul(60_000_000_000)?)?
        .checked_add(sec.checked_mul(1_000_000_000)?)?
        .checked_add(f)?;
    Some(IntervalParts {
        months: i32::try_from(months).ok()?,
        days: i32::try_from(days).ok()?,
        nanos: if tneg { -nanos } else { nanos },
    })
}

fn strip_sign(s: &str) -> (bool, &str) {
    match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    }
}

/// Writes a DATE as `YYYY-MM-DD`.
pub fn format_date(days: i32, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    let (y, m, d) = civil_from_days(days as i64);
    write!(out, "{y:04}-{m:02}-{d:02}")
}

/// Writes a TIME as `HH:MM:SS[.ffffff]` (fraction only when non-zero, trailing zeros kept
/// to six digits as BigQuery does).
pub fn format_time(micros: i64, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )?;
    if frac != 0 {
        write!(out, ".{frac:06}")?;
    }
    Ok(())
}

/// Writes a DATETIME as `YYYY-MM-DDTHH:MM:SS[.ffffff]`.
pub fn format_datetime(micros: i64, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    format_date(micros.div_euclid(MICROS_PER_DAY) as i32, out)?;
    out.write_char('T')?;
    format_time(micros.rem_euclid(MICROS_PER_DAY), out)
}

/// Writes a TIMESTAMP as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`.
pub fn format_timestamp(micros: i64, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    format_datetime(micros, out)?;
    out.write_char('Z')
}

/// Writes an integer scaled by `10^scale` as a plain decimal with no trailing zeros.
pub fn format_decimal(
    digits: &str,
    neg: bool,
    scale: usize,
    out: &mut impl std::fmt::Write,
) -> std::fmt::Result {
    if neg {
        out.write_char('-')?;
    }
    let (int, frac) = if digits.len() > scale {
        digits.split_at(digits.len() - scale)
    } else {
        ("0", digits)
    };
    out.write_str(int)?;
    let pad = scale.saturating_sub(frac.len());
    let frac_full: String = std::iter::repeat_n('0', pad).chain(frac.chars()).collect();
    let trimmed = frac_full.trim_end_matches('0');
    if !trimmed.is_empty() {
        out.write_char('.')?;
        out.write_str(trimmed)?;
    }
    Ok(())
}

/// Writes an INTERVAL in BigQuery's canonical form, `Y-M D H:M:S[.FFF[FFF]]`.
pub fn format_interval(p: IntervalParts, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    let m = p.months as i64;
    let ysign = if m < 0 { "-" } else { "" };
    write!(out, "{ysign}{}-{} {} ", m.abs() / 12, m.abs() % 12, p.days)?;
    let n = p.nanos;
    let tsign = if n < 0 { "-" } else { "" };
    let a = n.unsigned_abs();
    let secs = a / 1_000_000_000;
    let frac = a % 1_000_000_000;
    write!(
        out,
        "{tsign}{}:{}:{}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )?;
    // The fraction in milli-, micro- or nanoseconds, whichever is the coarsest that holds
    // it, as BigQuery writes it (`0:0:1.500`, `0:0:0.000001`).
    if frac != 0 {
        if frac.is_multiple_of(1_000_000) {
            write!(out, ".{:03}", frac / 1_000_000)?;
        } else if frac.is_multiple_of(1_000) {
            write!(out, ".{:06}", frac / 1_000)?;
        } else {
            write!(out, ".{frac:09}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for z in [-719_162i64, -1, 0, 1, 19_723, 2_932_896] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(parse_date(b"0001-01-01"), Some(MIN_DATE));
        assert_eq!(parse_date(b"9999-12-31"), Some(MAX_DATE));
        assert_eq!(parse_date(b"2024-02-30"), None);
        assert_eq!(parse_date(b"2024-02-29"), Some(19_782));
        assert_eq!(parse_date(b"2023-02-29"), None);
        assert_eq!(parse_date(b"2024-1-5x"), None);
        assert_eq!(parse_date(b"2024-1-05"), parse_date(b"2024-01-05"));
        assert_eq!(parse_date(b"0000-01-01"), None);
        assert_eq!(parse_date(b"2024-00-01"), None);
        assert_eq!(parse_date(b"2024-12-32"), None);
        assert_eq!(parse_date(b"2024-0a-01"), None);
        assert_eq!(parse_date(b"2100-02-29"), None);
        assert_eq!(parse_date(b"2000-02-29"), Some(11_016));
        // The canonical fast path agrees with the civil-date algorithm: every day from 1900
        // to 2100, and every 97th day over the whole range.
        let common = -25_567..=47_482;
        for z in (MIN_DATE..=MAX_DATE).filter(|z| z % 97 == 0 || common.contains(z)) {
            let (y, m, d) = civil_from_days(z as i64);
            let t = format!("{y:04}-{m:02}-{d:02}");
            assert_eq!(parse_date(t.as_bytes()), Some(z), "{t}");
        }
    }

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(
            parse_i64(b"-123456789012345678"),
            Some(-123_456_789_012_345_678)
        );
        assert_eq!(
            parse_i64(b"999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"12a"), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"+7"), Some(7));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time(b"00:00:00"), Some(0));
        assert_eq!(parse_time(b"23:59:59.999999"), Some(86_399_999_999));
        assert_eq!(parse_time(b"12:30:00.5"), Some(45_000_500_000));
        assert_eq!(parse_time(b"24:00:00"), None);
        assert_eq!(parse_time(b"12:30:00."), None);
        assert_eq!(
            parse_datetime(b"2024-01-01T00:00:01"),
            Some(19_723 * MICROS_PER_DAY + 1_000_000)
        );
        assert_eq!(
            parse_datetime(b"2024-01-01 00:00:01"),
            Some(19_723 * MICROS_PER_DAY + 1_000_000)
        );
        assert_eq!(
            parse_timestamp(b"2024-01-01 00:00:00+00"),
            Some(19_723 * MICROS_PER_DAY)
        );
        assert_eq!(
            parse_timestamp(b"2024-01-01T01:00:00+01:00"),
            Some(19_723 * MICROS_PER_DAY)
        );
        assert_eq!(
            parse_timestamp(b"2024-01-01T00:00:00Z"),
            Some(19_723 * MICROS_PER_DAY)
        );
        assert_eq!(
            parse_timestamp(b"2024-01-01 00:00:00 UTC"),
            Some(19_723 * MICROS_PER_DAY)
        );
        let mut s = String::new();
        format_timestamp(19_723 * MICROS_PER_DAY + 1_500_000, &mut s).unwrap();
        assert_eq!(s, "2024-01-01T00:00:01.500000Z");
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_decimal_i128(b"1.5", 9), Some(1_500_000_000));
        assert_eq!(parse_decimal_i128(b"-0.000000001", 9), Some(-1));
        assert_eq!(parse_decimal_i128(b"0.0000000001", 9), None);
        assert_eq!(parse_decimal_i128(b"1.50000000000", 9), Some(1_500_000_000));
        assert_eq!(parse_decimal_i128(b"1.5E3", 9), Some(1_500_000_000_000));
        assert_eq!(parse_decimal_i128(b"15E-1", 9), Some(1_500_000_000));
        assert_eq!(
            parse_decimal_i128(b"99999999999999999999999999999.999999999", 9),
            Some(99_999_999_999_999_999_999_999_999_999_999_999_999)
        );
        assert_eq!(parse_decimal_i128(b"abc", 9), None);
        assert_eq!(parse_decimal_i128(b"", 9), None);
        assert_eq!(parse_decimal_i128(b"1..2", 9), None);
        // The plain fast path and its edges, against the general parser.
        for t in [
            "0",
            "-0",
            "1.",
            ".5",
            "-.5",
            "21168.23",
            "0.04",
            "999999999999999999.999999999",
            "-999999999999999999.999999999",
            "1234567890123456789",
            "1.0000000001",
            "1.1000000000",
            "12345678901234567890.5",
            ".",
            "-",
            "",
            "1.2.3",
            "1e3",
            "+1",
            "1 ",
            "0.000000001",
        ] {
            assert_eq!(
                parse_decimal_i128(t.as_bytes(), 9),
                parse_decimal_i128_general(t.as_bytes(), 9),
                "{t}"
            );
        }
        let big = parse_decimal_i256(
            b"578960446186580977117854925043439539266.34992332820282019728792003956564819967",
            38,
        )
        .unwrap();
        assert_eq!(big, i256::MAX);
        assert_eq!(
            parse_decimal_i256(b"-1.5", 38).unwrap(),
            i256::from_i128(-15) * i256::from_i128(10).wrapping_pow(37)
        );
    }

    #[test]
    fn float_seconds() {
        assert_eq!(
            parse_float_seconds_micros(b"1.7040672E9"),
            Some(1_704_067_200_000_000)
        );
        assert_eq!(
            parse_float_seconds_micros(b"1704067200.123456"),
            Some(1_704_067_200_123_456)
        );
        assert_eq!(
            parse_float_seconds_micros(b"1.704067200123456E9"),
            Some(1_704_067_200_123_456)
        );
        assert_eq!(parse_float_seconds_micros(b"-1.0E-6"), Some(-1));
        assert_eq!(parse_float_seconds_micros(b"0.0000005"), Some(0));
        assert_eq!(parse_float_seconds_micros(b"0.0000015"), Some(2));
        assert_eq!(parse_float_seconds_micros(b"0.00000151"), Some(2));
        assert_eq!(parse_float_seconds_micros(b"1e-9"), Some(0));
        assert_eq!(
            parse_float_seconds_micros(b"-6.21355968E10"),
            Some(-62_135_596_800_000_000)
        );
        assert_eq!(parse_float_seconds_micros(b"x"), None);
    }

    #[test]
    fn intervals() {
        let p = parse_interval(b"1-2 3 4:5:6.789").unwrap();
        assert_eq!(
            p,
            IntervalParts {
                months: 14,
                days: 3,
                nanos: ((4 * 3600 + 5 * 60 + 6) * 1_000_000_000) + 789_000_000
            }
        );
        let n = parse_interval(b"-1-2 -3 -4:5:6").unwrap();
        assert_eq!(n.months, -14);
        assert_eq!(n.days, -3);
        assert!(n.nanos < 0);
        let mut s = String::new();
        format_interval(p, &mut s).unwrap();
        assert_eq!(s, "1-2 3 4:5:6.789");
        // The fraction in milli-, micro- or nanoseconds, as BigQuery writes it.
        for (text, want) in [
            (&b"0-0 0 0:0:1.5"[..], "0-0 0 0:0:1.500"),
            (b"0-0 0 10:20:30.52", "0-0 0 10:20:30.520"),
            (b"0-0 0 0:0:0.000001", "0-0 0 0:0:0.000001"),
            (b"0-0 0 0:0:0.1234", "0-0 0 0:0:0.123400"),
            (b"0-0 0 -0:0:2.25", "0-0 0 -0:0:2.250"),
        ] {
            let mut s = String::new();
            format_interval(parse_interval(text).unwrap(), &mut s).unwrap();
            assert_eq!(s, want);
        }
        assert_eq!(parse_interval(b"1-2 3"), None);
        // Out of range, not an overflow.
        assert_eq!(parse_interval(b"9223372036854775807-0 0 0:0:0"), None);
        assert_eq!(parse_interval(b"0-0 0 9223372036854775807:0:0"), None);
    }
}

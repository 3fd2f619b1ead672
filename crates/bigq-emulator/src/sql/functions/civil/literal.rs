//! `DATE '...'`, `DATETIME '...'`, `TIME '...'` and `TIMESTAMP '...'` literals, read as
//! BigQuery reads them (its whole range, offsets like `-8:15`, zone names), with the error
//! BigQuery gives for an invalid one.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;

use super::{
    DATE, DATETIME, STRING, TIME, V, Zone, check_ts, err, in_range, is, timestamp_type, typed,
};

/// Digits at the start of `s` (at most `max`): their value and the rest.
fn digits(s: &str, max: usize) -> Option<(u32, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// A timestamp's canonical text (`2008-12-25 15:30:00.123+05:30`, `...T...Z`, `... UTC`,
/// `... America/Los_Angeles`, a date alone): the civil value and the zone it names, if any.
pub(crate) fn parse_text(s: &str) -> Option<(NaiveDateTime, Option<Zone>)> {
    let s = s.trim();
    let (y, r) = digits(s, 4)?;
    let r = r.strip_prefix('-')?;
    let (mo, r) = digits(r, 2)?;
    let r = r.strip_prefix('-')?;
    let (d, mut r) = digits(r, 2)?;
    let date = NaiveDate::from_ymd_opt(y as i32, mo, d)?;
    let mut time = NaiveTime::MIN;
    let mut leap = false;
    if let Some(rest) = r
        .strip_prefix(['T', 't', ' '])
        .filter(|x| x.starts_with(|c: char| c.is_ascii_digit()))
    {
        let (h, t) = digits(rest, 2)?;
        let t = t.strip_prefix(':')?;
        let (mi, mut t) = digits(t, 2)?;
        let (mut sec, mut nanos) = (0, 0);
        if let Some(x) = t.strip_prefix(':') {
            let (sv, x) = digits(x, 2)?;
            sec = sv;
            t = x;
            if let Some(x) = t.strip_prefix('.') {
                let n = x.bytes().take_while(u8::is_ascii_digit).count();
                if n == 0 || n > 9 {
                    return None;
                }
                let mut f = x[..n].to_string();
                while f.len() < 9 {
                    f.push('0');
                }
                nanos = f.parse::<u32>().ok()? / 1000 * 1000;
                t = &x[n..];
            }
        }
        // A leap second (:60) is read as the first instant of the next minute.
        leap = sec == 60;
        time = NaiveTime::from_hms_nano_opt(h, mi, if leap { 59 } else { sec }, nanos)?;
        r = t;
    }
    let z = r.trim();
    let zone = if z.is_empty() {
        None
    } else {
        Some(Zone::parse(z).ok()?)
    };
    let at = date.and_time(time);
    let at = if leap {
        at.checked_add_signed(chrono::Duration::seconds(1))?
    } else {
        at
    };
    Some((at, zone))
}

/// `H:M[:S[.F]]`, as a TIME literal or the time of a DATETIME literal.
pub(crate) fn parse_time_text(s: &str) -> Option<NaiveTime> {
    let (at, zone) = parse_text(&format!("1970-01-01 {}", s.trim()))?;
    zone.is_none().then(|| at.time())
}

fn kind(name: &str) -> &'static str {
    match name {
        "bigq_date_literal" => "DATE",
        "bigq_datetime_literal" => "DATETIME",
        "bigq_time_literal" => "TIME",
        _ => "TIMESTAMP",
    }
}

pub(crate) fn literal_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ret = match kind(name) {
        "DATE" => DATE,
        "DATETIME" => DATETIME,
        "TIME" => TIME,
        _ => timestamp_type(),
    };
    typed(args.len() == 1 && is(&args[0], &STRING), ret, name, args)
}

pub(crate) fn literal(name: &str, args: &[V]) -> DfResult<V> {
    let V::Str(s) = &args[0] else {
        return Err(err("a literal's value is a string"));
    };
    let kind = kind(name);
    let bad = || err(format!("Invalid {kind} literal: \"{s}\""));
    // Microseconds at most: a seventh digit of a second is an error, not dropped.
    if let Some(i) = s.find(':')
        && let Some(dot) = s[i..].find('.')
        && s[i + dot + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count()
            > 6
    {
        return Err(bad());
    }
    let date_ok = |d: NaiveDate| in_range(d);
    Ok(match kind {
        "DATE" => match parse_text(s) {
            Some((at, None)) if at.time() == NaiveTime::MIN && !s.contains(':') => {
                if !date_ok(at.date()) {
                    return Err(bad());
                }
                V::Date(at.date())
            }
            _ => return Err(bad()),
        },
        "DATETIME" => match parse_text(s) {
            Some((at, None)) if date_ok(at.date()) => V::Datetime(at),
            _ => return Err(bad()),
        },
        "TIME" => V::Time(parse_time_text(s).ok_or_else(bad)?),
        _ => match parse_text(s) {
            Some((at, zone)) => {
                let m = zone.unwrap_or_else(Zone::utc).instant(at);
                V::Ts(check_ts(name, Some(m)).map_err(|_| bad())?)
            }
            None => return Err(bad()),
        },
    })
}

/// A timestamp's text as an instant (UTC when it names no zone).
pub(crate) fn timestamp_of_text(s: &str) -> Option<i64> {
    let (at, zone) = parse_text(s)?;
    let m = zone.unwrap_or_else(Zone::utc).instant(at);
    check_ts("TIMESTAMP", Some(m)).ok()
}

/// A DATE literal's text (no time, no zone), within BigQuery's range.
pub(crate) fn date_of_text(s: &str) -> Option<NaiveDate> {
    match parse_text(s) {
        Some((at, None)) if !s.contains(':') && in_range(at.date()) => Some(at.date()),
        _ => None,
    }
}

//! The `%` format elements of `FORMAT_DATE`, `FORMAT_DATETIME`, `FORMAT_TIME` and
//! `FORMAT_TIMESTAMP`, and their reading by the `PARSE_` functions.

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Weekday};
use datafusion::common::Result as DfResult;

use super::{MONTHS, err, micros_of, week_of_year, weekday_name};

/// What is formatted: a civil date and time, and for a TIMESTAMP the instant and the zone's
/// offset there (seconds east of UTC).
pub(crate) struct Civil {
    pub(crate) at: NaiveDateTime,
    pub(crate) offset: i32,
}

fn pad(out: &mut String, n: i64, width: usize, fill: char) {
    let s = n.abs().to_string();
    if n < 0 {
        out.push('-');
    }
    for _ in s.len()..width {
        out.push(fill);
    }
    out.push_str(&s);
}

fn offset_text(out: &mut String, offset: i32, colon: bool) {
    out.push(if offset < 0 { '-' } else { '+' });
    let o = offset.abs();
    pad(out, (o / 3600) as i64, 2, '0');
    if colon {
        out.push(':');
    }
    pad(out, (o / 60 % 60) as i64, 2, '0');
}

/// `%Z`: `UTC`, or `UTC` and the offset (`UTC-8`, `UTC+0530`), as BigQuery names a zone.
fn zone_name(out: &mut String, offset: i32) {
    out.push_str("UTC");
    if offset == 0 {
        return;
    }
    out.push(if offset < 0 { '-' } else { '+' });
    let o = offset.abs();
    if o % 3600 == 0 {
        out.push_str(&(o / 3600).to_string());
    } else {
        pad(out, (o / 3600) as i64, 2, '0');
        pad(out, (o / 60 % 60) as i64, 2, '0');
    }
}

/// `value` formatted as `fmt` says.
pub(crate) fn format(fmt: &str, value: &Civil) -> String {
    let mut out = String::new();
    let d = value.at.date();
    let t = value.at.time();
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' || i >= chars.len() {
            out.push(c);
            continue;
        }
        let mut e = chars[i];
        i += 1;
        // %E and %O are alternative forms; beyond these, they are the plain element.
        if e == 'E' && i < chars.len() {
            match chars[i] {
                'z' => {
                    i += 1;
                    offset_text(&mut out, value.offset, true);
                    continue;
                }
                '*' if chars.get(i + 1) == Some(&'S') => {
                    i += 2;
                    pad(&mut out, t.second() as i64, 2, '0');
                    let micros = t.nanosecond() / 1000;
                    if micros > 0 {
                        let f = format!("{micros:06}");
                        out.push('.');
                        out.push_str(f.trim_end_matches('0'));
                    }
                    continue;
                }
                '4' if chars.get(i + 1) == Some(&'Y') => {
                    i += 2;
                    pad(&mut out, d.year() as i64, 4, '0');
                    continue;
                }
                n if n.is_ascii_digit() => {
                    let mut j = i;
                    while j < chars.len() && chars[j].is_ascii_digit() {
                        j += 1;
                    }
                    if chars.get(j) == Some(&'S') {
                        let digits: usize =
                            chars[i..j].iter().collect::<String>().parse().unwrap_or(0);
                        i = j + 1;
                        pad(&mut out, t.second() as i64, 2, '0');
                        if digits > 0 {
                            let f = format!("{:09}", t.nanosecond());
                            out.push('.');
                            let digits = digits.min(12);
                            out.push_str(&f[..digits.min(9)]);
                            for _ in 9..digits {
                                out.push('0');
                            }
                        }
                        continue;
                    }
                }
                'c' | 'C' | 'x' | 'X' | 'y' | 'Y' => {
                    e = chars[i];
                    i += 1;
                }
                _ => {}
            }
        } else if e == 'O' && i < chars.len() && "deHImMSuUVwWy".contains(chars[i]) {
            e = chars[i];
            i += 1;
        }
        element(&mut out, e, d, t, value);
    }
    out
}

fn element(out: &mut String, e: char, d: NaiveDate, t: NaiveTime, value: &Civil) {
    let hour12 = |h: u32| if h.is_multiple_of(12) { 12 } else { h % 12 } as i64;
    match e {
        'A' => out.push_str(weekday_name(d.weekday())),
        'a' => out.push_str(&weekday_name(d.weekday())[..3]),
        'B' => out.push_str(MONTHS[d.month0() as usize]),
        'b' | 'h' => out.push_str(&MONTHS[d.month0() as usize][..3]),
        'C' => pad(out, (d.year() / 100) as i64, 2, '0'),
        'c' => {
            element(out, 'a', d, t, value);
            out.push(' ');
            element(out, 'b', d, t, value);
            out.push(' ');
            element(out, 'e', d, t, value);
            out.push(' ');
            element(out, 'T', d, t, value);
            out.push(' ');
            element(out, 'Y', d, t, value);
        }
        'D' | 'x' => {
            for (k, e) in ['m', 'd', 'y'].into_iter().enumerate() {
                if k > 0 {
                    out.push('/');
                }
                element(out, e, d, t, value);
            }
        }
        'd' => pad(out, d.day() as i64, 2, '0'),
        'e' => pad(out, d.day() as i64, 2, ' '),
        'F' => {
            element(out, 'Y', d, t, value);
            out.push('-');
            element(out, 'm', d, t, value);
            out.push('-');
            element(out, 'd', d, t, value);
        }
        'G' => out.push_str(&d.iso_week().year().to_string()),
        'g' => pad(out, (d.iso_week().year() % 100) as i64, 2, '0'),
        'H' => pad(out, t.hour() as i64, 2, '0'),
        'I' => pad(out, hour12(t.hour()), 2, '0'),
        'j' => pad(out, d.ordinal() as i64, 3, '0'),
        'k' => pad(out, t.hour() as i64, 2, ' '),
        'l' => pad(out, hour12(t.hour()), 2, ' '),
        'M' => pad(out, t.minute() as i64, 2, '0'),
        'm' => pad(out, d.month() as i64, 2, '0'),
        'n' => out.push('\n'),
        'P' => out.push_str(if t.hour() < 12 { "am" } else { "pm" }),
        'p' => out.push_str(if t.hour() < 12 { "AM" } else { "PM" }),
        'Q' => out.push_str(&((d.month0() / 3) + 1).to_string()),
        'R' => {
            element(out, 'H', d, t, value);
            out.push(':');
            element(out, 'M', d, t, value);
        }
        'S' => pad(out, t.second() as i64, 2, '0'),
        's' => {
            let utc = micros_of(value.at) - value.offset as i64 * 1_000_000;
            out.push_str(&utc.div_euclid(1_000_000).to_string());
        }
        'T' | 'X' => {
            element(out, 'H', d, t, value);
            out.push(':');
            element(out, 'M', d, t, value);
            out.push(':');
            element(out, 'S', d, t, value);
        }
        't' => out.push('\t'),
        'U' => pad(out, week_of_year(d, Weekday::Sun), 2, '0'),
        'u' => out.push_str(&d.weekday().number_from_monday().to_string()),
        'V' => pad(out, d.iso_week().week() as i64, 2, '0'),
        'W' => pad(out, week_of_year(d, Weekday::Mon), 2, '0'),
        'w' => out.push_str(&d.weekday().num_days_from_sunday().to_string()),
        'Y' => out.push_str(&d.year().to_string()),
        'y' => pad(out, (d.year() % 100) as i64, 2, '0'),
        'Z' => zone_name(out, value.offset),
        'z' => offset_text(out, value.offset, false),
        '%' => out.push('%'),
        other => {
            out.push('%');
            out.push(other);
        }
    }
}

/// What a `PARSE_` function reads: which fields the format may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Date,
    Time,
    Datetime,
    Timestamp,
}

/// The fields read from the text; those not read keep 1970-01-01 00:00:00.
#[derive(Default)]
struct Fields {
    year: Option<i64>,
    century: Option<i64>,
    year2: Option<i64>,
    month: Option<u32>,
    day: Option<u32>,
    yday: Option<u32>,
    hour: Option<u32>,
    hour12: Option<u32>,
    pm: Option<bool>,
    minute: u32,
    second: u32,
    nanos: u32,
    offset: Option<i32>,
    zone: Option<String>,
    epoch: Option<i64>,
}

/// The result of a parse: the civil value, and an offset or zone name the text gave.
pub(crate) struct Parsed {
    pub(crate) at: NaiveDateTime,
    pub(crate) offset: Option<i32>,
    pub(crate) zone: Option<String>,
    /// Seconds since the epoch, when `%s` gave them (they win over every other field).
    pub(crate) epoch: Option<i64>,
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// Up to `max` digits (at least one), with a sign if `signed`.
    fn number(&mut self, max: usize, signed: bool) -> Option<i64> {
        let start = self.pos;
        let mut neg = false;
        if signed && self.pos < self.s.len() && matches!(self.s[self.pos], b'-' | b'+') {
            neg = self.s[self.pos] == b'-';
            self.pos += 1;
        }
        let digits = self.pos;
        while self.pos < self.s.len()
            && self.pos - digits < max
            && self.s[self.pos].is_ascii_digit()
        {
            self.pos += 1;
        }
        if self.pos == digits {
            self.pos = start;
            return None;
        }
        let n: i64 = std::str::from_utf8(&self.s[digits..self.pos])
            .ok()?
            .parse()
            .ok()?;
        Some(if neg { -n } else { n })
    }

    /// One of `names` (full or its first three letters), case-insensitive: its index.
    fn name(&mut self, names: &[&str]) -> Option<usize> {
        let rest = &self.s[self.pos..];
        for (i, n) in names.iter().enumerate() {
            for cand in [n.as_bytes(), &n.as_bytes()[..3]] {
                if rest.len() >= cand.len() && rest[..cand.len()].eq_ignore_ascii_case(cand) {
                    self.pos += cand.len();
                    return Some(i);
                }
            }
        }
        None
    }

    fn literal(&mut self, c: u8) -> bool {
        if self.pos < self.s.len() && self.s[self.pos] == c {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// `+HH`, `+HHMM` or `+HH:MM`, as seconds east of UTC.
    fn offset(&mut self) -> Option<i32> {
        let start = self.pos;
        let neg = match self.s.get(self.pos) {
            Some(b'+') => false,
            Some(b'-') => true,
            _ => return None,
        };
        self.pos += 1;
        let Some(h) = self.number(2, false) else {
            self.pos = start;
            return None;
        };
        let mut m = 0;
        let save = self.pos;
        if self.literal(b':') {
            match self.number(2, false) {
                Some(x) => m = x,
                None => self.pos = save,
            }
        } else if let Some(x) = self.number(2, false) {
            m = x;
        }
        if h > 14 || m > 59 || (h == 14 && m > 0) {
            return None;
        }
        let secs = (h * 3600 + m * 60) as i32;
        Some(if neg { -secs } else { secs })
    }
}

const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// `text` read as `fmt` says, for `name` (the function, for errors).
pub(crate) fn parse(name: &str, fmt: &str, text: &str, target: Target) -> DfResult<Parsed> {
    let fail = || {
        err(format!(
            "{}: Failed to parse input string \"{text}\" with format \"{fmt}\"",
            name.to_ascii_uppercase()
        ))
    };
    let expanded = expand(fmt);
    let f = expanded.as_bytes();
    let mut r = Reader {
        s: text.as_bytes(),
        pos: 0,
    };
    let mut x = Fields::default();
    r.skip_space();
    let mut i = 0;
    while i < f.len() {
        let c = f[i];
        i += 1;
        if c.is_ascii_whitespace() {
            r.skip_space();
            continue;
        }
        if c != b'%' || i >= f.len() {
            if !r.literal(c) {
                return Err(fail());
            }
            continue;
        }
        let mut e = f[i];
        i += 1;
        let mut frac: Option<usize> = None;
        if e == b'E' || e == b'O' {
            let Some(&n) = f.get(i) else {
                return Err(fail());
            };
            if e == b'E' && n == b'*' && f.get(i + 1) == Some(&b'S') {
                frac = Some(usize::MAX);
                i += 2;
                e = b'S';
            } else if e == b'E' && n.is_ascii_digit() {
                let mut j = i;
                while j < f.len() && f[j].is_ascii_digit() {
                    j += 1;
                }
                let num: usize = std::str::from_utf8(&f[i..j])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(fail)?;
                match f.get(j) {
                    Some(b'S') => {
                        frac = Some(num);
                        e = b'S';
                    }
                    Some(b'Y') if num == 4 => e = b'Y',
                    _ => return Err(fail()),
                }
                i = j + 1;
            } else if e == b'E' && n == b'z' {
                i += 1;
                e = b'z';
            } else {
                i += 1;
                e = n;
            }
        }
        let time_element = b"HIklMSpPRTXrsEzZ".contains(&e);
        let date_element = b"YyCmdejbBhAaUuVWwgGjQxDFc".contains(&e);
        if (target == Target::Date && time_element && e != b'Z' && e != b'z')
            || (target == Target::Time && date_element)
        {
            // BigQuery's PARSE_DATE reads no time and PARSE_TIME no date.
            let kind = if target == Target::Date {
                "time"
            } else {
                "date"
            };
            return Err(err(format!(
                "{}: the format element %{} is a {kind} element, not allowed in \"{fmt}\"",
                name.to_ascii_uppercase(),
                e as char
            )));
        }
        match e {
            b'Y' => x.year = Some(r.number(4, true).ok_or_else(fail)?),
            b'C' => x.century = Some(r.number(2, false).ok_or_else(fail)?),
            b'y' => x.year2 = Some(r.number(2, false).ok_or_else(fail)?),
            b'G' => {
                r.number(4, true).ok_or_else(fail)?;
            }
            b'g' | b'U' | b'V' | b'W' => {
                r.number(2, false).ok_or_else(fail)?;
            }
            b'u' | b'w' => {
                r.number(1, false).ok_or_else(fail)?;
            }
            b'm' => x.month = Some(r.number(2, false).ok_or_else(fail)? as u32),
            b'd' | b'e' => x.day = Some(r.number(2, false).ok_or_else(fail)? as u32),
            b'j' => x.yday = Some(r.number(3, false).ok_or_else(fail)? as u32),
            b'b' | b'B' | b'h' => x.month = Some(r.name(&MONTHS).ok_or_else(fail)? as u32 + 1),
            b'a' | b'A' => {
                r.name(&WEEKDAYS).ok_or_else(fail)?;
            }
            b'H' | b'k' => x.hour = Some(r.number(2, false).ok_or_else(fail)? as u32),
            b'I' | b'l' => {
                let h = r.number(2, false).ok_or_else(fail)?;
                if !(1..=12).contains(&h) {
                    return Err(fail());
                }
                x.hour12 = Some(h as u32);
            }
            b'p' | b'P' => {
                let rest = &r.s[r.pos..];
                if rest.len() < 2 {
                    return Err(fail());
                }
                x.pm = Some(match &rest[..2].to_ascii_uppercase()[..] {
                    b"AM" => false,
                    b"PM" => true,
                    _ => return Err(fail()),
                });
                r.pos += 2;
            }
            b'M' => x.minute = r.number(2, false).ok_or_else(fail)? as u32,
            b'S' => {
                x.second = r.number(2, false).ok_or_else(fail)? as u32;
                if let Some(max) = frac
                    && max > 0
                    && r.literal(b'.')
                {
                    {
                        let start = r.pos;
                        while r.pos < r.s.len()
                            && r.pos - start < max
                            && r.s[r.pos].is_ascii_digit()
                        {
                            r.pos += 1;
                        }
                        let digits = std::str::from_utf8(&r.s[start..r.pos]).map_err(|_| fail())?;
                        if digits.is_empty() {
                            return Err(fail());
                        }
                        let mut d9: String = digits.chars().take(9).collect();
                        while d9.len() < 9 {
                            d9.push('0');
                        }
                        let nanos: u32 = d9.parse().map_err(|_| fail())?;
                        // BigQuery keeps microseconds.
                        x.nanos = nanos / 1000 * 1000;
                    }
                }
            }
            b's' => x.epoch = Some(r.number(19, true).ok_or_else(fail)?),
            b'z' => x.offset = Some(r.offset().ok_or_else(fail)?),
            b'Z' => {
                let start = r.pos;
                while r.pos < r.s.len()
                    && (r.s[r.pos].is_ascii_alphanumeric() || b"/_+-:".contains(&r.s[r.pos]))
                {
                    r.pos += 1;
                }
                if r.pos == start {
                    return Err(fail());
                }
                x.zone = Some(String::from_utf8_lossy(&r.s[start..r.pos]).into_owned());
            }
            b'n' | b't' => r.skip_space(),
            b'%' => {
                if !r.literal(b'%') {
                    return Err(fail());
                }
            }
            b'Q' => {
                return Err(err(format!(
                    "{}: the format element %Q is not supported for parsing",
                    name.to_ascii_uppercase()
                )));
            }
            _ => return Err(fail()),
        }
    }
    r.skip_space();
    if r.pos != r.s.len() {
        return Err(fail());
    }
    let year = match (x.year, x.century, x.year2) {
        (Some(y), _, _) => y,
        (None, Some(c), Some(y)) => c * 100 + y,
        (None, Some(c), None) => c * 100,
        (None, None, Some(y)) => {
            if y < 69 {
                2000 + y
            } else {
                1900 + y
            }
        }
        (None, None, None) => 1970,
    };
    let out_of_range = || {
        err(format!(
            "{}: the parsed value is out of range for \"{text}\"",
            name.to_ascii_uppercase()
        ))
    };
    let year = i32::try_from(year).map_err(|_| out_of_range())?;
    let date = match x.yday {
        Some(yd) if x.month.is_none() && x.day.is_none() => {
            NaiveDate::from_yo_opt(year, yd).ok_or_else(fail)?
        }
        _ => NaiveDate::from_ymd_opt(year, x.month.unwrap_or(1), x.day.unwrap_or(1))
            .ok_or_else(fail)?,
    };
    if !(1..=9999).contains(&date.year()) {
        return Err(out_of_range());
    }
    let hour = match (x.hour12, x.pm) {
        (Some(h), pm) => h % 12 + if pm == Some(true) { 12 } else { 0 },
        (None, Some(pm)) => {
            let h = x.hour.unwrap_or(0);
            if h > 12 {
                return Err(fail());
            }
            h % 12 + if pm { 12 } else { 0 }
        }
        (None, None) => x.hour.unwrap_or(0),
    };
    let time = NaiveTime::from_hms_nano_opt(hour, x.minute, x.second, x.nanos).ok_or_else(fail)?;
    Ok(Parsed {
        at: date.and_time(time),
        offset: x.offset,
        zone: x.zone,
        epoch: x.epoch,
    })
}

/// The format with its composite elements (`%D`, `%F`, `%T`, ...) written out.
fn expand(fmt: &str) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('%');
            break;
        };
        match e {
            'D' | 'x' => out.push_str("%m/%d/%y"),
            'F' => out.push_str("%Y-%m-%d"),
            'T' | 'X' => out.push_str("%H:%M:%S"),
            'R' => out.push_str("%H:%M"),
            'c' => out.push_str("%a %b %e %H:%M:%S %Y"),
            other => {
                out.push('%');
                out.push(other);
            }
        }
    }
    out
}

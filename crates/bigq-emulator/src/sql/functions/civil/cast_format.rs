//! `CAST(x AS STRING FORMAT '...')` for a DATE, DATETIME, TIME or TIMESTAMP, and
//! `CAST(s AS DATE FORMAT '...')` (and DATETIME, TIME, TIMESTAMP): the format model elements
//! of BigQuery's "format elements for CAST" (`YYYY`, `MON`, `HH24`, `FF3`, `TZH`, ...).

use chrono::{Datelike, NaiveDate, NaiveTime, Timelike};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;

use super::format::Civil;
use super::{
    DATE, DATETIME, MONTHS, STRING, TIME, V, Zone, check_ts, err, is, micros_of, timestamp_type,
    typed, weekday_name,
};

/// How a name element is written: `MON`, `Mon` or `mon`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Case {
    Upper,
    Title,
    Lower,
}

#[derive(Clone, PartialEq, Eq, Debug)]
enum El {
    Lit(String),
    Year(usize),
    RoundYear(usize),
    Month,
    MonthName(Case, bool),
    Day,
    DayOfYear,
    WeekDay,
    DayName(Case, bool),
    Hour12,
    Hour24,
    Minute,
    Second,
    SecondOfDay,
    Frac(usize),
    Meridian(bool, bool),
    TzHour,
    TzMinute,
}

impl El {
    fn is_date(&self) -> bool {
        matches!(
            self,
            El::Year(_)
                | El::RoundYear(_)
                | El::Month
                | El::MonthName(..)
                | El::Day
                | El::DayOfYear
                | El::WeekDay
                | El::DayName(..)
        )
    }

    fn is_time(&self) -> bool {
        matches!(
            self,
            El::Hour12
                | El::Hour24
                | El::Minute
                | El::Second
                | El::SecondOfDay
                | El::Frac(_)
                | El::Meridian(..)
        )
    }

    fn is_zone(&self) -> bool {
        matches!(self, El::TzHour | El::TzMinute)
    }
}

fn case_of(s: &str) -> Case {
    if s.chars().all(|c| !c.is_ascii_lowercase()) {
        Case::Upper
    } else if s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
        Case::Title
    } else {
        Case::Lower
    }
}

fn cased(s: &str, c: Case) -> String {
    match c {
        Case::Upper => s.to_ascii_uppercase(),
        Case::Lower => s.to_ascii_lowercase(),
        Case::Title => s.to_string(),
    }
}

/// The format's elements, or an error naming the first it does not know.
fn elements(fmt: &str) -> DfResult<Vec<El>> {
    let b = fmt.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i < b.len() {
        if b[i] == b'"' {
            let mut lit = String::new();
            i += 1;
            loop {
                match b.get(i) {
                    None => {
                        return Err(err(format!("Unterminated quoted text in format \"{fmt}\"")));
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if matches!(b.get(i + 1), Some(b'"') | Some(b'\\')) => {
                        lit.push(b[i + 1] as char);
                        i += 2;
                    }
                    Some(_) => {
                        let ch = fmt[i..].chars().next().unwrap_or(' ');
                        lit.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            out.push(El::Lit(lit));
            continue;
        }
        if b"-./,';: ".contains(&b[i]) {
            out.push(El::Lit((b[i] as char).to_string()));
            i += 1;
            continue;
        }
        const NAMES: &[&str] = &[
            "YYYY", "YYY", "YY", "Y", "RRRR", "RR", "MONTH", "MON", "MM", "DDD", "DD", "DAY", "DY",
            "D", "HH24", "HH12", "HH", "MI", "SSSSS", "SS", "FF9", "FF8", "FF7", "FF6", "FF5",
            "FF4", "FF3", "FF2", "FF1", "A.M.", "P.M.", "AM", "PM", "TZH", "TZM",
        ];
        for name in NAMES {
            let n = name.len();
            if b.len() >= i + n && fmt[i..i + n].eq_ignore_ascii_case(name) {
                let written = &fmt[i..i + n];
                let c = case_of(written);
                out.push(match *name {
                    "YYYY" | "YYY" | "YY" | "Y" => El::Year(n),
                    "RRRR" | "RR" => El::RoundYear(n),
                    "MONTH" => El::MonthName(c, true),
                    "MON" => El::MonthName(c, false),
                    "MM" => El::Month,
                    "DDD" => El::DayOfYear,
                    "DD" => El::Day,
                    "DAY" => El::DayName(c, true),
                    "DY" => El::DayName(c, false),
                    "D" => El::WeekDay,
                    "HH24" => El::Hour24,
                    "HH12" | "HH" => El::Hour12,
                    "MI" => El::Minute,
                    "SSSSS" => El::SecondOfDay,
                    "SS" => El::Second,
                    "A.M." | "P.M." => El::Meridian(true, c == Case::Lower),
                    "AM" | "PM" => El::Meridian(false, c == Case::Lower),
                    "TZH" => El::TzHour,
                    "TZM" => El::TzMinute,
                    ff => El::Frac(ff[2..].parse().unwrap_or(6)),
                });
                i += n;
                continue 'outer;
            }
        }
        return Err(err(format!(
            "Cannot find matching format element at \"{}\" in format \"{fmt}\"",
            &fmt[i..]
        )));
    }
    Ok(out)
}

fn kind_allows(kind: &str, e: &El) -> bool {
    match kind {
        "DATE" => !e.is_time() && !e.is_zone(),
        "TIME" => !e.is_date() && !e.is_zone(),
        "DATETIME" => !e.is_zone(),
        _ => true,
    }
}

fn type_error(kind: &str, e: &El, fmt: &str) -> datafusion::common::DataFusionError {
    err(format!(
        "Format element {e:?} in \"{fmt}\" is not allowed for type {kind}"
    ))
}

/// `value` (of type `kind`) as text in the format model `fmt`.
fn format_model(kind: &str, fmt: &str, value: &Civil) -> DfResult<String> {
    let d = value.at.date();
    let t = value.at.time();
    let mut out = String::new();
    for e in elements(fmt)? {
        if !kind_allows(kind, &e) {
            return Err(type_error(kind, &e, fmt));
        }
        let h12 = if t.hour().is_multiple_of(12) {
            12
        } else {
            t.hour() % 12
        };
        match &e {
            El::Lit(s) => out.push_str(s),
            El::Year(n) | El::RoundYear(n) => {
                let y = format!("{:04}", d.year());
                out.push_str(&y[y.len() - n..]);
            }
            El::Month => out.push_str(&format!("{:02}", d.month())),
            El::MonthName(c, full) => {
                let m = MONTHS[d.month0() as usize];
                out.push_str(&cased(if *full { m } else { &m[..3] }, *c));
            }
            El::Day => out.push_str(&format!("{:02}", d.day())),
            El::DayOfYear => out.push_str(&format!("{:03}", d.ordinal())),
            El::WeekDay => out.push_str(&d.weekday().number_from_sunday().to_string()),
            El::DayName(c, full) => {
                let n = weekday_name(d.weekday());
                out.push_str(&cased(if *full { n } else { &n[..3] }, *c));
            }
            El::Hour12 => out.push_str(&format!("{h12:02}")),
            El::Hour24 => out.push_str(&format!("{:02}", t.hour())),
            El::Minute => out.push_str(&format!("{:02}", t.minute())),
            El::Second => out.push_str(&format!("{:02}", t.second())),
            El::SecondOfDay => out.push_str(&format!("{:05}", t.num_seconds_from_midnight())),
            El::Frac(n) => out.push_str(&format!("{:09}", t.nanosecond())[..*n]),
            El::Meridian(dots, lower) => {
                let s = match (t.hour() < 12, dots) {
                    (true, true) => "A.M.",
                    (false, true) => "P.M.",
                    (true, false) => "AM",
                    (false, false) => "PM",
                };
                out.push_str(&if *lower {
                    s.to_ascii_lowercase()
                } else {
                    s.to_string()
                });
            }
            El::TzHour => {
                let o = value.offset;
                out.push(if o < 0 { '-' } else { '+' });
                out.push_str(&format!("{:02}", o.abs() / 3600));
            }
            El::TzMinute => out.push_str(&format!("{:02}", value.offset.abs() / 60 % 60)),
        }
    }
    Ok(out)
}

/// `bigq_cast_format(x, format, zone, safe)`: `CAST(x AS STRING FORMAT format AT TIME ZONE
/// zone)` (`zone` empty for none), NULL on an error when `safe`.
pub(crate) fn to_string_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = args.len() == 4
        && (is(&args[0], &DATE)
            || is(&args[0], &DATETIME)
            || is(&args[0], &TIME)
            || matches!(args[0], DataType::Timestamp(_, Some(_))))
        && is(&args[1], &STRING)
        && is(&args[2], &STRING);
    if !ok && args.len() == 4 {
        return Err(super::plan_err(format!(
            "CAST of {} AS STRING with FORMAT is not supported",
            super::bq_type(&args[0])
        )));
    }
    typed(ok, STRING, name, args)
}

pub(crate) fn to_string(_: &str, args: &[V]) -> DfResult<V> {
    let (V::Str(fmt), V::Str(zone), V::Bool(safe)) = (&args[1], &args[2], &args[3]) else {
        return Err(err("CAST FORMAT: unexpected arguments"));
    };
    let run = || -> DfResult<V> {
        let (kind, civil) = match &args[0] {
            V::Date(d) => (
                "DATE",
                Civil {
                    at: d.and_time(NaiveTime::MIN),
                    offset: 0,
                },
            ),
            V::Datetime(dt) => ("DATETIME", Civil { at: *dt, offset: 0 }),
            V::Time(t) => (
                "TIME",
                Civil {
                    at: NaiveDate::default().and_time(*t),
                    offset: 0,
                },
            ),
            V::Ts(m) => {
                let z = if zone.is_empty() {
                    Zone::utc()
                } else {
                    Zone::parse(zone)?
                };
                (
                    "TIMESTAMP",
                    Civil {
                        at: z.local(*m)?,
                        offset: z.offset_at(*m),
                    },
                )
            }
            other => {
                return Err(err(format!(
                    "CAST of {} AS STRING with FORMAT is not supported",
                    other.type_name()
                )));
            }
        };
        Ok(V::Str(format_model(kind, fmt, &civil)?))
    };
    match run() {
        Err(_) if *safe => Ok(V::Null),
        r => r,
    }
}

/// Today's date in UTC, for the fields a parsed format leaves out.
fn today() -> NaiveDate {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    super::date_of_days((secs / 86_400) as i32).unwrap_or_default()
}

/// `bigq_cast_parse_date(s, format, zone, safe)` and the DATETIME, TIME and TIMESTAMP ones.
pub(crate) fn parse_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ret = match name {
        "bigq_cast_parse_date" => DATE,
        "bigq_cast_parse_datetime" => DATETIME,
        "bigq_cast_parse_time" => TIME,
        _ => timestamp_type(),
    };
    let ok = args.len() == 4 && args[..3].iter().all(|a| is(a, &STRING));
    typed(ok, ret, name, args)
}

pub(crate) fn parse(name: &str, args: &[V]) -> DfResult<V> {
    let (V::Str(text), V::Str(fmt), V::Str(zone), V::Bool(safe)) =
        (&args[0], &args[1], &args[2], &args[3])
    else {
        return Err(err("CAST FORMAT: unexpected arguments"));
    };
    let kind = match name {
        "bigq_cast_parse_date" => "DATE",
        "bigq_cast_parse_datetime" => "DATETIME",
        "bigq_cast_parse_time" => "TIME",
        _ => "TIMESTAMP",
    };
    match parse_model(kind, text, fmt, zone) {
        Err(_) if *safe => Ok(V::Null),
        r => r,
    }
}

fn parse_model(kind: &str, text: &str, fmt: &str, zone: &str) -> DfResult<V> {
    let fail = |why: &str| {
        err(format!(
            "Cannot parse \"{text}\" as {kind} with format \"{fmt}\": {why}"
        ))
    };
    let els = elements(fmt)?;
    let s = text.as_bytes();
    let mut pos = 0;
    let today = today();
    let (mut year, mut month, mut day, mut yday) = (None, None, None, None);
    let (mut h12, mut h24, mut minute, mut second, mut sod, mut nanos) =
        (None, None, None, None, None, None);
    let (mut pm, mut tzh, mut tzm): (Option<bool>, Option<i32>, Option<i32>) = (None, None, None);
    let number = |pos: &mut usize, max: usize| -> Option<i64> {
        let start = *pos;
        while *pos < s.len() && *pos - start < max && s[*pos].is_ascii_digit() {
            *pos += 1;
        }
        std::str::from_utf8(&s[start..*pos]).ok()?.parse().ok()
    };
    fn set<T>(
        slot: &mut Option<T>,
        v: T,
        fail: &dyn Fn(&str) -> datafusion::common::DataFusionError,
    ) -> DfResult<()> {
        if slot.is_some() {
            return Err(fail("a field is given twice"));
        }
        *slot = Some(v);
        Ok(())
    }
    for e in &els {
        if !kind_allows(kind, e) {
            return Err(type_error(kind, e, fmt));
        }
        match e {
            El::Lit(l) if l == " " => {
                while pos < s.len() && s[pos].is_ascii_whitespace() {
                    pos += 1;
                }
            }
            El::Lit(l) => {
                let lb = l.as_bytes();
                if s.len() < pos + lb.len() || !s[pos..pos + lb.len()].eq_ignore_ascii_case(lb) {
                    return Err(fail("the text does not match the format"));
                }
                pos += lb.len();
            }
            El::Year(n) => {
                let v = number(&mut pos, *n).ok_or_else(|| fail("no year"))?;
                let base = today.year() as i64;
                let y = match n {
                    4 => v,
                    3 => base / 1000 * 1000 + v,
                    2 => base / 100 * 100 + v,
                    _ => base / 10 * 10 + v,
                };
                set(&mut year, y, &fail)?;
            }
            El::RoundYear(n) => {
                let v = number(&mut pos, *n).ok_or_else(|| fail("no year"))?;
                let y = if *n == 4 {
                    v
                } else {
                    let century = today.year() as i64 / 100 * 100;
                    let last2 = today.year() as i64 % 100;
                    match (v < 50, last2 < 50) {
                        (true, true) | (false, false) => century + v,
                        (true, false) => century + 100 + v,
                        (false, true) => century - 100 + v,
                    }
                };
                set(&mut year, y, &fail)?;
            }
            El::Month => {
                let v = number(&mut pos, 2).ok_or_else(|| fail("no month"))?;
                set(&mut month, v as u32, &fail)?;
            }
            El::MonthName(_, full) => {
                let rest = &s[pos..];
                let found = MONTHS.iter().position(|m| {
                    let m = if *full { *m } else { &m[..3] };
                    rest.len() >= m.len() && rest[..m.len()].eq_ignore_ascii_case(m.as_bytes())
                });
                let i = found.ok_or_else(|| fail("no month name"))?;
                pos += if *full { MONTHS[i].len() } else { 3 };
                set(&mut month, i as u32 + 1, &fail)?;
            }
            El::Day => {
                let v = number(&mut pos, 2).ok_or_else(|| fail("no day"))?;
                set(&mut day, v as u32, &fail)?;
            }
            El::DayOfYear => {
                let v = number(&mut pos, 3).ok_or_else(|| fail("no day of year"))?;
                set(&mut yday, v as u32, &fail)?;
            }
            El::WeekDay | El::DayName(..) => {
                return Err(err(format!(
                    "CAST AS {kind} FORMAT: the day of week elements are not supported for parsing"
                )));
            }
            El::Hour12 => {
                let v = number(&mut pos, 2).ok_or_else(|| fail("no hour"))?;
                if !(1..=12).contains(&v) {
                    return Err(fail("the hour is out of range"));
                }
                set(&mut h12, v as u32, &fail)?;
            }
            El::Hour24 => {
                let v = number(&mut pos, 2).ok_or_else(|| fail("no hour"))?;
                set(&mut h24, v as u32, &fail)?;
            }
            El::Minute => {
                let v = number(&mut pos, 2).ok_or_else(|| fail("no minute"))?;
                set(&mut minute, v as u32, &fail)?;
            }
            El::Second => {
                let v = number(&mut pos, 2).ok_or_else(|| fail("no second"))?;
                set(&mut second, v as u32, &fail)?;
            }
            El::SecondOfDay => {
                let v = number(&mut pos, 5).ok_or_else(|| fail("no seconds of the day"))?;
                set(&mut sod, v as u32, &fail)?;
            }
            El::Frac(n) => {
                let start = pos;
                let v = number(&mut pos, *n).ok_or_else(|| fail("no fraction"))?;
                let digits = pos - start;
                set(
                    &mut nanos,
                    (v * 10i64.pow(9 - digits as u32)) as u32 / 1000 * 1000,
                    &fail,
                )?;
            }
            El::Meridian(dots, _) => {
                let want: &[&str] = if *dots {
                    &["A.M.", "P.M."]
                } else {
                    &["AM", "PM"]
                };
                let rest = &s[pos..];
                let i = want
                    .iter()
                    .position(|w| {
                        rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w.as_bytes())
                    })
                    .ok_or_else(|| fail("no A.M. or P.M."))?;
                pos += want[i].len();
                set(&mut pm, i == 1, &fail)?;
            }
            El::TzHour => {
                let neg = match s.get(pos) {
                    Some(b'+') => false,
                    Some(b'-') => true,
                    _ => return Err(fail("no time zone hour")),
                };
                pos += 1;
                let v = number(&mut pos, 2).ok_or_else(|| fail("no time zone hour"))? as i32;
                set(&mut tzh, if neg { -v } else { v }, &fail)?;
            }
            El::TzMinute => {
                let v = number(&mut pos, 2).ok_or_else(|| fail("no time zone minute"))? as i32;
                set(&mut tzm, v, &fail)?;
            }
        }
    }
    if pos != s.len() {
        return Err(fail("text is left after the format"));
    }
    if yday.is_some() && (month.is_some() || day.is_some()) {
        return Err(fail("DDD cannot be combined with MM or DD"));
    }
    if sod.is_some() && (h12.is_some() || h24.is_some() || minute.is_some() || second.is_some()) {
        return Err(fail("SSSSS cannot be combined with HH, MI or SS"));
    }
    if h24.is_some() && (pm.is_some() || h12.is_some()) {
        return Err(fail("HH24 cannot be combined with HH12 or A.M./P.M."));
    }
    if h12.is_some() != pm.is_some() {
        return Err(fail("HH12 and A.M./P.M. go together"));
    }
    let y = i32::try_from(year.unwrap_or(today.year() as i64)).map_err(|_| fail("bad year"))?;
    let date = match yday {
        Some(yd) => NaiveDate::from_yo_opt(y, yd),
        None => NaiveDate::from_ymd_opt(
            y,
            month.unwrap_or(if year.is_some() { 1 } else { today.month() }),
            day.unwrap_or(1),
        ),
    }
    .filter(|d| (1..=9999).contains(&d.year()))
    .ok_or_else(|| fail("not a valid date"))?;
    let hour = match (h12, pm, h24) {
        (Some(h), Some(p), _) => h % 12 + if p { 12 } else { 0 },
        (_, _, Some(h)) => h,
        _ => 0,
    };
    let time = match sod {
        Some(x) => NaiveTime::from_num_seconds_from_midnight_opt(x, nanos.unwrap_or(0)),
        None => NaiveTime::from_hms_nano_opt(
            hour,
            minute.unwrap_or(0),
            second.unwrap_or(0),
            nanos.unwrap_or(0),
        ),
    }
    .ok_or_else(|| fail("not a valid time"))?;
    let at = date.and_time(time);
    Ok(match kind {
        "DATE" => V::Date(date),
        "DATETIME" => V::Datetime(at),
        "TIME" => V::Time(time),
        _ => {
            let m = match tzh {
                Some(h) => {
                    let mins = tzm.unwrap_or(0);
                    let off = h * 3600 + h.signum() * mins * 60;
                    micros_of(at) - off as i64 * 1_000_000
                }
                None => {
                    let z = if zone.is_empty() {
                        Zone::utc()
                    } else {
                        Zone::parse(zone)?
                    };
                    z.instant(at)
                }
            };
            V::Ts(check_ts("CAST", Some(m))?)
        }
    })
}

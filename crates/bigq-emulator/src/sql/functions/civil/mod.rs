//! What the DATE, DATETIME, TIME and TIMESTAMP functions share: their values as chrono's
//! civil types, time zones (IANA names and fixed offsets), date parts, and a scalar UDF that
//! runs a function row by row on those values.
//!
//! BigQuery's range is 0001-01-01 to 9999-12-31 for each type; Arrow's microsecond timestamps
//! cover it, so results past it are errors rather than overflows.

pub(crate) mod cast_format;
pub(crate) mod format;
pub(crate) mod literal;
pub(crate) mod ops;

use std::str::FromStr;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime,
    Offset, TimeZone, Timelike, Utc, Weekday,
};
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Float64Type, Int64Type, IntervalMonthDayNano, IntervalMonthDayNanoType,
    IntervalUnit, Time64MicrosecondType, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::udf::{arrays, result};
use crate::sql::types::UTC;

/// A value of one row, as the functions see it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum V {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Date(NaiveDate),
    Datetime(NaiveDateTime),
    Time(NaiveTime),
    /// Microseconds since the Unix epoch.
    Ts(i64),
    Iv(IntervalMonthDayNano),
}

impl V {
    /// BigQuery's name of the value's type, for error messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            V::Null => "NULL",
            V::Bool(_) => "BOOL",
            V::Int(_) => "INT64",
            V::Float(_) => "FLOAT64",
            V::Str(_) => "STRING",
            V::Date(_) => "DATE",
            V::Datetime(_) => "DATETIME",
            V::Time(_) => "TIME",
            V::Ts(_) => "TIMESTAMP",
            V::Iv(_) => "INTERVAL",
        }
    }
}

pub(crate) fn err(msg: impl Into<String>) -> DataFusionError {
    DataFusionError::Execution(msg.into())
}

pub(crate) fn plan_err(msg: impl Into<String>) -> DataFusionError {
    DataFusionError::Plan(msg.into())
}

pub(crate) const DATE: DataType = DataType::Date32;
pub(crate) const DATETIME: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);
pub(crate) const TIME: DataType = DataType::Time64(TimeUnit::Microsecond);
pub(crate) const STRING: DataType = DataType::Utf8;
pub(crate) const INT64: DataType = DataType::Int64;

pub(crate) fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
}

/// BigQuery's name of an Arrow type as the emulator uses it.
pub(crate) fn bq_type(t: &DataType) -> String {
    match t {
        DataType::Null => "NULL".into(),
        DataType::Boolean => "BOOL".into(),
        DataType::Int64 => "INT64".into(),
        DataType::Float64 => "FLOAT64".into(),
        DataType::Utf8 => "STRING".into(),
        DataType::Date32 => "DATE".into(),
        DataType::Timestamp(_, None) => "DATETIME".into(),
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP".into(),
        DataType::Time64(_) => "TIME".into(),
        DataType::Interval(_) => "INTERVAL".into(),
        other => other.to_string(),
    }
}

/// The error for argument types a function has no signature for.
pub(crate) fn no_signature(name: &str, args: &[DataType]) -> DataFusionError {
    plan_err(format!(
        "No matching signature for function {} for argument types: {}",
        name.to_ascii_uppercase(),
        args.iter().map(bq_type).collect::<Vec<_>>().join(", ")
    ))
}

/// The type a UDF's argument is read as: integers as INT64, strings as STRING, and each
/// temporal type at microseconds.
fn normal_type(t: &DataType) -> DataType {
    match t {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => INT64,
        DataType::Float16 | DataType::Float32 | DataType::Decimal128(..) => DataType::Float64,
        DataType::LargeUtf8 | DataType::Utf8View => STRING,
        DataType::Date64 => DATE,
        DataType::Timestamp(_, None) => DATETIME,
        DataType::Timestamp(_, Some(_)) => timestamp_type(),
        DataType::Time32(_) | DataType::Time64(_) => TIME,
        DataType::Interval(_) => DataType::Interval(IntervalUnit::MonthDayNano),
        other => other.clone(),
    }
}

fn get(a: &ArrayRef, i: usize) -> DfResult<V> {
    if a.is_null(i) {
        return Ok(V::Null);
    }
    Ok(match a.data_type() {
        DataType::Null => V::Null,
        DataType::Boolean => V::Bool(a.as_boolean().value(i)),
        DataType::Int64 => V::Int(a.as_primitive::<Int64Type>().value(i)),
        DataType::Float64 => V::Float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => V::Str(a.as_string::<i32>().value(i).to_string()),
        DataType::Date32 => V::Date(date_of_days(a.as_primitive::<Date32Type>().value(i))?),
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            let m = a.as_primitive::<TimestampMicrosecondType>().value(i);
            if tz.is_some() {
                V::Ts(m)
            } else {
                V::Datetime(datetime_of_micros(m)?)
            }
        }
        DataType::Time64(TimeUnit::Microsecond) => V::Time(time_of_micros(
            a.as_primitive::<Time64MicrosecondType>().value(i),
        )?),
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            V::Iv(a.as_primitive::<IntervalMonthDayNanoType>().value(i))
        }
        other => return Err(err(format!("unexpected argument type {other}"))),
    })
}

fn scalar(v: V, t: &DataType) -> DfResult<ScalarValue> {
    Ok(match v {
        V::Null => ScalarValue::try_from(t)?,
        V::Bool(b) => ScalarValue::Boolean(Some(b)),
        V::Int(n) => ScalarValue::Int64(Some(n)),
        V::Float(x) => ScalarValue::Float64(Some(x)),
        V::Str(s) => ScalarValue::Utf8(Some(s)),
        V::Date(d) => ScalarValue::Date32(Some(days_of_date(d))),
        V::Datetime(d) => ScalarValue::TimestampMicrosecond(Some(micros_of(d)), None),
        V::Ts(m) => ScalarValue::TimestampMicrosecond(Some(m), Some(UTC.into())),
        V::Time(t) => ScalarValue::Time64Microsecond(Some(micros_of_time(t))),
        V::Iv(iv) => ScalarValue::IntervalMonthDayNano(Some(iv)),
    })
}

/// How a row-by-row function types its (normalised) arguments: its result type, or the
/// error for arguments it has no signature for.
pub(crate) type Typer = fn(&str, &[DataType]) -> DfResult<DataType>;
/// A row-by-row function: its name and non-NULL arguments to its result.
pub(crate) type Eval = fn(&str, &[V]) -> DfResult<V>;
/// The types a function's arguments are cast to, from their own.
pub(crate) type Coerce = fn(&str, &[DataType]) -> Vec<DataType>;

/// A scalar UDF made of a [`Typer`] and an [`Eval`]; a NULL argument makes a NULL result.
/// Two are the same UDF when their names are (each name is made once).
#[derive(Debug)]
pub(crate) struct RowUdf {
    name: &'static str,
    signature: Signature,
    typer: Typer,
    eval: Eval,
    /// The types arguments are cast to, when not their own (a string literal for a TIMESTAMP).
    coerce: Option<Coerce>,
}

impl PartialEq for RowUdf {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for RowUdf {}

impl std::hash::Hash for RowUdf {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl RowUdf {
    pub(crate) fn make(name: &'static str, typer: Typer, eval: Eval) -> ScalarUDF {
        ScalarUDF::new_from_impl(RowUdf {
            name,
            signature: Signature::user_defined(Volatility::Immutable),
            typer,
            eval,
            coerce: None,
        })
    }

    /// A UDF whose arguments `coerce` types before `typer` sees them.
    pub(crate) fn coerced(
        name: &'static str,
        typer: Typer,
        eval: Eval,
        coerce: Coerce,
    ) -> ScalarUDF {
        ScalarUDF::new_from_impl(RowUdf {
            name,
            signature: Signature::user_defined(Volatility::Immutable),
            typer,
            eval,
            coerce: Some(coerce),
        })
    }
}

impl ScalarUDFImpl for RowUdf {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        let mut args: Vec<DataType> = args.iter().map(normal_type).collect();
        if let Some(coerce) = self.coerce {
            args = coerce(self.name, &args);
        }
        (self.typer)(self.name, &args)?;
        Ok(args)
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        let args: Vec<DataType> = args.iter().map(normal_type).collect();
        (self.typer)(self.name, &args)
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let args = &call.args;
        let ret = call.return_field.data_type().clone();
        let (a, n) = arrays(args)?;
        let mut out = Vec::with_capacity(n);
        let mut row = Vec::with_capacity(a.len());
        for i in 0..n {
            row.clear();
            for col in &a {
                row.push(get(col, i)?);
            }
            let v = if row.contains(&V::Null) {
                V::Null
            } else {
                (self.eval)(self.name, &row)?
            };
            out.push(scalar(v, &ret)?);
        }
        let out: ArrayRef = if out.is_empty() {
            datafusion::arrow::array::new_empty_array(&ret)
        } else {
            ScalarValue::iter_to_array(out)?
        };
        let out = if out.data_type() != &ret {
            datafusion::arrow::compute::cast(&out, &ret)?
        } else {
            out
        };
        result(out, args)
    }
}

/// A type typer's shorthand: `Ok(ret)` when `ok`, else the no-signature error.
pub(crate) fn typed(ok: bool, ret: DataType, name: &str, args: &[DataType]) -> DfResult<DataType> {
    if ok {
        Ok(ret)
    } else {
        Err(no_signature(name, args))
    }
}

/// Whether `t` is `want` or NULL (a NULL literal fits any argument).
pub(crate) fn is(t: &DataType, want: &DataType) -> bool {
    t == want || *t == DataType::Null
}

pub(crate) fn is_ts(t: &DataType) -> bool {
    matches!(t, DataType::Timestamp(_, Some(_)) | DataType::Null)
}

// -- the range and the conversions --------------------------------------------------------

pub(crate) fn min_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(1, 1, 1).unwrap_or_default()
}

pub(crate) fn max_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(9999, 12, 31).unwrap_or_default()
}

pub(crate) fn min_micros() -> i64 {
    micros_of(min_date().and_time(NaiveTime::MIN))
}

pub(crate) fn max_micros() -> i64 {
    micros_of(max_date().and_time(NaiveTime::MIN)) + 86_400_000_000 - 1
}

pub(crate) fn in_range(d: NaiveDate) -> bool {
    (1..=9999).contains(&d.year())
}

/// `d` when within BigQuery's range, else an error naming `name`.
pub(crate) fn check_date(name: &str, d: Option<NaiveDate>) -> DfResult<NaiveDate> {
    match d {
        Some(d) if in_range(d) => Ok(d),
        _ => Err(err(format!(
            "{}: DATE value out of range",
            name.to_ascii_uppercase()
        ))),
    }
}

pub(crate) fn check_datetime(name: &str, d: Option<NaiveDateTime>) -> DfResult<NaiveDateTime> {
    match d {
        Some(d) if in_range(d.date()) => Ok(d),
        _ => Err(err(format!(
            "{}: DATETIME value out of range",
            name.to_ascii_uppercase()
        ))),
    }
}

pub(crate) fn check_ts(name: &str, m: Option<i64>) -> DfResult<i64> {
    match m {
        Some(m) if (min_micros()..=max_micros()).contains(&m) => Ok(m),
        _ => Err(err(format!(
            "{}: TIMESTAMP value out of range",
            name.to_ascii_uppercase()
        ))),
    }
}

fn epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()
}

pub(crate) fn date_of_days(days: i32) -> DfResult<NaiveDate> {
    epoch()
        .checked_add_signed(Duration::days(days as i64))
        .ok_or_else(|| err("DATE value out of range"))
}

pub(crate) fn days_of_date(d: NaiveDate) -> i32 {
    (d - epoch()).num_days() as i32
}

pub(crate) fn datetime_of_micros(m: i64) -> DfResult<NaiveDateTime> {
    DateTime::from_timestamp_micros(m)
        .map(|d| d.naive_utc())
        .ok_or_else(|| err("DATETIME value out of range"))
}

pub(crate) fn micros_of(d: NaiveDateTime) -> i64 {
    d.and_utc().timestamp_micros()
}

pub(crate) fn time_of_micros(m: i64) -> DfResult<NaiveTime> {
    let m = m.rem_euclid(86_400_000_000);
    NaiveTime::from_num_seconds_from_midnight_opt(
        (m / 1_000_000) as u32,
        (m % 1_000_000) as u32 * 1000,
    )
    .ok_or_else(|| err("TIME value out of range"))
}

pub(crate) fn micros_of_time(t: NaiveTime) -> i64 {
    t.num_seconds_from_midnight() as i64 * 1_000_000 + (t.nanosecond() / 1000) as i64
}

// -- time zones -----------------------------------------------------------------------------

/// A time zone as BigQuery names one: an IANA name, or an offset from UTC.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Zone {
    Fixed(FixedOffset),
    Named(chrono_tz::Tz),
}

/// `+HH[[:]MM]` (with or without `UTC` before it), as seconds east of UTC.
fn offset_seconds(s: &str) -> Option<i32> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() > 2 => rest.split_at(rest.len() - 2),
        None => (rest, "0"),
    };
    if h.is_empty()
        || h.len() > 2
        || m.len() > 2
        || !h.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
    if h > 14 || m > 59 || (h == 14 && m > 0) {
        return None;
    }
    Some(sign * (h * 3600 + m * 60))
}

impl Zone {
    pub(crate) fn utc() -> Zone {
        Zone::Fixed(Utc.fix())
    }

    /// The zone `s` names, or an error naming it.
    pub(crate) fn parse(s: &str) -> DfResult<Zone> {
        let t = s.trim();
        let bad = || err(format!("Invalid time zone: {s}"));
        if t.eq_ignore_ascii_case("UTC") || t.eq_ignore_ascii_case("Z") {
            return Ok(Zone::utc());
        }
        let offset = t
            .strip_prefix("UTC")
            .or_else(|| t.strip_prefix("utc"))
            .unwrap_or(t);
        if offset.starts_with(['+', '-']) {
            let secs = offset_seconds(offset).ok_or_else(bad)?;
            return FixedOffset::east_opt(secs).map(Zone::Fixed).ok_or_else(bad);
        }
        chrono_tz::Tz::from_str(t)
            .map(Zone::Named)
            .map_err(|_| bad())
    }

    /// Seconds east of UTC at the instant `micros`.
    pub(crate) fn offset_at(&self, micros: i64) -> i32 {
        match self {
            Zone::Fixed(f) => f.local_minus_utc(),
            Zone::Named(tz) => match DateTime::from_timestamp_micros(micros) {
                Some(d) => tz
                    .offset_from_utc_datetime(&d.naive_utc())
                    .fix()
                    .local_minus_utc(),
                None => 0,
            },
        }
    }

    /// The civil date and time at the instant `micros`.
    pub(crate) fn local(&self, micros: i64) -> DfResult<NaiveDateTime> {
        datetime_of_micros(micros + self.offset_at(micros) as i64 * 1_000_000)
    }

    /// The instant of the civil date and time `d`: the earlier of two in a repeated hour,
    /// and in a skipped hour the one the offset before the change gives (as BigQuery does).
    pub(crate) fn instant(&self, d: NaiveDateTime) -> i64 {
        let local = micros_of(d);
        match self {
            Zone::Fixed(f) => local - f.local_minus_utc() as i64 * 1_000_000,
            Zone::Named(tz) => match tz.offset_from_local_datetime(&d) {
                LocalResult::Single(o) => local - o.fix().local_minus_utc() as i64 * 1_000_000,
                LocalResult::Ambiguous(a, b) => {
                    let a = local - a.fix().local_minus_utc() as i64 * 1_000_000;
                    let b = local - b.fix().local_minus_utc() as i64 * 1_000_000;
                    a.min(b)
                }
                LocalResult::None => {
                    let before = local - 86_400_000_000;
                    local - self.offset_at(before) as i64 * 1_000_000
                }
            },
        }
    }
}

/// The zone a string argument names (UTC when there is none).
pub(crate) fn zone_arg(args: &[V], i: usize) -> DfResult<Zone> {
    match args.get(i) {
        Some(V::Str(s)) => Zone::parse(s),
        _ => Ok(Zone::utc()),
    }
}

// -- date parts -------------------------------------------------------------------------------

/// A date or time part, as `_TRUNC`, `_DIFF`, `_ADD`, `EXTRACT` and `LAST_DAY` name one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    DayOfWeek,
    DayOfYear,
    /// Weeks starting on the day given (`WEEK` is `WEEK(SUNDAY)`).
    Week(Weekday),
    IsoWeek,
    Month,
    Quarter,
    Year,
    IsoYear,
    Date,
    Time,
    Datetime,
}

impl Part {
    pub(crate) fn parse(s: &str) -> Option<Part> {
        let s = s.trim().to_ascii_uppercase();
        if let Some(rest) = s.strip_prefix("WEEK(").and_then(|r| r.strip_suffix(')')) {
            let wd = match rest.trim() {
                "SUNDAY" => Weekday::Sun,
                "MONDAY" => Weekday::Mon,
                "TUESDAY" => Weekday::Tue,
                "WEDNESDAY" => Weekday::Wed,
                "THURSDAY" => Weekday::Thu,
                "FRIDAY" => Weekday::Fri,
                "SATURDAY" => Weekday::Sat,
                _ => return None,
            };
            return Some(Part::Week(wd));
        }
        Some(match s.as_str() {
            "MICROSECOND" => Part::Microsecond,
            "MILLISECOND" => Part::Millisecond,
            "SECOND" => Part::Second,
            "MINUTE" => Part::Minute,
            "HOUR" => Part::Hour,
            "DAY" => Part::Day,
            "DAYOFWEEK" => Part::DayOfWeek,
            "DAYOFYEAR" => Part::DayOfYear,
            "WEEK" => Part::Week(Weekday::Sun),
            "ISOWEEK" => Part::IsoWeek,
            "MONTH" => Part::Month,
            "QUARTER" => Part::Quarter,
            "YEAR" => Part::Year,
            "ISOYEAR" => Part::IsoYear,
            "DATE" => Part::Date,
            "TIME" => Part::Time,
            "DATETIME" => Part::Datetime,
            _ => return None,
        })
    }

    /// Microseconds in a part of fixed length shorter than a day.
    pub(crate) fn micros(self) -> Option<i64> {
        Some(match self {
            Part::Microsecond => 1,
            Part::Millisecond => 1_000,
            Part::Second => 1_000_000,
            Part::Minute => 60_000_000,
            Part::Hour => 3_600_000_000,
            _ => return None,
        })
    }

    pub(crate) fn is_time_part(self) -> bool {
        self.micros().is_some()
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Week(Weekday::Sun) => write!(f, "WEEK"),
            Part::Week(wd) => write!(f, "WEEK({})", weekday_name(*wd).to_ascii_uppercase()),
            other => write!(f, "{}", format!("{other:?}").to_ascii_uppercase()),
        }
    }
}

/// The part a string argument names, or an error naming the function.
pub(crate) fn part_arg(name: &str, v: &V) -> DfResult<Part> {
    let V::Str(s) = v else {
        return Err(err(format!("{name}: the date part must be a name")));
    };
    Part::parse(s).ok_or_else(|| {
        err(format!(
            "{}: unknown date part {s}",
            name.to_ascii_uppercase()
        ))
    })
}

pub(crate) fn unsupported_part(name: &str, part: Part, what: &str) -> DataFusionError {
    err(format!(
        "{} does not support the {part} date part{what}",
        name.to_ascii_uppercase()
    ))
}

pub(crate) fn weekday_name(wd: Weekday) -> &'static str {
    match wd {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The first day of the week (starting on `start`) that holds `d`.
pub(crate) fn week_start(d: NaiveDate, start: Weekday) -> Option<NaiveDate> {
    let back = (d.weekday().num_days_from_sunday() + 7 - start.num_days_from_sunday()) % 7;
    d.checked_sub_signed(Duration::days(back as i64))
}

/// The Monday that starts ISO year `y`'s first week.
pub(crate) fn iso_year_start(y: i32) -> Option<NaiveDate> {
    NaiveDate::from_isoywd_opt(y, 1, Weekday::Mon)
}

/// `d` truncated to the start of `part` (a part of a day or longer).
pub(crate) fn trunc_date(d: NaiveDate, part: Part) -> Option<NaiveDate> {
    match part {
        Part::Day => Some(d),
        Part::Week(wd) => week_start(d, wd),
        Part::IsoWeek => week_start(d, Weekday::Mon),
        Part::Month => d.with_day(1),
        Part::Quarter => NaiveDate::from_ymd_opt(d.year(), (d.month() - 1) / 3 * 3 + 1, 1),
        Part::Year => NaiveDate::from_ymd_opt(d.year(), 1, 1),
        Part::IsoYear => iso_year_start(d.iso_week().year()),
        _ => None,
    }
}

/// `t` truncated to the start of a part shorter than a day.
pub(crate) fn trunc_time(t: NaiveTime, part: Part) -> Option<NaiveTime> {
    let unit = part.micros()?;
    let m = micros_of_time(t);
    time_of_micros(m - m % unit).ok()
}

/// `d` moved by `n` months, the day kept or made the month's last (as BigQuery does).
pub(crate) fn add_months(d: NaiveDate, n: i64) -> Option<NaiveDate> {
    let total = d.year() as i64 * 12 + d.month0() as i64 + n;
    let (y, m) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
    let y = i32::try_from(y).ok()?;
    let last = last_of_month(y, m)?;
    NaiveDate::from_ymd_opt(y, m, d.day().min(last.day()))
}

pub(crate) fn last_of_month(y: i32, m: u32) -> Option<NaiveDate> {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    NaiveDate::from_ymd_opt(ny, nm, 1)?.pred_opt()
}

/// Week number of `d` in its year, weeks starting on `start` (days before the first such
/// day are week 0), as `%U`, `%W` and `EXTRACT(WEEK)` count.
pub(crate) fn week_of_year(d: NaiveDate, start: Weekday) -> i64 {
    let yday = d.ordinal0() as i64;
    let since =
        ((d.weekday().num_days_from_sunday() + 7 - start.num_days_from_sunday()) % 7) as i64;
    (yday + 7 - since) / 7
}

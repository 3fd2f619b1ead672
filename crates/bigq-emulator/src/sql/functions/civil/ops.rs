//! The functions every temporal type has, on [`V`]s: `_TRUNC`, `_ADD`, `_SUB`, `_DIFF`,
//! `EXTRACT`, `LAST_DAY`, `FORMAT_` and `PARSE_`, and the types' constructors.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Weekday};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;

use super::format::{Civil, Parsed, Target};
use super::{
    DATE, DATETIME, INT64, Part, STRING, TIME, V, Zone, add_months, check_date, check_datetime,
    check_ts, err, format, in_range, is, is_ts, iso_year_start, last_of_month, micros_of,
    micros_of_time, part_arg, time_of_micros, timestamp_type, trunc_date, trunc_time, typed,
    unsupported_part, week_of_year, week_start, zone_arg,
};

/// The BigQuery name of a function from its UDF name (`bigq_date_trunc` is DATE_TRUNC).
pub(crate) fn shown(name: &str) -> String {
    name.trim_start_matches("bigq_").to_ascii_uppercase()
}

/// The type a `_TRUNC`, `_ADD`, `_SUB` or `_DIFF` UDF works on, from its name's prefix.
fn family_type(name: &str) -> DataType {
    let n = name.trim_start_matches("bigq_");
    if n.starts_with("datetime") {
        DATETIME
    } else if n.starts_with("date") {
        DATE
    } else if n.starts_with("timestamp") {
        timestamp_type()
    } else {
        TIME
    }
}

fn is_family(name: &str, t: &DataType) -> bool {
    let want = family_type(name);
    if want.is_temporal() && matches!(want, DataType::Timestamp(_, Some(_))) {
        is_ts(t)
    } else {
        is(t, &want)
    }
}

/// A string where the function's own type is expected, read as that type (BigQuery coerces
/// a string literal so): the first argument, and the second of a `_DIFF`.
pub(crate) fn coerce_strings(name: &str, args: &[DataType]) -> Vec<DataType> {
    let n = if name.ends_with("_diff") { 2 } else { 1 };
    args.iter()
        .enumerate()
        .map(|(i, t)| {
            if i < n && *t == STRING {
                family_type(name)
            } else {
                t.clone()
            }
        })
        .collect()
}

// -- _TRUNC -------------------------------------------------------------------------------------

/// `bigq_x_trunc(x, part[, zone])`: DATE_TRUNC also takes a DATETIME or TIMESTAMP (as
/// BigQuery's DATE_TRUNC does), each the type it is given.
pub(crate) fn trunc_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok_x = is_family(name, &args[0])
        || (family_type(name) != TIME
            && (is(&args[0], &DATE) || is(&args[0], &DATETIME) || is_ts(&args[0])));
    let ok = (args.len() == 2 || (args.len() == 3 && is(&args[2], &STRING)))
        && ok_x
        && is(&args[1], &STRING);
    let ret = if args[0] == DataType::Null {
        family_type(name)
    } else {
        args[0].clone()
    };
    typed(ok, ret, &shown(name), args)
}

pub(crate) fn trunc(name: &str, args: &[V]) -> DfResult<V> {
    let part = part_arg(name, &args[1])?;
    let bad = || unsupported_part(name, part, &format!(" for {}", args[0].type_name()));
    let date_only = |d: NaiveDate| -> DfResult<NaiveDate> {
        let t = trunc_date(d, part).ok_or_else(bad)?;
        check_date(&shown(name), Some(t))
    };
    let civil = |dt: NaiveDateTime| -> DfResult<NaiveDateTime> {
        if part.is_time_part() {
            Ok(dt
                .date()
                .and_time(trunc_time(dt.time(), part).ok_or_else(bad)?))
        } else {
            Ok(date_only(dt.date())?.and_time(NaiveTime::MIN))
        }
    };
    if args.len() == 3 && !matches!(args[0], V::Ts(_)) {
        return Err(err(format!(
            "{}: a time zone is allowed only for a TIMESTAMP",
            shown(name)
        )));
    }
    Ok(match &args[0] {
        V::Date(d) => V::Date(date_only(*d)?),
        V::Datetime(dt) => V::Datetime(civil(*dt)?),
        V::Time(t) => V::Time(trunc_time(*t, part).ok_or_else(bad)?),
        V::Ts(m) => {
            let zone = zone_arg(args, 2)?;
            let local = civil(zone.local(*m)?)?;
            let out = if part.is_time_part() && part != Part::Hour {
                // Offsets are whole minutes: truncating the instant keeps the zone's rule.
                let unit = part.micros().unwrap_or(1);
                m - m.rem_euclid(unit)
            } else {
                zone.instant(local)
            };
            V::Ts(check_ts(&shown(name), Some(out))?)
        }
        other => return Err(err(format!("{}: {}", shown(name), other.type_name()))),
    })
}

// -- _ADD and _SUB ------------------------------------------------------------------------------

/// `bigq_x_add(x, n, part)` and `bigq_x_sub`.
pub(crate) fn add_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = args.len() == 3
        && is_family(name, &args[0])
        && is(&args[1], &INT64)
        && is(&args[2], &STRING);
    typed(ok, family_type(name), &shown(name), args)
}

pub(crate) fn add(name: &str, args: &[V]) -> DfResult<V> {
    let part = part_arg(name, &args[2])?;
    let V::Int(n) = args[1] else {
        return Err(err(format!("{}: the interval must be INT64", shown(name))));
    };
    let n = if name.ends_with("_sub") {
        n.checked_neg()
            .ok_or_else(|| err(format!("{}: overflow", shown(name))))?
    } else {
        n
    };
    let shown = shown(name);
    let bad = || unsupported_part(name, part, &format!(" for {}", args[0].type_name()));
    let range = || {
        err(format!(
            "{shown}: overflow, the result is outside BigQuery's range"
        ))
    };
    let move_date = |d: NaiveDate| -> DfResult<NaiveDate> {
        let r = match part {
            Part::Day => d.checked_add_signed(Duration::try_days(n).unwrap_or(Duration::MAX)),
            Part::Week(Weekday::Sun) => n
                .checked_mul(7)
                .and_then(|n| d.checked_add_signed(Duration::try_days(n)?)),
            Part::Month => add_months(d, n),
            Part::Quarter => n.checked_mul(3).and_then(|n| add_months(d, n)),
            Part::Year => n.checked_mul(12).and_then(|n| add_months(d, n)),
            _ => return Err(bad()),
        };
        match r {
            Some(d) if in_range(d) => Ok(d),
            _ => Err(range()),
        }
    };
    Ok(match &args[0] {
        V::Date(d) => V::Date(move_date(*d)?),
        V::Datetime(dt) => {
            if let Some(unit) = part.micros() {
                let m = n
                    .checked_mul(unit)
                    .and_then(|by| micros_of(*dt).checked_add(by))
                    .ok_or_else(range)?;
                let out = super::datetime_of_micros(m).map_err(|_| range())?;
                V::Datetime(check_datetime(&shown, Some(out)).map_err(|_| range())?)
            } else {
                V::Datetime(move_date(dt.date())?.and_time(dt.time()))
            }
        }
        V::Time(t) => {
            let unit = part.micros().ok_or_else(bad)?;
            let by = (n % (86_400_000_000 / unit)) * unit;
            V::Time(time_of_micros(micros_of_time(*t) + by)?)
        }
        V::Ts(m) => {
            let unit = match part {
                Part::Day => 86_400_000_000,
                p => p.micros().ok_or_else(bad)?,
            };
            let out = n.checked_mul(unit).and_then(|by| m.checked_add(by));
            V::Ts(check_ts(&shown, out).map_err(|_| range())?)
        }
        other => return Err(err(format!("{shown}: {}", other.type_name()))),
    })
}

// -- _DIFF --------------------------------------------------------------------------------------

pub(crate) fn diff_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = args.len() == 3
        && is_family(name, &args[0])
        && is_family(name, &args[1])
        && is(&args[2], &STRING);
    typed(ok, INT64, &shown(name), args)
}

/// Whole `part`s from `b` to `a` by the calendar (a week, month, ... boundary crossed is one).
fn date_diff(a: NaiveDate, b: NaiveDate, part: Part) -> Option<i64> {
    let q = |d: NaiveDate| d.year() as i64 * 4 + (d.month0() / 3) as i64;
    let m = |d: NaiveDate| d.year() as i64 * 12 + d.month0() as i64;
    Some(match part {
        Part::Day => (a - b).num_days(),
        Part::Week(wd) => (week_start(a, wd)? - week_start(b, wd)?).num_days() / 7,
        Part::IsoWeek => {
            (week_start(a, Weekday::Mon)? - week_start(b, Weekday::Mon)?).num_days() / 7
        }
        Part::Month => m(a) - m(b),
        Part::Quarter => q(a) - q(b),
        Part::Year => a.year() as i64 - b.year() as i64,
        Part::IsoYear => a.iso_week().year() as i64 - b.iso_week().year() as i64,
        _ => return None,
    })
}

pub(crate) fn diff(name: &str, args: &[V]) -> DfResult<V> {
    let part = part_arg(name, &args[2])?;
    let bad = || unsupported_part(name, part, &format!(" for {}", args[0].type_name()));
    let micros_diff = |a: i64, b: i64, unit: i64| (a - b) / unit;
    Ok(V::Int(match (&args[0], &args[1]) {
        (V::Date(a), V::Date(b)) => date_diff(*a, *b, part).ok_or_else(bad)?,
        (V::Datetime(a), V::Datetime(b)) => match part.micros() {
            Some(unit) => micros_diff(micros_of(*a), micros_of(*b), unit),
            None => date_diff(a.date(), b.date(), part).ok_or_else(bad)?,
        },
        (V::Time(a), V::Time(b)) => {
            let unit = part.micros().ok_or_else(bad)?;
            micros_diff(micros_of_time(*a), micros_of_time(*b), unit)
        }
        (V::Ts(a), V::Ts(b)) => {
            let unit = match part {
                Part::Day => 86_400_000_000,
                p => p.micros().ok_or_else(bad)?,
            };
            micros_diff(*a, *b, unit)
        }
        (a, b) => {
            return Err(err(format!(
                "{}: {} and {}",
                shown(name),
                a.type_name(),
                b.type_name()
            )));
        }
    }))
}

// -- EXTRACT ------------------------------------------------------------------------------------

/// `bigq_extract(x, part[, zone])`, for the parts that are numbers.
pub(crate) fn extract_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = (args.len() == 2 || (args.len() == 3 && is_ts(&args[0]) && is(&args[2], &STRING)))
        && is(&args[1], &STRING)
        && (args[0].is_temporal() || matches!(args[0], DataType::Interval(_) | DataType::Null));
    typed(ok, INT64, "EXTRACT", args)
        .map_err(|_| super::no_signature(name.trim_start_matches("bigq_"), args))
}

pub(crate) fn extract(name: &str, args: &[V]) -> DfResult<V> {
    let part = part_arg("EXTRACT", &args[1])?;
    let bad = || {
        err(format!(
            "EXTRACT from {} does not support the {part} date part",
            args[0].type_name()
        ))
    };
    let _ = name;
    if let V::Iv(iv) = &args[0] {
        let nanos = iv.nanoseconds;
        return Ok(V::Int(match part {
            Part::Year => (iv.months / 12) as i64,
            Part::Month => (iv.months % 12) as i64,
            Part::Day => iv.days as i64,
            Part::Hour => nanos / 3_600_000_000_000,
            Part::Minute => nanos / 60_000_000_000 % 60,
            Part::Second => nanos / 1_000_000_000 % 60,
            Part::Millisecond => nanos / 1_000_000 % 1000,
            Part::Microsecond => nanos / 1000 % 1_000_000,
            _ => return Err(bad()),
        }));
    }
    let (at, has_date, has_time) = match &args[0] {
        V::Date(d) => (d.and_time(NaiveTime::MIN), true, false),
        V::Datetime(dt) => (*dt, true, true),
        V::Time(t) => (NaiveDate::default().and_time(*t), false, true),
        V::Ts(m) => (zone_arg(args, 2)?.local(*m)?, true, true),
        _ => return Err(bad()),
    };
    let (d, t) = (at.date(), at.time());
    if (part.is_time_part() && !has_time) || (!part.is_time_part() && !has_date) {
        return Err(bad());
    }
    Ok(V::Int(match part {
        Part::Microsecond => (t.nanosecond() / 1000) as i64 % 1_000_000,
        Part::Millisecond => (t.nanosecond() / 1_000_000) as i64,
        Part::Second => t.second() as i64,
        Part::Minute => t.minute() as i64,
        Part::Hour => t.hour() as i64,
        Part::Day => d.day() as i64,
        Part::DayOfWeek => d.weekday().number_from_sunday() as i64,
        Part::DayOfYear => d.ordinal() as i64,
        Part::Week(wd) => week_of_year(d, wd),
        Part::IsoWeek => d.iso_week().week() as i64,
        Part::Month => d.month() as i64,
        Part::Quarter => (d.month0() / 3 + 1) as i64,
        Part::Year => d.year() as i64,
        Part::IsoYear => d.iso_week().year() as i64,
        Part::Date | Part::Time | Part::Datetime => return Err(bad()),
    }))
}

// -- LAST_DAY -----------------------------------------------------------------------------------

pub(crate) fn last_day_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let ok = args.len() == 2
        && (is(&args[0], &DATE) || is(&args[0], &DATETIME))
        && is(&args[1], &STRING);
    typed(ok, DATE, &shown(name), args)
}

pub(crate) fn last_day(name: &str, args: &[V]) -> DfResult<V> {
    let part = part_arg("LAST_DAY", &args[1])?;
    let d = match &args[0] {
        V::Date(d) => *d,
        V::Datetime(dt) => dt.date(),
        other => return Err(err(format!("LAST_DAY: {}", other.type_name()))),
    };
    let bad = || unsupported_part(name.trim_start_matches("bigq_"), part, "");
    let last = match part {
        Part::Month => last_of_month(d.year(), d.month()),
        Part::Quarter => last_of_month(d.year(), (d.month0() / 3) * 3 + 3),
        Part::Year => NaiveDate::from_ymd_opt(d.year(), 12, 31),
        Part::Week(wd) => week_start(d, wd).and_then(|s| s.checked_add_signed(Duration::days(6))),
        Part::IsoWeek => {
            week_start(d, Weekday::Mon).and_then(|s| s.checked_add_signed(Duration::days(6)))
        }
        Part::IsoYear => iso_year_start(d.iso_week().year() + 1).and_then(|s| s.pred_opt()),
        _ => return Err(bad()),
    };
    Ok(V::Date(check_date("LAST_DAY", last)?))
}

// -- FORMAT_ and PARSE_ -------------------------------------------------------------------------

fn format_target(name: &str) -> DataType {
    match name {
        "format_date" | "parse_date" => DATE,
        "format_datetime" | "parse_datetime" => DATETIME,
        "format_time" | "parse_time" => TIME,
        _ => timestamp_type(),
    }
}

pub(crate) fn format_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let target = format_target(name);
    let is_ts_fn = name == "format_timestamp";
    let x_ok = if is_ts_fn {
        let x = args.get(1).cloned().unwrap_or(DataType::Boolean);
        is_ts(&x) || x == STRING
    } else {
        args.len() > 1
            && (is(&args[1], &target)
                // FORMAT_DATE takes a DATETIME too, and FORMAT_DATETIME a DATE.
                || (target == DATE && is(&args[1], &DATETIME))
                || (target == DATETIME && is(&args[1], &DATE)))
    };
    let ok = (args.len() == 2 || (is_ts_fn && args.len() == 3 && is(&args[2], &STRING)))
        && is(&args[0], &STRING)
        && x_ok;
    typed(ok, STRING, &shown(name), args)
}

pub(crate) fn format_value(_name: &str, args: &[V]) -> DfResult<V> {
    let V::Str(fmt) = &args[0] else {
        return Err(err("the format must be a STRING"));
    };
    let civil = match &args[1] {
        V::Date(d) => Civil {
            at: d.and_time(NaiveTime::MIN),
            offset: 0,
        },
        V::Datetime(dt) => Civil { at: *dt, offset: 0 },
        V::Time(t) => Civil {
            at: NaiveDate::from_ymd_opt(1970, 1, 1)
                .unwrap_or_default()
                .and_time(*t),
            offset: 0,
        },
        V::Str(s) => {
            let m = super::literal::timestamp_of_text(s).ok_or_else(|| {
                err(format!(
                    "FORMAT_TIMESTAMP: Invalid timestamp string \"{s}\""
                ))
            })?;
            let zone = zone_arg(args, 2)?;
            Civil {
                at: zone.local(m)?,
                offset: zone.offset_at(m),
            }
        }
        V::Ts(m) => {
            let zone = zone_arg(args, 2)?;
            Civil {
                at: zone.local(*m)?,
                offset: zone.offset_at(*m),
            }
        }
        other => return Err(err(format!("cannot format {}", other.type_name()))),
    };
    Ok(V::Str(format::format(fmt, &civil)))
}

pub(crate) fn parse_type(name: &str, args: &[DataType]) -> DfResult<DataType> {
    let target = format_target(name);
    let ok = (args.len() == 2 || (name == "parse_timestamp" && args.len() == 3))
        && args.iter().all(|a| is(a, &STRING));
    typed(ok, target, &shown(name), args)
}

pub(crate) fn parse_value(name: &str, args: &[V]) -> DfResult<V> {
    let (V::Str(fmt), V::Str(text)) = (&args[0], &args[1]) else {
        return Err(err("PARSE_ takes STRINGs"));
    };
    let target = match name {
        "parse_date" => Target::Date,
        "parse_time" => Target::Time,
        "parse_datetime" => Target::Datetime,
        _ => Target::Timestamp,
    };
    let p: Parsed = format::parse(name, fmt, text, target)?;
    let shown = shown(name);
    Ok(match target {
        Target::Date => V::Date(p.at.date()),
        Target::Time => V::Time(p.at.time()),
        Target::Datetime => match p.epoch {
            Some(s) => {
                let m = s.checked_mul(1_000_000);
                V::Datetime(super::datetime_of_micros(check_ts(&shown, m)?)?)
            }
            None => V::Datetime(p.at),
        },
        Target::Timestamp => {
            let m = match (p.epoch, p.offset, &p.zone) {
                (Some(s), _, _) => s.checked_mul(1_000_000),
                (None, Some(o), _) => Some(micros_of(p.at) - o as i64 * 1_000_000),
                (None, None, Some(z)) => Some(Zone::parse(z)?.instant(p.at)),
                (None, None, None) => Some(zone_arg(args, 2)?.instant(p.at)),
            };
            V::Ts(check_ts(&shown, m)?)
        }
    })
}

/// `name = "sql_name", typer, eval[, coerced];` lines as `pub(crate) fn name() -> ScalarUDF`
/// constructors of [`RowUdf`]s (`coerced`: text arguments cast to the civil types first).
macro_rules! row_udfs {
    (@make $name:literal, $typer:path, $eval:path) => {
        $crate::sql::functions::civil::RowUdf::make($name, $typer, $eval)
    };
    (@make $name:literal, $typer:path, $eval:path, coerced) => {
        $crate::sql::functions::civil::RowUdf::coerced(
            $name,
            $typer,
            $eval,
            $crate::sql::functions::civil::ops::coerce_strings,
        )
    };
    ($($f:ident = $name:literal, $typer:path, $eval:path $(, $c:ident)?;)*) => {
        $(pub(crate) fn $f() -> datafusion::logical_expr::ScalarUDF {
            row_udfs!(@make $name, $typer, $eval $(, $c)?)
        })*
    };
}
pub(crate) use row_udfs;

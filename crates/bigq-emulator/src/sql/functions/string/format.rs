//! `FORMAT(format_string, ...)`: printf-style specifiers as BigQuery reads them (`%d %i %o
//! %x %X %f %F %e %E %g %G %s %t %T %p %P %%`, the flags `- + space # 0 '`, width and
//! precision, `*` for either), and `%t`/`%T` rendering any value as BigQuery's text and
//! literal forms.

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::arrow::temporal_conversions::{
    date32_to_datetime, time64us_to_time, timestamp_us_to_datetime,
};
use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue};

use super::super::row::{Call, elements, int, text};
use crate::sql::types::EXTENSION_NAME_KEY;

fn err(msg: impl Into<String>) -> DataFusionError {
    DataFusionError::Execution(msg.into())
}

#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    group: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

/// One row of `FORMAT`.
pub(super) fn format(cx: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let Some(fmt) = text(&a[0]) else {
        return Ok(ScalarValue::Utf8(None));
    };
    let mut out = String::new();
    let mut next = 1;
    let mut chars = fmt.chars().peekable();
    let mut null = false;
    let take = |next: &mut usize| -> DfResult<usize> {
        if *next >= a.len() {
            return Err(err("Too few arguments to FORMAT"));
        }
        *next += 1;
        Ok(*next - 1)
    };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '#' => spec.alt = true,
                '0' => spec.zero = true,
                '\'' => spec.group = true,
                _ => break,
            }
            chars.next();
        }
        let star = |next: &mut usize| -> DfResult<i64> {
            let i = take(next)?;
            match &a[i] {
                v if v.is_null() && matches!(v.data_type(), DataType::Null | DataType::Int64) => {
                    Ok(i64::MIN)
                }
                v => int(v).ok_or_else(|| {
                    err(format!(
                        "Invalid type for argument {} to FORMAT; Expected INT64; Got {}",
                        i + 1,
                        super::super::row::bq_type_name(&v.data_type())
                    ))
                }),
            }
        };
        if chars.peek() == Some(&'*') {
            chars.next();
            let w = star(&mut next)?;
            if w == i64::MIN {
                null = true;
            } else if w < 0 {
                spec.minus = true;
                spec.width = Some(w.unsigned_abs() as usize);
            } else {
                spec.width = Some(w as usize);
            }
        } else {
            let mut digits = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(d);
                chars.next();
            }
            if !digits.is_empty() {
                spec.width = Some(digits.parse().map_err(|_| err("FORMAT: width too large"))?);
            }
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            if chars.peek() == Some(&'*') {
                chars.next();
                let p = star(&mut next)?;
                if p == i64::MIN {
                    null = true;
                } else if p >= 0 {
                    spec.precision = Some(p as usize);
                }
            } else {
                let mut digits = String::new();
                while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(d);
                    chars.next();
                }
                spec.precision =
                    Some(digits.parse().unwrap_or(0)).filter(|p: &usize| *p <= 100_000);
            }
        }
        let Some(conv) = chars.next() else {
            return Err(err(format!(
                "Invalid format specifier in FORMAT string {fmt:?}: it ends with %"
            )));
        };
        if conv == '%' {
            out.push('%');
            continue;
        }
        if !"dioxXfFeEgGstTpP".contains(conv) {
            return Err(err(format!(
                "Invalid format specifier %{conv} in FORMAT string {fmt:?}"
            )));
        }
        let i = take(&mut next)?;
        let v = &a[i];
        let field = cx.fields.get(i);
        let piece = piece(conv, &spec, v, field, i + 1)?;
        match piece {
            Some(p) => out.push_str(&p),
            None => null = true,
        }
    }
    if next < a.len() {
        return Err(err("Too many arguments to FORMAT"));
    }
    Ok(ScalarValue::Utf8((!null).then_some(out)))
}

fn is_json(field: Option<&FieldRef>) -> bool {
    field.is_some_and(|f| {
        f.metadata()
            .get(EXTENSION_NAME_KEY)
            .is_some_and(|t| t == "google:sqlType:json")
    })
}

/// The text of one specifier, `None` for a NULL that makes the result NULL.
fn piece(
    conv: char,
    spec: &Spec,
    v: &ScalarValue,
    field: Option<&FieldRef>,
    arg: usize,
) -> DfResult<Option<String>> {
    let t = v.data_type();
    let bad = |want: &str| {
        err(format!(
            "Invalid type for argument {arg} to FORMAT; Expected {want}; Got {}",
            if is_json(field) {
                "JSON".to_string()
            } else {
                super::super::row::bq_type_name(&t)
            }
        ))
    };
    let json = is_json(field);
    match conv {
        'd' | 'i' | 'o' | 'x' | 'X' => {
            if !(t.is_integer() || t == DataType::Null) || json {
                return Err(bad("INT64"));
            }
            let Some(n) = int(v) else { return Ok(None) };
            Ok(Some(pad(spec, integer(conv, spec, n), true)))
        }
        'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
            let body = match v {
                ScalarValue::Float64(x) => x.map(|x| float(conv, spec, x)),
                ScalarValue::Float32(x) => x.map(|x| float(conv, spec, f64::from(x))),
                ScalarValue::Decimal128(x, _, s) => {
                    x.map(|x| decimal(conv, spec, x < 0, &x.unsigned_abs().to_string(), *s))
                }
                ScalarValue::Decimal256(x, _, s) => x.map(|x| {
                    let text = x.to_string();
                    let digits = text.trim_start_matches('-');
                    decimal(conv, spec, text.starts_with('-'), digits, *s)
                }),
                ScalarValue::Null => None,
                _ => return Err(bad("FLOAT64")),
            };
            let Some((body, finite)) = body else {
                return Ok(None);
            };
            Ok(Some(pad(spec, body, finite)))
        }
        's' => {
            if !matches!(
                t,
                DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 | DataType::Null
            ) || json
            {
                return Err(bad("STRING"));
            }
            let Some(s) = text(v) else { return Ok(None) };
            Ok(Some(pad(spec, truncate(s, spec.precision), false)))
        }
        'p' | 'P' => {
            if !(json || t == DataType::Null) {
                return Err(bad("JSON"));
            }
            let Some(s) = text(v) else { return Ok(None) };
            let parsed: serde_json::Value =
                serde_json::from_str(s).map_err(|e| err(format!("FORMAT: invalid JSON: {e}")))?;
            let s = if conv == 'p' {
                parsed.to_string()
            } else {
                serde_json::to_string_pretty(&parsed).unwrap_or_default()
            };
            Ok(Some(pad(spec, truncate(&s, spec.precision), false)))
        }
        _ => {
            let s = render(v, json, conv == 'T')?;
            Ok(Some(pad(spec, truncate(&s, spec.precision), false)))
        }
    }
}

/// At most `precision` characters of `s`.
fn truncate(s: &str, precision: Option<usize>) -> String {
    match precision {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    }
}

/// `body` padded to the width: spaces on the left (the right with `-`), or zeros after the
/// sign and any `0x` when `0` is given for a number.
fn pad(spec: &Spec, body: String, numeric: bool) -> String {
    let len = body.chars().count();
    let Some(width) = spec.width.filter(|w| *w > len) else {
        return body;
    };
    let fill = width - len;
    if spec.minus {
        return format!("{body}{}", " ".repeat(fill));
    }
    if spec.zero && numeric {
        let sign = body
            .find(|c: char| !matches!(c, '+' | '-' | ' '))
            .unwrap_or(0);
        let prefix = if body[sign..].starts_with("0x") || body[sign..].starts_with("0X") {
            sign + 2
        } else {
            sign
        };
        return format!("{}{}{}", &body[..prefix], "0".repeat(fill), &body[prefix..]);
    }
    format!("{}{body}", " ".repeat(fill))
}

/// Digits grouped from the right by `size`, joined with `sep`.
fn grouped(digits: &str, size: usize, sep: char) -> String {
    let n = digits.len();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(size) {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

fn sign(spec: &Spec, negative: bool) -> &'static str {
    if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

fn integer(conv: char, spec: &Spec, n: i64) -> String {
    let (negative, mut digits) = match conv {
        'o' => (false, format!("{:o}", n as u64)),
        'x' => (false, format!("{:x}", n as u64)),
        'X' => (false, format!("{:X}", n as u64)),
        _ => (n < 0, n.unsigned_abs().to_string()),
    };
    if let Some(p) = spec.precision {
        if p == 0 && n == 0 {
            digits.clear();
        } else if digits.len() < p {
            digits = format!("{}{digits}", "0".repeat(p - digits.len()));
        }
    }
    if spec.group {
        digits = match conv {
            'x' | 'X' => grouped(&digits, 4, ':'),
            'o' => grouped(&digits, 4, ','),
            _ => grouped(&digits, 3, ','),
        };
    }
    let prefix = match conv {
        'o' if spec.alt && !digits.starts_with('0') => "0",
        'x' if spec.alt && n != 0 => "0x",
        'X' if spec.alt && n != 0 => "0X",
        _ => "",
    };
    let sign = if matches!(conv, 'd' | 'i') {
        sign(spec, negative)
    } else {
        ""
    };
    format!("{sign}{prefix}{digits}")
}

/// C's `%e` exponent: a sign and at least two digits.
fn exponent(e: i32, upper: bool) -> String {
    format!(
        "{}{}{:02}",
        if upper { 'E' } else { 'e' },
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

/// `x` in `%e` form with `p` decimals: the mantissa text and the exponent.
fn e_parts(x: f64, p: usize) -> (String, i32) {
    let s = format!("{:.*e}", p, x);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.to_string(), e.parse().unwrap_or(0))
}

/// The integer part of `s` (a plain decimal) grouped by thousands.
fn group_int_part(s: &str) -> String {
    let (int, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    format!("{}{frac}", grouped(int, 3, ','))
}

/// `%f %e %g` of a FLOAT64, and whether it was finite (zero padding applies).
fn float(conv: char, spec: &Spec, x: f64) -> (String, bool) {
    let upper = conv.is_ascii_uppercase();
    let s = sign(spec, x.is_sign_negative() && !x.is_nan());
    if !x.is_finite() {
        let t = if x.is_nan() { "nan" } else { "inf" };
        let t = if upper {
            t.to_uppercase()
        } else {
            t.to_string()
        };
        let s = if x.is_nan() { sign(spec, false) } else { s };
        return (format!("{s}{t}"), false);
    }
    let a = x.abs();
    let p = spec.precision.unwrap_or(6);
    let body = match conv.to_ascii_lowercase() {
        'f' => {
            let mut b = format!("{:.*}", p, a);
            if spec.alt && p == 0 {
                b.push('.');
            }
            if spec.group {
                b = group_int_part(&b);
            }
            b
        }
        'e' => {
            let (mut m, e) = e_parts(a, p);
            if spec.alt && p == 0 {
                m.push('.');
            }
            format!("{m}{}", exponent(e, upper))
        }
        _ => {
            let p = if p == 0 { 1 } else { p };
            let (_, e) = e_parts(a, p - 1);
            let mut b = if e < -4 || e >= p as i32 {
                let (m, e) = e_parts(a, p - 1);
                let m = if spec.alt { m } else { trim_zeros(&m) };
                format!("{m}{}", exponent(e, upper))
            } else {
                let b = format!("{:.*}", (p as i32 - 1 - e).max(0) as usize, a);
                if spec.alt { b } else { trim_zeros(&b) }
            };
            if spec.group && !b.contains(['e', 'E']) {
                b = group_int_part(&b);
            }
            b
        }
    };
    (format!("{s}{body}"), true)
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// `%f` of a NUMERIC or BIGNUMERIC exactly (rounding half away from zero, as BigQuery does);
/// `%e` and `%g` through FLOAT64.
fn decimal(conv: char, spec: &Spec, negative: bool, digits: &str, scale: i8) -> (String, bool) {
    let scale = scale.max(0) as usize;
    if !conv.eq_ignore_ascii_case(&'f') {
        let text = if scale == 0 {
            digits.to_string()
        } else {
            let d = format!("{digits:0>width$}", width = scale + 1);
            format!("{}.{}", &d[..d.len() - scale], &d[d.len() - scale..])
        };
        let x: f64 = text.parse().unwrap_or(0.0);
        return float(conv, spec, if negative { -x } else { x });
    }
    let p = spec.precision.unwrap_or(6);
    let d = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = d.split_at(d.len() - scale);
    let mut all: Vec<u8> = format!("{int}{frac:0<p$}").into_bytes();
    // `all` holds the integer digits and at least `p` fraction digits; keep `p` and round.
    let keep = int.len() + p;
    let round_up = all.get(keep).is_some_and(|d| *d >= b'5');
    all.truncate(keep);
    if round_up {
        let mut i = all.len();
        loop {
            if i == 0 {
                all.insert(0, b'1');
                break;
            }
            i -= 1;
            if all[i] == b'9' {
                all[i] = b'0';
            } else {
                all[i] += 1;
                break;
            }
        }
    }
    let s = String::from_utf8(all).unwrap_or_default();
    let (i, f) = s.split_at(s.len() - p);
    let i = i.trim_start_matches('0');
    let i = if i.is_empty() { "0" } else { i };
    let zero = i == "0" && f.bytes().all(|b| b == b'0');
    let mut body = if p == 0 {
        if spec.alt {
            format!("{i}.")
        } else {
            i.to_string()
        }
    } else {
        format!("{i}.{f}")
    };
    if spec.group {
        body = group_int_part(&body);
    }
    (format!("{}{body}", sign(spec, negative && !zero)), true)
}

/// A FLOAT64 as BigQuery's text: the shortest digits that read back, `.0` on whole numbers,
/// an exponent outside [1e-5, 1e15).
fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = x.abs();
    if a != 0.0 && !(1e-5..1e15).contains(&a) {
        let s = format!("{x:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}{}", exponent(e, false));
    }
    let s = format!("{x}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

fn quote(s: &str, q: char) -> String {
    let mut out = String::new();
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// BYTES as text: printable ASCII kept, every other byte `\xNN` (`\\` and the quote escaped
/// when `quoted`).
fn bytes_text(b: &[u8], quoted: bool) -> String {
    let mut out = String::new();
    for &c in b {
        match c {
            b'\\' if quoted => out.push_str("\\\\"),
            b'"' if quoted => out.push_str("\\\""),
            b'\n' if quoted => out.push_str("\\n"),
            b'\t' if quoted => out.push_str("\\t"),
            b'\r' if quoted => out.push_str("\\r"),
            0x20..=0x7e => out.push(c as char),
            c => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    if quoted { format!("b\"{out}\"") } else { out }
}

/// A decimal as text, trailing fraction zeros dropped.
pub(super) fn decimal_text(text: String, scale: i8) -> String {
    let neg = text.starts_with('-');
    let digits = text.trim_start_matches('-');
    let scale = scale.max(0) as usize;
    let d = format!("{digits:0>width$}", width = scale + 1);
    let (i, f) = d.split_at(d.len() - scale);
    let f = f.trim_end_matches('0');
    let s = if f.is_empty() {
        i.to_string()
    } else {
        format!("{i}.{f}")
    };
    if neg { format!("-{s}") } else { s }
}

fn fraction(micros: i64) -> String {
    if micros == 0 {
        String::new()
    } else {
        format!(".{micros:06}").trim_end_matches('0').to_string()
    }
}

fn micros_of(v: i64, unit: &datafusion::arrow::datatypes::TimeUnit) -> i64 {
    use datafusion::arrow::datatypes::TimeUnit as U;
    match unit {
        U::Second => v.saturating_mul(1_000_000),
        U::Millisecond => v.saturating_mul(1000),
        U::Microsecond => v,
        U::Nanosecond => v.div_euclid(1000),
    }
}

fn datetime_text(micros: i64) -> Option<String> {
    let dt = timestamp_us_to_datetime(micros)?;
    let frac = micros.rem_euclid(1_000_000);
    Some(format!(
        "{}{}",
        dt.format("%Y-%m-%d %H:%M:%S"),
        fraction(frac)
    ))
}

/// An INTERVAL in BigQuery's canonical text, `Y-M D H:M:S[.FFF[FFF]]` (bigq-codec's).
pub(super) fn interval_text(iv: &datafusion::arrow::datatypes::IntervalMonthDayNano) -> String {
    let parts = bigq_codec::value::text::IntervalParts {
        months: iv.months,
        days: iv.days,
        nanos: iv.nanoseconds,
    };
    let mut out = String::new();
    let _ = bigq_codec::value::text::format_interval(parts, &mut out);
    out
}

/// `v` as `%t` (text) or `%T` (a literal) shows it.
fn render(v: &ScalarValue, json: bool, literal: bool) -> DfResult<String> {
    use ScalarValue as S;
    if v.is_null() {
        return Ok("NULL".into());
    }
    let lit = |kind: &str, s: String| {
        if literal {
            format!("{kind} {}", quote(&s, '"'))
        } else {
            s
        }
    };
    Ok(match v {
        S::Utf8(Some(s)) | S::Utf8View(Some(s)) | S::LargeUtf8(Some(s)) => {
            if json {
                let s = serde_json::from_str::<serde_json::Value>(s)
                    .map(|j| j.to_string())
                    .unwrap_or_else(|_| s.clone());
                if literal {
                    format!("JSON {}", quote(&s, '\''))
                } else {
                    s
                }
            } else if literal {
                quote(s, '"')
            } else {
                s.clone()
            }
        }
        S::Binary(Some(b)) | S::BinaryView(Some(b)) | S::LargeBinary(Some(b)) => {
            bytes_text(b, literal)
        }
        S::FixedSizeBinary(_, Some(b)) => bytes_text(b, literal),
        S::Boolean(Some(b)) => b.to_string(),
        S::Float64(Some(x)) => {
            if literal && !x.is_finite() {
                format!("CAST(\"{}\" AS FLOAT64)", float_text(*x))
            } else {
                float_text(*x)
            }
        }
        S::Float32(Some(x)) => float_text(f64::from(*x)),
        S::Decimal128(Some(x), _, s) => lit("NUMERIC", decimal_text(x.to_string(), *s)),
        S::Decimal256(Some(x), _, s) => lit("BIGNUMERIC", decimal_text(x.to_string(), *s)),
        S::Date32(Some(d)) => {
            let date = date32_to_datetime(*d)
                .map(|d| d.format("%Y-%m-%d").to_string())
                .unwrap_or_default();
            lit("DATE", date)
        }
        S::Time64Microsecond(Some(t)) | S::Time64Nanosecond(Some(t)) => {
            let micros = if matches!(v, S::Time64Nanosecond(_)) {
                t / 1000
            } else {
                *t
            };
            let time = time64us_to_time(micros - micros.rem_euclid(1_000_000))
                .map(|t| {
                    format!(
                        "{}{}",
                        t.format("%H:%M:%S"),
                        fraction(micros.rem_euclid(1_000_000))
                    )
                })
                .unwrap_or_default();
            lit("TIME", time)
        }
        S::TimestampSecond(Some(t), tz)
        | S::TimestampMillisecond(Some(t), tz)
        | S::TimestampMicrosecond(Some(t), tz)
        | S::TimestampNanosecond(Some(t), tz) => {
            let DataType::Timestamp(unit, _) = v.data_type() else {
                unreachable!()
            };
            let text = datetime_text(micros_of(*t, &unit)).unwrap_or_default();
            if tz.is_some() {
                lit("TIMESTAMP", format!("{text}+00"))
            } else {
                lit("DATETIME", text)
            }
        }
        S::IntervalMonthDayNano(Some(iv)) => interval_text(iv),
        S::List(_) | S::LargeList(_) | S::FixedSizeList(_) => {
            let items = elements(v)?.unwrap_or_default();
            let parts = items
                .iter()
                .map(|i| render(i, false, literal))
                .collect::<DfResult<Vec<_>>>()?;
            format!("[{}]", parts.join(", "))
        }
        S::Struct(s) => {
            let mut parts = Vec::new();
            for c in s.columns() {
                parts.push(render(&ScalarValue::try_from_array(c, 0)?, false, literal)?);
            }
            if literal && parts.len() == 1 {
                format!("STRUCT({})", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
        other => match int(other) {
            Some(i) => i.to_string(),
            None => {
                return Err(DataFusionError::NotImplemented(format!(
                    "FORMAT of a {} value",
                    super::super::row::bq_type_name(&other.data_type())
                )));
            }
        },
    })
}

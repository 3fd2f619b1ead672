//! JSON values as BigQuery keeps them: numbers as int64, uint64 or double, objects with
//! their keys sorted and a repeated key's first value kept, written compactly with doubles
//! as BigQuery prints them (`1e+100`, `9.007199254740992e+15`, `10.0`).

use std::fmt::Write as _;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// How a number that a double cannot hold exactly is taken (`wide_number_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WideNumbers {
    /// An error.
    Exact,
    /// Rounded to the nearest double.
    Round,
}

impl WideNumbers {
    /// The mode named by `wide_number_mode`.
    pub(super) fn named(function: &str, name: &str) -> Result<WideNumbers, String> {
        match name {
            "exact" => Ok(WideNumbers::Exact),
            "round" => Ok(WideNumbers::Round),
            other => Err(format!(
                "{function}: invalid wide_number_mode {other:?}; expected 'exact' or 'round'"
            )),
        }
    }
}

/// A JSON value whose repeated object keys keep their first value, as BigQuery's do.
struct FirstKeyWins(Value);

impl<'de> Deserialize<'de> for FirstKeyWins {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FirstKeyWins;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<FirstKeyWins, E> {
                Ok(FirstKeyWins(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<FirstKeyWins, E> {
                Ok(FirstKeyWins(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<FirstKeyWins, E> {
                Ok(FirstKeyWins(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<FirstKeyWins, E> {
                Number::from_f64(v)
                    .map(|n| FirstKeyWins(Value::Number(n)))
                    .ok_or_else(|| E::custom("number out of range"))
            }
            fn visit_str<E>(self, v: &str) -> Result<FirstKeyWins, E> {
                Ok(FirstKeyWins(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<FirstKeyWins, E> {
                Ok(FirstKeyWins(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<FirstKeyWins, E> {
                Ok(FirstKeyWins(Value::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstKeyWins, A::Error> {
                let mut out = Vec::new();
                while let Some(FirstKeyWins(v)) = seq.next_element()? {
                    out.push(v);
                }
                Ok(FirstKeyWins(Value::Array(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FirstKeyWins, A::Error> {
                let mut out = Map::new();
                while let Some((k, FirstKeyWins(v))) = map.next_entry::<String, FirstKeyWins>()? {
                    out.entry(k).or_insert(v);
                }
                Ok(FirstKeyWins(Value::Object(out)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses JSON text as BigQuery does (`PARSE_JSON`, JSON literals), or says why not.
pub(super) fn parse(text: &str, wide: WideNumbers) -> Result<Value, String> {
    let FirstKeyWins(v) = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if wide == WideNumbers::Exact
        && let Some(n) = inexact_number(text)
    {
        return Err(format!(
            "the number {n} cannot be converted to a JSON number without loss of precision"
        ));
    }
    Ok(v)
}

/// Parses JSON text leniently for a function of a JSON-formatted STRING: `None` where it is
/// not JSON (those functions give NULL then), wide numbers rounded.
pub(super) fn parse_lenient(text: &str) -> Option<Value> {
    parse(text, WideNumbers::Round).ok()
}

/// The first number token of `text` that a double (or an int64 / uint64) cannot hold exactly.
fn inexact_number(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let token = &text[start..i];
                if !exact_number(token) {
                    return Some(token);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Whether a JSON number token is held exactly: as an int64 or uint64, or as a double whose
/// shortest form has the token's digits.
fn exact_number(token: &str) -> bool {
    if token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok() {
        return true;
    }
    let Ok(f) = token.parse::<f64>() else {
        return true;
    };
    f.is_finite() && digits_and_exponent(token) == digits_and_exponent(&format!("{f:e}"))
}

/// A decimal number's significant digits and the power of ten of its last digit, to compare
/// two spellings of one number.
fn digits_and_exponent(s: &str) -> (String, i64) {
    let s = s.trim_start_matches(['-', '+']);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(p) => (&s[..p], s[p + 1..].parse::<i64>().unwrap_or(0)),
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let mut exp = exp - frac.len() as i64;
    let trimmed = all.trim_end_matches('0');
    exp += (all.len() - trimmed.len()) as i64;
    let digits = trimmed.trim_start_matches('0').to_string();
    if digits.is_empty() {
        return (String::new(), 0);
    }
    (digits, exp)
}

/// A JSON value's text as BigQuery writes it: compact, keys sorted.
pub(super) fn to_text(v: &Value) -> String {
    let mut out = String::new();
    write(&mut out, v, None, 0);
    out
}

/// A JSON value's text indented by two spaces a level (`TO_JSON_STRING(.., true)`).
pub(super) fn to_pretty_text(v: &Value) -> String {
    let mut out = String::new();
    write(&mut out, v, Some(2), 0);
    out
}

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(n) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', n * level));
    }
}

fn write(out: &mut String, v: &Value, indent: Option<usize>, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                write(out, item, indent, level + 1);
            }
            if !items.is_empty() {
                newline(out, indent, level);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                write_str(out, k);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write(out, item, indent, level + 1);
            }
            if !map.is_empty() {
                newline(out, indent, level);
            }
            out.push('}');
        }
    }
}

/// A JSON number: an integer as its digits, a double as [`write_double`].
pub(super) fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else {
        write_double(out, n.as_f64().unwrap_or(0.0));
    }
}

/// A double as BigQuery writes it in JSON: its shortest digits, in plain notation while the
/// decimal point falls within 15 places of the first digit (`10.0`, `0.001`) and in
/// exponent notation otherwise (`1e+100`, `9.007199254740992e+15`).
pub(super) fn write_double(out: &mut String, v: f64) {
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    let s = format!("{:e}", v.abs());
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = m.chars().filter(|c| *c != '.').collect();
    let e: i32 = e.parse().unwrap_or(0);
    let k = digits.len() as i32;
    // The position of the decimal point after the first `n` digits.
    let n = e + 1;
    if v < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 15 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
        out.push_str(".0");
    } else if 0 < n && n <= 15 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -4 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let x = n - 1;
        let _ = write!(out, "e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs());
    }
}

/// A JSON string literal (control characters as `\uXXXX`, other text as it is).
pub(super) fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The name `JSON_TYPE` gives a value's type.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A scalar's text as `JSON_VALUE` gives it (a string unquoted); `None` for null, an array
/// or an object.
pub(super) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => {
            let mut out = String::new();
            write_number(&mut out, n);
            Some(out)
        }
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> String {
        to_text(&parse(s, WideNumbers::Round).unwrap())
    }

    #[test]
    fn values_are_written_as_bigquery_writes_them() {
        assert_eq!(
            text(r#"{"b": 1, "a": [true, null]}"#),
            r#"{"a":[true,null],"b":1}"#
        );
        assert_eq!(text(r#"{"key": 1, "key": 2}"#), r#"{"key":1}"#);
        assert_eq!(text("1e100"), "1e+100");
        assert_eq!(text("9007199254740992.0"), "9.007199254740992e+15");
        assert_eq!(text("922337203685477580701"), "9.223372036854776e+20");
        assert_eq!(text("10.0"), "10.0");
        assert_eq!(text("3.14"), "3.14");
        assert_eq!(text("0.0001"), "0.0001");
        assert_eq!(text("0.00001"), "1e-05");
        assert_eq!(text("18446744073709551615"), "18446744073709551615");
    }

    #[test]
    fn exact_mode_refuses_numbers_a_double_cannot_hold() {
        assert!(parse(r#"{"id": 922337203685477580701}"#, WideNumbers::Exact).is_err());
        assert!(parse("1.5", WideNumbers::Exact).is_ok());
        assert!(parse("123.4", WideNumbers::Exact).is_ok());
        assert!(parse("-9223372036854775808", WideNumbers::Exact).is_ok());
        assert!(parse(r#"["1.00000000000000000001"]"#, WideNumbers::Exact).is_ok());
        assert!(parse("1.00000000000000000001", WideNumbers::Exact).is_err());
    }
}

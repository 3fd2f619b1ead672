//! Functions that cut, pad and search a value: STRING in code points, BYTES in bytes, with
//! BigQuery's errors for a negative length or count.

use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue};

use super::super::row::{Call, bytes, bytes_value, fail, int, int_value, string_value, text};

/// A STRING as its code points or a BYTES value as its bytes.
enum Seq {
    Chars(Vec<char>),
    Bytes(Vec<u8>),
}

impl Seq {
    fn of(v: &ScalarValue) -> DfResult<Seq> {
        if let Some(s) = text(v) {
            return Ok(Seq::Chars(s.chars().collect()));
        }
        bytes(v)
            .map(|b| Seq::Bytes(b.to_vec()))
            .ok_or_else(|| DataFusionError::Internal(format!("not STRING or BYTES: {v:?}")))
    }

    fn len(&self) -> usize {
        match self {
            Seq::Chars(c) => c.len(),
            Seq::Bytes(b) => b.len(),
        }
    }

    fn slice(&self, from: usize, to: usize) -> ScalarValue {
        let to = to.min(self.len());
        let from = from.min(to);
        match self {
            Seq::Chars(c) => string_value(c[from..to].iter().collect::<String>()),
            Seq::Bytes(b) => bytes_value(b[from..to].to_vec()),
        }
    }
}

fn not_negative(name: &str, what: &str, v: i64) -> DfResult<usize> {
    usize::try_from(v).map_err(|_| fail(name, format!("the {what} cannot be negative, got {v}")))
}

pub(super) fn substr(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = Seq::of(&a[0])?;
    let len = s.len() as i64;
    let pos = int(&a[1]).unwrap_or(1);
    let start = match pos {
        p if p > 0 => p - 1,
        0 => 0,
        p => (len + p).max(0),
    };
    let count = match a.get(2).and_then(int) {
        Some(n) => not_negative("SUBSTR", "length", n)? as i64,
        None => len,
    };
    let start = start.min(len);
    let end = start.saturating_add(count).min(len);
    Ok(s.slice(start as usize, end as usize))
}

pub(super) fn left(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = Seq::of(&a[0])?;
    let n = not_negative("LEFT", "length", int(&a[1]).unwrap_or(0))?;
    Ok(s.slice(0, n))
}

pub(super) fn right(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = Seq::of(&a[0])?;
    let n = not_negative("RIGHT", "length", int(&a[1]).unwrap_or(0))?;
    Ok(s.slice(s.len().saturating_sub(n), s.len()))
}

/// The most a padding or repetition may make, as BigQuery caps its results.
const MAX_RESULT: usize = 1 << 20;

fn pad(name: &str, a: &[ScalarValue], left: bool) -> DfResult<ScalarValue> {
    let s = Seq::of(&a[0])?;
    let n = not_negative(name, "length", int(&a[1]).unwrap_or(0))?;
    if n > MAX_RESULT {
        return Err(fail(name, format!("the length {n} is too large")));
    }
    let p = match a.get(2) {
        Some(p) => Seq::of(p)?,
        None => match s {
            Seq::Chars(_) => Seq::Chars(vec![' ']),
            Seq::Bytes(_) => Seq::Bytes(vec![b' ']),
        },
    };
    if p.len() == 0 {
        return Err(fail(name, "the pattern cannot be empty"));
    }
    fn go<T: Clone>(s: &[T], p: &[T], n: usize, left: bool) -> Vec<T> {
        if n <= s.len() {
            return s[..n].to_vec();
        }
        let fill: Vec<T> = p.iter().cycle().take(n - s.len()).cloned().collect();
        if left {
            [fill, s.to_vec()].concat()
        } else {
            [s.to_vec(), fill].concat()
        }
    }
    Ok(match (s, p) {
        (Seq::Chars(s), Seq::Chars(p)) => {
            string_value(go(&s, &p, n, left).iter().collect::<String>())
        }
        (Seq::Bytes(s), Seq::Bytes(p)) => bytes_value(go(&s, &p, n, left)),
        _ => return Err(fail(name, "the value and the pattern must be of one type")),
    })
}

pub(super) fn lpad(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    pad("LPAD", a, true)
}

pub(super) fn rpad(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    pad("RPAD", a, false)
}

pub(super) fn repeat(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let n = not_negative("REPEAT", "repetitions", int(&a[1]).unwrap_or(0))?;
    if let Some(s) = text(&a[0]) {
        if s.len().saturating_mul(n) > MAX_RESULT {
            return Err(fail("REPEAT", "the result is too large"));
        }
        return Ok(string_value(s.repeat(n)));
    }
    let b = bytes(&a[0]).unwrap_or_default();
    if b.len().saturating_mul(n) > MAX_RESULT {
        return Err(fail("REPEAT", "the result is too large"));
    }
    Ok(bytes_value(b.repeat(n)))
}

pub(super) fn reverse(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    Ok(match Seq::of(&a[0])? {
        Seq::Chars(c) => string_value(c.iter().rev().collect::<String>()),
        Seq::Bytes(mut b) => {
            b.reverse();
            bytes_value(b)
        }
    })
}

pub(super) fn length(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    Ok(int_value(Seq::of(&a[0])?.len() as i64))
}

fn find<T: PartialEq>(hay: &[T], needle: &[T]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

pub(super) fn strpos(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let at = match (Seq::of(&a[0])?, Seq::of(&a[1])?) {
        (Seq::Chars(h), Seq::Chars(n)) => find(&h, &n),
        (Seq::Bytes(h), Seq::Bytes(n)) => find(&h, &n),
        _ => return Err(fail("STRPOS", "the arguments must be of one type")),
    };
    Ok(int_value(at.map_or(0, |i| i as i64 + 1)))
}

fn raw(v: &ScalarValue) -> &[u8] {
    text(v)
        .map(str::as_bytes)
        .or_else(|| bytes(v))
        .unwrap_or_default()
}

fn ends(a: &[ScalarValue]) -> (&[u8], &[u8]) {
    (raw(&a[0]), raw(&a[1]))
}

pub(super) fn starts_with(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (v, p) = ends(a);
    Ok(ScalarValue::Boolean(Some(v.starts_with(p))))
}

pub(super) fn ends_with(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (v, p) = ends(a);
    Ok(ScalarValue::Boolean(Some(v.ends_with(p))))
}

pub(super) fn replace(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    if let (Some(s), Some(from), Some(to)) = (text(&a[0]), text(&a[1]), text(&a[2])) {
        if from.is_empty() {
            return Ok(string_value(s));
        }
        return Ok(string_value(s.replace(from, to)));
    }
    let (s, from, to) = (
        bytes(&a[0]).unwrap_or_default(),
        bytes(&a[1]).unwrap_or_default(),
        bytes(&a[2]).unwrap_or_default(),
    );
    if from.is_empty() {
        return Ok(bytes_value(s.to_vec()));
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Ok(bytes_value(out))
}

pub(super) fn translate(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    fn go<T: PartialEq + Clone + std::fmt::Debug>(
        s: &[T],
        from: &[T],
        to: &[T],
        what: &str,
    ) -> DfResult<Vec<T>> {
        for (i, c) in from.iter().enumerate() {
            if from[..i].contains(c) {
                return Err(fail(
                    "TRANSLATE",
                    format!("Duplicate {what} {c:?} in the characters to replace"),
                ));
            }
        }
        Ok(s.iter()
            .filter_map(|c| match from.iter().position(|f| f == c) {
                Some(i) => to.get(i).cloned(),
                None => Some(c.clone()),
            })
            .collect())
    }
    Ok(match (Seq::of(&a[0])?, Seq::of(&a[1])?, Seq::of(&a[2])?) {
        (Seq::Chars(s), Seq::Chars(f), Seq::Chars(t)) => {
            string_value(go(&s, &f, &t, "character")?.iter().collect::<String>())
        }
        (Seq::Bytes(s), Seq::Bytes(f), Seq::Bytes(t)) => bytes_value(go(&s, &f, &t, "byte")?),
        _ => return Err(fail("TRANSLATE", "the arguments must be of one type")),
    })
}

fn trim(name: &str, a: &[ScalarValue], start: bool, end: bool) -> DfResult<ScalarValue> {
    fn go<T>(s: &[T], strip: impl Fn(&T) -> bool, start: bool, end: bool) -> &[T] {
        let mut s = s;
        while start && s.first().is_some_and(&strip) {
            s = &s[1..];
        }
        while end && s.last().is_some_and(&strip) {
            s = &s[..s.len() - 1];
        }
        s
    }
    let set = a.get(1).map(Seq::of).transpose()?;
    Ok(match (Seq::of(&a[0])?, set) {
        (Seq::Chars(s), None) => string_value(
            go(&s, |c| c.is_whitespace(), start, end)
                .iter()
                .collect::<String>(),
        ),
        (Seq::Chars(s), Some(Seq::Chars(set))) => string_value(
            go(&s, |c| set.contains(c), start, end)
                .iter()
                .collect::<String>(),
        ),
        (Seq::Bytes(s), Some(Seq::Bytes(set))) => {
            bytes_value(go(&s, |c| set.contains(c), start, end).to_vec())
        }
        _ => {
            return Err(fail(
                name,
                "the value and the characters to remove must be of one type",
            ));
        }
    })
}

pub(super) fn trim_both(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    trim("TRIM", a, true, true)
}

pub(super) fn ltrim(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    trim("LTRIM", a, true, false)
}

pub(super) fn rtrim(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    trim("RTRIM", a, false, true)
}

/// The word delimiters `INITCAP` uses when it is given none, besides whitespace.
const INITCAP_DELIMITERS: &str = "[](){}/|\\<>!?@\"^#$&~_,.:;*%+-";

pub(super) fn initcap(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    let given: Option<Vec<char>> = a.get(1).and_then(text).map(|d| d.chars().collect());
    let is_delimiter = |c: char| match &given {
        Some(d) => d.contains(&c),
        None => c.is_whitespace() || INITCAP_DELIMITERS.contains(c),
    };
    let mut out = String::with_capacity(s.len());
    let mut word_start = true;
    for c in s.chars() {
        if is_delimiter(c) {
            out.push(c);
            word_start = true;
            continue;
        }
        // One character for one: a case mapping to several (as of `ß`) keeps the original.
        let mapped: Vec<char> = if word_start {
            c.to_uppercase().collect()
        } else {
            c.to_lowercase().collect()
        };
        if mapped.len() == 1 {
            out.push(mapped[0]);
        } else {
            out.push(c);
        }
        word_start = false;
    }
    Ok(string_value(out))
}

/// `CONCAT` of BYTES values, or of STRING values and others cast to STRING.
pub(super) fn concat(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    if a.iter().all(|v| bytes(v).is_some()) {
        return Ok(bytes_value(
            a.iter().filter_map(bytes).collect::<Vec<_>>().concat(),
        ));
    }
    let mut out = String::new();
    for v in a {
        match v {
            _ if text(v).is_some() => out.push_str(text(v).unwrap_or_default()),
            ScalarValue::Boolean(Some(b)) => out.push_str(if *b { "true" } else { "false" }),
            _ if int(v).is_some() => out.push_str(&int(v).unwrap_or_default().to_string()),
            _ if bytes(v).is_some() => {
                return Err(fail(
                    "CONCAT",
                    "the arguments must all be STRING or all BYTES",
                ));
            }
            other => {
                return Err(fail(
                    "CONCAT",
                    format!(
                        "an argument of type {} is not supported",
                        super::super::row::bq_type_name(&other.data_type())
                    ),
                ));
            }
        }
    }
    Ok(string_value(out))
}

/// `COLLATE` with the empty specification (no collation) gives the value itself; comparing
/// under a collation such as `und:ci` is not supported, so it is an error, never a
/// case-sensitive answer.
pub(super) fn collate(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    match text(&a[1]) {
        Some("") => Ok(a[0].clone()),
        Some(spec) => Err(fail(
            "COLLATE",
            format!("the collation '{spec}' is not supported"),
        )),
        None => Err(fail(
            "COLLATE",
            "the collation specification cannot be NULL",
        )),
    }
}

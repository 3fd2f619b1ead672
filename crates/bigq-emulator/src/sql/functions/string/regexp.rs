//! The `REGEXP_*` functions with RE2's semantics: `\d`, `\w` and `\s` are ASCII classes,
//! BYTES patterns match byte by byte, and at most one capturing group picks what is extracted.

use std::cell::RefCell;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue};
use regex::bytes::{Captures, Regex};

use super::super::row::{Call, bytes, bytes_value, fail, int, int_value, list, string_value, text};

/// A value and pattern of one type: STRING (`utf8`) or BYTES.
struct Subject<'a> {
    hay: &'a [u8],
    utf8: bool,
}

impl Subject<'_> {
    fn new<'a>(
        name: &str,
        value: &'a ScalarValue,
        pattern: &ScalarValue,
    ) -> DfResult<(Subject<'a>, Regex)> {
        let (hay, pat, utf8) = match (text(value), text(pattern)) {
            (Some(v), Some(p)) => (v.as_bytes(), rewrite_classes(p), true),
            _ => {
                let v = bytes(value).unwrap_or_default();
                let p = bytes(pattern).unwrap_or_default();
                (v, byte_pattern(p), false)
            }
        };
        Ok((Subject { hay, utf8 }, compile(name, &pat)?))
    }

    /// The byte just past the character at `at`.
    fn next(&self, at: usize) -> usize {
        if !self.utf8 {
            return at + 1;
        }
        let mut i = at + 1;
        while i < self.hay.len() && (self.hay[i] & 0xC0) == 0x80 {
            i += 1;
        }
        i
    }

    /// The byte offset of the 1-based character `position`, `None` past the end.
    fn offset(&self, position: i64) -> Option<usize> {
        let n = usize::try_from(position - 1).ok()?;
        if !self.utf8 {
            return (n < self.hay.len()).then_some(n);
        }
        let s = std::str::from_utf8(self.hay).ok()?;
        s.char_indices().nth(n).map(|(i, _)| i)
    }

    /// The 1-based character position of byte offset `at`.
    fn position(&self, at: usize) -> i64 {
        let n = if self.utf8 {
            String::from_utf8_lossy(&self.hay[..at]).chars().count()
        } else {
            at
        };
        n as i64 + 1
    }

    fn value(&self, b: &[u8]) -> ScalarValue {
        if self.utf8 {
            string_value(String::from_utf8_lossy(b))
        } else {
            bytes_value(b.to_vec())
        }
    }

    fn element(&self) -> DataType {
        if self.utf8 {
            DataType::Utf8
        } else {
            DataType::Binary
        }
    }

    fn null(&self) -> ScalarValue {
        if self.utf8 {
            ScalarValue::Utf8(None)
        } else {
            ScalarValue::Binary(None)
        }
    }

    /// The matches from byte `start` on, as RE2's global replace finds them: an empty match
    /// right where the previous one ended is skipped.
    fn matches<'h>(&'h self, re: &Regex, start: usize) -> Vec<Captures<'h>> {
        let mut out = Vec::new();
        let (mut pos, mut last_end) = (start, None);
        while pos <= self.hay.len() {
            let Some(caps) = re.captures_at(self.hay, pos) else {
                break;
            };
            let m = caps.get(0).expect("group 0 always matches");
            if m.is_empty() && Some(m.end()) == last_end {
                pos = self.next(m.start());
                continue;
            }
            pos = if m.is_empty() {
                self.next(m.end())
            } else {
                m.end()
            };
            last_end = Some(m.end());
            out.push(caps);
        }
        out
    }
}

thread_local! {
    /// The last patterns compiled: a query usually applies one pattern to every row.
    static CACHE: RefCell<Vec<(String, Regex)>> = const { RefCell::new(Vec::new()) };
}

fn compile(name: &str, pattern: &str) -> DfResult<Regex> {
    if let Some(re) = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(p, _)| p == pattern)
            .map(|(_, r)| r.clone())
    }) {
        return Ok(re);
    }
    let re = Regex::new(pattern)
        .map_err(|e| fail(name, format!("Cannot parse regular expression: {e}")))?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 16 {
            c.remove(0);
        }
        c.push((pattern.to_string(), re.clone()));
    });
    Ok(re)
}

/// RE2's `\d`, `\w` and `\s` (and their negations) are ASCII; the `regex` crate's are
/// Unicode. Spelled as classes, which may also nest inside a bracketed class.
fn rewrite_classes(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[0-9A-Za-z_]"),
            Some('W') => out.push_str("[^0-9A-Za-z_]"),
            Some('s') => out.push_str(r"[\t\n\f\r ]"),
            Some('S') => out.push_str(r"[^\t\n\f\r ]"),
            Some(n) => {
                out.push('\\');
                out.push(n);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// A BYTES pattern matches bytes, not UTF-8 characters; its non-ASCII bytes become escapes.
fn byte_pattern(p: &[u8]) -> String {
    let mut out = String::from("(?-u)");
    for &b in p {
        if b.is_ascii() {
            out.push(b as char);
        } else {
            out.push_str(&format!(r"\x{b:02X}"));
        }
    }
    out
}

/// The group extraction functions return: the only capturing group, else the whole match.
fn group(name: &str, re: &Regex) -> DfResult<usize> {
    match re.captures_len() - 1 {
        0 => Ok(0),
        1 => Ok(1),
        _ => Err(fail(
            name,
            "Regular expressions passed into extraction functions must not have more than 1 capturing group",
        )),
    }
}

fn positive(name: &str, what: &str, v: Option<i64>) -> DfResult<i64> {
    match v {
        Some(v) if v > 0 => Ok(v),
        Some(v) => Err(fail(name, format!("the {what} must be positive, got {v}"))),
        None => Ok(1),
    }
}

pub(super) fn regexp_contains(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (s, re) = Subject::new("REGEXP_CONTAINS", &a[0], &a[1])?;
    Ok(ScalarValue::Boolean(Some(re.is_match(s.hay))))
}

fn extract(name: &str, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (s, re) = Subject::new(name, &a[0], &a[1])?;
    let g = group(name, &re)?;
    let position = positive(name, "position", a.get(2).and_then(int))?;
    let occurrence = positive(name, "occurrence", a.get(3).and_then(int))?;
    let start = if a.len() > 2 {
        match s.offset(position) {
            Some(o) => o,
            None => return Ok(s.null()),
        }
    } else {
        0
    };
    let found = s.matches(&re, start);
    let Some(caps) = usize::try_from(occurrence - 1)
        .ok()
        .and_then(|n| found.get(n))
    else {
        return Ok(s.null());
    };
    Ok(match caps.get(g) {
        Some(m) => s.value(m.as_bytes()),
        None => s.null(),
    })
}

pub(super) fn regexp_extract(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    extract("REGEXP_EXTRACT", a)
}

pub(super) fn regexp_substr(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    extract("REGEXP_SUBSTR", a)
}

pub(super) fn regexp_extract_all(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let name = "REGEXP_EXTRACT_ALL";
    let (s, re) = Subject::new(name, &a[0], &a[1])?;
    let g = group(name, &re)?;
    let items = s
        .matches(&re, 0)
        .iter()
        .map(|c| s.value(c.get(g).map(|m| m.as_bytes()).unwrap_or_default()))
        .collect();
    Ok(list(items, &s.element()))
}

pub(super) fn regexp_instr(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let name = "REGEXP_INSTR";
    let (s, re) = Subject::new(name, &a[0], &a[1])?;
    let g = group(name, &re)?;
    let position = positive(name, "position", a.get(2).and_then(int))?;
    let occurrence = positive(name, "occurrence", a.get(3).and_then(int))?;
    let end = match a.get(4).and_then(int) {
        None | Some(0) => false,
        Some(1) => true,
        Some(v) => {
            return Err(fail(
                name,
                format!("the occurrence_position must be 0 or 1, got {v}"),
            ));
        }
    };
    // An empty regexp matches nowhere, as BigQuery counts it (not at every position).
    let empty = text(&a[1])
        .map(str::is_empty)
        .or_else(|| bytes(&a[1]).map(<[u8]>::is_empty));
    let Some(start) = s.offset(position).filter(|_| empty != Some(true)) else {
        return Ok(int_value(0));
    };
    let found = s.matches(&re, start);
    let m = usize::try_from(occurrence - 1)
        .ok()
        .and_then(|n| found.get(n))
        .and_then(|c| c.get(g));
    Ok(int_value(match m {
        Some(m) if end => s.position(m.end()),
        Some(m) => s.position(m.start()),
        None => 0,
    }))
}

/// A replacement's pieces: literal bytes and group references (`\0` to `\9`).
enum Piece {
    Text(Vec<u8>),
    Group(usize),
}

fn replacement(r: &[u8], groups: usize) -> DfResult<Vec<Piece>> {
    let name = "REGEXP_REPLACE";
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut i = 0;
    while i < r.len() {
        if r[i] != b'\\' {
            cur.push(r[i]);
            i += 1;
            continue;
        }
        match r.get(i + 1) {
            Some(b'\\') => cur.push(b'\\'),
            Some(d) if d.is_ascii_digit() => {
                let n = usize::from(d - b'0');
                if n > groups {
                    return Err(fail(
                        name,
                        format!(
                            "the replacement refers to group {n}, but the regular expression has {groups} capturing groups"
                        ),
                    ));
                }
                out.push(Piece::Text(std::mem::take(&mut cur)));
                out.push(Piece::Group(n));
            }
            _ => {
                return Err(fail(
                    name,
                    r"Invalid REGEXP_REPLACE pattern: '\' must be followed by a digit or '\'",
                ));
            }
        }
        i += 2;
    }
    out.push(Piece::Text(cur));
    Ok(out)
}

pub(super) fn regexp_replace(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (s, re) = Subject::new("REGEXP_REPLACE", &a[0], &a[1])?;
    let r = text(&a[2])
        .map(str::as_bytes)
        .or_else(|| bytes(&a[2]))
        .ok_or_else(|| DataFusionError::Internal("REGEXP_REPLACE replacement".into()))?;
    let pieces = replacement(r, re.captures_len() - 1)?;
    let mut out = Vec::with_capacity(s.hay.len());
    let mut last = 0;
    for caps in s.matches(&re, 0) {
        let m = caps.get(0).expect("group 0 always matches");
        out.extend_from_slice(&s.hay[last..m.start()]);
        for p in &pieces {
            match p {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Group(n) => {
                    out.extend_from_slice(caps.get(*n).map(|g| g.as_bytes()).unwrap_or_default())
                }
            }
        }
        last = m.end();
    }
    out.extend_from_slice(&s.hay[last..]);
    Ok(s.value(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(
        f: fn(&Call, &[ScalarValue]) -> DfResult<ScalarValue>,
        a: &[ScalarValue],
    ) -> DfResult<ScalarValue> {
        f(&Call { fields: &[] }, a)
    }

    fn s(v: &str) -> ScalarValue {
        string_value(v)
    }

    #[test]
    fn replace_groups_and_empty_matches() {
        let r = call(regexp_replace, &[s("abc"), s(""), s("-")]).unwrap();
        assert_eq!(r, s("-a-b-c-"));
        let r = call(regexp_replace, &[s("a1b22"), s(r"(\d+)"), s(r"<\1\\\0>")]).unwrap();
        assert_eq!(r, s(r"a<1\1>b<22\22>"));
        assert!(call(regexp_replace, &[s("a"), s("a"), s(r"\x")]).is_err());
    }

    #[test]
    fn digit_class_is_ascii() {
        let r = call(regexp_contains, &[s("٣"), s(r"\d")]).unwrap();
        assert_eq!(r, ScalarValue::Boolean(Some(false)));
    }

    #[test]
    fn instr_counts_code_points() {
        let r = call(regexp_instr, &[s("éa@b"), s("@")]).unwrap();
        assert_eq!(r, int_value(3));
    }
}

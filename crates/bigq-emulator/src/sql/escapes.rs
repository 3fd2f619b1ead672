//! GoogleSQL's escape sequences in quoted STRING literals (`'\x41'`, `'\u00e9'`,
//! `'\U0001F600'`, `'\101'`, `'\n'`, `'\''`, ...), read as BigQuery reads them: sqlparser
//! keeps the text as written (the tokenizer is asked not to unescape, as its own unescaping
//! drops the backslash of every sequence it does not know), and each literal is unescaped
//! here, an unknown sequence (`'\d'`) being BigQuery's syntax error. Raw strings (`r'..'`)
//! are left as written; bytes literals are read where they become BYTES.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{Statement, Value, ValueWithSpan, VisitMut, VisitorMut};

use crate::error::{BqError, BqResult};

/// Unescapes every quoted STRING literal of `statements` in place.
pub(crate) fn unescape_literals(statements: &mut [Statement]) -> BqResult<()> {
    for s in statements {
        unescape_in(s)?;
    }
    Ok(())
}

/// Unescapes every quoted STRING literal of one statement or expression in place.
pub(crate) fn unescape_in(node: &mut impl VisitMut) -> BqResult<()> {
    match node.visit(&mut Unescaper) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Unescaper;

impl VisitorMut for Unescaper {
    type Break = BqError;

    fn post_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<BqError> {
        match &mut value.value {
            Value::SingleQuotedString(s)
            | Value::DoubleQuotedString(s)
            | Value::TripleSingleQuotedString(s)
            | Value::TripleDoubleQuotedString(s) => match unescape(s) {
                Ok(Some(u)) => *s = u,
                Ok(None) => {}
                Err(e) => return ControlFlow::Break(BqError::invalid_query(e)),
            },
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The text of a quoted string literal with its escapes read; `None` when it has none.
pub(crate) fn unescape(raw: &str) -> Result<Option<String>, String> {
    if !raw.contains('\\') {
        return Ok(None);
    }
    let b = raw.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    let illegal = |i: usize| {
        let seq: String = raw[i..].chars().take(2).collect();
        format!("Syntax error: Illegal escape sequence: {seq}")
    };
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let Some(&c) = b.get(i + 1) else {
            return Err("Syntax error: a string literal cannot end with a lone backslash".into());
        };
        let digits = |n: usize, radix: u32| -> Option<u32> {
            let s = raw.get(i + 2..i + 2 + n)?;
            if s.len() != n || !s.chars().all(|d| d.is_digit(radix)) {
                return None;
            }
            u32::from_str_radix(s, radix).ok()
        };
        let push_char = |cp: u32, len: usize, out: &mut Vec<u8>| -> Result<usize, String> {
            let ch = char::from_u32(cp).ok_or_else(|| {
                format!("Syntax error: Illegal escape sequence: invalid code point {cp:#x}")
            })?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            Ok(len)
        };
        let step = match c {
            b'a' => {
                out.push(0x07);
                2
            }
            b'b' => {
                out.push(0x08);
                2
            }
            b'f' => {
                out.push(0x0c);
                2
            }
            b'n' => {
                out.push(b'\n');
                2
            }
            b'r' => {
                out.push(b'\r');
                2
            }
            b't' => {
                out.push(b'\t');
                2
            }
            b'v' => {
                out.push(0x0b);
                2
            }
            b'\\' | b'?' | b'"' | b'\'' | b'`' => {
                out.push(c);
                2
            }
            b'x' | b'X' => {
                let v = digits(2, 16).ok_or_else(|| illegal(i))?;
                out.push(v as u8);
                4
            }
            b'0'..=b'7' => {
                // Exactly three octal digits, at most \377.
                let s = raw.get(i + 1..i + 4).ok_or_else(|| illegal(i))?;
                let v = (s.len() == 3 && s.chars().all(|d| d.is_digit(8)))
                    .then(|| u32::from_str_radix(s, 8).ok())
                    .flatten()
                    .filter(|v| *v <= 0o377)
                    .ok_or_else(|| illegal(i))?;
                out.push(v as u8);
                4
            }
            b'u' => {
                let cp = digits(4, 16).ok_or_else(|| illegal(i))?;
                push_char(cp, 6, &mut out)?
            }
            b'U' => {
                let cp = digits(8, 16).ok_or_else(|| illegal(i))?;
                push_char(cp, 10, &mut out)?
            }
            _ => return Err(illegal(i)),
        };
        i += step;
    }
    String::from_utf8(out)
        .map(Some)
        .map_err(|_| "Syntax error: the escapes of a string literal must make valid UTF-8".into())
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn escapes_read_as_googlesql_reads_them() {
        let u = |s: &str| unescape(s).unwrap().unwrap_or_else(|| s.to_string());
        assert_eq!(u(r"\x41\101\u00e9\U0001F600"), "AAé😀");
        assert_eq!(u(r"a\tb\n\\\'\`\?"), "a\tb\n\\'`?");
        assert_eq!(u("plain"), "plain");
        assert!(unescape(r"\d").unwrap_err().contains(r"\d"));
        assert!(unescape(r"\x4").is_err());
        assert!(unescape(r"\400").is_err());
        assert!(unescape(r"\uD800").is_err());
        assert!(unescape(r"\xff").is_err(), "not UTF-8");
    }
}

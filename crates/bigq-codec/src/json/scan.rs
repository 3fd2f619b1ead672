//! A resumable byte cursor over JSON: whitespace, punctuation, strings and skipping whole
//! values. Every function returns [`Step::Incomplete`] when the input ends before the token
//! does, so the caller can wait for more bytes and retry from a saved position.

use crate::CodecError;

/// Why a step did not complete.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The input ended inside the token: retry with more bytes.
    Incomplete,
    /// The input is malformed.
    Error(CodecError),
}

impl From<CodecError> for Stop {
    fn from(e: CodecError) -> Self {
        Stop::Error(e)
    }
}

pub(crate) type Step<T> = Result<T, Stop>;

pub(crate) struct Cursor<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

#[inline]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], pos: usize) -> Self {
        Cursor { buf, pos }
    }

    /// Skips whitespace and returns the next byte without consuming it.
    #[inline]
    pub fn peek(&mut self) -> Step<u8> {
        match self.buf.get(self.pos) {
            Some(&c) if !is_ws(c) => Ok(c),
            _ => self.peek_past_ws(),
        }
    }

    #[inline(never)]
    fn peek_past_ws(&mut self) -> Step<u8> {
        while let Some(&c) = self.buf.get(self.pos) {
            if !is_ws(c) {
                return Ok(c);
            }
            self.pos += 1;
        }
        Err(Stop::Incomplete)
    }

    /// Skips whitespace and consumes `expected`.
    #[inline]
    pub fn expect(&mut self, expected: u8) -> Step<()> {
        // The common case: the byte is right there, with no whitespace before it.
        if self.buf.get(self.pos) == Some(&expected) {
            self.pos += 1;
            return Ok(());
        }
        let c = self.peek()?;
        if c == expected {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.expected(c, expected))
        }
    }

    /// Whether the input at the cursor starts with `pat` (no whitespace skipped).
    #[inline(always)]
    pub fn at<const N: usize>(&self, pat: &[u8; N]) -> bool {
        self.buf.get(self.pos..self.pos + N) == Some(&pat[..])
    }

    #[cold]
    #[inline(never)]
    fn expected(&self, c: u8, expected: u8) -> Stop {
        self.unexpected(c, &format!("expected `{}`", expected as char))
    }

    #[cold]
    #[inline(never)]
    pub fn unexpected(&self, c: u8, what: &str) -> Stop {
        Stop::Error(
            CodecError::syntax(format!(
                "malformed JSON: {what}, found `{}`",
                (c as char).escape_default()
            ))
            .with_offset(self.pos as u64),
        )
    }

    /// Consumes a literal such as `null` or `true`.
    pub fn literal(&mut self, lit: &[u8]) -> Step<()> {
        let end = self.pos + lit.len();
        let avail = &self.buf[self.pos..self.buf.len().min(end)];
        if avail != &lit[..avail.len()] {
            return Err(self.unexpected(self.buf[self.pos], "invalid literal"));
        }
        if avail.len() < lit.len() {
            return Err(Stop::Incomplete);
        }
        self.pos = end;
        Ok(())
    }

    /// Scans a string starting at the opening quote (already checked by the caller) and
    /// returns the raw content range and whether it has escapes. Consumes the closing quote.
    #[inline]
    pub fn string_raw(&mut self) -> Step<(usize, usize, bool)> {
        let s = self.string_span()?;
        Ok((s.start, s.end, s.escaped))
    }

    /// Like [`string_raw`](Self::string_raw), also telling whether the content is ASCII.
    #[inline]
    pub fn string_span(&mut self) -> Step<Span> {
        let start = self.pos + 1;
        let s = scan_string(self.buf, start).ok_or(Stop::Incomplete)?;
        self.pos = s.end + 1;
        Ok(s)
    }

    /// Scans a string and returns its content, unescaped into `scratch` if needed.
    #[inline]
    pub fn string<'s>(&mut self, scratch: &'s mut Vec<u8>) -> Step<&'s [u8]>
    where
        'a: 's,
    {
        let (s, e, escaped) = self.string_raw()?;
        if escaped {
            scratch.clear();
            unescape(&self.buf[s..e], scratch).map_err(|m| Stop::Error(m.with_offset(s as u64)))?;
            Ok(&scratch[..])
        } else {
            Ok(&self.buf[s..e])
        }
    }

    /// Skips one whole JSON value of any kind.
    pub fn skip_value(&mut self) -> Step<()> {
        let c = self.peek()?;
        match c {
            b'"' => {
                self.string_raw()?;
                Ok(())
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                let buf = self.buf;
                let mut i = self.pos;
                while let Some(&b) = buf.get(i) {
                    match b {
                        b'"' => {
                            let mut c2 = Cursor { buf, pos: i };
                            c2.string_raw()?;
                            i = c2.pos;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos = i + 1;
                                return Ok(());
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                Err(Stop::Incomplete)
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => {
                self.number_raw()?;
                Ok(())
            }
            other => Err(self.unexpected(other, "expected a value")),
        }
    }

    /// Scans a bare JSON number and returns its bytes range. A number that reaches the end of
    /// the input is incomplete (more digits may follow).
    pub fn number_raw(&mut self) -> Step<(usize, usize)> {
        let start = self.pos;
        let mut i = start;
        while let Some(&b) = self.buf.get(i) {
            if matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                i += 1;
            } else {
                self.pos = i;
                return Ok((start, i));
            }
        }
        Err(Stop::Incomplete)
    }
}

/// The content of a string in the input: `buf[start..end]`, `end` at the closing quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    /// It has backslash escapes.
    pub escaped: bool,
    /// Every raw byte is ASCII (escapes aside), so the content is valid UTF-8.
    pub ascii: bool,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The bytes of `w` equal to `b`, as the high bit of each byte. Exact for the lowest match
/// (a borrow can only mark bytes above a real match), which is all the scan uses.
#[inline(always)]
fn bytes_equal(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * b as u64);
    x.wrapping_sub(ONES) & !x & HIGH
}

/// Finds the end of the string whose content starts at `start`, eight bytes at a time:
/// the closing quote, whether there are escapes, whether it is ASCII. `None` when the input
/// ends first.
#[inline]
pub(crate) fn scan_string(buf: &[u8], start: usize) -> Option<Span> {
    let mut i = start;
    let mut high = 0u64;
    while let Some(word) = buf.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let special = bytes_equal(w, b'"') | bytes_equal(w, b'\\');
        if special != 0 {
            let k = special.trailing_zeros() as usize / 8;
            // The bytes before the quote or backslash.
            high |= w & HIGH & ((1u64 << (8 * k)) - 1);
            i += k;
            break;
        }
        high |= w & HIGH;
        i += 8;
    }
    loop {
        match *buf.get(i)? {
            b'"' => {
                return Some(Span {
                    start,
                    end: i,
                    escaped: false,
                    ascii: high == 0,
                });
            }
            b'\\' => return scan_escaped(buf, start, i, high == 0),
            c => {
                high |= (c & 0x80) as u64;
                i += 1;
            }
        }
    }
}

/// The rest of a string that has a backslash at `i`.
#[cold]
fn scan_escaped(buf: &[u8], start: usize, mut i: usize, mut ascii: bool) -> Option<Span> {
    loop {
        match *buf.get(i)? {
            b'"' => {
                return Some(Span {
                    start,
                    end: i,
                    escaped: true,
                    ascii,
                });
            }
            b'\\' => i += 2,
            c => {
                ascii &= c < 0x80;
                i += 1;
            }
        }
    }
}

/// Unescapes JSON string content into `out`.
pub(crate) fn unescape(s: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
    let bad = || CodecError::syntax("malformed JSON: invalid escape in string");
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c != b'\\' {
            let run = s[i..]
                .iter()
                .position(|&b| b == b'\\')
                .unwrap_or(s.len() - i);
            out.extend_from_slice(&s[i..i + run]);
            i += run;
            continue;
        }
        let e = *s.get(i + 1).ok_or_else(bad)?;
        i += 2;
        match e {
            b'"' => out.push(b'"'),
            b'\\' => out.push(b'\\'),
            b'/' => out.push(b'/'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let hi = hex4(s.get(i..i + 4).ok_or_else(bad)?).ok_or_else(bad)?;
                i += 4;
                let cp = if (0xD800..0xDC00).contains(&hi) {
                    if s.get(i) != Some(&b'\\') || s.get(i + 1) != Some(&b'u') {
                        return Err(CodecError::syntax(
                            "malformed JSON: unpaired surrogate in string",
                        ));
                    }
                    let lo = hex4(s.get(i + 2..i + 6).ok_or_else(bad)?).ok_or_else(bad)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(CodecError::syntax(
                            "malformed JSON: unpaired surrogate in string",
                        ));
                    }
                    i += 6;
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else if (0xDC00..0xE000).contains(&hi) {
                    return Err(CodecError::syntax(
                        "malformed JSON: unpaired surrogate in string",
                    ));
                } else {
                    hi
                };
                let ch = char::from_u32(cp).ok_or_else(bad)?;
                let mut b = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}

fn hex4(h: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in h {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes() {
        let mut out = Vec::new();
        unescape(br#"a\"b\\c\n\u00e9\ud83d\ude00"#, &mut out).unwrap();
        assert_eq!(std::str::from_utf8(&out).unwrap(), "a\"b\\c\né😀");
        assert!(unescape(br"\ud83d", &mut Vec::new()).is_err());
        assert!(unescape(br"\x", &mut Vec::new()).is_err());
    }

    #[test]
    fn scans_strings_word_by_word() {
        // Every position of the quote and backslash relative to the 8-byte words.
        for len in 0..40 {
            let content: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let body = format!("\"{content}\"tail");
            let s = scan_string(body.as_bytes(), 1).unwrap();
            assert_eq!(
                (s.end, s.escaped, s.ascii),
                (len + 1, false, true),
                "{body}"
            );
            assert_eq!(scan_string(&body.as_bytes()[..len + 1], 1), None);
            for at in 0..len {
                let mut esc = content.clone();
                esc.insert_str(at, "\\\"");
                let body = format!("\"{esc}\"x");
                let s = scan_string(body.as_bytes(), 1).unwrap();
                assert_eq!((s.end, s.escaped, s.ascii), (len + 3, true, true), "{body}");
                let mut uni = content.clone();
                uni.insert(at, 'é');
                let body = format!("\"{uni}\"\u{e9}");
                let s = scan_string(body.as_bytes(), 1).unwrap();
                assert_eq!(
                    (s.end, s.escaped, s.ascii),
                    (len + 3, false, false),
                    "{body}"
                );
            }
        }
        // Non-ASCII after the quote does not count.
        let s = scan_string("\"abc\"ééééééééé".as_bytes(), 1).unwrap();
        assert!(s.ascii);
        // An escaped backslash before the quote, and a cut escape.
        let s = scan_string(br#""a\\"b"#, 1).unwrap();
        assert_eq!((s.end, s.escaped), (4, true));
        assert_eq!(scan_string(br#""abc\"#, 1), None);
    }

    #[test]
    fn skips_and_reports_incomplete() {
        let mut c = Cursor::new(br#" {"a":[1,"]",{"b":null}]} x"#, 0);
        c.skip_value().unwrap();
        assert_eq!(c.peek().unwrap(), b'x');
        let mut c = Cursor::new(br#"{"a":[1,"#, 0);
        assert!(matches!(c.skip_value(), Err(Stop::Incomplete)));
        let mut c = Cursor::new(b"12", 0);
        assert!(matches!(c.skip_value(), Err(Stop::Incomplete)));
        let mut c = Cursor::new(b"nul", 0);
        assert!(matches!(c.skip_value(), Err(Stop::Incomplete)));
        let mut c = Cursor::new(b"nox", 0);
        assert!(matches!(c.skip_value(), Err(Stop::Error(_))));
    }
}

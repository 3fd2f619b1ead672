//! `ALTER TABLE .. SET OPTIONS (..)`, which sqlparser reads only as `SET (..)`: the word
//! `OPTIONS` after `SET` dropped from the text (strings, quoted names and comments left
//! alone). Tried only when the text does not parse as it is, so the statements sqlparser
//! reads with `OPTIONS` (`ALTER SCHEMA .. SET OPTIONS`) are untouched.

use super::range::{line_end, quoted_end, skip_space};

/// The text with `SET OPTIONS (` made `SET (`; `None` when there is none.
pub fn pre_parse(sql: &str) -> Option<String> {
    let b = sql.as_bytes();
    let word_at = |i: usize, w: &[u8]| {
        b.len() >= i + w.len()
            && b[i..i + w.len()].eq_ignore_ascii_case(w)
            && b.get(i + w.len())
                .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_')
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
    };
    let mut out = String::with_capacity(sql.len());
    let mut copied = 0;
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => {
                i = quoted_end(b, i);
                continue;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = line_end(b, i);
                continue;
            }
            b'#' => {
                i = line_end(b, i);
                continue;
            }
            _ => {}
        }
        if word_at(i, b"SET") {
            let o = skip_space(b, i + 3);
            if word_at(o, b"OPTIONS") && b.get(skip_space(b, o + 7)) == Some(&b'(') {
                out.push_str(&sql[copied..o]);
                copied = skip_space(b, o + 7);
                changed = true;
                i = copied;
                continue;
            }
        }
        i += 1;
    }
    changed.then(|| {
        out.push_str(&sql[copied..]);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::pre_parse;

    #[test]
    fn drops_options_after_set_only() {
        assert_eq!(
            pre_parse("ALTER TABLE t SET OPTIONS (description = 'SET OPTIONS (x)')").as_deref(),
            Some("ALTER TABLE t SET (description = 'SET OPTIONS (x)')")
        );
        assert_eq!(pre_parse("SELECT 'SET OPTIONS (' AS s"), None);
        assert_eq!(pre_parse("UPDATE t SET options = 1 WHERE TRUE"), None);
    }
}

//! UNPIVOT's row value aliases that are literals (`UNPIVOT(v FOR q IN (Q1 AS 1, Q2 AS 2))`,
//! `.. AS 'first'`), which sqlparser does not read (it takes a name there): in the text
//! before parsing, an INT64 alias becomes the name [`INT_LABEL`]`n` (the rewrite of UNPIVOT
//! reads it back as the number) and a STRING alias the quoted name of its text.

use std::borrow::Cow;

use super::range::{quoted_end, skip_space};

/// The prefix of the name an INT64 row value alias stands as until UNPIVOT is rewritten.
pub(crate) const INT_LABEL: &str = "__bigq_unpivot_int_";

/// The text with each literal alias of an UNPIVOT's IN list made a name; borrowed when
/// there is none.
pub fn pre_parse(sql: &str) -> Cow<'_, str> {
    let b = sql.as_bytes();
    let Some(at) = find_word(b, 0, b"UNPIVOT") else {
        return Cow::Borrowed(sql);
    };
    let mut out = String::with_capacity(sql.len() + 32);
    let mut copied = 0;
    let mut from = at;
    while let Some(u) = find_word(b, from, b"UNPIVOT") {
        let Some(in_at) = find_word(b, u + 7, b"IN") else {
            break;
        };
        let open = skip_space(b, in_at + 2);
        if b.get(open) != Some(&b'(') {
            from = in_at + 2;
            continue;
        }
        let Some(close) = closing_paren(b, open) else {
            break;
        };
        // Each `AS <literal>` between the parentheses.
        let mut i = open + 1;
        while i < close {
            if matches!(b[i], b'\'' | b'"' | b'`') {
                i = quoted_end(b, i);
                continue;
            }
            let boundary = !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            if boundary
                && b.get(i..i + 2)
                    .is_some_and(|w| w.eq_ignore_ascii_case(b"AS"))
                && b.get(i + 2).is_some_and(|c| c.is_ascii_whitespace())
            {
                let lit = skip_space(b, i + 2);
                let digits_end = (lit..close)
                    .find(|&k| !(b[k].is_ascii_digit() || (k == lit && b[k] == b'-')))
                    .unwrap_or(close);
                if digits_end > lit && b[lit..digits_end].iter().any(u8::is_ascii_digit) {
                    out.push_str(&sql[copied..lit]);
                    let n = &sql[lit..digits_end];
                    out.push_str(INT_LABEL);
                    out.push_str(&n.replace('-', "neg"));
                    copied = digits_end;
                    i = digits_end;
                    continue;
                }
                if matches!(b.get(lit), Some(b'\'' | b'"')) {
                    let end = quoted_end(b, lit);
                    out.push_str(&sql[copied..lit]);
                    out.push('`');
                    out.push_str(&sql[lit + 1..end - 1].replace('`', ""));
                    out.push('`');
                    copied = end;
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
        from = close;
    }
    if copied == 0 {
        return Cow::Borrowed(sql);
    }
    out.push_str(&sql[copied..]);
    Cow::Owned(out)
}

/// The INT64 an alias made by [`pre_parse`] stands for.
pub(crate) fn int_label(name: &str) -> Option<i64> {
    let n = name.strip_prefix(INT_LABEL)?;
    match n.strip_prefix("neg") {
        Some(abs) => abs.parse::<i64>().ok().map(|v| -v),
        None => n.parse().ok(),
    }
}

/// The start of the next `word` (whole, outside quotes) at or after `from`.
fn find_word(b: &[u8], from: usize, word: &[u8]) -> Option<usize> {
    let mut i = from;
    while i + word.len() <= b.len() {
        if matches!(b[i], b'\'' | b'"' | b'`') {
            i = quoted_end(b, i);
            continue;
        }
        let before = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let after = b
            .get(i + word.len())
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
        if before && after && b[i..i + word.len()].eq_ignore_ascii_case(word) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The index of the parenthesis closing the one at `open`.
fn closing_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => {
                i = quoted_end(b, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_aliases_become_names() {
        assert_eq!(
            pre_parse("SELECT * FROM t UNPIVOT(s FOR q IN (Q1 AS 1, Q2 AS -2, (a, b) AS 'x y'))"),
            "SELECT * FROM t UNPIVOT(s FOR q IN (Q1 AS __bigq_unpivot_int_1, Q2 AS __bigq_unpivot_int_neg2, (a, b) AS `x y`))"
        );
        assert_eq!(int_label("__bigq_unpivot_int_neg2"), Some(-2));
        let kept = "SELECT * FROM t UNPIVOT(s FOR q IN (Q1 AS one, Q2))";
        assert_eq!(pre_parse(kept), kept);
        assert_eq!(pre_parse("SELECT 'UNPIVOT' AS x"), "SELECT 'UNPIVOT' AS x");
    }
}

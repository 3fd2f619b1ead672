//! `table` as a name (`WITH table AS (..) SELECT .. FROM table`, `table.x`): TABLE is no
//! reserved word in GoogleSQL, and the function reference's examples name CTEs so;
//! sqlparser reads `FROM table` as a table function. In the text before parsing, such a
//! `table` is quoted as the name it is; `CREATE TABLE`, `TABLE t` arguments and the rest are
//! left alone.

use std::borrow::Cow;

use super::range::{skip_space, skipped};

/// The text with each `table` that is a name quoted; borrowed when there is none.
pub fn pre_parse(sql: &str) -> Cow<'_, str> {
    let b = sql.as_bytes();
    if !b.windows(5).any(|w| w.eq_ignore_ascii_case(b"TABLE")) {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let (mut i, mut copied) = (0, 0);
    // The last word or punctuation seen, upper-cased.
    let mut prev = String::new();
    while i < b.len() {
        if let Some(end) = skipped(b, i) {
            // A string or quoted name is a token; a comment is none.
            if matches!(b[i], b'\'' | b'"' | b'`') {
                prev = "'".into();
            }
            i = end;
            continue;
        }
        match b[i] {
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &sql[start..i];
                if word.eq_ignore_ascii_case("TABLE") && is_name(b, &prev, i) {
                    out.push_str(&sql[copied..start]);
                    out.push('`');
                    out.push_str(word);
                    out.push('`');
                    copied = i;
                }
                prev = word.to_ascii_uppercase();
                continue;
            }
            c => {
                prev = (c as char).to_string();
                i += 1;
            }
        }
    }
    if copied == 0 {
        return Cow::Borrowed(sql);
    }
    out.push_str(&sql[copied..]);
    Cow::Owned(out)
}

/// Whether the `table` ending at `end`, after `prev`, is a name.
fn is_name(b: &[u8], prev: &str, end: usize) -> bool {
    let next_at = skip_space(b, end);
    let next = b.get(next_at).copied();
    if prev == "." {
        return false;
    }
    // `table.x`: a column of the CTE or alias named so.
    if b.get(end) == Some(&b'.') {
        return true;
    }
    let next_word: String = b[next_at.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .map(|c| c.to_ascii_uppercase() as char)
        .collect();
    match prev {
        "FROM" | "JOIN" => next != Some(b'('),
        "WITH" | "RECURSIVE" | "," => {
            next_word == "AS" || matches!(next, None | Some(b',' | b')' | b';'))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_as_a_name_is_quoted_and_the_keyword_left_alone() {
        assert_eq!(
            pre_parse("WITH table AS (SELECT 1 AS x) SELECT table.x FROM table"),
            "WITH `table` AS (SELECT 1 AS x) SELECT `table`.x FROM `table`"
        );
        assert_eq!(
            pre_parse(
                "WITH a AS (SELECT 1), Table AS (SELECT 2) SELECT * FROM a JOIN Table USING (x)"
            ),
            "WITH a AS (SELECT 1), `Table` AS (SELECT 2) SELECT * FROM a JOIN `Table` USING (x)"
        );
        for kept in [
            "CREATE TABLE ds.t (x INT64)",
            "CREATE OR REPLACE TABLE ds.t AS SELECT 1",
            "DROP TABLE IF EXISTS ds.t",
            "SELECT * FROM RANGE_SESSIONIZE(TABLE ds.t, 'r', ['k'])",
            "SELECT 'FROM table' AS s",
            "SELECT * FROM t.table",
        ] {
            assert_eq!(pre_parse(kept), kept);
        }
    }
}

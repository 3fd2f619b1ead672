//! `CREATE TEMP AGGREGATE FUNCTION f(x T, n T NOT AGGREGATE) AS (..)`, which sqlparser
//! does not read: in the text before parsing, `AGGREGATE` and each parameter's `NOT
//! AGGREGATE` are blanked (spaces keep the positions of what follows), leaving the
//! `CREATE TEMP FUNCTION` a call of which is its body written in place, as for a scalar
//! function ([`crate::sql::routines`]): the body's aggregates then aggregate the rows of
//! the query that calls it. A persistent aggregate function (a routine of type
//! `AGGREGATE_FUNCTION`) is refused by name.

use std::borrow::Cow;

use super::range::skipped;

/// The text with aggregate function definitions read as scalar ones; borrowed when there
/// is none. The error names a persistent aggregate function.
pub fn pre_parse(sql: &str) -> Result<Cow<'_, str>, String> {
    let b = sql.as_bytes();
    if !b.windows(9).any(|w| w.eq_ignore_ascii_case(b"AGGREGATE")) {
        return Ok(Cow::Borrowed(sql));
    }
    // Every word outside strings and comments, with where it is.
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = skipped(b, i) {
            words.push((i, i));
            i = end;
            continue;
        }
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            words.push((start, i));
            continue;
        }
        if b[i] == b';' {
            words.push((i, i + 1));
        }
        i += 1;
    }
    let word = |k: usize| words.get(k).map(|&(s, e)| &sql[s..e]);
    let is = |k: usize, w: &str| word(k).is_some_and(|x| x.eq_ignore_ascii_case(w));
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut k = 0;
    while k < words.len() {
        if !(is(k, "AGGREGATE") && is(k + 1, "FUNCTION")) {
            k += 1;
            continue;
        }
        // CREATE [OR REPLACE] [TEMP | TEMPORARY] AGGREGATE FUNCTION
        let temp = k >= 1 && (is(k - 1, "TEMP") || is(k - 1, "TEMPORARY"));
        let before = if temp { k - 1 } else { k };
        let create = (before >= 1 && is(before - 1, "CREATE"))
            || (before >= 3
                && is(before - 1, "REPLACE")
                && is(before - 2, "OR")
                && is(before - 3, "CREATE"));
        if !create {
            k += 1;
            continue;
        }
        if !temp {
            return Err(
                "Unsupported by bigq-emulator: persistent aggregate functions \
                 (CREATE AGGREGATE FUNCTION); CREATE TEMP AGGREGATE FUNCTION is supported"
                    .to_string(),
            );
        }
        blank.push(words[k]);
        // Its parameters' `NOT AGGREGATE`, up to the body.
        let mut j = k + 2;
        while j < words.len() && !is(j, "AS") && word(j) != Some(";") {
            if is(j, "NOT") && is(j + 1, "AGGREGATE") {
                blank.push(words[j]);
                blank.push(words[j + 1]);
                j += 1;
            }
            j += 1;
        }
        k = j;
    }
    if blank.is_empty() {
        return Ok(Cow::Borrowed(sql));
    }
    let mut out = sql.to_string();
    for (s, e) in blank {
        out.replace_range(s..e, &" ".repeat(e - s));
    }
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_words_are_blanked_in_place() {
        let sql =
            "CREATE TEMP AGGREGATE FUNCTION f(x INT64, n INT64 NOT AGGREGATE) AS (SUM(x) / n)";
        let out = pre_parse(sql).unwrap();
        assert_eq!(out.len(), sql.len());
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>().join(" "),
            "CREATE TEMP FUNCTION f(x INT64, n INT64 ) AS (SUM(x) / n)"
        );
        assert!(matches!(
            pre_parse("SELECT 'AGGREGATE FUNCTION'"),
            Ok(Cow::Borrowed(_))
        ));
        assert!(pre_parse("CREATE AGGREGATE FUNCTION ds.f(x INT64) AS (SUM(x))").is_err());
    }
}

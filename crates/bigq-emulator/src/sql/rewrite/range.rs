//! GoogleSQL's RANGE syntax that sqlparser does not parse, rewritten in the text before
//! parsing: the type `RANGE<DATE>` becomes a type name (`BIGQ_RANGE_DATE`, for DDL) or,
//! before a string literal, a call of the literal's parser (`bigq_range_literal_date`), and
//! the table function `RANGE_SESSIONIZE` a subquery with window functions.

use std::borrow::Cow;

use crate::sql::types::element_of_name;

/// Rewrites `RANGE<T> 'literal'` to `bigq_range_literal_t('literal')`, any other
/// `RANGE<T>` to the type name `BIGQ_RANGE_T`, and the table function
/// `RANGE_SESSIONIZE(TABLE t, 'column', ['partition', ...] [, 'MEETS' | 'OVERLAPS'])` to a
/// subquery with window functions (see `sessionize`), leaving strings, quoted names and
/// comments alone. Text without either comes back borrowed. The error is BigQuery's for a
/// mode that is neither.
pub fn pre_parse(sql: &str) -> Result<Cow<'_, str>, String> {
    let b = sql.as_bytes();
    // Every query comes through here: most have no RANGE and are not copied at all.
    let at = |i: usize, word: &str| {
        b.get(i..i + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word.as_bytes()))
    };
    if !(0..b.len()).any(|i| at(i, "RANGE")) {
        return Ok(Cow::Borrowed(sql));
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut i = 0;
    let mut copied = 0;
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
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                continue;
            }
            _ => {}
        }
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if boundary
            && at(i, "RANGE_SESSIONIZE")
            && let Some(call) = SessionizeCall::at(sql, i + "RANGE_SESSIONIZE".len())
        {
            out.push_str(&sql[copied..i]);
            out.push_str(&sessionize(sql, &call)?);
            i = call.end;
            copied = i;
            continue;
        }
        if boundary
            && at(i, "RANGE")
            && let Some((element, after)) = range_type_at(b, i + 5)
        {
            out.push_str(&sql[copied..i]);
            let lit = skip_space(b, after);
            if matches!(b.get(lit), Some(b'\'' | b'"')) {
                let end = quoted_end(b, lit);
                out.push_str("bigq_range_literal_");
                out.push_str(&element.to_ascii_lowercase());
                out.push('(');
                out.push_str(&sql[lit..end]);
                out.push(')');
                i = end;
            } else {
                out.push_str("BIGQ_RANGE_");
                out.push_str(&element);
                i = after;
            }
            copied = i;
            continue;
        }
        i += 1;
    }
    if copied == 0 {
        return Ok(Cow::Borrowed(sql));
    }
    out.push_str(&sql[copied..]);
    Ok(Cow::Owned(out))
}

/// The arguments of a `RANGE_SESSIONIZE(TABLE t, 'column', ['p', ...] [, 'mode'])` call.
struct SessionizeCall<'a> {
    table: &'a str,
    column: &'a str,
    partitions: Vec<&'a str>,
    /// The mode literal's text and its position in the statement.
    mode: Option<(&'a str, usize)>,
    /// Where the call ends (after its `)`).
    end: usize,
}

impl<'a> SessionizeCall<'a> {
    /// The call whose `(` follows `i`, if the text there is one.
    fn at(sql: &'a str, i: usize) -> Option<Self> {
        let b = sql.as_bytes();
        let expect =
            |i: usize, c: u8| (b.get(skip_space(b, i)) == Some(&c)).then(|| skip_space(b, i) + 1);
        let mut i = expect(i, b'(')?;
        i = skip_space(b, i);
        if !sql.get(i..i + 5)?.eq_ignore_ascii_case("TABLE") || !b.get(i + 5)?.is_ascii_whitespace()
        {
            return None;
        }
        let start = skip_space(b, i + 5);
        let mut end = start;
        while end < b.len()
            && (b[end].is_ascii_alphanumeric() || matches!(b[end], b'_' | b'.' | b'-' | b'`'))
        {
            end = if b[end] == b'`' {
                quoted_end(b, end)
            } else {
                end + 1
            };
        }
        let table = &sql[start..end];
        if table.is_empty() {
            return None;
        }
        let literal = |i: usize| -> Option<(&'a str, usize, usize)> {
            let at = skip_space(b, i);
            if !matches!(b.get(at), Some(b'\'' | b'"')) {
                return None;
            }
            let end = quoted_end(b, at);
            Some((sql.get(at + 1..end - 1)?, at, end))
        };
        i = expect(end, b',')?;
        let (column, _, after) = literal(i)?;
        i = expect(after, b',')?;
        i = expect(i, b'[')?;
        let mut partitions = Vec::new();
        if let Some(close) = expect(i, b']') {
            i = close;
        } else {
            loop {
                let (p, _, after) = literal(i)?;
                partitions.push(p);
                if let Some(next) = expect(after, b',') {
                    i = next;
                } else {
                    i = expect(after, b']')?;
                    break;
                }
            }
        }
        let mut mode = None;
        if let Some(next) = expect(i, b',') {
            let (m, at, after) = literal(next)?;
            mode = Some((m, at));
            i = after;
        }
        let end = expect(i, b')')?;
        Some(SessionizeCall {
            table,
            column,
            partitions,
            mode,
            end,
        })
    }
}

/// `RANGE_SESSIONIZE` as window functions: rows numbered in their range's order within
/// each partition (an unbounded or NULL start first, an unbounded or NULL end last); a row
/// starts a new session unless its start is at or before (MEETS, the default) or before
/// (OVERLAPS) the latest end of the rows before it. A missing end (UNBOUNDED, or a NULL
/// range, whose bounds BigQuery reads as unbounded too) is later than any start, so every
/// row after it joins its session, and a missing start (after the first row) is before any
/// end. Each row gets the range from its session's first start to its last end (UNBOUNDED
/// where a range of the session is; the NULL ranges' bounds do not count there), NULL for a
/// NULL range. The result has the table's columns and `session_range`.
fn sessionize(sql: &str, call: &SessionizeCall<'_>) -> Result<String, String> {
    let before_or_at = match call.mode {
        None => "<=",
        Some((m, _)) if m.eq_ignore_ascii_case("MEETS") => "<=",
        Some((m, _)) if m.eq_ignore_ascii_case("OVERLAPS") => "<",
        Some((m, at)) => {
            let line = sql[..at].matches('\n').count() + 1;
            let col = at - sql[..at].rfind('\n').map_or(0, |k| k + 1) + 1;
            return Err(format!(
                "Could not cast literal \"{m}\" to type RANGE_SESSIONIZE_MODE at [{line}:{col}]"
            ));
        }
    };
    let quote = |n: &str| format!("`{}`", n.replace('`', ""));
    let parts = call.partitions.iter().map(|p| quote(p)).collect::<Vec<_>>();
    let partition_by = |extra: Option<&str>| {
        let cols = parts
            .iter()
            .map(String::as_str)
            .chain(extra)
            .collect::<Vec<_>>();
        if cols.is_empty() {
            String::new()
        } else {
            format!("PARTITION BY {} ", cols.join(", "))
        }
    };
    let c = quote(call.column);
    let (inner, outer) = (partition_by(None), partition_by(Some("__bigq_session")));
    // One numbering, so that the two windows over the rows before each row agree on ties.
    let before =
        format!("{inner}ORDER BY __bigq_row ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING");
    Ok(format!(
        "(SELECT * EXCEPT (__bigq_start, __bigq_end, __bigq_row, __bigq_new, __bigq_session), \
         CASE WHEN {c} IS NULL THEN NULL ELSE bigq_range(\
         CASE WHEN COUNT(CASE WHEN {c} IS NOT NULL AND __bigq_start IS NULL THEN 1 END) \
         OVER ({outer}) > 0 THEN NULL ELSE MIN(__bigq_start) OVER ({outer}) END, \
         CASE WHEN COUNT(CASE WHEN {c} IS NOT NULL AND __bigq_end IS NULL THEN 1 END) \
         OVER ({outer}) > 0 THEN NULL ELSE MAX(__bigq_end) OVER ({outer}) END) END \
         AS session_range \
         FROM (SELECT *, SUM(__bigq_new) OVER ({inner}ORDER BY __bigq_row \
         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS __bigq_session \
         FROM (SELECT *, CASE WHEN COUNT(1) OVER ({before}) = 0 THEN 1 \
         WHEN COUNT(1) OVER ({before}) > COUNT(__bigq_end) OVER ({before}) THEN 0 \
         WHEN __bigq_start IS NULL THEN 0 \
         WHEN __bigq_start {before_or_at} MAX(__bigq_end) OVER ({before}) THEN 0 \
         ELSE 1 END AS __bigq_new \
         FROM (SELECT *, range_start({c}) AS __bigq_start, range_end({c}) AS __bigq_end, \
         ROW_NUMBER() OVER ({inner}ORDER BY range_start({c}) NULLS FIRST, \
         range_end({c}) NULLS LAST) AS __bigq_row \
         FROM {table}) AS __bigq_ranges) AS __bigq_starts) AS __bigq_sessions)",
        table = call.table,
    ))
}

/// `<T>` (with spaces allowed) at `i`, T a RANGE element type: its upper-case name and the
/// position after `>`.
fn range_type_at(b: &[u8], i: usize) -> Option<(String, usize)> {
    let i = skip_space(b, i);
    if b.get(i) != Some(&b'<') {
        return None;
    }
    let start = skip_space(b, i + 1);
    let mut end = start;
    while end < b.len() && b[end].is_ascii_alphabetic() {
        end += 1;
    }
    let name = std::str::from_utf8(&b[start..end])
        .ok()?
        .to_ascii_uppercase();
    element_of_name(&name)?;
    let close = skip_space(b, end);
    (b.get(close) == Some(&b'>')).then_some((name, close + 1))
}

/// The end of the string, quoted name or comment starting at `i`, if one does.
pub(super) fn skipped(b: &[u8], i: usize) -> Option<usize> {
    match b[i] {
        b'\'' | b'"' | b'`' => Some(quoted_end(b, i)),
        b'-' if b.get(i + 1) == Some(&b'-') => Some(line_end(b, i)),
        b'#' => Some(line_end(b, i)),
        b'/' if b.get(i + 1) == Some(&b'*') => Some(
            b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |k| i + 2 + k + 2),
        ),
        _ => None,
    }
}

pub(super) fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

pub(super) fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |k| i + k)
}

/// The position after the quoted text starting at `i` (single, double or triple quotes, or
/// backquotes; backslash escapes skipped).
pub(super) fn quoted_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let triple = q != b'`' && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        if b[j] == b'\\' && q != b'`' {
            j += 2;
            continue;
        }
        if b[j] == q {
            if !triple {
                return j + 1;
            }
            if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                return j + 3;
            }
        }
        j += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_types_are_rewritten_outside_strings_and_comments() {
        let pre_parse = |s| pre_parse(s).unwrap();
        assert_eq!(
            pre_parse("SELECT RANGE<DATE> '[2024-01-01, UNBOUNDED)' AS r"),
            "SELECT bigq_range_literal_date('[2024-01-01, UNBOUNDED)') AS r"
        );
        assert_eq!(
            pre_parse("CREATE TABLE t (d range < timestamp >, x INT64)"),
            "CREATE TABLE t (d BIGQ_RANGE_TIMESTAMP, x INT64)"
        );
        assert_eq!(
            pre_parse("VALUES (RANGE<DATETIME> \"[2024-01-01 00:00:00, NULL)\")"),
            "VALUES (bigq_range_literal_datetime(\"[2024-01-01 00:00:00, NULL)\"))"
        );
        for untouched in [
            "SELECT 'RANGE<DATE> x'",
            "SELECT 1 -- RANGE<DATE>\n",
            "SELECT `RANGE<DATE>`",
            "SELECT ARANGE<DATE>",
            "SELECT RANGE<INT64> '[1, 2)'",
            "SELECT a < b FROM t WINDOW w AS (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)",
        ] {
            assert_eq!(pre_parse(untouched), untouched);
        }
    }

    #[test]
    fn range_sessionize_becomes_a_subquery_or_names_a_bad_mode() {
        let sql = "SELECT * FROM RANGE_SESSIONIZE(\n  TABLE `p.d.t`, 'r', ['a', \"b\"], 'OVERLAPS') ORDER BY a";
        let out = pre_parse(sql).unwrap();
        assert!(out.starts_with("SELECT * FROM (SELECT * EXCEPT"), "{out}");
        assert!(
            out.ends_with(
                "FROM `p.d.t`) AS __bigq_ranges) AS __bigq_starts) AS __bigq_sessions) ORDER BY a"
            ),
            "{out}"
        );
        assert!(out.contains("PARTITION BY `a`, `b` ORDER BY"), "{out}");
        assert!(out.contains("__bigq_start < MAX(__bigq_end)"), "{out}");
        let no_partitions = pre_parse("SELECT * FROM RANGE_SESSIONIZE(TABLE t, 'r', [])").unwrap();
        assert!(!no_partitions.contains("PARTITION BY `"), "{no_partitions}");
        assert!(
            no_partitions.contains("__bigq_start <= MAX"),
            "{no_partitions}"
        );
        let e = pre_parse("SELECT * FROM RANGE_SESSIONIZE(\n TABLE t, 'r', ['a'],\n  'BOGUS')")
            .unwrap_err();
        assert_eq!(
            e,
            "Could not cast literal \"BOGUS\" to type RANGE_SESSIONIZE_MODE at [3:3]"
        );
    }
}

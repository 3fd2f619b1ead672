//! GoogleSQL's typed array literal, `ARRAY<T>[a, b]`, which sqlparser does not read, as the
//! cast `CAST([a, b] AS ARRAY<T>)`, in the text before parsing (strings, quoted names and
//! comments left alone). An empty typed array, `ARRAY<INT64>[]`, takes its type this way.

use std::borrow::Cow;

use super::range::{skip_space, skipped};

/// The text with each typed array literal made a cast; borrowed when there is none.
pub fn pre_parse(sql: &str) -> Cow<'_, str> {
    let b = sql.as_bytes();
    let has = b.windows(5).any(|w| w.eq_ignore_ascii_case(b"ARRAY"));
    if !has {
        return Cow::Borrowed(sql);
    }
    match rewrite(sql) {
        Some(s) => Cow::Owned(s),
        None => Cow::Borrowed(sql),
    }
}

/// The index just past the bracket closing the one at `open` (`<`/`>` or `[`/`]`).
fn closing(b: &[u8], open: usize, (o, c): (u8, u8)) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        if let Some(end) = skipped(b, i) {
            i = end;
            continue;
        }
        if b[i] == o {
            depth += 1;
        } else if b[i] == c {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
        i += 1;
    }
    None
}

/// The rewritten text, `None` when nothing changed.
fn rewrite(sql: &str) -> Option<String> {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut i, mut copied, mut changed) = (0, 0, false);
    while i < b.len() {
        if let Some(end) = skipped(b, i) {
            i = end;
            continue;
        }
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let word_ends = !b
            .get(i + 5)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
        if boundary
            && word_ends
            && b.get(i..i + 5)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"ARRAY"))
        {
            let lt = skip_space(b, i + 5);
            if b.get(lt) == Some(&b'<')
                && let Some(type_end) = closing(b, lt, (b'<', b'>'))
            {
                let lb = skip_space(b, type_end);
                if b.get(lb) == Some(&b'[')
                    && let Some(rb) = closing(b, lb, (b'[', b']'))
                {
                    let inner = &sql[lb + 1..rb - 1];
                    let inner = rewrite(inner).map_or(Cow::Borrowed(inner), Cow::Owned);
                    out.push_str(&sql[copied..i]);
                    out.push_str("CAST([");
                    out.push_str(&inner);
                    out.push_str("] AS ");
                    out.push_str(&sql[i..type_end]);
                    out.push(')');
                    i = rb;
                    copied = rb;
                    changed = true;
                    continue;
                }
                i = type_end;
                continue;
            }
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_arrays_become_casts_outside_strings() {
        assert_eq!(
            pre_parse("SELECT ARRAY<INT64>[] AS a"),
            "SELECT CAST([] AS ARRAY<INT64>) AS a"
        );
        assert_eq!(
            pre_parse("SELECT ARRAY<STRUCT<a INT64, b ARRAY<STRING>>>[(1, ARRAY<STRING>['x'])]"),
            "SELECT CAST([(1, CAST(['x'] AS ARRAY<STRING>))] AS ARRAY<STRUCT<a INT64, b ARRAY<STRING>>>)"
        );
        let kept = "SELECT CAST(x AS ARRAY<INT64>), 'ARRAY<INT64>[]', ARRAY[1]";
        assert_eq!(pre_parse(kept), kept);
    }
}

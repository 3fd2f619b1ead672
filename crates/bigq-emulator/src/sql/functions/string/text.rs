//! Whole-text functions: `SPLIT`, `EDIT_DISTANCE`, `SOUNDEX` and `NORMALIZE` /
//! `NORMALIZE_AND_CASEFOLD` (whose mode, a bare `NFC`-style name, a rewrite passes as text).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result as DfResult, ScalarValue};
use datafusion::sql::sqlparser::ast::{self, Expr};
use unicode_normalization::UnicodeNormalization;

use super::super::row::{Call, bytes, bytes_value, fail, int, int_value, list, string_value, text};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, function_args, string};

pub(super) fn split(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    if let Some(s) = text(&a[0]) {
        let d = a.get(1).and_then(text).unwrap_or(",");
        let parts: Vec<ScalarValue> = if d.is_empty() {
            if s.is_empty() {
                vec![string_value("")]
            } else {
                s.chars().map(|c| string_value(c.to_string())).collect()
            }
        } else {
            s.split(d).map(string_value).collect()
        };
        return Ok(list(parts, &DataType::Utf8));
    }
    let b = bytes(&a[0]).unwrap_or_default();
    let d = a.get(1).and_then(bytes).unwrap_or_default();
    let parts: Vec<ScalarValue> = if d.is_empty() {
        if b.is_empty() {
            vec![bytes_value(Vec::new())]
        } else {
            b.iter().map(|x| bytes_value(vec![*x])).collect()
        }
    } else {
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i + d.len() <= b.len() {
            if &b[i..i + d.len()] == d {
                out.push(bytes_value(b[start..i].to_vec()));
                i += d.len();
                start = i;
            } else {
                i += 1;
            }
        }
        out.push(bytes_value(b[start..].to_vec()));
        out
    };
    Ok(list(parts, &DataType::Binary))
}

fn levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let cost = usize::from(x != y);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

pub(super) fn edit_distance(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let d = match (text(&a[0]), text(&a[1])) {
        (Some(x), Some(y)) => {
            let x: Vec<char> = x.chars().collect();
            let y: Vec<char> = y.chars().collect();
            levenshtein(&x, &y)
        }
        _ => levenshtein(
            bytes(&a[0]).unwrap_or_default(),
            bytes(&a[1]).unwrap_or_default(),
        ),
    } as i64;
    match a.get(2).and_then(int) {
        Some(m) if m < 0 => Err(fail(
            "EDIT_DISTANCE",
            format!("max_distance must be non-negative, got {m}"),
        )),
        Some(m) => Ok(int_value(d.min(m))),
        None => Ok(int_value(d)),
    }
}

fn soundex_code(c: char) -> Option<char> {
    Some(match c.to_ascii_lowercase() {
        'b' | 'f' | 'p' | 'v' => '1',
        'c' | 'g' | 'j' | 'k' | 'q' | 's' | 'x' | 'z' => '2',
        'd' | 't' => '3',
        'l' => '4',
        'm' | 'n' => '5',
        'r' => '6',
        'h' | 'w' => return None,
        _ => '0',
    })
}

pub(super) fn soundex(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    let mut letters = s.chars().filter(char::is_ascii_alphabetic);
    let Some(first) = letters.next() else {
        return Ok(string_value(""));
    };
    let mut out = String::from(first.to_ascii_uppercase());
    let mut last = soundex_code(first);
    for c in letters {
        let code = soundex_code(c);
        match code {
            // H and W neither code nor separate letters of one code.
            None => continue,
            Some('0') => {}
            Some(d) if last != Some(d) => {
                out.push(d);
                if out.len() == 4 {
                    break;
                }
            }
            _ => {}
        }
        last = code;
    }
    while out.len() < 4 {
        out.push('0');
    }
    Ok(string_value(out))
}

fn normalized(name: &str, s: &str, mode: &str) -> DfResult<String> {
    Ok(match mode.to_ascii_uppercase().as_str() {
        "NFC" => s.nfc().collect(),
        "NFKC" => s.nfkc().collect(),
        "NFD" => s.nfd().collect(),
        "NFKD" => s.nfkd().collect(),
        other => {
            return Err(fail(
                name,
                format!("unknown normalization mode {other}; want NFC, NFKC, NFD or NFKD"),
            ));
        }
    })
}

pub(super) fn normalize(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    let mode = text(&a[1]).unwrap_or("NFC");
    Ok(string_value(normalized("NORMALIZE", s, mode)?))
}

pub(super) fn normalize_and_casefold(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    let mode = text(&a[1]).unwrap_or("NFC");
    // Unicode's full case folding (`ß` is `ss`), with the `caseless` crate, between the
    // normal forms.
    let folded = caseless::default_case_fold_str(&normalized("NORMALIZE_AND_CASEFOLD", s, mode)?);
    Ok(string_value(normalized(
        "NORMALIZE_AND_CASEFOLD",
        &folded,
        mode,
    )?))
}

/// `NORMALIZE(value[, MODE])` as `bigq_normalize(value, 'MODE')` (and the casefold one).
pub(super) fn normalize_call(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(mut args) = function_args(f) else {
        return Ok(None);
    };
    let mode = match args.get(1) {
        None => string("NFC"),
        Some(Expr::Identifier(id)) => string(&id.value.to_ascii_uppercase()),
        Some(_) => {
            return Err(BqError::invalid_query(format!(
                "{name}: the normalization mode must be one of NFC, NFKC, NFD, NFKD"
            )));
        }
    };
    if args.len() > 2 || args.is_empty() {
        return Ok(None);
    }
    args.truncate(1);
    args.push(mode);
    Ok(Some(call(
        &format!("bigq_{}", name.to_ascii_lowercase()),
        args,
    )))
}

/// The 1-based index of the `occ`-th `sub` in `s` from `pos` (backwards when negative),
/// overlapping matches counted; 0 when there is none.
fn find_nth<T: PartialEq>(s: &[T], sub: &[T], pos: i64, occ: i64) -> i64 {
    let (n, m) = (s.len() as i64, sub.len() as i64);
    let at = |i: i64| s[i as usize..(i + m) as usize] == *sub;
    let mut seen = 0;
    if pos > 0 {
        let mut i = pos - 1;
        while i + m <= n {
            if at(i) {
                seen += 1;
                if seen == occ {
                    return i + 1;
                }
            }
            i += 1;
        }
    } else {
        let mut i = (n + pos).min(n - m);
        while i >= 0 {
            if at(i) {
                seen += 1;
                if seen == occ {
                    return i + 1;
                }
            }
            i -= 1;
        }
    }
    0
}

pub(super) fn instr(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let pos = a.get(2).and_then(int).unwrap_or(1);
    let occ = a.get(3).and_then(int).unwrap_or(1);
    if pos == 0 {
        return Err(fail("INSTR", "the position must not be 0"));
    }
    if occ <= 0 {
        return Err(fail(
            "INSTR",
            format!("the occurrence must be positive, got {occ}"),
        ));
    }
    let r = match (text(&a[0]), text(&a[1])) {
        (Some(x), Some(y)) => {
            let x: Vec<char> = x.chars().collect();
            let y: Vec<char> = y.chars().collect();
            find_nth(&x, &y, pos, occ)
        }
        _ => find_nth(
            bytes(&a[0]).unwrap_or_default(),
            bytes(&a[1]).unwrap_or_default(),
            pos,
            occ,
        ),
    };
    Ok(int_value(r))
}

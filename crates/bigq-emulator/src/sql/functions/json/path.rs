//! JSONPath as BigQuery reads it: `$` then `.key`, `[n]` and quoted keys. The legacy
//! functions (`JSON_EXTRACT*`) quote a key as `['a.b']` (and take `[key]` bare); the
//! standard ones (`JSON_QUERY`, `JSON_VALUE`, the mutators) quote it as `."a.b"`.

use serde_json::Value;

/// Which quoting a function's paths use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Syntax {
    Legacy,
    Standard,
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Index(i64),
}

/// A parsed path.
pub(super) type Path = Vec<Step>;

/// Parses `path` for `function`, or BigQuery's complaint about it.
pub(super) fn parse(function: &str, path: &str, syntax: Syntax) -> Result<Path, String> {
    let bad = |why: &str| format!("{function}: Invalid JSONPath {path:?}: {why}");
    let rest = path
        .strip_prefix('$')
        .ok_or_else(|| bad("JSONPath must start with '$'"))?;
    let b = rest.as_bytes();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                if syntax == Syntax::Standard && b.get(i) == Some(&b'"') {
                    let (key, next) =
                        quoted(rest, i, b'"').ok_or_else(|| bad("unterminated \""))?;
                    steps.push(Step::Key(key));
                    i = next;
                } else {
                    let start = i;
                    while i < b.len() && b[i] != b'.' && b[i] != b'[' {
                        i += 1;
                    }
                    if start == i {
                        return Err(bad("empty key"));
                    }
                    steps.push(Step::Key(rest[start..i].to_string()));
                }
            }
            b'[' => {
                i += 1;
                let step = if matches!(b.get(i), Some(b'\'') | Some(b'"')) {
                    let (key, next) =
                        quoted(rest, i, b[i]).ok_or_else(|| bad("unterminated quoted key"))?;
                    i = next;
                    Step::Key(key)
                } else {
                    let start = i;
                    while i < b.len() && b[i] != b']' {
                        i += 1;
                    }
                    let inner = rest[start..i].trim();
                    match inner.parse::<i64>() {
                        Ok(n) => Step::Index(n),
                        Err(_) if syntax == Syntax::Legacy && !inner.is_empty() => {
                            Step::Key(inner.to_string())
                        }
                        Err(_) => return Err(bad("a subscript must be a number")),
                    }
                };
                if b.get(i) != Some(&b']') {
                    return Err(bad("expected ']'"));
                }
                i += 1;
                steps.push(step);
            }
            _ => return Err(bad("unexpected character")),
        }
    }
    Ok(steps)
}

/// The quoted key starting at `at` (the quote) and the index after its closing quote; `\`
/// escapes the next character.
fn quoted(s: &str, at: usize, quote: u8) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() => {
                out.push(b[i + 1]);
                i += 2;
            }
            c if c == quote => return Some((String::from_utf8(out).ok()?, i + 1)),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    None
}

/// The value at `path` in `v`, if there is one.
pub(super) fn get<'a>(v: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, step| match (v, step) {
        (Value::Object(m), Step::Key(k)) => m.get(k),
        (Value::Array(a), Step::Index(n)) => usize::try_from(*n).ok().and_then(|n| a.get(n)),
        (Value::Object(m), Step::Index(n)) => m.get(&n.to_string()),
        _ => None,
    })
}

/// The value at `path` in `v`, mutable.
pub(super) fn get_mut<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, step| match (v, step) {
        (Value::Object(m), Step::Key(k)) => m.get_mut(k),
        (Value::Array(a), Step::Index(n)) => {
            usize::try_from(*n).ok().and_then(move |n| a.get_mut(n))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Step {
        Step::Key(k.to_string())
    }

    #[test]
    fn paths_parse_in_both_syntaxes() {
        let p = parse("F", "$.class.students[0]", Syntax::Standard).unwrap();
        assert_eq!(p, vec![key("class"), key("students"), Step::Index(0)]);
        let p = parse("F", r#"$."a.b".c"#, Syntax::Standard).unwrap();
        assert_eq!(p, vec![key("a.b"), key("c")]);
        let p = parse("F", "$['a.b'].c", Syntax::Legacy).unwrap();
        assert_eq!(p, vec![key("a.b"), key("c")]);
        let p = parse("F", "$[fruits]", Syntax::Legacy).unwrap();
        assert_eq!(p, vec![key("fruits")]);
        assert_eq!(parse("F", "$", Syntax::Legacy).unwrap(), vec![]);
        assert!(parse("F", "a", Syntax::Standard).is_err());
        assert!(parse("F", "$a", Syntax::Standard).is_err());
    }
}

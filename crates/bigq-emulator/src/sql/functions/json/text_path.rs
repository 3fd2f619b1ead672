//! A path found in JSON-formatted STRING text as BigQuery finds it: reading the text only as
//! far as the value the path names, so text that is malformed after it still gives the value
//! (`JSON_VALUE('{"hello": "world"', '$.hello')` is `world`), the first of two members of
//! one name is the one found, and the value found is the text as written (a member repeated
//! inside it stays: `JSON_QUERY('{"key": 1, "key": 2}', '$')` is `{"key":1,"key":2}`).

use super::path::Step;

fn space(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The end of the string that starts at `i` (its opening quote), and its text unescaped.
fn string(text: &str, i: usize) -> Option<(usize, String)> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'"' => {
                let raw = &text[i..=j];
                let s: String = serde_json::from_str(raw).ok()?;
                return Some((j + 1, s));
            }
            b'\\' => j += 2,
            c if c < 0x20 => return None,
            _ => j += 1,
        }
    }
    None
}

/// The end of the JSON value that starts at `i` (after any space), checked as it is read.
fn value_end(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let i = space(b, i);
    match *b.get(i)? {
        b'"' => string(text, i).map(|(end, _)| end),
        b'{' => {
            let mut j = space(b, i + 1);
            if b.get(j) == Some(&b'}') {
                return Some(j + 1);
            }
            loop {
                let (end, _) = string(text, j)?;
                j = space(b, end);
                if b.get(j) != Some(&b':') {
                    return None;
                }
                j = space(b, value_end(text, j + 1)?);
                match b.get(j)? {
                    b',' => j = space(b, j + 1),
                    b'}' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b'[' => {
            let mut j = space(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Some(j + 1);
            }
            loop {
                j = space(b, value_end(text, j)?);
                match b.get(j)? {
                    b',' => j += 1,
                    b']' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b't' => text[i..].starts_with("true").then_some(i + 4),
        b'f' => text[i..].starts_with("false").then_some(i + 5),
        b'n' => text[i..].starts_with("null").then_some(i + 4),
        b'-' | b'0'..=b'9' => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            {
                j += 1;
            }
            serde_json::from_str::<serde_json::Value>(&text[i..j])
                .ok()
                .map(|_| j)
        }
        _ => None,
    }
}

/// The text of the value at `path` in `text` (read from `i`), if the text holds one there.
fn find_at<'a>(text: &'a str, i: usize, path: &[Step]) -> Option<&'a str> {
    let b = text.as_bytes();
    let i = space(b, i);
    let Some((step, rest)) = path.split_first() else {
        let end = value_end(text, i)?;
        return Some(&text[i..end]);
    };
    match (b.get(i)?, step) {
        (b'{', Step::Key(_) | Step::Index(_)) => {
            let want = match step {
                Step::Key(k) => k.clone(),
                Step::Index(n) => n.to_string(),
            };
            let mut j = space(b, i + 1);
            if b.get(j) == Some(&b'}') {
                return None;
            }
            loop {
                let (end, key) = string(text, j)?;
                j = space(b, end);
                if b.get(j) != Some(&b':') {
                    return None;
                }
                if key == want {
                    return find_at(text, j + 1, rest);
                }
                j = space(b, value_end(text, j + 1)?);
                match b.get(j)? {
                    b',' => j = space(b, j + 1),
                    _ => return None,
                }
            }
        }
        (b'[', Step::Index(n)) => {
            let n = usize::try_from(*n).ok()?;
            let mut j = space(b, i + 1);
            if b.get(j) == Some(&b']') {
                return None;
            }
            for _ in 0..n {
                j = space(b, value_end(text, j)?);
                match b.get(j)? {
                    b',' => j += 1,
                    _ => return None,
                }
            }
            find_at(text, j, rest)
        }
        _ => None,
    }
}

/// The text of the value at `path` in JSON-formatted `text`.
pub(super) fn find<'a>(text: &'a str, path: &[Step]) -> Option<&'a str> {
    find_at(text, 0, path)
}

/// JSON text without the space between its tokens.
pub(super) fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn reads_only_as_far_as_the_value() {
        assert_eq!(
            find(r#"{"hello": "world""#, &[key("hello")]),
            Some(r#""world""#)
        );
        assert_eq!(find(r#"{"a": 1, "a": 2}"#, &[key("a")]), Some("1"));
        assert_eq!(
            find(
                r#"{"a": [10, {"b": true}]}"#,
                &[key("a"), Step::Index(1), key("b")]
            ),
            Some("true")
        );
        assert_eq!(find(r#"{"a": 1"#, &[key("b")]), None);
        assert_eq!(find(r#"{"a" 1}"#, &[key("a")]), None);
        assert_eq!(
            compact(r#"{"key": 1, "key": 2, "s": "a b"}"#),
            r#"{"key":1,"key":2,"s":"a b"}"#
        );
    }
}

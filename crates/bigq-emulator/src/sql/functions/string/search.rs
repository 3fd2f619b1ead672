//! `CONTAINS_SUBSTR`: a case-insensitive search, after NFKC, through a value and every field
//! and element of the STRUCT and ARRAY values it holds; in a JSON value, through its values,
//! its keys or both (`json_scope`: `JSON_VALUES`, the default, `JSON_KEYS`,
//! `JSON_KEYS_AND_VALUES`).

use datafusion::common::{Result as DfResult, ScalarValue};
use unicode_normalization::UnicodeNormalization;

use super::super::row::{Call, bq_type_name, elements, fail, int, text};

fn fold(s: &str) -> String {
    s.nfkc().collect::<String>().to_lowercase()
}

/// Whether `v` holds `needle`: `None` when it does not but holds a NULL.
fn holds(v: &ScalarValue, needle: &str) -> DfResult<Option<bool>> {
    if v.is_null() {
        return Ok(None);
    }
    if let Some(s) = text(v) {
        return Ok(Some(fold(s).contains(needle)));
    }
    if let Some(i) = int(v) {
        return Ok(Some(i.to_string().contains(needle)));
    }
    if let ScalarValue::Boolean(Some(b)) = v {
        return Ok(Some(b.to_string().contains(needle)));
    }
    let items: Vec<ScalarValue> = match v {
        ScalarValue::Struct(s) => s
            .columns()
            .iter()
            .map(|c| ScalarValue::try_from_array(c, 0))
            .collect::<DfResult<_>>()?,
        _ => match elements(v)? {
            Some(items) => items,
            None => {
                return Err(fail(
                    "CONTAINS_SUBSTR",
                    format!(
                        "a value of type {} is not supported",
                        bq_type_name(&v.data_type())
                    ),
                ));
            }
        },
    };
    let mut null = false;
    for item in &items {
        match holds(item, needle)? {
            Some(true) => return Ok(Some(true)),
            Some(false) => {}
            None => null = true,
        }
    }
    Ok(if null { None } else { Some(false) })
}

/// Whether a JSON value holds `needle` in the parts `keys` and `values` say.
fn json_holds(v: &serde_json::Value, needle: &str, keys: bool, values: bool) -> bool {
    use serde_json::Value as J;
    match v {
        J::Object(m) => m.iter().any(|(k, v)| {
            (keys && fold(k).contains(needle)) || json_holds(v, needle, keys, values)
        }),
        J::Array(items) => items.iter().any(|v| json_holds(v, needle, keys, values)),
        J::String(s) => values && fold(s).contains(needle),
        J::Null => false,
        other => values && fold(&other.to_string()).contains(needle),
    }
}

pub(super) fn contains_substr(call: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let Some(needle) = text(&a[1]) else {
        return Ok(ScalarValue::Boolean(None));
    };
    let needle = fold(needle);
    let json = call
        .fields
        .first()
        .and_then(|f| f.metadata().get("ARROW:extension:name"))
        .is_some_and(|n| n == "google:sqlType:json");
    if json {
        let Some(doc) = text(&a[0]) else {
            return Ok(ScalarValue::Boolean(None));
        };
        let scope = match a.get(2) {
            None => "JSON_VALUES".to_string(),
            Some(v) => match text(v) {
                Some(s) => s.to_ascii_uppercase(),
                None => return Ok(ScalarValue::Boolean(None)),
            },
        };
        let (keys, values) = match scope.as_str() {
            "JSON_VALUES" => (false, true),
            "JSON_KEYS" => (true, false),
            "JSON_KEYS_AND_VALUES" => (true, true),
            other => {
                return Err(fail(
                    "CONTAINS_SUBSTR",
                    format!(
                        "json_scope must be JSON_VALUES, JSON_KEYS or JSON_KEYS_AND_VALUES, got {other}"
                    ),
                ));
            }
        };
        let v: serde_json::Value = serde_json::from_str(doc)
            .map_err(|e| fail("CONTAINS_SUBSTR", format!("invalid JSON: {e}")))?;
        return Ok(ScalarValue::Boolean(Some(json_holds(
            &v, &needle, keys, values,
        ))));
    }
    if a.len() > 2 {
        return Err(fail(
            "CONTAINS_SUBSTR",
            "json_scope applies to a JSON value only",
        ));
    }
    Ok(ScalarValue::Boolean(holds(&a[0], &needle)?))
}

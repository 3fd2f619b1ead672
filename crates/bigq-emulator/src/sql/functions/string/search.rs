//! `CONTAINS_SUBSTR`: a case-insensitive search, after NFKC, through a value and every field
//! and element of the STRUCT and ARRAY values it holds.

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

pub(super) fn contains_substr(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let Some(needle) = text(&a[1]) else {
        return Ok(ScalarValue::Boolean(None));
    };
    Ok(ScalarValue::Boolean(holds(&a[0], &fold(needle))?))
}

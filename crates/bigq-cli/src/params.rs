//! `--param name=TYPE:value` and `--bind TYPE:value` as bigq query parameters.
//!
//! The value is sent in BigQuery's text form, as the REST API takes it; BigQuery checks it
//! against the type. `TYPE` is any scalar type name (`INT64`, `STRING`, `DATE`, ...), or
//! `ARRAY<T>` with a JSON array of values (`ARRAY<INT64>:[1,2,3]`). `NULL` after the colon
//! is a NULL of the type (so the STRING `"NULL"` is written as a literal in the SQL).

use bigq::query::{Param, ParamType, ParamValue};
use bigq::schema::FieldType;

use crate::error::{Failure, Result};

/// Parses `name=TYPE:value`.
pub fn named(arg: &str) -> Result<(String, Param)> {
    let (name, rest) = arg
        .split_once('=')
        .ok_or_else(|| Failure::new(format!("--param {arg:?}: expected NAME=TYPE:VALUE")))?;
    let name = name.trim().trim_start_matches('@');
    if name.is_empty() {
        return Err(Failure::new(format!("--param {arg:?}: the name is empty")));
    }
    let p = typed(rest).map_err(|e| Failure::new(format!("--param {arg:?}: {e}")))?;
    Ok((name.to_string(), p))
}

/// Parses `TYPE:value`.
pub fn positional(arg: &str) -> Result<Param> {
    typed(arg).map_err(|e| Failure::new(format!("--bind {arg:?}: {e}")))
}

fn typed(arg: &str) -> Result<Param, String> {
    let (ty, value) = split_type(arg).ok_or("expected TYPE:VALUE, e.g. INT64:10")?;
    let ty = param_type(ty)?;
    if value == "NULL" {
        return Ok(Param::null(ty));
    }
    let value = match &ty {
        ParamType::Scalar(_) => ParamValue::Scalar(value.to_string()),
        ParamType::Array(_) => {
            let items: Vec<serde_json::Value> = serde_json::from_str(value)
                .map_err(|e| format!("an ARRAY value is a JSON array: {e}"))?;
            ParamValue::Array(
                items
                    .into_iter()
                    .map(|v| match v {
                        serde_json::Value::Null => ParamValue::Null,
                        serde_json::Value::String(s) => ParamValue::Scalar(s),
                        other => ParamValue::Scalar(other.to_string()),
                    })
                    .collect(),
            )
        }
        _ => return Err("only scalar and ARRAY parameters are supported".into()),
    };
    Ok(Param { ty, value })
}

/// Splits at the colon after the type (`ARRAY<INT64>:[1]`, `TIMESTAMP:2024-01-01 10:00:00`).
fn split_type(arg: &str) -> Option<(&str, &str)> {
    let end = arg.find('>').map_or(0, |i| i + 1);
    let colon = end + arg[end..].find(':')?;
    Some((arg[..colon].trim(), &arg[colon + 1..]))
}

fn param_type(name: &str) -> Result<ParamType, String> {
    let upper = name.to_ascii_uppercase();
    if let Some(inner) = upper
        .strip_prefix("ARRAY<")
        .and_then(|s| s.strip_suffix('>'))
    {
        return Ok(ParamType::Array(Box::new(scalar(inner.trim())?)));
    }
    scalar(&upper)
}

fn scalar(name: &str) -> Result<ParamType, String> {
    match FieldType::parse(name) {
        FieldType::Unknown(t) => Err(format!("unknown type {t}")),
        FieldType::Record | FieldType::Range => {
            Err(format!("{name} parameters are not supported here"))
        }
        t => Ok(ParamType::Scalar(t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_scalar() {
        let (name, p) = named("min=INT64:10").unwrap();
        assert_eq!(name, "min");
        assert_eq!(p.ty, ParamType::Scalar(FieldType::Int64));
        assert_eq!(p.value, ParamValue::Scalar("10".into()));
    }

    #[test]
    fn colons_stay_in_the_value() {
        let p = positional("TIMESTAMP:2024-01-02 10:11:12").unwrap();
        assert_eq!(p.ty, ParamType::Scalar(FieldType::Timestamp));
        assert_eq!(p.value, ParamValue::Scalar("2024-01-02 10:11:12".into()));
        let p = positional("string:a:b").unwrap();
        assert_eq!(p.value, ParamValue::Scalar("a:b".into()));
    }

    #[test]
    fn arrays_and_nulls() {
        let (_, p) = named("ids=ARRAY<INT64>:[1, 2]").unwrap();
        assert_eq!(
            p.ty,
            ParamType::Array(Box::new(ParamType::Scalar(FieldType::Int64)))
        );
        assert_eq!(
            p.value,
            ParamValue::Array(vec![
                ParamValue::Scalar("1".into()),
                ParamValue::Scalar("2".into())
            ])
        );
        let p = positional("DATE:NULL").unwrap();
        assert_eq!(p.value, ParamValue::Null);
    }

    #[test]
    fn errors_name_the_argument() {
        let e = named("min=10").unwrap_err().to_string();
        assert_eq!(e, "--param \"min=10\": expected TYPE:VALUE, e.g. INT64:10");
        let e = named("min=INTEGRAL:10").unwrap_err().to_string();
        assert_eq!(e, "--param \"min=INTEGRAL:10\": unknown type INTEGRAL");
        let e = named("INT64:1").unwrap_err().to_string();
        assert!(e.contains("expected NAME=TYPE:VALUE"), "{e}");
        let e = positional("WHAT:1").unwrap_err().to_string();
        assert!(e.contains("unknown type WHAT"), "{e}");
    }
}

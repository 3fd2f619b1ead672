//! Serde helpers for BigQuery's REST int64 fields, which the API writes as JSON strings
//! (`"totalRows": "100"`). They read a string or a number and write a string; use them with
//! `#[serde(with = "bigq_codec::int64_text::opt_i64")]` on an `Option<i64>` field.

use std::fmt::Display;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serializer};

#[derive(Deserialize)]
#[serde(untagged)]
enum StrOrNum {
    S(String),
    I(i64),
    U(u64),
}

fn deserialize_opt<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr + TryFrom<i64> + TryFrom<u64>,
    <T as FromStr>::Err: Display,
{
    let out_of_range = || serde::de::Error::custom("integer out of range");
    match Option::<StrOrNum>::deserialize(d)? {
        None => Ok(None),
        Some(StrOrNum::I(i)) => T::try_from(i).map(Some).map_err(|_| out_of_range()),
        Some(StrOrNum::U(u)) => T::try_from(u).map(Some).map_err(|_| out_of_range()),
        Some(StrOrNum::S(s)) => s.parse().map(Some).map_err(serde::de::Error::custom),
    }
}

fn serialize_opt<T: Display, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// An `Option<i64>` written as a string.
pub mod opt_i64 {
    use serde::{Deserializer, Serializer};

    /// Writes the value as a JSON string.
    pub fn serialize<S: Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        super::serialize_opt(v, s)
    }

    /// Reads a string or a number.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        super::deserialize_opt(d)
    }
}

/// An `Option<u64>` written as a string.
pub mod opt_u64 {
    use serde::{Deserializer, Serializer};

    /// Writes the value as a JSON string.
    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        super::serialize_opt(v, s)
    }

    /// Reads a string or a number.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        super::deserialize_opt(d)
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct S {
        #[serde(default, with = "super::opt_i64")]
        a: Option<i64>,
        #[serde(default, with = "super::opt_u64")]
        b: Option<u64>,
    }

    #[test]
    fn strings_and_numbers() {
        let s: S = serde_json::from_str(r#"{"a":"-5","b":7}"#).unwrap();
        assert_eq!(
            s,
            S {
                a: Some(-5),
                b: Some(7)
            }
        );
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"a":"-5","b":"7"}"#);
        assert!(serde_json::from_str::<S>(r#"{"b":-1}"#).is_err());
        assert!(serde_json::from_str::<S>(r#"{"a":"x"}"#).is_err());
        assert_eq!(
            serde_json::from_str::<S>("{}").unwrap(),
            S { a: None, b: None }
        );
    }
}

/// An `i64` written as a string (a required field).
pub mod i64_text {
    use super::*;

    /// Writes the value as a JSON string.
    pub fn serialize<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Reads a string or a number.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        deserialize_opt(d)?.ok_or_else(|| serde::de::Error::custom("an int64 is required"))
    }
}

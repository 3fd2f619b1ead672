//! Query parameters: named (`@name`) and positional (`?`), of every BigQuery type.

use std::collections::BTreeMap;

use base64::Engine;
use bigq_codec::schema::FieldType;
use bigq_codec::value::{
    BigNumeric, Date, DateTime, Geography, Interval, Json, Numeric, Range, Time, Timestamp,
};
use gcloud_sdk::google::cloud::bigquery::v2 as pb;
use serde_json::{Value, json};

/// The type of a query parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamType {
    /// A scalar of this type.
    Scalar(FieldType),
    /// ARRAY of the element type.
    Array(Box<ParamType>),
    /// STRUCT with these fields, in order.
    Struct(Vec<(String, ParamType)>),
    /// RANGE of DATE, DATETIME or TIMESTAMP.
    Range(FieldType),
}

impl ParamType {
    fn to_json(&self) -> Value {
        match self {
            ParamType::Scalar(t) => json!({ "type": t.standard_sql_name() }),
            ParamType::Array(t) => json!({ "type": "ARRAY", "arrayType": t.to_json() }),
            ParamType::Struct(fields) => json!({
                "type": "STRUCT",
                "structTypes": fields.iter().map(|(n, t)| json!({ "name": n, "type": t.to_json() })).collect::<Vec<_>>(),
            }),
            ParamType::Range(t) => {
                json!({ "type": "RANGE", "rangeElementType": { "type": t.standard_sql_name() } })
            }
        }
    }
}

impl ParamType {
    fn to_proto(&self) -> pb::QueryParameterType {
        let of = |t: &str| pb::QueryParameterType {
            r#type: t.to_string(),
            ..Default::default()
        };
        match self {
            ParamType::Scalar(t) => of(t.standard_sql_name()),
            ParamType::Array(t) => pb::QueryParameterType {
                array_type: Some(Box::new(t.to_proto())),
                ..of("ARRAY")
            },
            ParamType::Struct(fields) => pb::QueryParameterType {
                struct_types: fields
                    .iter()
                    .map(|(n, t)| pb::QueryParameterStructType {
                        name: n.clone(),
                        r#type: Some(t.to_proto()),
                        description: String::new(),
                    })
                    .collect(),
                ..of("STRUCT")
            },
            ParamType::Range(t) => pb::QueryParameterType {
                range_element_type: Some(Box::new(of(t.standard_sql_name()))),
                ..of("RANGE")
            },
        }
    }
}

/// The value of a query parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// NULL.
    Null,
    /// A scalar in BigQuery's text form.
    Scalar(String),
    /// The elements of an ARRAY.
    Array(Vec<ParamValue>),
    /// The fields of a STRUCT, by name.
    Struct(Vec<(String, ParamValue)>),
    /// A RANGE; `None` is unbounded.
    Range(Option<String>, Option<String>),
}

impl ParamValue {
    fn to_json(&self) -> Value {
        match self {
            ParamValue::Null => json!({ "value": null }),
            ParamValue::Scalar(s) => json!({ "value": s }),
            ParamValue::Array(v) => {
                json!({ "arrayValues": v.iter().map(ParamValue::to_json).collect::<Vec<_>>() })
            }
            ParamValue::Struct(fields) => {
                let map: BTreeMap<&str, Value> = fields
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.to_json()))
                    .collect();
                json!({ "structValues": map })
            }
            ParamValue::Range(s, e) => {
                json!({ "rangeValue": { "start": { "value": s }, "end": { "value": e } } })
            }
        }
    }
}

impl ParamValue {
    fn to_proto(&self) -> pb::QueryParameterValue {
        let scalar = |v: &Option<String>| pb::QueryParameterValue {
            value: v.clone(),
            ..Default::default()
        };
        match self {
            ParamValue::Null => scalar(&None),
            ParamValue::Scalar(s) => scalar(&Some(s.clone())),
            ParamValue::Array(v) => pb::QueryParameterValue {
                array_values: v.iter().map(ParamValue::to_proto).collect(),
                ..Default::default()
            },
            ParamValue::Struct(fields) => pb::QueryParameterValue {
                struct_values: fields
                    .iter()
                    .map(|(n, v)| (n.clone(), v.to_proto()))
                    .collect(),
                ..Default::default()
            },
            ParamValue::Range(s, e) => pb::QueryParameterValue {
                range_value: Some(Box::new(pb::RangeValue {
                    start: Some(Box::new(scalar(s))),
                    end: Some(Box::new(scalar(e))),
                })),
                ..Default::default()
            },
        }
    }
}

/// A typed parameter value; build one with `Param::from(value)` (or pass the value where
/// `impl Into<Param>` is taken), [`Param::bytes`], [`Param::structure`], [`Param::null`].
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The type.
    pub ty: ParamType,
    /// The value.
    pub value: ParamValue,
}

impl Param {
    /// A NULL of the given type.
    pub fn null(ty: ParamType) -> Self {
        Param {
            ty,
            value: ParamValue::Null,
        }
    }

    /// BYTES.
    pub fn bytes(b: impl AsRef<[u8]>) -> Self {
        Param {
            ty: ParamType::Scalar(FieldType::Bytes),
            value: ParamValue::Scalar(base64::engine::general_purpose::STANDARD.encode(b)),
        }
    }

    /// A STRUCT of named fields.
    ///
    /// ```
    /// use bigq::query::Param;
    /// let p = Param::structure([("id", Param::from(7)), ("name", Param::from("x"))]);
    /// ```
    pub fn structure<N: Into<String>>(fields: impl IntoIterator<Item = (N, Param)>) -> Self {
        let (types, values) = fields
            .into_iter()
            .map(|(n, p)| {
                let n = n.into();
                ((n.clone(), p.ty), (n, p.value))
            })
            .unzip();
        Param {
            ty: ParamType::Struct(types),
            value: ParamValue::Struct(values),
        }
    }

    /// An ARRAY of parameters that all have `element` type.
    pub fn array(element: ParamType, values: impl IntoIterator<Item = Param>) -> Self {
        Param {
            ty: ParamType::Array(Box::new(element)),
            value: ParamValue::Array(values.into_iter().map(|p| p.value).collect()),
        }
    }

    /// The v2 gRPC `QueryParameter`, with `name` for named parameters (empty for
    /// positional ones); the same content as [`to_json`](Self::to_json).
    pub(crate) fn to_proto(&self, name: Option<&str>) -> pb::QueryParameter {
        pb::QueryParameter {
            name: name.unwrap_or_default().to_string(),
            parameter_type: Some(self.ty.to_proto()),
            parameter_value: Some(self.value.to_proto()),
        }
    }

    /// The REST `QueryParameter` JSON, with `name` for named parameters.
    pub(crate) fn to_json(&self, name: Option<&str>) -> Value {
        let mut v =
            json!({ "parameterType": self.ty.to_json(), "parameterValue": self.value.to_json() });
        if let (Some(n), Some(fields)) = (name, v.as_object_mut()) {
            fields.insert("name".into(), Value::String(n.to_string()));
        }
        v
    }
}

/// A Rust type that maps to a BigQuery parameter type.
pub trait ToParam {
    /// The BigQuery type of every value of `Self`.
    fn param_type() -> ParamType;
    /// The value.
    fn param_value(&self) -> ParamValue;
}

impl<T: ToParam> From<T> for Param {
    fn from(v: T) -> Self {
        Param {
            ty: T::param_type(),
            value: v.param_value(),
        }
    }
}

macro_rules! scalar_param {
    ($t:ty, $ft:expr, |$v:ident| $e:expr) => {
        impl ToParam for $t {
            fn param_type() -> ParamType {
                ParamType::Scalar($ft)
            }
            fn param_value(&self) -> ParamValue {
                let $v = self;
                ParamValue::Scalar($e)
            }
        }
    };
}

scalar_param!(bool, FieldType::Bool, |v| v.to_string());
scalar_param!(i8, FieldType::Int64, |v| v.to_string());
scalar_param!(i16, FieldType::Int64, |v| v.to_string());
scalar_param!(i32, FieldType::Int64, |v| v.to_string());
scalar_param!(i64, FieldType::Int64, |v| v.to_string());
scalar_param!(u8, FieldType::Int64, |v| v.to_string());
scalar_param!(u16, FieldType::Int64, |v| v.to_string());
scalar_param!(u32, FieldType::Int64, |v| v.to_string());
scalar_param!(f32, FieldType::Float64, |v| float_text(*v as f64));
scalar_param!(f64, FieldType::Float64, |v| float_text(*v));
scalar_param!(str, FieldType::String, |v| v.to_string());
scalar_param!(String, FieldType::String, |v| v.clone());
scalar_param!(Numeric, FieldType::Numeric, |v| v.to_string());
scalar_param!(BigNumeric, FieldType::BigNumeric, |v| v.to_string());
scalar_param!(Date, FieldType::Date, |v| v.to_string());
scalar_param!(Time, FieldType::Time, |v| v.to_string());
scalar_param!(DateTime, FieldType::DateTime, |v| v.to_string());
scalar_param!(Timestamp, FieldType::Timestamp, |v| timestamp_text(*v));
scalar_param!(Interval, FieldType::Interval, |v| v.to_string());
scalar_param!(Json, FieldType::Json, |v| v.0.clone());
scalar_param!(Geography, FieldType::Geography, |v| v.0.clone());

fn float_text(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        format!("{v:?}")
    }
}

/// TIMESTAMP parameters are sent as `YYYY-MM-DD HH:MM:SS.ffffff+00:00`.
fn timestamp_text(t: Timestamp) -> String {
    let dt = DateTime::new(t.get());
    let (_, micros) = t.to_seconds_micros();
    format!("{} {}.{micros:06}+00:00", dt.date(), format_hms(dt.time()))
}

fn format_hms(t: Time) -> String {
    let s = t.get() / 1_000_000;
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

impl<T: ToParam + ?Sized> ToParam for &T {
    fn param_type() -> ParamType {
        T::param_type()
    }
    fn param_value(&self) -> ParamValue {
        (**self).param_value()
    }
}

impl<T: ToParam> ToParam for Option<T> {
    fn param_type() -> ParamType {
        T::param_type()
    }
    fn param_value(&self) -> ParamValue {
        match self {
            Some(v) => v.param_value(),
            None => ParamValue::Null,
        }
    }
}

impl<T: ToParam> ToParam for Vec<T> {
    fn param_type() -> ParamType {
        ParamType::Array(Box::new(T::param_type()))
    }
    fn param_value(&self) -> ParamValue {
        ParamValue::Array(self.iter().map(ToParam::param_value).collect())
    }
}

impl<T: ToParam> ToParam for [T] {
    fn param_type() -> ParamType {
        ParamType::Array(Box::new(T::param_type()))
    }
    fn param_value(&self) -> ParamValue {
        ParamValue::Array(self.iter().map(ToParam::param_value).collect())
    }
}

impl<T: ToParam, const N: usize> ToParam for [T; N] {
    fn param_type() -> ParamType {
        ParamType::Array(Box::new(T::param_type()))
    }
    fn param_value(&self) -> ParamValue {
        ParamValue::Array(self.iter().map(ToParam::param_value).collect())
    }
}

macro_rules! range_param {
    ($t:ty, $ft:expr) => {
        impl ToParam for Range<$t> {
            fn param_type() -> ParamType {
                ParamType::Range($ft)
            }
            fn param_value(&self) -> ParamValue {
                let text = |v: &Option<$t>| {
                    v.as_ref().map(|x| match x.param_value() {
                        ParamValue::Scalar(s) => s,
                        _ => unreachable!("scalar"),
                    })
                };
                ParamValue::Range(text(&self.start), text(&self.end))
            }
        }
    };
}

range_param!(Date, FieldType::Date);
range_param!(DateTime, FieldType::DateTime);
range_param!(Timestamp, FieldType::Timestamp);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shapes() {
        assert_eq!(
            Param::from(5i64).to_json(Some("n")),
            json!({"name":"n","parameterType":{"type":"INT64"},"parameterValue":{"value":"5"}})
        );
        assert_eq!(
            Param::from(vec![1i64, 2]).to_json(None),
            json!({"parameterType":{"type":"ARRAY","arrayType":{"type":"INT64"}},
                   "parameterValue":{"arrayValues":[{"value":"1"},{"value":"2"}]}})
        );
        assert_eq!(
            Param::structure([("a", Param::from(1i64)), ("b", Param::from("x"))]).to_json(None),
            json!({"parameterType":{"type":"STRUCT","structTypes":[{"name":"a","type":{"type":"INT64"}},{"name":"b","type":{"type":"STRING"}}]},
                   "parameterValue":{"structValues":{"a":{"value":"1"},"b":{"value":"x"}}}})
        );
        assert_eq!(
            Param::from(None::<String>).to_json(None),
            json!({"parameterType":{"type":"STRING"},"parameterValue":{"value":null}})
        );
        assert_eq!(
            Param::from(f64::NAN).value,
            ParamValue::Scalar("NaN".into())
        );
        assert_eq!(Param::from(0.1f64).value, ParamValue::Scalar("0.1".into()));
        assert_eq!(
            Param::bytes([0u8, 255]).value,
            ParamValue::Scalar("AP8=".into())
        );
        let ts: Timestamp = "2024-01-02T03:04:05.5Z".parse().unwrap();
        assert_eq!(
            Param::from(ts).value,
            ParamValue::Scalar("2024-01-02 03:04:05.500000+00:00".into())
        );
        let r: Range<Date> = "[2024-01-01, UNBOUNDED)".parse().unwrap();
        assert_eq!(
            Param::from(r).to_json(None)["parameterValue"],
            json!({"rangeValue":{"start":{"value":"2024-01-01"},"end":{"value":null}}})
        );
    }
}

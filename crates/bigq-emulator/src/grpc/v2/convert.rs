//! The v2 protobuf messages to and from the forms `crate::api` takes: query
//! configurations and parameters in BigQuery's JSON form, schemas as bigq-codec's
//! `TableFieldSchema`. The JSON names are those of the REST API, which is the proto3 JSON
//! mapping of these same messages.

use std::collections::HashMap;

use bigq_codec::schema::TableFieldSchema as CodecField;
use gcloud_sdk::google::cloud::bigquery::v2::{
    DatasetReference, QueryParameter, QueryParameterStructType, QueryParameterType,
    QueryParameterValue, RangeValue, TableFieldSchema, TableReference, TableSchema,
    table_field_schema::FieldElementType,
};
use serde_json::{Map, Value, json};

use crate::error::BqError;

/// The string at `v[key]`, empty when absent or not a string (proto3's unset string).
fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// A proto schema as bigq-codec's fields (type names parsed as REST parses them).
pub fn schema_from_proto(schema: Option<&TableSchema>) -> Result<Vec<CodecField>, BqError> {
    let Some(s) = schema else {
        return Ok(Vec::new());
    };
    fn check(fields: &[TableFieldSchema]) -> Result<(), BqError> {
        for f in fields {
            if f.r#type.is_empty() {
                return Err(BqError::invalid(format!(
                    "Invalid table schema: field {} has no type",
                    f.name
                )));
            }
            check(&f.fields)?;
        }
        Ok(())
    }
    check(&s.fields)?;
    let json = Value::Array(s.fields.iter().map(field_json).collect());
    serde_json::from_value(json).map_err(|e| BqError::invalid(format!("Invalid table schema: {e}")))
}

fn field_json(f: &TableFieldSchema) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), f.name.clone().into());
    m.insert("type".into(), f.r#type.clone().into());
    if !f.mode.is_empty() {
        m.insert("mode".into(), f.mode.clone().into());
    }
    if !f.fields.is_empty() {
        m.insert(
            "fields".into(),
            Value::Array(f.fields.iter().map(field_json).collect()),
        );
    }
    if let Some(d) = &f.description {
        m.insert("description".into(), d.clone().into());
    }
    if let Some(r) = &f.range_element_type {
        m.insert("rangeElementType".into(), json!({"type": r.r#type}));
    }
    for (k, v) in [
        ("maxLength", f.max_length),
        ("precision", f.precision),
        ("scale", f.scale),
    ] {
        if v != 0 {
            m.insert(k.into(), v.to_string().into());
        }
    }
    Value::Object(m)
}

/// bigq-codec's fields as the proto schema.
pub fn schema_to_proto(fields: &[CodecField]) -> TableSchema {
    TableSchema {
        fields: fields.iter().map(field_to_proto).collect(),
        ..Default::default()
    }
}

fn field_to_proto(f: &CodecField) -> TableFieldSchema {
    // The REST form is the reference: read the names BigQuery reports back from it.
    let j = serde_json::to_value(f).unwrap_or(Value::Null);
    let int = |k: &str| {
        j.get(k)
            .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
            .unwrap_or(0)
    };
    TableFieldSchema {
        name: f.name.clone(),
        r#type: text(&j, "type"),
        mode: text(&j, "mode"),
        fields: f.fields.iter().map(field_to_proto).collect(),
        description: f.description.clone(),
        max_length: int("maxLength"),
        precision: int("precision"),
        scale: int("scale"),
        range_element_type: j
            .pointer("/rangeElementType/type")
            .and_then(Value::as_str)
            .map(|t| FieldElementType {
                r#type: t.to_string(),
            }),
        ..Default::default()
    }
}

/// A proto table reference as the JSON one.
pub fn table_ref_json(t: &TableReference) -> Value {
    json!({"projectId": t.project_id, "datasetId": t.dataset_id, "tableId": t.table_id})
}

/// A JSON table reference as the proto one.
pub fn table_ref_proto(v: &Value) -> TableReference {
    TableReference {
        project_id: text(v, "projectId"),
        dataset_id: text(v, "datasetId"),
        table_id: text(v, "tableId"),
    }
}

/// A proto dataset reference as the JSON one.
fn dataset_ref_json(d: &DatasetReference) -> Value {
    let mut v = json!({"datasetId": d.dataset_id});
    if !d.project_id.is_empty() {
        v["projectId"] = d.project_id.clone().into();
    }
    v
}

fn dataset_ref_proto(v: &Value) -> DatasetReference {
    DatasetReference {
        project_id: text(v, "projectId"),
        dataset_id: text(v, "datasetId"),
    }
}

/// Query parameters as their JSON form (`queryParameters`).
fn params_json(params: &[QueryParameter]) -> Result<Value, BqError> {
    params
        .iter()
        .map(|p| {
            let t = p.parameter_type.as_ref().ok_or_else(|| {
                BqError::invalid(format!(
                    "Query parameter '{}' has no parameter_type",
                    p.name
                ))
            })?;
            let mut m = Map::new();
            if !p.name.is_empty() {
                m.insert("name".into(), p.name.clone().into());
            }
            m.insert("parameterType".into(), param_type_json(t));
            m.insert(
                "parameterValue".into(),
                match &p.parameter_value {
                    Some(v) => param_value_json(v)?,
                    None => json!({}),
                },
            );
            Ok(Value::Object(m))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn param_type_json(t: &QueryParameterType) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), t.r#type.clone().into());
    if let Some(a) = &t.array_type {
        m.insert("arrayType".into(), param_type_json(a));
    }
    if !t.struct_types.is_empty() {
        let fields = t
            .struct_types
            .iter()
            .map(|f| {
                let mut s = Map::new();
                if !f.name.is_empty() {
                    s.insert("name".into(), f.name.clone().into());
                }
                if let Some(ft) = &f.r#type {
                    s.insert("type".into(), param_type_json(ft));
                }
                Value::Object(s)
            })
            .collect();
        m.insert("structTypes".into(), Value::Array(fields));
    }
    if let Some(r) = &t.range_element_type {
        m.insert("rangeElementType".into(), param_type_json(r));
    }
    Value::Object(m)
}

fn param_value_json(v: &QueryParameterValue) -> Result<Value, BqError> {
    if !v.alt_struct_values.is_empty() {
        return Err(BqError::unsupported(
            "alt_struct_values in a query parameter (use struct_values)",
        ));
    }
    let mut m = Map::new();
    if let Some(s) = &v.value {
        m.insert("value".into(), s.clone().into());
    }
    if !v.array_values.is_empty() {
        m.insert(
            "arrayValues".into(),
            Value::Array(
                v.array_values
                    .iter()
                    .map(param_value_json)
                    .collect::<Result<_, _>>()?,
            ),
        );
    }
    if !v.struct_values.is_empty() {
        let mut s = Map::new();
        for (k, f) in &v.struct_values {
            s.insert(k.clone(), param_value_json(f)?);
        }
        m.insert("structValues".into(), Value::Object(s));
    }
    if let Some(r) = &v.range_value {
        let mut rv = Map::new();
        if let Some(s) = &r.start {
            rv.insert("start".into(), param_value_json(s)?);
        }
        if let Some(e) = &r.end {
            rv.insert("end".into(), param_value_json(e)?);
        }
        m.insert("rangeValue".into(), Value::Object(rv));
    }
    Ok(Value::Object(m))
}

/// JSON `queryParameters` back as protos, for a job's reported configuration.
pub fn params_proto(v: Option<&Value>) -> Vec<QueryParameter> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|p| QueryParameter {
                    name: text(p, "name"),
                    parameter_type: p.get("parameterType").map(param_type_proto),
                    parameter_value: p.get("parameterValue").map(param_value_proto),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn param_type_proto(v: &Value) -> QueryParameterType {
    QueryParameterType {
        r#type: text(v, "type"),
        array_type: v.get("arrayType").map(|a| Box::new(param_type_proto(a))),
        struct_types: v
            .get("structTypes")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|f| QueryParameterStructType {
                        name: text(f, "name"),
                        r#type: f.get("type").map(param_type_proto),
                        description: String::new(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        range_element_type: v
            .get("rangeElementType")
            .map(|r| Box::new(param_type_proto(r))),
        ..Default::default()
    }
}

fn param_value_proto(v: &Value) -> QueryParameterValue {
    QueryParameterValue {
        value: v.get("value").and_then(Value::as_str).map(str::to_string),
        array_values: v
            .get("arrayValues")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(param_value_proto).collect())
            .unwrap_or_default(),
        struct_values: v
            .get("structValues")
            .and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .map(|(k, f)| (k.clone(), param_value_proto(f)))
                    .collect::<HashMap<_, _>>()
            })
            .unwrap_or_default(),
        range_value: v.get("rangeValue").map(|r| {
            Box::new(RangeValue {
                start: r.get("start").map(|s| Box::new(param_value_proto(s))),
                end: r.get("end").map(|e| Box::new(param_value_proto(e))),
            })
        }),
        alt_struct_values: Vec::new(),
    }
}

/// The JSON query configuration of a v2 `JobConfigurationQuery`.
pub fn job_query_json(
    q: &gcloud_sdk::google::cloud::bigquery::v2::JobConfigurationQuery,
) -> Result<Value, BqError> {
    let mut m = Map::new();
    m.insert("query".into(), q.query.clone().into());
    if let Some(t) = &q.destination_table {
        m.insert("destinationTable".into(), table_ref_json(t));
    }
    if let Some(d) = &q.default_dataset {
        m.insert("defaultDataset".into(), dataset_ref_json(d));
    }
    for (k, v) in [
        ("createDisposition", &q.create_disposition),
        ("writeDisposition", &q.write_disposition),
        ("priority", &q.priority),
        ("parameterMode", &q.parameter_mode),
    ] {
        if !v.is_empty() {
            m.insert(k.into(), v.clone().into());
        }
    }
    if let Some(l) = q.use_legacy_sql {
        m.insert("useLegacySql".into(), l.into());
    }
    if let Some(c) = q.use_query_cache {
        m.insert("useQueryCache".into(), c.into());
    }
    if !q.query_parameters.is_empty() {
        m.insert("queryParameters".into(), params_json(&q.query_parameters)?);
    }
    if let Some(b) = q.maximum_bytes_billed {
        // As REST writes it: an int64 as a string.
        m.insert("maximumBytesBilled".into(), b.to_string().into());
    }
    Ok(Value::Object(m))
}

/// A job's JSON query configuration as the v2 message.
pub fn job_query_proto(
    v: &Value,
) -> gcloud_sdk::google::cloud::bigquery::v2::JobConfigurationQuery {
    gcloud_sdk::google::cloud::bigquery::v2::JobConfigurationQuery {
        query: text(v, "query"),
        destination_table: v.get("destinationTable").map(table_ref_proto),
        default_dataset: v.get("defaultDataset").map(dataset_ref_proto),
        create_disposition: text(v, "createDisposition"),
        write_disposition: text(v, "writeDisposition"),
        priority: text(v, "priority"),
        parameter_mode: text(v, "parameterMode"),
        use_legacy_sql: v.get("useLegacySql").and_then(Value::as_bool),
        use_query_cache: v.get("useQueryCache").and_then(Value::as_bool),
        query_parameters: params_proto(v.get("queryParameters")),
        maximum_bytes_billed: v
            .get("maximumBytesBilled")
            .and_then(|b| b.as_i64().or_else(|| b.as_str()?.parse().ok())),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_round_trip_through_json() {
        let p = QueryParameter {
            name: "xs".into(),
            parameter_type: Some(QueryParameterType {
                r#type: "ARRAY".into(),
                array_type: Some(Box::new(QueryParameterType {
                    r#type: "INT64".into(),
                    ..Default::default()
                })),
                ..Default::default()
            }),
            parameter_value: Some(QueryParameterValue {
                array_values: vec![
                    QueryParameterValue {
                        value: Some("1".into()),
                        ..Default::default()
                    },
                    QueryParameterValue {
                        value: Some("2".into()),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }),
        };
        let j = params_json(std::slice::from_ref(&p)).unwrap();
        assert_eq!(
            j,
            json!([{"name": "xs", "parameterType": {"type": "ARRAY", "arrayType": {"type": "INT64"}},
                    "parameterValue": {"arrayValues": [{"value": "1"}, {"value": "2"}]}}])
        );
        assert_eq!(params_proto(Some(&j)), vec![p]);
    }

    #[test]
    fn schemas_round_trip_and_bad_types_are_errors() {
        let proto = TableSchema {
            fields: vec![
                TableFieldSchema {
                    name: "id".into(),
                    r#type: "INTEGER".into(),
                    mode: "REQUIRED".into(),
                    ..Default::default()
                },
                TableFieldSchema {
                    name: "tags".into(),
                    r#type: "STRING".into(),
                    mode: "REPEATED".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let codec = schema_from_proto(Some(&proto)).unwrap();
        assert_eq!(codec.len(), 2);
        assert_eq!(schema_to_proto(&codec), proto);
        let bad = TableSchema {
            fields: vec![TableFieldSchema {
                name: "x".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let e = schema_from_proto(Some(&bad)).unwrap_err();
        assert!(e.message.starts_with("Invalid table schema"), "{e}");
    }
}

//! Request bodies checked against the fields of BigQuery's REST resources, as BigQuery's
//! front end checks them before the API sees the request: a name the resource does not have,
//! or a value of the wrong JSON type, is a 400 naming the field by its path
//! (`Invalid JSON payload received. Unknown name "useLegacySQL" at 'query_request': Cannot
//! find field.`), where the emulator would otherwise ignore a misspelt option.
//!
//! The resources' fields are in [`super::fields`], generated from the v2 protos (the REST
//! resources are their JSON mapping). As protobuf's JSON parsers do, a field is found by its
//! JSON name or its proto name, and `null` stands for an absent value.

use serde_json::Value;

use crate::error::BqError;

/// What a field holds.
#[derive(Debug)]
pub(super) enum Kind {
    Str,
    Bool,
    /// int32, int64, uint64 or their wrappers: a number or a decimal string.
    Int,
    Double,
    Enum,
    /// A proto map: any keys.
    Map,
    /// A `google.protobuf.Struct`/`Value`, or a message this table does not describe.
    Any,
    Msg(&'static Message),
}

/// A field of a message.
#[derive(Debug)]
pub(super) struct Field {
    json: &'static str,
    proto: &'static str,
    kind: Kind,
    repeated: bool,
}

impl Field {
    pub(super) const fn new(
        json: &'static str,
        proto: &'static str,
        kind: Kind,
        repeated: bool,
    ) -> Self {
        Field {
            json,
            proto,
            kind,
            repeated,
        }
    }
}

/// A message: its name and fields.
#[derive(Debug)]
pub(super) struct Message {
    pub(super) name: &'static str,
    pub(super) fields: &'static [Field],
}

/// `tabledata.insertAll`'s body, which has no v2 proto.
pub(super) static INSERT_ALL: Message = Message {
    name: "TableDataInsertAllRequest",
    fields: &[
        Field::new("kind", "kind", Kind::Str, false),
        Field::new("skipInvalidRows", "skip_invalid_rows", Kind::Bool, false),
        Field::new(
            "ignoreUnknownValues",
            "ignore_unknown_values",
            Kind::Bool,
            false,
        ),
        Field::new("templateSuffix", "template_suffix", Kind::Str, false),
        Field::new("traceId", "trace_id", Kind::Str, false),
        Field::new("rows", "rows", Kind::Msg(&INSERT_ALL_ROW), true),
    ],
};

static INSERT_ALL_ROW: Message = Message {
    name: "TableDataInsertAllRequest.Rows",
    fields: &[
        Field::new("insertId", "insert_id", Kind::Str, false),
        Field::new("json", "json", Kind::Any, false),
    ],
};

/// Checks `body` as the message `message`, the request field `root` (`query_request`,
/// `job`, ...; empty for a body that is the request itself).
pub(super) fn check(body: &Value, message: &Message, root: &str) -> Result<(), BqError> {
    object(body, message, &Path::Root(root))
}

/// Where a value is in the body, written out (`query_request.labels`, `rows[3].json`) only
/// when an error names it: a well-formed body, every row of an `insertAll` included, is
/// checked without building a string per field.
enum Path<'a> {
    Root(&'a str),
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root(root) => f.write_str(root),
            Path::Field(Path::Root(""), field) => f.write_str(field),
            Path::Field(parent, field) => write!(f, "{parent}.{field}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

fn object(v: &Value, message: &Message, path: &Path<'_>) -> Result<(), BqError> {
    let Value::Object(map) = v else {
        return Err(invalid_value(path, message_type(message), v));
    };
    for (key, value) in map {
        let Some(field) = message
            .fields
            .iter()
            .find(|f| f.json == key || f.proto == key)
        else {
            return Err(payload(key, path, "Cannot find field."));
        };
        if value.is_null() {
            continue;
        }
        let here = Path::Field(path, field.proto);
        match value {
            Value::Array(items) if field.repeated => {
                for (i, item) in items.iter().enumerate() {
                    if !item.is_null() {
                        one(item, field, &Path::Index(&here, i))?;
                    }
                }
            }
            Value::Array(_) if !matches!(field.kind, Kind::Any) => {
                return Err(payload(
                    key,
                    path,
                    "Proto field is not repeating, cannot start list.",
                ));
            }
            _ if field.repeated => {
                return Err(invalid_value(&here, kind_name(&field.kind), value));
            }
            _ => one(value, field, &here)?,
        }
    }
    Ok(())
}

/// One value of `field` (an element, for a repeated field).
fn one(v: &Value, field: &Field, path: &Path<'_>) -> Result<(), BqError> {
    let ok = match (&field.kind, v) {
        (Kind::Any, _) => true,
        (Kind::Msg(m), _) => return object(v, m, path),
        (Kind::Str, Value::String(_)) => true,
        // The Python client sends FLOAT64 parameter values and integer insertIds as JSON
        // numbers; BigQuery takes them.
        (Kind::Str, Value::Number(_)) => true,
        (Kind::Bool, Value::Bool(_)) => true,
        (Kind::Bool, Value::String(s)) => s == "true" || s == "false",
        (Kind::Int, Value::Number(n)) => n.is_i64() || n.is_u64(),
        (Kind::Int, Value::String(s)) => s.parse::<i128>().is_ok(),
        (Kind::Double, Value::Number(_)) => true,
        (Kind::Double, Value::String(s)) => {
            matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") || s.parse::<f64>().is_ok()
        }
        (Kind::Enum, Value::String(_)) => true,
        (Kind::Enum, Value::Number(n)) => n.is_i64(),
        (Kind::Map, Value::Object(_)) => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(invalid_value(path, kind_name(&field.kind), v))
    }
}

fn message_type(m: &Message) -> String {
    format!("type.googleapis.com/google.cloud.bigquery.v2.{}", m.name)
}

fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Str => "TYPE_STRING".into(),
        Kind::Bool => "TYPE_BOOL".into(),
        Kind::Int => "TYPE_INT64".into(),
        Kind::Double => "TYPE_DOUBLE".into(),
        Kind::Enum => "TYPE_ENUM".into(),
        Kind::Map | Kind::Any => "TYPE_MESSAGE".into(),
        Kind::Msg(m) => message_type(m),
    }
}

/// `Invalid JSON payload received. Unknown name "k" at 'path': what`.
fn payload(key: &str, path: &Path<'_>, what: &str) -> BqError {
    let at = match path {
        Path::Root("") => String::new(),
        path => format!(" at '{path}'"),
    };
    BqError::invalid(format!(
        "Invalid JSON payload received. Unknown name \"{key}\"{at}: {what}"
    ))
}

/// `Invalid value at 'path' (TYPE_BOOL), "yes"`.
fn invalid_value(path: &Path<'_>, type_name: String, v: &Value) -> BqError {
    BqError::invalid(format!("Invalid value at '{path}' ({type_name}), {v}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rest::fields::{JOB, QUERY_REQUEST, TABLE};

    fn message(body: Value, m: &Message, root: &str) -> String {
        match check(&body, m, root) {
            Ok(()) => String::new(),
            Err(e) => e.message,
        }
    }

    #[test]
    fn well_formed_bodies_pass() {
        let q = json!({
            "query": "SELECT @x", "useLegacySql": false, "maxResults": "10", "timeoutMs": 5,
            "parameterMode": "NAMED", "labels": {"any": "key"}, "dryRun": null,
            "queryParameters": [{"name": "x", "parameterType": {"type": "INT64"},
                                 "parameterValue": {"value": "1"}}],
            "formatOptions": {"useInt64Timestamp": true},
            "connectionProperties": [{"key": "session_id", "value": "s"}],
            "default_dataset": {"projectId": "p", "datasetId": "d"},
        });
        assert_eq!(message(q, &QUERY_REQUEST, "query_request"), "");
        let t = json!({
            "tableReference": {"projectId": "p", "datasetId": "d", "tableId": "t"},
            "schema": {"fields": [{"name": "r", "type": "RECORD", "mode": "REPEATED",
                                   "fields": [{"name": "x", "type": "INT64"}]}]},
            "timePartitioning": {"type": "DAY", "field": "d"},
            "clustering": {"fields": ["a"]},
        });
        assert_eq!(message(t, &TABLE, "table"), "");
        let j = json!({"jobReference": {"jobId": "j"},
                       "configuration": {"query": {"query": "SELECT 1",
                           "destinationTable": {"projectId": "p", "datasetId": "d", "tableId": "t"},
                           "writeDisposition": "WRITE_TRUNCATE"}, "labels": {"a": "b"}}});
        assert_eq!(message(j, &JOB, "job"), "");
        let rows = json!({"rows": [{"insertId": "1", "json": {"anything": [1, {"x": 2}]}}],
                          "skipInvalidRows": true});
        assert_eq!(message(rows, &INSERT_ALL, ""), "");
    }

    #[test]
    fn unknown_names_and_wrong_types_are_named_by_path() {
        assert_eq!(
            message(
                json!({"query": "SELECT 1", "useLegacySQL": false}),
                &QUERY_REQUEST,
                "query_request"
            ),
            "Invalid JSON payload received. Unknown name \"useLegacySQL\" at 'query_request': \
             Cannot find field."
        );
        assert_eq!(
            message(
                json!({"maxResults": "ten"}),
                &QUERY_REQUEST,
                "query_request"
            ),
            "Invalid value at 'query_request.max_results' (TYPE_INT64), \"ten\""
        );
        assert_eq!(
            message(json!({"query": true}), &QUERY_REQUEST, "query_request"),
            "Invalid value at 'query_request.query' (TYPE_STRING), true"
        );
        // A number where a string is expected is taken, as BigQuery takes the Python
        // client's FLOAT64 parameter values.
        assert_eq!(
            message(json!({"query": 5}), &QUERY_REQUEST, "query_request"),
            ""
        );
        assert_eq!(
            message(
                json!({"schema": {"fields": [{"name": "a", "type": "INT64"},
                                             {"name": "b", "typ": "INT64"}]}}),
                &TABLE,
                "table"
            ),
            "Invalid JSON payload received. Unknown name \"typ\" at 'table.schema.fields[1]': \
             Cannot find field."
        );
        assert_eq!(
            message(
                json!({"timePartitioning": [{"type": "DAY"}]}),
                &TABLE,
                "table"
            ),
            "Invalid JSON payload received. Unknown name \"timePartitioning\" at 'table': \
             Proto field is not repeating, cannot start list."
        );
        assert_eq!(
            message(
                json!({"defaultDataset": "d"}),
                &QUERY_REQUEST,
                "query_request"
            ),
            "Invalid value at 'query_request.default_dataset' \
             (type.googleapis.com/google.cloud.bigquery.v2.DatasetReference), \"d\""
        );
        assert_eq!(
            message(json!({"rows": {"json": {}}}), &INSERT_ALL, ""),
            "Invalid value at 'rows' \
             (type.googleapis.com/google.cloud.bigquery.v2.TableDataInsertAllRequest.Rows), \
             {\"json\":{}}"
        );
        assert_eq!(
            message(json!([1]), &JOB, "job"),
            "Invalid value at 'job' (type.googleapis.com/google.cloud.bigquery.v2.Job), [1]"
        );
    }
}

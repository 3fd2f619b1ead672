//! The schema types: columns, modes, types, and their Arrow mapping.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow_schema::{
    DataType, Field, Fields, IntervalUnit, Schema as ArrowSchema, SchemaRef, TimeUnit,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::CodecError;

/// Arrow field metadata key naming an extension type.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Extension name BigQuery gives JSON columns.
pub const JSON_EXTENSION: &str = "google:sqlType:json";
/// Extension name BigQuery gives GEOGRAPHY columns.
pub const GEOGRAPHY_EXTENSION: &str = "google:sqlType:geography";

/// A BigQuery column type.
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldType {
    /// INT64 (`INTEGER` in legacy names).
    Int64,
    /// FLOAT64 (`FLOAT`).
    Float64,
    /// NUMERIC (`DECIMAL`).
    Numeric,
    /// BIGNUMERIC (`BIGDECIMAL`).
    BigNumeric,
    /// BOOL (`BOOLEAN`).
    Bool,
    /// STRING.
    String,
    /// BYTES.
    Bytes,
    /// DATE.
    Date,
    /// TIME.
    Time,
    /// DATETIME.
    DateTime,
    /// TIMESTAMP.
    Timestamp,
    /// GEOGRAPHY.
    Geography,
    /// JSON.
    Json,
    /// INTERVAL.
    Interval,
    /// RANGE; the element type is in [`TableFieldSchema::range_element_type`].
    Range,
    /// RECORD (`STRUCT`); the fields are in [`TableFieldSchema::fields`].
    Record,
    /// A type this version of bigq does not know. Kept so that listing a table with a new
    /// type works; decoding such a column is an error naming it.
    Unknown(String),
}

impl FieldType {
    /// The name BigQuery's REST API uses (legacy names for the types that have one).
    pub fn as_str(&self) -> &str {
        match self {
            FieldType::Int64 => "INTEGER",
            FieldType::Float64 => "FLOAT",
            FieldType::Numeric => "NUMERIC",
            FieldType::BigNumeric => "BIGNUMERIC",
            FieldType::Bool => "BOOLEAN",
            FieldType::String => "STRING",
            FieldType::Bytes => "BYTES",
            FieldType::Date => "DATE",
            FieldType::Time => "TIME",
            FieldType::DateTime => "DATETIME",
            FieldType::Timestamp => "TIMESTAMP",
            FieldType::Geography => "GEOGRAPHY",
            FieldType::Json => "JSON",
            FieldType::Interval => "INTERVAL",
            FieldType::Range => "RANGE",
            FieldType::Record => "RECORD",
            FieldType::Unknown(s) => s,
        }
    }

    /// The GoogleSQL name (`INT64`, `FLOAT64`, `BOOL`, `STRUCT`, ...), as used in query
    /// parameter types.
    pub fn standard_sql_name(&self) -> &str {
        match self {
            FieldType::Int64 => "INT64",
            FieldType::Float64 => "FLOAT64",
            FieldType::Bool => "BOOL",
            FieldType::Record => "STRUCT",
            other => other.as_str(),
        }
    }

    /// Parses a type name, legacy or GoogleSQL, case-insensitively.
    pub fn parse(name: &str) -> FieldType {
        match name.to_ascii_uppercase().as_str() {
            "INTEGER" | "INT64" => FieldType::Int64,
            "FLOAT" | "FLOAT64" => FieldType::Float64,
            "NUMERIC" | "DECIMAL" => FieldType::Numeric,
            "BIGNUMERIC" | "BIGDECIMAL" => FieldType::BigNumeric,
            "BOOLEAN" | "BOOL" => FieldType::Bool,
            "STRING" => FieldType::String,
            "BYTES" => FieldType::Bytes,
            "DATE" => FieldType::Date,
            "TIME" => FieldType::Time,
            "DATETIME" => FieldType::DateTime,
            "TIMESTAMP" => FieldType::Timestamp,
            "GEOGRAPHY" => FieldType::Geography,
            "JSON" => FieldType::Json,
            "INTERVAL" => FieldType::Interval,
            "RANGE" => FieldType::Range,
            "RECORD" | "STRUCT" => FieldType::Record,
            _ => FieldType::Unknown(name.to_string()),
        }
    }
}

impl fmt::Debug for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FieldType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FieldType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(FieldType::parse(&s))
    }
}

/// A column's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum FieldMode {
    /// May be NULL (the default).
    #[default]
    Nullable,
    /// Never NULL.
    Required,
    /// An array; never NULL (an absent array is empty).
    Repeated,
}

/// The element type of a RANGE column.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RangeElementType {
    /// DATE, DATETIME or TIMESTAMP.
    #[serde(rename = "type")]
    pub element_type: FieldType,
}

/// One column of a table or query result (`TableFieldSchema` in the REST API).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableFieldSchema {
    /// The column name.
    pub name: String,
    /// The column type.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// NULLABLE (the default when absent), REQUIRED or REPEATED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FieldMode>,
    /// Sub-fields of a RECORD.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<TableFieldSchema>,
    /// The element type of a RANGE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_element_type: Option<RangeElementType>,
    /// The column description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Maximum length of a STRING or BYTES column.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::int64_text::opt_i64"
    )]
    pub max_length: Option<i64>,
    /// Precision of a NUMERIC or BIGNUMERIC column.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::int64_text::opt_i64"
    )]
    pub precision: Option<i64>,
    /// Scale of a NUMERIC or BIGNUMERIC column.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::int64_text::opt_i64"
    )]
    pub scale: Option<i64>,
    /// A default value expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_value_expression: Option<String>,
    /// How NUMERIC and BIGNUMERIC values are rounded to the column's scale on write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding_mode: Option<RoundingMode>,
    /// The collation of a STRING column: `und:ci` (case-insensitive) or `""` (binary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// The policy tags (column-level access control) attached to the column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_tags: Option<PolicyTags>,
}

/// The policy tags of a column (`TableFieldSchema.policyTags`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct PolicyTags {
    /// Policy tag resource names,
    /// `projects/{project}/locations/{location}/taxonomies/{taxonomy}/policyTags/{tag}`.
    #[serde(default)]
    pub names: Vec<String>,
}

/// How a NUMERIC or BIGNUMERIC value is rounded to its column's scale
/// (`TableFieldSchema.roundingMode`, also a table's and a dataset's default).
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RoundingMode {
    /// `ROUNDING_MODE_UNSPECIFIED`: BigQuery's default, half away from zero.
    Unspecified,
    /// `ROUND_HALF_AWAY_FROM_ZERO`: 2.5 to 3, -2.5 to -3.
    HalfAwayFromZero,
    /// `ROUND_HALF_EVEN`: 2.5 to 2, 3.5 to 4 (banker's rounding).
    HalfEven,
    /// A mode this version of bigq does not know, kept as BigQuery sent it.
    Unknown(String),
}

impl RoundingMode {
    /// The name BigQuery uses.
    pub fn as_str(&self) -> &str {
        match self {
            RoundingMode::Unspecified => "ROUNDING_MODE_UNSPECIFIED",
            RoundingMode::HalfAwayFromZero => "ROUND_HALF_AWAY_FROM_ZERO",
            RoundingMode::HalfEven => "ROUND_HALF_EVEN",
            RoundingMode::Unknown(s) => s,
        }
    }

    /// Parses BigQuery's name of a rounding mode (exact spelling; anything else is kept as
    /// [`RoundingMode::Unknown`]).
    pub fn parse(name: &str) -> RoundingMode {
        match name {
            "ROUNDING_MODE_UNSPECIFIED" => RoundingMode::Unspecified,
            "ROUND_HALF_AWAY_FROM_ZERO" => RoundingMode::HalfAwayFromZero,
            "ROUND_HALF_EVEN" => RoundingMode::HalfEven,
            other => RoundingMode::Unknown(other.to_string()),
        }
    }
}

impl fmt::Debug for RoundingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for RoundingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RoundingMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RoundingMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(RoundingMode::parse(&s))
    }
}

impl TableFieldSchema {
    /// A NULLABLE column of a scalar type.
    pub fn new(name: impl Into<String>, field_type: FieldType) -> Self {
        TableFieldSchema {
            name: name.into(),
            field_type,
            mode: None,
            fields: Vec::new(),
            range_element_type: None,
            description: None,
            max_length: None,
            precision: None,
            scale: None,
            default_value_expression: None,
            rounding_mode: None,
            collation: None,
            policy_tags: None,
        }
    }

    /// A RECORD column with sub-fields.
    pub fn record(name: impl Into<String>, fields: Vec<TableFieldSchema>) -> Self {
        TableFieldSchema {
            fields,
            ..Self::new(name, FieldType::Record)
        }
    }

    /// A RANGE column of `element` (DATE, DATETIME or TIMESTAMP).
    pub fn range(name: impl Into<String>, element: FieldType) -> Self {
        TableFieldSchema {
            range_element_type: Some(RangeElementType {
                element_type: element,
            }),
            ..Self::new(name, FieldType::Range)
        }
    }

    /// Sets the mode.
    pub fn with_mode(mut self, mode: FieldMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// The mode, NULLABLE when absent.
    pub fn mode(&self) -> FieldMode {
        self.mode.unwrap_or_default()
    }

    /// Whether the column is REPEATED.
    pub fn is_repeated(&self) -> bool {
        self.mode() == FieldMode::Repeated
    }

    /// The Arrow field for this column.
    pub fn to_arrow_field(&self) -> Result<Field, CodecError> {
        let mut field = self.element_arrow_field()?;
        if self.is_repeated() {
            let item = Field::new("item", field.data_type().clone(), false)
                .with_metadata(field.metadata().clone());
            field = Field::new(&self.name, DataType::List(Arc::new(item)), false);
        }
        Ok(field)
    }

    /// The Arrow field of one value (ignoring REPEATED).
    fn element_arrow_field(&self) -> Result<Field, CodecError> {
        let mut metadata = HashMap::new();
        let data_type = match &self.field_type {
            FieldType::Int64 => DataType::Int64,
            FieldType::Float64 => DataType::Float64,
            FieldType::Numeric => DataType::Decimal128(38, 9),
            FieldType::BigNumeric => DataType::Decimal256(76, 38),
            FieldType::Bool => DataType::Boolean,
            FieldType::String => DataType::Utf8,
            FieldType::Bytes => DataType::Binary,
            FieldType::Date => DataType::Date32,
            FieldType::Time => DataType::Time64(TimeUnit::Microsecond),
            FieldType::DateTime => DataType::Timestamp(TimeUnit::Microsecond, None),
            FieldType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            FieldType::Geography => {
                metadata.insert(
                    EXTENSION_NAME_KEY.to_string(),
                    GEOGRAPHY_EXTENSION.to_string(),
                );
                DataType::Utf8
            }
            FieldType::Json => {
                metadata.insert(EXTENSION_NAME_KEY.to_string(), JSON_EXTENSION.to_string());
                DataType::Utf8
            }
            FieldType::Interval => DataType::Interval(IntervalUnit::MonthDayNano),
            FieldType::Range => {
                let el = self.range_element_type.as_ref().ok_or_else(|| {
                    CodecError::schema("RANGE column without rangeElementType")
                        .with_column(&self.name)
                })?;
                let el_type = match el.element_type {
                    FieldType::Date => DataType::Date32,
                    FieldType::DateTime => DataType::Timestamp(TimeUnit::Microsecond, None),
                    FieldType::Timestamp => {
                        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
                    }
                    ref other => {
                        return Err(CodecError::schema(format!(
                            "RANGE of {other} is not a BigQuery type"
                        ))
                        .with_column(&self.name));
                    }
                };
                DataType::Struct(Fields::from(vec![
                    Field::new("start", el_type.clone(), true),
                    Field::new("end", el_type, true),
                ]))
            }
            FieldType::Record => {
                if self.fields.is_empty() {
                    return Err(
                        CodecError::schema("RECORD column without fields").with_column(&self.name)
                    );
                }
                let children = self
                    .fields
                    .iter()
                    .map(|f| {
                        f.to_arrow_field()
                            .map_err(|e| e.with_parent_column(&self.name))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                DataType::Struct(Fields::from(children))
            }
            FieldType::Unknown(t) => {
                return Err(CodecError::schema(format!("unknown BigQuery type `{t}`"))
                    .with_column(&self.name));
            }
        };
        let nullable = self.mode() != FieldMode::Required;
        Ok(Field::new(&self.name, data_type, nullable).with_metadata(metadata))
    }
}

/// A table or result schema (`TableSchema` in the REST API).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableSchema {
    /// The columns.
    #[serde(default)]
    pub fields: Vec<TableFieldSchema>,
}

impl TableSchema {
    /// A schema of these columns.
    pub fn new(fields: Vec<TableFieldSchema>) -> Self {
        TableSchema { fields }
    }

    /// The column of this name, if any (BigQuery compares column names case-insensitively).
    pub fn field(&self, name: &str) -> Option<&TableFieldSchema> {
        self.fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The Arrow schema, following the mapping in the [module docs](crate::schema).
    pub fn to_arrow(&self) -> Result<SchemaRef, CodecError> {
        let fields = self
            .fields
            .iter()
            .map(TableFieldSchema::to_arrow_field)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(ArrowSchema::new(fields)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rest_schema() {
        let s: TableSchema = serde_json::from_str(
            r#"{"fields":[{"name":"a","type":"INTEGER","mode":"NULLABLE"},
                {"name":"r","type":"RECORD","mode":"REPEATED","fields":[{"name":"x","type":"STRING"}]},
                {"name":"g","type":"RANGE","rangeElementType":{"type":"DATE"}},
                {"name":"n","type":"NUMERIC","precision":"10","scale":"2"}]}"#,
        )
        .unwrap();
        assert_eq!(s.fields[0].field_type, FieldType::Int64);
        assert!(s.fields[1].is_repeated());
        assert_eq!(s.fields[3].precision, Some(10));
        let a = s.to_arrow().unwrap();
        assert_eq!(a.field(0).data_type(), &DataType::Int64);
        assert!(matches!(a.field(1).data_type(), DataType::List(_)));
        assert!(!a.field(1).is_nullable());
        assert!(matches!(a.field(2).data_type(), DataType::Struct(f) if f.len() == 2));
    }

    #[test]
    fn unknown_type_names_column() {
        let s: TableSchema = serde_json::from_str(
            r#"{"fields":[{"name":"outer","type":"RECORD","fields":[{"name":"z","type":"FOO"}]}]}"#,
        )
        .unwrap();
        let e = s.to_arrow().unwrap_err();
        assert_eq!(e.column(), Some("outer.z"));
        assert!(e.to_string().contains("FOO"), "{e}");
    }
}

//! The write plan: a table schema turned into a protobuf `DescriptorProto` and the per-field
//! facts the row encoder needs (field number, wire key, type, mode, nested message).

use std::collections::HashMap;
use std::sync::Arc;

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto, FieldOptions};

use super::change::{CHANGE_SEQUENCE_COLUMN, CHANGE_TYPE_COLUMN};
use super::wire;
use crate::CodecError;
use crate::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};

/// How NUMERIC and BIGNUMERIC values are put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NumericEncoding {
    /// Decimal text (`"123.45"`): accepted by every Storage Write implementation.
    #[default]
    Text,
    /// The scaled integer (units of 10⁻⁹ for NUMERIC, 10⁻³⁸ for BIGNUMERIC) as minimal
    /// little-endian two's-complement bytes, the form of the Java client's
    /// `BigDecimalByteStringEncoder`. Fewer bytes and no formatting.
    Packed,
}

/// Options for [`WriteSchema::with_options`].
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct ProtoOptions {
    /// How NUMERIC and BIGNUMERIC go on the wire.
    pub numeric: NumericEncoding,
    /// Whether the descriptor declares the change data capture pseudo-columns
    /// `_CHANGE_TYPE` and `_CHANGE_SEQUENCE_NUMBER` (both `string`, after the table's
    /// columns), for [`RowEncoder::encode_change`](super::RowEncoder::encode_change).
    pub change_columns: bool,
}

impl ProtoOptions {
    /// Sets the NUMERIC / BIGNUMERIC encoding.
    pub fn with_numeric(mut self, numeric: NumericEncoding) -> Self {
        self.numeric = numeric;
        self
    }

    /// Declares (or not) the change data capture pseudo-columns.
    pub fn with_change_columns(mut self, change_columns: bool) -> Self {
        self.change_columns = change_columns;
        self
    }
}

/// The BigQuery type of one field, as the encoder sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Int64,
    Float64,
    Bool,
    String,
    Bytes,
    Numeric,
    BigNumeric,
    Date,
    Time,
    DateTime,
    Timestamp,
    Json,
    Geography,
    Interval,
    /// A RANGE; the nested message has `start` and `end` of the element kind.
    Range,
    Record,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Int64 => "INT64",
            Kind::Float64 => "FLOAT64",
            Kind::Bool => "BOOL",
            Kind::String => "STRING",
            Kind::Bytes => "BYTES",
            Kind::Numeric => "NUMERIC",
            Kind::BigNumeric => "BIGNUMERIC",
            Kind::Date => "DATE",
            Kind::Time => "TIME",
            Kind::DateTime => "DATETIME",
            Kind::Timestamp => "TIMESTAMP",
            Kind::Json => "JSON",
            Kind::Geography => "GEOGRAPHY",
            Kind::Interval => "INTERVAL",
            Kind::Range => "RANGE",
            Kind::Record => "RECORD",
        }
    }
}

/// One field of a message.
#[derive(Debug)]
pub(crate) struct FieldPlan {
    /// Dotted path from the root, for errors.
    pub path: String,
    pub kind: Kind,
    pub repeated: bool,
    pub required: bool,
    /// Index among the message's required fields, when required.
    pub required_index: usize,
    /// Whether the values are written packed (repeated scalars).
    pub packed: bool,
    /// The field key for one value (field number and its wire type), as varint bytes.
    pub key: wire::Key,
    /// The key of a packed run (wire type 2).
    pub packed_key: wire::Key,
    /// STRING / BYTES maximum length, from the schema.
    pub max_length: Option<usize>,
    /// NUMERIC / BIGNUMERIC on the wire as bytes rather than text.
    pub numeric_packed: bool,
    /// The message of a RECORD or RANGE.
    pub nested: Option<Box<MessagePlan>>,
}

/// One message: the root row, a RECORD or a RANGE.
#[derive(Debug)]
pub(crate) struct MessagePlan {
    /// Dense id, indexing the encoder's per-message key caches.
    pub id: usize,
    pub fields: Vec<FieldPlan>,
    by_name: HashMap<String, usize>,
    /// Lower-cased names, since BigQuery column names are case-insensitive.
    by_lower: HashMap<String, usize>,
    pub required: usize,
}

impl MessagePlan {
    /// The field named `name` (exactly, else case-insensitively).
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name
            .get(name)
            .or_else(|| self.by_lower.get(&name.to_ascii_lowercase()))
            .copied()
    }
}

/// A table schema prepared for Storage Write protobuf rows: the `DescriptorProto` to send as
/// the writer schema, and what the [`RowEncoder`](super::RowEncoder) needs to encode rows of it.
///
/// Fields are numbered 1, 2, ... in schema order and named as the columns (BigQuery matches
/// them by name); RECORD and RANGE columns become nested message types declared inside the
/// root message, so the descriptor is self-contained as `ProtoSchema` requires. The protobuf
/// types are those the Storage Write API documents for each BigQuery type:
///
/// | BigQuery | protobuf |
/// |---|---|
/// | INT64 | `int64` |
/// | FLOAT64 | `double` |
/// | BOOL | `bool` |
/// | STRING, JSON, GEOGRAPHY (WKT or GeoJSON), INTERVAL | `string` |
/// | BYTES | `bytes` |
/// | NUMERIC, BIGNUMERIC | `string`, or `bytes` with [`NumericEncoding::Packed`] |
/// | DATE | `int32`, days since 1970-01-01 |
/// | TIME, DATETIME | `string` (canonical literal) |
/// | TIMESTAMP | `int64`, microseconds since the epoch |
/// | RANGE\<T\> | message `{ start, end }` of T's type |
/// | RECORD | nested message |
/// | REPEATED | `repeated` (scalars packed) |
/// | REQUIRED / NULLABLE | `required` / `optional` (proto2) |
#[derive(Debug)]
pub struct WriteSchema {
    descriptor: DescriptorProto,
    pub(crate) root: MessagePlan,
    pub(crate) messages: usize,
    table: TableSchema,
}

/// The name of the root message in the descriptor.
const ROOT: &str = "bigq_row";

impl WriteSchema {
    /// Prepares `schema` with the default options (NUMERIC as text).
    pub fn new(schema: &TableSchema) -> Result<Arc<Self>, CodecError> {
        Self::with_options(schema, ProtoOptions::default())
    }

    /// Prepares `schema`. Fails, naming the column, on a column name that is not a protobuf
    /// identifier, a RECORD without fields, a RANGE without an element type, an unknown type,
    /// or more columns than protobuf field numbers allow.
    pub fn with_options(
        schema: &TableSchema,
        options: ProtoOptions,
    ) -> Result<Arc<Self>, CodecError> {
        let mut b = Builder {
            options,
            messages: 0,
        };
        let mut columns = std::borrow::Cow::Borrowed(&schema.fields);
        if options.change_columns {
            for name in [CHANGE_TYPE_COLUMN, CHANGE_SEQUENCE_COLUMN] {
                if !schema
                    .fields
                    .iter()
                    .any(|c| c.name.eq_ignore_ascii_case(name))
                {
                    columns
                        .to_mut()
                        .push(TableFieldSchema::new(name, FieldType::String));
                }
            }
        }
        let (root, descriptor) = b.message(ROOT, "", &columns)?;
        Ok(Arc::new(WriteSchema {
            descriptor,
            root,
            messages: b.messages,
            table: schema.clone(),
        }))
    }

    /// The descriptor to send as `ProtoSchema.proto_descriptor`.
    pub fn descriptor(&self) -> &DescriptorProto {
        &self.descriptor
    }

    /// The table schema this was built from (without the change pseudo-columns).
    pub fn table_schema(&self) -> &TableSchema {
        &self.table
    }

    /// Whether the descriptor declares the change pseudo-columns.
    pub fn has_change_columns(&self) -> bool {
        self.root.index_of(CHANGE_TYPE_COLUMN).is_some()
    }
}

struct Builder {
    options: ProtoOptions,
    messages: usize,
}

/// Whether `name` is a protobuf identifier (`[A-Za-z_][A-Za-z0-9_]*`).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Builder {
    fn message(
        &mut self,
        type_name: &str,
        parent_path: &str,
        columns: &[TableFieldSchema],
    ) -> Result<(MessagePlan, DescriptorProto), CodecError> {
        let id = self.messages;
        self.messages += 1;
        // Field numbers 19000-19999 are reserved by protobuf; stay below them.
        if columns.len() >= 19_000 {
            return Err(CodecError::schema(format!(
                "{} columns is more than a protobuf message can number",
                columns.len()
            ))
            .with_column(parent_path));
        }
        let mut descriptor = DescriptorProto {
            name: Some(type_name.to_string()),
            ..Default::default()
        };
        let mut fields = Vec::with_capacity(columns.len());
        let mut by_name = HashMap::new();
        let mut by_lower = HashMap::new();
        let mut required = 0;
        for (i, col) in columns.iter().enumerate() {
            let path = if parent_path.is_empty() {
                col.name.clone()
            } else {
                format!("{parent_path}.{}", col.name)
            };
            if !is_identifier(&col.name) {
                return Err(CodecError::schema(
                    "column name is not a protobuf identifier ([A-Za-z_][A-Za-z0-9_]*)",
                )
                .with_column(path));
            }
            let number = i as u32 + 1;
            let (field, fd, nested_type) = self.field(col, number, path, required, columns)?;
            if field.required {
                required += 1;
            }
            descriptor.field.push(fd);
            if let Some(t) = nested_type {
                descriptor.nested_type.push(t);
            }
            by_name.insert(col.name.clone(), i);
            by_lower.insert(col.name.to_ascii_lowercase(), i);
            fields.push(field);
        }
        Ok((
            MessagePlan {
                id,
                fields,
                by_name,
                by_lower,
                required,
            },
            descriptor,
        ))
    }

    fn field(
        &mut self,
        col: &TableFieldSchema,
        number: u32,
        path: String,
        required_index: usize,
        siblings: &[TableFieldSchema],
    ) -> Result<(FieldPlan, FieldDescriptorProto, Option<DescriptorProto>), CodecError> {
        let numeric_packed = self.options.numeric == NumericEncoding::Packed;
        let (kind, ty) = match &col.field_type {
            FieldType::Int64 => (Kind::Int64, Type::Int64),
            FieldType::Float64 => (Kind::Float64, Type::Double),
            FieldType::Bool => (Kind::Bool, Type::Bool),
            FieldType::String => (Kind::String, Type::String),
            FieldType::Bytes => (Kind::Bytes, Type::Bytes),
            FieldType::Numeric | FieldType::BigNumeric => {
                let kind = if col.field_type == FieldType::Numeric {
                    Kind::Numeric
                } else {
                    Kind::BigNumeric
                };
                (
                    kind,
                    if numeric_packed {
                        Type::Bytes
                    } else {
                        Type::String
                    },
                )
            }
            FieldType::Date => (Kind::Date, Type::Int32),
            FieldType::Time => (Kind::Time, Type::String),
            FieldType::DateTime => (Kind::DateTime, Type::String),
            FieldType::Timestamp => (Kind::Timestamp, Type::Int64),
            FieldType::Json => (Kind::Json, Type::String),
            FieldType::Geography => (Kind::Geography, Type::String),
            FieldType::Interval => (Kind::Interval, Type::String),
            FieldType::Range => (Kind::Range, Type::Message),
            FieldType::Record => (Kind::Record, Type::Message),
            FieldType::Unknown(t) => {
                return Err(
                    CodecError::schema(format!("unknown BigQuery type `{t}`")).with_column(path)
                );
            }
        };
        let mode = col.mode();
        let repeated = mode == FieldMode::Repeated;
        let required = mode == FieldMode::Required;
        let mut nested = None;
        let mut nested_type = None;
        let mut type_name = None;
        match kind {
            Kind::Record => {
                if col.fields.is_empty() {
                    return Err(
                        CodecError::schema("RECORD column without fields").with_column(path)
                    );
                }
                let name = nested_type_name(number, siblings);
                let (plan, desc) = self.message(&name, &path, &col.fields)?;
                nested = Some(Box::new(plan));
                nested_type = Some(desc);
                type_name = Some(name);
            }
            Kind::Range => {
                let element = col
                    .range_element_type
                    .as_ref()
                    .map(|e| &e.element_type)
                    .ok_or_else(|| {
                        CodecError::schema("RANGE column without rangeElementType")
                            .with_column(path.clone())
                    })?;
                if !matches!(
                    element,
                    FieldType::Date | FieldType::DateTime | FieldType::Timestamp
                ) {
                    return Err(CodecError::schema(format!(
                        "RANGE of {element} is not a BigQuery type"
                    ))
                    .with_column(path));
                }
                let bounds = [
                    TableFieldSchema::new("start", element.clone()),
                    TableFieldSchema::new("end", element.clone()),
                ];
                let name = nested_type_name(number, siblings);
                let (plan, desc) = self.message(&name, &path, &bounds)?;
                nested = Some(Box::new(plan));
                nested_type = Some(desc);
                type_name = Some(name);
            }
            _ => {}
        }
        let packed = repeated && ty.packable();
        let label = if repeated {
            Label::Repeated
        } else if required {
            Label::Required
        } else {
            Label::Optional
        };
        let fd = FieldDescriptorProto {
            name: Some(col.name.clone()),
            number: Some(number as i32),
            label: Some(label as i32),
            r#type: Some(ty as i32),
            type_name,
            options: packed.then(|| FieldOptions {
                packed: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let max_length = match kind {
            Kind::String | Kind::Bytes => col
                .max_length
                .and_then(|m| usize::try_from(m).ok())
                .filter(|&m| m > 0),
            _ => None,
        };
        let plan = FieldPlan {
            path,
            kind,
            repeated,
            required,
            required_index,
            packed,
            key: wire::Key::new(number, ty.wire_type()),
            packed_key: wire::Key::new(number, wire::LEN),
            max_length,
            numeric_packed,
            nested,
        };
        Ok((plan, fd, nested_type))
    }
}

/// The name of a RECORD or RANGE column's message type: `M<number>`, made unique among the
/// column names of the same message (protobuf puts both in one scope).
fn nested_type_name(number: u32, siblings: &[TableFieldSchema]) -> String {
    let mut name = format!("M{number}");
    while siblings.iter().any(|c| c.name == name) {
        name.push('_');
    }
    name
}

trait TypeExt {
    fn wire_type(self) -> u32;
    fn packable(self) -> bool;
}

impl TypeExt for Type {
    fn wire_type(self) -> u32 {
        match self {
            Type::Int64 | Type::Int32 | Type::Bool => wire::VARINT,
            Type::Double => wire::FIXED64,
            _ => wire::LEN,
        }
    }

    fn packable(self) -> bool {
        self.wire_type() != wire::LEN
    }
}

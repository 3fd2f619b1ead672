//! Protobuf rows as the Storage Write API receives them, decoded straight into Arrow.
//!
//! A [`RowsDecoder`] is compiled once per (writer `DescriptorProto`, table schema) pair and
//! kept by the connection: each descriptor field is resolved to its table column (by name,
//! case-insensitively) and each column gets a builder in the table's canonical Arrow layout
//! (see `column`). Decoding a request then walks each serialized row once, with proto2
//! semantics:
//!
//! - an absent field is NULL (an empty array if REPEATED; an error if REQUIRED), or the
//!   column's default value where the request's `missing_value_interpretations` ask for it;
//! - the last occurrence of a non-repeated field wins; repeated fields accumulate, packed or
//!   not; fields the descriptor does not declare are skipped;
//! - RECORD columns are nested messages, decoded by their own compiled message.
//!
//! Every BigQuery type takes its Storage Write encodings: INT64 from any integer type,
//! FLOAT64 from double or float, BOOL, STRING, BYTES, NUMERIC/BIGNUMERIC as decimal text
//! (`string`) or packed two's-complement (`bytes`), DATE as `int32` days, TIMESTAMP as
//! `int64` microseconds, DATETIME/TIME as text or packed civil time (`int64`, see `civil`),
//! JSON and GEOGRAPHY (WKT) as text.
//!
//! A row that does not fit is an error naming the row's column path and value; one bad row
//! fails the whole request (nothing of it is appended), with an error for every bad row.

mod civil;
mod column;
#[cfg(test)]
pub(crate) mod legacy;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use bigq_codec::schema::{FieldType, TableFieldSchema};
use datafusion::arrow::array::builder::NullBufferBuilder;
use datafusion::arrow::datatypes::{DataType, Fields, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use gcloud_sdk::prost_types::field_descriptor_proto::{Label, Type};
use gcloud_sdk::prost_types::{DescriptorProto, FieldDescriptorProto};

use self::column::{Body, Column, Leaf};
use bigq_codec::proto::wire::{LEN, Raw, Reader, is_packable, scalar, wire_type};

/// The nested message type a field names, looked up among `root`'s nested types by its
/// last name segment (`.pkg.Row.Inner` and `Inner` both find `Inner`).
fn nested<'a>(root: &'a DescriptorProto, type_name: &str) -> Option<&'a DescriptorProto> {
    let short = type_name.rsplit('.').next().unwrap_or(type_name);
    fn find<'a>(d: &'a DescriptorProto, short: &str) -> Option<&'a DescriptorProto> {
        d.nested_type
            .iter()
            .find(|n| n.name() == short)
            .or_else(|| d.nested_type.iter().find_map(|n| find(n, short)))
    }
    find(root, short)
}

/// What a field number means in one message.
#[derive(Clone, Debug)]
enum Target {
    /// Not declared: skipped.
    Skip,
    /// Feeds column `col`.
    Column {
        col: usize,
        ty: Type,
        repeated: bool,
        name: Box<str>,
    },
    /// Declared, but a row carrying it cannot be stored (no such column, a group, an
    /// unknown message type, a label that does not match the column's mode): the error.
    Fail(Box<str>),
}

/// A non-repeated field's value seen so far in the current message.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Absent,
    Int(i64, Type),
    UInt(u64, Type),
    Float(f64, Type),
    Bool(bool, Type),
    /// A length-delimited value at `start..end` of the message.
    Bytes(usize, usize, Type),
}

/// Field numbers below this are looked up in a table, the rest in a map.
const DENSE: usize = 256;

/// One message type compiled against the columns it fills (the row, or a RECORD).
pub(crate) struct Msg {
    dense: Vec<Target>,
    sparse: HashMap<u64, Target>,
    cols: Vec<Column>,
    slots: Vec<Slot>,
}

fn wire_mismatch(name: &str, wire: u32) -> String {
    format!("field {name}: wire type {wire} does not match its declared type")
}

/// The columns of a column written as a nested message: a RECORD's fields, or a RANGE's
/// `start` and `end` (of its element type).
fn message_columns(c: &TableFieldSchema) -> Option<Vec<TableFieldSchema>> {
    match c.field_type {
        FieldType::Record => Some(c.fields.clone()),
        FieldType::Range => {
            let element = c.range_element_type.as_ref()?.element_type.clone();
            Some(vec![
                TableFieldSchema::new("start", element.clone()),
                TableFieldSchema::new("end", element),
            ])
        }
        _ => None,
    }
}

impl Msg {
    /// Compiles `desc` (nested types looked up in `root`) against `columns`, whose Arrow
    /// fields are `fields`. `prefix` is the dotted path of the enclosing RECORD.
    fn compile(
        root: &DescriptorProto,
        desc: &DescriptorProto,
        columns: &[TableFieldSchema],
        fields: &Fields,
        prefix: &str,
    ) -> Result<Msg, String> {
        let feeding = |c: &TableFieldSchema| -> Option<&FieldDescriptorProto> {
            desc.field
                .iter()
                .find(|f| c.name.eq_ignore_ascii_case(f.name()))
        };
        let mut cols = Vec::with_capacity(columns.len());
        for (c, field) in columns.iter().zip(fields.iter()) {
            let path = format!("{prefix}{}", c.name);
            let body = if let Some(sub_columns) = message_columns(c) {
                let element = match field.data_type() {
                    DataType::List(item) => item.data_type(),
                    t => t,
                };
                let DataType::Struct(sub_fields) = element else {
                    return Err(format!("{path}: RECORD stored as {element}"));
                };
                let empty = DescriptorProto::default();
                let sub = feeding(c)
                    .filter(|f| f.r#type() == Type::Message)
                    .and_then(|f| nested(root, f.type_name()))
                    .unwrap_or(&empty);
                let msg = Msg::compile(root, sub, &sub_columns, sub_fields, &format!("{path}."))?;
                Body::Record(Box::new(msg), NullBufferBuilder::new(0))
            } else {
                let leaf = Leaf::new(&c.field_type).ok_or_else(|| {
                    format!(
                        "{path}: Unsupported by bigq-emulator: type {}",
                        c.field_type
                    )
                })?;
                Body::Leaf(leaf, NullBufferBuilder::new(0))
            };
            cols.push(Column::new(path, c.mode(), field.clone(), body));
        }
        let mut dense = vec![Target::Skip; DENSE];
        let mut sparse = HashMap::new();
        for f in &desc.field {
            let ty = f.r#type();
            let col = columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(f.name()));
            let target = match col {
                None => Target::Fail(
                    format!(
                        "Input schema has more fields than BigQuery schema, extra fields: '{}'",
                        f.name()
                    )
                    .into(),
                ),
                Some(_) if ty == Type::Group => {
                    Target::Fail(format!("field {}: groups are not supported", f.name()).into())
                }
                Some(col)
                    if ty == Type::Message
                        && message_columns(&columns[col]).is_some()
                        && nested(root, f.type_name()).is_none() =>
                {
                    Target::Fail(
                        format!("field {}: unknown message type {}", f.name(), f.type_name())
                            .into(),
                    )
                }
                Some(col) => {
                    let repeated = f.label() == Label::Repeated;
                    let column = &columns[col];
                    if repeated == column.is_repeated() {
                        Target::Column {
                            col,
                            ty,
                            repeated,
                            name: f.name().into(),
                        }
                    } else {
                        let path = format!("{prefix}{}", column.name);
                        let name = f.name();
                        Target::Fail(
                            if repeated {
                                format!(
                                    "{path}: repeated field {name} for a column that is not REPEATED"
                                )
                            } else {
                                format!("{path}: non-repeated field {name} for a REPEATED column")
                            }
                            .into(),
                        )
                    }
                }
            };
            let number = u64::try_from(f.number()).unwrap_or(0);
            match usize::try_from(number) {
                Ok(n) if n < DENSE => dense[n] = target,
                _ => {
                    sparse.insert(number, target);
                }
            }
        }
        let slots = vec![Slot::Absent; cols.len()];
        Ok(Msg {
            dense,
            sparse,
            cols,
            slots,
        })
    }

    /// Decodes one serialized message into the columns. `fill` (the row only) gives, per
    /// column, the text of the value an absent field takes instead of NULL.
    fn decode(&mut self, bytes: &[u8], fill: &[Option<Box<str>>]) -> Result<(), String> {
        let Msg {
            dense,
            sparse,
            cols,
            slots,
        } = self;
        slots.fill(Slot::Absent);
        let mut r = Reader::new(bytes);
        while !r.at_end() {
            let (number, wire) = r.key()?;
            let target = match usize::try_from(number) {
                Ok(n) if n < DENSE => &dense[n],
                _ => sparse.get(&number).unwrap_or(&Target::Skip),
            };
            let (col, ty, repeated, name) = match target {
                Target::Skip => {
                    r.skip(wire)?;
                    continue;
                }
                Target::Fail(e) => return Err(e.to_string()),
                Target::Column {
                    col,
                    ty,
                    repeated,
                    name,
                } => (*col, *ty, *repeated, name),
            };
            // The field's label matches the column's mode (`compile` made a mismatch a
            // `Fail`).
            let column = &mut cols[col];
            if repeated && wire == LEN && is_packable(ty) {
                let mut packed = Reader::new(r.len_delimited()?);
                while !packed.at_end() {
                    let raw = scalar(&mut packed, ty)?;
                    column.push_element(raw, ty)?;
                }
                continue;
            }
            if wire != wire_type(ty) {
                return Err(wire_mismatch(name, wire));
            }
            let raw = scalar(&mut r, ty)?;
            if repeated {
                column.push_element(raw, ty)?;
                continue;
            }
            // proto2: the last occurrence of a non-repeated field wins.
            slots[col] = match raw {
                Raw::Int(v) => Slot::Int(v, ty),
                Raw::UInt(v) => Slot::UInt(v, ty),
                Raw::Float(v) => Slot::Float(v, ty),
                Raw::Bool(v) => Slot::Bool(v, ty),
                Raw::Bytes(b) => Slot::Bytes(r.pos() - b.len(), r.pos(), ty),
            };
        }
        for (i, (column, slot)) in cols.iter_mut().zip(slots.iter()).enumerate() {
            let (raw, ty) = match *slot {
                Slot::Absent if column.is_repeated() => {
                    column.end_list();
                    continue;
                }
                Slot::Absent => match fill.get(i) {
                    Some(Some(text)) => (Raw::Bytes(text.as_bytes()), Type::String),
                    _ => {
                        column.push_absent()?;
                        continue;
                    }
                },
                Slot::Int(v, t) => (Raw::Int(v), t),
                Slot::UInt(v, t) => (Raw::UInt(v), t),
                Slot::Float(v, t) => (Raw::Float(v), t),
                Slot::Bool(v, t) => (Raw::Bool(v), t),
                Slot::Bytes(s, e, t) => (Raw::Bytes(&bytes[s..e]), t),
            };
            column.push_value(raw, ty)?;
        }
        Ok(())
    }
}

/// Why a request's rows were not decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Rows that do not fit the table: (row index, message naming the column and value).
    Rows(Vec<(usize, String)>),
    /// The rows decoded but do not make a batch of the table's schema (a bug).
    Batch(String),
}

/// A writer descriptor compiled against a table schema: serialized rows in, a
/// [`RecordBatch`] in the table's Arrow schema out.
pub struct RowsDecoder {
    root: Msg,
    schema: SchemaRef,
    columns: Vec<TableFieldSchema>,
}

impl std::fmt::Debug for RowsDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowsDecoder")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// Why a descriptor does not compile against a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// A top-level descriptor field has no column of its name.
    ExtraField(String),
    /// The table has a column the decoder cannot fill.
    Unsupported(String),
}

impl RowsDecoder {
    /// Compiles the writer's `desc` for a table with BigQuery columns `columns` stored
    /// as `schema`.
    pub fn new(
        desc: &DescriptorProto,
        columns: &[TableFieldSchema],
        schema: SchemaRef,
    ) -> Result<RowsDecoder, CompileError> {
        if let Some(extra) = desc.field.iter().find(|f| {
            !columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(f.name()))
        }) {
            return Err(CompileError::ExtraField(extra.name().to_string()));
        }
        let root = Msg::compile(desc, desc, columns, schema.fields(), "")
            .map_err(CompileError::Unsupported)?;
        Ok(RowsDecoder {
            root,
            schema,
            columns: columns.to_vec(),
        })
    }

    /// Whether this decoder was compiled for a table of these columns.
    pub fn is_for(&self, columns: &[TableFieldSchema], schema: &SchemaRef) -> bool {
        (std::sync::Arc::ptr_eq(&self.schema, schema) || self.schema == *schema)
            && self.columns == columns
    }

    /// Decodes `rows` into one batch. `fill` gives, per top-level column, the text value
    /// an absent field takes (BigQuery's `DEFAULT_VALUE` interpretation); `None` or a
    /// shorter slice means NULL. After an error the decoder must not be reused.
    pub fn decode(
        &mut self,
        rows: &[Vec<u8>],
        fill: &[Option<Box<str>>],
    ) -> Result<RecordBatch, DecodeError> {
        let mut errors = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if let Err(e) = self.root.decode(row, fill) {
                errors.push((i, e));
            }
        }
        if !errors.is_empty() {
            return Err(DecodeError::Rows(errors));
        }
        let arrays = self
            .root
            .cols
            .iter_mut()
            .map(Column::finish)
            .collect::<Result<Vec<_>, _>>()
            .map_err(DecodeError::Batch)?;
        let options = datafusion::arrow::record_batch::RecordBatchOptions::new()
            .with_row_count(Some(rows.len()));
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)
            .map_err(|e| DecodeError::Batch(e.to_string()))
    }
}

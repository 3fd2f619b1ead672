//! One message type compiled against the columns it fills, and those columns: a message
//! (the row, or a RECORD) holds its columns, and a RECORD column holds its message, so both
//! live here.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, ListArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, FieldRef, Fields};
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto};

use super::leaf::{Leaf, bad};
use crate::proto::wire::{LEN, Raw, Reader, WireError, is_packable, scalar, wire_type};
use crate::schema::{FieldMode, FieldType, TableFieldSchema};

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
    pub(crate) cols: Vec<Column>,
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
    pub(crate) fn compile(
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
                let leaf = Leaf::new(&c.field_type)
                    .ok_or_else(|| format!("{path}: type {} is not supported", c.field_type))?;
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
    pub(crate) fn decode(&mut self, bytes: &[u8], fill: &[Option<Box<str>>]) -> Result<(), String> {
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
                let mut packed = Reader::new(r.len_delimited().map_err(|e| column.at_wire(e))?);
                while !packed.at_end() {
                    let raw = scalar(&mut packed, ty).map_err(|e| column.at_wire(e))?;
                    column.push_element(raw, ty)?;
                }
                continue;
            }
            if wire != wire_type(ty) {
                return Err(wire_mismatch(name, wire));
            }
            let raw = scalar(&mut r, ty).map_err(|e| column.at_wire(e))?;
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

/// A column's element values: a leaf, or a RECORD's own message with its NULLs.
pub(crate) enum Body {
    Leaf(Leaf, NullBufferBuilder),
    Record(Box<Msg>, NullBufferBuilder),
}

/// One column of a message (the row, or a RECORD), in the table's Arrow layout.
pub(crate) struct Column {
    /// The dotted column path, for errors.
    pub(crate) path: Box<str>,
    pub(crate) mode: FieldMode,
    /// The table's Arrow field for this column.
    pub(crate) field: FieldRef,
    pub(crate) body: Body,
    /// REPEATED: the list offsets (starting at 0) and the element count.
    offsets: Vec<i32>,
    elements: i32,
}

impl Column {
    pub(crate) fn new(path: String, mode: FieldMode, field: FieldRef, body: Body) -> Column {
        Column {
            path: path.into(),
            mode,
            field,
            body,
            offsets: vec![0],
            elements: 0,
        }
    }

    pub(crate) fn is_repeated(&self) -> bool {
        self.mode == FieldMode::Repeated
    }

    fn at(&self, e: String) -> String {
        format!("{}: {e}", self.path)
    }

    /// A value of this column that is not well-formed protobuf.
    fn at_wire(&self, e: WireError) -> String {
        format!("{}: {e}", self.path)
    }

    /// A RECORD value (one element if REPEATED): the nested message's bytes.
    fn push_record(&mut self, raw: Raw<'_>, proto: Type) -> Result<(), String> {
        let Body::Record(msg, nulls) = &mut self.body else {
            return Err(self.at(bad("record", raw)));
        };
        match (raw, proto) {
            (Raw::Bytes(b), Type::Message) => {
                msg.decode(b, &[])?;
                nulls.append_non_null();
                Ok(())
            }
            _ => Err(format!("{}: {}", self.path, bad("record", raw))),
        }
    }

    /// The value of a present, non-repeated field.
    #[inline]
    pub(crate) fn push_value(&mut self, raw: Raw<'_>, proto: Type) -> Result<(), String> {
        match &mut self.body {
            Body::Leaf(leaf, nulls) => {
                if proto == Type::Message {
                    return Err(format!(
                        "{}: a message for a column of type {}",
                        self.path,
                        leaf.type_name()
                    ));
                }
                leaf.push(raw, proto)
                    .map_err(|e| format!("{}: {e}", self.path))?;
                nulls.append_non_null();
                Ok(())
            }
            Body::Record(..) => self.push_record(raw, proto),
        }
    }

    /// One element of a REPEATED column.
    #[inline]
    pub(crate) fn push_element(&mut self, raw: Raw<'_>, proto: Type) -> Result<(), String> {
        self.push_value(raw, proto)?;
        self.elements = self
            .elements
            .checked_add(1)
            .ok_or_else(|| self.at("too many elements".into()))?;
        Ok(())
    }

    /// The field is absent from the message: NULL, an empty array if REPEATED, an error
    /// if REQUIRED.
    pub(crate) fn push_absent(&mut self) -> Result<(), String> {
        if self.mode == FieldMode::Required {
            return Err(self.at("Missing required field.".into()));
        }
        self.push_null();
        Ok(())
    }

    /// NULL (an empty array if REPEATED), also under a NULL record whatever the mode.
    fn push_null(&mut self) {
        if self.mode == FieldMode::Repeated {
            self.offsets.push(self.elements);
            return;
        }
        match &mut self.body {
            Body::Leaf(leaf, nulls) => {
                leaf.push_default();
                nulls.append_null();
            }
            Body::Record(msg, nulls) => {
                nulls.append_null();
                for c in &mut msg.cols {
                    c.push_null();
                }
            }
        }
    }

    /// Closes the row's array (REPEATED).
    #[inline]
    pub(crate) fn end_list(&mut self) {
        self.offsets.push(self.elements);
    }

    /// The column's values so far; the builders start over.
    pub(crate) fn finish(&mut self) -> Result<ArrayRef, String> {
        let at = |e: String| format!("{}: {e}", self.path);
        let (item, element_type) = match self.field.data_type() {
            DataType::List(item) => (Some(item.clone()), item.data_type().clone()),
            t => (None, t.clone()),
        };
        let values: ArrayRef = match &mut self.body {
            Body::Leaf(leaf, nulls) => leaf.finish(&element_type, nulls.finish()).map_err(at)?,
            Body::Record(msg, nulls) => {
                let DataType::Struct(fields) = &element_type else {
                    return Err(at(format!("RECORD stored as {element_type}")));
                };
                let children = msg
                    .cols
                    .iter_mut()
                    .map(Column::finish)
                    .collect::<Result<Vec<_>, _>>()?;
                Arc::new(
                    StructArray::try_new(fields.clone(), children, nulls.finish())
                        .map_err(|e| at(e.to_string()))?,
                )
            }
        };
        let Some(item) = item else {
            return Ok(values);
        };
        let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(
            &mut self.offsets,
            vec![0],
        )));
        self.elements = 0;
        Ok(Arc::new(
            ListArray::try_new(item, offsets, values, None).map_err(|e| at(e.to_string()))?,
        ))
    }
}

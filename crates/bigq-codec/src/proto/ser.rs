//! serde to Storage Write protobuf rows, driven by a [`WriteSchema`].
//!
//! Each row is written straight into the caller's buffer: no dynamic message, no per-value
//! allocation. A nested message or packed run gets a one-byte length placeholder that
//! [`wire::end_len`] patches (and widens in the rare case it needs more bytes).
//!
//! Struct keys are `&'static str`s that arrive in declaration order, so each message caches,
//! by position, the key's address and the field it resolved to: rows of one Rust type hit the
//! cache on every field and never hash a name.
//!
//! bigq's value types ([`Numeric`](crate::value::Numeric), [`Timestamp`](crate::value::Timestamp),
//! ...) normally serialize as text; while a row is encoded they hand over their raw integer
//! in a `$bigq::*` newtype instead (see `value::RawSerializeGuard`), which is written as is.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_buffer::i256;
use serde::Serialize;
use serde::ser::{self, Impossible};

use super::change::{CHANGE_SEQUENCE_COLUMN, CHANGE_TYPE_COLUMN, ChangeSequence, ChangeType};
use super::schema::{FieldPlan, Kind, MessagePlan, WriteSchema};
use super::wire;
use crate::de::text::{SmallDecimal, StackBuf, write_decimal_i128};
use crate::value::text;
use crate::value::{self, RawSerializeGuard, magic};
use crate::{CodecError, CodecErrorKind};

/// The error inside the serializer: a [`CodecError`] with what is known so far.
#[derive(Debug)]
pub(crate) struct EncodeError(pub(crate) Box<CodecError>);

impl EncodeError {
    /// Boxed, so that every `Result` of the serializer is one word, returned in a register.
    #[cold]
    fn new(e: CodecError) -> Self {
        EncodeError(Box::new(e))
    }
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for EncodeError {}

impl ser::Error for EncodeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        EncodeError::new(CodecError::new(CodecErrorKind::Serialize, msg.to_string()))
    }
}

type Result<T, E = EncodeError> = std::result::Result<T, E>;

fn err(field: &FieldPlan, msg: impl Into<String>) -> EncodeError {
    EncodeError::new(CodecError::new(CodecErrorKind::Serialize, msg).with_column(&field.path))
}

fn value_err(field: &FieldPlan, msg: impl Into<String>, value: impl AsRef<[u8]>) -> EncodeError {
    EncodeError::new(
        CodecError::new(CodecErrorKind::Value, msg)
            .with_column(&field.path)
            .with_value(value),
    )
}

fn mismatch(field: &FieldPlan, what: &str) -> EncodeError {
    err(
        field,
        format!("{what} cannot be written to a {} column", field.kind.name()),
    )
}

/// DATE range: 0001-01-01 to 9999-12-31, in days since 1970-01-01.
const MIN_DATE: i64 = -719_162;
const MAX_DATE: i64 = 2_932_896;
/// TIMESTAMP and DATETIME range, in microseconds.
const MIN_MICROS: i64 = MIN_DATE * 86_400_000_000;
const MAX_MICROS: i64 = (MAX_DATE + 1) * 86_400_000_000 - 1;
/// TIME range.
const MAX_TIME: i64 = 86_400_000_000 - 1;
/// Largest integer a FLOAT64 holds exactly.
const MAX_EXACT_F64: i64 = 1 << 53;

/// A struct key seen at one position of a message, by the address and length of serde's
/// `&'static str`, so the same key is found again without comparing text.
#[derive(Clone, Copy)]
struct CachedKey {
    address: usize,
    len: usize,
    index: usize,
}

/// The mutable state of an encoding: key caches per message, a scratch string, the output.
struct Enc {
    caches: Vec<Vec<CachedKey>>,
    text: String,
    out: Vec<u8>,
}

/// Encodes rows of any `T: Serialize` into Storage Write protobuf rows of one [`WriteSchema`].
///
/// Keep one per writer and reuse it: it caches how each struct's keys map to columns.
///
/// ```
/// use bigq_codec::proto::{RowEncoder, WriteSchema};
/// use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
/// use bigq_codec::value::Date;
///
/// #[derive(serde::Serialize)]
/// struct Row { id: i64, name: Option<String>, day: Date }
///
/// let schema = TableSchema::new(vec![
///     TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
///     TableFieldSchema::new("name", FieldType::String),
///     TableFieldSchema::new("day", FieldType::Date),
/// ]);
/// let mut encoder = RowEncoder::new(WriteSchema::new(&schema)?);
/// let mut row = Vec::new();
/// encoder.encode(&Row { id: 7, name: None, day: Date::new(1) }, &mut row)?;
/// // id = 7 (field 1, varint), day = 1 (field 3, varint); the NULL name is absent.
/// assert_eq!(row, [0x08, 7, 0x18, 1]);
/// # Ok::<(), bigq_codec::CodecError>(())
/// ```
pub struct RowEncoder {
    schema: Arc<WriteSchema>,
    enc: Enc,
}

impl std::fmt::Debug for RowEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowEncoder").finish_non_exhaustive()
    }
}

impl RowEncoder {
    /// An encoder for rows of `schema`.
    pub fn new(schema: Arc<WriteSchema>) -> Self {
        let caches = vec![Vec::new(); schema.messages];
        RowEncoder {
            schema,
            enc: Enc {
                caches,
                text: String::new(),
                out: Vec::new(),
            },
        }
    }

    /// The schema rows are encoded for.
    pub fn schema(&self) -> &Arc<WriteSchema> {
        &self.schema
    }

    /// Appends one row's protobuf encoding (without a length prefix) to `out`.
    ///
    /// A row that does not fit the schema (a missing REQUIRED column, a field that is not a
    /// column, a value of the wrong type or out of range, a STRING longer than the column's
    /// `maxLength`, NaN into NUMERIC, a NULL array element) is an error naming the column and
    /// the value; `out` is then left as it was.
    pub fn encode<T: Serialize + ?Sized>(
        &mut self,
        row: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        let start = out.len();
        std::mem::swap(&mut self.enc.out, out);
        let result = {
            let _raw = RawSerializeGuard::set(true);
            row.serialize(RowSer {
                enc: &mut self.enc,
                msg: &self.schema.root,
            })
        };
        std::mem::swap(&mut self.enc.out, out);
        result.map_err(|e| {
            out.truncate(start);
            *e.0
        })
    }

    /// Appends one change row: `row` as [`encode`](Self::encode) writes it, then its
    /// `_CHANGE_TYPE` and, when given, its `_CHANGE_SEQUENCE_NUMBER` (a later occurrence of
    /// a protobuf field wins, so these override the row's own). The schema must declare the
    /// change pseudo-columns ([`ProtoOptions::with_change_columns`](super::ProtoOptions::with_change_columns)).
    pub fn encode_change<T: Serialize + ?Sized>(
        &mut self,
        row: &T,
        change: ChangeType,
        sequence: Option<&ChangeSequence>,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        let key = |name: &str| {
            let root = &self.schema.root;
            root.index_of(name)
                .and_then(|i| root.fields.get(i))
                .map(|f| f.key)
                .ok_or_else(|| {
                    CodecError::new(
                        crate::CodecErrorKind::Schema,
                        format!("the writer schema does not declare the pseudo-column {name}"),
                    )
                    .with_column(name)
                })
        };
        let type_key = key(CHANGE_TYPE_COLUMN)?;
        let sequence_key = match sequence {
            Some(_) => Some(key(CHANGE_SEQUENCE_COLUMN)?),
            None => None,
        };
        self.encode(row, out)?;
        type_key.put(out);
        wire::put_len_bytes(out, change.as_str().as_bytes());
        if let (Some(key), Some(seq)) = (sequence_key, sequence) {
            key.put(out);
            wire::put_len_bytes(out, seq.to_string().as_bytes());
        }
        Ok(())
    }

    /// Encodes `rows` as the `serialized_rows` of a `ProtoRows`, one `Vec<u8>` per row.
    /// Stops at the first row that fails, with the error's row set to its index in `rows`.
    pub fn encode_rows<T: Serialize>(&mut self, rows: &[T]) -> Result<Vec<Vec<u8>>, CodecError> {
        let mut out = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let mut buf = Vec::new();
            self.encode(row, &mut buf)
                .map_err(|e| e.with_row(i as u64))?;
            out.push(buf);
        }
        Ok(out)
    }
}

/// The root: a row must be a struct or a map.
struct RowSer<'a> {
    enc: &'a mut Enc,
    msg: &'a MessagePlan,
}

fn not_a_row() -> EncodeError {
    EncodeError::new(CodecError::new(
        CodecErrorKind::Serialize,
        "a row must serialize as a struct or a map",
    ))
}

/// Serializer methods that all fail with `$err` (an expression of the serializer's error
/// type that does not use `self`), the scalar ones given by signature.
macro_rules! reject {
    ($err:expr; $($m:ident($($t:ty),*)),* $(,)?) => {
        $(fn $m(self, $(_: $t),*) -> std::result::Result<Self::Ok, Self::Error> { Err($err) })*
    };
}

/// The same for the generic and compound serializer methods, given by name.
macro_rules! reject_compound {
    ($err:expr; $($m:ident),* $(,)?) => { $(reject_compound!(@ $err; $m);)* };
    (@ $err:expr; some) => {
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T)
            -> std::result::Result<Self::Ok, Self::Error> { Err($err) }
    };
    (@ $err:expr; newtype_struct) => {
        fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T)
            -> std::result::Result<Self::Ok, Self::Error> { Err($err) }
    };
    (@ $err:expr; newtype_variant) => {
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self, _: &'static str, _: u32, _: &'static str, _: &T,
        ) -> std::result::Result<Self::Ok, Self::Error> { Err($err) }
    };
    (@ $err:expr; seq) => {
        fn serialize_seq(self, _: Option<usize>)
            -> std::result::Result<Self::SerializeSeq, Self::Error> { Err($err) }
    };
    (@ $err:expr; tuple) => {
        fn serialize_tuple(self, _: usize)
            -> std::result::Result<Self::SerializeTuple, Self::Error> { Err($err) }
    };
    (@ $err:expr; tuple_struct) => {
        fn serialize_tuple_struct(self, _: &'static str, _: usize)
            -> std::result::Result<Self::SerializeTupleStruct, Self::Error> { Err($err) }
    };
    (@ $err:expr; tuple_variant) => {
        fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize)
            -> std::result::Result<Self::SerializeTupleVariant, Self::Error> { Err($err) }
    };
    (@ $err:expr; map) => {
        fn serialize_map(self, _: Option<usize>)
            -> std::result::Result<Self::SerializeMap, Self::Error> { Err($err) }
    };
    (@ $err:expr; struct) => {
        fn serialize_struct(self, _: &'static str, _: usize)
            -> std::result::Result<Self::SerializeStruct, Self::Error> { Err($err) }
    };
    (@ $err:expr; struct_variant) => {
        fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize)
            -> std::result::Result<Self::SerializeStructVariant, Self::Error> { Err($err) }
    };
}

impl<'a> ser::Serializer for RowSer<'a> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = Impossible<(), EncodeError>;
    type SerializeTuple = Impossible<(), EncodeError>;
    type SerializeTupleStruct = Impossible<(), EncodeError>;
    type SerializeTupleVariant = Impossible<(), EncodeError>;
    type SerializeMap = StructEnc<'a>;
    type SerializeStruct = StructEnc<'a>;
    type SerializeStructVariant = Impossible<(), EncodeError>;

    reject!(not_a_row();
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32),
        serialize_u64(u64), serialize_f32(f32), serialize_f64(f64), serialize_char(char),
        serialize_str(&str), serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    reject_compound!(not_a_row();
        newtype_variant, seq, tuple, tuple_struct, tuple_variant, struct_variant);
    fn serialize_map(self, _: Option<usize>) -> Result<StructEnc<'a>> {
        Ok(StructEnc::new(self.enc, self.msg, None, ""))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<StructEnc<'a>> {
        Ok(StructEnc::new(self.enc, self.msg, None, ""))
    }
}

/// The fields of one message (the row, a RECORD or a RANGE) as a struct or a map.
pub(crate) struct StructEnc<'a> {
    enc: &'a mut Enc,
    msg: &'a MessagePlan,
    /// Where the length placeholder of a nested message ends.
    len_start: Option<usize>,
    /// The message's path, for errors about a key that is not a column.
    path: &'a str,
    /// Position of the next struct field, for the key cache.
    pos: usize,
    /// The message's key cache, taken out of [`Enc`] while the message is written (one load
    /// less per field) and put back by `finish` (a message that fails loses it: the next row
    /// fills it again).
    cache: Vec<CachedKey>,
    /// Which required fields were given (bit per `required_index` below 64, then a vector).
    seen: u64,
    seen_more: Vec<bool>,
    /// A map key waiting for its value.
    map_field: Option<usize>,
}

impl<'a> StructEnc<'a> {
    fn new(
        enc: &'a mut Enc,
        msg: &'a MessagePlan,
        len_start: Option<usize>,
        path: &'a str,
    ) -> Self {
        let cache = std::mem::take(&mut enc.caches[msg.id]);
        StructEnc {
            enc,
            msg,
            len_start,
            path,
            pos: 0,
            cache,
            seen: 0,
            seen_more: Vec::new(),
            map_field: None,
        }
    }

    fn unknown(&self, key: &str) -> EncodeError {
        let column = if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        };
        EncodeError::new(
            CodecError::new(CodecErrorKind::Serialize, "not a column of the table")
                .with_column(column),
        )
    }

    /// The index of the field named `key`: the field at this position last time when `key`
    /// is the same `&'static str` (serde's derived structs pass the same key every row), a
    /// lookup by name otherwise.
    #[inline(always)]
    fn field_index(&mut self, key: &'static str) -> Result<usize> {
        let pos = self.pos;
        self.pos += 1;
        if let Some(c) = self.cache.get(pos)
            && c.address == key.as_ptr() as usize
            && c.len == key.len()
        {
            return Ok(c.index);
        }
        self.field_index_slow(pos, key)
    }

    #[cold]
    #[inline(never)]
    fn field_index_slow(&mut self, pos: usize, key: &'static str) -> Result<usize> {
        let index = self.msg.index_of(key).ok_or_else(|| self.unknown(key))?;
        let entry = CachedKey {
            address: key.as_ptr() as usize,
            len: key.len(),
            index,
        };
        let cache = &mut self.cache;
        if pos < cache.len() {
            cache[pos] = entry;
        } else if pos == cache.len() {
            cache.push(entry);
        }
        Ok(index)
    }

    #[inline(always)]
    fn field<T: Serialize + ?Sized>(&mut self, index: usize, value: &T) -> Result<()> {
        let field = &self.msg.fields[index];
        encode_field(self.enc, field, value)?;
        if field.required {
            let i = field.required_index;
            if i < 64 {
                self.seen |= 1 << i;
            } else {
                if self.seen_more.len() <= i - 64 {
                    self.seen_more.resize(i - 63, false);
                }
                self.seen_more[i - 64] = true;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.enc.caches[self.msg.id] = std::mem::take(&mut self.cache);
        if self.msg.required > 0 {
            let given =
                self.seen.count_ones() as usize + self.seen_more.iter().filter(|&&b| b).count();
            if given < self.msg.required {
                let missing = self
                    .msg
                    .fields
                    .iter()
                    .find(|f| {
                        f.required
                            && !(if f.required_index < 64 {
                                self.seen & (1 << f.required_index) != 0
                            } else {
                                self.seen_more
                                    .get(f.required_index - 64)
                                    .copied()
                                    .unwrap_or(false)
                            })
                    })
                    .expect("fewer required fields seen than there are");
                return Err(err(missing, "REQUIRED column missing from the row"));
            }
        }
        if let Some(start) = self.len_start {
            wire::end_len(&mut self.enc.out, start);
        }
        Ok(())
    }
}

impl ser::SerializeStruct for StructEnc<'_> {
    type Ok = ();
    type Error = EncodeError;

    // Inlined into the row type's `serialize`: a call per field costs more than the field.
    #[inline(always)]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        let index = self.field_index(key)?;
        self.field(index, value)
    }

    fn skip_field(&mut self, _: &'static str) -> Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeMap for StructEnc<'_> {
    type Ok = ();
    type Error = EncodeError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        let mut name = std::mem::take(&mut self.enc.text);
        name.clear();
        let r = key.serialize(KeySer(&mut name));
        let found = r.and_then(|()| self.msg.index_of(&name).ok_or_else(|| self.unknown(&name)));
        self.enc.text = name;
        self.map_field = Some(found?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let index = self
            .map_field
            .take()
            .ok_or_else(|| ser::Error::custom("a map value without a key"))?;
        self.field(index, value)
    }

    fn end(self) -> Result<()> {
        self.finish()
    }
}

/// A map key: text only.
struct KeySer<'a>(&'a mut String);

fn not_a_key() -> EncodeError {
    ser::Error::custom("a map key of a row must be a string")
}

impl ser::Serializer for KeySer<'_> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = Impossible<(), EncodeError>;
    type SerializeTuple = Impossible<(), EncodeError>;
    type SerializeTupleStruct = Impossible<(), EncodeError>;
    type SerializeTupleVariant = Impossible<(), EncodeError>;
    type SerializeMap = Impossible<(), EncodeError>;
    type SerializeStruct = Impossible<(), EncodeError>;
    type SerializeStructVariant = Impossible<(), EncodeError>;

    fn serialize_str(self, v: &str) -> Result<()> {
        self.0.push_str(v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.0.push(v);
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<()> {
        self.0.push_str(v);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    reject!(not_a_key();
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32),
        serialize_u64(u64), serialize_f32(f32), serialize_f64(f64),
        serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
        serialize_unit_struct(&'static str),
    );
    reject_compound!(not_a_key();
        some, newtype_variant, seq, tuple, tuple_struct, tuple_variant, map, struct,
        struct_variant);
}

/// Encodes one field's value (all of an array for a REPEATED field).
#[inline(always)]
fn encode_field<T: Serialize + ?Sized>(enc: &mut Enc, field: &FieldPlan, value: &T) -> Result<()> {
    let r = if field.repeated {
        value.serialize(RepeatedSer { enc, field })
    } else if field.kind == Kind::Json {
        encode_json(enc, field, value, false, None)
    } else {
        value.serialize(ValueSer {
            enc,
            field,
            packed: false,
            element: None,
        })
    };
    r.map_err(|EncodeError(e)| EncodeError::new(e.with_column(&field.path)))
}

/// A JSON value: text is written as is (it is the JSON document); any other value is
/// written as serde_json's encoding of it.
fn encode_json<T: Serialize + ?Sized>(
    enc: &mut Enc,
    field: &FieldPlan,
    value: &T,
    packed: bool,
    element: Option<usize>,
) -> Result<()> {
    match value.serialize(ValueSer {
        enc,
        field,
        packed,
        element,
    }) {
        Err(EncodeError(e)) if e.message() == NOT_JSON_TEXT => {
            let json = {
                let _text = RawSerializeGuard::set(false);
                serde_json::to_vec(value)
            }
            .map_err(|e| err(field, format!("JSON column: {e}")))?;
            field.key.put(&mut enc.out);
            wire::put_len_bytes(&mut enc.out, &json);
            Ok(())
        }
        other => other,
    }
}

/// Raised for a JSON column given something other than text, so that it is encoded with
/// serde_json instead.
const NOT_JSON_TEXT: &str = "\u{0}bigq: not JSON text";

/// A REPEATED field: a sequence, or NULL / unit for an empty array.
struct RepeatedSer<'a> {
    enc: &'a mut Enc,
    field: &'a FieldPlan,
}

fn not_a_sequence(field: &FieldPlan, what: &str) -> EncodeError {
    err(
        field,
        format!("a REPEATED column takes a sequence, not {what}"),
    )
}

impl<'a> ser::Serializer for RepeatedSer<'a> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = SeqEnc<'a>;
    type SerializeTuple = SeqEnc<'a>;
    type SerializeTupleStruct = Impossible<(), EncodeError>;
    type SerializeTupleVariant = Impossible<(), EncodeError>;
    type SerializeMap = Impossible<(), EncodeError>;
    type SerializeStruct = Impossible<(), EncodeError>;
    type SerializeStructVariant = Impossible<(), EncodeError>;

    fn serialize_none(self) -> Result<()> {
        Ok(())
    }
    fn serialize_unit(self) -> Result<()> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<SeqEnc<'a>> {
        Ok(SeqEnc::new(self.enc, self.field))
    }
    fn serialize_tuple(self, _: usize) -> Result<SeqEnc<'a>> {
        Ok(SeqEnc::new(self.enc, self.field))
    }
    fn serialize_bool(self, _: bool) -> Result<()> {
        Err(not_a_sequence(self.field, "a bool"))
    }
    fn serialize_i8(self, _: i8) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_i16(self, _: i16) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_i32(self, _: i32) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_i64(self, _: i64) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_u8(self, _: u8) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_u16(self, _: u16) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_u32(self, _: u32) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_u64(self, _: u64) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_f32(self, _: f32) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_f64(self, _: f64) -> Result<()> {
        Err(not_a_sequence(self.field, "a number"))
    }
    fn serialize_char(self, _: char) -> Result<()> {
        Err(not_a_sequence(self.field, "a string"))
    }
    fn serialize_str(self, _: &str) -> Result<()> {
        Err(not_a_sequence(self.field, "a string"))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<()> {
        Err(not_a_sequence(self.field, "bytes"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<()> {
        Err(not_a_sequence(self.field, "a unit struct"))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<()> {
        Err(not_a_sequence(self.field, "an enum variant"))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(not_a_sequence(self.field, "an enum variant"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(not_a_sequence(self.field, "a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(not_a_sequence(self.field, "an enum variant"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(not_a_sequence(self.field, "a map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(not_a_sequence(self.field, "a struct"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(not_a_sequence(self.field, "an enum variant"))
    }
}

/// The elements of a REPEATED field: one packed run for numbers, else one field per element.
pub(crate) struct SeqEnc<'a> {
    enc: &'a mut Enc,
    field: &'a FieldPlan,
    /// Where the packed run's key starts, and where its length placeholder ends.
    packed: Option<(usize, usize)>,
    index: usize,
}

impl<'a> SeqEnc<'a> {
    fn new(enc: &'a mut Enc, field: &'a FieldPlan) -> Self {
        let packed = field.packed.then(|| {
            let key_at = enc.out.len();
            field.packed_key.put(&mut enc.out);
            (key_at, wire::begin_len(&mut enc.out))
        });
        SeqEnc {
            enc,
            field,
            packed,
            index: 0,
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        let index = self.index;
        self.index += 1;
        if self.field.kind == Kind::Json {
            return encode_json(self.enc, self.field, v, false, Some(index));
        }
        v.serialize(ValueSer {
            enc: self.enc,
            field: self.field,
            packed: self.packed.is_some(),
            element: Some(index),
        })
    }

    fn finish(self) -> Result<()> {
        if let Some((key_at, start)) = self.packed {
            if self.enc.out.len() == start {
                // An empty array: no field at all.
                self.enc.out.truncate(key_at);
            } else {
                wire::end_len(&mut self.enc.out, start);
            }
        }
        Ok(())
    }
}

/// `SerializeSeq` and `SerializeTuple` for a type whose elements go to `$element`.
macro_rules! seq_and_tuple {
    ($t:ty, $element:ident) => {
        impl ser::SerializeSeq for $t {
            type Ok = ();
            type Error = EncodeError;
            #[inline]
            fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
                self.$element(v)
            }
            fn end(self) -> Result<()> {
                self.finish()
            }
        }

        impl ser::SerializeTuple for $t {
            type Ok = ();
            type Error = EncodeError;
            fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
                self.$element(v)
            }
            fn end(self) -> Result<()> {
                self.finish()
            }
        }
    };
}

seq_and_tuple!(SeqEnc<'_>, element);

/// One value of a field.
struct ValueSer<'a> {
    enc: &'a mut Enc,
    field: &'a FieldPlan,
    /// Inside a packed run: no key before the value.
    packed: bool,
    /// The index in the array, for an element of a REPEATED field.
    element: Option<usize>,
}

/// What a `$bigq::*` newtype hands over.
#[derive(Clone, Copy)]
enum Raw {
    Int(i128),
    Bytes([u8; 32], usize),
}

/// Whether `a` is the magic name `b`: the same constant (the usual case) or equal text.
#[inline]
fn same_name(a: &'static str, b: &'static str) -> bool {
    (std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()) || a == b
}

impl<'a> ValueSer<'a> {
    #[inline(always)]
    fn key(&mut self, key: wire::Key) {
        if !self.packed {
            key.put(&mut self.enc.out);
        }
    }

    #[inline(always)]
    fn varint(&mut self, v: u64) -> Result<()> {
        self.key(self.field.key);
        wire::put_varint(&mut self.enc.out, v);
        Ok(())
    }

    #[inline(always)]
    fn len_bytes(&mut self, b: &[u8]) -> Result<()> {
        self.key(self.field.key);
        wire::put_len_bytes(&mut self.enc.out, b);
        Ok(())
    }

    fn date(&mut self, days: i64) -> Result<()> {
        if !(MIN_DATE..=MAX_DATE).contains(&days) {
            return Err(value_err(
                self.field,
                "DATE out of range (0001-01-01 to 9999-12-31)",
                days.to_string(),
            ));
        }
        // int32 on the wire: negative values sign-extended to 64 bits.
        self.varint(days as u64)
    }

    fn timestamp(&mut self, micros: i64) -> Result<()> {
        if !(MIN_MICROS..=MAX_MICROS).contains(&micros) {
            return Err(value_err(
                self.field,
                "TIMESTAMP out of range (years 1 to 9999)",
                micros.to_string(),
            ));
        }
        self.varint(micros as u64)
    }

    /// Writes the scratch text, formatted by `f`, as a string value.
    fn formatted(&mut self, f: impl FnOnce(&mut String) -> std::fmt::Result) -> Result<()> {
        let mut t = std::mem::take(&mut self.enc.text);
        t.clear();
        let _ = f(&mut t);
        let r = self.len_bytes(t.as_bytes());
        self.enc.text = t;
        r
    }

    fn time(&mut self, micros: i64) -> Result<()> {
        if !(0..=MAX_TIME).contains(&micros) {
            return Err(value_err(
                self.field,
                "TIME out of range",
                micros.to_string(),
            ));
        }
        self.formatted(|t| text::format_time(micros, t))
    }

    fn datetime(&mut self, micros: i64) -> Result<()> {
        if !(MIN_MICROS..=MAX_MICROS).contains(&micros) {
            return Err(value_err(
                self.field,
                "DATETIME out of range (years 1 to 9999)",
                micros.to_string(),
            ));
        }
        self.formatted(|t| text::format_datetime(micros, t))
    }

    fn numeric(&mut self, units: i128) -> Result<()> {
        if value::Numeric::from_scaled(units).is_none() {
            return Err(value_err(
                self.field,
                "NUMERIC out of range",
                units.to_string(),
            ));
        }
        if self.field.numeric_packed {
            // Two's complement, little-endian, in as few bytes as hold the value and its sign.
            let sign_bits = if units < 0 {
                units.leading_ones()
            } else {
                units.leading_zeros()
            };
            let n = ((129 - sign_bits as usize).div_ceil(8)).max(1);
            return self.len_bytes(&units.to_le_bytes()[..n]);
        }
        // The same text the Arrow -> serde side writes for NUMERIC.
        match SmallDecimal::new(units, 9) {
            Some(small) => self.len_bytes(small.as_str().as_bytes()),
            None => {
                let mut text = StackBuf::new();
                write_decimal_i128(&mut text, units, 9)
                    .map_err(|_| value_err(self.field, "NUMERIC too long", units.to_string()))?;
                self.len_bytes(text.as_str().as_bytes())
            }
        }
    }

    fn bignumeric(&mut self, units: i256) -> Result<()> {
        if self.field.numeric_packed {
            return self.packed_int(&units.to_le_bytes());
        }
        self.formatted(|t| write!(t, "{}", value::BigNumeric::from_scaled(units)))
    }

    /// A little-endian two's-complement integer, cut to its shortest form.
    fn packed_int(&mut self, le: &[u8]) -> Result<()> {
        let mut n = le.len();
        while n > 1 {
            let top = le[n - 1];
            let next_sign = le[n - 2] & 0x80;
            if (top == 0 && next_sign == 0) || (top == 0xff && next_sign != 0) {
                n -= 1;
            } else {
                break;
            }
        }
        self.len_bytes(&le[..n])
    }

    /// A whole number into any numeric or temporal column.
    fn int(&mut self, v: i128) -> Result<()> {
        let f = self.field;
        let as_i64 =
            || i64::try_from(v).map_err(|_| value_err(f, "out of range for INT64", v.to_string()));
        match f.kind {
            Kind::Int64 => self.varint(as_i64()? as u64),
            Kind::Float64 => {
                let x = as_i64()?;
                if x.unsigned_abs() > MAX_EXACT_F64 as u64 {
                    return Err(value_err(
                        f,
                        "integer too large to be exact in a FLOAT64",
                        x.to_string(),
                    ));
                }
                self.float(x as f64)
            }
            Kind::Numeric => {
                let units = v
                    .checked_mul(1_000_000_000)
                    .ok_or_else(|| value_err(f, "NUMERIC out of range", v.to_string()))?;
                self.numeric(units)
            }
            Kind::BigNumeric => {
                let units = i256::from_i128(v)
                    .checked_mul(i256::from_i128(10).wrapping_pow(38))
                    .ok_or_else(|| value_err(f, "BIGNUMERIC out of range", v.to_string()))?;
                self.bignumeric(units)
            }
            Kind::Date => self.date(as_i64()?),
            Kind::Timestamp => self.timestamp(as_i64()?),
            Kind::Time => self.time(as_i64()?),
            Kind::DateTime => self.datetime(as_i64()?),
            _ => Err(EncodeError::new(
                mismatch(f, "an integer").0.with_value(v.to_string()),
            )),
        }
    }

    #[inline(always)]
    fn float(&mut self, v: f64) -> Result<()> {
        if self.field.kind == Kind::Float64 {
            self.key(self.field.key);
            self.enc.out.extend_from_slice(&v.to_le_bytes());
            return Ok(());
        }
        self.float_other(v)
    }

    /// A float for a column other than FLOAT64.
    #[inline(never)]
    fn float_other(&mut self, v: f64) -> Result<()> {
        match self.field.kind {
            Kind::Numeric | Kind::BigNumeric => {
                if !v.is_finite() {
                    return Err(value_err(
                        self.field,
                        format!("{} cannot be {v}", self.field.kind.name()),
                        v.to_string(),
                    ));
                }
                // The shortest decimal text of the float: 0.1 is the decimal 0.1.
                let mut t = std::mem::take(&mut self.enc.text);
                t.clear();
                let _ = write!(t, "{v}");
                let r = self.text_value(&t);
                self.enc.text = t;
                r
            }
            _ => Err(mismatch(self.field, "a float")),
        }
    }

    /// A text value, parsed for the typed columns.
    #[inline(always)]
    fn text_value(&mut self, s: &str) -> Result<()> {
        if self.field.kind == Kind::String && self.field.max_length.is_none() {
            return self.len_bytes(s.as_bytes());
        }
        self.text_other(s)
    }

    /// A text value for a column with a length limit or of another type than STRING.
    #[inline(never)]
    fn text_other(&mut self, s: &str) -> Result<()> {
        let f = self.field;
        let bad = |what: &str| value_err(f, format!("not a valid {what}"), s);
        match f.kind {
            Kind::String => {
                if let Some(max) = f.max_length
                    && s.len() > max
                    && s.chars().count() > max
                {
                    return Err(value_err(
                        f,
                        format!("STRING longer than the column's maxLength of {max}"),
                        s,
                    ));
                }
                self.len_bytes(s.as_bytes())
            }
            Kind::Json | Kind::Geography => self.len_bytes(s.as_bytes()),
            Kind::Numeric => {
                let units = text::parse_decimal_i128(s.trim().as_bytes(), 9)
                    .ok_or_else(|| bad("NUMERIC"))?;
                self.numeric(units)
            }
            Kind::BigNumeric => {
                let units = text::parse_decimal_i256(s.trim().as_bytes(), 38)
                    .ok_or_else(|| bad("BIGNUMERIC"))?;
                self.bignumeric(units)
            }
            Kind::Date => {
                let d = text::parse_date(s.as_bytes()).ok_or_else(|| bad("DATE"))?;
                self.date(d as i64)
            }
            Kind::Timestamp => {
                let t = text::parse_timestamp(s.as_bytes()).ok_or_else(|| bad("TIMESTAMP"))?;
                self.timestamp(t)
            }
            Kind::Time => {
                let t = text::parse_time(s.as_bytes()).ok_or_else(|| bad("TIME"))?;
                self.time(t)
            }
            Kind::DateTime => {
                let t = text::parse_datetime(s.as_bytes()).ok_or_else(|| bad("DATETIME"))?;
                self.datetime(t)
            }
            Kind::Interval => {
                let p = text::parse_interval(s.trim().as_bytes()).ok_or_else(|| bad("INTERVAL"))?;
                let i = value::Interval::from(p);
                self.formatted(|t| write!(t, "{i}"))
            }
            Kind::Range => self.range_text(s),
            Kind::Int64 | Kind::Float64 | Kind::Bool | Kind::Bytes | Kind::Record => {
                Err(EncodeError::new(mismatch(f, "a string").0.with_value(s)))
            }
        }
    }

    /// A RANGE as text, `[start, end)` with `UNBOUNDED` (or `NULL`) for an open bound.
    fn range_text(&mut self, s: &str) -> Result<()> {
        let f = self.field;
        let bad = || value_err(f, "not a valid RANGE ([start, end))", s);
        let inner = s
            .trim()
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(bad)?;
        let (start, end) = inner.split_once(',').ok_or_else(bad)?;
        let nested = f.nested.as_deref().ok_or_else(bad)?;
        self.key(f.key);
        let len_start = wire::begin_len(&mut self.enc.out);
        for (bound, plan) in [start.trim(), end.trim()].into_iter().zip(&nested.fields) {
            if bound.eq_ignore_ascii_case("UNBOUNDED") || bound.eq_ignore_ascii_case("NULL") {
                continue;
            }
            ValueSer {
                enc: self.enc,
                field: plan,
                packed: false,
                element: None,
            }
            .text_value(bound)
            .map_err(|EncodeError(e)| EncodeError::new(e.with_column(&f.path)))?;
        }
        wire::end_len(&mut self.enc.out, len_start);
        Ok(())
    }

    /// A `$bigq::*` newtype's raw value, for the column of its type; any other column gets
    /// its text.
    /// A raw value of bigq's value types (see [`Capture`]). The column's kind says which
    /// one it should be, so the usual case costs one name comparison.
    #[inline]
    fn raw(&mut self, name: &'static str, raw: Raw) -> Result<()> {
        let kind = self.field.kind;
        let expected = match kind {
            Kind::Numeric => magic::NUMERIC,
            Kind::Date => magic::DATE,
            Kind::Timestamp => magic::TIMESTAMP,
            Kind::DateTime => magic::DATETIME,
            Kind::Time => magic::TIME,
            Kind::BigNumeric => magic::BIGNUMERIC,
            _ => "",
        };
        if same_name(name, expected) {
            match (kind, raw) {
                (Kind::Numeric, Raw::Int(v)) => return self.numeric(v),
                (Kind::Date, Raw::Int(v)) => return self.date(v as i64),
                (Kind::Timestamp, Raw::Int(v)) => return self.timestamp(v as i64),
                (Kind::DateTime, Raw::Int(v)) => return self.datetime(v as i64),
                (Kind::Time, Raw::Int(v)) => return self.time(v as i64),
                (Kind::BigNumeric, Raw::Bytes(b, 32)) => {
                    return self.bignumeric(i256::from_le_bytes(b));
                }
                _ => {}
            }
        }
        self.raw_as_text(name, raw)
    }

    /// A raw value for a column of another type: written as the value's text.
    #[cold]
    #[inline(never)]
    fn raw_as_text(&mut self, name: &'static str, raw: Raw) -> Result<()> {
        // Another column type: go through the value's text.
        let mut t = std::mem::take(&mut self.enc.text);
        t.clear();
        let ok = match (name, raw) {
            (magic::NUMERIC, Raw::Int(v)) => value::Numeric::from_scaled(v)
                .map(|n| write!(t, "{n}").is_ok())
                .unwrap_or(false),
            (magic::BIGNUMERIC, Raw::Bytes(b, 32)) => write!(
                t,
                "{}",
                value::BigNumeric::from_scaled(i256::from_le_bytes(b))
            )
            .is_ok(),
            (magic::DATE, Raw::Int(v)) => text::format_date(v as i32, &mut t).is_ok(),
            (magic::TIME, Raw::Int(v)) => text::format_time(v as i64, &mut t).is_ok(),
            (magic::DATETIME, Raw::Int(v)) => text::format_datetime(v as i64, &mut t).is_ok(),
            (magic::TIMESTAMP, Raw::Int(v)) => text::format_timestamp(v as i64, &mut t).is_ok(),
            (magic::INTERVAL, Raw::Bytes(b, 16)) => {
                let months = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let days = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
                let mut n = [0u8; 8];
                n.copy_from_slice(&b[8..16]);
                let i = value::Interval::new(months, days, i64::from_le_bytes(n));
                write!(t, "{i}").is_ok()
            }
            _ => false,
        };
        let r = if ok {
            self.text_value(&t)
        } else {
            Err(mismatch(self.field, name.trim_start_matches(magic::PREFIX)))
        };
        self.enc.text = t;
        r
    }

    fn null(&mut self) -> Result<()> {
        if let Some(i) = self.element {
            return Err(err(
                self.field,
                format!("NULL element at index {i} of an ARRAY (BigQuery arrays hold no NULLs)"),
            ));
        }
        if self.field.required {
            return Err(err(self.field, "NULL in a REQUIRED column"));
        }
        Ok(())
    }

    /// A RECORD or RANGE given as a struct or map: a nested message.
    fn message(mut self) -> Result<StructEnc<'a>> {
        let f = self.field;
        match (&f.nested, f.kind) {
            (Some(nested), Kind::Record | Kind::Range) => {
                self.key(f.key);
                let start = wire::begin_len(&mut self.enc.out);
                Ok(StructEnc::new(self.enc, nested, Some(start), &f.path))
            }
            _ => Err(mismatch(f, "a struct or map")),
        }
    }
}

impl<'a> ser::Serializer for ValueSer<'a> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = BytesSeq<'a>;
    type SerializeTuple = BytesSeq<'a>;
    type SerializeTupleStruct = Impossible<(), EncodeError>;
    type SerializeTupleVariant = Impossible<(), EncodeError>;
    type SerializeMap = StructEnc<'a>;
    type SerializeStruct = StructEnc<'a>;
    type SerializeStructVariant = Impossible<(), EncodeError>;

    #[inline]
    fn serialize_bool(mut self, v: bool) -> Result<()> {
        if self.field.kind != Kind::Bool {
            if self.field.kind == Kind::Json {
                return Err(not_json_text());
            }
            return Err(mismatch(self.field, "a bool"));
        }
        self.varint(v as u64)
    }
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    #[inline]
    fn serialize_i32(mut self, v: i32) -> Result<()> {
        if self.field.kind == Kind::Date {
            return self.date(v as i64);
        }
        self.serialize_i64(v as i64)
    }
    #[inline]
    fn serialize_i64(mut self, v: i64) -> Result<()> {
        match self.field.kind {
            Kind::Int64 => self.varint(v as u64),
            Kind::Json => Err(not_json_text()),
            _ => self.int(v as i128),
        }
    }
    fn serialize_i128(mut self, v: i128) -> Result<()> {
        if self.field.kind == Kind::Json {
            return Err(not_json_text());
        }
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.serialize_i128(v as i128)
    }
    fn serialize_u128(self, v: u128) -> Result<()> {
        match i128::try_from(v) {
            Ok(v) => self.serialize_i128(v),
            Err(_) => Err(value_err(self.field, "integer out of range", v.to_string())),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<()> {
        // Through its shortest text, so 0.1f32 is 0.1 and not 0.100000001490116.
        match v.to_string().parse::<f64>() {
            Ok(x) if v.is_finite() => self.serialize_f64(x),
            _ => self.serialize_f64(v as f64),
        }
    }
    #[inline]
    fn serialize_f64(mut self, v: f64) -> Result<()> {
        if self.field.kind == Kind::Json {
            return Err(not_json_text());
        }
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<()> {
        let mut b = [0u8; 4];
        self.serialize_str(v.encode_utf8(&mut b))
    }
    #[inline]
    fn serialize_str(mut self, v: &str) -> Result<()> {
        self.text_value(v)
    }
    fn serialize_bytes(mut self, v: &[u8]) -> Result<()> {
        if self.field.kind != Kind::Bytes {
            if self.field.kind == Kind::Json {
                return Err(not_json_text());
            }
            return Err(mismatch(self.field, "bytes"));
        }
        if let Some(max) = self.field.max_length
            && v.len() > max
        {
            return Err(value_err(
                self.field,
                format!("BYTES longer than the column's maxLength of {max}"),
                v,
            ));
        }
        self.len_bytes(v)
    }
    #[inline]
    fn serialize_none(mut self) -> Result<()> {
        self.null()
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_unit(mut self) -> Result<()> {
        self.null()
    }
    fn serialize_unit_struct(mut self, _: &'static str) -> Result<()> {
        self.null()
    }
    /// A unit enum variant is its name, for STRING columns.
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.serialize_str(variant)
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        mut self,
        name: &'static str,
        v: &T,
    ) -> Result<()> {
        if name.starts_with(magic::PREFIX)
            && let Ok(raw) = v.serialize(Capture)
        {
            return self.raw(name, raw);
        }
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(self.other("an enum variant with data"))
    }
    fn serialize_seq(mut self, _: Option<usize>) -> Result<BytesSeq<'a>> {
        if self.field.kind != Kind::Bytes {
            return Err(self.other("a sequence (for a column that is not REPEATED)"));
        }
        self.key(self.field.key);
        let start = wire::begin_len(&mut self.enc.out);
        Ok(BytesSeq {
            enc: self.enc,
            field: self.field,
            start,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<BytesSeq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(self.other("a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(self.other("an enum variant with data"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<StructEnc<'a>> {
        if self.field.kind == Kind::Json {
            return Err(not_json_text());
        }
        self.message()
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<StructEnc<'a>> {
        if self.field.kind == Kind::Json {
            return Err(not_json_text());
        }
        self.message()
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(self.other("an enum variant with data"))
    }
    fn collect_str<T: std::fmt::Display + ?Sized>(mut self, v: &T) -> Result<()> {
        let mut t = std::mem::take(&mut self.enc.text);
        t.clear();
        let _ = write!(t, "{v}");
        let r = self.text_value(&t);
        self.enc.text = t;
        r
    }
}

impl ValueSer<'_> {
    /// A value that is not JSON text into a JSON column (then encoded with serde_json), or a
    /// type mismatch.
    fn other(&self, what: &str) -> EncodeError {
        if self.field.kind == Kind::Json {
            not_json_text()
        } else {
            mismatch(self.field, what)
        }
    }
}

fn not_json_text() -> EncodeError {
    EncodeError::new(CodecError::new(CodecErrorKind::Serialize, NOT_JSON_TEXT))
}

/// A BYTES value given as a sequence of `u8` (what `Vec<u8>` serializes as).
pub(crate) struct BytesSeq<'a> {
    enc: &'a mut Enc,
    field: &'a FieldPlan,
    start: usize,
}

impl BytesSeq<'_> {
    fn byte<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        match v.serialize(Capture) {
            Ok(Raw::Int(b)) if (0..=255).contains(&b) => {
                self.enc.out.push(b as u8);
                Ok(())
            }
            _ => Err(mismatch(self.field, "a sequence of non-bytes")),
        }
    }
    fn finish(self) -> Result<()> {
        let len = self.enc.out.len() - self.start;
        if let Some(max) = self.field.max_length
            && len > max
        {
            return Err(value_err(
                self.field,
                format!("BYTES longer than the column's maxLength of {max}"),
                &self.enc.out[self.start..],
            ));
        }
        wire::end_len(&mut self.enc.out, self.start);
        Ok(())
    }
}

seq_and_tuple!(BytesSeq<'_>, byte);

/// Takes the raw value out of a `$bigq::*` newtype: an integer or up to 32 bytes. Anything
/// else is [`NotRaw`], and the value is then serialized as an ordinary one.
struct Capture;

/// What [`Capture`] returns for a value that is not raw.
#[derive(Debug)]
struct NotRaw;

impl std::fmt::Display for NotRaw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a raw value")
    }
}

impl std::error::Error for NotRaw {}

impl ser::Error for NotRaw {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        NotRaw
    }
}

impl ser::Serializer for Capture {
    type Ok = Raw;
    type Error = NotRaw;
    type SerializeSeq = Impossible<Raw, NotRaw>;
    type SerializeTuple = Impossible<Raw, NotRaw>;
    type SerializeTupleStruct = Impossible<Raw, NotRaw>;
    type SerializeTupleVariant = Impossible<Raw, NotRaw>;
    type SerializeMap = Impossible<Raw, NotRaw>;
    type SerializeStruct = Impossible<Raw, NotRaw>;
    type SerializeStructVariant = Impossible<Raw, NotRaw>;

    fn serialize_i8(self, v: i8) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_i16(self, v: i16) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_i32(self, v: i32) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_i64(self, v: i64) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_i128(self, v: i128) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_u16(self, v: u16) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_u32(self, v: u32) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_u64(self, v: u64) -> Result<Raw, NotRaw> {
        Ok(Raw::Int(v as i128))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Raw, NotRaw> {
        let mut b = [0u8; 32];
        if v.len() > 32 {
            return Err(NotRaw);
        }
        b[..v.len()].copy_from_slice(v);
        Ok(Raw::Bytes(b, v.len()))
    }
    reject!(NotRaw;
        serialize_bool(bool),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );
    reject_compound!(NotRaw;
        some, newtype_struct, newtype_variant, seq, tuple, tuple_struct, tuple_variant, map,
        struct, struct_variant);
}

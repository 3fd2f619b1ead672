//! Column builders that decode REST cells straight into Arrow buffers.
//!
//! Each builder owns plain `Vec`s that become Arrow buffers without a copy when a batch is
//! finished, and can be truncated back to a row count, so that a row cut off at the end of a
//! chunk is rolled back and decoded again once the rest arrives.

use std::sync::Arc;

use arrow_array::types::{
    Date32Type, Decimal128Type, Decimal256Type, Float64Type, Int64Type, IntervalMonthDayNanoType,
    Time64MicrosecondType, TimestampMicrosecondType,
};
use arrow_array::{
    ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, ListArray, PrimitiveArray,
    StringArray, StructArray,
};
use arrow_buffer::{
    BooleanBuffer, BooleanBufferBuilder, Buffer, IntervalMonthDayNano, NullBuffer, OffsetBuffer,
    ScalarBuffer, i256,
};
use arrow_schema::{DataType, Field, FieldRef, Fields};
use base64::Engine;

use super::scan::{Cursor, Step, Stop};
use crate::CodecError;
use crate::schema::{FieldType, TableFieldSchema};
use crate::value::text;

/// How TIMESTAMP cells are rendered in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimestampFormat {
    /// Accept every form: integer microseconds (`formatOptions.useInt64Timestamp`), float
    /// seconds (`1.7040672E9`), or timestamp text.
    #[default]
    Auto,
    /// Only float seconds, the REST default: an integer is read as seconds.
    FloatSeconds,
}

/// Whether a slot may hold NULL, and what to say when it gets one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nulls {
    /// A NULLABLE column.
    Allowed,
    /// A REQUIRED column (an Arrow field that is not nullable).
    Required,
    /// An element of a REPEATED column: BigQuery arrays cannot hold NULL.
    ArrayElement,
}

impl Nulls {
    /// The rule for a column with this Arrow field.
    pub fn of(field: &Field) -> Nulls {
        if field.is_nullable() {
            Nulls::Allowed
        } else {
            Nulls::Required
        }
    }
}

/// Validity bits that are only materialised once a NULL is seen.
#[derive(Default)]
pub(crate) struct Validity {
    bits: Option<BooleanBufferBuilder>,
    len: usize,
}

impl Validity {
    #[inline]
    fn push(&mut self, valid: bool) {
        match (&mut self.bits, valid) {
            (Some(b), v) => b.append(v),
            (None, true) => {}
            (None, false) => {
                let mut b = BooleanBufferBuilder::new(self.len.max(64) * 2);
                b.append_n(self.len, true);
                b.append(false);
                self.bits = Some(b);
            }
        }
        self.len += 1;
    }

    fn truncate(&mut self, len: usize) {
        if let Some(b) = &mut self.bits {
            b.truncate(len);
        }
        self.len = len;
    }

    fn finish(&mut self) -> Option<NullBuffer> {
        self.len = 0;
        self.bits.take().map(|mut b| NullBuffer::new(b.finish()))
    }
}

pub(crate) struct Prim<T> {
    values: Vec<T>,
    validity: Validity,
}

impl<T: arrow_buffer::ArrowNativeType> Prim<T> {
    fn new() -> Self {
        Prim {
            values: Vec::new(),
            validity: Validity::default(),
        }
    }

    #[inline]
    fn push(&mut self, v: T) {
        self.values.push(v);
        self.validity.push(true);
    }

    #[inline]
    fn push_null(&mut self) {
        self.values.push(T::default());
        self.validity.push(false);
    }

    fn truncate(&mut self, len: usize) {
        self.values.truncate(len);
        self.validity.truncate(len);
    }

    fn finish<A: ArrowPrimitiveType<Native = T>>(&mut self) -> PrimitiveArray<A> {
        let cap = self.values.len();
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(cap));
        PrimitiveArray::<A>::new(ScalarBuffer::from(values), self.validity.finish())
    }
}

pub(crate) struct Bytes {
    offsets: Vec<i32>,
    data: Vec<u8>,
    validity: Validity,
}

impl Bytes {
    fn new() -> Self {
        Bytes {
            offsets: vec![0],
            data: Vec::new(),
            validity: Validity::default(),
        }
    }

    #[inline]
    fn commit(&mut self) -> Result<(), CodecError> {
        let end = i32::try_from(self.data.len()).map_err(|_| {
            CodecError::new(
                crate::CodecErrorKind::Value,
                "more than 2 GiB of text in one batch",
            )
        })?;
        self.offsets.push(end);
        self.validity.push(true);
        Ok(())
    }

    #[inline]
    fn push_null(&mut self) {
        self.offsets.push(*self.offsets.last().unwrap_or(&0));
        self.validity.push(false);
    }

    /// Appends the string at the cursor, unescaped and checked to be UTF-8 (here rather
    /// than when the batch is finished, so that an error names the row).
    #[inline]
    fn push_text(&mut self, cur: &mut Cursor<'_>) -> Step<()> {
        let span = cur.string_span()?;
        let raw = &cur.buf[span.start..span.end];
        let start = self.data.len();
        if span.escaped {
            super::scan::unescape(raw, &mut self.data)
                .map_err(|err| Stop::Error(err.with_offset(span.start as u64)))?;
        } else {
            self.data.extend_from_slice(raw);
        }
        if !span.ascii && std::str::from_utf8(&self.data[start..]).is_err() {
            self.data.truncate(start);
            return Err(Stop::Error(
                CodecError::new(crate::CodecErrorKind::Value, "invalid UTF-8 in text")
                    .with_value(raw),
            ));
        }
        self.commit().map_err(Stop::Error)
    }

    fn truncate(&mut self, len: usize) {
        self.offsets.truncate(len + 1);
        self.data.truncate(self.offsets[len] as usize);
        self.validity.truncate(len);
    }

    fn take(&mut self) -> (OffsetBuffer<i32>, Buffer, Option<NullBuffer>) {
        let n = self.offsets.len();
        let d = self.data.len();
        let offsets = std::mem::replace(&mut self.offsets, Vec::with_capacity(n));
        self.offsets.push(0);
        // Room for a batch like this one plus 1/8: text lengths vary from batch to batch,
        // and growing past the capacity would allocate twice as much.
        let data = std::mem::replace(&mut self.data, Vec::with_capacity(d + d / 8));
        // Offsets are built monotonic from 0 by `commit` and `push_null`.
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        (offsets, Buffer::from_vec(data), self.validity.finish())
    }
}

/// A column being decoded.
pub(crate) enum Column {
    Int64(Prim<i64>),
    Float64(Prim<f64>),
    Numeric(Prim<i128>),
    BigNumeric(Prim<i256>),
    Date(Prim<i32>),
    Time(Prim<i64>),
    DateTime(Prim<i64>),
    Timestamp(Prim<i64>, TimestampFormat),
    Interval(Prim<IntervalMonthDayNano>),
    Bool {
        values: BooleanBufferBuilder,
        validity: Validity,
    },
    Utf8(Bytes),
    Binary(Bytes),
    Range {
        start: Box<Column>,
        end: Box<Column>,
        validity: Validity,
    },
    Struct {
        fields: Fields,
        children: Vec<Column>,
        nulls: Vec<Nulls>,
        validity: Validity,
        len: usize,
    },
    List {
        field: FieldRef,
        offsets: Vec<i32>,
        child: Box<Column>,
    },
}

impl Column {
    /// A builder for one column of the schema, with its Arrow field.
    pub fn for_field(
        f: &TableFieldSchema,
        field: &Field,
        ts: TimestampFormat,
    ) -> Result<Column, CodecError> {
        if f.is_repeated() {
            let DataType::List(item) = field.data_type() else {
                return Err(
                    CodecError::schema("REPEATED column is not an Arrow list").with_column(&f.name)
                );
            };
            let mut single = f.clone();
            single.mode = None;
            let child = Column::for_element(&single, item, ts)?;
            return Ok(Column::List {
                field: item.clone(),
                offsets: vec![0],
                child: Box::new(child),
            });
        }
        Column::for_element(f, field, ts)
    }

    fn for_element(
        f: &TableFieldSchema,
        field: &Field,
        ts: TimestampFormat,
    ) -> Result<Column, CodecError> {
        Ok(match &f.field_type {
            FieldType::Int64 => Column::Int64(Prim::new()),
            FieldType::Float64 => Column::Float64(Prim::new()),
            FieldType::Numeric => Column::Numeric(Prim::new()),
            FieldType::BigNumeric => Column::BigNumeric(Prim::new()),
            FieldType::Bool => Column::Bool {
                values: BooleanBufferBuilder::new(1024),
                validity: Validity::default(),
            },
            FieldType::String | FieldType::Json | FieldType::Geography => {
                Column::Utf8(Bytes::new())
            }
            FieldType::Bytes => Column::Binary(Bytes::new()),
            FieldType::Date => Column::Date(Prim::new()),
            FieldType::Time => Column::Time(Prim::new()),
            FieldType::DateTime => Column::DateTime(Prim::new()),
            FieldType::Timestamp => Column::Timestamp(Prim::new(), ts),
            FieldType::Interval => Column::Interval(Prim::new()),
            FieldType::Range => {
                let el = f.range_element_type.as_ref().map(|r| &r.element_type);
                let side = || match el {
                    Some(FieldType::Date) => Ok(Column::Date(Prim::new())),
                    Some(FieldType::DateTime) => Ok(Column::DateTime(Prim::new())),
                    Some(FieldType::Timestamp) => Ok(Column::Timestamp(Prim::new(), ts)),
                    _ => Err(CodecError::schema(
                        "RANGE without a DATE, DATETIME or TIMESTAMP element",
                    )
                    .with_column(&f.name)),
                };
                Column::Range {
                    start: Box::new(side()?),
                    end: Box::new(side()?),
                    validity: Validity::default(),
                }
            }
            FieldType::Record => {
                let DataType::Struct(fields) = field.data_type() else {
                    return Err(CodecError::schema("RECORD column is not an Arrow struct")
                        .with_column(&f.name));
                };
                let children = f
                    .fields
                    .iter()
                    .zip(fields.iter())
                    .map(|(sf, af)| {
                        Column::for_field(sf, af, ts).map_err(|e| e.with_parent_column(&f.name))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Column::Struct {
                    fields: fields.clone(),
                    children,
                    nulls: fields.iter().map(|f| Nulls::of(f)).collect(),
                    validity: Validity::default(),
                    len: 0,
                }
            }
            FieldType::Unknown(t) => {
                return Err(
                    CodecError::schema(format!("unknown BigQuery type `{t}`")).with_column(&f.name)
                );
            }
        })
    }

    /// Rolls the column back to `len` values.
    pub fn truncate(&mut self, len: usize) {
        match self {
            Column::Int64(p) | Column::Time(p) | Column::DateTime(p) | Column::Timestamp(p, _) => {
                p.truncate(len)
            }
            Column::Float64(p) => p.truncate(len),
            Column::Numeric(p) => p.truncate(len),
            Column::BigNumeric(p) => p.truncate(len),
            Column::Date(p) => p.truncate(len),
            Column::Interval(p) => p.truncate(len),
            Column::Bool { values, validity } => {
                values.truncate(len);
                validity.truncate(len);
            }
            Column::Utf8(b) | Column::Binary(b) => b.truncate(len),
            Column::Range {
                start,
                end,
                validity,
                ..
            } => {
                start.truncate(len);
                end.truncate(len);
                validity.truncate(len);
            }
            Column::Struct {
                children,
                validity,
                len: l,
                ..
            } => {
                for c in children {
                    c.truncate(len);
                }
                validity.truncate(len);
                *l = len;
            }
            Column::List { offsets, child, .. } => {
                offsets.truncate(len + 1);
                child.truncate(offsets[len] as usize);
            }
        }
    }

    fn push_null(&mut self) -> Result<(), &'static str> {
        match self {
            Column::Int64(p) | Column::Time(p) | Column::DateTime(p) | Column::Timestamp(p, _) => {
                p.push_null()
            }
            Column::Float64(p) => p.push_null(),
            Column::Numeric(p) => p.push_null(),
            Column::BigNumeric(p) => p.push_null(),
            Column::Date(p) => p.push_null(),
            Column::Interval(p) => p.push_null(),
            Column::Bool { values, validity } => {
                values.append(false);
                validity.push(false);
            }
            Column::Utf8(b) | Column::Binary(b) => b.push_null(),
            Column::Range {
                start,
                end,
                validity,
                ..
            } => {
                start.push_null()?;
                end.push_null()?;
                validity.push(false);
            }
            Column::Struct {
                children,
                validity,
                len,
                ..
            } => {
                for c in children {
                    c.push_null()?;
                }
                validity.push(false);
                *len += 1;
            }
            Column::List { offsets, .. } => {
                // BigQuery never sends NULL for an array; an absent array is empty.
                offsets.push(*offsets.last().unwrap_or(&0));
            }
        }
        Ok(())
    }

    /// Appends a NULL, unless the slot may not hold one. An array is never NULL in
    /// BigQuery: a NULL array reads as an empty one.
    fn null_into(&mut self, nulls: Nulls) -> Step<()> {
        if nulls != Nulls::Allowed && !matches!(self, Column::List { .. }) {
            return Err(Stop::Error(CodecError::new(
                crate::CodecErrorKind::Value,
                match nulls {
                    Nulls::ArrayElement => "NULL element in an ARRAY",
                    _ => "NULL in a REQUIRED column",
                },
            )));
        }
        self.push_null()
            .map_err(|m| Stop::Error(CodecError::syntax(m)))
    }

    /// Decodes one cell value (what follows `"v":`) into the column.
    #[inline]
    pub fn decode_value(
        &mut self,
        nulls: Nulls,
        cur: &mut Cursor<'_>,
        scratch: &mut Vec<u8>,
    ) -> Step<()> {
        let c = cur.peek()?;
        if c == b'"' {
            // The hot path: BigQuery sends every scalar as a string.
            match self {
                Column::Utf8(b) => return b.push_text(cur),
                Column::Binary(_)
                | Column::Bool { .. }
                | Column::Range { .. }
                | Column::Struct { .. }
                | Column::List { .. } => {}
                _ => {
                    let raw = cur.string(scratch)?;
                    return self.push_text(raw).map_err(|t| value_error(t, raw));
                }
            }
        }
        self.decode_other_value(c, nulls, cur, scratch)
    }

    /// [`decode_value`](Self::decode_value) for NULL, BOOL, BYTES, RANGE, RECORD, arrays and
    /// bare numbers.
    #[inline(never)]
    fn decode_other_value(
        &mut self,
        c: u8,
        nulls: Nulls,
        cur: &mut Cursor<'_>,
        scratch: &mut Vec<u8>,
    ) -> Step<()> {
        if c == b'n' {
            cur.literal(b"null")?;
            return self.null_into(nulls);
        }
        match self {
            Column::Utf8(_) => Err(cur.unexpected(c, "expected a string")),
            Column::Binary(b) => {
                if c != b'"' {
                    return Err(cur.unexpected(c, "expected a base64 string"));
                }
                let raw = cur.string(scratch)?;
                let start = b.data.len();
                b.data.resize(start + raw.len().div_ceil(4) * 3, 0);
                match base64::engine::general_purpose::STANDARD
                    .decode_slice(raw, &mut b.data[start..])
                {
                    Ok(n) => b.data.truncate(start + n),
                    Err(_) => {
                        b.data.truncate(start);
                        return Err(value_error("BYTES", raw));
                    }
                }
                b.commit().map_err(Stop::Error)
            }
            Column::Bool { values, validity } => {
                let v = match c {
                    b't' => {
                        cur.literal(b"true")?;
                        true
                    }
                    b'f' => {
                        cur.literal(b"false")?;
                        false
                    }
                    b'"' => {
                        let raw = cur.string(scratch)?;
                        if raw.eq_ignore_ascii_case(b"true") {
                            true
                        } else if raw.eq_ignore_ascii_case(b"false") {
                            false
                        } else {
                            return Err(value_error("BOOL", raw));
                        }
                    }
                    _ => return Err(cur.unexpected(c, "expected a BOOL")),
                };
                values.append(v);
                validity.push(true);
                Ok(())
            }
            Column::Struct {
                children,
                nulls,
                validity,
                len,
                ..
            } => {
                decode_record(children, nulls, cur, scratch)?;
                validity.push(true);
                *len += 1;
                Ok(())
            }
            Column::List { offsets, child, .. } => {
                cur.expect(b'[')?;
                let mut n = 0usize;
                if cur.peek()? == b']' {
                    cur.pos += 1;
                } else {
                    loop {
                        // Elements are wrapped as cells: {"v": value}.
                        decode_cell(child, Nulls::ArrayElement, cur, scratch)?;
                        n += 1;
                        match cur.peek()? {
                            b',' => cur.pos += 1,
                            b']' => {
                                cur.pos += 1;
                                break;
                            }
                            other => {
                                return Err(
                                    cur.unexpected(other, "expected `,` or `]` in an array")
                                );
                            }
                        }
                    }
                }
                let last = *offsets.last().unwrap_or(&0);
                offsets.push(last + n as i32);
                Ok(())
            }
            Column::Range {
                start,
                end,
                validity,
            } => {
                if c != b'"' {
                    return Err(cur.unexpected(c, "expected a RANGE string"));
                }
                let raw = cur.string(scratch)?;
                let inner = raw
                    .strip_prefix(b"[")
                    .and_then(|r| r.strip_suffix(b")"))
                    .ok_or_else(|| value_error("RANGE", raw))?;
                let comma = inner
                    .iter()
                    .position(|&b| b == b',')
                    .ok_or_else(|| value_error("RANGE", raw))?;
                let (a, b) = (trim(&inner[..comma]), trim(&inner[comma + 1..]));
                for (side, col) in [(a, start), (b, end)] {
                    if side.eq_ignore_ascii_case(b"UNBOUNDED") || side.eq_ignore_ascii_case(b"NULL")
                    {
                        col.push_null()
                            .map_err(|m| Stop::Error(CodecError::syntax(m)))?;
                    } else {
                        col.push_text(side).map_err(|_| value_error("RANGE", raw))?;
                    }
                }
                validity.push(true);
                Ok(())
            }
            _ => {
                // A scalar written (leniently) as a bare number.
                if !matches!(c, b'-' | b'0'..=b'9') {
                    return Err(cur.unexpected(c, "expected a string"));
                }
                let (s, e) = cur.number_raw()?;
                let raw = &cur.buf[s..e];
                self.push_text(raw).map_err(|t| value_error(t, raw))
            }
        }
    }

    /// Parses a scalar's text and appends it; on failure returns the BigQuery type name.
    #[inline]
    fn push_text(&mut self, raw: &[u8]) -> Result<(), &'static str> {
        match self {
            Column::Int64(p) => p.push(text::parse_i64(raw).ok_or("INT64")?),
            Column::Float64(p) => p.push(parse_f64(raw).ok_or("FLOAT64")?),
            Column::Numeric(p) => {
                let v = text::parse_decimal_i128(raw, 9)
                    .filter(|v| v.unsigned_abs() < 10u128.pow(38))
                    .ok_or("NUMERIC")?;
                p.push(v)
            }
            Column::BigNumeric(p) => p.push(text::parse_decimal_i256(raw, 38).ok_or("BIGNUMERIC")?),
            Column::Date(p) => p.push(text::parse_date(raw).ok_or("DATE")?),
            Column::Time(p) => p.push(text::parse_time(raw).ok_or("TIME")?),
            Column::DateTime(p) => p.push(text::parse_datetime(raw).ok_or("DATETIME")?),
            Column::Timestamp(p, f) => p.push(parse_timestamp_cell(raw, *f).ok_or("TIMESTAMP")?),
            Column::Interval(p) => {
                let i = text::parse_interval(raw).ok_or("INTERVAL")?;
                p.push(IntervalMonthDayNano::new(i.months, i.days, i.nanos))
            }
            _ => return Err("value"),
        }
        Ok(())
    }

    /// Finishes the values decoded so far into an Arrow array and resets the builder.
    pub fn finish(&mut self, field: &Field) -> Result<ArrayRef, CodecError> {
        let dt = field.data_type();
        Ok(match self {
            Column::Int64(p) => Arc::new(p.finish::<Int64Type>()),
            Column::Float64(p) => Arc::new(p.finish::<Float64Type>()),
            Column::Numeric(p) => Arc::new(p.finish::<Decimal128Type>().with_data_type(dt.clone())),
            Column::BigNumeric(p) => {
                Arc::new(p.finish::<Decimal256Type>().with_data_type(dt.clone()))
            }
            Column::Date(p) => Arc::new(p.finish::<Date32Type>()),
            Column::Time(p) => Arc::new(p.finish::<Time64MicrosecondType>()),
            Column::DateTime(p) | Column::Timestamp(p, _) => Arc::new(
                p.finish::<TimestampMicrosecondType>()
                    .with_data_type(dt.clone()),
            ),
            Column::Interval(p) => Arc::new(p.finish::<IntervalMonthDayNanoType>()),
            Column::Bool { values, validity } => {
                let v: BooleanBuffer = values.finish();
                Arc::new(BooleanArray::new(v, validity.finish()))
            }
            Column::Utf8(b) => {
                let (offsets, data, nulls) = b.take();
                Arc::new(StringArray::try_new(offsets, data, nulls).map_err(|e| {
                    CodecError::new(
                        crate::CodecErrorKind::Value,
                        format!("invalid UTF-8 in string: {e}"),
                    )
                })?)
            }
            Column::Binary(b) => {
                let (offsets, data, nulls) = b.take();
                Arc::new(BinaryArray::new(offsets, data, nulls))
            }
            Column::Range {
                start,
                end,
                validity,
                ..
            } => {
                let DataType::Struct(fields) = dt else {
                    unreachable!("RANGE is a struct")
                };
                let s = start.finish(&fields[0])?;
                let e = end.finish(&fields[1])?;
                Arc::new(StructArray::new(
                    fields.clone(),
                    vec![s, e],
                    validity.finish(),
                ))
            }
            Column::Struct {
                fields,
                children,
                validity,
                len,
                ..
            } => {
                let arrays = children
                    .iter_mut()
                    .zip(fields.iter())
                    .map(|(c, f)| c.finish(f).map_err(|e| e.with_parent_column(f.name())))
                    .collect::<Result<Vec<_>, _>>()?;
                let n = std::mem::take(len);
                if arrays.is_empty() {
                    Arc::new(StructArray::new_empty_fields(n, validity.finish()))
                } else {
                    Arc::new(StructArray::new(fields.clone(), arrays, validity.finish()))
                }
            }
            Column::List {
                field: item,
                offsets,
                child,
            } => {
                let values = child.finish(item)?;
                let n = offsets.len();
                let o = std::mem::replace(offsets, Vec::with_capacity(n));
                offsets.push(0);
                Arc::new(ListArray::new(
                    item.clone(),
                    OffsetBuffer::new(ScalarBuffer::from(o)),
                    values,
                    None,
                ))
            }
        })
    }
}

fn trim(s: &[u8]) -> &[u8] {
    let a = s
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(s.len());
    let b = s
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(a, |p| p + 1);
    &s[a..b]
}

fn value_error(type_name: &str, raw: &[u8]) -> Stop {
    Stop::Error(
        CodecError::new(
            crate::CodecErrorKind::Value,
            format!("invalid {type_name} value"),
        )
        .with_value(raw),
    )
}

#[inline]
fn parse_f64(raw: &[u8]) -> Option<f64> {
    match raw {
        b"NaN" => Some(f64::NAN),
        b"Infinity" => Some(f64::INFINITY),
        b"-Infinity" => Some(f64::NEG_INFINITY),
        _ => {
            // Only JSON-number characters: rejects Rust's own "inf"/"nan" spellings.
            if raw.is_empty()
                || !raw
                    .iter()
                    .all(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            {
                return None;
            }
            // SAFETY-free: every byte was checked to be ASCII above.
            std::str::from_utf8(raw).ok()?.parse().ok()
        }
    }
}

#[inline]
fn parse_timestamp_cell(raw: &[u8], f: TimestampFormat) -> Option<i64> {
    let is_int = !raw.is_empty()
        && raw
            .iter()
            .enumerate()
            .all(|(i, c)| c.is_ascii_digit() || (i == 0 && *c == b'-'));
    match f {
        TimestampFormat::Auto if is_int => text::parse_i64(raw),
        TimestampFormat::Auto
            if raw.len() > 4 && raw[1..].contains(&b'-') && !raw.contains(&b'E') =>
        {
            text::parse_timestamp(raw)
        }
        _ => text::parse_float_seconds_micros(raw),
    }
}

/// Decodes a cell, `{"v": value}`, into `col`.
#[inline]
pub(crate) fn decode_cell(
    col: &mut Column,
    nulls: Nulls,
    cur: &mut Cursor<'_>,
    scratch: &mut Vec<u8>,
) -> Step<()> {
    // The exact form BigQuery writes; anything else (whitespace, `{}`, other keys) takes
    // the general path.
    if cur.at(b"{\"v\":") {
        cur.pos += 5;
        col.decode_value(nulls, cur, scratch)?;
        if cur.buf.get(cur.pos) == Some(&b'}') {
            cur.pos += 1;
            return Ok(());
        }
        return object_rest(cur, "a cell");
    }
    decode_cell_general(col, nulls, cur, scratch)
}

#[inline(never)]
fn decode_cell_general(
    col: &mut Column,
    nulls: Nulls,
    cur: &mut Cursor<'_>,
    scratch: &mut Vec<u8>,
) -> Step<()> {
    cur.expect(b'{')?;
    if cur.peek()? == b'}' {
        cur.pos += 1;
        // `{}`: a NULL written without its value.
        return col.null_into(nulls);
    }
    let mut seen = false;
    loop {
        let c = cur.peek()?;
        if c != b'"' {
            return Err(cur.unexpected(c, "expected a key"));
        }
        let (s, e, _) = cur.string_raw()?;
        cur.expect(b':')?;
        if &cur.buf[s..e] == b"v" && !seen {
            col.decode_value(nulls, cur, scratch)?;
            seen = true;
        } else {
            cur.skip_value()?;
        }
        match cur.peek()? {
            b',' => cur.pos += 1,
            b'}' => {
                cur.pos += 1;
                break;
            }
            other => return Err(cur.unexpected(other, "expected `,` or `}` in a cell")),
        }
    }
    if !seen {
        col.null_into(nulls)?;
    }
    Ok(())
}

/// Skips the rest of an object whose wanted key was read: more keys (ignored, as is a
/// repeated `"v"` or `"f"`) up to the closing `}`.
#[inline(never)]
fn object_rest(cur: &mut Cursor<'_>, what: &str) -> Step<()> {
    loop {
        match cur.peek()? {
            b'}' => {
                cur.pos += 1;
                return Ok(());
            }
            b',' => {
                cur.pos += 1;
                let c = cur.peek()?;
                if c != b'"' {
                    return Err(cur.unexpected(c, "expected a key"));
                }
                cur.string_raw()?;
                cur.expect(b':')?;
                cur.skip_value()?;
            }
            other => {
                return Err(cur.unexpected(other, &format!("expected `,` or `}}` in {what}")));
            }
        }
    }
}

/// Decodes a row or RECORD value, `{"f": [cell, ...]}`, into `cols`.
#[inline]
pub(crate) fn decode_record(
    cols: &mut [Column],
    nulls: &[Nulls],
    cur: &mut Cursor<'_>,
    scratch: &mut Vec<u8>,
) -> Step<()> {
    if cur.at(b"{\"f\":[") {
        cur.pos += 6;
        decode_cells(cols, nulls, cur, scratch)?;
        if cur.buf.get(cur.pos) == Some(&b'}') {
            cur.pos += 1;
            return Ok(());
        }
        return object_rest(cur, "a row");
    }
    decode_record_general(cols, nulls, cur, scratch)
}

#[inline(never)]
fn decode_record_general(
    cols: &mut [Column],
    nulls: &[Nulls],
    cur: &mut Cursor<'_>,
    scratch: &mut Vec<u8>,
) -> Step<()> {
    cur.expect(b'{')?;
    loop {
        let c = cur.peek()?;
        if c != b'"' {
            return Err(cur.unexpected(c, "expected `\"f\"` in a row"));
        }
        let (s, e, _) = cur.string_raw()?;
        cur.expect(b':')?;
        if &cur.buf[s..e] == b"f" {
            cur.expect(b'[')?;
            decode_cells(cols, nulls, cur, scratch)?;
            return object_rest(cur, "a row");
        }
        cur.skip_value()?;
        match cur.peek()? {
            b',' => cur.pos += 1,
            b'}' => return Err(cur.unexpected(b'}', "expected `\"f\"` in a row")),
            other => return Err(cur.unexpected(other, "expected `,` or `}` in a row")),
        }
    }
}

/// Decodes the cells of a row, after its `[`, through the closing `]`.
#[inline]
fn decode_cells(
    cols: &mut [Column],
    nulls: &[Nulls],
    cur: &mut Cursor<'_>,
    scratch: &mut Vec<u8>,
) -> Step<()> {
    let n = cols.len();
    for (i, (col, &null_rule)) in cols.iter_mut().zip(nulls).enumerate() {
        decode_cell(col, null_rule, cur, scratch).map_err(|e| at_column(e, i))?;
        if i + 1 < n {
            cur.expect(b',').map_err(|e| at_column(e, i))?;
        }
    }
    match cur.peek()? {
        b']' => {
            cur.pos += 1;
            Ok(())
        }
        b',' => Err(Stop::Error(CodecError::syntax(format!(
            "row has more cells than the {n} columns of the schema"
        )))),
        other => Err(cur.unexpected(other, "expected `]` after the cells")),
    }
}

/// Marks an error with the index of the column it happened in; the decoder turns the index
/// into a name.
fn at_column(e: Stop, i: usize) -> Stop {
    match e {
        Stop::Error(err) => Stop::Error(err.with_parent_column(&format!("#{i}"))),
        other => other,
    }
}

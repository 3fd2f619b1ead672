//! The deserializer of one value of one column: the hot path of every typed read.
//!
//! Each `deserialize_*` method matches the prepared column's kind and hands the visitor the
//! Arrow value in the form that target asks for; any other pairing falls back to the
//! value's natural serde form ([`CellDe::any_nonnull`]), which the visitor accepts or
//! rejects with serde's own message. Errors from a visitor on a scalar get the offending
//! value attached; the column and row are added further up.

use arrow_buffer::i256;
use arrow_schema::TimeUnit;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, Visitor};

use super::access::{AllColumnsMap, BytesSeq, ColumnsSeq, ListSeq, MapEntries, read_struct};
use super::column::{Column, Kind, at, bit, range_at};
use super::error::DeError;
use super::text::{self, SmallDecimal, StackBuf};
use crate::value::magic;

/// One cell: a column and a row in it. `NON_NULL` is set once the cell is known not to be
/// NULL (inside `Option`'s `visit_some`), so that the value's own read skips the check.
#[derive(Clone, Copy)]
pub(crate) struct CellDe<'n, 'a, const NON_NULL: bool = false> {
    col: &'n Column<'a>,
    row: usize,
}

/// The `&str` of row `row` of a `Utf8`/`LargeUtf8` column.
#[inline(always)]
fn utf8_at<'a, O: Copy + TryInto<usize>>(offsets: &[O], data: &'a [u8], row: usize) -> &'a str {
    let bytes = bytes_at(offsets, data, row);
    // SAFETY: a `StringArray`'s values are UTF-8 between consecutive offsets; Arrow checks
    // this when the array is built (or its builder vouched for it with an `unsafe`
    // constructor), and `StringArray::value` relies on the same invariant.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

#[inline(always)]
fn bytes_at<'a, O: Copy + TryInto<usize>>(offsets: &[O], data: &'a [u8], row: usize) -> &'a [u8] {
    let start = at(offsets, row).try_into().unwrap_or(0);
    let end = at(offsets, row + 1).try_into().unwrap_or(0);
    range_at(data, start, end)
}

/// `10^k` as an `i128`, for `k <= 38`.
fn pow10_i128(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

/// `v * 10^-from` expressed with scale `to`, or `None` if digits would be lost or it
/// overflows.
fn rescale_i128(v: i128, from: i8, to: i8) -> Option<i128> {
    let diff = to as i32 - from as i32;
    if diff == 0 || v == 0 {
        Some(v)
    } else if diff > 0 {
        v.checked_mul(pow10_i128(diff as u32)?)
    } else {
        let p = pow10_i128(diff.unsigned_abs())?;
        (v % p == 0).then_some(v / p)
    }
}

fn rescale_i256(v: i256, from: i8, to: i8) -> Option<i256> {
    let diff = to as i32 - from as i32;
    if diff == 0 || v == i256::ZERO {
        return Some(v);
    }
    let p = i256::from_i128(10).checked_pow(diff.unsigned_abs())?;
    if diff > 0 {
        v.checked_mul(p)
    } else {
        let (q, r) = v.checked_div(p).zip(v.checked_rem(p))?;
        (r == i256::ZERO).then_some(q)
    }
}

impl<'n, 'a> CellDe<'n, 'a> {
    #[inline(always)]
    pub(crate) fn new(col: &'n Column<'a>, row: usize) -> Self {
        CellDe { col, row }
    }
}

impl<'n, 'a, const NON_NULL: bool> CellDe<'n, 'a, NON_NULL> {
    #[inline(always)]
    fn is_null(&self) -> bool {
        !NON_NULL && self.col.is_null(self.row)
    }

    #[inline(always)]
    fn check_null(&self) -> Result<(), DeError> {
        if self.is_null() {
            Err(DeError::null())
        } else {
            Ok(())
        }
    }

    /// Attaches this cell's value to a visitor's error about it.
    #[inline(always)]
    fn leaf<T>(&self, r: Result<T, DeError>) -> Result<T, DeError> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => Err(self.attach(e)),
        }
    }

    #[cold]
    #[inline(never)]
    fn attach(&self, e: DeError) -> DeError {
        if e.has_value() {
            return e;
        }
        let r = self.row;
        match &self.col.kind {
            Kind::Utf8 { offsets, data } => e.with_value(utf8_at(offsets, data, r)),
            Kind::LargeUtf8 { offsets, data } => e.with_value(utf8_at(offsets, data, r)),
            Kind::Utf8View(a) => e.with_value(a.value(r)),
            Kind::Binary { offsets, data } => e.with_value(bytes_at(offsets, data, r)),
            Kind::LargeBinary { offsets, data } => e.with_value(bytes_at(offsets, data, r)),
            Kind::BinaryView(a) => e.with_value(a.value(r)),
            Kind::FixedBinary(a) => e.with_value(a.value(r)),
            _ => {
                let mut buf = StackBuf::new();
                match self.write_text(&mut buf) {
                    Ok(()) => e.with_value(buf.as_str()),
                    Err(_) => e,
                }
            }
        }
    }

    /// The dictionary's value for this row.
    #[inline]
    // `keys` holds one validated key per row of the dictionary column and `row` is one of them.
    #[allow(clippy::indexing_slicing)]
    fn resolve(keys: &[usize], values: &'n Column<'a>, row: usize) -> CellDe<'n, 'a> {
        CellDe::new(values, keys[row])
    }

    #[cold]
    fn precision_error(&self, what: &str) -> DeError {
        self.attach(DeError::new(format!(
            "{} value does not fit {what} without losing precision",
            self.col.data_type
        )))
    }

    /// Writes the canonical text of a scalar that is not a string or bytes.
    #[inline(never)]
    fn write_text(&self, buf: &mut StackBuf) -> Result<(), DeError> {
        let r = self.row;
        let done = match &self.col.kind {
            Kind::Bool(b) => buf.push_str(if bit(b, r) { "true" } else { "false" }),
            Kind::Int8(x) => buf.push_i64(at(x, r) as i64),
            Kind::Int16(x) => buf.push_i64(at(x, r) as i64),
            Kind::Int32(x) => buf.push_i64(at(x, r) as i64),
            Kind::Int64(x) => buf.push_i64(at(x, r)),
            Kind::UInt8(x) => buf.push_u64(at(x, r) as u64),
            Kind::UInt16(x) => buf.push_u64(at(x, r) as u64),
            Kind::UInt32(x) => buf.push_u64(at(x, r) as u64),
            Kind::UInt64(x) => buf.push_u64(at(x, r)),
            Kind::Float16(x) => text::write_f64(buf, at(x, r).to_f64()),
            Kind::Float32(x) => text::write_f64(buf, at(x, r) as f64),
            Kind::Float64(x) => text::write_f64(buf, at(x, r)),
            Kind::Decimal32 { values, scale } => {
                text::write_decimal_i128(buf, at(values, r) as i128, *scale)
            }
            Kind::Decimal64 { values, scale } => {
                text::write_decimal_i128(buf, at(values, r) as i128, *scale)
            }
            Kind::Decimal128 { values, scale } => {
                text::write_decimal_i128(buf, at(values, r), *scale)
            }
            Kind::Decimal256 { values, scale } => {
                text::write_decimal_i256(buf, at(values, r), *scale)
            }
            Kind::Date32(x) => text::write_date(buf, at(x, r) as i64),
            Kind::Date64(x) => text::write_date(buf, at(x, r).div_euclid(86_400_000)),
            Kind::Time32 { values, unit } => {
                let (s, n) = text::secs_nanos(at(values, r) as i64, *unit);
                text::write_time(buf, s, n)
            }
            Kind::Time64 { values, unit } => {
                let (s, n) = text::secs_nanos(at(values, r), *unit);
                text::write_time(buf, s, n)
            }
            Kind::Timestamp {
                values,
                unit,
                zoned,
            } => {
                let (s, n) = text::secs_nanos(at(values, r), *unit);
                if *zoned {
                    text::write_timestamp(buf, s, n)
                } else {
                    text::write_datetime(buf, s, n)
                }
            }
            Kind::Duration(values) => buf.push_i64(at(values, r)),
            Kind::IntervalYearMonth(x) => write_interval(buf, at(x, r), 0, 0),
            Kind::IntervalDayTime(x) => write_interval(
                buf,
                0,
                at(x, r).days,
                at(x, r).milliseconds as i64 * 1_000_000,
            ),
            Kind::IntervalMonthDayNano(x) => {
                write_interval(buf, at(x, r).months, at(x, r).days, at(x, r).nanoseconds)
            }
            Kind::Dictionary { keys, values } => {
                return Self::resolve(keys, values, r).write_text(buf);
            }
            _ => {
                return Err(DeError::new(format!(
                    "{} value has no text form",
                    self.col.data_type
                )));
            }
        };
        done.map_err(|_| DeError::new("value text too long"))
    }

    /// The value in its natural serde form; the caller has checked it is not NULL.
    // Kept out of line: it is the fallback of every typed read, and inlined it would make
    // them too big for serde's own wrappers (`Option<T>`, `String`) to inline.
    #[inline(never)]
    // Arrow validates a map's offsets (one more than its rows) and `r` is one of its rows.
    #[allow(clippy::indexing_slicing)]
    fn any_nonnull<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        let r = self.row;
        let out = match &self.col.kind {
            Kind::Null => return v.visit_none(),
            Kind::Bool(b) => v.visit_bool(bit(b, r)),
            Kind::Int8(x) => v.visit_i8(at(x, r)),
            Kind::Int16(x) => v.visit_i16(at(x, r)),
            Kind::Int32(x) => v.visit_i32(at(x, r)),
            Kind::Int64(x) => v.visit_i64(at(x, r)),
            Kind::UInt8(x) => v.visit_u8(at(x, r)),
            Kind::UInt16(x) => v.visit_u16(at(x, r)),
            Kind::UInt32(x) => v.visit_u32(at(x, r)),
            Kind::UInt64(x) => v.visit_u64(at(x, r)),
            Kind::Float16(x) => v.visit_f32(at(x, r).to_f32()),
            Kind::Float32(x) => v.visit_f32(at(x, r)),
            Kind::Float64(x) => v.visit_f64(at(x, r)),
            Kind::Utf8 { offsets, data } => v.visit_borrowed_str(utf8_at(offsets, data, r)),
            Kind::LargeUtf8 { offsets, data } => v.visit_borrowed_str(utf8_at(offsets, data, r)),
            Kind::Utf8View(a) => v.visit_borrowed_str(a.value(r)),
            // A sequence of `u8`, serde's own form of `Vec<u8>`: `serde_json::Value` has no
            // bytes, and every byte-buffer visitor takes a sequence.
            Kind::Binary { .. }
            | Kind::LargeBinary { .. }
            | Kind::BinaryView(_)
            | Kind::FixedBinary(_) => v.visit_seq(BytesSeq::new(self.binary().unwrap_or_default())),
            Kind::Duration(values) => v.visit_i64(at(values, r)),
            Kind::List { offsets, items } => {
                let (s, e) = offsets.range(r);
                return v.visit_seq(ListSeq::new(items, s, e));
            }
            Kind::Struct(node) => return v.visit_map(AllColumnsMap::new(node, r)),
            Kind::Map {
                offsets,
                keys,
                values,
            } => {
                let (s, e) = (offsets[r] as usize, offsets[r + 1] as usize);
                return v.visit_map(MapEntries::new(keys, values, s, e));
            }
            Kind::Dictionary { keys, values } => {
                return de::Deserializer::deserialize_any(Self::resolve(keys, values, r), v);
            }
            Kind::Unsupported => return Err(DeError::unsupported(self.col.data_type)),
            _ => self.visit_text(v),
        };
        self.leaf(out)
    }

    // The hot reads: the column type each target usually meets, inline; everything else
    // (other types, dictionaries, fallbacks) out of line in the `*_other` functions, which
    // keeps these small enough for serde's wrappers to inline and free of recursion.

    #[inline(always)]
    fn int<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.col.kind {
            Kind::Int64(x) if !self.is_null() => self.leaf(v.visit_i64(at(x, self.row))),
            _ => self.int_other(v),
        }
    }

    #[inline(always)]
    fn float<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.col.kind {
            Kind::Float64(x) if !self.is_null() => self.leaf(v.visit_f64(at(x, self.row))),
            _ => self.float_other(v),
        }
    }

    #[inline(always)]
    fn text<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.col.kind {
            Kind::Utf8 { offsets, data } if !self.is_null() => {
                self.leaf(v.visit_borrowed_str(utf8_at(offsets, data, self.row)))
            }
            _ => self.text_other(v),
        }
    }

    #[inline(always)]
    fn magic<V: Visitor<'a>>(self, name: &'static str, v: V) -> Result<V::Value, DeError> {
        let r = self.row;
        let out = match (name, &self.col.kind) {
            (magic::NUMERIC, Kind::Decimal128 { values, scale: 9 }) if !self.is_null() => {
                v.visit_i128(at(values, r))
            }
            (magic::DATE, Kind::Date32(x)) if !self.is_null() => v.visit_i32(at(x, r)),
            (
                magic::TIMESTAMP,
                Kind::Timestamp {
                    values,
                    unit: TimeUnit::Microsecond,
                    ..
                },
            )
            | (
                magic::DATETIME,
                Kind::Timestamp {
                    values,
                    unit: TimeUnit::Microsecond,
                    zoned: false,
                },
            )
            | (
                magic::TIME,
                Kind::Time64 {
                    values,
                    unit: TimeUnit::Microsecond,
                },
            ) if !self.is_null() => v.visit_i64(at(values, r)),
            _ => return self.magic_other(name, v),
        };
        self.leaf(out)
    }

    #[inline(never)]
    fn bool_other<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        match &self.col.kind {
            Kind::Bool(b) => v.visit_bool(bit(b, self.row)),
            Kind::Dictionary { keys, values } => {
                de::Deserializer::deserialize_bool(Self::resolve(keys, values, self.row), v)
            }
            _ => self.any_nonnull(v),
        }
    }

    /// Integer targets: integer columns as they are, DATE as days and TIME, DATETIME and
    /// TIMESTAMP as microseconds, whole decimals as their value.
    #[inline(never)]
    fn int_other<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        let r = self.row;
        let out = match &self.col.kind {
            Kind::Int64(x) => v.visit_i64(at(x, r)),
            Kind::Int32(x) => v.visit_i32(at(x, r)),
            Kind::Int16(x) => v.visit_i16(at(x, r)),
            Kind::Int8(x) => v.visit_i8(at(x, r)),
            Kind::UInt64(x) => v.visit_u64(at(x, r)),
            Kind::UInt32(x) => v.visit_u32(at(x, r)),
            Kind::UInt16(x) => v.visit_u16(at(x, r)),
            Kind::UInt8(x) => v.visit_u8(at(x, r)),
            Kind::Date32(x) => v.visit_i32(at(x, r)),
            Kind::Date64(x) => {
                let ms = at(x, r);
                if ms % 86_400_000 != 0 {
                    return Err(self.precision_error("a DATE"));
                }
                v.visit_i64(ms / 86_400_000)
            }
            Kind::Time32 { values, unit } => match text::to_micros(at(values, r) as i64, *unit) {
                Some(us) => v.visit_i64(us),
                None => return Err(self.precision_error("microseconds")),
            },
            Kind::Time64 { values, unit } | Kind::Timestamp { values, unit, .. } => {
                match text::to_micros(at(values, r), *unit) {
                    Some(us) => v.visit_i64(us),
                    None => return Err(self.precision_error("microseconds")),
                }
            }
            Kind::Duration(values) => v.visit_i64(at(values, r)),
            Kind::Decimal32 { values, scale } => self.whole(at(values, r) as i128, *scale, v),
            Kind::Decimal64 { values, scale } => self.whole(at(values, r) as i128, *scale, v),
            Kind::Decimal128 { values, scale } => self.whole(at(values, r), *scale, v),
            Kind::Dictionary { keys, values } => return Self::resolve(keys, values, r).int(v),
            _ => return self.any_nonnull(v),
        };
        self.leaf(out)
    }

    #[inline(never)]
    fn whole<V: Visitor<'a>>(&self, unscaled: i128, scale: i8, v: V) -> Result<V::Value, DeError> {
        match rescale_i128(unscaled, scale, 0) {
            Some(i) => v.visit_i128(i),
            None => Err(DeError::new("decimal value is not a whole number")),
        }
    }

    #[inline(never)]
    fn float_other<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        let r = self.row;
        let out = match &self.col.kind {
            Kind::Float64(x) => v.visit_f64(at(x, r)),
            Kind::Float32(x) => v.visit_f32(at(x, r)),
            Kind::Float16(x) => v.visit_f32(at(x, r).to_f32()),
            Kind::Decimal32 { .. }
            | Kind::Decimal64 { .. }
            | Kind::Decimal128 { .. }
            | Kind::Decimal256 { .. } => {
                // The nearest f64 to the exact decimal: Rust parses decimal text correctly
                // rounded.
                let mut buf = StackBuf::new();
                self.write_text(&mut buf)?;
                match buf.as_str().parse::<f64>() {
                    Ok(f) => v.visit_f64(f),
                    Err(_) => return Err(self.precision_error("an f64")),
                }
            }
            Kind::Dictionary { keys, values } => {
                return Self::resolve(keys, values, r).float(v);
            }
            Kind::Int8(_)
            | Kind::Int16(_)
            | Kind::Int32(_)
            | Kind::Int64(_)
            | Kind::UInt8(_)
            | Kind::UInt16(_)
            | Kind::UInt32(_)
            | Kind::UInt64(_) => return self.int(v),
            _ => return self.any_nonnull(v),
        };
        self.leaf(out)
    }

    /// String targets: strings as they are (borrowed), bytes as base64 (BigQuery's REST
    /// form) and every other scalar as its canonical text.
    #[inline(never)]
    fn text_other<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        let r = self.row;
        let out = match &self.col.kind {
            Kind::Utf8 { offsets, data } => v.visit_borrowed_str(utf8_at(offsets, data, r)),
            Kind::LargeUtf8 { offsets, data } => v.visit_borrowed_str(utf8_at(offsets, data, r)),
            Kind::Utf8View(a) => v.visit_borrowed_str(a.value(r)),
            Kind::Binary { .. }
            | Kind::LargeBinary { .. }
            | Kind::BinaryView(_)
            | Kind::FixedBinary(_) => {
                use base64::Engine;
                let bytes = self.binary().unwrap_or_default();
                v.visit_string(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            Kind::Dictionary { keys, values } => return Self::resolve(keys, values, r).text(v),
            Kind::List { .. }
            | Kind::Struct(_)
            | Kind::Map { .. }
            | Kind::Null
            | Kind::Unsupported => return self.any_nonnull(v),
            _ => self.visit_text(v),
        };
        self.leaf(out)
    }

    /// Hands the visitor the canonical text of a scalar that is not a string or bytes.
    #[inline(always)]
    fn visit_text<V: Visitor<'a>>(&self, v: V) -> Result<V::Value, DeError> {
        if let Some(d) = self.small_decimal() {
            return v.visit_str(d.as_str());
        }
        let mut buf = StackBuf::new();
        self.write_text(&mut buf)?;
        v.visit_str(buf.as_str())
    }

    /// The bytes of a binary cell.
    #[inline(always)]
    fn binary(&self) -> Option<&'a [u8]> {
        let r = self.row;
        Some(match &self.col.kind {
            Kind::Binary { offsets, data } => bytes_at(offsets, data, r),
            Kind::LargeBinary { offsets, data } => bytes_at(offsets, data, r),
            Kind::BinaryView(a) => a.value(r),
            Kind::FixedBinary(a) => a.value(r),
            _ => return None,
        })
    }

    /// The text of a decimal cell that [`SmallDecimal`] writes (most NUMERIC values).
    #[inline(always)]
    fn small_decimal(&self) -> Option<SmallDecimal> {
        let r = self.row;
        match &self.col.kind {
            Kind::Decimal128 { values, scale } => SmallDecimal::new(at(values, r), *scale),
            Kind::Decimal64 { values, scale } => SmallDecimal::new(at(values, r) as i128, *scale),
            Kind::Decimal32 { values, scale } => SmallDecimal::new(at(values, r) as i128, *scale),
            _ => None,
        }
    }

    fn bytes<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        let r = self.row;
        let out = match &self.col.kind {
            Kind::Utf8 { offsets, data } => v.visit_borrowed_bytes(bytes_at(offsets, data, r)),
            Kind::LargeUtf8 { offsets, data } => v.visit_borrowed_bytes(bytes_at(offsets, data, r)),
            Kind::Utf8View(a) => v.visit_borrowed_bytes(a.value(r).as_bytes()),
            Kind::Dictionary { keys, values } => {
                return Self::resolve(keys, values, r).bytes(v);
            }
            _ => match self.binary() {
                Some(b) => v.visit_borrowed_bytes(b),
                None => return self.any_nonnull(v),
            },
        };
        self.leaf(out)
    }

    #[inline(always)]
    fn seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.col.kind {
            Kind::List { offsets, items } if !self.is_null() => {
                let (s, e) = offsets.range(self.row);
                v.visit_seq(ListSeq::new(items, s, e))
            }
            _ => self.seq_other(v),
        }
    }

    #[inline(never)]
    fn seq_other<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        let r = self.row;
        match &self.col.kind {
            Kind::List { offsets, items } => {
                let (s, e) = offsets.range(r);
                v.visit_seq(ListSeq::new(items, s, e))
            }
            Kind::Struct(node) => v.visit_seq(ColumnsSeq::new(node, r)),
            Kind::Dictionary { keys, values } => Self::resolve(keys, values, r).seq(v),
            _ => match self.binary() {
                // `Vec<u8>` asks for a sequence.
                Some(b) => self.leaf(v.visit_seq(BytesSeq::new(b))),
                None => self.any_nonnull(v),
            },
        }
    }

    fn map<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        match &self.col.kind {
            Kind::Dictionary { keys, values } => Self::resolve(keys, values, self.row).map(v),
            _ => self.any_nonnull(v),
        }
    }

    #[inline(always)]
    fn structure<V: Visitor<'a>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        match &self.col.kind {
            Kind::Struct(node) if !self.is_null() => read_struct(node, fields, self.row, v),
            _ => self.structure_other(fields, v),
        }
    }

    #[inline(never)]
    fn structure_other<V: Visitor<'a>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.check_null()?;
        match &self.col.kind {
            Kind::Struct(node) => read_struct(node, fields, self.row, v),
            Kind::Dictionary { keys, values } => {
                Self::resolve(keys, values, self.row).structure(fields, v)
            }
            _ => self.any_nonnull(v),
        }
    }

    fn enumeration<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        let r = self.row;
        let name = match &self.col.kind {
            Kind::Utf8 { offsets, data } => utf8_at(offsets, data, r),
            Kind::LargeUtf8 { offsets, data } => utf8_at(offsets, data, r),
            Kind::Utf8View(a) => a.value(r),
            Kind::Dictionary { keys, values } => {
                return Self::resolve(keys, values, r).enumeration(v);
            }
            _ => return self.any_nonnull(v),
        };
        self.leaf(v.visit_enum(BorrowedStrDeserializer::<DeError>::new(name)))
    }

    /// bigq's value types: the raw Arrow value when the column has the matching type (see
    /// `value::serde_impls`), the natural form otherwise.
    #[inline(never)]
    fn magic_other<V: Visitor<'a>>(self, name: &'static str, v: V) -> Result<V::Value, DeError> {
        self.check_null()?;
        let r = self.row;
        let kind = &self.col.kind;
        if let Kind::Dictionary { keys, values } = kind {
            return de::Deserializer::deserialize_newtype_struct(
                Self::resolve(keys, values, r),
                name,
                v,
            );
        }
        let out = match name {
            magic::NUMERIC => {
                let (unscaled, scale) = match kind {
                    Kind::Decimal128 { values, scale: 9 } => {
                        return self.leaf(v.visit_i128(at(values, r)));
                    }
                    Kind::Decimal128 { values, scale } => (at(values, r), *scale),
                    Kind::Decimal64 { values, scale } => (at(values, r) as i128, *scale),
                    Kind::Decimal32 { values, scale } => (at(values, r) as i128, *scale),
                    _ => return self.any_nonnull(v),
                };
                match rescale_i128(unscaled, scale, 9) {
                    Some(units) => v.visit_i128(units),
                    None => return Err(self.precision_error("a NUMERIC")),
                }
            }
            magic::BIGNUMERIC => {
                let (unscaled, scale) = match kind {
                    Kind::Decimal256 { values, scale } => (at(values, r), *scale),
                    Kind::Decimal128 { values, scale } => (i256::from_i128(at(values, r)), *scale),
                    Kind::Decimal64 { values, scale } => {
                        (i256::from_i128(at(values, r) as i128), *scale)
                    }
                    Kind::Decimal32 { values, scale } => {
                        (i256::from_i128(at(values, r) as i128), *scale)
                    }
                    _ => return self.any_nonnull(v),
                };
                match rescale_i256(unscaled, scale, 38) {
                    Some(units) => v.visit_bytes(&units.to_le_bytes()),
                    None => return Err(self.precision_error("a BIGNUMERIC")),
                }
            }
            magic::DATE => match kind {
                Kind::Date32(x) => v.visit_i32(at(x, r)),
                Kind::Date64(_) => return self.int(v),
                _ => return self.any_nonnull(v),
            },
            magic::TIME => match kind {
                Kind::Time32 { .. } | Kind::Time64 { .. } => return self.int(v),
                _ => return self.any_nonnull(v),
            },
            magic::DATETIME => match kind {
                Kind::Timestamp {
                    values,
                    unit: TimeUnit::Microsecond,
                    zoned: false,
                } => v.visit_i64(at(values, r)),
                Kind::Timestamp { zoned: false, .. } => return self.int(v),
                _ => return self.any_nonnull(v),
            },
            magic::TIMESTAMP => match kind {
                Kind::Timestamp {
                    values,
                    unit: TimeUnit::Microsecond,
                    ..
                } => v.visit_i64(at(values, r)),
                Kind::Timestamp { .. } => return self.int(v),
                _ => return self.any_nonnull(v),
            },
            magic::INTERVAL => {
                let (months, days, nanos) = match kind {
                    Kind::IntervalMonthDayNano(x) => {
                        (at(x, r).months, at(x, r).days, at(x, r).nanoseconds)
                    }
                    Kind::IntervalYearMonth(x) => (at(x, r), 0, 0),
                    Kind::IntervalDayTime(x) => {
                        (0, at(x, r).days, at(x, r).milliseconds as i64 * 1_000_000)
                    }
                    _ => return self.any_nonnull(v),
                };
                v.visit_bytes(&crate::value::interval_bytes(months, days, nanos))
            }
            magic::JSON | magic::GEOGRAPHY => return self.text(v),
            magic::RANGE => return self.structure(crate::value::RANGE_FIELDS, v),
            _ => return v.visit_newtype_struct(self),
        };
        self.leaf(out)
    }
}

fn write_interval(
    buf: &mut StackBuf,
    months: i32,
    days: i32,
    nanos: i64,
) -> Result<(), std::fmt::Error> {
    crate::value::text::format_interval(
        crate::value::text::IntervalParts {
            months,
            days,
            nanos,
        },
        buf,
    )
}

impl<'n, 'a, const NON_NULL: bool> de::Deserializer<'a> for CellDe<'n, 'a, NON_NULL> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        if self.is_null() {
            return v.visit_none();
        }
        self.any_nonnull(v)
    }

    #[inline(always)]
    fn deserialize_bool<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.col.kind {
            Kind::Bool(b) if !self.is_null() => v.visit_bool(bit(b, self.row)),
            _ => self.bool_other(v),
        }
    }

    #[inline(always)]
    fn deserialize_i8<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_i16<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_i32<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_i64<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline]
    fn deserialize_i128<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_u8<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_u16<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_u32<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_u64<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline]
    fn deserialize_u128<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.int(v)
    }
    #[inline(always)]
    fn deserialize_f32<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.float(v)
    }
    #[inline(always)]
    fn deserialize_f64<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.float(v)
    }
    fn deserialize_char<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.text(v)
    }
    #[inline(always)]
    fn deserialize_str<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.text(v)
    }
    #[inline(always)]
    fn deserialize_string<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.text(v)
    }
    fn deserialize_bytes<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.bytes(v)
    }
    fn deserialize_byte_buf<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.bytes(v)
    }

    #[inline(always)]
    fn deserialize_option<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        if self.is_null() {
            v.visit_none()
        } else {
            v.visit_some(CellDe::<'n, 'a, true> {
                col: self.col,
                row: self.row,
            })
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        if self.is_null() {
            return v.visit_unit();
        }
        self.any_nonnull(v)
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(v)
    }

    #[inline(always)]
    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        if name.starts_with(magic::PREFIX) {
            self.magic(name, v)
        } else {
            v.visit_newtype_struct(self)
        }
    }

    #[inline(always)]
    fn deserialize_seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.seq(v)
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        self.seq(v)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.seq(v)
    }

    fn deserialize_map<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.map(v)
    }

    #[inline(always)]
    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.structure(fields, v)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.enumeration(v)
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        self.text(v)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_unit()
    }
}

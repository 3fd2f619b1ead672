//! A column prepared for decoding: the Arrow array downcast once per batch into plain
//! slices, so that reading a cell is an index, not a dynamic cast.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type,
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    IntervalDayTimeType, IntervalMonthDayNanoType, IntervalYearMonthType, Time32MillisecondType,
    Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, BinaryViewArray, FixedSizeBinaryArray, StringViewArray};
use arrow_buffer::{BooleanBuffer, IntervalDayTime, IntervalMonthDayNano, NullBuffer, i256};
use arrow_schema::{DataType, IntervalUnit, TimeUnit};

use super::node::StructNode;

/// `s[i]` without a bounds check, for `i` a row of the column `s` holds values of.
///
/// A cell is only ever built with a row below its column's length: the batch's rows for
/// its own columns, and for nested columns the rows that list offsets, struct layout and
/// (normalized) dictionary keys point at, all of which Arrow checks when an array is built
/// (an array built with an `unsafe` constructor carries its caller's promise of the same).
/// Each values slice holds one element per row, and offsets one more. Arrow's own
/// `value(i)` accessors rely on the same invariants after checking `i` against the length.
#[inline(always)]
pub(crate) fn at<T: Copy>(s: &[T], i: usize) -> T {
    debug_assert!(i < s.len());
    // SAFETY: see above.
    unsafe { *s.get_unchecked(i) }
}

/// `&data[start..end]` without a bounds check, for offsets read from a valid Arrow
/// array (see [`at`]), which lie within its data and do not decrease.
#[inline(always)]
pub(crate) fn range_at(data: &[u8], start: usize, end: usize) -> &[u8] {
    debug_assert!(start <= end && end <= data.len());
    // SAFETY: see above.
    unsafe { data.get_unchecked(start..end) }
}

/// Bit `i` of a bitmap (validity or boolean values) without a bounds check, for `i` a row
/// of the column it belongs to (see [`at`]): Arrow's bitmaps hold one bit per row.
#[inline(always)]
pub(crate) fn bit(bits: &BooleanBuffer, i: usize) -> bool {
    debug_assert!(i < bits.len());
    // SAFETY: see above.
    unsafe { bits.value_unchecked(i) }
}

/// How a list's rows find their items in the child column.
pub(crate) enum ListOffsets<'a> {
    /// `List`: offsets into the child.
    I32(&'a [i32]),
    /// `LargeList`.
    I64(&'a [i64]),
    /// `FixedSizeList`: every row has `len` items, the first at `start + row * len`.
    Fixed { len: usize, start: usize },
}

impl ListOffsets<'_> {
    /// The child range of `row`.
    #[inline(always)]
    pub(crate) fn range(&self, row: usize) -> (usize, usize) {
        match self {
            ListOffsets::I32(o) => (at(o, row) as usize, at(o, row + 1) as usize),
            ListOffsets::I64(o) => (at(o, row) as usize, at(o, row + 1) as usize),
            ListOffsets::Fixed { len, start } => {
                let s = start + row * len;
                (s, s + len)
            }
        }
    }
}

/// The values of a column, by Arrow type.
///
/// `repr(u8)` keeps the variant in a plain tag byte: left to the compiler it hides in a
/// niche of a field, and every cell read then spends several instructions decoding it.
#[repr(u8)]
pub(crate) enum Kind<'a> {
    /// `Null`: every value is NULL.
    Null,
    Bool(&'a BooleanBuffer),
    Int8(&'a [i8]),
    Int16(&'a [i16]),
    Int32(&'a [i32]),
    Int64(&'a [i64]),
    UInt8(&'a [u8]),
    UInt16(&'a [u16]),
    UInt32(&'a [u32]),
    UInt64(&'a [u64]),
    Float16(&'a [<Float16Type as arrow_array::ArrowPrimitiveType>::Native]),
    Float32(&'a [f32]),
    Float64(&'a [f64]),
    /// `Utf8`; the offsets index `data`, which Arrow guarantees is UTF-8 between them.
    Utf8 {
        offsets: &'a [i32],
        data: &'a [u8],
    },
    LargeUtf8 {
        offsets: &'a [i64],
        data: &'a [u8],
    },
    Utf8View(&'a StringViewArray),
    Binary {
        offsets: &'a [i32],
        data: &'a [u8],
    },
    LargeBinary {
        offsets: &'a [i64],
        data: &'a [u8],
    },
    BinaryView(&'a BinaryViewArray),
    FixedBinary(&'a FixedSizeBinaryArray),
    /// Decimals: the unscaled integer and the scale (digits after the point).
    Decimal32 {
        values: &'a [i32],
        scale: i8,
    },
    Decimal64 {
        values: &'a [i64],
        scale: i8,
    },
    Decimal128 {
        values: &'a [i128],
        scale: i8,
    },
    Decimal256 {
        values: &'a [i256],
        scale: i8,
    },
    /// `Date32`: days since the epoch.
    Date32(&'a [i32]),
    /// `Date64`: milliseconds since the epoch.
    Date64(&'a [i64]),
    Time32 {
        values: &'a [i32],
        unit: TimeUnit,
    },
    Time64 {
        values: &'a [i64],
        unit: TimeUnit,
    },
    /// `Timestamp`; `zoned` when it has a time zone (an instant, BigQuery's TIMESTAMP) and
    /// not when it has none (a civil date-time, BigQuery's DATETIME).
    Timestamp {
        values: &'a [i64],
        unit: TimeUnit,
        zoned: bool,
    },
    /// `Duration`, read as its integer count of the unit.
    Duration(&'a [i64]),
    IntervalYearMonth(&'a [i32]),
    IntervalDayTime(&'a [IntervalDayTime]),
    IntervalMonthDayNano(&'a [IntervalMonthDayNano]),
    List {
        offsets: ListOffsets<'a>,
        items: Box<Column<'a>>,
    },
    Struct(Box<StructNode<'a>>),
    Map {
        offsets: &'a [i32],
        keys: Box<Column<'a>>,
        values: Box<Column<'a>>,
    },
    /// A dictionary: each row's index into `values`.
    Dictionary {
        keys: Vec<usize>,
        values: Box<Column<'a>>,
    },
    /// A type this decoder does not read; reading it is an error naming the type.
    Unsupported,
}

/// One prepared column.
pub(crate) struct Column<'a> {
    /// The Arrow type, for error messages.
    pub(crate) data_type: &'a DataType,
    /// The validity bits of the column's logical NULLs, when it has any: its own, or for a
    /// dictionary its NULL keys and the keys of NULL values, or for a `Null` array every
    /// row. Worked out once per batch, so that checking a cell is one bit test and no
    /// branch into a rare case (which made every inlined cell read bigger).
    nulls: Option<BooleanBuffer>,
    pub(crate) kind: Kind<'a>,
}

impl<'a> Column<'a> {
    /// Prepares `array`.
    pub(crate) fn new(array: &'a ArrayRef) -> Self {
        Self::of(array.as_ref())
    }

    /// Prepares `array` (any Arrow array).
    pub(crate) fn of(array: &'a dyn Array) -> Self {
        let data_type = array.data_type();
        let kind = prepare(array, data_type);
        let nulls = array
            .logical_nulls()
            .filter(|n| n.null_count() > 0)
            .map(NullBuffer::into_inner);
        Column {
            data_type,
            nulls,
            kind,
        }
    }

    /// Whether the value at `row` is NULL.
    #[inline(always)]
    pub(crate) fn is_null(&self, row: usize) -> bool {
        match &self.nulls {
            None => false,
            Some(bits) => !bit(bits, row),
        }
    }
}

fn prepare<'a>(array: &'a dyn Array, data_type: &'a DataType) -> Kind<'a> {
    use DataType as D;
    match data_type {
        D::Null => Kind::Null,
        D::Boolean => Kind::Bool(array.as_boolean().values()),
        D::Int8 => Kind::Int8(array.as_primitive::<Int8Type>().values()),
        D::Int16 => Kind::Int16(array.as_primitive::<Int16Type>().values()),
        D::Int32 => Kind::Int32(array.as_primitive::<Int32Type>().values()),
        D::Int64 => Kind::Int64(array.as_primitive::<Int64Type>().values()),
        D::UInt8 => Kind::UInt8(array.as_primitive::<UInt8Type>().values()),
        D::UInt16 => Kind::UInt16(array.as_primitive::<UInt16Type>().values()),
        D::UInt32 => Kind::UInt32(array.as_primitive::<UInt32Type>().values()),
        D::UInt64 => Kind::UInt64(array.as_primitive::<UInt64Type>().values()),
        D::Float16 => Kind::Float16(array.as_primitive::<Float16Type>().values()),
        D::Float32 => Kind::Float32(array.as_primitive::<Float32Type>().values()),
        D::Float64 => Kind::Float64(array.as_primitive::<Float64Type>().values()),
        D::Utf8 => {
            let a = array.as_string::<i32>();
            Kind::Utf8 {
                offsets: a.value_offsets(),
                data: a.value_data(),
            }
        }
        D::LargeUtf8 => {
            let a = array.as_string::<i64>();
            Kind::LargeUtf8 {
                offsets: a.value_offsets(),
                data: a.value_data(),
            }
        }
        D::Utf8View => Kind::Utf8View(array.as_string_view()),
        D::Binary => {
            let a = array.as_binary::<i32>();
            Kind::Binary {
                offsets: a.value_offsets(),
                data: a.value_data(),
            }
        }
        D::LargeBinary => {
            let a = array.as_binary::<i64>();
            Kind::LargeBinary {
                offsets: a.value_offsets(),
                data: a.value_data(),
            }
        }
        D::BinaryView => Kind::BinaryView(array.as_binary_view()),
        D::FixedSizeBinary(_) => Kind::FixedBinary(array.as_fixed_size_binary()),
        D::Decimal32(_, s) => Kind::Decimal32 {
            values: array.as_primitive::<Decimal32Type>().values(),
            scale: *s,
        },
        D::Decimal64(_, s) => Kind::Decimal64 {
            values: array.as_primitive::<Decimal64Type>().values(),
            scale: *s,
        },
        D::Decimal128(_, s) => Kind::Decimal128 {
            values: array.as_primitive::<Decimal128Type>().values(),
            scale: *s,
        },
        D::Decimal256(_, s) => Kind::Decimal256 {
            values: array.as_primitive::<Decimal256Type>().values(),
            scale: *s,
        },
        D::Date32 => Kind::Date32(array.as_primitive::<Date32Type>().values()),
        D::Date64 => Kind::Date64(array.as_primitive::<Date64Type>().values()),
        D::Time32(unit) => Kind::Time32 {
            values: match unit {
                TimeUnit::Second => array.as_primitive::<Time32SecondType>().values(),
                TimeUnit::Millisecond => array.as_primitive::<Time32MillisecondType>().values(),
                _ => return Kind::Unsupported,
            },
            unit: *unit,
        },
        D::Time64(unit) => Kind::Time64 {
            values: match unit {
                TimeUnit::Microsecond => array.as_primitive::<Time64MicrosecondType>().values(),
                TimeUnit::Nanosecond => array.as_primitive::<Time64NanosecondType>().values(),
                _ => return Kind::Unsupported,
            },
            unit: *unit,
        },
        D::Timestamp(unit, tz) => Kind::Timestamp {
            values: match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().values(),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().values(),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().values(),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().values(),
            },
            unit: *unit,
            zoned: tz.is_some(),
        },
        D::Duration(unit) => Kind::Duration(match unit {
            TimeUnit::Second => array.as_primitive::<DurationSecondType>().values(),
            TimeUnit::Millisecond => array.as_primitive::<DurationMillisecondType>().values(),
            TimeUnit::Microsecond => array.as_primitive::<DurationMicrosecondType>().values(),
            TimeUnit::Nanosecond => array.as_primitive::<DurationNanosecondType>().values(),
        }),
        D::Interval(IntervalUnit::YearMonth) => {
            Kind::IntervalYearMonth(array.as_primitive::<IntervalYearMonthType>().values())
        }
        D::Interval(IntervalUnit::DayTime) => {
            Kind::IntervalDayTime(array.as_primitive::<IntervalDayTimeType>().values())
        }
        D::Interval(IntervalUnit::MonthDayNano) => {
            Kind::IntervalMonthDayNano(array.as_primitive::<IntervalMonthDayNanoType>().values())
        }
        D::List(_) => {
            let a = array.as_list::<i32>();
            Kind::List {
                offsets: ListOffsets::I32(a.value_offsets()),
                items: Box::new(Column::new(a.values())),
            }
        }
        D::LargeList(_) => {
            let a = array.as_list::<i64>();
            Kind::List {
                offsets: ListOffsets::I64(a.value_offsets()),
                items: Box::new(Column::new(a.values())),
            }
        }
        D::FixedSizeList(_, _) => {
            let a = array.as_fixed_size_list();
            Kind::List {
                offsets: ListOffsets::Fixed {
                    len: a.value_length() as usize,
                    start: if a.is_empty() {
                        0
                    } else {
                        a.value_offset(0) as usize
                    },
                },
                items: Box::new(Column::new(a.values())),
            }
        }
        D::Struct(fields) => {
            let a = array.as_struct();
            Kind::Struct(Box::new(StructNode::new(fields, a.columns())))
        }
        D::Map(_, _) => {
            let a = array.as_map();
            Kind::Map {
                offsets: a.value_offsets(),
                keys: Box::new(Column::new(a.keys())),
                values: Box::new(Column::new(a.values())),
            }
        }
        D::Dictionary(_, _) => {
            let a = array.as_any_dictionary();
            if a.values().is_empty() {
                // Only possible when every key is NULL.
                return Kind::Null;
            }
            Kind::Dictionary {
                keys: a.normalized_keys(),
                values: Box::new(Column::new(a.values())),
            }
        }
        _ => Kind::Unsupported,
    }
}

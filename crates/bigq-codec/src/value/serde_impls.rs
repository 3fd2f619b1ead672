//! serde for the value types.
//!
//! Every type serializes as its canonical text (its `Display`), the form BigQuery's REST
//! API and query parameters use; [`Json`] and [`Geography`] as their text.
//!
//! Deserializing asks for a newtype struct with a name from [`magic`]. bigq's row
//! deserializer recognises the name and hands over the Arrow value itself:
//!
//! | Type | Visitor call | Meaning |
//! |---|---|---|
//! | `Numeric` | `visit_i128` | units of 10⁻⁹ |
//! | `BigNumeric` | `visit_bytes`, 32 bytes | `i256` units of 10⁻³⁸, little-endian |
//! | `Date` | `visit_i32` | days since 1970-01-01 |
//! | `Time`, `DateTime`, `Timestamp` | `visit_i64` | microseconds |
//! | `Interval` | `visit_bytes`, 16 bytes | months `i32`, days `i32`, nanoseconds `i64`, little-endian |
//!
//! Any other deserializer calls `visit_newtype_struct`, and the value is read from what is
//! inside: the canonical text (or any text the type's `FromStr` takes), or a number where
//! one is natural (whole numbers for `Numeric` and `BigNumeric`, days for `Date`,
//! microseconds for the others). `Timestamp` also takes REST's float-seconds text
//! (`"1.7040672E9"`), exactly. Non-self-describing formats read the text.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use arrow_buffer::i256;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::{Serialize, Serializer};

use super::magic;
use super::text;
use super::types::{
    BigNumeric, Date, DateTime, Geography, Interval, Json, Numeric, Range, Time, Timestamp,
};

/// The 16 bytes by which bigq's row deserializer hands an INTERVAL over.
pub(crate) fn interval_bytes(months: i32, days: i32, nanos: i64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&months.to_le_bytes());
    b[4..8].copy_from_slice(&days.to_le_bytes());
    b[8..].copy_from_slice(&nanos.to_le_bytes());
    b
}

/// Reads what is inside a newtype struct from any other deserializer.
fn inner<'de, D: Deserializer<'de>, V: Visitor<'de>>(d: D, v: V) -> Result<V::Value, D::Error> {
    if d.is_human_readable() {
        d.deserialize_any(v)
    } else {
        d.deserialize_str(v)
    }
}

std::thread_local! {
    /// Set while bigq's Storage Write row encoder serializes a row on this thread: the value
    /// types then hand it their raw value in a `$bigq::*` newtype instead of their text.
    static RAW_SERIALIZE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a value type should serialize its raw value (see [`RawSerializeGuard`]).
#[inline]
fn raw_serialize() -> bool {
    RAW_SERIALIZE.with(|c| c.get())
}

/// Makes the value types serialize raw (`$bigq::*` newtypes around their integer value) on
/// this thread until dropped, then restores the previous state. Only bigq's protobuf row
/// encoder uses it, around its own serializer; every other serializer sees text as before.
pub(crate) struct RawSerializeGuard(bool);

impl RawSerializeGuard {
    pub(crate) fn set(on: bool) -> Self {
        RawSerializeGuard(RAW_SERIALIZE.with(|c| c.replace(on)))
    }
}

impl Drop for RawSerializeGuard {
    fn drop(&mut self) {
        RAW_SERIALIZE.with(|c| c.set(self.0));
    }
}

/// Fixed-size raw bytes, serialized as bytes (an array would be a tuple of `u8`s).
struct RawBytes<const N: usize>([u8; N]);

impl<const N: usize> Serialize for RawBytes<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

/// Each type serializes as its text, or under [`RawSerializeGuard`] as a newtype named
/// `$magic` around its raw value.
macro_rules! serialize_as_text {
    ($($t:ty, $magic:expr, |$v:ident| $raw:expr);* $(;)?) => {$(
        impl Serialize for $t {
            #[inline]
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                if raw_serialize() {
                    let $v = self;
                    s.serialize_newtype_struct($magic, &$raw)
                } else {
                    s.collect_str(self)
                }
            }
        }
    )*};
}

serialize_as_text!(
    Numeric, magic::NUMERIC, |v| v.to_scaled();
    BigNumeric, magic::BIGNUMERIC, |v| RawBytes(v.to_scaled().to_le_bytes());
    Date, magic::DATE, |v| v.get();
    Time, magic::TIME, |v| v.get();
    DateTime, magic::DATETIME, |v| v.get();
    Timestamp, magic::TIMESTAMP, |v| v.get();
    Interval, magic::INTERVAL, |v| RawBytes(interval_bytes(v.months, v.days, v.nanos));
);

/// A RANGE serializes as its text (`[start, end)`), or under `RawSerializeGuard` as a
/// struct `{start, end}` of optional bounds, the shape of the Storage Write message.
impl<T: fmt::Display + Serialize> Serialize for Range<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if raw_serialize() {
            use serde::ser::SerializeStruct;
            let mut st = s.serialize_struct(magic::RANGE, 2)?;
            st.serialize_field("start", &self.start)?;
            st.serialize_field("end", &self.end)?;
            st.end()
        } else {
            s.collect_str(self)
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl Serialize for Geography {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Parses text with the type's `FromStr`, as a serde error.
fn parse<T: FromStr<Err = super::error::ParseValueError>, E: de::Error>(s: &str) -> Result<T, E> {
    s.parse().map_err(E::custom)
}

/// An `f64` through its shortest decimal text: `0.1` is the decimal 0.1, not the binary
/// fraction nearest it.
fn parse_f64<T: FromStr<Err = super::error::ParseValueError>, E: de::Error>(
    v: f64,
) -> Result<T, E> {
    if !v.is_finite() {
        return Err(E::invalid_value(Unexpected::Float(v), &"a finite number"));
    }
    parse(&v.to_string())
}

struct NumericVisitor;

impl<'de> Visitor<'de> for NumericVisitor {
    type Value = Numeric;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a NUMERIC as decimal text or a number")
    }

    #[inline]
    fn visit_i128<E: de::Error>(self, units: i128) -> Result<Numeric, E> {
        Numeric::from_scaled(units).ok_or_else(|| E::custom("NUMERIC out of range"))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Numeric, E> {
        Ok(Numeric::from_i64(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Numeric, E> {
        Ok(Numeric::from_scaled(v as i128 * 1_000_000_000).unwrap_or(Numeric::MAX))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Numeric, E> {
        parse_f64(v)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Numeric, E> {
        parse(s)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Numeric, D::Error> {
        inner(d, self)
    }
}

impl<'de> Deserialize<'de> for Numeric {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(magic::NUMERIC, NumericVisitor)
    }
}

struct BigNumericVisitor;

impl BigNumericVisitor {
    fn whole<E: de::Error>(v: i256) -> Result<BigNumeric, E> {
        let scale = i256::from_i128(10).wrapping_pow(38);
        v.checked_mul(scale)
            .map(BigNumeric::from_scaled)
            .ok_or_else(|| E::custom("BIGNUMERIC out of range"))
    }
}

impl<'de> Visitor<'de> for BigNumericVisitor {
    type Value = BigNumeric;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a BIGNUMERIC as decimal text or a number")
    }

    #[inline]
    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<BigNumeric, E> {
        let b: [u8; 32] = b
            .try_into()
            .map_err(|_| E::invalid_length(b.len(), &"32 bytes"))?;
        Ok(BigNumeric::from_scaled(i256::from_le_bytes(b)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<BigNumeric, E> {
        Self::whole(i256::from_i128(v as i128))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<BigNumeric, E> {
        Self::whole(i256::from_i128(v as i128))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<BigNumeric, E> {
        Self::whole(i256::from_i128(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<BigNumeric, E> {
        parse_f64(v)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<BigNumeric, E> {
        parse(s)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<BigNumeric, D::Error> {
        inner(d, self)
    }
}

impl<'de> Deserialize<'de> for BigNumeric {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(magic::BIGNUMERIC, BigNumericVisitor)
    }
}

struct DateVisitor;

impl<'de> Visitor<'de> for DateVisitor {
    type Value = Date;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a DATE as YYYY-MM-DD text or days since 1970-01-01")
    }

    #[inline]
    fn visit_i32<E: de::Error>(self, days: i32) -> Result<Date, E> {
        Ok(Date::new(days))
    }

    fn visit_i64<E: de::Error>(self, days: i64) -> Result<Date, E> {
        i32::try_from(days)
            .map(Date::new)
            .map_err(|_| E::invalid_value(Unexpected::Signed(days), &self))
    }

    fn visit_u64<E: de::Error>(self, days: u64) -> Result<Date, E> {
        i32::try_from(days)
            .map(Date::new)
            .map_err(|_| E::invalid_value(Unexpected::Unsigned(days), &self))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Date, E> {
        parse(s)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Date, D::Error> {
        inner(d, self)
    }
}

impl<'de> Deserialize<'de> for Date {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(magic::DATE, DateVisitor)
    }
}

/// TIME, DATETIME and TIMESTAMP: microseconds, or text.
macro_rules! micros_visitor {
    ($visitor:ident, $t:ident, $magic:expr, $expecting:literal, $check:expr, $parse:expr) => {
        struct $visitor;

        impl<'de> Visitor<'de> for $visitor {
            type Value = $t;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($expecting)
            }

            #[inline]
            fn visit_i64<E: de::Error>(self, micros: i64) -> Result<$t, E> {
                let check: fn(i64) -> bool = $check;
                if check(micros) {
                    Ok($t::new(micros))
                } else {
                    Err(E::invalid_value(Unexpected::Signed(micros), &self))
                }
            }

            fn visit_u64<E: de::Error>(self, micros: u64) -> Result<$t, E> {
                match i64::try_from(micros) {
                    Ok(m) => self.visit_i64(m),
                    Err(_) => Err(E::invalid_value(Unexpected::Unsigned(micros), &self)),
                }
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<$t, E> {
                let parse: fn(&str) -> Result<$t, super::error::ParseValueError> = $parse;
                parse(s).map_err(E::custom)
            }

            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<$t, D::Error> {
                inner(d, self)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            #[inline]
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_newtype_struct($magic, $visitor)
            }
        }
    };
}

micros_visitor!(
    TimeVisitor,
    Time,
    magic::TIME,
    "a TIME as HH:MM:SS[.ffffff] text or microseconds since midnight",
    |m| (0..text::MICROS_PER_DAY).contains(&m),
    str::parse
);
micros_visitor!(
    DateTimeVisitor,
    DateTime,
    magic::DATETIME,
    "a DATETIME as YYYY-MM-DDTHH:MM:SS[.ffffff] text or microseconds",
    |_| true,
    str::parse
);
micros_visitor!(
    TimestampVisitor,
    Timestamp,
    magic::TIMESTAMP,
    "a TIMESTAMP as text or microseconds since the epoch",
    |_| true,
    |s: &str| {
        s.parse().or_else(|e| {
            // REST's tabledata.list renders TIMESTAMP as float seconds.
            text::parse_float_seconds_micros(s.trim().as_bytes())
                .map(Timestamp::new)
                .ok_or(e)
        })
    }
);

struct IntervalVisitor;

impl<'de> Visitor<'de> for IntervalVisitor {
    type Value = Interval;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an INTERVAL as Y-M D H:M:S[.F] text")
    }

    #[inline]
    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Interval, E> {
        let b: [u8; 16] = b
            .try_into()
            .map_err(|_| E::invalid_length(b.len(), &"16 bytes"))?;
        let (m, rest) = b.split_at(4);
        let (d, n) = rest.split_at(4);
        Ok(Interval::new(
            i32::from_le_bytes(m.try_into().unwrap_or_default()),
            i32::from_le_bytes(d.try_into().unwrap_or_default()),
            i64::from_le_bytes(n.try_into().unwrap_or_default()),
        ))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Interval, E> {
        parse(s)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Interval, D::Error> {
        inner(d, self)
    }
}

impl<'de> Deserialize<'de> for Interval {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(magic::INTERVAL, IntervalVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON document")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json, E> {
        Ok(Json(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Json, E> {
        Ok(Json(s))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        if d.is_human_readable() {
            // BigQuery sends the document as a string; a document given inline is kept as
            // its text.
            Ok(match serde_json::Value::deserialize(d)? {
                serde_json::Value::String(s) => Json(s),
                other => Json(other.to_string()),
            })
        } else {
            d.deserialize_string(self)
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(magic::JSON, JsonVisitor)
    }
}

struct GeographyVisitor;

impl<'de> Visitor<'de> for GeographyVisitor {
    type Value = Geography;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a GEOGRAPHY as WKT text")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Geography, E> {
        Ok(Geography(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Geography, E> {
        Ok(Geography(s))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Geography, D::Error> {
        d.deserialize_string(self)
    }
}

impl<'de> Deserialize<'de> for Geography {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(magic::GEOGRAPHY, GeographyVisitor)
    }
}

/// The fields of a RANGE struct.
pub(crate) const RANGE_FIELDS: &[&str] = &["start", "end"];

enum RangeKey {
    Start,
    End,
    Other,
}

impl<'de> Deserialize<'de> for RangeKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = RangeKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`start` or `end`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RangeKey, E> {
                Ok(match s {
                    "start" => RangeKey::Start,
                    "end" => RangeKey::End,
                    _ => RangeKey::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

struct RangeVisitor<T>(PhantomData<fn() -> T>);

impl<'de, T> Visitor<'de> for RangeVisitor<T>
where
    T: Deserialize<'de> + FromStr,
{
    type Value = Range<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a RANGE as `[start, end)` text or a struct of `start` and `end`")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Range<T>, E> {
        s.parse().map_err(E::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Range<T>, A::Error> {
        let mut range = Range::new(None, None);
        while let Some(key) = map.next_key::<RangeKey>()? {
            match key {
                RangeKey::Start => range.start = map.next_value()?,
                RangeKey::End => range.end = map.next_value()?,
                RangeKey::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        Ok(range)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Range<T>, A::Error> {
        let start = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let end = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        Ok(Range::new(start, end))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Range<T>, D::Error> {
        inner(d, self)
    }
}

impl<'de, T> Deserialize<'de> for Range<T>
where
    T: Deserialize<'de> + FromStr,
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(magic::RANGE, RangeVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip<T>(value: T, text: &str)
    where
        T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug,
    {
        let j = serde_json::to_value(&value).unwrap();
        assert_eq!(j, json!(text), "serializes as text");
        let back: T = serde_json::from_value(j).unwrap();
        assert_eq!(back, value);
        let back: T = serde_json::from_str(&format!("{text:?}")).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn every_type_round_trips_through_json_text() {
        round_trip("1.5".parse::<Numeric>().unwrap(), "1.5");
        round_trip("-0.000000001".parse::<Numeric>().unwrap(), "-0.000000001");
        round_trip(
            "-1.00000000000000000000000000000000000001"
                .parse::<BigNumeric>()
                .unwrap(),
            "-1.00000000000000000000000000000000000001",
        );
        round_trip(Date::new(19_723), "2024-01-01");
        round_trip(Time::new(45_000_500_000), "12:30:00.500000");
        round_trip(
            "2024-03-01T10:20:30.000001".parse::<DateTime>().unwrap(),
            "2024-03-01T10:20:30.000001",
        );
        round_trip(Timestamp::new(1_500_000), "1970-01-01T00:00:01.500000Z");
        round_trip(Interval::new(14, 3, 1_000_000_000), "1-2 3 0:0:1");
        round_trip(Json(r#"{"a":1}"#.into()), r#"{"a":1}"#);
        round_trip(Geography("POINT(1 2)".into()), "POINT(1 2)");
        round_trip(
            Range::new(Some(Date::new(19_723)), None),
            "[2024-01-01, UNBOUNDED)",
        );
    }

    #[test]
    fn numbers_are_read_where_natural() {
        let n: Numeric = serde_json::from_value(json!(42)).unwrap();
        assert_eq!(n, Numeric::from_i64(42));
        let n: Numeric = serde_json::from_value(json!(0.1)).unwrap();
        assert_eq!(n.to_scaled(), 100_000_000);
        let b: BigNumeric = serde_json::from_value(json!(-3)).unwrap();
        assert_eq!(b.to_string(), "-3");
        let d: Date = serde_json::from_value(json!(19_723)).unwrap();
        assert_eq!(d.to_string(), "2024-01-01");
        let t: Timestamp = serde_json::from_value(json!(1_704_067_200_000_000i64)).unwrap();
        assert_eq!(t.to_string(), "2024-01-01T00:00:00Z");
        let t: Time = serde_json::from_value(json!(1)).unwrap();
        assert_eq!(t.get(), 1);
        assert!(serde_json::from_value::<Time>(json!(86_400_000_000i64)).is_err());
        assert!(serde_json::from_value::<Date>(json!(1i64 << 40)).is_err());
    }

    #[test]
    fn rest_forms_are_accepted() {
        // tabledata.list renders TIMESTAMP as float seconds.
        let t: Timestamp = serde_json::from_value(json!("1.7040672E9")).unwrap();
        assert_eq!(t.get(), 1_704_067_200_000_000);
        let t: Timestamp = serde_json::from_value(json!("2024-01-01 00:00:00 UTC")).unwrap();
        assert_eq!(t.get(), 1_704_067_200_000_000);
        let r: Range<Timestamp> = serde_json::from_value(json!({
            "start": "2024-01-01T00:00:00Z", "end": null
        }))
        .unwrap();
        assert_eq!(r.start, Some(Timestamp::new(1_704_067_200_000_000)));
        assert_eq!(r.end, None);
        // A JSON column given inline as a document keeps its text.
        let j: Json = serde_json::from_value(json!({"a": [1, 2]})).unwrap();
        assert_eq!(j.0, r#"{"a":[1,2]}"#);
    }

    #[test]
    fn bad_text_is_an_error_naming_the_type() {
        let e = serde_json::from_value::<Date>(json!("2024-02-30")).unwrap_err();
        assert!(e.to_string().contains("DATE"), "{e}");
        let e = serde_json::from_value::<Numeric>(json!("1.0000000001")).unwrap_err();
        assert!(e.to_string().contains("NUMERIC"), "{e}");
        assert!(serde_json::from_value::<Interval>(json!("1-2")).is_err());
        assert!(serde_json::from_value::<Numeric>(json!(true)).is_err());
    }

    #[test]
    fn interval_bytes_round_trip() {
        let b = interval_bytes(-14, 3, -5);
        let i = IntervalVisitor
            .visit_bytes::<serde_json::Error>(&b)
            .unwrap();
        assert_eq!(i, Interval::new(-14, 3, -5));
        assert!(
            IntervalVisitor
                .visit_bytes::<serde_json::Error>(&b[..15])
                .is_err()
        );
    }
}

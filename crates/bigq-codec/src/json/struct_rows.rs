//! Rows in the struct encoding of the BigQuery v2 gRPC API (`repeated
//! google.protobuf.Struct rows` in `QueryResponse` and `GetQueryResultsResponse`), read
//! straight from the protobuf wire bytes into the REST body's JSON, which
//! [`ResponseDecoder`](super::ResponseDecoder) then decodes like any REST page.
//!
//! A `google.protobuf.Struct` is a map of `Value`s; decoded by a generic protobuf library
//! every cell becomes a map with a heap-allocated key and value (prost: a `BTreeMap` node per
//! cell), which costs far more than the cell. Here each row is one pass over its bytes that
//! writes `{"f":[{"v":"..."}]}` text: no per-cell object, strings copied once (escaped).
//!
//! ```
//! use std::collections::BTreeMap;
//! use prost::Message;
//! use prost_types::{ListValue, Struct, Value, value::Kind};
//!
//! // One row {"f": [{"v": "1"}]}, as the field 7 (`rows`) of a GetQueryResultsResponse
//! // whose field 6 (`page_token`) is "p2".
//! let map = |k: &str, v: Kind| Struct {
//!     fields: BTreeMap::from([(k.to_string(), Value { kind: Some(v) })]),
//! };
//! let cell = map("v", Kind::StringValue("1".into()));
//! let row = map("f", Kind::ListValue(ListValue {
//!     values: vec![Value { kind: Some(Kind::StructValue(cell)) }],
//! }));
//! let mut message = vec![0x32, 0x02, b'p', b'2'];
//! prost::encoding::message::encode(7, &row, &mut message);
//!
//! let split = bigq_codec::json::split_struct_rows(&message, 7)?;
//! assert_eq!(split.rows, 1);
//! assert_eq!(split.body, br#"{"rows":[{"f":[{"v":"1"}]}]}"#);
//! assert_eq!(*split.rest, [0x32, 0x02, b'p', b'2']); // the page token, for prost
//! # Ok::<(), bigq_codec::CodecError>(())
//! ```

use std::borrow::Cow;

use crate::proto::wire::{self, FIXED64, LEN, MAX_DEPTH, Reader, VARINT, end_len, put_varint};
use crate::{CodecError, CodecErrorKind};

/// The field number of `rows` in the v2 `QueryResponse`.
pub const QUERY_RESPONSE_ROWS_TAG: u32 = 6;
/// The field number of `rows` in the v2 `GetQueryResultsResponse`.
pub const GET_QUERY_RESULTS_ROWS_TAG: u32 = 7;

/// A protobuf message with its struct-encoded rows taken out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitRows<'a> {
    /// The message's other fields, as they were on the wire (decode them with the message's
    /// generated type; its `rows` come out empty): the message itself when it has no rows
    /// (an Arrow page is not copied), a copy of its other fields when it has.
    pub rest: Cow<'a, [u8]>,
    /// The rows as a REST-shaped body: `{"rows":[...]}`.
    pub body: Vec<u8>,
    /// How many rows `body` holds.
    pub rows: usize,
}

/// Splits `message` into its field `rows_tag` (each occurrence a `google.protobuf.Struct`
/// row, written to [`SplitRows::body`] as JSON) and everything else.
///
/// Malformed protobuf (a truncated field, a wire type that does not match a known field, a
/// string that is not UTF-8, nesting deeper than 100) is a [`CodecErrorKind::Syntax`] error
/// naming the row and what was wrong.
pub fn split_struct_rows(message: &[u8], rows_tag: u32) -> Result<SplitRows<'_>, CodecError> {
    let mut out = SplitRows {
        rest: Cow::Borrowed(message),
        body: b"{\"rows\":[".to_vec(),
        rows: 0,
    };
    let mut r = Reader::new(message);
    while !r.at_end() {
        let start = r.pos();
        let (tag, wire) = r.next_field().map_err(|e| e.at("the message"))?;
        if tag == rows_tag {
            let row = r.value_of(wire, "a row").map_err(|e| e.at("the message"))?;
            if out.rows == 0 {
                // The first row: from here on the other fields are copied, and the JSON
                // takes about as many bytes as the rows do.
                // `start` is a position the reader reached in `message`.
                #[allow(clippy::indexing_slicing)]
                let head = &message[..start];
                out.rest = Cow::Owned(head.to_vec());
                out.body.reserve(message.len() - start + 2);
            } else {
                out.body.push(b',');
            }
            write_struct(row, &mut out.body, 0).map_err(|e| e.at_row(out.rows))?;
            out.rows += 1;
        } else {
            r.skip_unknown(tag, wire).map_err(|e| e.at("the message"))?;
            if let Cow::Owned(rest) = &mut out.rest {
                // Both ends are positions the reader reached in `message`, in order.
                #[allow(clippy::indexing_slicing)]
                let field = &message[start..r.pos()];
                rest.extend_from_slice(field);
            }
        }
    }
    out.body.extend_from_slice(b"]}");
    Ok(out)
}

/// What was wrong, before it is placed (row or message).
#[derive(Debug)]
struct Problem(String);

impl Problem {
    fn new(what: impl Into<String>) -> Self {
        Problem(what.into())
    }

    fn at(self, place: &str) -> CodecError {
        CodecError::new(
            CodecErrorKind::Syntax,
            format!("malformed protobuf in {place}: {}", self.0),
        )
    }

    fn at_row(self, row: usize) -> CodecError {
        CodecError::new(
            CodecErrorKind::Syntax,
            format!("malformed google.protobuf.Struct row: {}", self.0),
        )
        .with_row(row as u64)
    }
}

impl From<wire::WireError> for Problem {
    fn from(e: wire::WireError) -> Self {
        Problem(e.to_string())
    }
}

/// Reading the fields of a message: keys checked, unknown fields skipped (groups too), a
/// length-delimited value taken where one must be, each failure placed in words.
trait Fields<'a> {
    fn next_field(&mut self) -> Result<(u32, u32), Problem>;
    fn skip_unknown(&mut self, number: u32, wire: u32) -> Result<(), Problem>;
    fn value_of(&mut self, wire: u32, what: &str) -> Result<&'a [u8], Problem>;
}

impl<'a> Fields<'a> for Reader<'a> {
    #[inline(always)]
    fn next_field(&mut self) -> Result<(u32, u32), Problem> {
        Ok(self.field()?)
    }

    fn skip_unknown(&mut self, number: u32, wire: u32) -> Result<(), Problem> {
        Ok(self.skip_field(number, wire)?)
    }

    #[inline(always)]
    fn value_of(&mut self, wire: u32, what: &str) -> Result<&'a [u8], Problem> {
        if wire != LEN {
            return Err(Problem::new(format!(
                "{what} has wire type {wire}, not length-delimited"
            )));
        }
        Ok(self.len_delimited()?)
    }
}

fn utf8<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, Problem> {
    std::str::from_utf8(bytes).map_err(|_| Problem::new(format!("{what} is not UTF-8")))
}

/// Protobuf string bytes as a JSON string. Printable ASCII other than `"` and `\\` (every
/// key and most BigQuery cells: numbers, dates, plain text) is copied as it is; anything
/// else is checked as UTF-8 and escaped by serde_json.
#[inline(always)]
fn write_json_str(bytes: &[u8], what: &str, out: &mut Vec<u8>) -> Result<(), Problem> {
    if bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        Ok(())
    } else {
        escape_json_str(utf8(bytes, what)?, out);
        Ok(())
    }
}

#[inline(never)]
fn escape_json_str(s: &str, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// A `google.protobuf.Struct` as a JSON object.
fn write_struct(bytes: &[u8], out: &mut Vec<u8>, depth: u32) -> Result<(), Problem> {
    if depth >= MAX_DEPTH {
        return Err(wire::WireError::TooDeep.into());
    }
    out.push(b'{');
    let mut first = true;
    let mut r = Reader::new(bytes);
    while !r.at_end() {
        let (tag, wire) = r.next_field()?;
        if tag != 1 {
            r.skip_unknown(tag, wire)?;
            continue;
        }
        // A map entry: key (1) and value (2), either possibly absent.
        let entry = r.value_of(wire, "a Struct field")?;
        // A field that comes twice counts once (the later), but both must be well formed.
        let (mut key, mut value, mut replaced) = (&[][..], None, Vec::new());
        let mut e = Reader::new(entry);
        while !e.at_end() {
            match e.next_field()? {
                (1, w) => {
                    key = e.value_of(w, "a Struct key")?;
                    if !key.is_ascii() {
                        utf8(key, "a Struct key")?;
                    }
                }
                (2, w) => {
                    let v = e.value_of(w, "a Struct value")?;
                    replaced.extend(value.replace(v));
                }
                (t, w) => e.skip_unknown(t, w)?,
            }
        }
        for v in replaced {
            let mark = out.len();
            write_value(v, out, depth + 1)?;
            out.truncate(mark);
        }
        if !first {
            out.push(b',');
        }
        first = false;
        write_json_str(key, "a Struct key", out)?;
        out.push(b':');
        write_value(value.unwrap_or_default(), out, depth + 1)?;
    }
    out.push(b'}');
    Ok(())
}

/// A `google.protobuf.Value` as JSON. Of its `kind` fields the last one on the wire wins,
/// as protobuf has it for a `oneof`; no field is JSON `null`.
fn write_value(bytes: &[u8], out: &mut Vec<u8>, depth: u32) -> Result<(), Problem> {
    let mut r = Reader::new(bytes);
    // Each kind is written as it comes (so a malformed one is an error even when a later
    // one replaces it, as for prost); a later kind takes the place of an earlier one.
    let start = out.len();
    let mut any = false;
    while !r.at_end() {
        let (tag, wire) = r.next_field()?;
        let expected = match tag {
            1 | 4 => VARINT,
            2 => FIXED64,
            3 | 5 | 6 => LEN,
            _ => {
                r.skip_unknown(tag, wire)?;
                continue;
            }
        };
        if wire != expected {
            return Err(Problem::new(format!(
                "google.protobuf.Value field {tag} has wire type {wire}"
            )));
        }
        out.truncate(start);
        any = true;
        match tag {
            1 => {
                r.varint()?;
                out.extend_from_slice(b"null");
            }
            2 => {
                write_number(f64::from_bits(r.fixed64()?), out);
            }
            3 => write_json_str(r.len_delimited()?, "a string value", out)?,
            4 => out.extend_from_slice(if r.varint()? != 0 { b"true" } else { b"false" }),
            5 => write_struct(r.len_delimited()?, out, depth + 1)?,
            _ => write_list(r.len_delimited()?, out, depth + 1)?,
        }
    }
    if !any {
        out.extend_from_slice(b"null");
    }
    Ok(())
}

/// A number value. JSON has no NaN or infinities; they are written as the strings
/// BigQuery uses for such FLOAT64 values.
fn write_number(n: f64, out: &mut Vec<u8>) {
    if n.is_finite() {
        let _ = serde_json::to_writer(&mut *out, &n);
    } else if n.is_nan() {
        out.extend_from_slice(b"\"NaN\"");
    } else if n > 0.0 {
        out.extend_from_slice(b"\"Infinity\"");
    } else {
        out.extend_from_slice(b"\"-Infinity\"");
    }
}

/// A `google.protobuf.ListValue` as a JSON array.
fn write_list(bytes: &[u8], out: &mut Vec<u8>, depth: u32) -> Result<(), Problem> {
    if depth >= MAX_DEPTH {
        return Err(wire::WireError::TooDeep.into());
    }
    out.push(b'[');
    let mut first = true;
    let mut r = Reader::new(bytes);
    while !r.at_end() {
        match r.next_field()? {
            (1, w) => {
                let v = r.value_of(w, "a list item")?;
                if !first {
                    out.push(b',');
                }
                first = false;
                write_value(v, out, depth + 1)?;
            }
            (t, w) => r.skip_unknown(t, w)?,
        }
    }
    out.push(b']');
    Ok(())
}

/// The other direction, for servers: a JSON array of row objects (the REST body's
/// `rows`) as protobuf field `rows_tag`, each row a `google.protobuf.Struct`, ready to be
/// appended to the encoding of the rest of the message (protobuf takes fields in any order).
/// Returns the bytes and the number of rows. JSON numbers become number values, as
/// protobuf's JSON mapping has it.
pub fn struct_rows_from_json(rows: &[u8], rows_tag: u32) -> Result<(Vec<u8>, usize), CodecError> {
    use serde::de::DeserializeSeed;
    let mut out = Vec::with_capacity(rows.len() + rows.len() / 4);
    let mut de = serde_json::Deserializer::from_slice(rows);
    let n = RowsSeed {
        out: &mut out,
        key: (u64::from(rows_tag) << 3) | u64::from(LEN),
    }
    .deserialize(&mut de)
    .and_then(|n| de.end().map(|()| n))
    .map_err(|e| CodecError::new(CodecErrorKind::Syntax, format!("rows JSON: {e}")))?;
    Ok((out, n))
}

/// Starts a length-delimited field `key` whose length is not known yet.
fn begin_len(out: &mut Vec<u8>, key: u8) -> usize {
    out.push(key);
    wire::begin_len(out)
}

/// The top-level array: each element a row object.
struct RowsSeed<'o> {
    out: &'o mut Vec<u8>,
    key: u64,
}

impl<'de> serde::de::DeserializeSeed<'de> for RowsSeed<'_> {
    type Value = usize;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for RowsSeed<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of row objects")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        loop {
            let before = self.out.len();
            put_varint(self.out, self.key);
            let start = wire::begin_len(self.out);
            let row = ValueSeed {
                out: self.out,
                as_struct: true,
            };
            if seq.next_element_seed(row)?.is_none() {
                self.out.truncate(before);
                return Ok(n);
            }
            end_len(self.out, start);
            n += 1;
        }
    }
}

/// One JSON value written as a `google.protobuf.Value`'s fields, or, `as_struct`, an
/// object written as a `google.protobuf.Struct`'s fields (a row).
struct ValueSeed<'o> {
    out: &'o mut Vec<u8>,
    as_struct: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.as_struct {
            d.deserialize_map(self)
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> serde::de::Visitor<'de> for ValueSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.as_struct {
            "a row object"
        } else {
            "a JSON value"
        })
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.out.extend_from_slice(&[0x08, 0x00]);
        Ok(())
    }

    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.out.extend_from_slice(&[0x20, u8::from(b)]);
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.out.push(0x11);
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.visit_f64(v as f64)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.visit_f64(v as f64)
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.out.push(0x1a);
        put_varint(self.out, s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let list = begin_len(self.out, 0x32);
        loop {
            let item = begin_len(self.out, 0x0a);
            let seed = ValueSeed {
                out: self.out,
                as_struct: false,
            };
            if seq.next_element_seed(seed)?.is_none() {
                self.out.truncate(item - 2);
                break;
            }
            end_len(self.out, item);
        }
        end_len(self.out, list);
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A row is the Struct itself; a nested object is a Value's struct_value.
        let object = (!self.as_struct).then(|| begin_len(self.out, 0x2a));
        loop {
            let entry = begin_len(self.out, 0x0a);
            if map.next_key_seed(KeySeed(self.out))?.is_none() {
                self.out.truncate(entry - 2);
                break;
            }
            let value = begin_len(self.out, 0x12);
            map.next_value_seed(ValueSeed {
                out: self.out,
                as_struct: false,
            })?;
            end_len(self.out, value);
            end_len(self.out, entry);
        }
        if let Some(start) = object {
            end_len(self.out, start);
        }
        Ok(())
    }
}

/// A Struct key, written as a map entry's field 1.
struct KeySeed<'o>(&'o mut Vec<u8>);

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeySeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<(), E> {
        self.0.push(0x0a);
        put_varint(self.0, key.len() as u64);
        self.0.extend_from_slice(key.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use prost::Message;
    use prost_types::{ListValue, Struct, Value, value::Kind};
    use serde_json::{Value as Json, json};

    use super::*;

    /// The JSON a `Value` means (protobuf's JSON mapping, with BigQuery's strings for
    /// non-finite numbers): the reference the transcoder is checked against.
    fn reference(v: &Value) -> Json {
        match &v.kind {
            None | Some(Kind::NullValue(_)) => Json::Null,
            Some(Kind::NumberValue(n)) if n.is_nan() => json!("NaN"),
            Some(Kind::NumberValue(n)) if n.is_infinite() => {
                json!(if *n > 0.0 { "Infinity" } else { "-Infinity" })
            }
            Some(Kind::NumberValue(n)) => json!(n),
            Some(Kind::StringValue(s)) => json!(s),
            Some(Kind::BoolValue(b)) => json!(b),
            Some(Kind::StructValue(s)) => reference_struct(s),
            Some(Kind::ListValue(l)) => Json::Array(l.values.iter().map(reference).collect()),
        }
    }

    fn reference_struct(s: &Struct) -> Json {
        Json::Object(
            s.fields
                .iter()
                .map(|(k, v)| (k.clone(), reference(v)))
                .collect(),
        )
    }

    /// A pseudo-random value tree (xorshift), strings with characters JSON must escape.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn string(&mut self) -> String {
            let pool = ["a", "é", "\"", "\\", "\n", "\u{1}", "日本", "𝄞", " ", "9"];
            let n = self.next() % 6;
            (0..n)
                .map(|_| pool[(self.next() % pool.len() as u64) as usize])
                .collect()
        }

        fn value(&mut self, depth: u32) -> Value {
            let pick = self.next() % if depth > 3 { 5 } else { 7 };
            let kind = match pick {
                0 => None,
                1 => Some(Kind::NullValue(0)),
                2 => Some(Kind::NumberValue(
                    [0.5, -3.0, 1e300, f64::NAN, f64::INFINITY, -0.0][(self.next() % 6) as usize],
                )),
                3 => Some(Kind::StringValue(self.string())),
                4 => Some(Kind::BoolValue(self.next() & 1 == 0)),
                5 => Some(Kind::StructValue(self.strukt(depth + 1))),
                _ => Some(Kind::ListValue(ListValue {
                    values: (0..self.next() % 4)
                        .map(|_| self.value(depth + 1))
                        .collect(),
                })),
            };
            Value { kind }
        }

        fn strukt(&mut self, depth: u32) -> Struct {
            Struct {
                fields: (0..self.next() % 4)
                    .map(|_| (self.string(), self.value(depth)))
                    .collect(),
            }
        }
    }

    /// A message with struct rows in field 7 among other fields, as GetQueryResultsResponse.
    #[derive(Clone, PartialEq, prost::Message)]
    struct Page {
        #[prost(string, tag = "6")]
        page_token: String,
        #[prost(message, repeated, tag = "7")]
        rows: Vec<Struct>,
        #[prost(uint64, optional, tag = "5")]
        total_rows: Option<u64>,
        #[prost(bool, optional, tag = "9")]
        job_complete: Option<bool>,
        #[prost(double, tag = "13")]
        ratio: f64,
        #[prost(fixed32, tag = "14")]
        word: u32,
    }

    #[test]
    fn random_rows_match_prost_and_the_rest_decodes_back() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        for round in 0..300 {
            let page = Page {
                page_token: g.string(),
                rows: (0..g.next() % 5).map(|_| g.strukt(0)).collect(),
                total_rows: Some(g.next()),
                job_complete: Some(round % 2 == 0),
                ratio: 0.25,
                word: 7,
            };
            let bytes = page.encode_to_vec();
            let split = split_struct_rows(&bytes, 7).unwrap();
            assert_eq!(split.rows, page.rows.len());
            let body: Json = serde_json::from_slice(&split.body).unwrap();
            let want: Vec<Json> = page.rows.iter().map(reference_struct).collect();
            assert_eq!(body, json!({ "rows": want }), "round {round}");
            // Without rows the rest is the message itself, not a copy.
            assert_eq!(matches!(split.rest, Cow::Borrowed(_)), page.rows.is_empty());
            let rest = Page::decode(&*split.rest).unwrap();
            assert_eq!(
                rest,
                Page {
                    rows: vec![],
                    ..page
                }
            );
        }
    }

    /// Truncated and mutated pages: never a panic, and the same verdict as prost's (an
    /// error from both, or the same rows from both).
    #[test]
    fn mutated_pages_agree_with_prost() {
        let mut g = Gen(0x5851_f42d_4c95_7f2d);
        let (mut checked, mut accepted) = (0, 0);
        for _ in 0..150 {
            let page = Page {
                page_token: g.string(),
                rows: (0..1 + g.next() % 3).map(|_| g.strukt(0)).collect(),
                total_rows: Some(g.next() % 1000),
                ..Default::default()
            };
            let bytes = page.encode_to_vec();
            let mut variants: Vec<Vec<u8>> =
                (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
            for _ in 0..150 {
                let mut m = bytes.clone();
                let at = (g.next() % m.len() as u64) as usize;
                m[at] = match g.next() % 4 {
                    0 => m[at] ^ (1 << (g.next() % 8)),
                    1 => 0x80,
                    2 => 0xff,
                    _ => g.next() as u8,
                };
                variants.push(m);
            }
            for v in variants {
                checked += 1;
                // Ours: the split, then prost on the rest (as bigq's codec does).
                let ours = split_struct_rows(&v, 7).and_then(|split| {
                    Page::decode(&*split.rest)
                        .map(|rest| (split.body, rest))
                        .map_err(|e| CodecError::new(CodecErrorKind::Syntax, e.to_string()))
                });
                let theirs = Page::decode(v.as_slice());
                match (ours, theirs) {
                    (Ok((body, rest)), Ok(p)) => {
                        accepted += 1;
                        let body: Json = serde_json::from_slice(&body).unwrap();
                        let want: Vec<Json> = p.rows.iter().map(reference_struct).collect();
                        // Through text on both sides: serde_json's own float parsing is not
                        // always correctly rounded (bigq's row decoder parses floats itself).
                        let want = json!({ "rows": want }).to_string();
                        let want: Json = serde_json::from_str(&want).unwrap();
                        assert_eq!(body, want, "{v:?}");
                        assert_eq!(rest, Page { rows: vec![], ..p }, "{v:?}");
                    }
                    (Err(_), Err(_)) => {}
                    (ours, theirs) => panic!(
                        "split {:?} but prost {:?} for {v:?}",
                        ours.map(|(body, _)| body.len()),
                        theirs.map(|p| p.rows.len())
                    ),
                }
            }
        }
        // Both verdicts were exercised.
        assert!(
            accepted > 100 && accepted < checked,
            "{accepted} of {checked}"
        );
    }

    #[test]
    fn json_rows_encode_as_prost_decodes_them() {
        let mut g = Gen(0x2545_f491_4f6c_dd1d);
        for round in 0..300 {
            let rows: Vec<Struct> = (0..g.next() % 5).map(|_| g.strukt(0)).collect();
            let json: Vec<Json> = rows.iter().map(reference_struct).collect();
            let text = serde_json::to_vec(&json).unwrap();
            let (bytes, n) = struct_rows_from_json(&text, 7).unwrap();
            assert_eq!(n, rows.len());
            let page = Page::decode(bytes.as_slice()).unwrap();
            let back: Vec<Json> = page.rows.iter().map(reference_struct).collect();
            assert_eq!(back, json, "round {round}");
            // And back to JSON by the other direction.
            let split = split_struct_rows(&bytes, 7).unwrap();
            let body: Json = serde_json::from_slice(&split.body).unwrap();
            assert_eq!(body, json!({ "rows": json }));
        }
        // Long strings and rows: lengths of several varint bytes.
        let long = "x".repeat(70_000);
        let text = serde_json::to_vec(&json!([{ "f": [{ "v": long }, { "v": null }] }])).unwrap();
        let (bytes, n) = struct_rows_from_json(&text, 7).unwrap();
        assert_eq!(n, 1);
        let split = split_struct_rows(&bytes, 7).unwrap();
        assert_eq!(split.body.len(), text.len() + r#"{"rows":}"#.len());
    }

    #[test]
    fn bad_json_rows_are_errors() {
        for bad in [&b"[{\"f\":"[..], b"{}", b"[1]", b"[{}] x", b"[{\"a\":tru}]"] {
            let e = struct_rows_from_json(bad, 7).unwrap_err();
            assert_eq!(e.kind(), CodecErrorKind::Syntax, "{e}");
        }
        assert_eq!(struct_rows_from_json(b"[]", 7).unwrap(), (vec![], 0));
    }

    #[test]
    fn bigquery_row_shape() {
        let cell = |v: Option<&str>| Value {
            kind: Some(Kind::StructValue(Struct {
                fields: BTreeMap::from([(
                    "v".to_string(),
                    Value {
                        kind: Some(match v {
                            Some(s) => Kind::StringValue(s.into()),
                            None => Kind::NullValue(0),
                        }),
                    },
                )]),
            })),
        };
        let row = Struct {
            fields: BTreeMap::from([(
                "f".to_string(),
                Value {
                    kind: Some(Kind::ListValue(ListValue {
                        values: vec![cell(Some("42")), cell(None), cell(Some("a\"b"))],
                    })),
                },
            )]),
        };
        let mut bytes = Vec::new();
        prost::encoding::message::encode(7, &row, &mut bytes);
        prost::encoding::message::encode(7, &row, &mut bytes);
        let split = split_struct_rows(&bytes, 7).unwrap();
        assert_eq!(split.rows, 2);
        let one = r#"{"f":[{"v":"42"},{"v":null},{"v":"a\"b"}]}"#;
        assert_eq!(
            String::from_utf8(split.body).unwrap(),
            format!(r#"{{"rows":[{one},{one}]}}"#)
        );
        assert!(split.rest.is_empty());
    }

    #[test]
    fn the_last_kind_of_a_value_wins() {
        // Value { string_value: "x", bool_value: true }: a oneof keeps the last one.
        let value = [0x1a, 0x01, b'x', 0x20, 0x01];
        let mut out = Vec::new();
        write_value(&value, &mut out, 0).unwrap();
        assert_eq!(out, b"true");
    }

    fn err(bytes: &[u8]) -> String {
        split_struct_rows(bytes, 7).unwrap_err().to_string()
    }

    #[test]
    fn malformed_messages_are_errors_naming_the_problem() {
        // A row whose length runs past the end.
        assert!(err(&[0x3a, 0x05, 0x0a]).contains("truncated field"));
        // A truncated varint in the message.
        assert!(err(&[0x28, 0x80]).contains("truncated varint"));
        // Rows with the wrong wire type.
        assert!(err(&[0x38, 0x01]).contains("a row has wire type 0"));
        // A string value that is not UTF-8, in the second row.
        let entry = [0x0a, 0x01, b'v', 0x12, 0x03, 0x1a, 0x01, 0xff];
        let mut row = vec![0x0a, entry.len() as u8];
        row.extend_from_slice(&entry);
        let mut bytes = vec![0x3a, 0x00, 0x3a, row.len() as u8];
        bytes.extend_from_slice(&row);
        let e = split_struct_rows(&bytes, 7).unwrap_err();
        assert_eq!(e.kind(), CodecErrorKind::Syntax);
        assert_eq!(e.row(), Some(1));
        assert!(e.to_string().contains("a string value is not UTF-8"), "{e}");
        // A number value with a varint wire type.
        let mut out = Vec::new();
        let e = write_value(&[0x10, 0x01], &mut out, 0).err().unwrap();
        assert!(e.0.contains("field 2 has wire type 0"), "{}", e.0);
        // An unknown group is skipped, as prost skips it; a group without its end and an
        // end-group key alone are errors.
        let split = split_struct_rows(&[0x2b, 0x08, 0x01, 0x2c, 0x32, 0x01, b'x'], 7).unwrap();
        assert_eq!(
            (split.rows, &*split.rest),
            (0, &[0x2b, 0x08, 0x01, 0x2c, 0x32, 0x01, b'x'][..])
        );
        assert!(err(&[0x2b]).contains("group 5 has no end"));
        assert!(err(&[0x2c]).contains("unexpected wire type 4"));
        // Field number 0.
        assert!(err(&[0x02, 0x00]).contains("invalid field number 0"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        // list_value { values: [list_value { ... }] } nested 10,000 deep.
        let mut v: Vec<u8> = Vec::new();
        for _ in 0..10_000 {
            let mut list = vec![0x0a];
            put_len(&mut list, v.len());
            list.extend_from_slice(&v);
            let mut value = vec![0x32];
            put_len(&mut value, list.len());
            value.extend_from_slice(&list);
            v = value;
        }
        let mut entry = vec![0x0a, 0x01, b'f', 0x12];
        put_len(&mut entry, v.len());
        entry.extend_from_slice(&v);
        let mut row = vec![0x0a];
        put_len(&mut row, entry.len());
        row.extend_from_slice(&entry);
        let mut bytes = vec![0x3a];
        put_len(&mut bytes, row.len());
        bytes.extend_from_slice(&row);
        assert!(err(&bytes).contains("nesting deeper than 100 levels"));
    }

    fn put_len(out: &mut Vec<u8>, mut n: usize) {
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }
}

//! The protobuf wire format, both ways: the writer the row encoder appends with, and the
//! bounds-checked reader the row decoder walks serialized messages with.
//!
//! Reading never panics on bad input: every read checks the bounds and fails with a
//! [`WireError`].

use prost_types::field_descriptor_proto::Type;

/// Wire type of a varint (`int32`, `int64`, `bool`, `enum`, `sint*`, `uint*`).
pub const VARINT: u32 = 0;
/// Wire type of a 64-bit fixed value (`double`, `fixed64`, `sfixed64`).
pub const FIXED64: u32 = 1;
/// Wire type of a length-delimited value (`string`, `bytes`, messages, packed runs).
pub const LEN: u32 = 2;
/// Wire type of the start of a group (deprecated proto2 groups; skipped, never read).
pub const START_GROUP: u32 = 3;
/// Wire type of the end of a group.
pub const END_GROUP: u32 = 4;
/// Wire type of a 32-bit fixed value (`float`, `fixed32`, `sfixed32`).
pub const FIXED32: u32 = 5;

/// Nesting depth of groups (and, for callers that recurse into messages, of messages) beyond
/// which input is rejected, as prost's recursion limit rejects it.
pub const MAX_DEPTH: u32 = 100;

/// A field key (number << 3 | wire type) as its varint bytes, computed once per field.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    bytes: [u8; 5],
    len: u8,
}

impl Key {
    /// The key of field `number` (at most 29 bits, as protobuf allows) with `wire_type`.
    pub fn new(number: u32, wire_type: u32) -> Self {
        // A field number has at most 29 bits: the key takes at most 5 bytes.
        let mut all = [0u8; 10];
        let len = write_varint(&mut all, ((number as u64) << 3) | wire_type as u64);
        let mut bytes = [0u8; 5];
        bytes.copy_from_slice(&all[..5]);
        Key {
            bytes,
            len: len as u8,
        }
    }

    /// Appends the key.
    #[inline]
    pub fn put(&self, out: &mut Vec<u8>) {
        if self.len == 1 {
            out.push(self.bytes[0]);
        } else {
            out.extend_from_slice(&self.bytes[..self.len as usize]);
        }
    }
}

/// Writes `v` as a varint at the start of `buf`; returns its length.
#[inline(always)]
fn write_varint(buf: &mut [u8; 10], mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    n + 1
}

/// Appends `v` as a varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    put_long_varint(out, v);
}

/// A varint of two bytes or more, written straight into the vector's spare capacity.
#[inline(always)]
fn put_long_varint(out: &mut Vec<u8>, mut v: u64) {
    out.reserve(10);
    let len = out.len();
    let spare = &mut out.spare_capacity_mut()[..10];
    let mut n = 0;
    while v >= 0x80 {
        spare[n].write((v as u8) | 0x80);
        v >>= 7;
        n += 1;
    }
    spare[n].write(v as u8);
    // SAFETY: the `n + 1` bytes after `len` were just written, and `reserve(10)` made room
    // for them (a u64 varint has at most 10 bytes).
    unsafe { out.set_len(len + n + 1) };
}

/// The number of bytes `v` takes as a varint (1 to 10).
#[inline]
pub fn varint_len(v: u64) -> usize {
    // Each byte carries 7 bits; zero still takes one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// The zigzag encoding of `sint32` / `sint64` values: small magnitudes, small varints.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The value of a zigzag-encoded varint.
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Appends length-prefixed bytes.
#[inline]
pub fn put_len_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Starts a length-delimited run whose length is not known yet: a one-byte placeholder.
/// Returns the position to pass to [`end_len`].
#[inline]
pub fn begin_len(out: &mut Vec<u8>) -> usize {
    out.push(0);
    out.len()
}

/// Ends a run begun at `start` (what [`begin_len`] returned on this `out`): writes its length into the placeholder, shifting the content
/// right when the length needs more than one byte.
#[inline]
pub fn end_len(out: &mut Vec<u8>, start: usize) {
    let len = out.len() - start;
    if len < 0x80 {
        out[start - 1] = len as u8;
        return;
    }
    let mut bytes = [0u8; 10];
    let n = write_varint(&mut bytes, len as u64);
    let extra = n - 1;
    out.resize(out.len() + extra, 0);
    out.copy_within(start..start + len, start + extra);
    out[start - 1..start - 1 + n].copy_from_slice(&bytes[..n]);
}

/// Why serialized bytes are not a well-formed message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireError {
    /// The input ends inside a varint.
    TruncatedVarint,
    /// A varint runs past ten bytes.
    MalformedVarint,
    /// A fixed-width or length-delimited value runs past the end of the input.
    Truncated,
    /// A wire type rows never use: groups (3, 4) or one protobuf does not define.
    UnsupportedWireType(u32),
    /// A field number of 0 or above 2^29 - 1.
    InvalidFieldNumber(u64),
    /// A group whose end-group key never comes.
    UnterminatedGroup(u64),
    /// A group ended by the end-group key of another field.
    MismatchedGroup {
        /// The group's field number.
        open: u64,
        /// The field number of the end-group key that ended it.
        close: u64,
    },
    /// Groups (or messages) nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::TruncatedVarint => f.write_str("truncated varint"),
            WireError::MalformedVarint => f.write_str("malformed varint"),
            WireError::Truncated => f.write_str("truncated field"),
            WireError::UnsupportedWireType(w) => write!(f, "unexpected wire type {w}"),
            WireError::InvalidFieldNumber(n) => write!(f, "invalid field number {n}"),
            WireError::UnterminatedGroup(n) => write!(f, "group {n} has no end"),
            WireError::MismatchedGroup { open, close } => {
                write!(f, "group {open} ended by {close}")
            }
            WireError::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
        }
    }
}

impl std::error::Error for WireError {}

impl From<WireError> for String {
    fn from(e: WireError) -> String {
        e.to_string()
    }
}

/// A cursor over one serialized message; reads borrow from it with no allocation.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Whether every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The offset of the next byte to read.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Reads a varint (at most ten bytes).
    #[inline]
    pub fn varint(&mut self) -> Result<u64, WireError> {
        // One- and two-byte varints (every key of a field numbered below 2048, most lengths)
        // inline, the rest out of line.
        match self.buf.get(self.pos..self.pos + 2) {
            Some(&[b, _]) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            Some(&[b, c]) if c < 0x80 => {
                self.pos += 2;
                Ok(u64::from(b & 0x7f) | (u64::from(c) << 7))
            }
            _ => self.long_varint(),
        }
    }

    #[cold]
    #[inline(never)]
    fn long_varint(&mut self) -> Result<u64, WireError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.buf.get(self.pos).ok_or(WireError::TruncatedVarint)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(WireError::MalformedVarint)
    }

    /// Reads a field key: (field number, wire type).
    #[inline]
    pub fn key(&mut self) -> Result<(u64, u32), WireError> {
        let key = self.varint()?;
        Ok((key >> 3, (key & 7) as u32))
    }

    /// Reads a field key and checks its field number is one protobuf allows (1 ..= 2^29 - 1).
    #[inline]
    pub fn field(&mut self) -> Result<(u32, u32), WireError> {
        let (number, wire) = self.key()?;
        match u32::try_from(number) {
            Ok(n) if n > 0 && n < 1 << 29 => Ok((n, wire)),
            _ => Err(WireError::InvalidFieldNumber(number)),
        }
    }

    /// Reads a zigzag varint (`sint32`, `sint64`).
    #[inline]
    pub fn zigzag(&mut self) -> Result<i64, WireError> {
        self.varint().map(unzigzag)
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or(WireError::Truncated)?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// Reads a length-delimited value (its varint length, then that many bytes).
    #[inline]
    pub fn len_delimited(&mut self) -> Result<&'a [u8], WireError> {
        let n = usize::try_from(self.varint()?).map_err(|_| WireError::Truncated)?;
        self.take(n)
    }

    /// Reads `N` little-endian bytes (fixed32 with 4, fixed64 with 8).
    #[inline]
    pub fn fixed<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Reads a fixed32 value.
    #[inline]
    pub fn fixed32(&mut self) -> Result<u32, WireError> {
        self.fixed().map(u32::from_le_bytes)
    }

    /// Reads a fixed64 value.
    #[inline]
    pub fn fixed64(&mut self) -> Result<u64, WireError> {
        self.fixed().map(u64::from_le_bytes)
    }

    /// Skips the value of a field of wire type `wire` (one the reader does not want).
    pub fn skip(&mut self, wire: u32) -> Result<(), WireError> {
        match wire {
            VARINT => {
                self.varint()?;
            }
            FIXED64 => {
                self.take(8)?;
            }
            LEN => {
                self.len_delimited()?;
            }
            FIXED32 => {
                self.take(4)?;
            }
            _ => return Err(WireError::UnsupportedWireType(wire)),
        }
        Ok(())
    }

    /// Skips the value of field `number` of wire type `wire`, groups included (deprecated,
    /// but valid protobuf: the fields up to the group's end-group key), as a reader of
    /// messages it does not own the schema of must.
    pub fn skip_field(&mut self, number: u32, wire: u32) -> Result<(), WireError> {
        self.skip_field_at(number, wire, 0)
    }

    fn skip_field_at(&mut self, number: u32, wire: u32, depth: u32) -> Result<(), WireError> {
        if wire != START_GROUP {
            return self.skip(wire);
        }
        if depth >= MAX_DEPTH {
            return Err(WireError::TooDeep);
        }
        loop {
            if self.at_end() {
                return Err(WireError::UnterminatedGroup(number.into()));
            }
            match self.field()? {
                (n, END_GROUP) if n == number => return Ok(()),
                (n, END_GROUP) => {
                    return Err(WireError::MismatchedGroup {
                        open: number.into(),
                        close: n.into(),
                    });
                }
                (n, w) => self.skip_field_at(n, w, depth + 1)?,
            }
        }
    }

    /// Reads the length-delimited value of a field whose wire type must be [`LEN`].
    #[inline]
    pub fn expect_len(&mut self, wire: u32) -> Result<&'a [u8], WireError> {
        if wire == LEN {
            self.len_delimited()
        } else {
            Err(WireError::UnsupportedWireType(wire))
        }
    }
}

/// One scalar as it came off the wire, given meaning by its declared protobuf type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Raw<'a> {
    /// A signed integer type, `enum`, `uint32` or `fixed32`.
    Int(i64),
    /// `uint64` or `fixed64`.
    UInt(u64),
    /// `double` or `float`.
    Float(f64),
    /// `bool`.
    Bool(bool),
    /// A `string`, `bytes` or message field.
    Bytes(&'a [u8]),
}

/// The wire type a field of protobuf type `t` is written with (a group's is `LEN` here:
/// callers refuse groups).
pub fn wire_type(t: Type) -> u32 {
    match t {
        Type::Double | Type::Fixed64 | Type::Sfixed64 => FIXED64,
        Type::Float | Type::Fixed32 | Type::Sfixed32 => FIXED32,
        Type::String | Type::Bytes | Type::Message | Type::Group => LEN,
        _ => VARINT,
    }
}

/// Whether repeated fields of type `t` may come packed.
pub fn is_packable(t: Type) -> bool {
    !matches!(t, Type::String | Type::Bytes | Type::Message | Type::Group)
}

/// Reads one scalar of protobuf type `t` (its wire type already checked).
#[inline]
pub fn scalar<'a>(r: &mut Reader<'a>, t: Type) -> Result<Raw<'a>, WireError> {
    Ok(match t {
        Type::Double => Raw::Float(f64::from_bits(r.fixed64()?)),
        Type::Float => Raw::Float(f64::from(f32::from_bits(r.fixed32()?))),
        Type::Fixed64 => Raw::UInt(r.fixed64()?),
        Type::Sfixed64 => Raw::Int(r.fixed64()? as i64),
        Type::Fixed32 => Raw::Int(i64::from(r.fixed32()?)),
        Type::Sfixed32 => Raw::Int(i64::from(r.fixed32()? as i32)),
        Type::Int64 | Type::Enum => Raw::Int(r.varint()? as i64),
        Type::Int32 => Raw::Int(i64::from(r.varint()? as i32)),
        Type::Uint64 => Raw::UInt(r.varint()?),
        Type::Uint32 => Raw::Int(i64::from(r.varint()? as u32)),
        Type::Sint32 | Type::Sint64 => Raw::Int(r.zigzag()?),
        Type::Bool => Raw::Bool(r.varint()? != 0),
        Type::String | Type::Bytes | Type::Message | Type::Group => Raw::Bytes(r.len_delimited()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_the_protobuf_encoding() {
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        out.clear();
        put_varint(&mut out, u64::MAX);
        assert_eq!(out.len(), 10);
        assert_eq!(write_varint(&mut [0; 10], 0), 1);
        assert_eq!(write_varint(&mut [0; 10], 127), 1);
        assert_eq!(write_varint(&mut [0; 10], 128), 2);
        assert_eq!(write_varint(&mut [0; 10], u64::MAX), 10);
        let mut k = Vec::new();
        Key::new(16, LEN).put(&mut k);
        assert_eq!(k, [0x82, 0x01]);
    }

    #[test]
    fn every_varint_length_matches_the_byte_loop() {
        // Each power of two, one below it and one above, and a mixed pattern of each width,
        // appended after other bytes so the spare-capacity writes start mid-vector.
        let mut values = vec![0u64, 1, 127, 128, u64::MAX];
        for bit in 0..64 {
            let p = 1u64 << bit;
            values.extend([p - 1, p, p.wrapping_add(1), p | (p >> 1) | 0x55]);
        }
        for v in values {
            let mut want = vec![0xee];
            let mut buf = [0u8; 10];
            let n = write_varint(&mut buf, v);
            want.extend_from_slice(&buf[..n]);
            let mut got = vec![0xee];
            put_varint(&mut got, v);
            assert_eq!(got, want, "varint of {v:#x}");
        }
    }

    #[test]
    fn a_long_run_is_shifted_to_fit_its_length() {
        for len in [0usize, 1, 127, 128, 300, 20_000] {
            let mut out = vec![9u8];
            let start = begin_len(&mut out);
            out.extend((0..len).map(|i| i as u8));
            end_len(&mut out, start);
            let mut want = vec![9u8];
            put_varint(&mut want, len as u64);
            want.extend((0..len).map(|i| i as u8));
            assert_eq!(out, want, "run of {len} bytes");
        }
    }

    #[test]
    fn the_reader_reads_what_the_writer_wrote() {
        let mut out = Vec::new();
        for v in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            put_varint(&mut out, v);
            assert_eq!(varint_len(v), {
                let mut one = Vec::new();
                put_varint(&mut one, v);
                one.len()
            });
        }
        Key::new(16, LEN).put(&mut out);
        put_len_bytes(&mut out, b"hello");
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            put_varint(&mut out, zigzag(v));
        }
        out.extend_from_slice(&7u32.to_le_bytes());
        out.extend_from_slice(&2.5f64.to_le_bytes());
        let mut r = Reader::new(&out);
        for v in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            assert_eq!(r.varint(), Ok(v));
        }
        assert_eq!(r.key(), Ok((16, LEN)));
        assert_eq!(r.len_delimited(), Ok(&b"hello"[..]));
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(r.zigzag(), Ok(v));
        }
        assert_eq!(r.fixed32(), Ok(7));
        assert_eq!(scalar(&mut r, Type::Double), Ok(Raw::Float(2.5)));
        assert!(r.at_end());
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn bad_input_is_a_typed_error_not_a_panic() {
        assert_eq!(Reader::new(&[]).varint(), Err(WireError::TruncatedVarint));
        assert_eq!(
            Reader::new(&[0x80]).varint(),
            Err(WireError::TruncatedVarint)
        );
        assert_eq!(
            Reader::new(&[0xff; 11]).varint(),
            Err(WireError::MalformedVarint)
        );
        assert_eq!(
            Reader::new(&[5, 1]).len_delimited(),
            Err(WireError::Truncated)
        );
        // A length near u64::MAX must not overflow the bounds check.
        let mut huge = Vec::new();
        put_varint(&mut huge, u64::MAX);
        assert_eq!(
            Reader::new(&huge).len_delimited(),
            Err(WireError::Truncated)
        );
        assert_eq!(Reader::new(&[1, 2, 3]).fixed32(), Err(WireError::Truncated));
        assert_eq!(Reader::new(&[0; 7]).fixed64(), Err(WireError::Truncated));
        assert_eq!(
            Reader::new(&[]).skip(3),
            Err(WireError::UnsupportedWireType(3))
        );
        assert_eq!(
            Reader::new(&[0; 3]).skip(FIXED32),
            Err(WireError::Truncated)
        );
        assert_eq!(
            scalar(&mut Reader::new(&[0x80]), Type::Sint64),
            Err(WireError::TruncatedVarint)
        );
        assert_eq!(WireError::Truncated.to_string(), "truncated field");
        // Every prefix of a valid message fails cleanly or reads a shorter value.
        let mut msg = Vec::new();
        Key::new(3, LEN).put(&mut msg);
        put_len_bytes(&mut msg, &[9; 200]);
        for end in 0..msg.len() {
            let mut r = Reader::new(&msg[..end]);
            let read = r.key().and_then(|_| r.len_delimited());
            assert!(read.is_err(), "prefix of {end} bytes");
        }
    }
}

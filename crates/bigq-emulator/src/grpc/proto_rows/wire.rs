//! The protobuf wire format, as far as rows need it: varints, fixed-width scalars and
//! length-delimited fields, read from one serialized message with no allocation.

use gcloud_sdk::prost_types::field_descriptor_proto::Type;

/// A cursor over one serialized message.
pub(super) struct Reader<'a> {
    pub(super) buf: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline]
    pub(super) fn varint(&mut self) -> Result<u64, String> {
        // The common one-byte case first.
        if let Some(&b) = self.buf.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .buf
                .get(self.pos)
                .ok_or_else(|| "truncated varint".to_string())?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("malformed varint".to_string())
    }

    #[inline]
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| "truncated field".to_string())?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    #[inline]
    pub(super) fn fixed<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Skips a field of wire type `wire` the descriptor does not declare.
    pub(super) fn skip(&mut self, wire: u64) -> Result<(), String> {
        match wire {
            0 => {
                self.varint()?;
            }
            1 => {
                self.take(8)?;
            }
            2 => {
                let n = self.varint()? as usize;
                self.take(n)?;
            }
            5 => {
                self.take(4)?;
            }
            _ => return Err(format!("unsupported wire type {wire}")),
        }
        Ok(())
    }
}

/// One scalar as it came off the wire, given meaning by its declared protobuf type but not
/// yet by the column's BigQuery type.
#[derive(Clone, Copy, Debug)]
pub(super) enum Raw<'a> {
    Int(i64),
    UInt(u64),
    Float(f64),
    Bool(bool),
    /// A `string` or `bytes` field.
    Bytes(&'a [u8]),
}

/// The wire type a field of protobuf type `t` is written with (groups are refused).
pub(super) fn wire_type(t: Type) -> u64 {
    match t {
        Type::Double | Type::Fixed64 | Type::Sfixed64 => 1,
        Type::Float | Type::Fixed32 | Type::Sfixed32 => 5,
        Type::String | Type::Bytes | Type::Message | Type::Group => 2,
        _ => 0,
    }
}

/// Whether repeated fields of type `t` may come packed.
pub(super) fn is_packable(t: Type) -> bool {
    !matches!(t, Type::String | Type::Bytes | Type::Message | Type::Group)
}

/// Reads one scalar of protobuf type `t` (its wire type already checked).
#[inline]
pub(super) fn scalar<'a>(r: &mut Reader<'a>, t: Type) -> Result<Raw<'a>, String> {
    Ok(match t {
        Type::Double => Raw::Float(f64::from_le_bytes(r.fixed()?)),
        Type::Float => Raw::Float(f64::from(f32::from_le_bytes(r.fixed()?))),
        Type::Fixed64 => Raw::UInt(u64::from_le_bytes(r.fixed()?)),
        Type::Sfixed64 => Raw::Int(i64::from_le_bytes(r.fixed()?)),
        Type::Fixed32 => Raw::Int(i64::from(u32::from_le_bytes(r.fixed()?))),
        Type::Sfixed32 => Raw::Int(i64::from(i32::from_le_bytes(r.fixed()?))),
        Type::Int64 | Type::Enum => Raw::Int(r.varint()? as i64),
        Type::Int32 => Raw::Int(i64::from(r.varint()? as i32)),
        Type::Uint64 => Raw::UInt(r.varint()?),
        Type::Uint32 => Raw::Int(i64::from(r.varint()? as u32)),
        Type::Sint32 | Type::Sint64 => {
            let v = r.varint()?;
            Raw::Int((v >> 1) as i64 ^ -((v & 1) as i64))
        }
        Type::Bool => Raw::Bool(r.varint()? != 0),
        Type::String | Type::Bytes | Type::Message | Type::Group => {
            let n = r.varint()? as usize;
            Raw::Bytes(r.take(n)?)
        }
    })
}

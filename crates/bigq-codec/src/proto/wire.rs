//! Protobuf wire-format primitives: varints, field keys, length-delimited runs.

/// Wire type of a varint (`int32`, `int64`, `bool`).
pub(crate) const VARINT: u32 = 0;
/// Wire type of a 64-bit fixed value (`double`).
pub(crate) const FIXED64: u32 = 1;
/// Wire type of a length-delimited value (`string`, `bytes`, messages, packed runs).
pub(crate) const LEN: u32 = 2;

/// A field key (number << 3 | wire type) as its varint bytes, computed once per field.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key {
    bytes: [u8; 5],
    len: u8,
}

impl Key {
    pub(crate) fn new(number: u32, wire_type: u32) -> Self {
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

    #[inline]
    pub(crate) fn put(&self, out: &mut Vec<u8>) {
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
pub(crate) fn put_varint(out: &mut Vec<u8>, v: u64) {
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

/// Appends length-prefixed bytes.
#[inline]
pub(crate) fn put_len_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Starts a length-delimited run whose length is not known yet: a one-byte placeholder.
/// Returns the position to pass to [`end_len`].
#[inline]
pub(crate) fn begin_len(out: &mut Vec<u8>) -> usize {
    out.push(0);
    out.len()
}

/// Ends a run begun at `start`: writes its length into the placeholder, shifting the content
/// right when the length needs more than one byte.
#[inline]
pub(crate) fn end_len(out: &mut Vec<u8>, start: usize) {
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
}

//! Encodings and code points: `BYTE_LENGTH`/`OCTET_LENGTH`, `TO_BASE64`/`FROM_BASE64`,
//! `TO_BASE32`/`FROM_BASE32`, `TO_HEX`/`FROM_HEX`, `TO_CODE_POINTS`,
//! `CODE_POINTS_TO_STRING`/`CODE_POINTS_TO_BYTES`, `SAFE_CONVERT_BYTES_TO_STRING`,
//! `ASCII`, `UNICODE` and `CHR`.

use base64::Engine;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result as DfResult, ScalarValue};

use super::super::row::{
    Call, bytes, bytes_value, elements, fail, int, int_value, list, string_value, text,
};

pub(super) fn byte_length(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let n = text(&a[0])
        .map(str::len)
        .or_else(|| bytes(&a[0]).map(<[u8]>::len));
    Ok(int_value(n.unwrap_or_default() as i64))
}

pub(super) fn to_base64(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let b = bytes(&a[0]).unwrap_or_default();
    Ok(string_value(
        base64::engine::general_purpose::STANDARD.encode(b),
    ))
}

pub(super) fn from_base64(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    let cleaned: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(cleaned.as_bytes())
        .map(bytes_value)
        .map_err(|e| {
            fail(
                "FROM_BASE64",
                format!("Failed to decode invalid base64 string {s:?}: {e}"),
            )
        })
}

pub(super) fn to_base32(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let b = bytes(&a[0]).unwrap_or_default();
    Ok(string_value(data_encoding::BASE32.encode(b)))
}

pub(super) fn from_base32(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    let upper = s.trim().to_ascii_uppercase();
    let decoded = data_encoding::BASE32
        .decode(upper.as_bytes())
        .or_else(|_| data_encoding::BASE32_NOPAD.decode(upper.trim_end_matches('=').as_bytes()));
    decoded
        .map(bytes_value)
        .map_err(|e| fail("FROM_BASE32", format!("invalid base32 {s:?}: {e}")))
}

pub(super) fn to_hex(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let b = bytes(&a[0]).unwrap_or_default();
    Ok(string_value(
        b.iter().map(|x| format!("{x:02x}")).collect::<String>(),
    ))
}

pub(super) fn from_hex(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    // An odd number of digits reads as if led by a zero.
    let padded = if s.len() % 2 == 1 {
        format!("0{s}")
    } else {
        s.to_string()
    };
    let digits = padded.as_bytes();
    let mut out = Vec::with_capacity(digits.len() / 2);
    for pair in digits.chunks(2) {
        let hex = std::str::from_utf8(pair).ok();
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(b) if pair.iter().all(u8::is_ascii_hexdigit) => out.push(b),
            _ => {
                return Err(fail(
                    "FROM_HEX",
                    format!("Failed to decode invalid hexadecimal string {s:?}"),
                ));
            }
        }
    }
    Ok(bytes_value(out))
}

pub(super) fn to_code_points(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let items: Vec<ScalarValue> = match text(&a[0]) {
        Some(s) => s.chars().map(|c| int_value(c as i64)).collect(),
        None => bytes(&a[0])
            .unwrap_or_default()
            .iter()
            .map(|b| int_value(i64::from(*b)))
            .collect(),
    };
    Ok(list(items, &DataType::Int64))
}

pub(super) fn code_points_to_string(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let mut out = String::new();
    for v in elements(&a[0])?.unwrap_or_default() {
        let Some(i) = int(&v) else {
            return Ok(ScalarValue::Utf8(None));
        };
        let c = u32::try_from(i)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| fail("CODE_POINTS_TO_STRING", format!("Invalid codepoint {i}")))?;
        out.push(c);
    }
    Ok(string_value(out))
}

pub(super) fn code_points_to_bytes(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let mut out = Vec::new();
    for v in elements(&a[0])?.unwrap_or_default() {
        let Some(i) = int(&v) else {
            return Ok(ScalarValue::Binary(None));
        };
        let b = u8::try_from(i)
            .map_err(|_| fail("CODE_POINTS_TO_BYTES", format!("invalid byte value {i}")))?;
        out.push(b);
    }
    Ok(bytes_value(out))
}

pub(super) fn safe_convert_bytes_to_string(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let b = bytes(&a[0]).unwrap_or_default();
    Ok(string_value(String::from_utf8_lossy(b).into_owned()))
}

pub(super) fn ascii(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let n = match text(&a[0]) {
        Some(s) => s.chars().next().map_or(0, |c| c as i64),
        None => bytes(&a[0])
            .unwrap_or_default()
            .first()
            .map_or(0, |b| i64::from(*b)),
    };
    Ok(int_value(n))
}

pub(super) fn unicode(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let s = text(&a[0]).unwrap_or_default();
    Ok(int_value(s.chars().next().map_or(0, |c| c as i64)))
}

pub(super) fn chr(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let i = int(&a[0]).unwrap_or_default();
    if i == 0 {
        return Ok(string_value(""));
    }
    let c = u32::try_from(i)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(|| fail("CHR", format!("Invalid codepoint {i}")))?;
    Ok(string_value(c.to_string()))
}

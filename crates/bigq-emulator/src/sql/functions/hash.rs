//! Hash functions: `FARM_FINGERPRINT` (FarmHash Fingerprint64 as a signed INT64), `MD5`,
//! `SHA1`, `SHA256` and `SHA512` (the digest as BYTES), each of STRING (its UTF-8 bytes) or
//! BYTES.

use datafusion::common::{Result as DfResult, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

use super::registry::{Family, Function};
use super::row::{Call, bytes, bytes_value, int_value, text, udf};

/// The bytes a hash reads: a STRING's UTF-8, or the BYTES.
fn input(v: &ScalarValue) -> &[u8] {
    text(v)
        .map(str::as_bytes)
        .or_else(|| bytes(v))
        .unwrap_or_default()
}

const FARM_FINGERPRINT: &[&str] = &[
    "FARM_FINGERPRINT(STRING) -> INT64",
    "FARM_FINGERPRINT(BYTES) -> INT64",
];
const MD5: &[&str] = &["MD5(STRING) -> BYTES", "MD5(BYTES) -> BYTES"];
const SHA1: &[&str] = &["SHA1(STRING) -> BYTES", "SHA1(BYTES) -> BYTES"];
const SHA256: &[&str] = &["SHA256(STRING) -> BYTES", "SHA256(BYTES) -> BYTES"];
const SHA512: &[&str] = &["SHA512(STRING) -> BYTES", "SHA512(BYTES) -> BYTES"];

fn farm_fingerprint() -> ScalarUDF {
    udf(FARM_FINGERPRINT, |_: &Call, a| {
        // BigQuery reinterprets the unsigned fingerprint as INT64.
        Ok(int_value(farmhash::fingerprint64(input(&a[0])) as i64))
    })
}

fn md5() -> ScalarUDF {
    udf(MD5, |_: &Call, a| {
        Ok(bytes_value(Md5::digest(input(&a[0])).to_vec()))
    })
}

fn sha1() -> ScalarUDF {
    udf(SHA1, |_: &Call, a| {
        Ok(bytes_value(Sha1::digest(input(&a[0])).to_vec()))
    })
}

fn sha256() -> ScalarUDF {
    udf(SHA256, |_: &Call, a| {
        Ok(bytes_value(Sha256::digest(input(&a[0])).to_vec()))
    })
}

fn sha512() -> ScalarUDF {
    udf(SHA512, |_: &Call, a| -> DfResult<ScalarValue> {
        Ok(bytes_value(Sha512::digest(input(&a[0])).to_vec()))
    })
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Hash, FARM_FINGERPRINT, farm_fingerprint),
    Function::udf(Family::Hash, MD5, md5),
    Function::udf(Family::Hash, SHA1, sha1),
    Function::udf(Family::Hash, SHA256, sha256),
    Function::udf(Family::Hash, SHA512, sha512),
];

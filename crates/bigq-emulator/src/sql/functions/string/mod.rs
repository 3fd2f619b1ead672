//! String functions: those DataFusion spells otherwise (`FROM_HEX`, `REGEXP_CONTAINS`), and
//! UDFs for the ones it lacks or gives other semantics, one file per theme.

mod case;
mod cast;
mod chars;
mod codec;
mod format;
mod regexp;
mod search;
mod text;

use datafusion::sql::sqlparser::ast::Expr;

pub(crate) use cast::{cast_string_udf, casts_to_string};

use super::registry::{Family, Function};
use super::row::{udf, udf_variadic};
use crate::error::{BqError, BqResult};
use crate::sql::ast::call;

const ASCII: &[&str] = &["ASCII(STRING) -> INT64", "ASCII(BYTES) -> INT64"];
const BYTE_LENGTH: &[&str] = &[
    "BYTE_LENGTH(STRING) -> INT64",
    "BYTE_LENGTH(BYTES) -> INT64",
];
const OCTET_LENGTH: &[&str] = &[
    "OCTET_LENGTH(STRING) -> INT64",
    "OCTET_LENGTH(BYTES) -> INT64",
];
const CHR: &[&str] = &["CHR(INT64) -> STRING"];
const CODE_POINTS_TO_BYTES: &[&str] = &["CODE_POINTS_TO_BYTES(ARRAY<INT64>) -> BYTES"];
const CODE_POINTS_TO_STRING: &[&str] = &["CODE_POINTS_TO_STRING(ARRAY<INT64>) -> STRING"];
const EDIT_DISTANCE: &[&str] = &[
    "EDIT_DISTANCE(STRING, STRING[, INT64]) -> INT64",
    "EDIT_DISTANCE(BYTES, BYTES[, INT64]) -> INT64",
];
const FROM_BASE32: &[&str] = &["FROM_BASE32(STRING) -> BYTES"];
const FROM_BASE64: &[&str] = &["FROM_BASE64(STRING) -> BYTES"];
const FROM_HEX: &[&str] = &["FROM_HEX(STRING) -> BYTES"];
const INSTR: &[&str] = &[
    "INSTR(STRING, STRING[, INT64]) -> INT64",
    "INSTR(STRING, STRING, INT64, INT64) -> INT64",
    "INSTR(BYTES, BYTES[, INT64]) -> INT64",
    "INSTR(BYTES, BYTES, INT64, INT64) -> INT64",
];
const NORMALIZE: &[&str] = &["bigq_normalize(STRING, STRING) -> STRING"];
const NORMALIZE_AND_CASEFOLD: &[&str] = &["bigq_normalize_and_casefold(STRING, STRING) -> STRING"];
const SAFE_CONVERT_BYTES_TO_STRING: &[&str] = &["SAFE_CONVERT_BYTES_TO_STRING(BYTES) -> STRING"];
const SOUNDEX: &[&str] = &["SOUNDEX(STRING) -> STRING"];
const SPLIT: &[&str] = &[
    "SPLIT(STRING[, STRING]) -> ARRAY<STRING>",
    "SPLIT(BYTES, BYTES) -> ARRAY<BYTES>",
];
const TO_BASE32: &[&str] = &["TO_BASE32(BYTES) -> STRING"];
const TO_BASE64: &[&str] = &["TO_BASE64(BYTES) -> STRING"];
const TO_CODE_POINTS: &[&str] = &[
    "TO_CODE_POINTS(STRING) -> ARRAY<INT64>",
    "TO_CODE_POINTS(BYTES) -> ARRAY<INT64>",
];
const TO_HEX: &[&str] = &["TO_HEX(BYTES) -> STRING"];
const UNICODE: &[&str] = &["UNICODE(STRING) -> INT64"];
const REGEXP_CONTAINS: &[&str] = &[
    "REGEXP_CONTAINS(STRING, STRING) -> BOOL",
    "REGEXP_CONTAINS(BYTES, BYTES) -> BOOL",
];
const REGEXP_EXTRACT: &[&str] = &[
    "REGEXP_EXTRACT(STRING, STRING[, INT64]) -> STRING",
    "REGEXP_EXTRACT(STRING, STRING, INT64, INT64) -> STRING",
    "REGEXP_EXTRACT(BYTES, BYTES[, INT64]) -> BYTES",
    "REGEXP_EXTRACT(BYTES, BYTES, INT64, INT64) -> BYTES",
];
const REGEXP_SUBSTR: &[&str] = &[
    "REGEXP_SUBSTR(STRING, STRING[, INT64]) -> STRING",
    "REGEXP_SUBSTR(STRING, STRING, INT64, INT64) -> STRING",
    "REGEXP_SUBSTR(BYTES, BYTES[, INT64]) -> BYTES",
    "REGEXP_SUBSTR(BYTES, BYTES, INT64, INT64) -> BYTES",
];
const REGEXP_EXTRACT_ALL: &[&str] = &[
    "REGEXP_EXTRACT_ALL(STRING, STRING) -> ARRAY<STRING>",
    "REGEXP_EXTRACT_ALL(BYTES, BYTES) -> ARRAY<BYTES>",
];
const REGEXP_INSTR: &[&str] = &[
    "REGEXP_INSTR(STRING, STRING[, INT64]) -> INT64",
    "REGEXP_INSTR(STRING, STRING, INT64, INT64[, INT64]) -> INT64",
    "REGEXP_INSTR(BYTES, BYTES[, INT64]) -> INT64",
    "REGEXP_INSTR(BYTES, BYTES, INT64, INT64[, INT64]) -> INT64",
];
const REGEXP_REPLACE: &[&str] = &[
    "REGEXP_REPLACE(STRING, STRING, STRING) -> STRING",
    "REGEXP_REPLACE(BYTES, BYTES, BYTES) -> BYTES",
];
const SUBSTR: &[&str] = &[
    "SUBSTR(STRING, INT64[, INT64]) -> STRING",
    "SUBSTR(BYTES, INT64[, INT64]) -> BYTES",
];
const SUBSTRING: &[&str] = &[
    "SUBSTRING(STRING, INT64[, INT64]) -> STRING",
    "SUBSTRING(BYTES, INT64[, INT64]) -> BYTES",
];
const LEFT: &[&str] = &[
    "LEFT(STRING, INT64) -> STRING",
    "LEFT(BYTES, INT64) -> BYTES",
];
const RIGHT: &[&str] = &[
    "RIGHT(STRING, INT64) -> STRING",
    "RIGHT(BYTES, INT64) -> BYTES",
];
const LPAD: &[&str] = &[
    "LPAD(STRING, INT64[, STRING]) -> STRING",
    "LPAD(BYTES, INT64[, BYTES]) -> BYTES",
];
const RPAD: &[&str] = &[
    "RPAD(STRING, INT64[, STRING]) -> STRING",
    "RPAD(BYTES, INT64[, BYTES]) -> BYTES",
];
const REPEAT: &[&str] = &[
    "REPEAT(STRING, INT64) -> STRING",
    "REPEAT(BYTES, INT64) -> BYTES",
];
const REVERSE: &[&str] = &["REVERSE(STRING) -> STRING", "REVERSE(BYTES) -> BYTES"];
const LENGTH: &[&str] = &["LENGTH(STRING) -> INT64", "LENGTH(BYTES) -> INT64"];
const CHAR_LENGTH: &[&str] = &["CHAR_LENGTH(STRING) -> INT64"];
const CHARACTER_LENGTH: &[&str] = &["CHARACTER_LENGTH(STRING) -> INT64"];
const STRPOS: &[&str] = &[
    "STRPOS(STRING, STRING) -> INT64",
    "STRPOS(BYTES, BYTES) -> INT64",
];
const STARTS_WITH: &[&str] = &[
    "STARTS_WITH(STRING, STRING) -> BOOL",
    "STARTS_WITH(BYTES, BYTES) -> BOOL",
];
const ENDS_WITH: &[&str] = &[
    "ENDS_WITH(STRING, STRING) -> BOOL",
    "ENDS_WITH(BYTES, BYTES) -> BOOL",
];
const REPLACE: &[&str] = &[
    "REPLACE(STRING, STRING, STRING) -> STRING",
    "REPLACE(BYTES, BYTES, BYTES) -> BYTES",
];
const TRANSLATE: &[&str] = &[
    "TRANSLATE(STRING, STRING, STRING) -> STRING",
    "TRANSLATE(BYTES, BYTES, BYTES) -> BYTES",
];
const TRIM: &[&str] = &[
    "TRIM(STRING[, STRING]) -> STRING",
    "TRIM(BYTES, BYTES) -> BYTES",
];
const BTRIM: &[&str] = &[
    "BTRIM(STRING[, STRING]) -> STRING",
    "BTRIM(BYTES, BYTES) -> BYTES",
];
const LTRIM: &[&str] = &[
    "LTRIM(STRING[, STRING]) -> STRING",
    "LTRIM(BYTES, BYTES) -> BYTES",
];
const RTRIM: &[&str] = &[
    "RTRIM(STRING[, STRING]) -> STRING",
    "RTRIM(BYTES, BYTES) -> BYTES",
];
const INITCAP: &[&str] = &["INITCAP(STRING[, STRING]) -> STRING"];
/// BYTES arguments make BYTES (up to a fixed count); any others are cast to STRING.
const CONCAT: &[&str] = &[
    "CONCAT(BYTES) -> BYTES",
    "CONCAT(BYTES, BYTES) -> BYTES",
    "CONCAT(BYTES, BYTES, BYTES) -> BYTES",
    "CONCAT(BYTES, BYTES, BYTES, BYTES) -> BYTES",
    "CONCAT(BYTES, BYTES, BYTES, BYTES, BYTES) -> BYTES",
    "CONCAT(BYTES, BYTES, BYTES, BYTES, BYTES, BYTES) -> BYTES",
    "CONCAT(BYTES, BYTES, BYTES, BYTES, BYTES, BYTES, BYTES) -> BYTES",
    "CONCAT(BYTES, BYTES, BYTES, BYTES, BYTES, BYTES, BYTES, BYTES) -> BYTES",
    "CONCAT(T[, T]) -> STRING",
];
const CONTAINS_SUBSTR: &[&str] = &["CONTAINS_SUBSTR(T, STRING[, STRING]) -> BOOL"];
const COLLATE: &[&str] = &["COLLATE(STRING, STRING) -> STRING"];
const FORMAT: &[&str] = &["FORMAT(STRING[, T]) -> STRING"];

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::String, &["LOWER(STRING) -> STRING", "LOWER(BYTES) -> BYTES"], case::lower),
    Function::udf(Family::String, &["UPPER(STRING) -> STRING", "UPPER(BYTES) -> BYTES"], case::upper),
    Function::udf(Family::String, ASCII, || udf(ASCII, codec::ascii)),
    Function::udf(Family::String, BYTE_LENGTH, || udf(BYTE_LENGTH, codec::byte_length)),
    Function::udf(Family::String, OCTET_LENGTH, || udf(OCTET_LENGTH, codec::byte_length)),
    Function::udf(Family::String, CHR, || udf(CHR, codec::chr)),
    Function::udf(Family::String, CODE_POINTS_TO_BYTES, || udf(CODE_POINTS_TO_BYTES, codec::code_points_to_bytes)),
    Function::udf(Family::String, CODE_POINTS_TO_STRING, || udf(CODE_POINTS_TO_STRING, codec::code_points_to_string)),
    Function::udf(Family::String, EDIT_DISTANCE, || udf(EDIT_DISTANCE, text::edit_distance)),
    Function::udf(Family::String, FROM_BASE32, || udf(FROM_BASE32, codec::from_base32)),
    Function::udf(Family::String, FROM_BASE64, || udf(FROM_BASE64, codec::from_base64)),
    Function::udf(Family::String, FROM_HEX, || udf(FROM_HEX, codec::from_hex)),
    Function::udf(Family::String, INSTR, || udf(INSTR, text::instr)),
    Function::rewrite(Family::String, &["NORMALIZE(STRING) -> STRING"], text::normalize_call),
    Function::rewrite(Family::String, &["NORMALIZE_AND_CASEFOLD(STRING) -> STRING"], text::normalize_call),
    Function::udf(Family::String, NORMALIZE, || udf(NORMALIZE, text::normalize)),
    Function::udf(Family::String, NORMALIZE_AND_CASEFOLD, || udf(NORMALIZE_AND_CASEFOLD, text::normalize_and_casefold)),
    Function::udf(Family::String, SAFE_CONVERT_BYTES_TO_STRING, || udf(SAFE_CONVERT_BYTES_TO_STRING, codec::safe_convert_bytes_to_string)),
    Function::udf(Family::String, SOUNDEX, || udf(SOUNDEX, text::soundex)),
    Function::udf(Family::String, SPLIT, || udf(SPLIT, text::split)),
    Function::udf(Family::String, TO_BASE32, || udf(TO_BASE32, codec::to_base32)),
    Function::udf(Family::String, TO_BASE64, || udf(TO_BASE64, codec::to_base64)),
    Function::udf(Family::String, TO_CODE_POINTS, || udf(TO_CODE_POINTS, codec::to_code_points)),
    Function::udf(Family::String, TO_HEX, || udf(TO_HEX, codec::to_hex)),
    Function::udf(Family::String, UNICODE, || udf(UNICODE, codec::unicode)),
    Function::udf(Family::String, FORMAT, || udf_variadic(FORMAT, format::format, false)),
    Function::udf(Family::String, SUBSTR, || udf(SUBSTR, chars::substr)),
    Function::udf(Family::String, SUBSTRING, || udf(SUBSTRING, chars::substr)),
    Function::udf(Family::String, LEFT, || udf(LEFT, chars::left)),
    Function::udf(Family::String, RIGHT, || udf(RIGHT, chars::right)),
    Function::udf(Family::String, LPAD, || udf(LPAD, chars::lpad)),
    Function::udf(Family::String, RPAD, || udf(RPAD, chars::rpad)),
    Function::udf(Family::String, REPEAT, || udf(REPEAT, chars::repeat)),
    Function::udf(Family::String, REVERSE, || udf(REVERSE, chars::reverse)),
    Function::udf(Family::String, LENGTH, || udf(LENGTH, chars::length)),
    Function::udf(Family::String, CHAR_LENGTH, || udf(CHAR_LENGTH, chars::length)),
    Function::udf(Family::String, CHARACTER_LENGTH, || udf(CHARACTER_LENGTH, chars::length)),
    Function::udf(Family::String, STRPOS, || udf(STRPOS, chars::strpos)),
    Function::udf(Family::String, STARTS_WITH, || udf(STARTS_WITH, chars::starts_with)),
    Function::udf(Family::String, ENDS_WITH, || udf(ENDS_WITH, chars::ends_with)),
    Function::udf(Family::String, REPLACE, || udf(REPLACE, chars::replace)),
    Function::udf(Family::String, TRANSLATE, || udf(TRANSLATE, chars::translate)),
    Function::udf(Family::String, TRIM, || udf(TRIM, chars::trim_both)),
    Function::udf(Family::String, BTRIM, || udf(BTRIM, chars::trim_both)),
    Function::udf(Family::String, LTRIM, || udf(LTRIM, chars::ltrim)),
    Function::udf(Family::String, RTRIM, || udf(RTRIM, chars::rtrim)),
    Function::udf(Family::String, INITCAP, || udf(INITCAP, chars::initcap)),
    Function::udf(Family::String, CONCAT, || udf_variadic(CONCAT, chars::concat, true)),
    Function::udf(Family::String, CONTAINS_SUBSTR, || udf_variadic(CONTAINS_SUBSTR, search::contains_substr, false)),
    Function::udf(Family::String, COLLATE, || udf_variadic(COLLATE, chars::collate, false)),
    Function::udf(Family::String, REGEXP_CONTAINS, || udf(REGEXP_CONTAINS, regexp::regexp_contains)),
    Function::udf(Family::String, REGEXP_EXTRACT, || udf(REGEXP_EXTRACT, regexp::regexp_extract)),
    Function::udf(Family::String, REGEXP_SUBSTR, || udf(REGEXP_SUBSTR, regexp::regexp_substr)),
    Function::udf(Family::String, REGEXP_EXTRACT_ALL, || udf(REGEXP_EXTRACT_ALL, regexp::regexp_extract_all)),
    Function::udf(Family::String, REGEXP_INSTR, || udf(REGEXP_INSTR, regexp::regexp_instr)),
    Function::udf(Family::String, REGEXP_REPLACE, || udf(REGEXP_REPLACE, regexp::regexp_replace)),
];

/// `SUBSTR(s, pos[, len])` (or `SUBSTRING`) as the parser reads it, a node of its own, as a
/// call of the SUBSTR UDF: DataFusion plans that node as its own `substr`, which counts a
/// position below 1 otherwise than BigQuery does.
pub(super) fn substring(e: &Expr) -> BqResult<Expr> {
    let Expr::Substring {
        expr,
        substring_from: Some(from),
        substring_for,
        special: true,
        ..
    } = e
    else {
        return Err(BqError::unsupported(format!(
            "{e}: SUBSTR takes the value, a position and an optional length, separated by commas"
        )));
    };
    let mut args = vec![(**expr).clone(), (**from).clone()];
    args.extend(substring_for.iter().map(|n| (**n).clone()));
    Ok(call("SUBSTR", args))
}

//! NUMERIC and BIGNUMERIC read from text, as BigQuery reads them: `CAST(s AS NUMERIC)` (and
//! BIGNUMERIC, and the parameterized `NUMERIC(P, S)`) and the conversion functions
//! `PARSE_NUMERIC` and `PARSE_BIGNUMERIC`.
//!
//! A cast takes an optional sign, digits with an optional decimal point and an optional
//! exponent (`'12.34E27'`), with spaces around it; `PARSE_NUMERIC` takes more: commas in the
//! integer part, the sign after the number, spaces between the sign and the number
//! (`'  1,2,,3,.45 + '` is 123.45). Digits past the type's scale round half away from zero;
//! a value past its range, or text of another shape, is BigQuery's `Invalid NUMERIC value:
//! ...` (`SAFE_CAST` and `SAFE.` give NULL). Arrow's own cast takes no exponent and names
//! Arrow's types in its message.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Builder, Decimal256Builder};
use datafusion::arrow::datatypes::{DataType, i256};
use datafusion::common::{Result as DfResult, ScalarValue, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use num_bigint::{BigInt, Sign};

use super::math::{BIGNUMERIC, NUMERIC};
use super::registry::{Family, Function};

/// Whether `CAST(x AS to)` from `from` is one [`cast_decimal_udf`] computes: a string to a
/// decimal type.
pub(crate) fn casts_to_decimal(from: &DataType, to: &DataType) -> bool {
    matches!(
        from,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) && matches!(to, DataType::Decimal128(..) | DataType::Decimal256(..))
}

/// The UDF `CAST(s AS to)` of a string becomes (`safe`: `SAFE_CAST`), for a decimal `to`.
pub(crate) fn cast_decimal_udf(to: &DataType, safe: bool) -> Arc<ScalarUDF> {
    let kind = match to {
        DataType::Decimal128(p, s) => format!("decimal128_{p}_{s}"),
        DataType::Decimal256(p, s) => format!("decimal256_{p}_{s}"),
        other => format!("{other}"),
    };
    let name = if safe {
        format!("bigq_safe_cast_{kind}")
    } else {
        format!("bigq_cast_{kind}")
    };
    Arc::new(ScalarUDF::new_from_impl(ParseDecimal {
        name,
        to: to.clone(),
        lenient: false,
        safe,
        signature: Signature::any(1, Volatility::Immutable),
    }))
}

fn parse_numeric() -> ScalarUDF {
    ScalarUDF::new_from_impl(ParseDecimal {
        name: "parse_numeric".into(),
        to: NUMERIC,
        lenient: true,
        safe: false,
        signature: Signature::string(1, Volatility::Immutable),
    })
}

fn parse_bignumeric() -> ScalarUDF {
    ScalarUDF::new_from_impl(ParseDecimal {
        name: "parse_bignumeric".into(),
        to: BIGNUMERIC,
        lenient: true,
        safe: false,
        signature: Signature::string(1, Volatility::Immutable),
    })
}

pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(
        Family::Conversion,
        &["PARSE_NUMERIC(STRING) -> NUMERIC"],
        parse_numeric,
    ),
    Function::udf(
        Family::Conversion,
        &["PARSE_BIGNUMERIC(STRING) -> BIGNUMERIC"],
        parse_bignumeric,
    ),
];

/// A string read as a decimal of type `to`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct ParseDecimal {
    name: String,
    to: DataType,
    /// `PARSE_NUMERIC`'s shapes, not only a cast's.
    lenient: bool,
    safe: bool,
    signature: Signature,
}

impl ScalarUDFImpl for ParseDecimal {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(self.to.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let scalar = matches!(args.args[0], ColumnarValue::Scalar(_));
        let input = args.args[0].to_array(args.number_rows)?;
        let text = datafusion::arrow::compute::cast(&input, &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let (precision, scale, big) = match self.to {
            DataType::Decimal128(p, s) => (p, s, false),
            DataType::Decimal256(p, s) => (p, s, true),
            ref other => return exec_err!("{} to {other}", self.name),
        };
        let type_name = if big { "BIGNUMERIC" } else { "NUMERIC" };
        let mut values = Vec::with_capacity(text.len());
        for i in 0..text.len() {
            if text.is_null(i) {
                values.push(None);
                continue;
            }
            let s = text.value(i);
            let v = read(s, self.lenient)
                .and_then(|d| d.unscaled(scale))
                .and_then(|v| fits(&v, precision, scale, big).then_some(v));
            match v {
                Some(v) => values.push(Some(v)),
                None if self.safe => values.push(None),
                None => return exec_err!("Invalid {type_name} value: {s}"),
            }
        }
        let out: ArrayRef = if big {
            let mut b = Decimal256Builder::with_capacity(values.len());
            for v in values {
                b.append_option(v.map(|v| to_i256(&v)));
            }
            Arc::new(b.finish().with_precision_and_scale(precision, scale)?)
        } else {
            let mut b = Decimal128Builder::with_capacity(values.len());
            for v in values {
                b.append_option(v.map(|v| i128::try_from(&v).unwrap_or_default()));
            }
            Arc::new(b.finish().with_precision_and_scale(precision, scale)?)
        };
        Ok(if scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
        } else {
            ColumnarValue::Array(out)
        })
    }
}

/// A decimal read from text: `digits × 10^exponent`, negative or not.
#[derive(Debug, PartialEq)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl Decimal {
    /// The value at `scale` digits after the point, rounded half away from zero; `None` when
    /// it is too large to be any decimal's.
    fn unscaled(&self, scale: i8) -> Option<BigInt> {
        let digits = self.digits.trim_start_matches('0');
        if digits.is_empty() {
            return Some(BigInt::from(0));
        }
        let shift = self.exponent.checked_add(i64::from(scale))?;
        // BIGNUMERIC's range is below 10^78 in its unscaled form.
        if digits.len() as i64 + shift > 80 {
            return None;
        }
        let mut v: BigInt = digits.parse().ok()?;
        if shift >= 0 {
            v *= BigInt::from(10).pow(shift as u32);
        } else {
            let drop = (-shift) as usize;
            if drop > digits.len() {
                return Some(BigInt::from(0));
            }
            let divisor = BigInt::from(10).pow(drop as u32);
            let (q, r) = (&v / &divisor, &v % &divisor);
            v = if r * 2 >= divisor { q + 1 } else { q };
        }
        Some(if self.negative { -v } else { v })
    }
}

/// Whether `v`, unscaled at `scale`, is in the range of the decimal of `precision` digits
/// (BIGNUMERIC's own: that of a 256-bit integer, as BigQuery's BIGNUMERIC is).
fn fits(v: &BigInt, precision: u8, scale: i8, big: bool) -> bool {
    if big && precision == 76 && scale == 38 {
        let limit = BigInt::from(1) << 255;
        return *v < limit && *v >= -limit;
    }
    v.magnitude() < BigInt::from(10).pow(u32::from(precision)).magnitude()
}

fn to_i256(v: &BigInt) -> i256 {
    let (sign, bytes) = v.to_bytes_le();
    let mut le = [0u8; 32];
    for (d, s) in le.iter_mut().zip(bytes.iter()) {
        *d = *s;
    }
    let magnitude = i256::from_le_bytes(le);
    if sign == Sign::Minus {
        magnitude.wrapping_neg()
    } else {
        magnitude
    }
}

/// The decimal `text` spells, in a cast's shape (`lenient`: `PARSE_NUMERIC`'s); `None` for
/// text of another shape.
fn read(text: &str, lenient: bool) -> Option<Decimal> {
    let b = text.as_bytes();
    let mut i = 0;
    let space = |i: &mut usize| {
        while b.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
    };
    space(&mut i);
    let mut sign = None;
    if let Some(&c @ (b'+' | b'-')) = b.get(i) {
        sign = Some(c == b'-');
        i += 1;
        if lenient {
            space(&mut i);
        }
    }
    // The integer part: digits, and in PARSE_NUMERIC commas, with a digit among them.
    let start = i;
    let mut digits = String::new();
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => digits.push(c as char),
            b',' if lenient => {}
            _ => break,
        }
        i += 1;
    }
    if i > start && digits.is_empty() {
        return None;
    }
    let mut exponent: i64 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&c @ b'0'..=b'9') = b.get(i) {
            digits.push(c as char);
            exponent -= 1;
            i += 1;
        }
    }
    if digits.is_empty() {
        return None;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        let negative = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let from = i;
        let mut e: i64 = 0;
        while let Some(&c @ b'0'..=b'9') = b.get(i) {
            e = e.saturating_mul(10).saturating_add(i64::from(c - b'0'));
            i += 1;
        }
        if i == from {
            return None;
        }
        exponent = exponent.saturating_add(if negative { -e } else { e });
    }
    space(&mut i);
    if lenient
        && sign.is_none()
        && let Some(&c @ (b'+' | b'-')) = b.get(i)
    {
        sign = Some(c == b'-');
        i += 1;
        space(&mut i);
    }
    if i != b.len() {
        return None;
    }
    Some(Decimal {
        negative: sign == Some(true),
        digits,
        exponent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(text: &str, lenient: bool) -> Option<String> {
        let v = read(text, lenient)?.unscaled(9)?;
        fits(&v, 38, 9, false).then(|| v.to_string())
    }

    #[test]
    fn a_cast_reads_sign_digits_point_and_exponent() {
        assert_eq!(
            numeric("12.34E27", false).as_deref(),
            Some("12340000000000000000000000000000000000")
        );
        assert_eq!(numeric(" -1.5 ", false).as_deref(), Some("-1500000000"));
        assert_eq!(numeric(".5", false).as_deref(), Some("500000000"));
        assert_eq!(numeric("5.", false).as_deref(), Some("5000000000"));
        assert_eq!(numeric("1e-10", false).as_deref(), Some("0"));
        assert_eq!(
            numeric("1.0123456789", false).as_deref(),
            Some("1012345679")
        );
        assert_eq!(numeric("-0.0000000005", false).as_deref(), Some("-1"));
        for bad in [
            "abc", "", ".", "e1", "1e", "1,000", "- 1", "1-", "0x10", "1e40", "inf",
        ] {
            assert_eq!(numeric(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn parse_numeric_takes_commas_and_a_sign_after() {
        assert_eq!(
            numeric("- 12,34567,89.0", true).as_deref(),
            Some("-123456789000000000")
        );
        assert_eq!(
            numeric("  1,2,,3,.45 + ", true).as_deref(),
            Some("123450000000")
        );
        assert_eq!(numeric("12.34e-1-", true).as_deref(), Some("-1234000000"));
        assert_eq!(numeric(" 0,.12 -", true).as_deref(), Some("-120000000"));
        for bad in [
            ",,,.1234  ",
            "1  23.4 5  ",
            "  e1 ",
            "  - 12.3 - ",
            "12.34E100 ",
            "$12.34",
        ] {
            assert_eq!(numeric(bad, true), None, "{bad}");
        }
    }

    #[test]
    fn bignumeric_reaches_two_to_the_255() {
        let max = read(
            "578960446186580977117854925043439539266.34992332820282019728792003956564819967",
            false,
        )
        .and_then(|d| d.unscaled(38))
        .unwrap();
        assert!(fits(&max, 76, 38, true));
        assert!(!fits(&(max + 1), 76, 38, true));
        assert_eq!(to_i256(&BigInt::from(-5)), i256::from_i128(-5));
    }
}

//! `CAST(x AS INT64)` of a FLOAT64, NUMERIC or BIGNUMERIC as BigQuery computes it: rounded
//! half away from zero (Arrow's cast truncates: `CAST(2.5 AS INT64)` is 3, not 2), and an
//! error naming the value when it is not finite or out of INT64's range (`SAFE_CAST` gives
//! NULL instead); of a STRING, decimal or hexadecimal (`'0x1F'`, `'-0x1F'`) digits with an
//! optional sign, and BigQuery's "Bad int64 value" for anything else.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Builder};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Decimal256Type, Float64Type, i256};
use datafusion::common::{Result as DfResult, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// Whether a cast from `from` to INT64 is one [`cast_int64_udf`] computes.
pub(crate) fn casts_to_int64(from: &DataType) -> bool {
    matches!(
        from,
        DataType::Float64
            | DataType::Float32
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
    )
}

/// The UDF `CAST(x AS INT64)` becomes (`safe`: `SAFE_CAST`) for the types
/// [`casts_to_int64`] names.
pub(crate) fn cast_int64_udf(safe: bool) -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(CastInt64 {
        name: if safe {
            "bigq_safe_cast_int64"
        } else {
            "bigq_cast_int64"
        },
        safe,
        signature: Signature::any(1, Volatility::Immutable),
    }))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CastInt64 {
    name: &'static str,
    safe: bool,
    signature: Signature,
}

impl ScalarUDFImpl for CastInt64 {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let scalar = matches!(args.args[0], ColumnarValue::Scalar(_));
        let input = args.args[0].to_array(args.number_rows)?;
        let out = self.cast(&input)?;
        Ok(if scalar {
            ColumnarValue::Scalar(datafusion::common::ScalarValue::try_from_array(&out, 0)?)
        } else {
            ColumnarValue::Array(out)
        })
    }
}

impl CastInt64 {
    fn cast(&self, input: &ArrayRef) -> DfResult<ArrayRef> {
        let mut out = Int64Builder::with_capacity(input.len());
        // Each row's INT64, or NULL for a NULL (`None`).
        let mut put = |v: Option<Result<i64, String>>| -> DfResult<()> {
            match v {
                Some(Ok(v)) => out.append_value(v),
                None => out.append_null(),
                Some(Err(_)) if self.safe => out.append_null(),
                Some(Err(e)) => return exec_err!("{e}"),
            }
            Ok(())
        };
        match input.data_type() {
            DataType::Float64 | DataType::Float32 => {
                let floats = datafusion::arrow::compute::cast(input, &DataType::Float64)?;
                let floats = floats.as_primitive::<Float64Type>();
                for i in 0..floats.len() {
                    put(floats.is_valid(i).then(|| float_to_int64(floats.value(i))))?;
                }
            }
            DataType::Decimal128(_, s) => {
                let s = *s;
                let d = input.as_primitive::<Decimal128Type>();
                for i in 0..d.len() {
                    put(d
                        .is_valid(i)
                        .then(|| decimal_to_int64(i256::from_i128(d.value(i)), s)))?;
                }
            }
            DataType::Decimal256(_, s) => {
                let s = *s;
                let d = input.as_primitive::<Decimal256Type>();
                for i in 0..d.len() {
                    put(d.is_valid(i).then(|| decimal_to_int64(d.value(i), s)))?;
                }
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                let text = datafusion::arrow::compute::cast(input, &DataType::Utf8)?;
                let text = text.as_string::<i32>();
                for i in 0..text.len() {
                    put(text.is_valid(i).then(|| string_to_int64(text.value(i))))?;
                }
            }
            other => return exec_err!("{} of {other}", self.name),
        }
        Ok(Arc::new(out.finish()))
    }
}

/// BigQuery's INT64 of a STRING: an optional sign, then decimal digits or `0x` and
/// hexadecimal digits.
fn string_to_int64(text: &str) -> Result<i64, String> {
    let bad = || format!("Bad int64 value: {text}");
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match digits.get(..2) {
        Some("0x" | "0X") => (16, &digits[2..]),
        _ => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(bad());
    }
    let magnitude = u64::from_str_radix(digits, radix).map_err(|_| bad())?;
    if negative {
        0i64.checked_sub_unsigned(magnitude).ok_or_else(bad)
    } else {
        i64::try_from(magnitude).map_err(|_| bad())
    }
}

fn float_to_int64(x: f64) -> Result<i64, String> {
    if !x.is_finite() {
        let name = if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        };
        return Err(format!(
            "Illegal conversion of non-finite floating point number to an integer: {name}"
        ));
    }
    // f64::round is half away from zero; 2^63 is the first value past INT64's range.
    let r = x.round();
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
        return Err(format!("int64 out of range: {x:e}"));
    }
    Ok(r as i64)
}

fn decimal_to_int64(unscaled: i256, scale: i8) -> Result<i64, String> {
    let ten = i256::from_i128(10);
    let div = ten.wrapping_pow(scale.max(0) as u32);
    let (q, r) = (unscaled.wrapping_div(div), unscaled.wrapping_rem(div));
    // Half away from zero: a remainder of at least half the divisor moves one step out.
    let twice = r.wrapping_mul(i256::from_i128(2));
    let q = if twice >= div {
        q.wrapping_add(i256::ONE)
    } else if twice <= div.wrapping_neg() {
        q.wrapping_sub(i256::ONE)
    } else {
        q
    };
    q.to_i128()
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| "int64 out of range: the value does not fit in INT64".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_decimal_or_hexadecimal_with_a_sign() {
        assert_eq!(string_to_int64("123"), Ok(123));
        assert_eq!(string_to_int64("+7"), Ok(7));
        assert_eq!(string_to_int64("0x123"), Ok(291));
        assert_eq!(string_to_int64("-0x123"), Ok(-291));
        assert_eq!(string_to_int64("0XfF"), Ok(255));
        assert_eq!(string_to_int64("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(string_to_int64("-0x8000000000000000"), Ok(i64::MIN));
        for bad in [
            "",
            "-",
            "0x",
            "abc",
            "1.5",
            "1e3",
            " 1",
            "9223372036854775808",
            "--1",
        ] {
            assert_eq!(
                string_to_int64(bad),
                Err(format!("Bad int64 value: {bad}")),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn rounds_half_away_from_zero() {
        assert_eq!(float_to_int64(2.5), Ok(3));
        assert_eq!(float_to_int64(-2.5), Ok(-3));
        assert_eq!(float_to_int64(1.4999), Ok(1));
        assert!(float_to_int64(f64::NAN).unwrap_err().contains("nan"));
        assert!(float_to_int64(1e30).is_err());
        assert_eq!(float_to_int64(i64::MIN as f64), Ok(i64::MIN));
        let n = |v: i128| decimal_to_int64(i256::from_i128(v), 9);
        assert_eq!(n(2_500_000_000), Ok(3));
        assert_eq!(n(-2_500_000_000), Ok(-3));
        assert_eq!(n(2_499_999_999), Ok(2));
        assert_eq!(n(-1), Ok(0));
        assert!(decimal_to_int64(i256::from_i128(10i128.pow(37)), 9).is_err());
    }
}

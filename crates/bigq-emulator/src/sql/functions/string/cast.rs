//! `CAST(x AS STRING)` as BigQuery writes each type where Arrow's cast writes it otherwise:
//! NUMERIC and BIGNUMERIC with no trailing zeros (`1.25`, not `1.250000000`), FLOAT64 in its
//! shortest round-trip `%g` form (`1`, `1.5e+20`), DATETIME, TIME and TIMESTAMP with a
//! space before the time and the fraction cut to zero, three or six digits (TIMESTAMP in
//! UTC, with `+00`), and INTERVAL in its canonical `Y-M D H:M:S[.F]`.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::ScalarUDF;

use super::format::{decimal_text, interval_text};
use datafusion::arrow::temporal_conversions::{time64us_to_time, timestamp_us_to_datetime};

use super::super::row::{Call, udf};

/// Any of the types [`casts_to_string`] names (the rewrite passes no other).
const CAST_STRING: &[&str] = &["bigq_cast_string(T) -> STRING"];

/// Whether a cast from `from` to STRING is one [`cast_string_udf`] writes.
pub(crate) fn casts_to_string(from: &DataType) -> bool {
    matches!(
        from,
        DataType::Decimal128(..)
            | DataType::Decimal256(..)
            | DataType::Float64
            | DataType::Float32
            | DataType::Timestamp(TimeUnit::Microsecond, _)
            | DataType::Time64(TimeUnit::Microsecond)
            | DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::MonthDayNano)
    )
}

/// The UDF `CAST(x AS STRING)` becomes for the types [`casts_to_string`] names.
pub(crate) fn cast_string_udf() -> Arc<ScalarUDF> {
    Arc::new(udf(CAST_STRING, |_: &Call, a| {
        Ok(ScalarValue::Utf8(text(&a[0])))
    }))
}

fn text(v: &ScalarValue) -> Option<String> {
    use ScalarValue as S;
    Some(match v {
        S::Decimal128(Some(x), _, s) => decimal_text(x.to_string(), *s),
        S::Decimal256(Some(x), _, s) => decimal_text(x.to_string(), *s),
        S::Float64(Some(x)) => float_text(*x),
        S::Float32(Some(x)) => float_text(f64::from(*x)),
        S::TimestampMicrosecond(Some(t), tz) => {
            let dt = timestamp_us_to_datetime(*t)?;
            let frac = fraction(t.rem_euclid(1_000_000));
            let zone = if tz.is_some() { "+00" } else { "" };
            format!("{}{frac}{zone}", dt.format("%Y-%m-%d %H:%M:%S"))
        }
        S::Time64Microsecond(Some(t)) => {
            let time = time64us_to_time(t - t.rem_euclid(1_000_000))?;
            format!(
                "{}{}",
                time.format("%H:%M:%S"),
                fraction(t.rem_euclid(1_000_000))
            )
        }
        S::IntervalMonthDayNano(Some(iv)) => interval_text(iv),
        _ => return None,
    })
}

/// Microseconds of a second as `.ddd` or `.dddddd` (or nothing), the fewest of the two
/// widths that keep every nonzero digit.
fn fraction(micros: i64) -> String {
    if micros == 0 {
        String::new()
    } else if micros % 1000 == 0 {
        format!(".{:03}", micros / 1000)
    } else {
        format!(".{micros:06}")
    }
}

/// A FLOAT64 as `%.15g` when that reads back as the same value, else `%.17g`; `inf`,
/// `-inf` and `nan` by name.
fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let g15 = g_format(x, 15);
    if g15.parse::<f64>().ok() == Some(x) {
        g15
    } else {
        g_format(x, 17)
    }
}

/// C's `%.{precision}g`: `precision` significant digits, trailing zeros dropped, an
/// exponent (at least two digits) when it is below -4 or at least `precision`.
fn g_format(x: f64, precision: usize) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:.*e}", precision - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.unsigned_abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_zetasql_writes_them() {
        for (x, s) in [
            (1.0, "1"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1.5e20, "1.5e+20"),
            (1e15, "1e+15"),
            (123456789012345.0, "123456789012345"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-0.0, "-0"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(float_text(x), s, "{x:e}");
        }
    }

    #[test]
    fn fractions_keep_zero_three_or_six_digits() {
        assert_eq!(fraction(0), "");
        assert_eq!(fraction(500_000), ".500");
        assert_eq!(fraction(120), ".000120");
        assert_eq!(fraction(123_456), ".123456");
        let ts = ScalarValue::TimestampMicrosecond(Some(1_704_070_923_500_000), Some("UTC".into()));
        assert_eq!(text(&ts).unwrap(), "2024-01-01 01:02:03.500+00");
        let dt = ScalarValue::TimestampMicrosecond(Some(1_704_070_923_000_000), None);
        assert_eq!(text(&dt).unwrap(), "2024-01-01 01:02:03");
    }

    #[test]
    fn decimals_drop_trailing_zeros() {
        let n = |v: i128| text(&ScalarValue::Decimal128(Some(v), 38, 9)).unwrap();
        assert_eq!(n(1_250_000_000), "1.25");
        assert_eq!(n(3_000_000_000), "3");
        assert_eq!(n(-500_000_000), "-0.5");
        assert_eq!(n(0), "0");
    }
}

//! Mathematical functions and the arithmetic operators, with BigQuery's result types
//! (INT64 → NUMERIC → BIGNUMERIC → FLOAT64), its NUMERIC rounding (half away from zero) and
//! its errors (overflow, division by zero, domain errors), where DataFusion wraps, gives
//! infinity or NaN, or types otherwise.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Decimal256Array, Float64Array,
    Int64Array, new_null_array,
};
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, Decimal256Type, Float64Type, Int64Type, i256,
};
use datafusion::common::{Result as DfResult, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr};
use num_bigint::BigInt;

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, function_args};

/// NUMERIC's Arrow type.
pub(crate) const NUMERIC: DataType = DataType::Decimal128(38, 9);
/// BIGNUMERIC's Arrow type.
pub(crate) const BIGNUMERIC: DataType = DataType::Decimal256(76, 38);

/// The rank of a numeric type in BigQuery's coercion order, `None` for a non-numeric type.
fn rank(t: &DataType) -> Option<u8> {
    use DataType::*;
    match t {
        Null => Some(0),
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => Some(1),
        Decimal32(..) | Decimal64(..) | Decimal128(..) => Some(2),
        Decimal256(..) => Some(3),
        Float16 | Float32 | Float64 => Some(4),
        _ => None,
    }
}

/// BigQuery's supertype of numeric types (INT64 → NUMERIC → BIGNUMERIC → FLOAT64), `None`
/// if one is not numeric.
pub(crate) fn supertype(types: &[DataType]) -> Option<DataType> {
    let mut top = 0;
    for t in types {
        top = top.max(rank(t)?);
    }
    Some(match top {
        0 | 1 => DataType::Int64,
        2 => NUMERIC,
        3 => BIGNUMERIC,
        _ => DataType::Float64,
    })
}

/// BigQuery's name of an argument type, for messages.
pub(crate) fn type_name(t: &DataType) -> String {
    match crate::sql::types::bq_type_of(t) {
        Ok(f) => format!("{f:?}").to_ascii_uppercase(),
        Err(_) => t.to_string(),
    }
}

/// One value of a numeric column: a decimal as its unscaled integer.
#[derive(Clone, Debug, PartialEq)]
enum Num {
    I(i64),
    F(f64),
    D(BigInt),
}

fn pow10(s: i8) -> BigInt {
    BigInt::from(10u8).pow(s.max(0) as u32)
}

fn i256_to_big(v: i256) -> BigInt {
    BigInt::from_signed_bytes_le(&v.to_le_bytes())
}

fn big_to_i256(v: &BigInt) -> Option<i256> {
    let bytes = v.to_signed_bytes_le();
    if bytes.len() > 32 {
        return None;
    }
    let fill = if v.sign() == num_bigint::Sign::Minus {
        0xff
    } else {
        0
    };
    let mut b = [fill; 32];
    b[..bytes.len()].copy_from_slice(&bytes);
    Some(i256::from_le_bytes(b))
}

/// The scale of a decimal type (0 for any other).
fn scale(t: &DataType) -> i8 {
    match t {
        DataType::Decimal128(_, s) | DataType::Decimal256(_, s) => *s,
        _ => 0,
    }
}

/// Whether an unscaled decimal fits its BigQuery type.
fn fits(v: &BigInt, t: &DataType) -> bool {
    match t {
        DataType::Decimal128(p, _) => {
            let max = BigInt::from(10u8).pow(u32::from(*p));
            v < &max && v > &-max
        }
        _ => big_to_i256(v).is_some(),
    }
}

fn read(a: &ArrayRef) -> DfResult<Vec<Option<Num>>> {
    Ok(match a.data_type() {
        DataType::Int64 => a
            .as_primitive::<Int64Type>()
            .iter()
            .map(|v| v.map(Num::I))
            .collect(),
        DataType::Float64 => a
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map(Num::F))
            .collect(),
        DataType::Decimal128(..) => a
            .as_primitive::<Decimal128Type>()
            .iter()
            .map(|v| v.map(|v| Num::D(BigInt::from(v))))
            .collect(),
        DataType::Decimal256(..) => a
            .as_primitive::<Decimal256Type>()
            .iter()
            .map(|v| v.map(|v| Num::D(i256_to_big(v))))
            .collect(),
        DataType::Null => vec![None; a.len()],
        other => return exec_err!("no numeric kernel for {other}"),
    })
}

fn write(values: Vec<Option<Num>>, t: &DataType) -> DfResult<ArrayRef> {
    Ok(match t {
        DataType::Int64 => Arc::new(
            values
                .into_iter()
                .map(|v| match v {
                    Some(Num::I(i)) => Some(i),
                    _ => None,
                })
                .collect::<Int64Array>(),
        ),
        DataType::Float64 => Arc::new(
            values
                .into_iter()
                .map(|v| match v {
                    Some(Num::F(f)) => Some(f),
                    Some(Num::I(i)) => Some(i as f64),
                    _ => None,
                })
                .collect::<Float64Array>(),
        ),
        DataType::Decimal128(p, s) => Arc::new(
            values
                .into_iter()
                .map(|v| match v {
                    Some(Num::D(d)) => i128::try_from(&d).ok(),
                    _ => None,
                })
                .collect::<Decimal128Array>()
                .with_precision_and_scale(*p, *s)?,
        ),
        DataType::Decimal256(p, s) => Arc::new(
            values
                .into_iter()
                .map(|v| match v {
                    Some(Num::D(d)) => big_to_i256(&d),
                    _ => None,
                })
                .collect::<Decimal256Array>()
                .with_precision_and_scale(*p, *s)?,
        ),
        DataType::Boolean => Arc::new(
            values
                .into_iter()
                .map(|v| match v {
                    Some(Num::I(i)) => Some(i != 0),
                    _ => None,
                })
                .collect::<BooleanArray>(),
        ),
        other => return exec_err!("no numeric kernel for {other}"),
    })
}

/// `n / d` rounded half away from zero.
fn round_div(n: &BigInt, d: &BigInt) -> BigInt {
    let q = n / d;
    let r = n % d;
    let twice: BigInt = r.magnitude().clone().into();
    let twice = twice * 2;
    let d_abs: BigInt = d.magnitude().clone().into();
    if twice >= d_abs {
        let negative =
            (n.sign() == num_bigint::Sign::Minus) != (d.sign() == num_bigint::Sign::Minus);
        if negative { q - 1 } else { q + 1 }
    } else {
        q
    }
}

/// A decimal's value as FLOAT64.
fn to_f64(v: &Num, s: i8) -> f64 {
    match v {
        Num::I(i) => *i as f64,
        Num::F(f) => *f,
        Num::D(d) => {
            let text = d.to_string();
            let (sign, digits) = text
                .strip_prefix('-')
                .map_or(("", text.as_str()), |r| ("-", r));
            format!("{sign}{digits}e-{s}").parse().unwrap_or(f64::NAN)
        }
    }
}

/// A FLOAT64 as an unscaled decimal of scale `s`, rounded half away from zero from its
/// shortest decimal form; `None` for NaN or infinity.
fn from_f64(f: f64, s: i8) -> Option<BigInt> {
    if !f.is_finite() {
        return None;
    }
    let text = format!("{f:e}");
    let (mantissa, exp) = text.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: BigInt = format!("{int}{frac}").parse().ok()?;
    let shift = exp - frac.len() as i32 + i32::from(s);
    Some(if shift >= 0 {
        digits * BigInt::from(10u8).pow(shift as u32)
    } else {
        round_div(&digits, &BigInt::from(10u8).pow((-shift) as u32))
    })
}

fn show(v: &Num, s: i8) -> String {
    match v {
        Num::I(i) => i.to_string(),
        Num::F(f) => f.to_string(),
        Num::D(_) => to_f64(v, s).to_string(),
    }
}

/// The arithmetic the operators and their function forms do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    IeeeDiv,
    IntDiv,
    Mod,
    Neg,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::IeeeDiv => "IEEE_DIVIDE",
            Op::IntDiv => "DIV",
            Op::Mod => "MOD",
            Op::Neg => "-",
        }
    }

    fn describe(self, x: &Num, y: Option<&Num>, s: i8) -> String {
        match (self, y) {
            (Op::Neg, _) | (_, None) => format!("-{}", show(x, s)),
            (Op::IeeeDiv | Op::IntDiv | Op::Mod, Some(y)) => {
                format!("{}({}, {})", self.symbol(), show(x, s), show(y, s))
            }
            (_, Some(y)) => format!("{} {} {}", show(x, s), self.symbol(), show(y, s)),
        }
    }
}

/// One operation on two values of the same type `t`; `Err` is BigQuery's message.
fn apply(op: Op, x: &Num, y: Option<&Num>, t: &DataType) -> Result<Num, String> {
    let s = scale(t);
    let what = || op.describe(x, y, s);
    match (x, y) {
        (Num::I(a), Some(Num::I(b))) => {
            let (a, b) = (*a, *b);
            let r = match op {
                Op::Add => a.checked_add(b),
                Op::Sub => a.checked_sub(b),
                Op::Mul => a.checked_mul(b),
                Op::IntDiv | Op::Mod if b == 0 => {
                    return Err(format!("division by zero: {}", what()));
                }
                Op::IntDiv => a.checked_div(b),
                Op::Mod => Some(a.checked_rem(b).unwrap_or(0)),
                Op::Div | Op::IeeeDiv | Op::Neg => {
                    return apply(
                        op,
                        &Num::F(a as f64),
                        Some(&Num::F(b as f64)),
                        &DataType::Float64,
                    );
                }
            };
            r.map(Num::I)
                .ok_or_else(|| format!("int64 overflow: {}", what()))
        }
        (Num::I(_), Some(_)) => Err("mixed numeric operands".into()),
        (Num::I(a), None) => a
            .checked_neg()
            .map(Num::I)
            .ok_or_else(|| format!("int64 overflow: {}", what())),
        (Num::F(a), y) => {
            let (a, b) = (*a, y.map_or(0.0, |y| to_f64(y, s)));
            let r = match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Mul => a * b,
                Op::IeeeDiv => return Ok(Num::F(a / b)),
                Op::Div if b == 0.0 => return Err(format!("division by zero: {}", what())),
                Op::Div => a / b,
                Op::Neg => return Ok(Num::F(-a)),
                Op::IntDiv | Op::Mod => {
                    return Err(format!("{} does not take FLOAT64", op.symbol()));
                }
            };
            if r.is_infinite() && a.is_finite() && b.is_finite() {
                Err(format!("floating point overflow: {}", what()))
            } else {
                Ok(Num::F(r))
            }
        }
        (Num::D(a), y) => {
            let zero = BigInt::from(0);
            let b = match y {
                Some(Num::D(b)) => b,
                None => &zero,
                Some(_) => return Err("mixed numeric operands".into()),
            };
            let r = match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Neg => -a,
                Op::Mul => round_div(&(a * b), &pow10(s)),
                _ if b == &zero => return Err(format!("division by zero: {}", what())),
                Op::Div | Op::IeeeDiv => round_div(&(a * pow10(s)), b),
                Op::IntDiv => (a / b) * pow10(s),
                Op::Mod => a % b,
            };
            if fits(&r, t) {
                Ok(Num::D(r))
            } else {
                let name = if *t == BIGNUMERIC {
                    "BIGNUMERIC"
                } else {
                    "numeric"
                };
                Err(format!("{name} overflow: {}", what()))
            }
        }
    }
}

/// The rows of `args`, all as arrays, and whether every argument was a scalar.
fn arrays(args: &[ColumnarValue], rows: usize) -> DfResult<(Vec<ArrayRef>, bool)> {
    let scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let n = if scalar { 1 } else { rows };
    let arrays = args
        .iter()
        .map(|a| a.to_array_of_size(n))
        .collect::<DfResult<_>>()?;
    Ok((arrays, scalar))
}

fn output(array: ArrayRef, scalar: bool) -> DfResult<ColumnarValue> {
    if scalar {
        Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
            &array, 0,
        )?))
    } else {
        Ok(ColumnarValue::Array(array))
    }
}

/// An arithmetic operator, or its function form, as a UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Arithmetic {
    name: &'static str,
    op: Op,
    signature: Signature,
}

impl ScalarUDFImpl for Arithmetic {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        let arity = if self.op == Op::Neg { 1 } else { 2 };
        let shown = || types.iter().map(type_name).collect::<Vec<_>>().join(", ");
        if types.len() != arity {
            return plan_err!("{} takes {arity} arguments", self.op.symbol());
        }
        // INTERVAL / INT64.
        if self.op == Op::Div
            && matches!(types[0], DataType::Interval(_))
            && (types[1].is_integer() || types[1] == DataType::Null)
        {
            return Ok(vec![types[0].clone(), DataType::Int64]);
        }
        let Some(mut t) = supertype(types) else {
            return plan_err!(
                "No matching signature for operator {} for argument types: {}",
                self.op.symbol(),
                shown()
            );
        };
        match self.op {
            Op::Div if t == DataType::Int64 => t = DataType::Float64,
            Op::IeeeDiv => t = DataType::Float64,
            Op::IntDiv | Op::Mod if t == DataType::Float64 => {
                return plan_err!(
                    "No matching signature for function {} for argument types: {}",
                    self.op.symbol(),
                    shown()
                );
            }
            _ => {}
        }
        Ok(vec![t; arity])
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        Ok(types.first().cloned().unwrap_or(DataType::Int64))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        if self.op == Op::Div
            && args
                .arg_fields
                .first()
                .is_some_and(|f| matches!(f.data_type(), DataType::Interval(_)))
        {
            return super::interval_ops::interval_arithmetic_udf(true).invoke_with_args(args);
        }
        let t = args.return_field.data_type().clone();
        let (arrays, scalar) = arrays(&args.args, args.number_rows)?;
        let xs = read(&arrays[0])?;
        let ys = match arrays.get(1) {
            Some(a) => read(a)?,
            None => vec![None; xs.len()],
        };
        let unary = self.op == Op::Neg;
        let mut out = Vec::with_capacity(xs.len());
        for (x, y) in xs.iter().zip(&ys) {
            out.push(
                match (x, y) {
                    (Some(x), _) if unary => Some(apply(self.op, x, None, &t)),
                    (Some(x), Some(y)) => Some(apply(self.op, x, Some(y), &t)),
                    _ => None,
                }
                .transpose()
                .or_else(|e| exec_err!("{e}"))?,
            );
        }
        output(write(out, &t)?, scalar)
    }
}

fn arithmetic(name: &'static str, op: Op) -> ScalarUDF {
    ScalarUDF::new_from_impl(Arithmetic {
        name,
        op,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// The UDF that does `op` with BigQuery's types and errors.
pub(crate) fn operator_udf(op: Op) -> Arc<ScalarUDF> {
    Arc::new(match op {
        Op::Add => bigq_add(),
        Op::Sub => bigq_subtract(),
        Op::Mul => bigq_multiply(),
        Op::Neg => bigq_negate(),
        _ => bigq_divide(),
    })
}

pub(crate) fn bigq_add() -> ScalarUDF {
    arithmetic("bigq_add", Op::Add)
}
pub(crate) fn bigq_subtract() -> ScalarUDF {
    arithmetic("bigq_subtract", Op::Sub)
}
pub(crate) fn bigq_multiply() -> ScalarUDF {
    arithmetic("bigq_multiply", Op::Mul)
}
pub(crate) fn bigq_divide() -> ScalarUDF {
    arithmetic("bigq_divide", Op::Div)
}
pub(crate) fn bigq_negate() -> ScalarUDF {
    arithmetic("bigq_negate", Op::Neg)
}
fn ieee_divide() -> ScalarUDF {
    arithmetic("ieee_divide", Op::IeeeDiv)
}
fn div() -> ScalarUDF {
    arithmetic("div", Op::IntDiv)
}
fn mod_() -> ScalarUDF {
    arithmetic("mod", Op::Mod)
}

/// A function of FLOAT64 (and, where `numeric`, of NUMERIC and BIGNUMERIC, computed in
/// FLOAT64 and rounded to the type's scale). A finite argument with a NaN or infinite
/// result is BigQuery's "Floating point error".
#[derive(Debug)]
struct FloatFn {
    name: &'static str,
    upper: &'static str,
    arity: usize,
    numeric: bool,
    f: fn(f64, f64) -> f64,
    signature: Signature,
}

// Each name has one function, so the name identifies it.
impl PartialEq for FloatFn {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for FloatFn {}

impl std::hash::Hash for FloatFn {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl ScalarUDFImpl for FloatFn {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        let arity_ok = if self.name == "log" {
            matches!(types.len(), 1 | 2)
        } else {
            types.len() == self.arity
        };
        if !arity_ok {
            return plan_err!("{} takes {} arguments", self.upper, self.arity);
        }
        let Some(mut t) = supertype(types) else {
            return plan_err!(
                "No matching signature for function {} for argument types: {}",
                self.upper,
                types.iter().map(type_name).collect::<Vec<_>>().join(", ")
            );
        };
        if t == DataType::Int64 || !self.numeric {
            t = DataType::Float64;
        }
        Ok(vec![t; types.len()])
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        Ok(types.first().cloned().unwrap_or(DataType::Float64))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let t = args.return_field.data_type().clone();
        let s = scale(&t);
        let (arrays, scalar) = arrays(&args.args, args.number_rows)?;
        let cols = arrays.iter().map(read).collect::<DfResult<Vec<_>>>()?;
        let rows = cols.first().map_or(0, Vec::len);
        let mut out = Vec::with_capacity(rows);
        for i in 0..rows {
            let vals: Option<Vec<f64>> = cols
                .iter()
                .map(|c| c[i].as_ref().map(|v| to_f64(v, s)))
                .collect();
            let Some(vals) = vals else {
                out.push(None);
                continue;
            };
            let (x, y) = (vals[0], vals.get(1).copied().unwrap_or(f64::NAN));
            let r = (self.f)(x, y);
            let shown = || {
                let parts: Vec<String> = vals.iter().map(|v| v.to_string()).collect();
                format!("{}({})", self.upper, parts.join(", "))
            };
            if !r.is_finite() && vals.iter().all(|v| v.is_finite()) {
                return exec_err!("Floating point error in function: {}", shown());
            }
            out.push(Some(if matches!(t, DataType::Float64) {
                Num::F(r)
            } else {
                match from_f64(r, s).filter(|d| fits(d, &t)) {
                    Some(d) => Num::D(d),
                    None => return exec_err!("numeric overflow in function: {}", shown()),
                }
            }));
        }
        output(write(out, &t)?, scalar)
    }
}

fn float_fn(
    name: &'static str,
    upper: &'static str,
    arity: usize,
    numeric: bool,
    f: fn(f64, f64) -> f64,
) -> ScalarUDF {
    ScalarUDF::new_from_impl(FloatFn {
        name,
        upper,
        arity,
        numeric,
        f,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// `LOG(x, base)`: NaN for an infinite base; an error (non-finite result) for a value or
/// base at or below 0 and for base 1, as BigQuery raises.
fn log_base(x: f64, base: f64) -> f64 {
    if base.is_nan() {
        return f64::ln(x);
    }
    if x <= 0.0 || base <= 0.0 || base == 1.0 {
        return f64::NAN;
    }
    if base.is_infinite() {
        return f64::NAN;
    }
    x.ln() / base.ln()
}

/// The domain of `f` where BigQuery raises: NaN outside it.
fn domain(ok: bool, v: f64) -> f64 {
    if ok { v } else { f64::NAN }
}

fn sqrt() -> ScalarUDF {
    float_fn("sqrt", "SQRT", 1, true, |x, _| x.sqrt())
}
fn exp() -> ScalarUDF {
    float_fn("exp", "EXP", 1, true, |x, _| x.exp())
}
fn ln() -> ScalarUDF {
    float_fn("ln", "LN", 1, true, |x, _| {
        domain(x > 0.0 || x.is_nan(), x.ln())
    })
}
fn log() -> ScalarUDF {
    float_fn("log", "LOG", 2, true, log_base)
}
fn log10() -> ScalarUDF {
    float_fn("log10", "LOG10", 1, true, |x, _| {
        domain(x > 0.0 || x.is_nan(), x.log10())
    })
}
fn pow() -> ScalarUDF {
    float_fn("pow", "POW", 2, true, f64::powf)
}
fn power() -> ScalarUDF {
    float_fn("power", "POWER", 2, true, f64::powf)
}
fn cbrt() -> ScalarUDF {
    float_fn("cbrt", "CBRT", 1, false, |x, _| x.cbrt())
}
fn acos() -> ScalarUDF {
    float_fn("acos", "ACOS", 1, false, |x, _| x.acos())
}
fn asin() -> ScalarUDF {
    float_fn("asin", "ASIN", 1, false, |x, _| x.asin())
}
fn acosh() -> ScalarUDF {
    float_fn("acosh", "ACOSH", 1, false, |x, _| x.acosh())
}
fn atanh() -> ScalarUDF {
    float_fn("atanh", "ATANH", 1, false, |x, _| x.atanh())
}
fn sinh() -> ScalarUDF {
    float_fn("sinh", "SINH", 1, false, |x, _| x.sinh())
}
fn cosh() -> ScalarUDF {
    float_fn("cosh", "COSH", 1, false, |x, _| x.cosh())
}
fn cot() -> ScalarUDF {
    float_fn("cot", "COT", 1, false, |x, _| {
        domain(x != 0.0, 1.0 / x.tan())
    })
}
fn csc() -> ScalarUDF {
    float_fn("csc", "CSC", 1, false, |x, _| {
        domain(x != 0.0, 1.0 / x.sin())
    })
}
fn sec() -> ScalarUDF {
    float_fn("sec", "SEC", 1, false, |x, _| 1.0 / x.cos())
}
fn coth() -> ScalarUDF {
    float_fn("coth", "COTH", 1, false, |x, _| {
        domain(x != 0.0, 1.0 / x.tanh())
    })
}
fn csch() -> ScalarUDF {
    float_fn("csch", "CSCH", 1, false, |x, _| {
        domain(x != 0.0, 1.0 / x.sinh())
    })
}
fn sech() -> ScalarUDF {
    float_fn("sech", "SECH", 1, false, |x, _| 1.0 / x.cosh())
}

/// `SIGN`, `IS_INF` and `IS_NAN`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Classify {
    name: &'static str,
    signature: Signature,
}

impl ScalarUDFImpl for Classify {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        match (types.len(), supertype(types)) {
            (1, Some(t)) if self.name == "sign" => Ok(vec![t]),
            (1, Some(_)) => Ok(vec![DataType::Float64]),
            _ => plan_err!(
                "No matching signature for function {}",
                self.name.to_ascii_uppercase()
            ),
        }
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        if self.name == "sign" {
            Ok(types.first().cloned().unwrap_or(DataType::Int64))
        } else {
            Ok(DataType::Boolean)
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let t = args.return_field.data_type().clone();
        let (arrays, scalar) = arrays(&args.args, args.number_rows)?;
        let s = scale(arrays[0].data_type());
        let out = read(&arrays[0])?
            .into_iter()
            .map(|v| {
                v.map(|v| match (self.name, v) {
                    ("sign", Num::I(i)) => Num::I(i.signum()),
                    ("sign", Num::F(f)) if f == 0.0 || f.is_nan() => Num::F(f),
                    ("sign", Num::F(f)) => Num::F(f.signum()),
                    ("sign", Num::D(d)) => Num::D(match d.sign() {
                        num_bigint::Sign::Minus => -pow10(s),
                        num_bigint::Sign::NoSign => d,
                        num_bigint::Sign::Plus => pow10(s),
                    }),
                    ("is_inf", v) => Num::I(i64::from(to_f64(&v, s).is_infinite())),
                    (_, v) => Num::I(i64::from(to_f64(&v, s).is_nan())),
                })
            })
            .collect();
        output(write(out, &t)?, scalar)
    }
}

fn classify(name: &'static str) -> ScalarUDF {
    ScalarUDF::new_from_impl(Classify {
        name,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}
fn sign() -> ScalarUDF {
    classify("sign")
}
fn is_inf() -> ScalarUDF {
    classify("is_inf")
}
fn is_nan() -> ScalarUDF {
    classify("is_nan")
}

/// `RANGE_BUCKET(point, boundaries)`: how many boundaries are at or below the point.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RangeBucket {
    signature: Signature,
}

impl ScalarUDFImpl for RangeBucket {
    fn name(&self) -> &str {
        "range_bucket"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        let element = match types.get(1) {
            Some(DataType::List(f)) => f.data_type().clone(),
            Some(DataType::Null) => DataType::Null,
            _ => return plan_err!("RANGE_BUCKET takes a point and an ARRAY of boundaries"),
        };
        if types.len() != 2 {
            return plan_err!("RANGE_BUCKET takes a point and an ARRAY of boundaries");
        }
        let list = |t: DataType| {
            DataType::List(Arc::new(datafusion::arrow::datatypes::Field::new(
                "item", t, true,
            )))
        };
        if supertype(&[types[0].clone(), element.clone()]).is_some() {
            return Ok(vec![DataType::Float64, list(DataType::Float64)]);
        }
        // STRING, BYTES, DATE, DATETIME, TIMESTAMP, TIME: points and boundaries of one type.
        let point = &types[0];
        let orderable = matches!(
            point,
            DataType::Utf8
                | DataType::Binary
                | DataType::Date32
                | DataType::Timestamp(..)
                | DataType::Time64(_)
        );
        if orderable && (element == *point || element == DataType::Null) {
            return Ok(vec![point.clone(), list(point.clone())]);
        }
        plan_err!("RANGE_BUCKET takes a point and an ARRAY of boundaries of its type")
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let (arrays, scalar) = arrays(&args.args, args.number_rows)?;
        if arrays[1].data_type() == &DataType::Null {
            return output(new_null_array(&DataType::Int64, arrays[0].len()), scalar);
        }
        if arrays[0].data_type() != &DataType::Float64 {
            return output(ordered_buckets(&arrays[0], &arrays[1])?, scalar);
        }
        let points = arrays[0].as_primitive::<Float64Type>();
        let mut out = Vec::with_capacity(points.len());
        let lists = arrays[1].as_list::<i32>();
        for i in 0..points.len() {
            if points.is_null(i) || lists.is_null(i) {
                out.push(None);
                continue;
            }
            let bounds = lists.value(i);
            let bounds = bounds.as_primitive::<Float64Type>();
            if bounds.null_count() > 0 {
                return exec_err!("Elements in the array argument of RANGE_BUCKET cannot be NULL");
            }
            let b = bounds.values();
            if b.iter().any(|v| v.is_nan()) {
                return exec_err!("Elements in the array argument of RANGE_BUCKET cannot be NaN");
            }
            if b.windows(2).any(|w| w[0] > w[1]) {
                return exec_err!(
                    "Elements in the array argument of RANGE_BUCKET must be in ascending order"
                );
            }
            let p = points.value(i);
            // A NaN point is in no bucket: NULL, as BigQuery gives.
            if p.is_nan() {
                out.push(None);
                continue;
            }
            out.push(Some(b.partition_point(|v| *v <= p) as i64));
        }
        output(Arc::new(Int64Array::from(out)), scalar)
    }
}

/// RANGE_BUCKET of points and boundaries of a type other than a number, compared as
/// values of that type.
fn ordered_buckets(points: &ArrayRef, bounds: &ArrayRef) -> DfResult<ArrayRef> {
    let lists = bounds.as_list::<i32>();
    let mut out = Vec::with_capacity(points.len());
    for i in 0..points.len() {
        if points.is_null(i) || lists.is_null(i) {
            out.push(None);
            continue;
        }
        let b = lists.value(i);
        if b.null_count() > 0 {
            return exec_err!("Elements in the array argument of RANGE_BUCKET cannot be NULL");
        }
        let b: Vec<ScalarValue> = (0..b.len())
            .map(|k| ScalarValue::try_from_array(&b, k))
            .collect::<DfResult<_>>()?;
        if b.windows(2).any(|w| w[0] > w[1]) {
            return exec_err!(
                "Elements in the array argument of RANGE_BUCKET must be in ascending order"
            );
        }
        let p = ScalarValue::try_from_array(points, i)?;
        out.push(Some(b.partition_point(|v| *v <= p) as i64));
    }
    Ok(Arc::new(Int64Array::from(out)))
}

fn range_bucket() -> ScalarUDF {
    ScalarUDF::new_from_impl(RangeBucket {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// `ROUND(x[, digits][, rounding_mode])`: INT64 rounds as FLOAT64, half away from zero;
/// NUMERIC and BIGNUMERIC keep their type and take `ROUND_HALF_EVEN` too.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Round {
    signature: Signature,
}

impl ScalarUDFImpl for Round {
    fn name(&self) -> &str {
        "round"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        let Some(mut t) = types
            .first()
            .and_then(|t| supertype(std::slice::from_ref(t)))
        else {
            return plan_err!("No matching signature for function ROUND");
        };
        if t == DataType::Int64 {
            t = DataType::Float64;
        }
        if types.len() == 3 && t == DataType::Float64 {
            return plan_err!(
                "ROUND with a rounding mode takes NUMERIC or BIGNUMERIC, not FLOAT64"
            );
        }
        match types.len() {
            1 => Ok(vec![t]),
            2 => Ok(vec![t, DataType::Int64]),
            3 => Ok(vec![t, DataType::Int64, DataType::Utf8]),
            _ => plan_err!("ROUND takes 1 to 3 arguments"),
        }
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        Ok(types.first().cloned().unwrap_or(DataType::Float64))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let t = args.return_field.data_type().clone();
        let s = scale(&t);
        let (arrays, scalar) = arrays(&args.args, args.number_rows)?;
        let xs = read(&arrays[0])?;
        let ns = match arrays.get(1) {
            Some(a) => read(a)?,
            None => vec![Some(Num::I(0)); xs.len()],
        };
        let modes: Vec<Option<String>> = match arrays.get(2) {
            Some(a) => {
                let a = datafusion::arrow::compute::cast(a, &DataType::Utf8)?;
                a.as_string::<i32>()
                    .iter()
                    .map(|m| m.map(str::to_string))
                    .collect()
            }
            None => vec![Some("ROUND_HALF_AWAY_FROM_ZERO".into()); xs.len()],
        };
        let mut out = Vec::with_capacity(xs.len());
        for ((x, n), mode) in xs.iter().zip(&ns).zip(&modes) {
            let (Some(x), Some(Num::I(n)), Some(mode)) = (x, n, mode) else {
                out.push(None);
                continue;
            };
            let even = match mode.to_ascii_uppercase().as_str() {
                "ROUND_HALF_EVEN" => true,
                "ROUND_HALF_AWAY_FROM_ZERO" => false,
                other => return exec_err!("ROUND: unknown rounding mode {other}"),
            };
            out.push(Some(match x {
                Num::F(f) => {
                    let n = (*n).clamp(-400, 400) as i32;
                    let r = if n >= 0 {
                        let p = 10f64.powi(n);
                        if p.is_infinite() {
                            *f
                        } else {
                            (f * p).round() / p
                        }
                    } else {
                        let p = 10f64.powi(-n);
                        (f / p).round() * p
                    };
                    if r.is_infinite() && f.is_finite() {
                        return exec_err!("Floating point overflow in function: ROUND({f}, {n})");
                    }
                    Num::F(r)
                }
                Num::D(v) => {
                    let drop = i64::from(s) - n;
                    if drop <= 0 {
                        Num::D(v.clone())
                    } else {
                        let unit = BigInt::from(10u8).pow(drop.min(200) as u32);
                        let q = v / &unit;
                        let r = v % &unit;
                        let twice: BigInt = BigInt::from(r.magnitude().clone()) * 2;
                        let up = twice > unit || (twice == unit && (!even || q.bit(0)));
                        let step = if v.sign() == num_bigint::Sign::Minus {
                            -1
                        } else {
                            1
                        };
                        let q = if up { q + step } else { q };
                        let r = q * unit;
                        if !fits(&r, &t) {
                            return exec_err!(
                                "numeric overflow in function: ROUND({})",
                                show(x, s)
                            );
                        }
                        Num::D(r)
                    }
                }
                Num::I(i) => Num::I(*i),
            }));
        }
        output(write(out, &t)?, scalar)
    }
}

fn round() -> ScalarUDF {
    ScalarUDF::new_from_impl(Round {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// `SAFE_ADD(a, b)` and the other `SAFE_` arithmetic functions as the operator's UDF under
/// `SAFE.`, NULL where the operator raises.
pub(crate) fn safe_arithmetic(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let (op, arity) = match name {
        "SAFE_ADD" => ("bigq_add", 2),
        "SAFE_SUBTRACT" => ("bigq_subtract", 2),
        "SAFE_MULTIPLY" => ("bigq_multiply", 2),
        "SAFE_DIVIDE" => ("bigq_divide", 2),
        _ => ("bigq_negate", 1),
    };
    let args = function_args(f)
        .filter(|a| a.len() == arity)
        .ok_or_else(|| BqError::invalid_query(format!("{name} takes {arity} arguments")))?;
    Ok(Some(super::safe::safe_call(call(op, args))))
}

/// `CEILING(x)` as `CEIL(x)`.
pub(crate) fn ceiling(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    Ok(function_args(f).map(|args| call("ceil", args)))
}

/// `GREATEST` and `LEAST`: NULL if any argument is NULL, as BigQuery returns (DataFusion
/// skips NULLs).
pub(crate) fn greatest_least(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| !a.is_empty()) else {
        return Ok(None);
    };
    let any_null = args
        .iter()
        .map(|a| Expr::IsNull(Box::new(a.clone())))
        .reduce(|a, b| crate::sql::ast::binary(a, ast::BinaryOperator::Or, b))
        .unwrap_or(Expr::value(ast::Value::Boolean(false)));
    let inner = call(&name.to_ascii_lowercase(), args);
    Ok(Some(Expr::Case {
        case_token: ast::helpers::attached_token::AttachedToken::empty(),
        end_token: ast::helpers::attached_token::AttachedToken::empty(),
        operand: None,
        conditions: vec![ast::CaseWhen {
            condition: any_null,
            result: Expr::value(ast::Value::Null),
        }],
        else_result: Some(Box::new(inner)),
    }))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Math, &["bigq_add(INT64, INT64) -> INT64", "bigq_add(NUMERIC, INT64) -> NUMERIC", "bigq_add(BIGNUMERIC, NUMERIC) -> BIGNUMERIC", "bigq_add(FLOAT64, NUMERIC) -> FLOAT64"], bigq_add),
    Function::udf(Family::Math, &["bigq_subtract(INT64, INT64) -> INT64", "bigq_subtract(NUMERIC, NUMERIC) -> NUMERIC", "bigq_subtract(FLOAT64, INT64) -> FLOAT64"], bigq_subtract),
    Function::udf(Family::Math, &["bigq_multiply(INT64, INT64) -> INT64", "bigq_multiply(NUMERIC, NUMERIC) -> NUMERIC", "bigq_multiply(BIGNUMERIC, INT64) -> BIGNUMERIC", "bigq_multiply(FLOAT64, FLOAT64) -> FLOAT64"], bigq_multiply),
    Function::udf(Family::Math, &["bigq_divide(INT64, INT64) -> FLOAT64", "bigq_divide(NUMERIC, INT64) -> NUMERIC", "bigq_divide(BIGNUMERIC, BIGNUMERIC) -> BIGNUMERIC", "bigq_divide(FLOAT64, INT64) -> FLOAT64"], bigq_divide),
    Function::udf(Family::Math, &["bigq_negate(INT64) -> INT64", "bigq_negate(NUMERIC) -> NUMERIC", "bigq_negate(FLOAT64) -> FLOAT64"], bigq_negate),
    Function::udf(Family::Math, &["IEEE_DIVIDE(FLOAT64, FLOAT64) -> FLOAT64", "IEEE_DIVIDE(INT64, INT64) -> FLOAT64"], ieee_divide),
    Function::udf(Family::Math, &["DIV(INT64, INT64) -> INT64", "DIV(NUMERIC, NUMERIC) -> NUMERIC", "DIV(BIGNUMERIC, INT64) -> BIGNUMERIC"], div),
    Function::udf(Family::Math, &["MOD(INT64, INT64) -> INT64", "MOD(NUMERIC, NUMERIC) -> NUMERIC", "MOD(BIGNUMERIC, BIGNUMERIC) -> BIGNUMERIC"], mod_),
    Function::rewrite(Family::Math, &["SAFE_ADD(INT64, INT64) -> INT64", "SAFE_ADD(NUMERIC, NUMERIC) -> NUMERIC", "SAFE_ADD(FLOAT64, FLOAT64) -> FLOAT64"], safe_arithmetic),
    Function::rewrite(Family::Math, &["SAFE_SUBTRACT(INT64, INT64) -> INT64", "SAFE_SUBTRACT(NUMERIC, NUMERIC) -> NUMERIC", "SAFE_SUBTRACT(FLOAT64, FLOAT64) -> FLOAT64"], safe_arithmetic),
    Function::rewrite(Family::Math, &["SAFE_MULTIPLY(INT64, INT64) -> INT64", "SAFE_MULTIPLY(NUMERIC, NUMERIC) -> NUMERIC", "SAFE_MULTIPLY(FLOAT64, FLOAT64) -> FLOAT64"], safe_arithmetic),
    Function::rewrite(Family::Math, &["SAFE_DIVIDE(INT64, INT64) -> FLOAT64", "SAFE_DIVIDE(NUMERIC, NUMERIC) -> NUMERIC", "SAFE_DIVIDE(FLOAT64, FLOAT64) -> FLOAT64"], safe_arithmetic),
    Function::rewrite(Family::Math, &["SAFE_NEGATE(INT64) -> INT64", "SAFE_NEGATE(NUMERIC) -> NUMERIC", "SAFE_NEGATE(FLOAT64) -> FLOAT64"], safe_arithmetic),
    Function::udf(Family::Math, &["SQRT(FLOAT64) -> FLOAT64", "SQRT(INT64) -> FLOAT64", "SQRT(NUMERIC) -> NUMERIC", "SQRT(BIGNUMERIC) -> BIGNUMERIC"], sqrt),
    Function::udf(Family::Math, &["EXP(FLOAT64) -> FLOAT64", "EXP(NUMERIC) -> NUMERIC", "EXP(BIGNUMERIC) -> BIGNUMERIC"], exp),
    Function::udf(Family::Math, &["LN(FLOAT64) -> FLOAT64", "LN(NUMERIC) -> NUMERIC", "LN(BIGNUMERIC) -> BIGNUMERIC"], ln),
    Function::udf(Family::Math, &["LOG(FLOAT64[, FLOAT64]) -> FLOAT64", "LOG(NUMERIC[, NUMERIC]) -> NUMERIC", "LOG(BIGNUMERIC[, BIGNUMERIC]) -> BIGNUMERIC", "LOG(NUMERIC, FLOAT64) -> FLOAT64"], log),
    Function::udf(Family::Math, &["LOG10(FLOAT64) -> FLOAT64", "LOG10(NUMERIC) -> NUMERIC", "LOG10(BIGNUMERIC) -> BIGNUMERIC"], log10),
    Function::udf(Family::Math, &["POW(FLOAT64, FLOAT64) -> FLOAT64", "POW(INT64, INT64) -> FLOAT64", "POW(NUMERIC, INT64) -> NUMERIC", "POW(BIGNUMERIC, BIGNUMERIC) -> BIGNUMERIC"], pow),
    Function::udf(Family::Math, &["POWER(FLOAT64, FLOAT64) -> FLOAT64", "POWER(NUMERIC, NUMERIC) -> NUMERIC", "POWER(BIGNUMERIC, BIGNUMERIC) -> BIGNUMERIC"], power),
    Function::udf(Family::Math, &["CBRT(FLOAT64) -> FLOAT64", "CBRT(INT64) -> FLOAT64"], cbrt),
    Function::udf(Family::Math, &["ACOS(FLOAT64) -> FLOAT64"], acos),
    Function::udf(Family::Math, &["ASIN(FLOAT64) -> FLOAT64"], asin),
    Function::udf(Family::Math, &["ACOSH(FLOAT64) -> FLOAT64"], acosh),
    Function::udf(Family::Math, &["ATANH(FLOAT64) -> FLOAT64"], atanh),
    Function::udf(Family::Math, &["SINH(FLOAT64) -> FLOAT64"], sinh),
    Function::udf(Family::Math, &["COSH(FLOAT64) -> FLOAT64"], cosh),
    Function::udf(Family::Math, &["COT(FLOAT64) -> FLOAT64"], cot),
    Function::udf(Family::Math, &["CSC(FLOAT64) -> FLOAT64"], csc),
    Function::udf(Family::Math, &["SEC(FLOAT64) -> FLOAT64"], sec),
    Function::udf(Family::Math, &["COTH(FLOAT64) -> FLOAT64"], coth),
    Function::udf(Family::Math, &["CSCH(FLOAT64) -> FLOAT64"], csch),
    Function::udf(Family::Math, &["SECH(FLOAT64) -> FLOAT64"], sech),
    Function::udf(Family::Math, &["SIGN(INT64) -> INT64", "SIGN(NUMERIC) -> NUMERIC", "SIGN(BIGNUMERIC) -> BIGNUMERIC", "SIGN(FLOAT64) -> FLOAT64"], sign),
    Function::udf(Family::Math, &["IS_INF(FLOAT64) -> BOOL"], is_inf),
    Function::udf(Family::Math, &["IS_NAN(FLOAT64) -> BOOL"], is_nan),
    Function::udf(Family::Math, &["RANGE_BUCKET(INT64, ARRAY<INT64>) -> INT64", "RANGE_BUCKET(FLOAT64, ARRAY<FLOAT64>) -> INT64", "RANGE_BUCKET(T, ARRAY<T>) -> INT64"], range_bucket),
    Function::rewrite(Family::Math, &["CEILING(FLOAT64) -> FLOAT64"], ceiling),
    Function::udf(Family::Math, &["ROUND(FLOAT64[, INT64]) -> FLOAT64", "ROUND(INT64[, INT64]) -> FLOAT64", "ROUND(NUMERIC[, INT64]) -> NUMERIC", "ROUND(BIGNUMERIC[, INT64]) -> BIGNUMERIC", "ROUND(NUMERIC, INT64, STRING) -> NUMERIC"], round),
    Function::rewrite(Family::Math, &["GREATEST(T, T) -> T"], greatest_least),
    Function::rewrite(Family::Math, &["LEAST(T, T) -> T"], greatest_least),
];

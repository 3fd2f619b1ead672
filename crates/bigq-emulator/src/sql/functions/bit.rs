//! Bit functions and operators: `BIT_COUNT`, and `~ & | ^ << >>` on INT64 and on BYTES
//! (DataFusion has none of them on BYTES, and shifts INT64 arithmetically, modulo 64).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{Result as DfResult, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::registry::{Family, Function};

/// What a bit UDF does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum BitOp {
    Count,
    Not,
    And,
    Or,
    Xor,
    ShiftLeft,
    ShiftRight,
}

impl BitOp {
    fn symbol(self) -> &'static str {
        match self {
            BitOp::Count => "BIT_COUNT",
            BitOp::Not => "~",
            BitOp::And => "&",
            BitOp::Or => "|",
            BitOp::Xor => "^",
            BitOp::ShiftLeft => "<<",
            BitOp::ShiftRight => ">>",
        }
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Bit {
    name: &'static str,
    op: BitOp,
    signature: Signature,
}

/// INT64 or BYTES, the types bits are taken from.
fn bits_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Null
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32 => Some(DataType::Int64),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Some(DataType::Binary),
        _ => None,
    }
}

impl ScalarUDFImpl for Bit {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        let shown = || {
            types
                .iter()
                .map(super::math::type_name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let kinds: Option<Vec<DataType>> = types.iter().map(bits_type).collect();
        let ok = match (self.op, kinds.as_deref()) {
            (BitOp::Count | BitOp::Not, Some([_])) => true,
            (BitOp::ShiftLeft | BitOp::ShiftRight, Some([_, DataType::Int64])) => true,
            (BitOp::And | BitOp::Or | BitOp::Xor, Some([a, b])) => a == b,
            _ => false,
        };
        match kinds {
            Some(k) if ok => Ok(k),
            _ => plan_err!(
                "No matching signature for operator {} for argument types: {}",
                self.op.symbol(),
                shown()
            ),
        }
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        if self.op == BitOp::Count {
            return Ok(DataType::Int64);
        }
        Ok(types.first().cloned().unwrap_or(DataType::Int64))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let rows = if scalar { 1 } else { args.number_rows };
        let arrays = args
            .args
            .iter()
            .map(|a| a.to_array_of_size(rows))
            .collect::<DfResult<Vec<ArrayRef>>>()?;
        let t = args.return_field.data_type().clone();
        let out: ArrayRef = if t == DataType::Int64 {
            let mut out = Vec::with_capacity(rows);
            for i in 0..rows {
                out.push(self.int_row(&arrays, i)?);
            }
            Arc::new(Int64Array::from(out))
        } else {
            let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(rows);
            for i in 0..rows {
                out.push(self.bytes_row(&arrays, i)?);
            }
            Arc::new(out.iter().map(|b| b.as_deref()).collect::<BinaryArray>())
        };
        if scalar {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }
}

fn int(a: &ArrayRef, i: usize) -> Option<i64> {
    if a.data_type() == &DataType::Null || a.is_null(i) {
        return None;
    }
    Some(a.as_primitive::<Int64Type>().value(i))
}

fn bytes(a: &ArrayRef, i: usize) -> Option<&[u8]> {
    if a.data_type() == &DataType::Null || a.is_null(i) {
        return None;
    }
    Some(a.as_binary::<i32>().value(i))
}

/// The shift amount: an error if negative, as BigQuery raises.
fn amount(n: i64) -> DfResult<u64> {
    if n < 0 {
        return exec_err!("Bitwise shift by negative offset: {n}");
    }
    Ok(n as u64)
}

impl Bit {
    /// One row's INT64 result (BIT_COUNT of BYTES included).
    fn int_row(&self, a: &[ArrayRef], i: usize) -> DfResult<Option<i64>> {
        if self.op == BitOp::Count && a[0].data_type() != &DataType::Int64 {
            return Ok(bytes(&a[0], i).map(|b| b.iter().map(|x| i64::from(x.count_ones())).sum()));
        }
        let Some(x) = int(&a[0], i) else {
            return Ok(None);
        };
        let y = match a.get(1) {
            Some(b) => match int(b, i) {
                Some(y) => y,
                None => return Ok(None),
            },
            None => 0,
        };
        Ok(Some(match self.op {
            BitOp::Count => i64::from(x.count_ones()),
            BitOp::Not => !x,
            BitOp::And => x & y,
            BitOp::Or => x | y,
            BitOp::Xor => x ^ y,
            BitOp::ShiftLeft => match amount(y)? {
                n if n >= 64 => 0,
                n => ((x as u64) << n) as i64,
            },
            BitOp::ShiftRight => match amount(y)? {
                n if n >= 64 => 0,
                n => ((x as u64) >> n) as i64,
            },
        }))
    }

    /// One row's BYTES result: the bytes as one big-endian string of bits.
    fn bytes_row(&self, a: &[ArrayRef], i: usize) -> DfResult<Option<Vec<u8>>> {
        let Some(x) = bytes(&a[0], i) else {
            return Ok(None);
        };
        let out = match self.op {
            BitOp::Not => x.iter().map(|b| !b).collect(),
            BitOp::And | BitOp::Or | BitOp::Xor => {
                let Some(y) = bytes(&a[1], i) else {
                    return Ok(None);
                };
                if x.len() != y.len() {
                    return exec_err!(
                        "Bitwise binary operator for BYTES requires equal length of the inputs. Got {} bytes on the left hand side and {} bytes on the right hand side.",
                        x.len(),
                        y.len()
                    );
                }
                x.iter()
                    .zip(y)
                    .map(|(p, q)| match self.op {
                        BitOp::And => p & q,
                        BitOp::Or => p | q,
                        _ => p ^ q,
                    })
                    .collect()
            }
            BitOp::ShiftLeft | BitOp::ShiftRight => {
                let Some(n) = int(&a[1], i) else {
                    return Ok(None);
                };
                let n = amount(n)?;
                let len = x.len();
                let bit = |k: i128| -> u8 {
                    // Bit k of x, counted from the most significant bit of the first byte.
                    if k < 0 || k >= (len as i128) * 8 {
                        return 0;
                    }
                    let k = k as usize;
                    (x[k / 8] >> (7 - k % 8)) & 1
                };
                let shift = if self.op == BitOp::ShiftLeft {
                    i128::from(n)
                } else {
                    -i128::from(n)
                };
                (0..len)
                    .map(|byte| {
                        (0..8).fold(0u8, |acc, j| acc << 1 | bit((byte * 8 + j) as i128 + shift))
                    })
                    .collect()
            }
            BitOp::Count => return exec_err!("BIT_COUNT gives INT64"),
        };
        Ok(Some(out))
    }
}

fn bit(name: &'static str, op: BitOp) -> ScalarUDF {
    ScalarUDF::new_from_impl(Bit {
        name,
        op,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

fn bit_count() -> ScalarUDF {
    bit("bit_count", BitOp::Count)
}
fn bigq_bit_not() -> ScalarUDF {
    bit("bigq_bit_not", BitOp::Not)
}
fn bigq_bit_and() -> ScalarUDF {
    bit("bigq_bit_and", BitOp::And)
}
fn bigq_bit_or() -> ScalarUDF {
    bit("bigq_bit_or", BitOp::Or)
}
fn bigq_bit_xor() -> ScalarUDF {
    bit("bigq_bit_xor", BitOp::Xor)
}
fn bigq_shift_left() -> ScalarUDF {
    bit("bigq_shift_left", BitOp::ShiftLeft)
}
fn bigq_shift_right() -> ScalarUDF {
    bit("bigq_shift_right", BitOp::ShiftRight)
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Bit, &["BIT_COUNT(INT64) -> INT64", "BIT_COUNT(BYTES) -> INT64"], bit_count),
    Function::udf(Family::Bit, &["bigq_bit_not(INT64) -> INT64", "bigq_bit_not(BYTES) -> BYTES"], bigq_bit_not),
    Function::udf(Family::Bit, &["bigq_bit_and(INT64, INT64) -> INT64", "bigq_bit_and(BYTES, BYTES) -> BYTES"], bigq_bit_and),
    Function::udf(Family::Bit, &["bigq_bit_or(INT64, INT64) -> INT64", "bigq_bit_or(BYTES, BYTES) -> BYTES"], bigq_bit_or),
    Function::udf(Family::Bit, &["bigq_bit_xor(INT64, INT64) -> INT64", "bigq_bit_xor(BYTES, BYTES) -> BYTES"], bigq_bit_xor),
    Function::udf(Family::Bit, &["bigq_shift_left(INT64, INT64) -> INT64", "bigq_shift_left(BYTES, INT64) -> BYTES"], bigq_shift_left),
    Function::udf(Family::Bit, &["bigq_shift_right(INT64, INT64) -> INT64", "bigq_shift_right(BYTES, INT64) -> BYTES"], bigq_shift_right),
];

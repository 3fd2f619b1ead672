//! `bigq_routine_argument(value, CAST(NULL AS T), 'function', 'parameter')`: an argument of a
//! SQL function's call as its parameter's type `T`, when BigQuery would coerce it so
//! (INT64 to NUMERIC, BIGNUMERIC or FLOAT64; NUMERIC to BIGNUMERIC or FLOAT64; BIGNUMERIC to
//! FLOAT64; NULL to anything; a STRING to a date or time type, as BigQuery coerces a literal;
//! arrays and structs element by element), and otherwise BigQuery's "No matching signature"
//! at planning time: a FLOAT64 passed for an INT64 parameter is an error, never rounded.
//! The same check types a function's result as its `RETURNS` type.

use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result as DfResult, ScalarValue, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use super::registry::{Family, Function};
use super::row::bq_type_name;

/// The UDF's name.
pub(crate) const ROUTINE_ARGUMENT: &str = "bigq_routine_argument";

#[derive(Debug, PartialEq, Eq, Hash)]
struct RoutineArgument {
    signature: Signature,
}

/// Whether BigQuery coerces a value of `from` to `to` without a CAST.
fn coerces(from: &DataType, to: &DataType) -> bool {
    use DataType as D;
    let text = |t: &DataType| matches!(t, D::Utf8 | D::Utf8View | D::LargeUtf8);
    match (from, to) {
        (D::Null, _) => true,
        (a, b) if a == b => true,
        (a, b) if text(a) && text(b) => true,
        (D::Int64, D::Decimal128(..) | D::Decimal256(..) | D::Float64) => true,
        (D::Decimal128(..), D::Decimal128(..) | D::Decimal256(..) | D::Float64) => true,
        (D::Decimal256(..), D::Decimal256(..) | D::Float64) => true,
        (a, D::Date32 | D::Timestamp(..) | D::Time64(_)) if text(a) => true,
        (D::List(a) | D::LargeList(a), D::List(b) | D::LargeList(b)) => {
            coerces(a.data_type(), b.data_type())
        }
        (D::Struct(a), D::Struct(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(x, y)| coerces(x.data_type(), y.data_type()))
        }
        _ => false,
    }
}

fn text_arg(args: &ReturnFieldArgs, i: usize) -> String {
    match args.scalar_arguments.get(i).copied().flatten() {
        Some(ScalarValue::Utf8(Some(s))) => s.clone(),
        _ => String::new(),
    }
}

impl ScalarUDFImpl for RoutineArgument {
    fn name(&self) -> &str {
        ROUTINE_ARGUMENT
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        Ok(args[1].clone())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        let (from, to) = (&args.arg_fields[0], &args.arg_fields[1]);
        if !coerces(from.data_type(), to.data_type()) {
            let (function, parameter) = (text_arg(&args, 2), text_arg(&args, 3));
            if parameter == "the result" {
                return plan_err!(
                    "Function {function} is declared to return {} but its body produces \
                     incompatible type {}",
                    bq_type_name(to.data_type()),
                    bq_type_name(from.data_type())
                );
            }
            return plan_err!(
                "No matching signature for function {function}: {parameter} is {}, not {}",
                bq_type_name(from.data_type()),
                bq_type_name(to.data_type())
            );
        }
        Ok(to.clone())
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let to = call.return_field.data_type();
        match &call.args[0] {
            ColumnarValue::Array(a) if a.data_type() == to => Ok(ColumnarValue::Array(a.clone())),
            ColumnarValue::Array(a) => Ok(ColumnarValue::Array(cast(a, to)?)),
            ColumnarValue::Scalar(s) => Ok(ColumnarValue::Scalar(s.cast_to(to)?)),
        }
    }
}

pub(super) const FUNCTIONS: &[Function] = &[Function::udf(
    Family::Utility,
    &["bigq_routine_argument(T, T, STRING, STRING) -> T"],
    || {
        ScalarUDF::new_from_impl(RoutineArgument {
            signature: Signature::any(4, Volatility::Immutable),
        })
    },
)];

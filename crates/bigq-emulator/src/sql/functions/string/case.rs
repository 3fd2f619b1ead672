//! `LOWER` and `UPPER` of STRING and BYTES: DataFusion's for a STRING (Unicode case
//! mapping), and for BYTES the ASCII letters mapped and every other byte kept, as BigQuery
//! does (DataFusion's take no BYTES).

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, BinaryArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result as DfResult, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

#[derive(Debug, PartialEq, Eq, Hash)]
struct Case {
    inner: Arc<ScalarUDF>,
    upper: bool,
    signature: Signature,
}

fn is_binary(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

impl ScalarUDFImpl for Case {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        let name = self.name().to_ascii_uppercase();
        match args {
            [t] if is_binary(t) => Ok(vec![DataType::Binary]),
            [DataType::Null] => Ok(vec![DataType::Utf8]),
            [t @ (DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)] => {
                Ok(vec![t.clone()])
            }
            [t] => plan_err!(
                "No matching signature for function {name} for argument types: {}",
                super::super::row::bq_type_name(t)
            ),
            _ => plan_err!("No matching signature for function {name}: one argument"),
        }
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        match args {
            [t] if is_binary(t) => Ok(DataType::Binary),
            _ => self.inner.return_type(args),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        if !args.args.first().is_some_and(|a| is_binary(&a.data_type())) {
            return self.inner.invoke_with_args(args);
        }
        let (arrays, _) = super::super::udf::arrays(&args.args)?;
        let bytes = arrays[0].as_binary::<i32>();
        let out: BinaryArray = bytes
            .iter()
            .map(|b| {
                b.map(|b| {
                    if self.upper {
                        b.to_ascii_uppercase()
                    } else {
                        b.to_ascii_lowercase()
                    }
                })
            })
            .collect();
        debug_assert_eq!(out.len(), bytes.len());
        super::super::udf::result(Arc::new(out), &args.args)
    }
}

fn case(inner: Arc<ScalarUDF>, upper: bool) -> ScalarUDF {
    ScalarUDF::new_from_impl(Case {
        inner,
        upper,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// `LOWER`, under DataFusion's name so that it replaces DataFusion's.
pub(super) fn lower() -> ScalarUDF {
    case(datafusion::functions::string::lower(), false)
}

/// `UPPER`, under DataFusion's name so that it replaces DataFusion's.
pub(super) fn upper() -> ScalarUDF {
    case(datafusion::functions::string::upper(), true)
}

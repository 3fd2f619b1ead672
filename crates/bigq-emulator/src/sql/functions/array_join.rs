//! `ARRAY_TO_STRING` of BYTES: the elements and the delimiter (and the NULL text) BYTES, the
//! result BYTES, as BigQuery gives (DataFusion's `array_to_string` takes no BYTES and
//! writes text). Arrays of STRING go to DataFusion's as they are.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, BinaryBuilder};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

#[derive(Debug, PartialEq, Eq, Hash)]
struct ArrayToString {
    /// `array_to_string`, or `bigq_string_agg_join` for the join of STRING_AGG.
    name: &'static str,
    inner: Arc<ScalarUDF>,
    signature: Signature,
}

fn binary_list(t: &DataType) -> bool {
    matches!(t, DataType::List(f) if matches!(f.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView))
}

impl ScalarUDFImpl for ArrayToString {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        if self.name == "array_to_string" {
            self.inner.aliases()
        } else {
            &[]
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        if args.first().is_some_and(binary_list) {
            let list = DataType::List(Arc::new(Field::new("item", DataType::Binary, true)));
            let mut out = vec![list];
            out.extend(args[1..].iter().map(|_| DataType::Binary));
            return Ok(out);
        }
        Ok(args
            .iter()
            .enumerate()
            .map(|(i, t)| match t {
                DataType::Null if i > 0 => DataType::Utf8,
                t => t.clone(),
            })
            .collect())
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        if args.first().is_some_and(binary_list) {
            return Ok(DataType::Binary);
        }
        self.inner.return_type(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        if !args
            .args
            .first()
            .is_some_and(|a| binary_list(&a.data_type()))
        {
            return self.inner.invoke_with_args(args);
        }
        let (arrays, n) = super::udf::arrays(&args.args)?;
        let lists = arrays[0].as_list::<i32>();
        let delimiters = arrays[1].as_binary::<i32>();
        let null_texts = arrays.get(2).map(|a| a.as_binary::<i32>());
        let mut out = BinaryBuilder::new();
        for i in 0..n {
            if lists.is_null(i) || delimiters.is_null(i) || null_texts.is_some_and(|t| t.is_null(i))
            {
                out.append_null();
                continue;
            }
            let items = lists.value(i);
            let items = items.as_binary::<i32>();
            let mut joined = Vec::new();
            let mut first = true;
            for k in 0..items.len() {
                let item = if items.is_null(k) {
                    // A NULL element is left out, or written as the NULL text when given.
                    match null_texts {
                        Some(t) => t.value(i),
                        None => continue,
                    }
                } else {
                    items.value(k)
                };
                if !first {
                    joined.extend_from_slice(delimiters.value(i));
                }
                joined.extend_from_slice(item);
                first = false;
            }
            out.append_value(joined);
        }
        super::udf::result(Arc::new(out.finish()), &args.args)
    }
}

fn join(name: &'static str) -> ScalarUDF {
    ScalarUDF::new_from_impl(ArrayToString {
        name,
        inner: datafusion::functions_nested::string::array_to_string_udf(),
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// `ARRAY_TO_STRING`, under DataFusion's name so that it replaces DataFusion's.
pub(super) fn array_to_string() -> ScalarUDF {
    join("array_to_string")
}

/// The join STRING_AGG is written with (the same, under a name its errors are shown by).
pub(super) fn string_agg_join() -> ScalarUDF {
    join("bigq_string_agg_join")
}

//! Array functions: `ARRAY(subquery)`, and `GENERATE_ARRAY` as DataFusion's
//! `generate_series`, but left for execution.
//!
//! `generate_series` is immutable, so DataFusion's simplifier evaluates a call with constant
//! bounds while planning and puts the whole array into the plan as one list literal. The
//! planner then names every expression over that literal by printing it, once per
//! optimizer pass: `FROM UNNEST(GENERATE_ARRAY(1, 200000))` spent about 60 ms formatting
//! 200,000 integers before its first row, most of such a query's time. Declared volatile,
//! the call stays a call and the array is made once, when the query runs.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr};

use super::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, function_args};
use crate::sql::parse::parse;

/// The name the rewrite gives `GENERATE_ARRAY`.
const GENERATE_ARRAY: &str = "bq_generate_array";

/// `generate_series` with a volatile signature.
#[derive(Debug, PartialEq, Eq, Hash)]
struct GenerateArray {
    series: Arc<ScalarUDF>,
    signature: Signature,
}

impl ScalarUDFImpl for GenerateArray {
    fn name(&self) -> &str {
        GENERATE_ARRAY
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        self.series.return_type(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        self.series.invoke_with_args(args)
    }
}

/// `bq_generate_array`: `generate_series` with a volatile signature.
pub(crate) fn bq_generate_array() -> ScalarUDF {
    let series = datafusion::functions_nested::range::gen_series_udf();
    let signature = Signature::new(
        series.signature().type_signature.clone(),
        Volatility::Volatile,
    );
    ScalarUDF::new_from_impl(GenerateArray { series, signature })
}

/// `GENERATE_ARRAY(start, end [, step])` as `bq_generate_array`.
pub(crate) fn generate_array(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let args = function_args(f).ok_or_else(|| BqError::unsupported("GENERATE_ARRAY arguments"))?;
    Ok(Some(call(GENERATE_ARRAY, args)))
}

/// `ARRAY(SELECT x ...)`: the one column aggregated, `[]` when there are no rows.
pub(crate) fn array(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let ast::FunctionArguments::Subquery(q) = &f.args else {
        return Ok(None);
    };
    let sql =
        format!("SELECT coalesce(array_agg(__array.__v), make_array()) FROM ({q}) AS __array(__v)");
    match parse(&sql)?.pop() {
        Some(ast::Statement::Query(wrapper)) => Ok(Some(Expr::Subquery(wrapper))),
        _ => Err(BqError::internal("ARRAY subquery")),
    }
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Array, &["ARRAY(subquery) -> ARRAY"], array),
    Function::rewrite(Family::Array, &["GENERATE_ARRAY(INT64, INT64[, INT64]) -> ARRAY<INT64>"], generate_array),
    Function::udf(Family::Array, &["bq_generate_array(INT64, INT64[, INT64]) -> ARRAY<INT64>"], bq_generate_array),
];

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Int64Array, ListArray};

    use super::*;

    /// The optimized plan keeps the call (a folded array would be a literal in its place),
    /// and the query still returns the array, bounds included.
    #[tokio::test]
    async fn stays_a_call_until_the_query_runs() {
        let ctx = datafusion::prelude::SessionContext::new();
        ctx.register_udf(bq_generate_array());
        let df = ctx
            .sql("SELECT bq_generate_array(2, 6) AS a")
            .await
            .unwrap();
        let plan = df.clone().into_optimized_plan().unwrap();
        let shown = format!("{}", plan.display_indent());
        assert!(
            shown.contains("bq_generate_array(Int64(2), Int64(6))"),
            "{shown}"
        );
        assert!(!shown.contains("[2, 3, 4, 5, 6]"), "{shown}");
        let batches = df.collect().await.unwrap();
        let list = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<ListArray>()
            .unwrap()
            .value(0);
        let values = list.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(values.values().to_vec(), vec![2, 3, 4, 5, 6]);
    }
}

//! `PERCENTILE_DISC(x, p [RESPECT NULLS | IGNORE NULLS]) OVER (...)`, a navigation function:
//! the first value, in ascending order (NULLs first when they are respected), whose
//! cumulative distribution reaches `p`. Made as an aggregate over the window's partition,
//! one for NULLs ignored (BigQuery's default) and one for NULLs respected, which the call is
//! rewritten to.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result as DfResult, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr, Ident, ObjectName, ObjectNamePart};

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};

/// The aggregate for NULLs ignored.
const IGNORING: &str = "bigq_percentile_disc";
/// The aggregate for NULLs respected.
const RESPECTING: &str = "bigq_percentile_disc_respect_nulls";

/// `PERCENTILE_DISC(x, p ...) OVER (...)` as the aggregate for its NULL treatment.
pub(crate) fn percentile_disc(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    if f.over.is_none() {
        return Err(BqError::invalid_query(
            "PERCENTILE_DISC is an analytic function: it needs an OVER clause",
        ));
    }
    let mut g = f.clone();
    let mut respect = matches!(g.null_treatment, Some(ast::NullTreatment::RespectNulls));
    g.null_treatment = None;
    if let ast::FunctionArguments::List(list) = &mut g.args {
        list.clauses.retain(|c| match c {
            ast::FunctionArgumentClause::IgnoreOrRespectNulls(t) => {
                respect = matches!(t, ast::NullTreatment::RespectNulls);
                false
            }
            _ => true,
        });
        if list.args.len() != 2 {
            return Err(BqError::invalid_query(
                "PERCENTILE_DISC takes a value and a percentile",
            ));
        }
    }
    let name = if respect { RESPECTING } else { IGNORING };
    g.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]);
    Ok(Some(Expr::Function(g)))
}

/// The two aggregates, for the session.
pub(crate) fn aggregates() -> [AggregateUDF; 2] {
    [
        AggregateUDF::from(PercentileDisc::new(IGNORING, false)),
        AggregateUDF::from(PercentileDisc::new(RESPECTING, true)),
    ]
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct PercentileDisc {
    name: &'static str,
    respect_nulls: bool,
    signature: Signature,
}

impl PercentileDisc {
    fn new(name: &'static str, respect_nulls: bool) -> Self {
        PercentileDisc {
            name,
            respect_nulls,
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for PercentileDisc {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        match args {
            [t, p] if p.is_numeric() || *p == DataType::Null => Ok(t.clone()),
            _ => plan_err!(
                "No matching signature for function PERCENTILE_DISC: it takes a value and a \
                 FLOAT64 or NUMERIC percentile"
            ),
        }
    }

    fn accumulator(&self, args: AccumulatorArgs) -> DfResult<Box<dyn Accumulator>> {
        Ok(Box::new(Values {
            values: Vec::new(),
            percentile: None,
            respect_nulls: self.respect_nulls,
            data_type: args.return_field.data_type().clone(),
        }))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> DfResult<Vec<FieldRef>> {
        let item = Field::new("item", args.return_field.data_type().clone(), true);
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[values]", args.name),
                DataType::List(Arc::new(item)),
                true,
            )),
            Arc::new(Field::new(
                format!("{}[percentile]", args.name),
                DataType::Float64,
                true,
            )),
        ])
    }
}

/// The values of a partition, and its percentile.
#[derive(Debug)]
struct Values {
    values: Vec<ScalarValue>,
    percentile: Option<f64>,
    respect_nulls: bool,
    data_type: DataType,
}

fn percentile_of(v: &ScalarValue) -> DfResult<Option<f64>> {
    if v.is_null() {
        return Ok(None);
    }
    match v.cast_to(&DataType::Float64)? {
        ScalarValue::Float64(p) => Ok(p),
        _ => Ok(None),
    }
}

impl Accumulator for Values {
    fn update_batch(&mut self, values: &[ArrayRef]) -> DfResult<()> {
        let (x, p) = (&values[0], &values[1]);
        for i in 0..x.len() {
            if self.percentile.is_none() {
                self.percentile = percentile_of(&ScalarValue::try_from_array(p, i)?)?;
            }
            if self.respect_nulls || x.is_valid(i) {
                self.values.push(ScalarValue::try_from_array(x, i)?);
            }
        }
        Ok(())
    }

    fn evaluate(&mut self) -> DfResult<ScalarValue> {
        let p = match self.percentile {
            Some(p) if (0.0..=1.0).contains(&p) => p,
            Some(p) => return exec_err!("Percentile argument must be in [0, 1]; got {p}"),
            None if self.values.is_empty() => return ScalarValue::try_from(&self.data_type),
            None => return exec_err!("Percentile argument of PERCENTILE_DISC cannot be NULL"),
        };
        if self.values.is_empty() {
            return ScalarValue::try_from(&self.data_type);
        }
        // NULL sorts before every value, as BigQuery orders them.
        self.values
            .sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let n = self.values.len();
        let index = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        Ok(self.values[index].clone())
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.values.iter().map(ScalarValue::size).sum::<usize>()
    }

    fn state(&mut self) -> DfResult<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::List(ScalarValue::new_list_nullable(
                &self.values,
                &self.data_type,
            )),
            ScalarValue::Float64(self.percentile),
        ])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> DfResult<()> {
        let (lists, p) = (&states[0], &states[1]);
        for i in 0..lists.len() {
            if self.percentile.is_none() {
                self.percentile = percentile_of(&ScalarValue::try_from_array(p, i)?)?;
            }
            if let ScalarValue::List(l) = ScalarValue::try_from_array(lists, i)?
                && l.is_valid(0)
            {
                let items = l.value(0);
                for j in 0..items.len() {
                    self.values.push(ScalarValue::try_from_array(&items, j)?);
                }
            }
        }
        Ok(())
    }
}

/// The functions this file makes, for the registry (the aggregates are added by
/// [`aggregates`]).
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Navigation, &["PERCENTILE_DISC(T, FLOAT64) -> T"], percentile_disc),
];

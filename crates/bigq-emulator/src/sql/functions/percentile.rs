//! `PERCENTILE_DISC(x, p [RESPECT NULLS | IGNORE NULLS]) OVER (...)`, a navigation function:
//! the first value, in ascending order (NULLs first when they are respected), whose
//! cumulative distribution reaches `p`; and `PERCENTILE_CONT(x, p ...) OVER (...)`, the value
//! at rank `p * (n - 1)` interpolated between its two neighbours (a NULL neighbour gives
//! the other's value). Made as aggregates over the window's partition, one for NULLs
//! ignored (BigQuery's default) and one for NULLs respected, which the call is rewritten to.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result as DfResult, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{self, Expr, Ident, ObjectName, ObjectNamePart};
use num_traits::ToPrimitive;

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};

/// The aggregates for NULLs ignored and respected.
const DISC: [&str; 2] = ["bigq_percentile_disc", "bigq_percentile_disc_respect_nulls"];
const CONT: [&str; 2] = ["bigq_percentile_cont", "bigq_percentile_cont_respect_nulls"];

/// `PERCENTILE_DISC(x, p ...) OVER (...)` as the aggregate for its NULL treatment.
pub(crate) fn percentile_disc(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    percentile(f, "PERCENTILE_DISC", DISC)
}

/// `PERCENTILE_CONT(x, p ...) OVER (...)` as the aggregate for its NULL treatment.
pub(crate) fn percentile_cont(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    percentile(f, "PERCENTILE_CONT", CONT)
}

fn percentile(f: &ast::Function, shown: &str, names: [&str; 2]) -> BqResult<Option<Expr>> {
    if f.over.is_none() {
        return Err(BqError::invalid_query(format!(
            "{shown} is an analytic function: it needs an OVER clause"
        )));
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
            return Err(BqError::invalid_query(format!(
                "{shown} takes a value and a percentile"
            )));
        }
    }
    let name = names[usize::from(respect)];
    g.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]);
    Ok(Some(Expr::Function(g)))
}

/// The four aggregates, for the session.
pub(crate) fn aggregates() -> [AggregateUDF; 4] {
    [
        AggregateUDF::from(Percentile::new(DISC[0], false, false)),
        AggregateUDF::from(Percentile::new(DISC[1], true, false)),
        AggregateUDF::from(Percentile::new(CONT[0], false, true)),
        AggregateUDF::from(Percentile::new(CONT[1], true, true)),
    ]
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Percentile {
    name: &'static str,
    respect_nulls: bool,
    /// PERCENTILE_CONT (else PERCENTILE_DISC).
    cont: bool,
    signature: Signature,
}

impl Percentile {
    fn new(name: &'static str, respect_nulls: bool, cont: bool) -> Self {
        Percentile {
            name,
            respect_nulls,
            cont,
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for Percentile {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        let decimal =
            |t: &DataType| matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..));
        match args {
            // NUMERIC and BIGNUMERIC stay exact when the percentile is one of them too;
            // anything else is FLOAT64.
            [t, p] if self.cont && decimal(t) && decimal(p) => Ok(t.clone()),
            [t, p] if self.cont && (t.is_numeric() || *t == DataType::Null) && p.is_numeric() => {
                Ok(DataType::Float64)
            }
            [_, _] if self.cont => plan_err!(
                "No matching signature for function PERCENTILE_CONT: it takes a FLOAT64, \
                 NUMERIC or BIGNUMERIC value and percentile"
            ),
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
            cont: self.cont,
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

/// The values of a partition (of the result's type), and its percentile.
#[derive(Debug)]
struct Values {
    values: Vec<ScalarValue>,
    percentile: Option<f64>,
    respect_nulls: bool,
    cont: bool,
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
                let v = ScalarValue::try_from_array(x, i)?;
                self.values.push(if self.cont {
                    v.cast_to(&self.data_type)?
                } else {
                    v
                });
            }
        }
        Ok(())
    }

    fn evaluate(&mut self) -> DfResult<ScalarValue> {
        let p = match self.percentile {
            Some(p) if (0.0..=1.0).contains(&p) => p,
            Some(p) => return exec_err!("Percentile argument must be in [0, 1]; got {p}"),
            None if self.values.is_empty() => return ScalarValue::try_from(&self.data_type),
            None if self.cont => {
                return exec_err!("Percentile argument of PERCENTILE_CONT cannot be NULL");
            }
            None => return exec_err!("Percentile argument of PERCENTILE_DISC cannot be NULL"),
        };
        if self.values.is_empty() {
            return ScalarValue::try_from(&self.data_type);
        }
        // NULL sorts before every value, as BigQuery orders them.
        self.values
            .sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let n = self.values.len();
        if self.cont {
            let rank = p * (n - 1) as f64;
            let (lo, hi) = (rank.floor() as usize, (rank.ceil() as usize).min(n - 1));
            return interpolate(&self.values[lo], &self.values[hi], rank - rank.floor());
        }
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

/// The value a fraction `f` of the way from `lo` to `hi` (FLOAT64, or NUMERIC and
/// BIGNUMERIC rounded to their scale); where one of them is NULL, the other.
fn interpolate(lo: &ScalarValue, hi: &ScalarValue, f: f64) -> DfResult<ScalarValue> {
    if f == 0.0 || hi.is_null() {
        return Ok(lo.clone());
    }
    if lo.is_null() {
        return Ok(hi.clone());
    }
    match (lo, hi) {
        (ScalarValue::Float64(Some(a)), ScalarValue::Float64(Some(b))) => {
            Ok(ScalarValue::Float64(Some(a + (b - a) * f)))
        }
        (ScalarValue::Decimal128(Some(a), p, s), ScalarValue::Decimal128(Some(b), _, _)) => {
            let step = ((b - a) as f64 * f).round() as i128;
            Ok(ScalarValue::Decimal128(Some(a + step), *p, *s))
        }
        (ScalarValue::Decimal256(Some(a), p, s), ScalarValue::Decimal256(Some(b), _, _)) => {
            let diff = b.wrapping_sub(*a);
            let step = ToPrimitive::to_f64(&diff)
                .and_then(|d| datafusion::arrow::datatypes::i256::from_f64((d * f).round()))
                .unwrap_or_default();
            Ok(ScalarValue::Decimal256(Some(a.wrapping_add(step)), *p, *s))
        }
        _ => exec_err!("PERCENTILE_CONT of {lo:?} and {hi:?}"),
    }
}

/// The functions this file makes, for the registry (the aggregates are added by
/// [`aggregates`]).
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Navigation, &["PERCENTILE_DISC(T, FLOAT64) -> T"], percentile_disc),
    Function::rewrite(Family::Navigation, &["PERCENTILE_CONT(FLOAT64, FLOAT64) -> FLOAT64"], percentile_cont),
];

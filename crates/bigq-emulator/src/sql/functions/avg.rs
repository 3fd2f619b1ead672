//! `AVG` with BigQuery's result types: the average of NUMERIC is a NUMERIC and of BIGNUMERIC
//! a BIGNUMERIC, rounded half away from zero to the input's scale. DataFusion's AVG widens a
//! decimal by four digits of scale (`1.6666666666666` for the average of 1, 2 and 2, where
//! BigQuery gives `1.666666667`); here it computes at that scale and the result is rounded
//! back. Every other type is DataFusion's AVG as it is.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::functions_aggregate::average::Avg;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, EmitTo, GroupsAccumulator,
    ReversedUDAF, Signature,
};

/// BigQuery's AVG, registered under DataFusion's name so that it replaces DataFusion's.
pub(crate) fn avg_udaf() -> AggregateUDF {
    AggregateUDF::new_from_impl(BqAvg::default())
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct BqAvg {
    inner: Avg,
}

fn decimal(t: &DataType) -> bool {
    matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..))
}

impl BqAvg {
    /// The result field DataFusion's AVG computes for a decimal input.
    fn inner_field(&self, input: &DataType, name: &str) -> Result<FieldRef> {
        let t = self.inner.return_type(std::slice::from_ref(input))?;
        Ok(Arc::new(Field::new(name, t, true)))
    }

    /// `args` as DataFusion's AVG needs them for a decimal input (its own, wider, result
    /// type), or `None` for any other input.
    fn inner_args<'a>(&self, args: &AccumulatorArgs<'a>) -> Result<Option<AccumulatorArgs<'a>>> {
        let Some(input) = args.expr_fields.first().map(|f| f.data_type()) else {
            return Ok(None);
        };
        if !decimal(input) {
            return Ok(None);
        }
        let return_field = self.inner_field(input, args.return_field.name())?;
        Ok(Some(AccumulatorArgs {
            return_field,
            ..args.clone()
        }))
    }
}

impl AggregateUDFImpl for BqAvg {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types.first() {
            Some(t) if decimal(t) => Ok(t.clone()),
            _ => self.inner.return_type(arg_types),
        }
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match self.inner_args(&args)? {
            Some(inner) => Ok(Box::new(Rounded {
                inner: self.inner.accumulator(inner)?,
                to: args.return_type().clone(),
            })),
            None => self.inner.accumulator(args),
        }
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        match args.input_fields.first().map(|f| f.data_type()) {
            Some(input) if decimal(input) => {
                let return_field = self.inner_field(input, args.return_field.name())?;
                self.inner.state_fields(StateFieldsArgs {
                    return_field,
                    ..args
                })
            }
            _ => self.inner.state_fields(args),
        }
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        match self.inner_args(&args) {
            Ok(Some(inner)) => self.inner.groups_accumulator_supported(inner),
            Ok(None) => self.inner.groups_accumulator_supported(args),
            Err(_) => false,
        }
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        match self.inner_args(&args)? {
            Some(inner) => Ok(Box::new(RoundedGroups {
                inner: self.inner.create_groups_accumulator(inner)?,
                to: args.return_type().clone(),
            })),
            None => self.inner.create_groups_accumulator(args),
        }
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        ReversedUDAF::Identical
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// DataFusion's average of one group (or window frame), rounded to `to` when made.
#[derive(Debug)]
struct Rounded {
    inner: Box<dyn Accumulator>,
    to: DataType,
}

impl Accumulator for Rounded {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.inner.update_batch(values)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.inner.retract_batch(values)
    }

    fn supports_retract_batch(&self) -> bool {
        self.inner.supports_retract_batch()
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.inner.merge_batch(states)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.inner.state()
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        // Arrow's decimal casts to a smaller scale round half away from zero.
        self.inner.evaluate()?.cast_to(&self.to)
    }

    fn size(&self) -> usize {
        self.inner.size() + size_of::<Self>()
    }
}

/// DataFusion's averages of many groups, rounded to `to` when made.
struct RoundedGroups {
    inner: Box<dyn GroupsAccumulator>,
    to: DataType,
}

impl GroupsAccumulator for RoundedGroups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.inner
            .update_batch(values, group_indices, opt_filter, total_num_groups)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.inner
            .merge_batch(values, group_indices, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        Ok(cast(&self.inner.evaluate(emit_to)?, &self.to)?)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.inner.state(emit_to)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        self.inner.convert_to_state(values, opt_filter)
    }

    fn size(&self) -> usize {
        self.inner.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{AsArray, Decimal128Array, RecordBatch};
    use datafusion::arrow::datatypes::{Decimal128Type, Schema};
    use datafusion::prelude::SessionContext;

    async fn averages(sql: &str) -> Vec<Option<i128>> {
        let ctx = SessionContext::new();
        ctx.register_udaf(avg_udaf());
        let t = DataType::Decimal128(38, 9);
        let schema = Arc::new(Schema::new(vec![
            Field::new("g", DataType::Int64, false),
            Field::new("x", t.clone(), true),
        ]));
        let x = Decimal128Array::from(vec![
            Some(1_000_000_000),
            Some(2_000_000_000),
            Some(2_000_000_000),
            Some(-1_000_000_000),
            Some(-2_000_000_000),
            Some(-2_000_000_000),
            None,
        ])
        .with_data_type(t);
        let g = datafusion::arrow::array::Int64Array::from(vec![1, 1, 1, 2, 2, 2, 3]);
        let batch = RecordBatch::try_new(schema, vec![Arc::new(g), Arc::new(x)]).unwrap();
        ctx.register_batch("t", batch).unwrap();
        let out = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        let mut values = Vec::new();
        for b in &out {
            assert_eq!(b.column(0).data_type(), &DataType::Decimal128(38, 9));
            values.extend(b.column(0).as_primitive::<Decimal128Type>().iter());
        }
        values
    }

    #[tokio::test]
    async fn numeric_averages_round_half_away_from_zero_to_nine_digits() {
        // 5/3 = 1.6666666666..., -5/3 the same below zero; an empty group is NULL.
        let grouped = averages("SELECT AVG(x) FROM t GROUP BY g ORDER BY g").await;
        assert_eq!(
            grouped,
            vec![Some(1_666_666_667), Some(-1_666_666_667), None]
        );
        let all = averages("SELECT AVG(x) FROM t WHERE g = 1").await;
        assert_eq!(all, vec![Some(1_666_666_667)]);
        let windowed =
            averages("SELECT AVG(x) OVER (PARTITION BY g) FROM t WHERE g = 2 LIMIT 1").await;
        assert_eq!(windowed, vec![Some(-1_666_666_667)]);
    }
}

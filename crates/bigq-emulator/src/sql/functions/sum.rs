//! `SUM` with BigQuery's overflow errors: DataFusion's SUM wraps an INT64 total and lets a
//! NUMERIC total leave NUMERIC's 38 digits; BigQuery fails the query ("int64 overflow",
//! "numeric overflow"). INT64 and NUMERIC totals are kept in 256 bits, so a sum that
//! overflows on the way and comes back in range is not an error whatever the order the rows
//! arrive in, and checked when the result is made. Every other type, and `SUM(DISTINCT ..)`,
//! is DataFusion's SUM.

use std::mem::size_of;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Decimal256Array, Int64Array,
};
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, Decimal256Type, Field, FieldRef, Int64Type, i256,
};
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, EmitTo, GroupsAccumulator,
    ReversedUDAF, SetMonotonicity, Signature,
};

/// BigQuery's SUM, registered under DataFusion's name so that it replaces DataFusion's.
pub(crate) fn sum_udaf() -> AggregateUDF {
    AggregateUDF::new_from_impl(BqSum::default())
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct BqSum {
    inner: Sum,
}

/// What a checked total is of, and so how it is bounded.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Int64,
    /// NUMERIC, with its scale: at most 38 digits.
    Numeric(i8),
}

impl Kind {
    fn of(args: &AccumulatorArgs) -> Option<Kind> {
        if args.is_distinct {
            return None;
        }
        match args.return_field.data_type() {
            DataType::Int64 => Some(Kind::Int64),
            DataType::Decimal128(_, s) => Some(Kind::Numeric(*s)),
            _ => None,
        }
    }

    fn state_type(self) -> DataType {
        match self {
            Kind::Int64 => DataType::Decimal256(76, 0),
            Kind::Numeric(s) => DataType::Decimal256(76, s),
        }
    }

    /// The value at each row of the input (or of a partial state), the array downcast once
    /// per batch rather than once per row.
    fn reader(self, values: &dyn Array, state: bool) -> Box<dyn Fn(usize) -> i256 + '_> {
        if state {
            let a = values.as_primitive::<Decimal256Type>();
            return Box::new(move |i| a.value(i));
        }
        match self {
            Kind::Int64 => {
                let a = values.as_primitive::<Int64Type>();
                Box::new(move |i| i256::from_i128(a.value(i).into()))
            }
            Kind::Numeric(_) => {
                let a = values.as_primitive::<Decimal128Type>();
                Box::new(move |i| i256::from_i128(a.value(i)))
            }
        }
    }

    /// The total as the result type, or BigQuery's overflow error.
    fn check(self, sum: i256) -> Result<i128> {
        match self {
            Kind::Int64 => match sum.to_i128().and_then(|v| i64::try_from(v).ok()) {
                Some(v) => Ok(v.into()),
                None => exec_err!("int64 overflow: SUM exceeds the range of INT64"),
            },
            Kind::Numeric(_) => {
                let max = i256::from_i128(10i128.pow(38) - 1);
                match sum.to_i128() {
                    Some(v) if sum <= max && sum >= max.wrapping_neg() => Ok(v),
                    _ => exec_err!("numeric overflow: SUM exceeds the range of NUMERIC"),
                }
            }
        }
    }

    fn result_array(self, values: Vec<Option<i128>>, return_type: &DataType) -> Result<ArrayRef> {
        Ok(match self {
            Kind::Int64 => Arc::new(Int64Array::from_iter(
                values.into_iter().map(|v| v.map(|v| v as i64)),
            )),
            Kind::Numeric(_) => {
                Arc::new(Decimal128Array::from_iter(values).with_data_type(return_type.clone()))
            }
        })
    }

    fn state_array(self, sums: Vec<Option<i256>>) -> ArrayRef {
        Arc::new(Decimal256Array::from_iter(sums).with_data_type(self.state_type()))
    }
}

impl AggregateUDFImpl for BqSum {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match Kind::of(&args) {
            Some(kind) => Ok(Box::new(CheckedSum::new(
                kind,
                args.return_field.data_type(),
            ))),
            None => self.inner.accumulator(args),
        }
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let kind = match args.return_type() {
            DataType::Int64 if !args.is_distinct => Kind::Int64,
            DataType::Decimal128(_, s) if !args.is_distinct => Kind::Numeric(*s),
            _ => return self.inner.state_fields(args),
        };
        Ok(vec![
            Arc::new(Field::new(
                format_state_name(args.name, "sum"),
                kind.state_type(),
                true,
            )),
            Arc::new(Field::new(
                format_state_name(args.name, "count"),
                DataType::Int64,
                true,
            )),
        ])
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        match Kind::of(&args) {
            Some(kind) => Ok(Box::new(CheckedGroups {
                kind,
                return_type: args.return_field.data_type().clone(),
                sums: Vec::new(),
                counts: Vec::new(),
            })),
            None => self.inner.create_groups_accumulator(args),
        }
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match Kind::of(&args) {
            Some(kind) => Ok(Box::new(CheckedSum::new(
                kind,
                args.return_field.data_type(),
            ))),
            None => self.inner.create_sliding_accumulator(args),
        }
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        ReversedUDAF::Identical
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        AggregateOrderSensitivity::Insensitive
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.set_monotonicity(data_type)
    }
}

/// A checked total over one group (or one window frame: rows can be retracted).
#[derive(Debug)]
struct CheckedSum {
    kind: Kind,
    return_type: DataType,
    sum: i256,
    count: i64,
}

impl CheckedSum {
    fn new(kind: Kind, return_type: &DataType) -> CheckedSum {
        CheckedSum {
            kind,
            return_type: return_type.clone(),
            sum: i256::ZERO,
            count: 0,
        }
    }
}

impl Accumulator for CheckedSum {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let v = values[0].as_ref();
        let value = self.kind.reader(v, false);
        for i in 0..v.len() {
            if v.is_valid(i) {
                self.sum = self.sum.wrapping_add(value(i));
                self.count += 1;
            }
        }
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let v = values[0].as_ref();
        let value = self.kind.reader(v, false);
        for i in 0..v.len() {
            if v.is_valid(i) {
                self.sum = self.sum.wrapping_sub(value(i));
                self.count -= 1;
            }
        }
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (sums, counts) = (states[0].as_ref(), states[1].as_primitive::<Int64Type>());
        let value = self.kind.reader(sums, true);
        for i in 0..sums.len() {
            if sums.is_valid(i) {
                self.sum = self.sum.wrapping_add(value(i));
                self.count += counts.value(i);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let DataType::Decimal256(p, s) = self.kind.state_type() else {
            unreachable!("the state of a checked SUM is a Decimal256")
        };
        Ok(vec![
            ScalarValue::Decimal256(Some(self.sum), p, s),
            ScalarValue::Int64(Some(self.count)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let value = if self.count == 0 {
            None
        } else {
            Some(self.kind.check(self.sum)?)
        };
        Ok(match (self.kind, &self.return_type) {
            (Kind::Int64, _) => ScalarValue::Int64(value.map(|v| v as i64)),
            (Kind::Numeric(_), DataType::Decimal128(p, s)) => {
                ScalarValue::Decimal128(value, *p, *s)
            }
            (Kind::Numeric(s), _) => ScalarValue::Decimal128(value, 38, s),
        })
    }

    fn size(&self) -> usize {
        size_of::<Self>()
    }
}

/// Checked totals of many groups at once, for grouped aggregation.
struct CheckedGroups {
    kind: Kind,
    return_type: DataType,
    sums: Vec<i256>,
    counts: Vec<i64>,
}

impl CheckedGroups {
    fn add_rows(
        &mut self,
        values: &dyn Array,
        counts: Option<&Int64Array>,
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) {
        self.sums.resize(total_num_groups, i256::ZERO);
        self.counts.resize(total_num_groups, 0);
        let value = self.kind.reader(values, counts.is_some());
        for (i, &g) in group_indices.iter().enumerate() {
            let kept = opt_filter.is_none_or(|f| f.is_valid(i) && f.value(i));
            if !kept || !values.is_valid(i) {
                continue;
            }
            self.sums[g] = self.sums[g].wrapping_add(value(i));
            self.counts[g] += counts.map_or(1, |c| c.value(i));
        }
    }
}

impl GroupsAccumulator for CheckedGroups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.add_rows(
            values[0].as_ref(),
            None,
            group_indices,
            opt_filter,
            total_num_groups,
        );
        Ok(())
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        let counts = values[1].as_primitive::<Int64Type>();
        self.add_rows(
            values[0].as_ref(),
            Some(counts),
            group_indices,
            None,
            total_num_groups,
        );
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let sums = emit_to.take_needed(&mut self.sums);
        let counts = emit_to.take_needed(&mut self.counts);
        let values = sums
            .into_iter()
            .zip(counts)
            .map(|(s, c)| {
                if c == 0 {
                    Ok(None)
                } else {
                    self.kind.check(s).map(Some)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        self.kind.result_array(values, &self.return_type)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let sums = emit_to.take_needed(&mut self.sums);
        let counts = emit_to.take_needed(&mut self.counts);
        Ok(vec![
            self.kind.state_array(sums.into_iter().map(Some).collect()),
            Arc::new(Int64Array::from(counts)),
        ])
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let v = values[0].as_ref();
        let (mut sums, mut counts) = (Vec::with_capacity(v.len()), Vec::with_capacity(v.len()));
        let value = self.kind.reader(v, false);
        for i in 0..v.len() {
            let kept = opt_filter.is_none_or(|f| f.is_valid(i) && f.value(i));
            let mut sum = i256::ZERO;
            if kept && v.is_valid(i) {
                sum = value(i);
                counts.push(1);
            } else {
                counts.push(0);
            }
            sums.push(Some(sum));
        }
        Ok(vec![
            self.kind.state_array(sums),
            Arc::new(Int64Array::from(counts)),
        ])
    }

    fn size(&self) -> usize {
        self.sums.capacity() * size_of::<i256>() + self.counts.capacity() * size_of::<i64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(kind: Kind, return_type: DataType) -> CheckedGroups {
        CheckedGroups {
            kind,
            return_type,
            sums: Vec::new(),
            counts: Vec::new(),
        }
    }

    #[test]
    fn int64_totals_are_checked_when_made() {
        let mut g = groups(Kind::Int64, DataType::Int64);
        let values: ArrayRef = Arc::new(Int64Array::from(vec![
            Some(i64::MAX),
            Some(1),
            Some(-1),
            Some(5),
            None,
        ]));
        // Group 0 overflows on the way and comes back; group 1 overflows; group 2 is NULL.
        g.update_batch(&[values], &[0, 0, 0, 1, 2], None, 3)
            .unwrap();
        let more: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX]));
        g.update_batch(&[more], &[1], None, 3).unwrap();
        let err = g.evaluate(EmitTo::All).unwrap_err().to_string();
        assert!(err.contains("int64 overflow"), "{err}");

        let mut g = groups(Kind::Int64, DataType::Int64);
        let values: ArrayRef = Arc::new(Int64Array::from(vec![
            Some(i64::MAX),
            Some(1),
            Some(-1),
            None,
        ]));
        g.update_batch(&[values], &[0, 0, 0, 1], None, 2).unwrap();
        let out = g.evaluate(EmitTo::All).unwrap();
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.value(0), i64::MAX);
        assert!(out.is_null(1));
    }

    #[test]
    fn partial_states_merge_and_windows_retract() {
        let mut a = CheckedSum::new(Kind::Int64, &DataType::Int64);
        a.update_batch(&[Arc::new(Int64Array::from(vec![i64::MAX, 10]))])
            .unwrap();
        let state = a.state().unwrap();
        let mut b = CheckedSum::new(Kind::Int64, &DataType::Int64);
        b.update_batch(&[Arc::new(Int64Array::from(vec![-20]))])
            .unwrap();
        let arrays = state
            .iter()
            .map(|v| v.to_array())
            .collect::<Result<Vec<_>>>()
            .unwrap();
        b.merge_batch(&arrays).unwrap();
        assert_eq!(
            b.evaluate().unwrap(),
            ScalarValue::Int64(Some(i64::MAX - 10))
        );
        b.retract_batch(&[Arc::new(Int64Array::from(vec![-20]))])
            .unwrap();
        assert!(b.evaluate().is_err());
    }

    #[test]
    fn numeric_totals_stay_within_38_digits() {
        let t = DataType::Decimal128(38, 9);
        let mut a = CheckedSum::new(Kind::Numeric(9), &t);
        let big = 10i128.pow(38) - 1;
        let values: ArrayRef =
            Arc::new(Decimal128Array::from(vec![big, 1]).with_data_type(t.clone()));
        a.update_batch(&[values]).unwrap();
        let err = a.evaluate().unwrap_err().to_string();
        assert!(err.contains("numeric overflow"), "{err}");
        a.retract_batch(&[Arc::new(
            Decimal128Array::from(vec![1]).with_data_type(t.clone()),
        )])
        .unwrap();
        assert_eq!(
            a.evaluate().unwrap(),
            ScalarValue::Decimal128(Some(big), 38, 9)
        );
    }
}

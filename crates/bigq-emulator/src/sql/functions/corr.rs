//! `CORR` with BigQuery's results: the Pearson coefficient of the pairs where neither value
//! is NULL; NULL for fewer than two pairs; NaN when either side has no variance or holds a
//! NaN or an infinity. (DataFusion's CORR, after PostgreSQL, gives NULL for both.)
//!
//! Computed in one pass with Welford's co-moments and merged across partitions by Chan's
//! formulas. A sliding window frame keeps its pairs and computes each frame afresh: taking
//! a pair back out of the moments is not exact in floating point, and would turn the NaN of
//! a frame with no variance into a 0.

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Float64Type, UInt64Type};
use datafusion::common::{Result, ScalarValue, internal_err};
use datafusion::functions_aggregate::correlation::Correlation;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, ReversedUDAF, Signature,
};

/// BigQuery's CORR, registered under DataFusion's name so that it replaces DataFusion's.
pub(crate) fn corr_udaf() -> AggregateUDF {
    AggregateUDF::new_from_impl(BqCorr::default())
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct BqCorr {
    inner: Correlation,
}

impl AggregateUDFImpl for BqCorr {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::<Moments>::default())
    }

    fn create_sliding_accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::<Frame>::default())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let field = |n: &str, t: DataType| -> FieldRef {
            Arc::new(Field::new(format!("{}[{n}]", args.name), t, true))
        };
        Ok(vec![
            field("count", DataType::UInt64),
            field("mean_x", DataType::Float64),
            field("mean_y", DataType::Float64),
            field("m2_x", DataType::Float64),
            field("m2_y", DataType::Float64),
            field("c_xy", DataType::Float64),
        ])
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        ReversedUDAF::Identical
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// The count, means and second (co-)moments of the pairs seen.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Moments {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    m2_x: f64,
    m2_y: f64,
    c_xy: f64,
}

impl Moments {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        let dy = y - self.mean_y;
        self.mean_x += dx / n;
        self.mean_y += dy / n;
        self.m2_x += dx * (x - self.mean_x);
        self.m2_y += dy * (y - self.mean_y);
        self.c_xy += dx * (y - self.mean_y);
    }

    fn merge(&mut self, o: &Moments) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let (na, nb) = (self.n as f64, o.n as f64);
        let n = na + nb;
        let dx = o.mean_x - self.mean_x;
        let dy = o.mean_y - self.mean_y;
        self.m2_x += o.m2_x + dx * dx * na * nb / n;
        self.m2_y += o.m2_y + dy * dy * na * nb / n;
        self.c_xy += o.c_xy + dx * dy * na * nb / n;
        self.mean_x += dx * nb / n;
        self.mean_y += dy * nb / n;
        self.n += o.n;
    }
}

/// The pairs of a batch as FLOAT64, each pair with a NULL left out.
fn pairs(values: &[ArrayRef]) -> Result<Vec<(f64, f64)>> {
    let y = cast(&values[0], &DataType::Float64)?;
    let x = cast(&values[1], &DataType::Float64)?;
    let (y, x) = (
        y.as_primitive::<Float64Type>(),
        x.as_primitive::<Float64Type>(),
    );
    Ok((0..x.len())
        .filter(|&i| x.is_valid(i) && y.is_valid(i))
        .map(|i| (x.value(i), y.value(i)))
        .collect())
}

impl Accumulator for Moments {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for (x, y) in pairs(values)? {
            self.add(x, y);
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let n = states[0].as_primitive::<UInt64Type>();
        let f = |i: usize| states[i].as_primitive::<Float64Type>();
        let (mx, my, m2x, m2y, cxy) = (f(1), f(2), f(3), f(4), f(5));
        for i in 0..n.len() {
            if n.is_null(i) {
                continue;
            }
            self.merge(&Moments {
                n: n.value(i),
                mean_x: mx.value(i),
                mean_y: my.value(i),
                m2_x: m2x.value(i),
                m2_y: m2y.value(i),
                c_xy: cxy.value(i),
            });
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::UInt64(Some(self.n)),
            ScalarValue::Float64(Some(self.mean_x)),
            ScalarValue::Float64(Some(self.mean_y)),
            ScalarValue::Float64(Some(self.m2_x)),
            ScalarValue::Float64(Some(self.m2_y)),
            ScalarValue::Float64(Some(self.c_xy)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.n < 2 {
            return Ok(ScalarValue::Float64(None));
        }
        // No variance on a side is 0 / 0: NaN, as BigQuery gives.
        let r = self.c_xy / (self.m2_x * self.m2_y).sqrt();
        Ok(ScalarValue::Float64(Some(r)))
    }

    fn size(&self) -> usize {
        size_of::<Self>()
    }
}

/// The pairs of a sliding window frame, oldest first (a frame gives rows back in the order
/// it took them).
#[derive(Debug, Default)]
struct Frame {
    pairs: VecDeque<(f64, f64)>,
}

impl Accumulator for Frame {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.pairs.extend(pairs(values)?);
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let n = pairs(values)?.len();
        self.pairs.drain(..n.min(self.pairs.len()));
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, _: &[ArrayRef]) -> Result<()> {
        internal_err!("CORR over a window frame is not merged")
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.moments().state()
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        self.moments().evaluate()
    }

    fn size(&self) -> usize {
        size_of::<Self>() + self.pairs.capacity() * size_of::<(f64, f64)>()
    }
}

impl Frame {
    fn moments(&self) -> Moments {
        let mut m = Moments::default();
        self.pairs.iter().for_each(|&(x, y)| m.add(x, y));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_moments_match_one_pass() {
        let data = [(1.0, 5.0), (3.0, 9.0), (4.0, 7.0), (2.5, -1.0), (8.0, 0.5)];
        let mut all = Moments::default();
        data.iter().for_each(|&(x, y)| all.add(x, y));
        let (mut a, mut b) = (Moments::default(), Moments::default());
        data[..2].iter().for_each(|&(x, y)| a.add(x, y));
        data[2..].iter().for_each(|&(x, y)| b.add(x, y));
        a.merge(&b);
        let close = |p: f64, q: f64| (p - q).abs() < 1e-12 * p.abs().max(1.0);
        assert!(close(a.c_xy, all.c_xy) && close(a.m2_x, all.m2_x) && a.n == all.n);
        assert!(close(a.mean_y, all.mean_y) && close(a.m2_y, all.m2_y));
    }

    #[test]
    fn no_variance_is_nan_and_one_pair_null() {
        let mut m = Moments::default();
        m.add(0.0, 0.0);
        assert_eq!(m.evaluate().unwrap(), ScalarValue::Float64(None));
        m.add(0.0, 0.0);
        assert!(matches!(m.evaluate().unwrap(), ScalarValue::Float64(Some(v)) if v.is_nan()));
    }
}

//! MERGE as BigQuery runs it, over the target's rows and the source's: each target row
//! paired with the source rows the ON condition matches, then each row handed to the first
//! WHEN clause of its kind whose condition holds.
//!
//! DataFusion's MERGE plan gives the ON condition and the WHEN clauses as expressions over
//! the target's columns followed by the source's; this is the execution of that plan, which
//! DataFusion leaves to the table provider.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, UInt32Array, new_null_array,
};
use datafusion::arrow::compute::{cast, filter_record_batch, take};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::Result;
use datafusion::error::DataFusionError;
use datafusion::physical_plan::PhysicalExpr;

use super::staged::{Staged, pick_rows};
use crate::error::BqError;
use crate::sql::exec::output::DmlStats;

/// Which rows a WHEN clause is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum When {
    Matched,
    NotMatchedByTarget,
    NotMatchedBySource,
}

/// What a WHEN clause does; columns are target column positions.
#[derive(Debug)]
pub(super) enum Action {
    Update(Vec<(usize, Arc<dyn PhysicalExpr>)>),
    Insert(Vec<(usize, Arc<dyn PhysicalExpr>)>),
    Delete,
}

#[derive(Debug)]
pub(super) struct Clause {
    pub kind: When,
    pub predicate: Option<Arc<dyn PhysicalExpr>>,
    pub action: Action,
}

/// A planned MERGE: expressions over `combined` (the target's columns, then the source's).
#[derive(Debug)]
pub(super) struct MergePlan {
    pub combined: SchemaRef,
    pub on: Arc<dyn PhysicalExpr>,
    pub clauses: Vec<Clause>,
}

/// BigQuery's error for a target row that two source rows would change.
pub(super) fn one_source_row() -> BqError {
    BqError::invalid_query("UPDATE/MERGE must match at most one source row for each target row")
}

fn bq(e: BqError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Pairs of (target row, source row) looked at per evaluation of ON. ON is evaluated over
/// every pair, so any condition (not only equalities) pairs rows as BigQuery does; the cost
/// grows with target rows times source rows.
const BLOCK: usize = 8192;

/// Runs `plan` over `target` (the table's rows, in `table` schema) and `source`.
pub(super) fn run(
    plan: &MergePlan,
    table: &SchemaRef,
    target: &RecordBatch,
    source: &RecordBatch,
) -> Result<Staged> {
    let (nt, ns) = (target.num_rows(), source.num_rows());
    let rows = Rows {
        plan,
        target,
        source,
    };
    // Every (target, source) pair the ON condition holds for.
    let (mut pt, mut ps) = (Vec::new(), Vec::new());
    let total = nt * ns;
    let mut k = 0;
    while k < total {
        let end = (k + BLOCK).min(total);
        let ti = UInt32Array::from_iter_values((k..end).map(|p| (p / ns) as u32));
        let si = UInt32Array::from_iter_values((k..end).map(|p| (p % ns) as u32));
        let batch = rows.combine(Some(&ti), Some(&si))?;
        let hit = truth(&plan.on, &batch)?;
        for (j, h) in hit.into_iter().enumerate() {
            if h {
                pt.push(ti.value(j));
                ps.push(si.value(j));
            }
        }
        k = end;
    }
    let mut matches = vec![0usize; nt];
    let mut source_matched = vec![false; ns];
    for (&t, &s) in pt.iter().zip(&ps) {
        matches[t as usize] += 1;
        source_matched[s as usize] = true;
    }

    let mut stats = DmlStats::default();
    // For each target row: kept (None), deleted, or replaced by a row of `updates`.
    let mut fate: Vec<Fate> = vec![Fate::Keep; nt];
    let mut updates: Vec<RecordBatch> = Vec::new();
    let mut inserts: Vec<RecordBatch> = Vec::new();

    // Matched pairs.
    let pair_t = UInt32Array::from(pt);
    let pair_s = UInt32Array::from(ps);
    let matched = rows.combine(Some(&pair_t), Some(&pair_s))?;
    let chosen = choose(plan, When::Matched, &matched)?;
    for (j, c) in chosen.iter().enumerate() {
        if c.is_some() && matches[pair_t.value(j) as usize] > 1 {
            return Err(bq(one_source_row()));
        }
    }
    apply(
        plan,
        table,
        &matched,
        &chosen,
        |j| pair_t.value(j) as usize,
        &mut fate,
        &mut updates,
        &mut inserts,
        &mut stats,
    )?;

    // Target rows no source row matched.
    let lone_t =
        UInt32Array::from_iter_values((0..nt as u32).filter(|&t| matches[t as usize] == 0));
    let by_source = rows.combine(Some(&lone_t), None)?;
    let chosen = choose(plan, When::NotMatchedBySource, &by_source)?;
    apply(
        plan,
        table,
        &by_source,
        &chosen,
        |j| lone_t.value(j) as usize,
        &mut fate,
        &mut updates,
        &mut inserts,
        &mut stats,
    )?;

    // Source rows that matched no target row.
    let lone_s =
        UInt32Array::from_iter_values((0..ns as u32).filter(|&s| !source_matched[s as usize]));
    let by_target = rows.combine(None, Some(&lone_s))?;
    let chosen = choose(plan, When::NotMatchedByTarget, &by_target)?;
    apply(
        plan,
        table,
        &by_target,
        &chosen,
        |_| usize::MAX,
        &mut fate,
        &mut updates,
        &mut inserts,
        &mut stats,
    )?;

    let picks = fate
        .iter()
        .enumerate()
        .filter_map(|(t, f)| match f {
            Fate::Keep => Some((0, t)),
            Fate::Delete => None,
            Fate::Update(b, r) => Some((b + 1, *r)),
        })
        .collect::<Vec<_>>();
    let mut sources = vec![target];
    sources.extend(updates.iter());
    let mut batches = vec![pick_rows(table, &sources, &picks)?];
    batches.extend(inserts);
    Ok(Staged { batches, stats })
}

#[derive(Debug, Clone, Copy)]
enum Fate {
    Keep,
    Delete,
    /// Row `.1` of update batch `.0`.
    Update(usize, usize),
}

struct Rows<'a> {
    plan: &'a MergePlan,
    target: &'a RecordBatch,
    source: &'a RecordBatch,
}

impl Rows<'_> {
    /// Rows of the combined schema: target rows `t` (NULL when absent) beside source rows `s`.
    fn combine(&self, t: Option<&UInt32Array>, s: Option<&UInt32Array>) -> Result<RecordBatch> {
        let n = t.or(s).map(|a| a.len()).unwrap_or(0);
        let side = |b: &RecordBatch,
                    idx: Option<&UInt32Array>,
                    fields: &[Arc<datafusion::arrow::datatypes::Field>]| {
            fields
                .iter()
                .enumerate()
                .map(|(i, f)| match idx {
                    Some(idx) => Ok(take(b.column(i).as_ref(), idx, None)?),
                    None => Ok(new_null_array(f.data_type(), n)),
                })
                .collect::<Result<Vec<ArrayRef>>>()
        };
        let fields = self.plan.combined.fields();
        let nt = self.target.num_columns();
        let mut cols = side(self.target, t, &fields[..nt])?;
        cols.extend(side(self.source, s, &fields[nt..])?);
        let cols = cols
            .into_iter()
            .zip(fields.iter())
            .map(|(c, f)| {
                if c.data_type() == f.data_type() {
                    Ok(c)
                } else {
                    Ok(cast(&c, f.data_type())?)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let opts =
            datafusion::arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(n));
        Ok(RecordBatch::try_new_with_options(
            self.plan.combined.clone(),
            cols,
            &opts,
        )?)
    }
}

/// Where `expr` is TRUE on `batch` (NULL counts as not).
fn truth(expr: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> Result<Vec<bool>> {
    let v = expr.evaluate(batch)?.into_array(batch.num_rows())?;
    let b = v.as_boolean_opt().ok_or_else(|| {
        bq(BqError::invalid_query(format!(
            "MERGE condition has type {} rather than BOOL",
            v.data_type()
        )))
    })?;
    Ok((0..b.len()).map(|i| b.is_valid(i) && b.value(i)).collect())
}

/// For each row of `batch`, the first clause for `kind` rows whose condition holds.
fn choose(plan: &MergePlan, kind: When, batch: &RecordBatch) -> Result<Vec<Option<usize>>> {
    let mut chosen = vec![None; batch.num_rows()];
    for (i, c) in plan.clauses.iter().enumerate() {
        if c.kind != kind || batch.num_rows() == 0 {
            continue;
        }
        let holds = match &c.predicate {
            Some(p) => truth(p, batch)?,
            None => vec![true; batch.num_rows()],
        };
        for (slot, h) in chosen.iter_mut().zip(holds) {
            if slot.is_none() && h {
                *slot = Some(i);
            }
        }
    }
    Ok(chosen)
}

#[allow(clippy::too_many_arguments)]
fn apply(
    plan: &MergePlan,
    table: &SchemaRef,
    batch: &RecordBatch,
    chosen: &[Option<usize>],
    target_row: impl Fn(usize) -> usize,
    fate: &mut [Fate],
    updates: &mut Vec<RecordBatch>,
    inserts: &mut Vec<RecordBatch>,
    stats: &mut DmlStats,
) -> Result<()> {
    let width = table.fields().len();
    for (i, c) in plan.clauses.iter().enumerate() {
        let rows = chosen
            .iter()
            .map(|x| Some(*x == Some(i)))
            .collect::<BooleanArray>();
        let idx = (0..chosen.len())
            .filter(|&j| chosen[j] == Some(i))
            .collect::<Vec<_>>();
        if idx.is_empty() {
            continue;
        }
        let these = filter_record_batch(batch, &rows)?;
        match &c.action {
            Action::Delete => {
                for &j in &idx {
                    fate[target_row(j)] = Fate::Delete;
                }
                stats.deleted += idx.len() as i64;
            }
            Action::Update(sets) => {
                let mut cols = these.columns()[..width].to_vec();
                for (col, e) in sets {
                    cols[*col] = value(e, &these, table, *col)?;
                }
                let b = updates.len();
                updates.push(table_batch(table, cols)?);
                for (r, &j) in idx.iter().enumerate() {
                    fate[target_row(j)] = Fate::Update(b, r);
                }
                stats.updated += idx.len() as i64;
            }
            Action::Insert(values) => {
                let mut cols = table
                    .fields()
                    .iter()
                    .map(|f| new_null_array(f.data_type(), these.num_rows()))
                    .collect::<Vec<_>>();
                for (col, e) in values {
                    cols[*col] = value(e, &these, table, *col)?;
                }
                inserts.push(table_batch(table, cols)?);
                stats.inserted += idx.len() as i64;
            }
        }
    }
    Ok(())
}

/// A batch of the table's rows, with BigQuery's error for a NULL in a REQUIRED column.
fn table_batch(table: &SchemaRef, cols: Vec<ArrayRef>) -> Result<RecordBatch> {
    for (f, c) in table.fields().iter().zip(&cols) {
        if !f.is_nullable() && c.null_count() > 0 {
            return Err(bq(BqError::invalid_query(format!(
                "Required field {} cannot be null",
                f.name()
            ))));
        }
    }
    Ok(RecordBatch::try_new(table.clone(), cols)?)
}

/// `expr` on `batch`, in the type of target column `col`.
fn value(
    expr: &Arc<dyn PhysicalExpr>,
    batch: &RecordBatch,
    table: &SchemaRef,
    col: usize,
) -> Result<ArrayRef> {
    let v = expr.evaluate(batch)?.into_array(batch.num_rows())?;
    let f = table.field(col);
    if v.data_type() == f.data_type() {
        return Ok(v);
    }
    cast(&v, f.data_type()).map_err(|e| {
        bq(BqError::invalid_query(format!(
            "Value of type {} cannot be assigned to {}: {e}",
            v.data_type(),
            f.name()
        )))
    })
}

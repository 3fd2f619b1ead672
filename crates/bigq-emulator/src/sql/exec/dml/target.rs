//! The table a DML statement writes, as DataFusion sees it while planning that statement:
//! its scan (with each row's identity when the statement needs it), the TableProvider hooks
//! DataFusion's physical planner calls, and the sinks that compute the table's new contents
//! and stage them for the statement to commit once.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::array::{AsArray, UInt64Array};
use datafusion::arrow::compute::{concat_batches, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt64Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{MemTable, Session};
use datafusion::common::tree_node::TreeNode;
use datafusion::common::{DFSchemaRef, Result, not_impl_err};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, MergeIntoAction, MergeIntoClause, MergeIntoClauseKind};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PhysicalExpr};

use super::merge::{self, MergePlan};
use super::staged::{Staged, check_required, pick_rows};
use crate::catalog::Table;
use crate::error::BqError;
use crate::sql::exec::output::{DmlStats, conform};

/// The column carrying each target row's position in the table, for UPDATE and DELETE. The
/// `__ROOT__` prefix is one BigQuery reserves, so no table column can have this name.
pub(super) const ROW_ID: &str = "__ROOT__bigq_row";

type Slot = Arc<Mutex<Option<Staged>>>;

/// The target of one DML statement: a snapshot of the table, read and written through
/// DataFusion's TableProvider hooks. Nothing it does touches the catalog: the statement's
/// result is staged here and committed by the engine.
#[derive(Debug)]
pub(super) struct DmlTarget {
    table: Arc<Table>,
    rows: MemTable,
    staged: Slot,
}

impl DmlTarget {
    /// A target over `table`; with `row_id`, its scan carries each row's [`ROW_ID`] too.
    pub(super) fn new(table: Arc<Table>, row_id: bool) -> Result<DmlTarget> {
        let rows = if row_id {
            let mut fields = table.arrow_schema.fields().to_vec();
            fields.push(Arc::new(Field::new(ROW_ID, DataType::UInt64, false)));
            let schema = Arc::new(Schema::new(fields));
            let mut next = 0u64;
            let mut batches = Vec::with_capacity(table.batches.len());
            for b in &table.batches {
                let n = b.num_rows() as u64;
                let mut cols = b.columns().to_vec();
                cols.push(Arc::new(UInt64Array::from_iter_values(next..next + n)));
                next += n;
                batches.push(RecordBatch::try_new(schema.clone(), cols)?);
            }
            MemTable::try_new(schema, vec![batches])?
        } else {
            MemTable::try_new(table.arrow_schema.clone(), vec![table.batches.clone()])?
        };
        Ok(DmlTarget {
            table,
            rows,
            staged: Arc::default(),
        })
    }

    /// The staged result, once the statement's plan has run.
    pub(super) fn take_staged(&self) -> Option<Staged> {
        self.staged.lock().ok()?.take()
    }

    /// DELETE: `input` is the Dml plan's input, the rows to delete with their [`ROW_ID`].
    ///
    /// DataFusion's `delete_from` hook gets only the filters `extract_dml_filters` finds on
    /// the target in the optimized input, which drops a WHERE whose subquery became a join;
    /// the whole input is run instead, so every row it yields, and only those, is deleted.
    pub(super) fn delete_rows(&self, input: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        self.sink(input, SinkKind::Delete)
    }

    /// UPDATE: `input` is the Dml plan's input, each updated row's new values with its
    /// [`ROW_ID`] (for the reason [`Self::delete_rows`] gives).
    pub(super) fn update_rows(&self, input: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        self.sink(input, SinkKind::Update)
    }

    fn sink(&self, input: Arc<dyn ExecutionPlan>, kind: SinkKind) -> Arc<dyn ExecutionPlan> {
        let sink = DmlSink {
            schema: input.schema(),
            table: self.table.clone(),
            staged: self.staged.clone(),
            kind,
        };
        Arc::new(DataSinkExec::new(input, Arc::new(sink), None))
    }
}

#[async_trait]
impl TableProvider for DmlTarget {
    fn schema(&self) -> SchemaRef {
        self.rows.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.rows.scan(state, projection, filters, limit).await
    }

    async fn delete_from(
        &self,
        _state: &dyn Session,
        _filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Never reached: see `delete_rows`, which the engine calls with the whole input.
        not_impl_err!("DELETE from filters alone")
    }

    async fn update(
        &self,
        _state: &dyn Session,
        _assignments: Vec<(String, Expr)>,
        _filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Never reached: see `update_rows`, which the engine calls with the whole input.
        not_impl_err!("UPDATE from filters alone")
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match op {
            InsertOp::Append => Ok(self.sink(input, SinkKind::Insert)),
            other => not_impl_err!("INSERT {other}"),
        }
    }

    async fn truncate(&self, _state: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
        let input = Arc::new(EmptyExec::new(Arc::new(Schema::empty())));
        Ok(self.sink(input, SinkKind::Truncate))
    }

    async fn merge_into(
        &self,
        state: &dyn Session,
        source: Arc<dyn ExecutionPlan>,
        merge_schema: DFSchemaRef,
        on: Expr,
        clauses: Vec<MergeIntoClause>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let physical = |e: &Expr| -> Result<Arc<dyn PhysicalExpr>> {
            if has_subquery(e) {
                return Err(unsupported("subqueries in MERGE ON and WHEN clauses"));
            }
            state.create_physical_expr(e.clone(), &merge_schema)
        };
        let position = |name: &str| {
            self.table
                .arrow_schema
                .index_of(name)
                .map_err(|e| DataFusionError::ArrowError(Box::new(e), None))
        };
        let mut planned = Vec::with_capacity(clauses.len());
        for c in &clauses {
            let predicate = c.predicate.as_ref().map(physical).transpose()?;
            let action = match &c.action {
                MergeIntoAction::Update(sets) => merge::Action::Update(
                    sets.iter()
                        .map(|(col, v)| Ok((position(col)?, physical(v)?)))
                        .collect::<Result<_>>()?,
                ),
                MergeIntoAction::Insert { columns, values } => {
                    let positions = if columns.is_empty() {
                        (0..self.table.arrow_schema.fields().len()).collect()
                    } else {
                        columns
                            .iter()
                            .map(|c| position(c))
                            .collect::<Result<Vec<_>>>()?
                    };
                    merge::Action::Insert(
                        positions
                            .into_iter()
                            .zip(values)
                            .map(|(p, v)| Ok((p, physical(v)?)))
                            .collect::<Result<_>>()?,
                    )
                }
                MergeIntoAction::Delete => merge::Action::Delete,
            };
            let kind = match c.kind {
                MergeIntoClauseKind::Matched => merge::When::Matched,
                MergeIntoClauseKind::NotMatched | MergeIntoClauseKind::NotMatchedByTarget => {
                    merge::When::NotMatchedByTarget
                }
                MergeIntoClauseKind::NotMatchedBySource => merge::When::NotMatchedBySource,
            };
            planned.push(merge::Clause {
                kind,
                predicate,
                action,
            });
        }
        // Rows are put together with a target side that may be NULL, whatever the columns'
        // modes.
        let combined = Arc::new(Schema::new(
            merge_schema
                .fields()
                .iter()
                .map(|f| f.as_ref().clone().with_nullable(true))
                .collect::<Vec<_>>(),
        ));
        let plan = MergePlan {
            combined,
            on: physical(&on)?,
            clauses: planned,
        };
        Ok(self.sink(source, SinkKind::Merge(Box::new(plan))))
    }
}

fn has_subquery(e: &Expr) -> bool {
    e.exists(|e| {
        Ok(matches!(
            e,
            Expr::ScalarSubquery(_) | Expr::InSubquery(_) | Expr::Exists(_)
        ))
    })
    .unwrap_or(true)
}

/// A `bigq-emulator does not support ..` error carried through DataFusion.
pub(super) fn unsupported(what: impl fmt::Display) -> DataFusionError {
    DataFusionError::External(Box::new(BqError::unsupported(what)))
}

fn bq(e: BqError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

#[derive(Debug)]
enum SinkKind {
    /// Only the new rows are staged: the engine appends them to the table as it is then.
    Insert,
    Delete,
    Update,
    Truncate,
    Merge(Box<MergePlan>),
}

/// Computes a statement's new table contents from its input rows and stages them.
#[derive(Debug)]
struct DmlSink {
    schema: SchemaRef,
    table: Arc<Table>,
    staged: Slot,
    kind: SinkKind,
}

impl DisplayAs for DmlSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "DmlSink({:?})", std::mem::discriminant(&self.kind))
    }
}

#[async_trait]
impl DataSink for DmlSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let input = datafusion::physical_plan::common::collect(data).await?;
        let table = &self.table;
        let staged = match &self.kind {
            SinkKind::Insert => {
                check_required(table, &input).map_err(bq)?;
                let batches = conform(&input, &table.arrow_schema).map_err(bq)?;
                let inserted = batches.iter().map(|b| b.num_rows() as i64).sum();
                Staged {
                    batches,
                    stats: DmlStats {
                        inserted,
                        ..Default::default()
                    },
                }
            }
            SinkKind::Truncate => Staged {
                batches: Vec::new(),
                stats: DmlStats {
                    deleted: table.num_rows() as i64,
                    ..Default::default()
                },
            },
            SinkKind::Delete => {
                let mut gone = HashSet::new();
                for b in &input {
                    gone.extend(row_ids(b)?.values().iter().copied());
                }
                // Each batch filtered where it is: row ids count the table's rows in order.
                let mut batches = Vec::with_capacity(table.batches.len());
                let mut first = 0u64;
                for b in &table.batches {
                    let n = b.num_rows() as u64;
                    let keep = (first..first + n)
                        .map(|i| Some(!gone.contains(&i)))
                        .collect();
                    first += n;
                    let kept = filter_record_batch(b, &keep)?;
                    if kept.num_rows() > 0 {
                        batches.push(kept);
                    }
                }
                Staged {
                    batches,
                    stats: DmlStats {
                        deleted: gone.len() as i64,
                        ..Default::default()
                    },
                }
            }
            SinkKind::Update => {
                let width = table.arrow_schema.fields().len();
                let mut new_rows = Vec::with_capacity(input.len());
                let mut by_id = HashMap::new();
                for b in &input {
                    let ids = row_ids(b)?;
                    for (r, id) in ids.values().iter().enumerate() {
                        if by_id.insert(*id, (new_rows.len(), r)).is_some() {
                            return Err(bq(merge::one_source_row()));
                        }
                    }
                    new_rows.push(b.project(&(0..width).collect::<Vec<_>>())?);
                }
                let new_rows = conform(&new_rows, &table.arrow_schema).map_err(bq)?;
                let updated = by_id.len() as i64;
                // The table's batches, then the new rows: each row taken from where it is.
                let old = table.batches.len();
                let mut picks = Vec::with_capacity(table.num_rows());
                let mut id = 0u64;
                for (bi, b) in table.batches.iter().enumerate() {
                    for r in 0..b.num_rows() {
                        picks.push(match by_id.get(&id) {
                            Some(&(nb, nr)) => (old + nb, nr),
                            None => (bi, r),
                        });
                        id += 1;
                    }
                }
                let sources = table.batches.iter().chain(&new_rows).collect::<Vec<_>>();
                Staged {
                    batches: vec![pick_rows(&table.arrow_schema, &sources, &picks)?],
                    stats: DmlStats {
                        updated,
                        ..Default::default()
                    },
                }
            }
            SinkKind::Merge(plan) => {
                let current = concat_batches(&table.arrow_schema, &table.batches)?;
                let source = concat_batches(&self.schema, &input)?;
                merge::run(plan, &table.arrow_schema, &current, &source)?
            }
        };
        let affected = staged.stats.affected() as u64;
        *self
            .staged
            .lock()
            .map_err(|_| DataFusionError::Internal("DML staging lock poisoned".into()))? =
            Some(staged);
        Ok(affected)
    }
}

fn row_ids(b: &RecordBatch) -> Result<&datafusion::arrow::array::PrimitiveArray<UInt64Type>> {
    let i = b
        .schema()
        .index_of(ROW_ID)
        .map_err(|e| DataFusionError::ArrowError(Box::new(e), None))?;
    Ok(b.column(i).as_primitive::<UInt64Type>())
}

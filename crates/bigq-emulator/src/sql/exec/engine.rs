//! The engine: a DataFusion session over the catalog, with BigQuery's functions registered,
//! and how one query is rewritten, planned and run on it.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::logical_expr::planner::ExprPlanner;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::{self, Query, Statement};

use super::cost::Cost;
use super::output::{QueryOutput, QueryRequest, df_err};
use crate::catalog::Catalog;
use crate::error::{BqError, BqResult};
use crate::sql::functions;
use crate::sql::parse::parse;
use crate::sql::rewrite::{
    Element, LateralUnnest, NanOrder, TypedOperators, anonymous_unnests, expand_struct_stars,
    expand_struct_unnests, pivot, pivot_input, respell, rewrite_query, struct_stars, unnest_scopes,
};
use crate::sql::types::{self, range_element};

/// At most this many names of one query are respelled to the case of the names in scope.
const MAX_RESPELLINGS: usize = 64;

/// The SQL engine: a DataFusion session over the catalog.
#[derive(Clone)]
pub struct Engine {
    pub(super) catalog: Arc<Catalog>,
    pub(super) ctx: SessionContext,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine over `catalog`, with no memory limit of its own.
    pub fn new(catalog: Arc<Catalog>) -> Engine {
        Self::build(catalog, None)
    }

    /// An engine over `catalog` whose queries run under a DataFusion memory pool of
    /// `bytes`: a query needing more (a sort, a join, an aggregate spilling nowhere) fails
    /// with BigQuery's `resourcesExceeded` instead of taking the machine.
    pub fn with_memory_limit(catalog: Arc<Catalog>, bytes: usize) -> Engine {
        Self::build(catalog, Some(bytes))
    }

    fn build(catalog: Arc<Catalog>, memory_limit: Option<usize>) -> Engine {
        let mut config = SessionConfig::new()
            .with_create_default_catalog_and_schema(false)
            .with_information_schema(false)
            .with_target_partitions(
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1),
            );
        let opts = config.options_mut();
        opts.sql_parser.enable_ident_normalization = false;
        // BigQuery orders NULL before every value: first under ASC, last under DESC.
        opts.sql_parser.default_null_ordering = "nulls_min".to_string();
        opts.execution.time_zone = Some("UTC".to_string());
        let mut runtime = RuntimeEnvBuilder::new();
        if let Some(bytes) = memory_limit {
            // No spilling to disk: past the pool a query fails, as BigQuery's does.
            runtime = runtime
                .with_memory_limit(bytes, 1.0)
                .with_disk_manager_builder(
                    DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled),
                );
        }
        let runtime = runtime
            .build_arc()
            .unwrap_or_else(|_| Arc::new(RuntimeEnv::default()));
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_default_features()
            .with_catalog_list(catalog.provider())
            .build();
        // The JSON operators are planned before DataFusion's struct and array access.
        let mut planners: Vec<Arc<dyn ExprPlanner>> = vec![
            Arc::new(functions::JsonPlanner),
            Arc::new(functions::IntervalPlanner),
        ];
        planners.extend(state.expr_planners().iter().cloned());
        let state = SessionStateBuilder::new_from_existing(state)
            .with_expr_planners(planners)
            .build();
        let ctx = SessionContext::new_with_state(state);
        functions::register(&ctx);
        ctx.add_analyzer_rule(Arc::new(LateralUnnest));
        ctx.add_analyzer_rule(Arc::new(TypedOperators));
        ctx.add_analyzer_rule(Arc::new(NanOrder));
        Engine { catalog, ctx }
    }

    /// Runs a query: its rows, in the types DataFusion gave them.
    pub(super) async fn query(&self, q: Box<Query>, req: &QueryRequest) -> BqResult<QueryOutput> {
        let (schema, batches, cost) = self.plan_run_and_cost(q, req, req.dry_run).await?;
        for batch in &batches {
            for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
                if holds_null_element(column.as_ref()) {
                    return Err(BqError::invalid_query(format!(
                        "Array cannot have a null element; error in writing field {}",
                        field.name()
                    )));
                }
            }
        }
        let bq = types::bq_schema_of(&schema)?;
        Ok(QueryOutput {
            schema: bq,
            arrow_schema: schema,
            batches,
            statement_type: "SELECT",
            dml: None,
            ddl: None,
            returns_rows: true,
            session_id: None,
            cost,
        })
    }

    pub(super) async fn plan_and_run(
        &self,
        q: Box<Query>,
        req: &QueryRequest,
        dry_run: bool,
    ) -> BqResult<(SchemaRef, Vec<RecordBatch>)> {
        let (schema, batches, _) = self.plan_run_and_cost(q, req, dry_run).await?;
        Ok((schema, batches))
    }

    /// Plans a query as BigQuery types it: rewritten, planned and analysed (not yet
    /// optimised), with the session it was planned in.
    pub(super) async fn plan_query(
        &self,
        mut q: Box<Query>,
        req: &QueryRequest,
    ) -> BqResult<(SessionState, LogicalPlan)> {
        rewrite_query(&mut q, &self.catalog, &req.names, &req.params)?;
        let state = self.ctx.state();
        // A PIVOT's input may read the fields of an UNNEST of STRUCTs as columns: those are
        // expanded first, so that planning the input alone finds them.
        self.expand_struct_unnests(&mut q, &state).await?;
        self.expand_pivots(&mut q, &state).await?;
        self.expand_struct_stars(&mut q, &state).await?;
        self.check_star_lists(&mut q, &state).await?;
        // A name spelled in another case than the column it names is respelled and the
        // query planned again (each pass respells one name).
        let mut respelled = 0;
        let plan = loop {
            let attempt = Statement::Query(q.clone());
            match state
                .statement_to_plan(DfStatement::Statement(Box::new(attempt)))
                .await
            {
                Ok(plan) => break plan,
                Err(e) if respelled < MAX_RESPELLINGS && respell(&mut q, &e) => respelled += 1,
                Err(e) => return Err(df_err(e)),
            }
        };
        functions::check_results(&plan)?;
        // Typed as it runs: before type coercion a CASE has its first branch's type, not the
        // supertype BigQuery gives it.
        let plan = state
            .analyzer()
            .execute_and_check(plan, state.config_options(), |_, _| {})
            .map_err(df_err)?;
        Ok((state, plan))
    }

    /// Plans and runs a query (plans only for a dry run), with what it costs; a query that
    /// would bill more than `maximumBytesBilled` fails before it runs, as in BigQuery.
    async fn plan_run_and_cost(
        &self,
        q: Box<Query>,
        req: &QueryRequest,
        dry_run: bool,
    ) -> BqResult<(SchemaRef, Vec<RecordBatch>, Cost)> {
        let (state, plan) = self.plan_query(q, req).await?;
        let schema: SchemaRef = Arc::new(super::tags::tag_result_schema(
            &plan,
            plan.schema().as_arrow(),
        ));
        // Optimized, so that each scan reads only the columns the query uses: those are
        // what BigQuery counts.
        let plan = state.optimize(&plan).map_err(df_err)?;
        let mut cost = Cost::of_plan(&plan, &self.catalog)?;
        if dry_run {
            cost.billed = 0;
            return Ok((schema, Vec::new(), cost));
        }
        if let Some(limit) = req.maximum_bytes_billed
            && cost.billed > limit
        {
            return Err(BqError::bytes_billed_limit_exceeded(limit, cost.billed));
        }
        let physical = state
            .query_planner()
            .create_physical_plan(&plan, &state)
            .await
            .map_err(df_err)?;
        let mut batches = datafusion::physical_plan::collect(physical, state.task_ctx())
            .await
            .map_err(df_err)?;
        // An array or struct whose elements the result's schema tags has a type of its own.
        if batches.first().is_some_and(|b| {
            b.schema()
                .fields()
                .iter()
                .zip(schema.fields())
                .any(|(a, b)| a.data_type() != b.data_type())
        }) {
            batches = super::output::conform(&batches, &schema)?;
        }
        Ok((schema, batches, cost))
    }

    /// Rewrites each `PIVOT`, innermost first, once its input's columns are learnt by
    /// planning the input alone (under the query's WITH clause).
    async fn expand_pivots(
        &self,
        q: &mut Query,
        state: &datafusion::execution::SessionState,
    ) -> BqResult<()> {
        while let Some(probe) = pivot_input(q) {
            let plan = state
                .statement_to_plan(DfStatement::Statement(Box::new(Statement::Query(probe))))
                .await
                .map_err(df_err)?;
            let columns: Vec<String> = plan
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            pivot(q, &columns)?;
        }
        Ok(())
    }

    /// Makes the fields of an unaliased `UNNEST` of an array of STRUCTs its columns, as
    /// BigQuery does: each such array's type is learnt by planning `SELECT <array>` over the
    /// FROM items before it (with the query's CTEs), or alone.
    async fn expand_struct_unnests(
        &self,
        q: &mut Query,
        state: &datafusion::execution::SessionState,
    ) -> BqResult<()> {
        let arrays = anonymous_unnests(q);
        if arrays.is_empty() {
            return Ok(());
        }
        let scopes = unnest_scopes(q);
        let mut fields = Vec::with_capacity(arrays.len());
        for array in arrays {
            let text = array.to_string();
            let alone = self.select_of(array)?;
            let mut planned = None;
            // Over the FROM items it may read, then (for an array that reads none of them)
            // alone.
            if let Some((_, scope)) = scopes.iter().find(|(t, _)| *t == text) {
                let mut probe = alone.clone();
                probe.with = q.with.clone();
                if let ast::SetExpr::Select(s) = probe.body.as_mut() {
                    s.from = scope.clone();
                }
                planned = state
                    .statement_to_plan(DfStatement::Statement(Box::new(Statement::Query(probe))))
                    .await
                    .ok();
            }
            if planned.is_none() {
                planned = state
                    .statement_to_plan(DfStatement::Statement(Box::new(Statement::Query(alone))))
                    .await
                    .ok();
            }
            fields.push(planned.and_then(|plan| {
                let tag = super::tags::element_tag(&plan);
                let field_tags = super::tags::struct_element_tags(&plan);
                match plan.schema().field(0).data_type() {
                    DataType::List(item) | DataType::LargeList(item)
                        if range_element(item.data_type()).is_none() =>
                    {
                        match item.data_type() {
                            DataType::Struct(fs) => Some(Element::Struct(
                                fs.iter()
                                    .enumerate()
                                    .map(|(k, f)| {
                                        let tag = field_tags
                                            .get(k)
                                            .cloned()
                                            .flatten()
                                            .as_ref()
                                            .and_then(functions::tag_udf_name);
                                        (f.name().clone(), tag)
                                    })
                                    .collect(),
                            )),
                            _ => tag
                                .as_ref()
                                .and_then(functions::tag_udf_name)
                                .map(Element::Tagged),
                        }
                    }
                    _ => None,
                }
            }));
        }
        expand_struct_unnests(q, &fields)
    }

    /// Makes each `s.*` of a STRUCT value in the query's SELECT lists the struct's fields:
    /// each value's type is learnt by planning it over its SELECT's FROM clause.
    async fn expand_struct_stars(
        &self,
        q: &mut Query,
        state: &datafusion::execution::SessionState,
    ) -> BqResult<()> {
        let stars = struct_stars(q, |e| self.select_of(e))?;
        if stars.is_empty() {
            return Ok(());
        }
        let mut fields = Vec::with_capacity(stars.len());
        for star in &stars {
            let planned = state
                .statement_to_plan(DfStatement::Statement(Box::new(Statement::Query(
                    star.probe.clone(),
                ))))
                .await;
            // A value that does not plan here is left for the query's own planning to
            // report; one that plans as anything but a STRUCT has no fields to expand.
            fields.push(match planned {
                Ok(plan) => match plan.schema().field(0).data_type() {
                    t @ DataType::Struct(fs) if range_element(t).is_none() => {
                        Some(fs.iter().map(|f| f.name().clone()).collect())
                    }
                    t => {
                        return Err(BqError::invalid_query(format!(
                            "Dot-star is not supported for type {}",
                            functions::bq_type_name(t)
                        )));
                    }
                },
                Err(_) => None,
            });
        }
        expand_struct_stars(q, stars, &fields)
    }

    /// Checks that each column a `SELECT * EXCEPT (..)` or `SELECT * REPLACE (.. AS c)` of
    /// the query's body names is a column of its FROM, as BigQuery requires (DataFusion
    /// ignores a REPLACE of a column that is not there), by planning `SELECT *` of that FROM;
    /// each name is respelled as the column is (names are case-insensitive).
    async fn check_star_lists(
        &self,
        q: &mut Query,
        state: &datafusion::execution::SessionState,
    ) -> BqResult<()> {
        let with = q.with.clone();
        for s in crate::sql::ast::body_selects(q.body.as_mut()) {
            let from = s.from.clone();
            for item in &mut s.projection {
                let ast::SelectItem::Wildcard(opts) = item else {
                    continue;
                };
                let mut listed: Vec<(&str, &mut ast::Ident)> = Vec::new();
                if let Some(except) = &mut opts.opt_except {
                    listed.push(("EXCEPT", &mut except.first_element));
                    listed.extend(except.additional_elements.iter_mut().map(|i| ("EXCEPT", i)));
                }
                if let Some(replace) = &mut opts.opt_replace {
                    listed.extend(
                        replace
                            .items
                            .iter_mut()
                            .map(|r| ("REPLACE", &mut r.column_name)),
                    );
                }
                if listed.is_empty() {
                    continue;
                }
                let mut probe = self.parse_query("SELECT * FROM x")?;
                probe.with = with.clone();
                if let ast::SetExpr::Select(p) = probe.body.as_mut() {
                    p.from = from.clone();
                }
                // A FROM that does not plan alone is left for the query's planning to report.
                let Ok(plan) = state
                    .statement_to_plan(DfStatement::Statement(Box::new(Statement::Query(probe))))
                    .await
                else {
                    continue;
                };
                for (list, name) in listed {
                    let found = plan
                        .schema()
                        .fields()
                        .iter()
                        .find(|f| f.name().eq_ignore_ascii_case(&name.value));
                    match found {
                        Some(f) => name.value = f.name().clone(),
                        None => {
                            return Err(BqError::invalid_query(format!(
                                "Column {} in SELECT * {list} list does not exist",
                                name.value
                            )));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `SELECT expr`, for an expression already in the AST.
    pub(super) fn select_of(&self, expr: ast::Expr) -> BqResult<Box<Query>> {
        let mut q = self.parse_query("SELECT 1")?;
        if let ast::SetExpr::Select(s) = q.body.as_mut() {
            s.projection = vec![ast::SelectItem::UnnamedExpr(expr)];
        }
        Ok(q)
    }

    pub(super) fn parse_query(&self, sql: &str) -> BqResult<Box<Query>> {
        match parse(sql)?.pop() {
            Some(Statement::Query(q)) => Ok(q),
            _ => Err(BqError::internal(format!("not a query: {sql}"))),
        }
    }
}

/// Whether a result column holds an ARRAY with a NULL element, at any depth: BigQuery cannot
/// return such an array, and fails the query that makes one.
fn holds_null_element(array: &dyn Array) -> bool {
    match array.data_type() {
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            (0..list.len()).filter(|&i| list.is_valid(i)).any(|i| {
                let items = list.value(i);
                items.null_count() > 0 || holds_null_element(items.as_ref())
            })
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            (0..list.len()).filter(|&i| list.is_valid(i)).any(|i| {
                let items = list.value(i);
                items.null_count() > 0 || holds_null_element(items.as_ref())
            })
        }
        DataType::Struct(_) => array
            .as_struct()
            .columns()
            .iter()
            .any(|c| holds_null_element(c.as_ref())),
        _ => false,
    }
}

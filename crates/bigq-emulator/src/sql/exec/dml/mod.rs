//! Data manipulation: `INSERT`, `UPDATE`, `DELETE`, `MERGE` and `TRUNCATE TABLE`.
//!
//! Each statement is checked here as BigQuery checks it (on the AST, with BigQuery's
//! messages), rewritten as queries are, then planned by DataFusion's `SqlToRel` into a
//! `LogicalPlan::Dml` whose target is a [`target::DmlTarget`] over a snapshot of the table.
//! Running the plan computes the table's new contents in that target's sinks; the statement
//! then commits them to the catalog once.

mod coerce;
mod merge;
mod staged;
mod target;

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProvider, MemorySchemaProvider,
    SchemaProvider,
};
use datafusion::common::{ScalarValue, TableReference};
use datafusion::datasource::provider_as_source;
use datafusion::error::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{
    DmlStatement, Expr, LogicalPlan, LogicalPlanBuilder, WriteOp, cast, lit,
};
use datafusion::physical_plan::collect;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::{self, FromTable, Statement};

use self::staged::check_required;
use self::target::{DmlTarget, ROW_ID};
use super::engine::Engine;
use super::output::{DmlStats, QueryOutput, QueryRequest, df_err, result_style};
use crate::catalog::{Table, TableKind, TableRef};
use crate::error::{BqError, BqResult};
use crate::sql::names::{name_parts, resolve};
use crate::sql::parse::parse;
use crate::sql::rewrite::rewrite_statement;

impl Engine {
    /// `INSERT`: BigQuery's checks of the target, the column list and each value's type,
    /// then a DataFusion `LogicalPlan::Dml` insert whose input is the source query with
    /// every table column in place (the unnamed ones NULL). The new rows are appended to
    /// the table as it is when the statement commits, so concurrent INSERTs all land.
    pub(super) async fn insert(
        &self,
        ins: ast::Insert,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let name = match &ins.table {
            ast::TableObject::TableName(n) => n.clone(),
            other => return Err(BqError::unsupported(format!("INSERT INTO {other}"))),
        };
        let t = resolve(&name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        if matches!(table.kind, TableKind::View { .. }) {
            return Err(BqError::invalid_query(format!(
                "Cannot insert into view {t}"
            )));
        }
        let mut source = ins
            .source
            .ok_or_else(|| BqError::unsupported("INSERT without VALUES or SELECT"))?;
        let targets = target_positions(&table, &t, &ins.columns)?;
        let wrong_count = |has: usize| {
            BqError::invalid_query(format!(
                "Inserted row has wrong column count; Has {has}, expected {}",
                targets.len()
            ))
        };
        // For VALUES: which columns hold only literals (those coerce further), each row's
        // width checked first; DEFAULT takes the column default, and columns have none here.
        let literals = match source.body.as_mut() {
            ast::SetExpr::Values(values) => {
                let mut literal = vec![true; targets.len()];
                for row in &mut values.rows {
                    if row.len() != targets.len() {
                        return Err(wrong_count(row.len()));
                    }
                    for (e, lit) in row.iter_mut().zip(&mut literal) {
                        if is_default(e) {
                            *e = ast::Expr::value(ast::Value::Null);
                        }
                        *lit &= is_literal(e);
                    }
                }
                let rows: Vec<Vec<ast::Expr>> = values
                    .rows
                    .iter()
                    .map(|r| r.iter().cloned().collect())
                    .collect();
                if mixes_null_with_tagged(&rows) {
                    *source.body = union_of_rows(&rows)?;
                }
                Some(literal)
            }
            _ => None,
        };
        let (state, plan) = self.plan_query(source, req).await?;
        let columns = plan.schema().columns();
        if columns.len() != targets.len() {
            return Err(wrong_count(columns.len()));
        }
        for (k, &ti) in targets.iter().enumerate() {
            let (from_source, literal) = match &literals {
                Some(l) => (coerce::Source::Value, l[k]),
                None => (coerce::Source::QueryColumn(k + 1), false),
            };
            coerce::check_insertable(
                plan.schema().field(k),
                table.arrow_schema.field(ti),
                literal,
                from_source,
            )?;
        }
        let exprs = table
            .arrow_schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let value = match targets.iter().position(|&ti| ti == i) {
                    Some(k) => Expr::Column(columns[k].clone()),
                    None => lit(ScalarValue::Null),
                };
                // DataFusion casts STRUCTs by field name, BigQuery by position: those are
                // cast by the sink (`conform`), everything else here.
                if holds_struct(f.data_type()) {
                    value.alias(f.name())
                } else {
                    cast(value, f.data_type().clone()).alias(f.name())
                }
            })
            .collect::<Vec<_>>();
        let input = LogicalPlanBuilder::from(plan)
            .project(exprs)
            .and_then(|b| b.build())
            .map_err(df_err)?;
        let target = Arc::new(DmlTarget::new(table.clone(), false).map_err(df_err)?);
        let dml = LogicalPlan::Dml(DmlStatement::new(
            TableReference::bare(t.table.clone()),
            provider_as_source(target.clone()),
            WriteOp::Insert(InsertOp::Append),
            Arc::new(input),
        ));
        let mut out = QueryOutput::empty("INSERT");
        if req.dry_run {
            state.optimize(&dml).map_err(df_err)?;
            out.schema = result_style(&table.schema);
            out.dml = Some(DmlStats::default());
            return Ok(out);
        }
        let exec = state.create_physical_plan(&dml).await.map_err(dml_err)?;
        collect(exec, state.task_ctx()).await.map_err(dml_err)?;
        let staged = target
            .take_staged()
            .ok_or_else(|| BqError::internal("the INSERT staged no rows"))?;
        self.catalog.update(|w| {
            let mut current = (*w.table(&t)?).clone();
            current.batches.extend(staged.batches);
            w.put_table(&t, current)
        })?;
        out.dml = Some(staged.stats);
        Ok(out)
    }

    pub(super) async fn update(
        &self,
        mut up: ast::Update,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        if !up.table.joins.is_empty() {
            return Err(BqError::unsupported("UPDATE with JOIN"));
        }
        let name = match &up.table.relation {
            ast::TableFactor::Table { name, .. } => name.clone(),
            other => return Err(BqError::unsupported(format!("UPDATE {other}"))),
        };
        let t = resolve(&name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        refuse_view(&table, &t)?;
        let Some(selection) = up.selection.take() else {
            return Err(BqError::invalid_query("UPDATE must have a WHERE clause"));
        };
        check_assignments(&table, &mut up.assignments)?;
        let stats = match up.from.take() {
            None => {
                up.selection = Some(selection);
                let mut stmt = Statement::Update(up);
                rewrite_statement(&mut stmt, &self.catalog, &req.names, &req.params)?;
                let Statement::Update(up) = &mut stmt else {
                    unreachable!("rewriting keeps the statement's kind")
                };
                let alias = bare_target(&mut up.table.relation)?;
                self.run_dml(stmt, &alias, true, &t, req).await?
            }
            // BigQuery's UPDATE .. FROM is a MERGE whose ON is the WHERE: a target row joined
            // with no FROM row is left as it is, with one it is updated, with more it is the
            // "must match at most one source row" error.
            Some(ast::UpdateTableFromKind::BeforeSet(from))
            | Some(ast::UpdateTableFromKind::AfterSet(from)) => {
                let source = match <[_; 1]>::try_from(from) {
                    Ok([twj]) if twj.joins.is_empty() => twj.relation,
                    Ok([twj]) => ast::TableFactor::NestedJoin {
                        table_with_joins: Box::new(twj),
                        alias: None,
                    },
                    Err(_) => {
                        return Err(BqError::unsupported(
                            "UPDATE .. FROM with several comma-separated tables",
                        ));
                    }
                };
                let mut m = match parse(
                    "MERGE INTO t USING s ON TRUE WHEN MATCHED THEN UPDATE SET c = NULL",
                )?
                .pop()
                {
                    Some(Statement::Merge(m)) => m,
                    _ => return Err(BqError::internal("MERGE template")),
                };
                m.table = up.table.relation;
                m.source = source;
                m.on = Box::new(selection);
                if let Some(ast::MergeAction::Update(u)) =
                    m.clauses.first_mut().map(|c| &mut c.action)
                {
                    u.assignments = up.assignments;
                }
                self.run_merge(m, t, table, req).await?
            }
        };
        let mut out = QueryOutput::empty("UPDATE");
        out.dml = Some(stats);
        Ok(out)
    }

    pub(super) async fn merge(
        &self,
        mut m: ast::Merge,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let name = match &m.table {
            ast::TableFactor::Table { name, .. } => name.clone(),
            other => return Err(BqError::unsupported(format!("MERGE INTO {other}"))),
        };
        let t = resolve(&name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        refuse_view(&table, &t)?;
        if !matches!(
            m.source,
            ast::TableFactor::Table { .. } | ast::TableFactor::Derived { .. }
        ) {
            return Err(BqError::unsupported(format!("MERGE USING {}", m.source)));
        }
        for c in &mut m.clauses {
            match (&c.clause_kind, &mut c.action) {
                (
                    ast::MergeClauseKind::NotMatched | ast::MergeClauseKind::NotMatchedByTarget,
                    ast::MergeAction::Insert(ins),
                ) => {
                    let targets = target_positions(&table, &t, &ins.columns)?;
                    if let ast::MergeInsertKind::Values(v) = &ins.kind {
                        let [row] = v.rows.as_slice() else {
                            return Err(BqError::invalid_query(
                                "MERGE INSERT takes one VALUES row",
                            ));
                        };
                        if row.len() != targets.len() {
                            return Err(BqError::invalid_query(
                                "MERGE INSERT has the wrong number of values",
                            ));
                        }
                    }
                }
                (
                    ast::MergeClauseKind::NotMatched | ast::MergeClauseKind::NotMatchedByTarget,
                    _,
                ) => {
                    return Err(BqError::invalid_query(
                        "WHEN NOT MATCHED clauses only allow INSERT",
                    ));
                }
                (_, ast::MergeAction::Insert(_)) => {
                    return Err(BqError::invalid_query(
                        "INSERT is only allowed in WHEN NOT MATCHED clauses",
                    ));
                }
                (_, ast::MergeAction::Update(u)) => check_assignments(&table, &mut u.assignments)?,
                (_, ast::MergeAction::Delete { .. }) => {}
            }
        }
        let stats = self.run_merge(m, t, table, req).await?;
        let mut out = QueryOutput::empty("MERGE");
        out.dml = Some(stats);
        Ok(out)
    }

    /// A MERGE whose clauses BigQuery's rules allow, into `t`.
    async fn run_merge(
        &self,
        m: ast::Merge,
        t: TableRef,
        table: Arc<Table>,
        req: &QueryRequest,
    ) -> BqResult<DmlStats> {
        let mut stmt = Statement::Merge(m);
        rewrite_statement(&mut stmt, &self.catalog, &req.names, &req.params)?;
        let Statement::Merge(m) = &mut stmt else {
            unreachable!("rewriting keeps the statement's kind")
        };
        let alias = bare_target(&mut m.table)?;
        // INSERT ROW takes each target column from the source column of its name. DataFusion
        // plans only INSERT .. VALUES, so it is written as that.
        let source_alias = match &mut m.source {
            ast::TableFactor::Table { alias, .. } | ast::TableFactor::Derived { alias, .. } => {
                alias
                    .get_or_insert_with(|| ast::TableAlias {
                        explicit: true,
                        name: ast::Ident::new("__bigq_merge_source"),
                        columns: Vec::new(),
                        at: None,
                    })
                    .name
                    .clone()
            }
            _ => ast::Ident::new("__bigq_merge_source"),
        };
        for c in &mut m.clauses {
            if let ast::MergeAction::Insert(ins) = &mut c.action
                && matches!(ins.kind, ast::MergeInsertKind::Row)
            {
                ins.columns = table
                    .schema
                    .iter()
                    .map(|f| ast::ObjectName::from(vec![ast::Ident::with_quote('`', &f.name)]))
                    .collect();
                let row = table
                    .schema
                    .iter()
                    .map(|f| {
                        ast::Expr::CompoundIdentifier(vec![
                            source_alias.clone(),
                            ast::Ident::with_quote('`', &f.name),
                        ])
                    })
                    .collect();
                ins.kind = ast::MergeInsertKind::Values(ast::Values {
                    explicit_row: false,
                    value_keyword: false,
                    rows: vec![ast::Parens::with_empty_span(row)],
                });
            }
        }
        self.run_dml(stmt, &alias, false, &t, req).await
    }

    pub(super) async fn delete(
        &self,
        del: ast::Delete,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &del.from;
        let [twj] = from.as_slice() else {
            return Err(BqError::unsupported("DELETE from several tables"));
        };
        if !twj.joins.is_empty() {
            return Err(BqError::unsupported("DELETE with JOIN"));
        }
        let name = match &twj.relation {
            ast::TableFactor::Table { name, .. } => name.clone(),
            other => return Err(BqError::unsupported(format!("DELETE FROM {other}"))),
        };
        let t = resolve(&name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        refuse_view(&table, &t)?;
        if del.selection.is_none() {
            return Err(BqError::invalid_query("DELETE must have a WHERE clause"));
        }
        let mut stmt = Statement::Delete(del);
        rewrite_statement(&mut stmt, &self.catalog, &req.names, &req.params)?;
        let Statement::Delete(del) = &mut stmt else {
            unreachable!("rewriting keeps the statement's kind")
        };
        let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &mut del.from;
        let alias = match from.first_mut() {
            Some(twj) => bare_target(&mut twj.relation)?,
            None => return Err(BqError::internal("DELETE without a table")),
        };
        let stats = self.run_dml(stmt, &alias, true, &t, req).await?;
        let mut out = QueryOutput::empty("DELETE");
        out.dml = Some(stats);
        Ok(out)
    }

    /// `TRUNCATE TABLE`: every row deleted.
    pub(super) async fn truncate(
        &self,
        mut tr: ast::Truncate,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let [target_name] = tr.table_names.as_mut_slice() else {
            return Err(BqError::unsupported("TRUNCATE TABLE of several tables"));
        };
        let t = resolve(&target_name.name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        refuse_view(&table, &t)?;
        let alias = t.table.clone();
        target_name.name = ast::ObjectName::from(vec![ast::Ident::with_quote('`', &alias)]);
        let stats = self
            .run_dml(Statement::Truncate(tr), &alias, false, &t, req)
            .await?;
        let mut out = QueryOutput::empty("TRUNCATE_TABLE");
        out.dml = Some(stats);
        Ok(out)
    }

    /// Plans `stmt`, whose target is the bare name `alias` standing for the table `t`
    /// (its scan carrying each row's [`ROW_ID`] when `row_id`); runs it unless this is a
    /// dry run, and commits what it staged, once. A statement whose table changed while it
    /// ran (a concurrent INSERT, say) is run again on the new contents, as BigQuery retries
    /// a conflicting DML statement, so no concurrent change is lost.
    async fn run_dml(
        &self,
        stmt: Statement,
        alias: &str,
        row_id: bool,
        t: &TableRef,
        req: &QueryRequest,
    ) -> BqResult<DmlStats> {
        const ATTEMPTS: usize = 4;
        for _ in 0..ATTEMPTS {
            let table = self.catalog.read().table(t)?;
            let target = Arc::new(DmlTarget::new(table.clone(), row_id).map_err(df_err)?);
            let Some(staged) = self
                .plan_and_stage(stmt.clone(), alias, &target, req)
                .await?
            else {
                return Ok(DmlStats::default());
            };
            check_required(&table, &staged.batches)?;
            let mut new = (*table).clone();
            new.batches = staged.batches;
            let committed = self.catalog.update(|w| {
                if !Arc::ptr_eq(&w.table(t)?, &table) {
                    return Ok(false);
                }
                w.put_table(t, new).map(|()| true)
            })?;
            if committed {
                return Ok(staged.stats);
            }
        }
        Err(BqError::invalid_query(format!(
            "Could not serialize access to table {t} due to concurrent update"
        )))
    }

    /// Plans and runs one DML statement against `target`: what it staged, or nothing for a
    /// dry run (planned only).
    async fn plan_and_stage(
        &self,
        stmt: Statement,
        alias: &str,
        target: &Arc<DmlTarget>,
        req: &QueryRequest,
    ) -> BqResult<Option<staged::Staged>> {
        let state = self.dml_state(alias, target.clone())?;
        let plan = state
            .statement_to_plan(DfStatement::Statement(Box::new(stmt)))
            .await
            .map_err(dml_err)?;
        // The emulator's analyzer rules type the plan's expressions as they do a query's.
        let plan = state
            .analyzer()
            .execute_and_check(plan, state.config_options(), |_, _| {})
            .map_err(dml_err)?;
        let exec = match &plan {
            LogicalPlan::Dml(d) if matches!(d.op, WriteOp::Delete) => target.delete_rows(
                state
                    .create_physical_plan(&d.input)
                    .await
                    .map_err(dml_err)?,
            ),
            LogicalPlan::Dml(d) if matches!(d.op, WriteOp::Update) => target.update_rows(
                state
                    .create_physical_plan(&d.input)
                    .await
                    .map_err(dml_err)?,
            ),
            LogicalPlan::Dml(_) => state.create_physical_plan(&plan).await.map_err(dml_err)?,
            other => {
                return Err(BqError::internal(format!(
                    "DML planned as {}",
                    other.display()
                )));
            }
        };
        if req.dry_run {
            return Ok(None);
        }
        collect(exec, state.task_ctx()).await.map_err(dml_err)?;
        target
            .take_staged()
            .map(Some)
            .ok_or_else(|| BqError::internal("the DML statement staged no result"))
    }

    /// The session a DML statement is planned in: the engine's, with `target` under the bare
    /// name `alias` (the default catalog and schema), so that only the statement's target
    /// reads through it and the queries inside the statement read the catalog as usual.
    fn dml_state(&self, alias: &str, target: Arc<DmlTarget>) -> BqResult<SessionState> {
        let base = self.ctx.state();
        let opts = base.config_options().catalog.clone();
        let schema = MemorySchemaProvider::new();
        schema
            .register_table(alias.to_string(), target)
            .map_err(df_err)?;
        let catalog = MemoryCatalogProvider::new();
        catalog
            .register_schema(&opts.default_schema, Arc::new(schema))
            .map_err(df_err)?;
        let list = Arc::new(WithTarget {
            inner: base.catalog_list().clone(),
            name: opts.default_catalog,
            catalog: Arc::new(catalog),
        });
        Ok(SessionStateBuilder::new_from_existing(base)
            .with_catalog_list(list)
            .build())
    }
}

fn target_positions(
    table: &Table,
    t: &TableRef,
    columns: &[ast::ObjectName],
) -> BqResult<Vec<usize>> {
    if columns.is_empty() {
        return Ok((0..table.schema.len()).collect());
    }
    columns
        .iter()
        .map(|c| {
            let n = name_parts(c)?.pop().unwrap_or_default();
            table
                .schema
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(&n))
                .ok_or_else(|| {
                    BqError::invalid_query(format!("Column {n} is not present in table {t}"))
                })
        })
        .collect()
}

/// Whether a column type is or holds a STRUCT.
fn holds_struct(t: &DataType) -> bool {
    match t {
        DataType::Struct(_) => true,
        DataType::List(f) | DataType::LargeList(f) => holds_struct(f.data_type()),
        _ => false,
    }
}

/// The `DEFAULT` keyword as a VALUES item.
fn is_default(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT"))
}

/// A literal or a query parameter, possibly negated: the VALUES items BigQuery coerces as
/// literals (a STRING literal into a DATE column, say).
fn is_literal(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Value(_) | ast::Expr::TypedString { .. } => true,
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus | ast::UnaryOperator::Plus,
            expr,
        } => is_literal(expr),
        ast::Expr::Nested(e) => is_literal(e),
        _ => false,
    }
}

/// BigQuery refuses DML whose target is a view.
fn refuse_view(table: &Table, t: &TableRef) -> BqResult<()> {
    if matches!(table.kind, TableKind::View { .. }) {
        return Err(BqError::invalid_query(format!(
            "Cannot modify view {t}: DML statements are not allowed on views"
        )));
    }
    Ok(())
}

/// The columns a SET names must be the table's; each is then spelt as the table spells it
/// (BigQuery's column names are case-insensitive, DataFusion's are not).
fn check_assignments(table: &Table, assignments: &mut [ast::Assignment]) -> BqResult<()> {
    for a in assignments {
        let ast::AssignmentTarget::ColumnName(n) = &mut a.target else {
            return Err(BqError::unsupported("UPDATE SET (a, b) = ..."));
        };
        let col = name_parts(n)?.pop().unwrap_or_default();
        let field = table
            .schema
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(&col))
            .filter(|_| !col.eq_ignore_ascii_case(ROW_ID))
            .ok_or_else(|| BqError::invalid_query(format!("Unrecognized name: {col}")))?;
        *n = ast::ObjectName::from(vec![ast::Ident::with_quote('`', &field.name)]);
    }
    Ok(())
}

/// Names a rewritten statement's target (`project.dataset.table AS alias`) by its alias
/// alone, the name its [`DmlTarget`] is registered under; the alias is returned.
fn bare_target(tf: &mut ast::TableFactor) -> BqResult<String> {
    let ast::TableFactor::Table { name, alias, .. } = tf else {
        return Err(BqError::internal("DML target is not a table"));
    };
    let alias = alias
        .take()
        .map(|a| a.name.value)
        .ok_or_else(|| BqError::internal("DML target without an alias"))?;
    *name = ast::ObjectName::from(vec![ast::Ident::with_quote('`', &alias)]);
    Ok(alias)
}

/// A DataFusion error, or the emulator's own error carried through DataFusion.
fn dml_err(e: DataFusionError) -> BqError {
    match e {
        DataFusionError::External(b) => match b.downcast::<BqError>() {
            Ok(b) => *b,
            Err(b) => df_err(DataFusionError::External(b)),
        },
        DataFusionError::Context(_, inner) => dml_err(*inner),
        other => df_err(other),
    }
}

/// The engine's catalogs, with one more: the DML target, as the default catalog.
#[derive(Debug)]
struct WithTarget {
    inner: Arc<dyn CatalogProviderList>,
    name: String,
    catalog: Arc<dyn CatalogProvider>,
}

impl CatalogProviderList for WithTarget {
    fn register_catalog(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.inner.register_catalog(name, catalog)
    }

    fn catalog_names(&self) -> Vec<String> {
        self.inner.catalog_names()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        if name == self.name {
            return Some(self.catalog.clone());
        }
        self.inner.catalog(name)
    }
}

/// Whether a column of VALUES rows holds a bare NULL in one row and a call in another
/// (`(1, JSON '1'), (2, NULL)`): DataFusion's VALUES refuses a column whose values' fields
/// differ in metadata, as a JSON or GEOGRAPHY value's does from NULL's.
fn mixes_null_with_tagged(rows: &[Vec<ast::Expr>]) -> bool {
    let width = rows.first().map_or(0, Vec::len);
    (0..width).any(|k| {
        let null =
            |e: &ast::Expr| matches!(e, ast::Expr::Value(v) if matches!(v.value, ast::Value::Null));
        rows.iter().any(|r| r.get(k).is_some_and(null))
            && rows
                .iter()
                .any(|r| r.get(k).is_some_and(|e| !null(e) && !is_literal(e)))
    })
}

/// VALUES rows as `SELECT .. UNION ALL SELECT ..`, whose columns take each row's type.
fn union_of_rows(rows: &[Vec<ast::Expr>]) -> BqResult<ast::SetExpr> {
    let template = match crate::sql::parse::parse("SELECT 1")?.pop() {
        Some(Statement::Query(q)) => q.body,
        _ => return Err(BqError::internal("SELECT template")),
    };
    let select = |row: &Vec<ast::Expr>| {
        let mut body = template.clone();
        if let ast::SetExpr::Select(s) = body.as_mut() {
            s.projection = row
                .iter()
                .cloned()
                .map(ast::SelectItem::UnnamedExpr)
                .collect();
        }
        body
    };
    let mut rows = rows.iter();
    let first = rows
        .next()
        .map(select)
        .ok_or_else(|| BqError::invalid_query("VALUES without rows"))?;
    Ok(*rows.fold(first, |left, row| {
        Box::new(ast::SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier: ast::SetQuantifier::All,
            left,
            right: select(row),
        })
    }))
}

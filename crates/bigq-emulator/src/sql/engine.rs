//! Runs GoogleSQL scripts: queries on DataFusion, DDL and DML on the catalog.

use std::sync::Arc;

use bigq_codec::schema::{FieldMode, TableFieldSchema};
use datafusion::arrow::array::{ArrayRef, new_null_array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::{
    self, AlterTableOperation, ColumnOption, FromTable, ObjectType, Query, RenameTableNameKind,
    SchemaName, Statement,
};

use crate::catalog::{Catalog, Dataset, Table, TableKind, TableRef};
use crate::error::{BqError, BqResult};
use crate::sql::functions;
use crate::sql::names::{NameContext, TempScope, name_parts, qualified_name, resolve};
use crate::sql::params::Params;
use crate::sql::parse::parse;
use crate::sql::rewrite::{anonymous_unnests, expand_struct_unnests, rewrite_query};
use crate::sql::types::{self, range_element};

/// One query request.
#[derive(Clone, Debug, Default)]
pub struct QueryRequest {
    /// The GoogleSQL text (one statement or a script).
    pub sql: String,
    /// Where unqualified names resolve.
    pub names: NameContext,
    /// Parameter values.
    pub params: Params,
    /// Plan only: report the schema, change nothing.
    pub dry_run: bool,
    /// The session the query runs in (its temporary tables are `names.temp`), if any.
    pub session_id: Option<String>,
}

/// DML row counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmlStats {
    /// Rows inserted.
    pub inserted: i64,
    /// Rows updated.
    pub updated: i64,
    /// Rows deleted.
    pub deleted: i64,
}

impl DmlStats {
    /// `numDmlAffectedRows`.
    pub fn affected(&self) -> i64 {
        self.inserted + self.updated + self.deleted
    }
}

/// What a DDL statement did.
#[derive(Clone, Debug)]
pub struct DdlInfo {
    /// `CREATE`, `REPLACE`, `DROP`, `SKIP` or `ALTER`.
    pub operation: &'static str,
    /// The table it touched, if a table.
    pub target_table: Option<TableRef>,
}

/// The result of a query or script (the last statement's result for a script).
#[derive(Clone, Debug)]
pub struct QueryOutput {
    /// BigQuery result columns.
    pub schema: Vec<TableFieldSchema>,
    /// Arrow schema of the batches.
    pub arrow_schema: SchemaRef,
    /// Result rows.
    pub batches: Vec<RecordBatch>,
    /// `SELECT`, `INSERT`, `CREATE_TABLE`, `SCRIPT`, ...
    pub statement_type: &'static str,
    /// Row counts of a DML statement.
    pub dml: Option<DmlStats>,
    /// What a DDL statement did.
    pub ddl: Option<DdlInfo>,
    /// Whether the statement answers with rows (a query), so `totalRows` is reported.
    pub returns_rows: bool,
    /// The session the query ran in (`statistics.sessionInfo.sessionId`), if any.
    pub session_id: Option<String>,
}

impl QueryOutput {
    fn empty(statement_type: &'static str) -> QueryOutput {
        QueryOutput {
            schema: Vec::new(),
            arrow_schema: Arc::new(Schema::empty()),
            batches: Vec::new(),
            statement_type,
            dml: None,
            ddl: None,
            returns_rows: false,
            session_id: None,
        }
    }

    /// The number of result rows.
    pub fn total_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// The SQL engine: a DataFusion session over the catalog.
#[derive(Clone)]
pub struct Engine {
    catalog: Arc<Catalog>,
    ctx: SessionContext,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

/// A DataFusion error as BigQuery would word it.
pub fn df_err(e: DataFusionError) -> BqError {
    let raw = e.strip_backtrace();
    let mut msg = raw.as_str();
    for p in [
        "Error during planning: ",
        "Schema error: ",
        "Execution error: ",
        "Arrow error: ",
        "Optimizer rule 'simplify_expressions' failed\ncaused by\n",
        "External error: ",
        "type_coercion\ncaused by\n",
        "Internal error: ",
    ] {
        while let Some(rest) = msg.strip_prefix(p) {
            msg = rest;
        }
    }
    if let Some(rest) = msg.strip_prefix("No field named ") {
        let name = rest.split(['.', ' ']).next().unwrap_or(rest);
        return BqError::invalid_query(format!("Unrecognized name: {}", name.trim_matches('"')));
    }
    if let Some(rest) = msg.strip_prefix("This feature is not implemented: ") {
        return BqError::unsupported(rest);
    }
    if msg.contains("Divide by zero") {
        return BqError::invalid_query("division by zero");
    }
    if let Some(rest) = msg.strip_prefix("Invalid function ") {
        let name = rest.split('.').next().unwrap_or(rest).trim_matches('\'');
        return BqError::invalid_query(format!("Function not found: {name}"));
    }
    BqError::invalid_query(msg.to_string())
}

/// Casts `batches` (whose columns are in target order) to `target`'s Arrow schema.
fn conform(batches: &[RecordBatch], target: &SchemaRef) -> BqResult<Vec<RecordBatch>> {
    batches
        .iter()
        .filter(|b| b.num_rows() > 0)
        .map(|b| {
            let cols = b
                .columns()
                .iter()
                .zip(target.fields())
                .map(|(c, f)| {
                    if c.data_type() == f.data_type() {
                        Ok(c.clone())
                    } else {
                        cast(c, f.data_type()).map_err(|e| {
                            BqError::invalid_query(format!(
                                "Value of type {} cannot be assigned to {}: {e}",
                                c.data_type(),
                                f.name()
                            ))
                        })
                    }
                })
                .collect::<BqResult<Vec<ArrayRef>>>()?;
            RecordBatch::try_new(target.clone(), cols)
                .map_err(|e| BqError::invalid_query(format!("Cannot store the result: {e}")))
        })
        .collect()
}

/// `old` with the columns of `fields` it lacks added at the end (NULLABLE, NULL in its rows)
/// and `out`'s rows appended by column name, when every column of `old` is in `fields` with
/// its type; `None` when one is missing or typed otherwise.
fn with_added_fields(
    old: &Table,
    fields: &[TableFieldSchema],
    out: &QueryOutput,
) -> BqResult<Option<Table>> {
    let position = |name: &str| {
        fields
            .iter()
            .position(|f| f.name.eq_ignore_ascii_case(name))
    };
    let mut order = Vec::with_capacity(fields.len());
    for f in &old.schema {
        match position(&f.name) {
            Some(i) if fields[i].field_type == f.field_type => order.push(i),
            _ => return Ok(None),
        }
    }
    let mut schema = old.schema.clone();
    for (i, f) in fields.iter().enumerate() {
        if !order.contains(&i) {
            let mut f = f.clone();
            if f.mode() == FieldMode::Required {
                f.mode = Some(FieldMode::Nullable);
            }
            schema.push(f);
            order.push(i);
        }
    }
    let mut table = Table::new(schema)?;
    table.creation_time = old.creation_time;
    let target = table.arrow_schema.clone();
    let mut batches = Vec::with_capacity(old.batches.len() + out.batches.len());
    for b in &old.batches {
        let mut cols = b.columns().to_vec();
        for f in &target.fields()[cols.len()..] {
            cols.push(datafusion::arrow::array::new_null_array(
                f.data_type(),
                b.num_rows(),
            ));
        }
        batches.push(
            RecordBatch::try_new(target.clone(), cols)
                .map_err(|e| BqError::internal(format!("adding columns: {e}")))?,
        );
    }
    let reordered = out
        .batches
        .iter()
        .map(|b| {
            let schema = b.schema();
            let fields: Vec<_> = order.iter().map(|&i| schema.field(i).clone()).collect();
            let cols = order.iter().map(|&i| b.column(i).clone()).collect();
            RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)
                .map_err(|e| BqError::internal(format!("reordering columns: {e}")))
        })
        .collect::<BqResult<Vec<_>>>()?;
    batches.extend(conform(&reordered, &target)?);
    table.batches = batches;
    Ok(Some(table))
}

/// A result's BigQuery schema as a table schema (no NULLABLE mode spelled out).
fn table_schema_of(arrow: &Schema) -> BqResult<Vec<TableFieldSchema>> {
    let mut fields = types::bq_schema_of(arrow)?;
    fn clear(f: &mut TableFieldSchema) {
        if f.mode == Some(FieldMode::Nullable) {
            f.mode = None;
        }
        f.fields.iter_mut().for_each(clear);
    }
    fields.iter_mut().for_each(clear);
    Ok(fields)
}

/// A query result as a table: the schema BigQuery gives the destination table (modes as
/// stored) and the rows in the catalog's canonical Arrow layout.
pub fn result_table(out: &QueryOutput) -> BqResult<Table> {
    let mut table = Table::new(table_schema_of(&out.arrow_schema)?)?;
    table.batches = conform(&out.batches, &table.arrow_schema)?;
    Ok(table)
}

/// A table schema as a query result reports it (mode NULLABLE spelled out).
fn result_style(fields: &[TableFieldSchema]) -> Vec<TableFieldSchema> {
    fields
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.mode.get_or_insert(FieldMode::Nullable);
            f.fields = result_style(&f.fields);
            f
        })
        .collect()
}

fn column_def_field(c: &ast::ColumnDef) -> BqResult<TableFieldSchema> {
    let mut f = types::bq_field_of_sql(&c.name.value, &c.data_type)?;
    for o in &c.options {
        match &o.option {
            ColumnOption::NotNull => {
                if f.mode() != FieldMode::Repeated {
                    f.mode = Some(FieldMode::Required);
                }
            }
            ColumnOption::Null => {}
            ColumnOption::Options(_) | ColumnOption::Comment(_) => {}
            other => return Err(BqError::unsupported(format!("column option {other}"))),
        }
    }
    Ok(f)
}

fn dataset_of(name: &ast::ObjectName, cx: &NameContext) -> BqResult<(String, String)> {
    let parts = name_parts(name)?;
    match parts.as_slice() {
        [p, d] => Ok((p.clone(), d.clone())),
        [d] => Ok((cx.project.clone(), d.clone())),
        _ => Err(BqError::invalid_query(format!(
            "Invalid dataset name: {}",
            parts.join(".")
        ))),
    }
}

impl Engine {
    /// An engine over `catalog`.
    pub fn new(catalog: Arc<Catalog>) -> Engine {
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
        opts.execution.time_zone = Some("UTC".to_string());
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .with_catalog_list(catalog.provider())
            .build();
        let ctx = SessionContext::new_with_state(state);
        functions::register(&ctx);
        Engine { catalog, ctx }
    }

    /// Stores a query result in a destination table, as `configuration.query.
    /// destinationTable` asks: `write` is WRITE_EMPTY, WRITE_TRUNCATE or WRITE_APPEND;
    /// `add_fields` (`schemaUpdateOptions: ALLOW_FIELD_ADDITION`) lets an append bring
    /// columns the table lacks, which it gains (NULLABLE, NULL in the rows it had).
    ///
    /// Answers with the destination table's rows, which is what BigQuery's
    /// `getQueryResults` reads for such a job.
    pub fn write_result(
        &self,
        t: &TableRef,
        out: &QueryOutput,
        create_never: bool,
        write: &str,
        add_fields: bool,
    ) -> BqResult<QueryOutput> {
        self.store_result(t, out, create_never, write, add_fields)?;
        let table = self.catalog.read().table(t)?;
        Ok(QueryOutput {
            schema: result_style(&table.schema),
            arrow_schema: table.arrow_schema.clone(),
            batches: table.batches.clone(),
            statement_type: out.statement_type,
            dml: None,
            ddl: None,
            returns_rows: true,
            session_id: None,
        })
    }

    fn store_result(
        &self,
        t: &TableRef,
        out: &QueryOutput,
        create_never: bool,
        write: &str,
        add_fields: bool,
    ) -> BqResult<()> {
        let fields = table_schema_of(&out.arrow_schema)?;
        let mut w = self.catalog.write();
        w.dataset_mut(&t.project, &t.dataset)?;
        let existing = w.table(t).ok();
        match existing {
            None if create_never => Err(BqError::not_found(format!("Not found: Table {t}"))),
            None => {
                let mut table = Table::new(fields)?;
                table.batches = conform(&out.batches, &table.arrow_schema)?;
                w.create_table(t, table, false)
            }
            Some(old) => match write {
                "WRITE_TRUNCATE" => {
                    let mut table = Table::new(fields)?;
                    table.creation_time = old.creation_time;
                    table.batches = conform(&out.batches, &table.arrow_schema)?;
                    w.put_table(t, table)
                }
                "WRITE_APPEND" => {
                    let same = fields.len() == old.schema.len()
                        && fields.iter().zip(&old.schema).all(|(a, b)| {
                            a.name.eq_ignore_ascii_case(&b.name) && a.field_type == b.field_type
                        });
                    if !same {
                        if add_fields && let Some(table) = with_added_fields(&old, &fields, out)? {
                            return w.put_table(t, table);
                        }
                        return Err(BqError::invalid(format!(
                            "Provided Schema does not match Table {t}."
                        )));
                    }
                    let mut table = (*old).clone();
                    table
                        .batches
                        .extend(conform(&out.batches, &old.arrow_schema)?);
                    w.put_table(t, table)
                }
                _ => {
                    if old.num_rows() > 0 {
                        Err(BqError::duplicate(format!("Already Exists: Table {t}")))
                    } else {
                        let mut table = Table::new(fields)?;
                        table.batches = conform(&out.batches, &table.arrow_schema)?;
                        w.put_table(t, table)
                    }
                }
            },
        }
    }

    /// Runs a query or script; a script answers with its last statement's result.
    pub async fn execute(&self, req: &QueryRequest) -> BqResult<QueryOutput> {
        let mut out = self.execute_script(req).await.map_err(|e| {
            if e.reason == "invalidQuery" && e.location.is_none() {
                e.with_location("q")
            } else {
                e
            }
        })?;
        out.session_id = req.session_id.clone();
        Ok(out)
    }

    async fn execute_script(&self, req: &QueryRequest) -> BqResult<QueryOutput> {
        let stmts = parse(&req.sql)?;
        if stmts.is_empty() {
            return Err(BqError::invalid_query(
                "Syntax error: Unexpected end of script",
            ));
        }
        let n = stmts.len();
        // A script outside a session keeps its temporary tables in a hidden dataset of its
        // own, dropped when it ends.
        let script_temp = (req.names.temp.is_none()
            && n > 1
            && stmts
                .iter()
                .any(|s| matches!(s, Statement::CreateTable(ct) if ct.temporary)))
        .then(|| TempScope::new(&req.names.project));
        let scoped;
        let req = match &script_temp {
            Some(scope) => {
                let mut r = req.clone();
                r.names.temp = Some(scope.clone());
                scoped = r;
                &scoped
            }
            None => req,
        };
        let mut last = None;
        let mut failed = None;
        for stmt in stmts {
            match self.statement(stmt, req).await {
                Ok(out) => last = Some(out),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if let Some(scope) = &script_temp {
            // Absent when no temporary table was made before a failure.
            let _ = self
                .catalog
                .write()
                .delete_dataset(&scope.project, &scope.dataset, true);
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let mut out = last.unwrap_or_else(|| QueryOutput::empty("SCRIPT"));
        if n > 1 {
            out.statement_type = "SCRIPT";
            out.dml = None;
            out.ddl = None;
        }
        Ok(out)
    }

    async fn plan_and_run(
        &self,
        mut q: Box<Query>,
        req: &QueryRequest,
        dry_run: bool,
    ) -> BqResult<(SchemaRef, Vec<RecordBatch>)> {
        rewrite_query(&mut q, &self.catalog, &req.names, &req.params)?;
        let state = self.ctx.state();
        self.expand_struct_unnests(&mut q, &state).await?;
        let plan = state
            .statement_to_plan(DfStatement::Statement(Box::new(Statement::Query(q))))
            .await
            .map_err(df_err)?;
        let schema: SchemaRef = Arc::new(plan.schema().as_arrow().clone());
        if dry_run {
            return Ok((schema, Vec::new()));
        }
        let df = self.ctx.execute_logical_plan(plan).await.map_err(df_err)?;
        let batches = df.collect().await.map_err(df_err)?;
        Ok((schema, batches))
    }

    /// Makes the fields of an unaliased `UNNEST` of an array of STRUCTs its columns, as
    /// BigQuery does: each such array's type is learnt by planning `SELECT <array>` alone
    /// (an array that needs the query's other tables is left as it is).
    async fn expand_struct_unnests(
        &self,
        q: &mut Query,
        state: &datafusion::execution::SessionState,
    ) -> BqResult<()> {
        let arrays = anonymous_unnests(q);
        if arrays.is_empty() {
            return Ok(());
        }
        let mut fields = Vec::with_capacity(arrays.len());
        for array in arrays {
            let probe = self.select_of(array)?;
            let planned = state
                .statement_to_plan(DfStatement::Statement(Box::new(Statement::Query(probe))))
                .await;
            fields.push(
                planned
                    .ok()
                    .and_then(|plan| match plan.schema().field(0).data_type() {
                        DataType::List(item) | DataType::LargeList(item)
                            if range_element(item.data_type()).is_none() =>
                        {
                            match item.data_type() {
                                DataType::Struct(fs) => {
                                    Some(fs.iter().map(|f| f.name().clone()).collect())
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    }),
            );
        }
        expand_struct_unnests(q, &fields)
    }

    /// A script variable's value, evaluated once (`SELECT CAST(value AS type)`), as a
    /// literal for the statements that use it; NULL when there is no value.
    async fn variable_value(
        &self,
        value: Option<ast::Expr>,
        data_type: Option<&ast::DataType>,
        req: &QueryRequest,
    ) -> BqResult<ast::Expr> {
        let value = value.unwrap_or(ast::Expr::value(ast::Value::Null));
        let expr = match data_type {
            Some(t) => ast::Expr::Cast {
                kind: ast::CastKind::Cast,
                expr: Box::new(value),
                data_type: t.clone(),
                array: false,
                format: None,
            },
            None => value,
        };
        let (schema, batches) = self.plan_and_run(self.select_of(expr)?, req, false).await?;
        let scalar = match batches.iter().find(|b| b.num_rows() > 0) {
            Some(b) => datafusion::common::ScalarValue::try_from_array(b.column(0), 0),
            None => datafusion::common::ScalarValue::try_from(schema.field(0).data_type()),
        }
        .map_err(df_err)?;
        if scalar.is_null()
            && let Some(t) = data_type
        {
            // A typed NULL keeps its type (the unparser would write a bare NULL).
            return Ok(ast::Expr::Cast {
                kind: ast::CastKind::Cast,
                expr: Box::new(ast::Expr::value(ast::Value::Null)),
                data_type: types::datafusion_sql_type(t).unwrap_or_else(|| t.clone()),
                array: false,
                format: None,
            });
        }
        datafusion::sql::unparser::Unparser::default()
            .expr_to_sql(&datafusion::logical_expr::Expr::Literal(scalar, None))
            .map_err(df_err)
    }

    /// `SELECT expr`, for an expression already in the AST.
    fn select_of(&self, expr: ast::Expr) -> BqResult<Box<Query>> {
        let mut q = self.parse_query("SELECT 1")?;
        if let ast::SetExpr::Select(s) = q.body.as_mut() {
            s.projection = vec![ast::SelectItem::UnnamedExpr(expr)];
        }
        Ok(q)
    }

    fn parse_query(&self, sql: &str) -> BqResult<Box<Query>> {
        match parse(sql)?.pop() {
            Some(Statement::Query(q)) => Ok(q),
            _ => Err(BqError::internal(format!("not a query: {sql}"))),
        }
    }

    /// Where `CREATE TEMP TABLE name` puts its table: the script's or session's hidden
    /// dataset (made on first use). The name must have one part.
    fn temp_table(&self, name: &ast::ObjectName, cx: &NameContext) -> BqResult<TableRef> {
        let scope = cx.temp.as_ref().ok_or_else(|| {
            BqError::invalid_query("Use of CREATE TEMPORARY TABLE requires a script or session")
        })?;
        let parts = name_parts(name)?;
        let [table] = parts.as_slice() else {
            return Err(BqError::invalid_query(format!(
                "Temporary table name {} cannot be qualified",
                parts.join(".")
            )));
        };
        let mut w = self.catalog.write();
        if w.dataset_mut(&scope.project, &scope.dataset).is_err() {
            w.create_dataset(&scope.project, &scope.dataset, Dataset::new(None))?;
        }
        Ok(scope.add(table))
    }

    async fn statement(&self, stmt: Statement, req: &QueryRequest) -> BqResult<QueryOutput> {
        let cx = &req.names;
        match stmt {
            Statement::Query(q) => {
                let (schema, batches) = self.plan_and_run(q, req, req.dry_run).await?;
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
                })
            }
            Statement::CreateTable(ct) => {
                let t = if ct.temporary {
                    self.temp_table(&ct.name, cx)?
                } else {
                    resolve(&ct.name, cx)?
                };
                let exists = self.catalog.read().table(&t).is_ok();
                self.catalog.read().dataset(&t.project, &t.dataset)?;
                let stype = if ct.query.is_some() {
                    "CREATE_TABLE_AS_SELECT"
                } else {
                    "CREATE_TABLE"
                };
                if exists && ct.if_not_exists {
                    let mut out = QueryOutput::empty(stype);
                    if let Ok(fields) = ct
                        .columns
                        .iter()
                        .map(column_def_field)
                        .collect::<BqResult<Vec<_>>>()
                    {
                        out.schema = result_style(&fields);
                    }
                    out.ddl = Some(DdlInfo {
                        operation: "SKIP",
                        target_table: Some(t),
                    });
                    return Ok(out);
                }
                if exists && !ct.or_replace {
                    return Err(BqError::duplicate(format!("Already Exists: Table {t}")));
                }
                let table = match ct.query {
                    Some(q) => {
                        let (schema, batches) = self.plan_and_run(q, req, req.dry_run).await?;
                        let mut bq = table_schema_of(&schema)?;
                        if !ct.columns.is_empty() {
                            let declared = ct
                                .columns
                                .iter()
                                .map(column_def_field)
                                .collect::<BqResult<Vec<_>>>()?;
                            if declared.len() != bq.len() {
                                return Err(BqError::invalid_query(
                                    "The number of columns in the column definition list does not match the query",
                                ));
                            }
                            bq = declared;
                        }
                        let mut table = Table::new(bq)?;
                        table.batches = conform(&batches, &table.arrow_schema)?;
                        table
                    }
                    None => {
                        if ct.columns.is_empty() {
                            return Err(BqError::invalid_query(
                                "CREATE TABLE needs a column list or AS SELECT",
                            ));
                        }
                        let fields = ct
                            .columns
                            .iter()
                            .map(column_def_field)
                            .collect::<BqResult<Vec<_>>>()?;
                        Table::new(fields)?
                    }
                };
                let mut out = QueryOutput::empty(stype);
                out.ddl = Some(DdlInfo {
                    operation: if exists { "REPLACE" } else { "CREATE" },
                    target_table: Some(t.clone()),
                });
                out.schema = result_style(&table.schema);
                if !req.dry_run {
                    self.catalog.write().create_table(&t, table, true)?;
                }
                Ok(out)
            }
            Statement::CreateView(cv) => {
                let t = resolve(&cv.name, cx)?;
                let exists = self.catalog.read().table(&t).is_ok();
                if exists && cv.if_not_exists {
                    return Ok(QueryOutput::empty("CREATE_VIEW"));
                }
                if exists && !cv.or_replace {
                    return Err(BqError::duplicate(format!("Already Exists: Table {t}")));
                }
                // Plan it now: a view over a missing table is an error at creation.
                let (schema, _) = self.plan_and_run(cv.query.clone(), req, true).await?;
                let mut table = Table::new(table_schema_of(&schema)?)?;
                table.kind = TableKind::View {
                    query: cv.query.to_string(),
                };
                if !req.dry_run {
                    self.catalog.write().create_table(&t, table, true)?;
                }
                let mut out = QueryOutput::empty("CREATE_VIEW");
                out.schema = types::bq_schema_of(&schema)?;
                out.ddl = Some(DdlInfo {
                    operation: if exists { "REPLACE" } else { "CREATE" },
                    target_table: Some(t),
                });
                Ok(out)
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => {
                let mut out = QueryOutput::empty(match object_type {
                    ObjectType::Table => "DROP_TABLE",
                    ObjectType::View => "DROP_VIEW",
                    ObjectType::Schema => "DROP_SCHEMA",
                    _ => "DROP",
                });
                for name in &names {
                    match object_type {
                        ObjectType::Table | ObjectType::View => {
                            let t = resolve(name, cx)?;
                            let found = self.catalog.read().table(&t);
                            match found {
                                Ok(tbl) => {
                                    let is_view = matches!(tbl.kind, TableKind::View { .. });
                                    if is_view != (object_type == ObjectType::View) {
                                        return Err(BqError::invalid_query(format!(
                                            "{t} is not a {}",
                                            if is_view { "table" } else { "view" }
                                        )));
                                    }
                                    if !req.dry_run {
                                        self.catalog.write().delete_table(&t)?;
                                    }
                                    out.ddl = Some(DdlInfo {
                                        operation: "DROP",
                                        target_table: Some(t),
                                    });
                                }
                                Err(_) if if_exists => {
                                    out.ddl = Some(DdlInfo {
                                        operation: "SKIP",
                                        target_table: Some(t),
                                    });
                                }
                                Err(_) => {
                                    // Dataset missing or table missing: BigQuery's wording.
                                    self.catalog.read().dataset(&t.project, &t.dataset)?;
                                    return Err(BqError::not_found(format!(
                                        "Not found: Table {t}"
                                    )));
                                }
                            }
                        }
                        ObjectType::Schema => {
                            let (p, d) = dataset_of(name, cx)?;
                            let exists = self.catalog.read().dataset(&p, &d).is_ok();
                            if !exists {
                                if if_exists {
                                    continue;
                                }
                                return Err(BqError::not_found(format!(
                                    "Not found: Dataset {p}:{d}"
                                )));
                            }
                            if !req.dry_run {
                                self.catalog
                                    .write()
                                    .delete_dataset(&p, &d, cascade)
                                    .map_err(|e| {
                                        if e.reason == "invalid" {
                                            BqError {
                                                status: 400,
                                                reason: "resourceInUse",
                                                message: format!("Dataset {p}:{d} is still in use"),
                                                location: None,
                                            }
                                        } else {
                                            e
                                        }
                                    })?;
                            }
                            out.ddl = Some(DdlInfo {
                                operation: "DROP",
                                target_table: None,
                            });
                        }
                        other => return Err(BqError::unsupported(format!("DROP {other}"))),
                    }
                }
                Ok(out)
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                let name = match &schema_name {
                    SchemaName::Simple(n) | SchemaName::NamedAuthorization(n, _) => n,
                    SchemaName::UnnamedAuthorization(_) => {
                        return Err(BqError::unsupported("CREATE SCHEMA AUTHORIZATION"));
                    }
                };
                let (p, d) = dataset_of(name, cx)?;
                let mut out = QueryOutput::empty("CREATE_SCHEMA");
                if req.dry_run {
                    return Ok(out);
                }
                match self
                    .catalog
                    .write()
                    .create_dataset(&p, &d, Dataset::new(None))
                {
                    Ok(()) => {}
                    Err(_) if if_not_exists => {}
                    Err(_) => {
                        return Err(BqError::duplicate(format!(
                            "Already Exists: Dataset {p}:{d}"
                        )));
                    }
                }
                out.ddl = Some(DdlInfo {
                    operation: "CREATE",
                    target_table: None,
                });
                Ok(out)
            }
            Statement::Truncate(tr) => {
                let mut out = QueryOutput::empty("TRUNCATE_TABLE");
                for target in &tr.table_names {
                    let t = resolve(&target.name, cx)?;
                    let table = self.catalog.read().table(&t)?;
                    let deleted = table.num_rows() as i64;
                    if !req.dry_run {
                        let mut new = (*table).clone();
                        new.batches.clear();
                        self.catalog.write().put_table(&t, new)?;
                    }
                    out.dml = Some(DmlStats {
                        deleted,
                        ..Default::default()
                    });
                }
                Ok(out)
            }
            Statement::AlterTable(at) => {
                let t = resolve(&at.name, cx)?;
                let table = match self.catalog.read().table(&t) {
                    Ok(t) => t,
                    Err(e) if at.if_exists && e.reason == "notFound" => {
                        return Ok(QueryOutput::empty("ALTER_TABLE"));
                    }
                    Err(e) => return Err(e),
                };
                let mut new = (*table).clone();
                let mut rename = None;
                for op in &at.operations {
                    match op {
                        AlterTableOperation::AddColumn {
                            column_def,
                            if_not_exists,
                            ..
                        } => {
                            let f = column_def_field(column_def)?;
                            if new
                                .schema
                                .iter()
                                .any(|c| c.name.eq_ignore_ascii_case(&f.name))
                            {
                                if *if_not_exists {
                                    continue;
                                }
                                return Err(BqError::invalid_query(format!(
                                    "Column already exists: {}",
                                    f.name
                                )));
                            }
                            if f.mode() == FieldMode::Required {
                                return Err(BqError::invalid_query(format!(
                                    "Cannot add a REQUIRED column {}",
                                    f.name
                                )));
                            }
                            new.schema.push(f);
                        }
                        AlterTableOperation::DropColumn {
                            column_names,
                            if_exists,
                            ..
                        } => {
                            for c in column_names {
                                let before = new.schema.len();
                                new.schema
                                    .retain(|f| !f.name.eq_ignore_ascii_case(&c.value));
                                if before == new.schema.len() && !if_exists {
                                    return Err(BqError::invalid_query(format!(
                                        "Column not found: {}",
                                        c.value
                                    )));
                                }
                            }
                        }
                        AlterTableOperation::RenameTable { table_name } => {
                            let n = match table_name {
                                RenameTableNameKind::As(n) | RenameTableNameKind::To(n) => n,
                            };
                            let parts = name_parts(n)?;
                            let last = parts.last().cloned().unwrap_or_default();
                            rename = Some(TableRef {
                                table: last,
                                ..t.clone()
                            });
                        }
                        other => {
                            return Err(BqError::unsupported(format!("ALTER TABLE {other}")));
                        }
                    }
                }
                // Rebuild the data for the new column list.
                let arrow_schema = Arc::new(types::arrow_schema(&new.schema)?);
                let mut batches = Vec::with_capacity(new.batches.len());
                for b in &new.batches {
                    let cols = arrow_schema
                        .fields()
                        .iter()
                        .map(|f| match table.arrow_schema.index_of(f.name()) {
                            Ok(i) => b.column(i).clone(),
                            Err(_) => new_null_array(f.data_type(), b.num_rows()),
                        })
                        .collect::<Vec<_>>();
                    batches.push(
                        RecordBatch::try_new(arrow_schema.clone(), cols)
                            .map_err(|e| BqError::internal(e.to_string()))?,
                    );
                }
                new.arrow_schema = arrow_schema;
                new.batches = batches;
                if !req.dry_run {
                    let mut w = self.catalog.write();
                    match &rename {
                        Some(to) => {
                            w.create_table(to, new, false)?;
                            w.delete_table(&t)?;
                        }
                        None => w.put_table(&t, new)?,
                    }
                }
                let mut out = QueryOutput::empty("ALTER_TABLE");
                out.ddl = Some(DdlInfo {
                    operation: "ALTER",
                    target_table: Some(t),
                });
                Ok(out)
            }
            Statement::Declare { stmts } => {
                for d in stmts {
                    let value = match d.assignment {
                        Some(
                            ast::DeclareAssignment::Default(e)
                            | ast::DeclareAssignment::Expr(e)
                            | ast::DeclareAssignment::DuckAssignment(e),
                        ) => Some(*e),
                        Some(other) => {
                            return Err(BqError::unsupported(format!("DECLARE ... {other}")));
                        }
                        None => None,
                    };
                    if value.is_none() && d.data_type.is_none() {
                        return Err(BqError::invalid_query(
                            "Either a type or a DEFAULT value is required in DECLARE",
                        ));
                    }
                    let literal = self
                        .variable_value(value, d.data_type.as_ref(), req)
                        .await?;
                    let mut vars = cx.vars.lock().unwrap_or_else(|e| e.into_inner());
                    for n in &d.names {
                        vars.insert(n.value.to_ascii_lowercase(), literal.clone());
                    }
                }
                Ok(QueryOutput::empty("DECLARE"))
            }
            Statement::Set(ast::Set::SingleAssignment {
                variable, values, ..
            }) if values.len() == 1 => {
                let name = variable.to_string().to_ascii_lowercase();
                let declared = cx
                    .vars
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains_key(&name);
                if !declared {
                    return Err(BqError::invalid_query(format!(
                        "Unrecognized variable: {variable}"
                    )));
                }
                let value = values.into_iter().next();
                let literal = self.variable_value(value, None, req).await?;
                cx.vars
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name, literal);
                Ok(QueryOutput::empty("SET"))
            }
            Statement::Insert(ins) => self.insert(ins, req).await,
            Statement::Update(up) => self.update(up, req).await,
            Statement::Delete(del) => self.delete(del, req).await,
            Statement::Merge(m) => self.merge(m, req).await,
            other => {
                let text = other.to_string();
                let head: String = text
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                Err(BqError::unsupported(format!("statement {head}")))
            }
        }
    }

    async fn insert(&self, ins: ast::Insert, req: &QueryRequest) -> BqResult<QueryOutput> {
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
        let source = ins
            .source
            .ok_or_else(|| BqError::unsupported("INSERT without VALUES or SELECT"))?;
        let targets = target_positions(&table, &t, &ins.columns)?;
        let mut source = source;
        if let ast::SetExpr::Values(values) = source.body.as_mut() {
            // DEFAULT takes the column default; columns here have none, so NULL.
            for row in &mut values.rows {
                for e in row.iter_mut() {
                    if matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT"))
                    {
                        *e = ast::Expr::value(ast::Value::Null);
                    }
                }
            }
        }
        let (schema, batches) = self.plan_and_run(source, req, req.dry_run).await?;
        if schema.fields().len() != targets.len() {
            return Err(BqError::invalid_query(format!(
                "Inserted row has wrong column count; Has {}, expected {}",
                schema.fields().len(),
                targets.len()
            )));
        }
        let inserted = batches.iter().map(|b| b.num_rows() as i64).sum::<i64>();
        let new_batches = place_columns(&table, &targets, &batches)?;
        let conformed = new_batches;
        check_required(&table, &conformed)?;
        if !req.dry_run {
            let mut w = self.catalog.write();
            let mut current = (*w.table(&t)?).clone();
            current.batches.extend(conformed);
            w.put_table(&t, current)?;
        }
        let mut out = QueryOutput::empty("INSERT");
        if req.dry_run {
            out.schema = result_style(&table.schema);
        }
        out.dml = Some(DmlStats {
            inserted,
            ..Default::default()
        });
        Ok(out)
    }

    async fn update(&self, up: ast::Update, req: &QueryRequest) -> BqResult<QueryOutput> {
        if !up.table.joins.is_empty() {
            return Err(BqError::unsupported("UPDATE with JOIN"));
        }
        let (name, alias) = match &up.table.relation {
            ast::TableFactor::Table { name, alias, .. } => (name.clone(), alias.clone()),
            other => return Err(BqError::unsupported(format!("UPDATE {other}"))),
        };
        let t = resolve(&name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        let qualifier = alias
            .map(|a| a.name.value)
            .unwrap_or_else(|| t.table.clone());
        let cond = up
            .selection
            .as_ref()
            .map(|s| s.to_string())
            .ok_or_else(|| BqError::invalid_query("UPDATE must have a WHERE clause"))?;
        let mut sets = Vec::new();
        for a in &up.assignments {
            let col = match &a.target {
                ast::AssignmentTarget::ColumnName(n) => name_parts(n)?.pop().unwrap_or_default(),
                ast::AssignmentTarget::Tuple(_) => {
                    return Err(BqError::unsupported("UPDATE SET (a, b) = ..."));
                }
            };
            if !table
                .schema
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(&col))
            {
                return Err(BqError::invalid_query(format!("Unrecognized name: {col}")));
            }
            sets.push((col, a.value.to_string()));
        }
        let projection = table
            .schema
            .iter()
            .map(
                |f| match sets.iter().find(|(c, _)| c.eq_ignore_ascii_case(&f.name)) {
                    Some((_, v)) => format!("({v}) AS `{}`", f.name),
                    None => format!("`{qualifier}`.`{}`", f.name),
                },
            )
            .collect::<Vec<_>>()
            .join(", ");
        let kept_cols = table
            .schema
            .iter()
            .map(|f| format!("`{qualifier}`.`{}`", f.name))
            .collect::<Vec<_>>()
            .join(", ");
        let target = up.table.to_string();
        let (updated_sql, kept_sql) = match &up.from {
            None => (
                format!("SELECT {projection} FROM {target} WHERE {cond}"),
                format!("SELECT {kept_cols} FROM {target} WHERE NOT COALESCE(({cond}), FALSE)"),
            ),
            Some(ast::UpdateTableFromKind::BeforeSet(from))
            | Some(ast::UpdateTableFromKind::AfterSet(from)) => {
                let from = from
                    .iter()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                (
                    format!("SELECT {projection} FROM {target}, {from} WHERE {cond}"),
                    format!(
                        "SELECT {kept_cols} FROM {target} WHERE NOT EXISTS (SELECT 1 FROM {from} WHERE {cond})"
                    ),
                )
            }
        };
        let (_, updated) = self
            .plan_and_run(self.parse_query(&updated_sql)?, req, req.dry_run)
            .await?;
        let (_, kept) = self
            .plan_and_run(self.parse_query(&kept_sql)?, req, req.dry_run)
            .await?;
        let n_updated: usize = updated.iter().map(|b| b.num_rows()).sum();
        let mut conformed = conform(&kept, &table.arrow_schema)?;
        conformed.extend(conform(&updated, &table.arrow_schema)?);
        check_required(&table, &conformed)?;
        if !req.dry_run {
            let mut new = (*table).clone();
            new.batches = conformed;
            self.catalog.write().put_table(&t, new)?;
        }
        let mut out = QueryOutput::empty("UPDATE");
        out.dml = Some(DmlStats {
            updated: n_updated as i64,
            ..Default::default()
        });
        Ok(out)
    }

    async fn merge(&self, m: ast::Merge, req: &QueryRequest) -> BqResult<QueryOutput> {
        use datafusion::arrow::array::{Array, AsArray, BooleanArray};
        use datafusion::arrow::compute::filter_record_batch;
        use datafusion::arrow::datatypes::Int64Type;

        let (name, alias) = match &m.table {
            ast::TableFactor::Table { name, alias, .. } => (name.clone(), alias.clone()),
            other => return Err(BqError::unsupported(format!("MERGE INTO {other}"))),
        };
        let t = resolve(&name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        let tq = alias
            .map(|a| a.name.value)
            .unwrap_or_else(|| t.table.clone());
        let (src_body, sq) = match &m.source {
            ast::TableFactor::Table { name, alias, .. } => {
                let last = name_parts(name)?.pop().unwrap_or_default();
                (
                    name.to_string(),
                    alias.as_ref().map(|a| a.name.value.clone()).unwrap_or(last),
                )
            }
            ast::TableFactor::Derived {
                subquery, alias, ..
            } => (
                format!("({subquery})"),
                alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| "__merge_source".to_string()),
            ),
            other => return Err(BqError::unsupported(format!("MERGE USING {other}"))),
        };
        let on = m.on.to_string();
        let source =
            format!("(SELECT __src.*, TRUE AS __merge_s FROM {src_body} AS __src) AS `{sq}`");
        let target_cols = |prefix: &str| {
            table
                .schema
                .iter()
                .map(|f| format!("{prefix}`{}`", f.name))
                .collect::<Vec<_>>()
        };
        // Target side: each target row, with the first clause that applies to it.
        let mut when_clause = Vec::new();
        let mut col_cases: Vec<Vec<String>> = vec![Vec::new(); table.schema.len()];
        let mut deletes = Vec::new();
        let mut inserts = Vec::new();
        for (i, c) in m.clauses.iter().enumerate() {
            let k = i + 1;
            let pred = c
                .predicate
                .as_ref()
                .map(|p| format!(" AND COALESCE(({p}), FALSE)"))
                .unwrap_or_default();
            let cond = match c.clause_kind {
                ast::MergeClauseKind::Matched => format!("`{sq}`.__merge_s IS NOT NULL{pred}"),
                ast::MergeClauseKind::NotMatchedBySource => {
                    format!("`{sq}`.__merge_s IS NULL{pred}")
                }
                ast::MergeClauseKind::NotMatched | ast::MergeClauseKind::NotMatchedByTarget => {
                    inserts.push((k, c));
                    continue;
                }
            };
            when_clause.push(format!("WHEN {cond} THEN {k}"));
            match &c.action {
                ast::MergeAction::Update(u) => {
                    for a in &u.assignments {
                        let col = match &a.target {
                            ast::AssignmentTarget::ColumnName(n) => {
                                name_parts(n)?.pop().unwrap_or_default()
                            }
                            ast::AssignmentTarget::Tuple(_) => {
                                return Err(BqError::unsupported("MERGE UPDATE SET (a, b)"));
                            }
                        };
                        let idx = table
                            .schema
                            .iter()
                            .position(|f| f.name.eq_ignore_ascii_case(&col))
                            .ok_or_else(|| {
                                BqError::invalid_query(format!("Unrecognized name: {col}"))
                            })?;
                        col_cases[idx].push(format!("WHEN {cond} THEN ({})", a.value));
                    }
                }
                ast::MergeAction::Delete { .. } => deletes.push(k as i64),
                ast::MergeAction::Insert(_) => {
                    return Err(BqError::invalid_query(
                        "INSERT is only allowed in WHEN NOT MATCHED clauses",
                    ));
                }
            }
        }
        let projection = table
            .schema
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if col_cases[i].is_empty() {
                    format!("`{tq}`.`{}` AS `{}`", f.name, f.name)
                } else {
                    format!(
                        "CASE {} ELSE `{tq}`.`{}` END AS `{}`",
                        col_cases[i].join(" "),
                        f.name,
                        f.name
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let clause_col = if when_clause.is_empty() {
            "0".to_string()
        } else {
            format!("CASE {} ELSE 0 END", when_clause.join(" "))
        };
        let target_sql = format!(
            "SELECT {projection}, {clause_col} AS __merge_clause FROM {} AS `{tq}` LEFT JOIN {source} ON {on}",
            qualified_name(&t)
        );
        let (_, rows) = self
            .plan_and_run(self.parse_query(&target_sql)?, req, req.dry_run)
            .await?;
        let ncols = table.schema.len();
        let (mut updated, mut deleted) = (0i64, 0i64);
        let mut kept = Vec::new();
        for b in &rows {
            let clause = b.column(ncols).as_primitive::<Int64Type>();
            let mut keep = Vec::with_capacity(b.num_rows());
            for r in 0..b.num_rows() {
                let k = if clause.is_null(r) {
                    0
                } else {
                    clause.value(r)
                };
                let is_delete = deletes.contains(&k);
                if k != 0 {
                    if is_delete {
                        deleted += 1;
                    } else {
                        updated += 1;
                    }
                }
                keep.push(!is_delete);
            }
            let b = b
                .project(&(0..ncols).collect::<Vec<_>>())
                .map_err(|e| BqError::internal(e.to_string()))?;
            let b = filter_record_batch(&b, &BooleanArray::from(keep))
                .map_err(|e| BqError::internal(e.to_string()))?;
            kept.push(b);
        }
        let mut new_batches = conform(&kept, &table.arrow_schema)?;
        // Source side: rows with no target match go to the first INSERT clause that applies.
        let mut earlier = Vec::new();
        let mut inserted = 0i64;
        for (_, c) in &inserts {
            let pred = c
                .predicate
                .as_ref()
                .map(|p| format!("COALESCE(({p}), FALSE)"))
                .unwrap_or_else(|| "TRUE".to_string());
            let ast::MergeAction::Insert(ins) = &c.action else {
                return Err(BqError::invalid_query(
                    "WHEN NOT MATCHED clauses only allow INSERT",
                ));
            };
            let targets = target_positions(&table, &t, &ins.columns)?;
            let exprs = match &ins.kind {
                ast::MergeInsertKind::Values(v) => {
                    let [row] = v.rows.as_slice() else {
                        return Err(BqError::invalid_query("MERGE INSERT takes one VALUES row"));
                    };
                    row.iter().map(|e| e.to_string()).collect::<Vec<_>>()
                }
                ast::MergeInsertKind::Row => target_cols(&format!("`{sq}`.")),
            };
            if exprs.len() != targets.len() {
                return Err(BqError::invalid_query(
                    "MERGE INSERT has the wrong number of values",
                ));
            }
            let not_earlier = earlier
                .iter()
                .map(|p| format!(" AND NOT {p}"))
                .collect::<String>();
            let sql = format!(
                "SELECT {} FROM {source} LEFT JOIN (SELECT *, TRUE AS __merge_t FROM {}) AS `{tq}` ON {on} WHERE `{tq}`.__merge_t IS NULL AND {pred}{not_earlier}",
                exprs.join(", "),
                qualified_name(&t)
            );
            earlier.push(pred);
            let (_, rows) = self
                .plan_and_run(self.parse_query(&sql)?, req, req.dry_run)
                .await?;
            inserted += rows.iter().map(|b| b.num_rows() as i64).sum::<i64>();
            new_batches.extend(place_columns(&table, &targets, &rows)?);
        }
        check_required(&table, &new_batches)?;
        if !req.dry_run {
            let mut new = (*table).clone();
            new.batches = new_batches;
            self.catalog.write().put_table(&t, new)?;
        }
        let mut out = QueryOutput::empty("MERGE");
        out.dml = Some(DmlStats {
            inserted,
            updated,
            deleted,
        });
        Ok(out)
    }

    async fn delete(&self, del: ast::Delete, req: &QueryRequest) -> BqResult<QueryOutput> {
        let from = match &del.from {
            FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
        };
        let [twj] = from.as_slice() else {
            return Err(BqError::unsupported("DELETE from several tables"));
        };
        let name = match &twj.relation {
            ast::TableFactor::Table { name, .. } => name.clone(),
            other => return Err(BqError::unsupported(format!("DELETE FROM {other}"))),
        };
        let t = resolve(&name, &req.names)?;
        let table = self.catalog.read().table(&t)?;
        let cond = del
            .selection
            .as_ref()
            .map(|s| s.to_string())
            .ok_or_else(|| BqError::invalid_query("DELETE must have a WHERE clause"))?;
        let cols = table
            .schema
            .iter()
            .map(|f| format!("`{}`", f.name))
            .collect::<Vec<_>>()
            .join(", ");
        let q = self.parse_query(&format!(
            "SELECT {cols} FROM {twj} WHERE NOT COALESCE(({cond}), FALSE)"
        ))?;
        let (_, batches) = self.plan_and_run(q, req, req.dry_run).await?;
        let kept: usize = batches.iter().map(|b| b.num_rows()).sum();
        let deleted = table.num_rows().saturating_sub(kept) as i64;
        let conformed = conform(&batches, &table.arrow_schema)?;
        if !req.dry_run {
            let mut new = (*table).clone();
            new.batches = conformed;
            self.catalog.write().put_table(&t, new)?;
        }
        let mut out = QueryOutput::empty("DELETE");
        out.dml = Some(DmlStats {
            deleted,
            ..Default::default()
        });
        Ok(out)
    }
}

/// Builds full-width batches for `table` from batches whose column `k` goes to table
/// column `targets[k]`; the other columns are NULL.
fn place_columns(
    table: &Table,
    targets: &[usize],
    batches: &[RecordBatch],
) -> BqResult<Vec<RecordBatch>> {
    let mut out = Vec::new();
    for b in batches {
        if b.num_rows() == 0 {
            continue;
        }
        let cols = table
            .arrow_schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| match targets.iter().position(|&x| x == i) {
                Some(src) => b.column(src).clone(),
                None => new_null_array(f.data_type(), b.num_rows()),
            })
            .collect::<Vec<_>>();
        let fields = cols
            .iter()
            .zip(table.arrow_schema.fields())
            .map(|(c, f)| {
                datafusion::arrow::datatypes::Field::new(f.name(), c.data_type().clone(), true)
            })
            .collect::<Vec<_>>();
        out.push(
            RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)
                .map_err(|e| BqError::internal(e.to_string()))?,
        );
    }
    conform(&out, &table.arrow_schema)
}

/// Maps column names of an INSERT list to table column positions.
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

fn check_required(table: &Table, batches: &[RecordBatch]) -> BqResult<()> {
    for (i, f) in table.schema.iter().enumerate() {
        if f.mode() == FieldMode::Required && batches.iter().any(|b| b.column(i).null_count() > 0) {
            return Err(BqError::invalid_query(format!(
                "Required field {} cannot be null",
                f.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(sql: &str) -> QueryRequest {
        QueryRequest {
            sql: sql.to_string(),
            names: NameContext {
                project: "p".into(),
                default_dataset: Some(("p".into(), "d".into())),
                temp: None,
                vars: Default::default(),
            },
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn ddl_dml_and_query_round_trip() {
        let catalog = Catalog::new();
        catalog
            .write()
            .create_dataset("p", "d", Dataset::new(None))
            .unwrap();
        let e = Engine::new(catalog.clone());
        e.execute(&req("CREATE TABLE `p.d.t` (id INT64, amount NUMERIC)"))
            .await
            .unwrap();
        let out = e
            .execute(&req(
                "INSERT INTO d.t (id, amount) VALUES (1, NUMERIC '1.5'), (2, NULL), (3, 7)",
            ))
            .await
            .unwrap();
        assert_eq!(out.dml.unwrap().inserted, 3);
        let out = e
            .execute(&req("UPDATE t SET amount = 0 WHERE id >= 2"))
            .await
            .unwrap();
        assert_eq!(out.dml.unwrap().updated, 2);
        let out = e.execute(&req("DELETE FROM t WHERE id = 3")).await.unwrap();
        assert_eq!(out.dml.unwrap().deleted, 1);
        let out = e
            .execute(&req("SELECT id, amount FROM t ORDER BY id"))
            .await
            .unwrap();
        assert_eq!(out.total_rows(), 2);
        assert_eq!(out.schema[1].field_type.as_str(), "NUMERIC");
        let table = catalog
            .read()
            .table(&TableRef {
                project: "p".into(),
                dataset: "d".into(),
                table: "t".into(),
            })
            .unwrap();
        assert_eq!(table.num_rows(), 2);
    }

    /// The rows of a one-STRING-column result.
    fn texts(out: &QueryOutput) -> Vec<Option<String>> {
        use datafusion::arrow::array::{Array, AsArray};
        out.batches
            .iter()
            .flat_map(|b| {
                let a = datafusion::arrow::compute::cast(b.column(0), &DataType::Utf8).unwrap();
                let a = a.as_string::<i32>();
                (0..a.len())
                    .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[tokio::test]
    async fn range_sessionize_reads_null_and_unbounded_bounds_as_open() {
        let catalog = Catalog::new();
        catalog
            .write()
            .create_dataset("p", "d", Dataset::new(None))
            .unwrap();
        let e = Engine::new(catalog);
        let run = |sql: &'static str| {
            let e = &e;
            async move { e.execute(&req(sql)).await.unwrap() }
        };
        run("CREATE TABLE d.ev (id INT64, k STRING, r RANGE<DATE>)").await;
        run("INSERT INTO d.ev (id, k, r) VALUES \
             (1, 'a', RANGE<DATE> '[2024-01-01, 2024-01-03)'), (2, 'a', NULL), \
             (3, 'a', RANGE<DATE> '[2024-01-05, 2024-01-07)'), \
             (4, 'b', RANGE<DATE> '[2024-01-01, 2024-01-03)'), \
             (5, 'b', RANGE<DATE> '[2024-01-05, 2024-01-07)'), \
             (6, 'c', RANGE<DATE> '[UNBOUNDED, 2024-01-02)'), \
             (7, 'c', RANGE<DATE> '[2024-01-01, UNBOUNDED)'), \
             (8, 'c', RANGE<DATE> '[2024-03-01, 2024-03-02)')")
        .await;
        let out = run("SELECT CONCAT(CAST(id AS STRING), ' ', \
             COALESCE(CAST(RANGE_START(session_range) AS STRING), '-'), ' ', \
             COALESCE(CAST(RANGE_END(session_range) AS STRING), '-')) \
             FROM RANGE_SESSIONIZE(TABLE d.ev, 'r', ['k']) ORDER BY id")
        .await;
        // BigQuery (fixture range_sessionize_null_range): a NULL range's row gets NULL, and
        // the rows around it are one session, as if its bounds were unbounded.
        let want = [
            "1 2024-01-01 2024-01-07",
            "2 - -",
            "3 2024-01-01 2024-01-07",
            "4 2024-01-01 2024-01-03",
            "5 2024-01-05 2024-01-07",
            "6 - -",
            "7 - -",
            "8 - -",
        ];
        let want: Vec<Option<String>> = want.iter().map(|w| Some(w.to_string())).collect();
        assert_eq!(texts(&out), want);
    }

    #[tokio::test]
    async fn missing_table_and_unsupported_statement_are_bigquery_errors() {
        let catalog = Catalog::new();
        catalog
            .write()
            .create_dataset("p", "d", Dataset::new(None))
            .unwrap();
        let e = Engine::new(catalog);
        let err = e.execute(&req("SELECT * FROM d.nope")).await.unwrap_err();
        assert_eq!((err.status, err.reason), (404, "notFound"));
        assert!(err.message.contains("p:d.nope"), "{}", err.message);
        let err = e.execute(&req("GRANT SELECT ON t TO u")).await.unwrap_err();
        assert_eq!(err.reason, "invalidQuery");
        let err = e.execute(&req("SELECT FROM WHERE")).await.unwrap_err();
        assert_eq!(err.reason, "invalidQuery");
    }
}

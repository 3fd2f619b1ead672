//! Scripts: statements run in order, each by its kind (queries, [`super::ddl`],
//! [`super::dml`], `DECLARE` and `SET` of script variables), in the temporary scope of the
//! script or its session; a script answers with its last statement's result.

use datafusion::sql::sqlparser::ast::{self, Statement};

use super::engine::Engine;
use super::output::{QueryOutput, QueryRequest, df_err};
use crate::error::{BqError, BqResult};
use crate::sql::names::TempScope;
use crate::sql::parse::parse_script;
use crate::sql::routines::SqlFunction;
use crate::sql::script::{LoopKind, Node, Part};
use crate::sql::types;

/// Deletes a script's hidden dataset of temporary tables when dropped.
struct DropTemp<'a> {
    catalog: &'a crate::catalog::Catalog,
    scope: &'a TempScope,
}

impl Drop for DropTemp<'_> {
    fn drop(&mut self) {
        // Absent when no temporary table was made before a failure.
        let _ = self
            .catalog
            .write()
            .delete_dataset(&self.scope.project, &self.scope.dataset, true);
    }
}

/// What a script's run carries from statement to statement.
#[derive(Default)]
struct Run {
    /// The last statement's result: the script's.
    last: Option<QueryOutput>,
    /// The text of the statement that failed, for `@@error.statement_text`.
    failed_statement: Option<String>,
    /// The errors whose handlers are running (innermost last), for a bare `RAISE`.
    handling: Vec<BqError>,
}

/// How a block ended.
enum Flow {
    Next,
    Break(Option<String>),
    Continue(Option<String>),
    Return,
}

/// A value as the literal a script variable holds: a NULL keeps its type where it has a
/// SQL name; a STRUCT, which DataFusion's unparser does not write, is built by
/// [`crate::sql::params::to_sql_expr`].
fn literal_of(v: &datafusion::common::ScalarValue) -> BqResult<ast::Expr> {
    if v.is_null() {
        return Ok(crate::sql::params::to_sql_expr(v).unwrap_or(ast::Expr::value(ast::Value::Null)));
    }
    match datafusion::sql::unparser::Unparser::default()
        .expr_to_sql(&datafusion::logical_expr::Expr::Literal(v.clone(), None))
    {
        Ok(e) => Ok(e),
        Err(_) => crate::sql::params::to_sql_expr(v),
    }
}

/// Sets a declared script variable to a value.
fn assign(req: &QueryRequest, name: &str, v: datafusion::common::ScalarValue) -> BqResult<()> {
    let literal = literal_of(&v)?;
    let mut vars = req.names.vars.lock().unwrap_or_else(|e| e.into_inner());
    let key = name.to_ascii_lowercase();
    if !vars.contains_key(&key) {
        return Err(BqError::invalid_query(format!(
            "Unrecognized variable: {name}"
        )));
    }
    vars.insert(key, literal);
    Ok(())
}

/// Sets a system variable (`@@error.message`, `@@row_count`) of the script.
fn set_system(req: &QueryRequest, name: &str, value: ast::Value) {
    let mut vars = req.names.vars.lock().unwrap_or_else(|e| e.into_inner());
    vars.insert(name.to_string(), ast::Expr::value(value));
}

impl Engine {
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
        let mut nodes = parse_script(&req.sql)?;
        if nodes.is_empty() {
            return Err(BqError::invalid_query(
                "Syntax error: Unexpected end of script",
            ));
        }
        // One statement, or (as BigQuery counts it) temporary functions and one SELECT:
        // no script.
        let plain = match nodes.split_last() {
            Some((Node::Statement(last), before)) => {
                before.is_empty()
                    || matches!(last.as_ref(), Statement::Query(_))
                        && before.iter().all(|n| {
                            matches!(n, Node::Statement(s)
                                if matches!(s.as_ref(), Statement::CreateFunction(cf) if cf.temporary))
                        })
            }
            _ => false,
        };
        // A script outside a session keeps its temporary tables in a hidden dataset of its
        // own, dropped when it ends.
        let mut makes_temp = false;
        for n in &mut nodes {
            n.visit_parts(&mut |part| {
                makes_temp |=
                    matches!(part, Part::Statement(Statement::CreateTable(ct)) if ct.temporary)
            });
        }
        let script_temp = (req.names.temp.is_none() && !plain && makes_temp)
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
        // Dropped when the script ends, or when a stopped job drops it mid-statement.
        let _cleanup = script_temp.as_ref().map(|scope| DropTemp {
            catalog: &self.catalog,
            scope,
        });
        let mut run = Run::default();
        let flow = self.block(&nodes, req, &mut run).await;
        // A transaction still open when a script (not a session) ends is rolled back, as
        // when the script fails inside one.
        if req.session_id.is_none() || flow.is_err() {
            self.end_transaction(req, false)?;
        }
        drop(_cleanup);
        match flow? {
            Flow::Next | Flow::Return => {}
            Flow::Break(_) => {
                return Err(BqError::invalid_query(
                    "BREAK is only allowed inside a loop",
                ));
            }
            Flow::Continue(_) => {
                return Err(BqError::invalid_query(
                    "CONTINUE is only allowed inside a loop",
                ));
            }
        }
        let mut out = run.last.unwrap_or_else(|| QueryOutput::empty("SCRIPT"));
        if !plain {
            out.statement_type = "SCRIPT";
            out.dml = None;
            out.ddl = None;
        }
        Ok(out)
    }

    /// Runs the nodes of a block in order, until one ends the block (an error, `BREAK`,
    /// `CONTINUE`, `RETURN`).
    fn block<'a>(
        &'a self,
        nodes: &'a [Node],
        req: &'a QueryRequest,
        run: &'a mut Run,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = BqResult<Flow>> + Send + 'a>> {
        Box::pin(async move {
            for n in nodes {
                let flow = self.node(n, req, run).await?;
                if !matches!(flow, Flow::Next) {
                    return Ok(flow);
                }
            }
            Ok(Flow::Next)
        })
    }

    async fn node(&self, n: &Node, req: &QueryRequest, run: &mut Run) -> BqResult<Flow> {
        match n {
            Node::Statement(s) => {
                let out = match s.as_ref() {
                    Statement::StartTransaction { .. } => self.begin_transaction(req)?,
                    Statement::Commit { .. } => {
                        self.end_transaction(req, true)?;
                        QueryOutput::empty("COMMIT_TRANSACTION")
                    }
                    Statement::Rollback { .. } => {
                        if !self.end_transaction(req, false)? {
                            return Err(BqError::invalid_query(
                                "ROLLBACK TRANSACTION is only allowed inside a transaction",
                            ));
                        }
                        QueryOutput::empty("ROLLBACK_TRANSACTION")
                    }
                    _ => self.statement((**s).clone(), req).await.inspect_err(|_| {
                        run.failed_statement = Some(s.to_string());
                    })?,
                };
                if let Some(dml) = out.dml {
                    set_system(
                        req,
                        "@@row_count",
                        ast::Value::Number(dml.affected().to_string(), false),
                    );
                }
                run.last = Some(out);
                Ok(Flow::Next)
            }
            Node::If {
                branches,
                otherwise,
            } => {
                for (cond, body) in branches {
                    if self.condition(cond, "IF", req).await? {
                        return self.block(body, req, run).await;
                    }
                }
                self.block(otherwise, req, run).await
            }
            Node::Loop { label, kind, body } => self.run_loop(label, kind, body, req, run).await,
            Node::Block {
                label,
                body,
                handler,
            } => {
                let result = self.block(body, req, run).await;
                let flow = match (result, handler) {
                    (Ok(flow), _) => flow,
                    (Err(e), Some(handler)) if e.reason != "stopped" => {
                        let statement = run.failed_statement.take().unwrap_or_default();
                        set_system(
                            req,
                            "@@error.message",
                            ast::Value::SingleQuotedString(e.message.clone()),
                        );
                        set_system(
                            req,
                            "@@error.statement_text",
                            ast::Value::SingleQuotedString(statement),
                        );
                        set_system(req, "@@error.stack_trace", ast::Value::Null);
                        set_system(
                            req,
                            "@@error.formatted_stack_trace",
                            ast::Value::SingleQuotedString(e.message.clone()),
                        );
                        run.handling.push(e);
                        let flow = self.block(handler, req, run).await;
                        run.handling.pop();
                        flow?
                    }
                    (Err(e), _) => return Err(e),
                };
                Ok(match flow {
                    Flow::Break(Some(l))
                        if label.as_ref().is_some_and(|b| b.eq_ignore_ascii_case(&l)) =>
                    {
                        Flow::Next
                    }
                    other => other,
                })
            }
            Node::Break(l) => Ok(Flow::Break(l.clone())),
            Node::Continue(l) => Ok(Flow::Continue(l.clone())),
            Node::Return => Ok(Flow::Return),
            Node::Raise(None) => Err(run.handling.last().cloned().ok_or_else(|| {
                BqError::invalid_query(
                    "RAISE without a message is only allowed inside an exception handler",
                )
            })?),
            Node::Raise(Some(message)) => {
                let v = self.evaluate(message.clone(), req).await?;
                let text = match v {
                    datafusion::common::ScalarValue::Utf8(Some(s)) => s,
                    datafusion::common::ScalarValue::Utf8(None) => String::new(),
                    other => other.to_string(),
                };
                Err(BqError::invalid_query(text))
            }
        }
    }

    /// One loop, to its end or until a `BREAK` (of it, or of an enclosing loop).
    async fn run_loop(
        &self,
        label: &Option<String>,
        kind: &LoopKind,
        body: &[Node],
        req: &QueryRequest,
        run: &mut Run,
    ) -> BqResult<Flow> {
        let mine = |l: &Option<String>| match (l, label) {
            (None, _) => true,
            (Some(l), Some(label)) => l.eq_ignore_ascii_case(label),
            (Some(_), None) => false,
        };
        let rows = match kind {
            LoopKind::For { var, query } => Some((var, self.for_rows(query, req).await?)),
            _ => None,
        };
        let mut i = 0;
        loop {
            match kind {
                LoopKind::While(cond) if !self.condition(cond, "WHILE", req).await? => break,
                LoopKind::For { .. } => {
                    let Some((var, rows)) = &rows else { break };
                    let Some(row) = rows.get(i) else { break };
                    let mut vars = req.names.vars.lock().unwrap_or_else(|e| e.into_inner());
                    vars.insert(var.to_ascii_lowercase(), row.clone());
                }
                _ => {}
            }
            i += 1;
            match self.block(body, req, run).await? {
                Flow::Next => {}
                Flow::Break(l) if mine(&l) => break,
                Flow::Continue(l) if mine(&l) => {}
                other => return Ok(other),
            }
            if let LoopKind::Repeat(cond) = kind
                && self.condition(cond, "REPEAT", req).await?
            {
                break;
            }
        }
        Ok(Flow::Next)
    }

    /// The rows of a `FOR` loop's query, each as the STRUCT literal its variable holds.
    async fn for_rows(&self, query: &ast::Query, req: &QueryRequest) -> BqResult<Vec<ast::Expr>> {
        use datafusion::arrow::array::StructArray;
        let (_, batches) = self
            .plan_and_run(Box::new(query.clone()), req, false)
            .await?;
        let mut rows = Vec::new();
        for b in batches {
            let structs = StructArray::from(b);
            for r in 0..datafusion::arrow::array::Array::len(&structs) {
                let v =
                    datafusion::common::ScalarValue::try_from_array(&structs, r).map_err(df_err)?;
                rows.push(crate::sql::params::to_sql_expr(&v)?);
            }
        }
        Ok(rows)
    }

    /// A condition's value: NULL is false; anything but a BOOL is an error.
    async fn condition(&self, cond: &ast::Expr, what: &str, req: &QueryRequest) -> BqResult<bool> {
        match self.evaluate(cond.clone(), req).await? {
            datafusion::common::ScalarValue::Boolean(b) => Ok(b.unwrap_or(false)),
            datafusion::common::ScalarValue::Null => Ok(false),
            other => Err(BqError::invalid_query(format!(
                "{what} condition must be of type BOOL, not {}",
                crate::sql::functions::bq_type_name(&other.data_type())
            ))),
        }
    }

    /// Runs one statement of a script, by its kind.
    async fn statement(&self, stmt: Statement, req: &QueryRequest) -> BqResult<QueryOutput> {
        match stmt {
            Statement::Query(q) => self.query(q, req).await,
            Statement::CreateTable(ct) => self.create_table(ct, req).await,
            Statement::CreateView(cv) => self.create_view(cv, req).await,
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => self.drop(object_type, if_exists, &names, cascade, req),
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => self.create_schema(&schema_name, if_not_exists, req),
            Statement::Truncate(tr) => self.truncate(tr, req).await,
            Statement::AlterTable(at) => self.alter_table(&at, req),
            Statement::Declare { stmts } => self.declare(stmts, req).await,
            Statement::Set(ast::Set::SingleAssignment {
                variable, values, ..
            }) if values.len() == 1 => self.set(&variable, values, req).await,
            Statement::Set(ast::Set::ParenthesizedAssignments { variables, values })
                if values.len() == 1 =>
            {
                self.set_many(&variables, values, req).await
            }
            Statement::Execute {
                parameters,
                immediate: true,
                into,
                using,
                ..
            } => self.execute_immediate(parameters, into, using, req).await,
            Statement::Insert(ins) => self.insert(ins, req).await,
            Statement::Update(up) => self.update(up, req).await,
            Statement::Delete(del) => self.delete(del, req).await,
            Statement::Merge(m) => self.merge(m, req).await,
            Statement::CreateFunction(cf) => self.create_function(&cf, req),
            Statement::DropFunction(df) => self.drop_function(&df, req),
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

    /// `CREATE [TEMP] FUNCTION`.
    fn create_function(
        &self,
        cf: &ast::CreateFunction,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let f = SqlFunction::from_create(cf)?;
        if !cf.temporary {
            return self.create_persistent_function(cf, req);
        }
        if crate::sql::names::name_parts(&cf.name)?.len() != 1 {
            return Err(BqError::invalid_query(format!(
                "Temporary function {} must have a one-part name",
                f.name
            )));
        }
        let mut routines = req.names.routines.lock().unwrap_or_else(|e| e.into_inner());
        let key = f.name.to_ascii_lowercase();
        if routines.contains_key(&key) {
            if cf.if_not_exists {
                return Ok(QueryOutput::empty("CREATE_FUNCTION"));
            }
            if !cf.or_replace {
                return Err(BqError::invalid_query(format!(
                    "Function {} already exists",
                    f.name
                )));
            }
        }
        routines.insert(key, std::sync::Arc::new(f));
        Ok(QueryOutput::empty("CREATE_FUNCTION"))
    }

    /// `CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] ds.f`: a routine of the dataset.
    fn create_persistent_function(
        &self,
        cf: &ast::CreateFunction,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        if crate::sql::names::name_parts(&cf.name)?.len() < 2 {
            return Err(BqError::invalid_query(format!(
                "A persistent function needs a dataset: CREATE FUNCTION dataset.{}",
                cf.name
            )));
        }
        let r = crate::sql::names::resolve(&cf.name, &req.names)?;
        let reference = serde_json::json!({
            "projectId": r.project, "datasetId": r.dataset, "routineId": r.table,
        });
        let resource = crate::sql::routines::resource_of(cf, reference)?;
        let exists = self
            .catalog
            .read()
            .dataset(&r.project, &r.dataset)?
            .routines
            .contains_key(&r.table);
        let ddl = |operation| {
            let mut out = QueryOutput::empty("CREATE_FUNCTION");
            out.ddl = Some(super::output::DdlInfo {
                operation,
                target_table: None,
                target_routine: Some(r.clone()),
            });
            out
        };
        if exists && cf.if_not_exists {
            return Ok(ddl("SKIP"));
        }
        if exists && !cf.or_replace {
            return Err(BqError::duplicate(format!(
                "Already Exists: Function {}:{}.{}",
                r.project, r.dataset, r.table
            )));
        }
        self.catalog.update(|w| {
            w.put_routine(&r.project, &r.dataset, &r.table, resource, cf.or_replace)
                .map(|_| ())
        })?;
        Ok(ddl(if exists { "REPLACE" } else { "CREATE" }))
    }

    /// `DROP FUNCTION [IF EXISTS] name`.
    fn drop_function(&self, df: &ast::DropFunction, req: &QueryRequest) -> BqResult<QueryOutput> {
        let mut out = QueryOutput::empty("DROP_FUNCTION");
        for d in &df.func_desc {
            let name = d.name.to_string();
            if crate::sql::names::name_parts(&d.name)?.len() > 1 {
                let r = crate::sql::names::resolve(&d.name, &req.names)?;
                let dropped = self.catalog.update(|w| {
                    match w.delete_routine(&r.project, &r.dataset, &r.table) {
                        Err(e) if e.reason == "notFound" && df.if_exists => Ok(()),
                        other => other,
                    }
                });
                match dropped {
                    Err(e) if e.reason == "notFound" => {
                        return Err(BqError::not_found(format!(
                            "Not found: Function {}:{}.{}",
                            r.project, r.dataset, r.table
                        )));
                    }
                    Ok(()) => {
                        out.ddl = Some(super::output::DdlInfo {
                            operation: "DROP",
                            target_table: None,
                            target_routine: Some(r.clone()),
                        });
                    }
                    Err(e) => return Err(e),
                }
                continue;
            }
            let removed = {
                let mut routines = req.names.routines.lock().unwrap_or_else(|e| e.into_inner());
                routines.remove(&name.to_ascii_lowercase())
            };
            if removed.is_none() && !df.if_exists {
                return Err(BqError::not_found(format!("Not found: Function {name}")));
            }
        }
        Ok(out)
    }

    /// `DECLARE name [, ...] [type] [DEFAULT value]`.
    async fn declare(&self, stmts: Vec<ast::Declare>, req: &QueryRequest) -> BqResult<QueryOutput> {
        let cx = &req.names;
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

    /// `SET name = value`, for a declared variable.
    async fn set(
        &self,
        variable: &ast::ObjectName,
        values: Vec<ast::Expr>,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let cx = &req.names;
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

    /// `SET (a, b, ..) = (SELECT AS STRUCT ..)`: each variable a field of the STRUCT.
    async fn set_many(
        &self,
        variables: &[ast::ObjectName],
        values: Vec<ast::Expr>,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let value = values
            .into_iter()
            .next()
            .unwrap_or(ast::Expr::value(ast::Value::Null));
        let fields = match self.evaluate(value, req).await? {
            datafusion::common::ScalarValue::Struct(s) if s.num_columns() == variables.len() => (0
                ..s.num_columns())
                .map(|i| datafusion::common::ScalarValue::try_from_array(s.column(i), 0))
                .collect::<Result<Vec<_>, _>>()
                .map_err(df_err)?,
            _ => {
                return Err(BqError::invalid_query(format!(
                    "SET of {} variables needs a STRUCT of {} fields",
                    variables.len(),
                    variables.len()
                )));
            }
        };
        for (var, v) in variables.iter().zip(fields) {
            assign(req, &var.to_string(), v)?;
        }
        Ok(QueryOutput::empty("SET"))
    }

    /// `EXECUTE IMMEDIATE sql [INTO var, ..] [USING expr [AS name], ..]`: the text run as
    /// a query of its own, with the `USING` values as its parameters (named when aliased,
    /// else positional); `INTO` sets variables from its one row.
    async fn execute_immediate(
        &self,
        parameters: Vec<ast::Expr>,
        into: Vec<ast::Ident>,
        using: Vec<ast::ExprWithAlias>,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let Some(text) = parameters.into_iter().next() else {
            return Err(BqError::invalid_query(
                "EXECUTE IMMEDIATE needs a SQL string",
            ));
        };
        let sql = match self.evaluate(text, req).await? {
            datafusion::common::ScalarValue::Utf8(Some(s))
            | datafusion::common::ScalarValue::Utf8View(Some(s)) => s,
            other => {
                return Err(BqError::invalid_query(format!(
                    "EXECUTE IMMEDIATE needs a non-NULL STRING, not {other}"
                )));
            }
        };
        let mut named = Vec::new();
        let mut positional = Vec::new();
        for u in using {
            let value = self.evaluate(u.expr, req).await?;
            let name = u
                .alias
                .as_ref()
                .map(|a| a.value.clone())
                .unwrap_or_default();
            let field = types::bq_field_of(&datafusion::arrow::datatypes::Field::new(
                &name,
                value.data_type(),
                true,
            ))?;
            let p = crate::sql::params::Param { value, field };
            match u.alias {
                Some(a) => named.push((a.value, p)),
                None => positional.push(p),
            }
        }
        let mut inner = req.clone();
        inner.sql = sql;
        inner.params = crate::sql::params::Params::of(named, positional);
        let out = self.execute_script(&inner).await?;
        if into.is_empty() {
            return Ok(out);
        }
        let row = out.batches.iter().find(|b| b.num_rows() > 0);
        if out.total_rows() > 1 {
            return Err(BqError::invalid_query(
                "EXECUTE IMMEDIATE ... INTO: the query returned more than one row",
            ));
        }
        if out.arrow_schema.fields().len() != into.len() {
            return Err(BqError::invalid_query(format!(
                "EXECUTE IMMEDIATE ... INTO {} variables, but the query returns {} columns",
                into.len(),
                out.arrow_schema.fields().len()
            )));
        }
        for (i, var) in into.iter().enumerate() {
            let v = match row {
                Some(b) => datafusion::common::ScalarValue::try_from_array(b.column(i), 0),
                None => {
                    datafusion::common::ScalarValue::try_from(out.arrow_schema.field(i).data_type())
                }
            }
            .map_err(df_err)?;
            assign(req, &var.value, v)?;
        }
        Ok(QueryOutput::empty("EXECUTE_IMMEDIATE"))
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
        let scalar = self.evaluate(expr, req).await?;
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
        literal_of(&scalar)
    }

    /// An expression's value (`SELECT expr`), for a variable, a condition or a message.
    async fn evaluate(
        &self,
        expr: ast::Expr,
        req: &QueryRequest,
    ) -> BqResult<datafusion::common::ScalarValue> {
        let (schema, batches) = self.plan_and_run(self.select_of(expr)?, req, false).await?;
        match batches.iter().find(|b| b.num_rows() > 0) {
            Some(b) => datafusion::common::ScalarValue::try_from_array(b.column(0), 0),
            None => datafusion::common::ScalarValue::try_from(schema.field(0).data_type()),
        }
        .map_err(df_err)
    }

    /// `BEGIN TRANSACTION`: the tables of the project as they are now, to go back to.
    fn begin_transaction(&self, req: &QueryRequest) -> BqResult<QueryOutput> {
        let mut txn = req
            .names
            .transaction
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if txn.is_some() {
            return Err(BqError::invalid_query(
                "Nested transactions are not supported: a transaction is already active",
            ));
        }
        *txn = Some(self.project_tables(&req.names.project));
        Ok(QueryOutput::empty("BEGIN_TRANSACTION"))
    }

    /// The tables of a project (not those of scripts' and sessions' temporary datasets), as
    /// they are now.
    fn project_tables(
        &self,
        project: &str,
    ) -> std::collections::HashMap<crate::catalog::TableRef, std::sync::Arc<crate::catalog::Table>>
    {
        let catalog = self.catalog.read();
        catalog
            .datasets(project)
            .filter(|(d, _)| !d.starts_with(crate::sql::names::TEMP_DATASET_PREFIX))
            .flat_map(|(d, ds)| {
                ds.tables
                    .iter()
                    .map(move |(id, t)| (crate::catalog::TableRef::new(project, d, id), t.clone()))
            })
            .collect()
    }

    /// `COMMIT` (keep the changes) or `ROLLBACK` (put back every table the transaction
    /// changed, drop those it made); whether a transaction was active.
    fn end_transaction(&self, req: &QueryRequest, commit: bool) -> BqResult<bool> {
        let Some(before) = req
            .names
            .transaction
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            if commit {
                return Err(BqError::invalid_query(
                    "COMMIT TRANSACTION is only allowed inside a transaction",
                ));
            }
            return Ok(false);
        };
        if commit {
            return Ok(true);
        }
        let now = self.project_tables(&req.names.project);
        let mut catalog = self.catalog.write();
        for (r, t) in &now {
            match before.get(r) {
                Some(was) if std::sync::Arc::ptr_eq(was, t) => {}
                Some(was) => catalog.create_table(r, (**was).clone(), true)?,
                None => {
                    catalog.delete_table(r)?;
                }
            }
        }
        for (r, was) in &before {
            if !now.contains_key(r) && catalog.dataset_mut(&r.project, &r.dataset).is_ok() {
                catalog.create_table(r, (**was).clone(), true)?;
            }
        }
        catalog.commit()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::DataType;

    use super::*;
    use crate::catalog::{Catalog, Dataset, TableRef};
    use crate::sql::names::NameContext;

    fn req(sql: &str) -> QueryRequest {
        QueryRequest {
            sql: sql.to_string(),
            names: NameContext {
                project: "p".into(),
                default_dataset: Some(("p".into(), "d".into())),
                temp: None,
                vars: Default::default(),
                ..Default::default()
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

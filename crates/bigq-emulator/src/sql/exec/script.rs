//! Scripts: statements run in order, each by its kind (queries, [`super::ddl`],
//! [`super::dml`], `DECLARE` and `SET` of script variables), in the temporary scope of the
//! script or its session; a script answers with its last statement's result.

use datafusion::sql::sqlparser::ast::{self, Statement};

use super::engine::Engine;
use super::output::{QueryOutput, QueryRequest, df_err};
use crate::error::{BqError, BqResult};
use crate::sql::names::TempScope;
use crate::sql::parse::parse;
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
        // Dropped when the script ends, or when a stopped job drops it mid-statement.
        let _cleanup = script_temp.as_ref().map(|scope| DropTemp {
            catalog: &self.catalog,
            scope,
        });
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
        drop(_cleanup);
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

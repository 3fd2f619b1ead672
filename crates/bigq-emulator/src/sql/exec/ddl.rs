//! Data definition: `CREATE TABLE` (temporary tables too), `CREATE VIEW`, `DROP`, `CREATE
//! SCHEMA` and `ALTER TABLE`, on the catalog.

use std::sync::Arc;

use bigq_codec::schema::{FieldMode, TableFieldSchema};
use datafusion::arrow::array::new_null_array;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::sql::sqlparser::ast::{
    self, AlterTableOperation, ColumnOption, ObjectType, RenameTableNameKind, SchemaName,
};

use super::engine::Engine;
use super::output::{DdlInfo, QueryOutput, QueryRequest, conform, result_style, table_schema_of};
use crate::catalog::{Dataset, Table, TableKind, TableRef};
use crate::error::{BqError, BqResult};
use crate::sql::names::{NameContext, name_parts, resolve};
use crate::sql::types;

pub(super) fn column_def_field(c: &ast::ColumnDef) -> BqResult<TableFieldSchema> {
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
        w.commit()?;
        Ok(scope.add(table))
    }

    /// `CREATE [OR REPLACE] [TEMP] TABLE [IF NOT EXISTS] ... [AS SELECT ...]`.
    pub(super) async fn create_table(
        &self,
        ct: ast::CreateTable,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let cx = &req.names;
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
            self.catalog.update(|w| w.create_table(&t, table, true))?;
        }
        Ok(out)
    }

    /// `CREATE [OR REPLACE] VIEW [IF NOT EXISTS] ... AS SELECT ...`.
    pub(super) async fn create_view(
        &self,
        cv: ast::CreateView,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let cx = &req.names;
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
            self.catalog.update(|w| w.create_table(&t, table, true))?;
        }
        let mut out = QueryOutput::empty("CREATE_VIEW");
        out.schema = types::bq_schema_of(&schema)?;
        out.ddl = Some(DdlInfo {
            operation: if exists { "REPLACE" } else { "CREATE" },
            target_table: Some(t),
        });
        Ok(out)
    }

    /// `DROP TABLE`, `DROP VIEW` and `DROP SCHEMA [CASCADE]`, `IF EXISTS` or not.
    pub(super) fn drop(
        &self,
        object_type: ObjectType,
        if_exists: bool,
        names: &[ast::ObjectName],
        cascade: bool,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let cx = &req.names;
        let mut out = QueryOutput::empty(match object_type {
            ObjectType::Table => "DROP_TABLE",
            ObjectType::View => "DROP_VIEW",
            ObjectType::Schema => "DROP_SCHEMA",
            _ => "DROP",
        });
        for name in names {
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
                                self.catalog.update(|w| w.delete_table(&t))?;
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
                            return Err(BqError::not_found(format!("Not found: Table {t}")));
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
                        return Err(BqError::not_found(format!("Not found: Dataset {p}:{d}")));
                    }
                    if !req.dry_run {
                        self.catalog
                            .update(|w| w.delete_dataset(&p, &d, cascade))
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

    /// `CREATE SCHEMA [IF NOT EXISTS]`: a dataset.
    pub(super) fn create_schema(
        &self,
        schema_name: &SchemaName,
        if_not_exists: bool,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let cx = &req.names;
        let name = match schema_name {
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
            .update(|w| w.create_dataset(&p, &d, Dataset::new(None)))
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

    /// `ALTER TABLE [IF EXISTS] ... ADD COLUMN | DROP COLUMN | RENAME TO`.
    pub(super) fn alter_table(
        &self,
        at: &ast::AlterTable,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let cx = &req.names;
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
            w.commit()?;
        }
        let mut out = QueryOutput::empty("ALTER_TABLE");
        out.ddl = Some(DdlInfo {
            operation: "ALTER",
            target_table: Some(t),
        });
        Ok(out)
    }
}

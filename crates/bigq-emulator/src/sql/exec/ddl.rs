//! Data definition: `CREATE TABLE` (temporary tables too), `CREATE VIEW`, `DROP`, `CREATE
//! SCHEMA` and `ALTER TABLE`, on the catalog.

use std::sync::Arc;

use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::sql::sqlparser::ast::{
    self, AlterColumnOperation, AlterTableOperation, ColumnOption, ObjectType, RenameTableNameKind,
    SchemaName, SqlOption,
};

use super::engine::Engine;
use super::output::{DdlInfo, QueryOutput, QueryRequest, conform, result_style, table_schema_of};
use crate::catalog::{Dataset, Table, TableKind, TableRef, reshape};
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
                target_routine: None,
            });
            return Ok(out);
        }
        if exists && !ct.or_replace {
            return Err(BqError::duplicate(format!("Already Exists: Table {t}")));
        }
        if let Some(base) = &ct.clone {
            return self.clone_table(&t, base, ct.snapshot, exists, req);
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
            target_routine: None,
        });
        out.schema = result_style(&table.schema);
        if !req.dry_run {
            self.catalog.update(|w| w.create_table(&t, table, true))?;
        }
        Ok(out)
    }

    /// `CREATE SNAPSHOT TABLE t CLONE base` and `CREATE TABLE t CLONE base`: a copy of the
    /// base table's schema, rows, description and options, with BigQuery's
    /// `snapshotDefinition` (or `cloneDefinition`) naming the base and the time taken.
    fn clone_table(
        &self,
        t: &TableRef,
        base: &ast::ObjectName,
        snapshot: bool,
        exists: bool,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
        let b = resolve(base, &req.names)?;
        let src = self.catalog.read().table(&b)?;
        if matches!(src.kind, TableKind::View { .. }) {
            return Err(BqError::invalid_query(format!(
                "Cannot clone or snapshot view {b}: only tables can be copied this way"
            )));
        }
        let mut table = Table::new(src.schema.clone())?;
        table.batches = src.batches.clone();
        table.description = src.description.clone();
        table.options = src.options.clone();
        let taken = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let key = if snapshot {
            ("snapshotDefinition", "snapshotTime")
        } else {
            ("cloneDefinition", "cloneTime")
        };
        table.options.insert(
            key.0.into(),
            serde_json::json!({
                "baseTableReference": {
                    "projectId": b.project,
                    "datasetId": b.dataset,
                    "tableId": b.table,
                },
                key.1: taken,
            }),
        );
        let stype = if snapshot {
            "CREATE_SNAPSHOT_TABLE"
        } else {
            "CREATE_TABLE"
        };
        if !req.dry_run {
            self.catalog.update(|w| w.create_table(t, table, true))?;
        }
        let mut out = QueryOutput::empty(stype);
        out.ddl = Some(DdlInfo {
            operation: if exists { "REPLACE" } else { "CREATE" },
            target_table: Some(t.clone()),
            target_routine: None,
        });
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
            target_routine: None,
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
                                target_routine: None,
                            });
                        }
                        Err(_) if if_exists => {
                            out.ddl = Some(DdlInfo {
                                operation: "SKIP",
                                target_table: Some(t),
                                target_routine: None,
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
                        target_routine: None,
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
            target_routine: None,
        });
        Ok(out)
    }

    /// `ALTER TABLE [IF EXISTS] ...`: `ADD COLUMN [IF NOT EXISTS]`, `DROP COLUMN [IF EXISTS]`,
    /// `RENAME TO`, `RENAME COLUMN`, `ALTER COLUMN` (`DROP NOT NULL`, `SET DATA TYPE`,
    /// `SET DEFAULT`, `DROP DEFAULT`) and `SET OPTIONS`, with BigQuery's checks.
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
                AlterTableOperation::RenameColumn {
                    old_column_name,
                    new_column_name,
                } => rename_column(&mut new, &old_column_name.value, &new_column_name.value)?,
                AlterTableOperation::AlterColumn { column_name, op } => {
                    alter_column(&mut new.schema, &column_name.value, op)?;
                }
                AlterTableOperation::SetOptionsParens { options } => {
                    set_table_options(&mut new, options)?;
                }
                other => {
                    return Err(BqError::unsupported(format!("ALTER TABLE {other}")));
                }
            }
        }
        // Carry the rows over to the new column list.
        new.arrow_schema = Arc::new(types::arrow_schema(&new.schema)?);
        new.batches = reshape(&new.batches, &new.arrow_schema)?;
        new.generation += 1;
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
            target_routine: None,
        });
        Ok(out)
    }
}

/// `RENAME COLUMN old TO new`: the column keeps its rows, under its new name.
fn rename_column(table: &mut Table, old: &str, new: &str) -> BqResult<()> {
    if table
        .schema
        .iter()
        .any(|f| f.name.eq_ignore_ascii_case(new))
    {
        return Err(BqError::invalid_query(format!(
            "Column already exists: {new}"
        )));
    }
    let Some(f) = table
        .schema
        .iter_mut()
        .find(|f| f.name.eq_ignore_ascii_case(old))
    else {
        return Err(BqError::invalid_query(format!("Column not found: {old}")));
    };
    let stored = std::mem::replace(&mut f.name, new.to_string());
    let mut batches = Vec::with_capacity(table.batches.len());
    for b in &table.batches {
        let schema = b.schema();
        let fields = schema
            .fields()
            .iter()
            .map(|x| {
                if x.name() == &stored {
                    Arc::new(Field::clone(x).with_name(new))
                } else {
                    x.clone()
                }
            })
            .collect::<Vec<_>>();
        let renamed = Schema::new(fields).with_metadata(schema.metadata().clone());
        batches.push(
            RecordBatch::try_new(Arc::new(renamed), b.columns().to_vec())
                .map_err(|e| BqError::internal(e.to_string()))?,
        );
    }
    table.batches = batches;
    Ok(())
}

/// Whether BigQuery's `ALTER COLUMN SET DATA TYPE` takes a column of type `from` to `to`:
/// the same type, or a coercion of the conversion rules (INT64 to NUMERIC, BIGNUMERIC and
/// FLOAT64; NUMERIC to BIGNUMERIC and FLOAT64; BIGNUMERIC to FLOAT64).
pub(crate) fn coercible(from: &FieldType, to: &FieldType) -> bool {
    use FieldType as T;
    from == to
        || matches!(
            (from, to),
            (T::Int64, T::Numeric | T::BigNumeric | T::Float64)
                | (T::Numeric, T::BigNumeric | T::Float64)
                | (T::BigNumeric, T::Float64)
        )
}

/// One `ALTER COLUMN` operation on the column list.
fn alter_column(
    schema: &mut [TableFieldSchema],
    name: &str,
    op: &AlterColumnOperation,
) -> BqResult<()> {
    let Some(f) = schema
        .iter_mut()
        .find(|f| f.name.eq_ignore_ascii_case(name))
    else {
        return Err(BqError::invalid_query(format!("Column not found: {name}")));
    };
    match op {
        AlterColumnOperation::DropNotNull => {
            if f.mode() == FieldMode::Required {
                f.mode = None;
            }
        }
        AlterColumnOperation::SetDataType {
            data_type,
            using: None,
            ..
        } => {
            let to = types::bq_field_of_sql(&f.name, data_type)?;
            let old_repeated = f.mode() == FieldMode::Repeated;
            let to_repeated = to.mode() == FieldMode::Repeated;
            let (from_name, to_name) = (sql_type_name(f), sql_type_name(&to));
            if old_repeated != to_repeated
                || f.field_type == FieldType::Record
                || to.field_type == FieldType::Record
                || !coercible(&f.field_type, &to.field_type)
            {
                return Err(BqError::invalid_query(format!(
                    "ALTER TABLE ALTER COLUMN SET DATA TYPE requires that the existing column type ({from_name}) is assignable to the new type ({to_name})"
                )));
            }
            if f.field_type != to.field_type {
                f.field_type = to.field_type;
                f.precision = None;
                f.scale = None;
                f.rounding_mode = None;
            }
        }
        AlterColumnOperation::SetDefault { value } => {
            f.default_value_expression = Some(value.to_string());
        }
        AlterColumnOperation::DropDefault => f.default_value_expression = None,
        AlterColumnOperation::SetNotNull => {
            return Err(BqError::invalid_query(format!(
                "ALTER COLUMN SET NOT NULL is not supported: column {} cannot be made REQUIRED",
                f.name
            )));
        }
        other => {
            return Err(BqError::unsupported(format!(
                "ALTER COLUMN {} {other}",
                f.name
            )));
        }
    }
    Ok(())
}

/// A column's GoogleSQL type for messages: `INT64`, `ARRAY<STRING>`.
fn sql_type_name(f: &TableFieldSchema) -> String {
    let t = f.field_type.standard_sql_name();
    if f.mode() == FieldMode::Repeated {
        format!("ARRAY<{t}>")
    } else {
        t.to_string()
    }
}

/// `SET OPTIONS (...)` on a table: `description`, `friendly_name` and `labels`; `NULL`
/// clears one.
fn set_table_options(table: &mut Table, options: &[SqlOption]) -> BqResult<()> {
    use ast::{Expr, Value};
    fn text(key: &str, e: &Expr) -> BqResult<Option<String>> {
        match e {
            Expr::Value(v) => match &v.value {
                Value::Null => Ok(None),
                Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Ok(Some(s.clone())),
                _ => Err(BqError::invalid_query(format!(
                    "Invalid value for option {key}: expected a STRING literal, got {e}"
                ))),
            },
            _ => Err(BqError::invalid_query(format!(
                "Invalid value for option {key}: expected a STRING literal, got {e}"
            ))),
        }
    }
    for o in options {
        let SqlOption::KeyValue { key, value } = o else {
            return Err(BqError::unsupported(format!("table option {o}")));
        };
        let k = key.value.to_ascii_lowercase();
        match k.as_str() {
            "description" => table.description = text(&k, value)?,
            "friendly_name" => match text(&k, value)? {
                Some(n) => {
                    table.options.insert("friendlyName".into(), n.into());
                }
                None => {
                    table.options.remove("friendlyName");
                }
            },
            "labels" => {
                let mut labels = serde_json::Map::new();
                match value {
                    Expr::Value(v) if matches!(v.value, Value::Null) => {}
                    Expr::Array(a) => {
                        for e in &a.elem {
                            let Expr::Tuple(kv) = e else {
                                return Err(BqError::invalid_query(format!(
                                    "Invalid value for option labels: expected (key, value) pairs, got {e}"
                                )));
                            };
                            let [lk, lv] = kv.as_slice() else {
                                return Err(BqError::invalid_query(format!(
                                    "Invalid value for option labels: expected (key, value) pairs, got {e}"
                                )));
                            };
                            let (Some(lk), Some(lv)) = (text(&k, lk)?, text(&k, lv)?) else {
                                return Err(BqError::invalid_query(
                                    "Invalid value for option labels: a label key or value is NULL",
                                ));
                            };
                            labels.insert(lk, lv.into());
                        }
                    }
                    other => {
                        return Err(BqError::invalid_query(format!(
                            "Invalid value for option labels: expected an ARRAY of (key, value) pairs, got {other}"
                        )));
                    }
                }
                if labels.is_empty() {
                    table.options.remove("labels");
                } else {
                    table.options.insert("labels".into(), labels.into());
                }
            }
            other => return Err(BqError::unsupported(format!("table option {other}"))),
        }
    }
    Ok(())
}

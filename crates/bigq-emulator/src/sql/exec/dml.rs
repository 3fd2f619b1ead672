//! Data manipulation: `INSERT`, `UPDATE`, `DELETE`, `MERGE` and `TRUNCATE TABLE`, each run as
//! queries over the table whose rows then replace (or join) the table's in the catalog.

use std::sync::Arc;

use bigq_codec::schema::FieldMode;
use datafusion::arrow::array::new_null_array;
use datafusion::arrow::datatypes::Schema;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::sql::sqlparser::ast::{self, FromTable};

use super::engine::Engine;
use super::output::{DmlStats, QueryOutput, QueryRequest, conform, result_style};
use crate::catalog::{Table, TableKind, TableRef};
use crate::error::{BqError, BqResult};
use crate::sql::names::{name_parts, qualified_name, resolve};

impl Engine {
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
            w.commit()?;
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

    pub(super) async fn update(
        &self,
        up: ast::Update,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
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
            self.catalog.update(|w| w.put_table(&t, new))?;
        }
        let mut out = QueryOutput::empty("UPDATE");
        out.dml = Some(DmlStats {
            updated: n_updated as i64,
            ..Default::default()
        });
        Ok(out)
    }

    pub(super) async fn merge(&self, m: ast::Merge, req: &QueryRequest) -> BqResult<QueryOutput> {
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
            self.catalog.update(|w| w.put_table(&t, new))?;
        }
        let mut out = QueryOutput::empty("MERGE");
        out.dml = Some(DmlStats {
            inserted,
            updated,
            deleted,
        });
        Ok(out)
    }

    pub(super) async fn delete(
        &self,
        del: ast::Delete,
        req: &QueryRequest,
    ) -> BqResult<QueryOutput> {
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
            self.catalog.update(|w| w.put_table(&t, new))?;
        }
        let mut out = QueryOutput::empty("DELETE");
        out.dml = Some(DmlStats {
            deleted,
            ..Default::default()
        });
        Ok(out)
    }

    /// `TRUNCATE TABLE`: every row deleted.
    pub(super) fn truncate(&self, tr: &ast::Truncate, req: &QueryRequest) -> BqResult<QueryOutput> {
        let cx = &req.names;
        let mut out = QueryOutput::empty("TRUNCATE_TABLE");
        for target in &tr.table_names {
            let t = resolve(&target.name, cx)?;
            let table = self.catalog.read().table(&t)?;
            let deleted = table.num_rows() as i64;
            if !req.dry_run {
                let mut new = (*table).clone();
                new.batches.clear();
                self.catalog.update(|w| w.put_table(&t, new))?;
            }
            out.dml = Some(DmlStats {
                deleted,
                ..Default::default()
            });
        }
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

//! A query's result stored in its destination table, as `configuration.query.
//! destinationTable` asks (WRITE_EMPTY, WRITE_TRUNCATE or WRITE_APPEND, with or without new
//! columns).

use std::sync::Arc;

use bigq_codec::schema::{FieldMode, TableFieldSchema};
use datafusion::arrow::datatypes::Schema;
use datafusion::arrow::record_batch::RecordBatch;

use super::engine::Engine;
use super::output::{QueryOutput, conform, result_style, table_schema_of};
use crate::catalog::{Table, TableRef, WriteGuard};
use crate::error::{BqError, BqResult};

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

impl Engine {
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
            // The query's cost, not the reading of the table it wrote.
            cost: out.cost.clone(),
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
        self.catalog
            .update(|w| store_in(w, t, out, fields, create_never, write, add_fields))
    }
}

/// `store_result`'s change, under the write lock.
fn store_in(
    w: &mut WriteGuard<'_>,
    t: &TableRef,
    out: &QueryOutput,
    fields: Vec<TableFieldSchema>,
    create_never: bool,
    write: &str,
    add_fields: bool,
) -> BqResult<()> {
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

//! Copy jobs (`configuration.copy`): one or several tables of the same schema copied into a
//! destination under the write and create dispositions. `operationType` COPY, SNAPSHOT and
//! CLONE all copy the rows (the emulator keeps no history to share); RESTORE is refused.

use bigq_codec::schema::TableFieldSchema;
use datafusion::arrow::record_batch::RecordBatch;
use serde_json::{Value, json};

use crate::catalog::{Catalog, Table, TableKind, TableRef};
use crate::error::BqError;
use crate::jobs::TransferStats;

/// A copy job's options.
#[derive(Clone, Debug)]
pub struct CopyOptions {
    /// `sourceTable` and `sourceTables`, in order.
    pub sources: Vec<TableRef>,
    /// `destinationTable`.
    pub destination: TableRef,
    /// `createDisposition` is CREATE_NEVER.
    pub create_never: bool,
    /// `writeDisposition` (WRITE_EMPTY by default for copies).
    pub write: String,
}

fn table_ref(project: &str, v: &Value, what: &str) -> Result<TableRef, BqError> {
    let part = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let missing = |k: &str| BqError::invalid(format!("Required parameter is missing: {what}.{k}"));
    Ok(TableRef {
        project: part("projectId").unwrap_or_else(|| project.to_string()),
        dataset: part("datasetId").ok_or_else(|| missing("datasetId"))?,
        table: part("tableId").ok_or_else(|| missing("tableId"))?,
    })
}

impl CopyOptions {
    /// Reads `configuration.copy`; `project` is the job's.
    pub fn parse(project: &str, cfg: &Value) -> Result<CopyOptions, BqError> {
        let mut sources = Vec::new();
        if let Some(s) = cfg.get("sourceTable").filter(|s| !s.is_null()) {
            sources.push(table_ref(project, s, "sourceTable")?);
        }
        for s in cfg
            .get("sourceTables")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            sources.push(table_ref(project, s, "sourceTables")?);
        }
        if sources.is_empty() {
            return Err(BqError::invalid(
                "Required parameter is missing: sourceTable",
            ));
        }
        let d = cfg
            .get("destinationTable")
            .ok_or_else(|| BqError::invalid("Required parameter is missing: destinationTable"))?;
        match cfg.get("operationType").and_then(Value::as_str) {
            None | Some("") | Some("COPY") | Some("SNAPSHOT") | Some("CLONE") => {}
            Some(other) => {
                return Err(BqError::invalid(format!(
                    "Unsupported by bigq-emulator: copy operationType {other}"
                )));
            }
        }
        let write = cfg
            .get("writeDisposition")
            .and_then(Value::as_str)
            .filter(|w| !w.is_empty())
            .unwrap_or("WRITE_EMPTY")
            .to_string();
        if !["WRITE_APPEND", "WRITE_TRUNCATE", "WRITE_EMPTY"].contains(&write.as_str()) {
            return Err(BqError::invalid(format!(
                "Invalid value for writeDisposition: {write}"
            )));
        }
        Ok(CopyOptions {
            sources,
            destination: table_ref(project, d, "destinationTable")?,
            create_never: cfg.get("createDisposition").and_then(Value::as_str)
                == Some("CREATE_NEVER"),
            write,
        })
    }
}

/// The `configuration` BigQuery reports for a copy job.
pub fn configuration(cfg: &Value) -> Value {
    let mut c = cfg.as_object().cloned().unwrap_or_default();
    c.entry("writeDisposition").or_insert("WRITE_EMPTY".into());
    c.entry("createDisposition")
        .or_insert("CREATE_IF_NEEDED".into());
    c.entry("operationType").or_insert("COPY".into());
    json!({"copy": c, "jobType": "COPY"})
}

/// Whether two schemas have the same columns (names in any case, types), in order.
fn same_columns(a: &[TableFieldSchema], b: &[TableFieldSchema]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.name.eq_ignore_ascii_case(&y.name) && x.field_type == y.field_type)
}

/// Runs a copy, recording the rows and bytes copied in `stats`; one catalog commit.
pub fn run(catalog: &Catalog, o: &CopyOptions, stats: &mut TransferStats) -> Result<(), BqError> {
    let t = &o.destination;
    catalog.update(|w| {
        let mut rows = Vec::new();
        let mut first: Option<std::sync::Arc<Table>> = None;
        for s in &o.sources {
            let src = w.table(s)?;
            if let TableKind::View { .. } = src.kind {
                return Err(BqError::invalid(format!(
                    "Cannot copy {s}: it is a view, not a table."
                )));
            }
            if let Some(f) = &first
                && !same_columns(&f.schema, &src.schema)
            {
                return Err(BqError::invalid(format!(
                    "Incompatible table schema: {s} does not have the schema of {}",
                    o.sources
                        .first()
                        .map(ToString::to_string)
                        .unwrap_or_default()
                )));
            }
            rows.extend(src.batches.iter().cloned());
            first.get_or_insert(src);
        }
        let Some(first) = first else {
            return Err(BqError::invalid(
                "Required parameter is missing: sourceTable",
            ));
        };
        stats.input_files = o.sources.len() as u64;
        stats.output_rows = rows.iter().map(|b| b.num_rows() as u64).sum();
        stats.output_bytes = crate::memory::batches_bytes(rows.iter()) as u64;
        w.dataset_mut(&t.project, &t.dataset)?;
        let existing = w.table(t).ok();
        let fresh = || {
            let mut table = Table::new(first.schema.clone())?;
            table.description = first.description.clone();
            table.options = first.options.clone();
            table.batches = rows.clone();
            Ok::<Table, BqError>(table)
        };
        match existing {
            None if o.create_never => Err(BqError::not_found(format!("Not found: Table {t}"))),
            None => w.create_table(t, fresh()?, false),
            Some(old) => match o.write.as_str() {
                "WRITE_EMPTY" if old.num_rows() > 0 => {
                    Err(BqError::duplicate(format!("Already Exists: Table {t}")))
                }
                "WRITE_APPEND" => {
                    if !same_columns(&old.schema, &first.schema) {
                        return Err(BqError::invalid(format!(
                            "Provided Schema does not match Table {t}."
                        )));
                    }
                    let mut table = (*old).clone();
                    for b in &rows {
                        table.batches.push(
                            RecordBatch::try_new(table.arrow_schema.clone(), b.columns().to_vec())
                                .map_err(|e| {
                                    BqError::invalid(format!(
                                        "Provided Schema does not match Table {t}: {e}"
                                    ))
                                })?,
                        );
                    }
                    table.generation += 1;
                    w.put_table(t, table)
                }
                _ => {
                    let mut table = fresh()?;
                    table.creation_time = old.creation_time;
                    table.generation = old.generation + 1;
                    w.put_table(t, table)
                }
            },
        }
    })
}

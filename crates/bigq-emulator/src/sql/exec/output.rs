//! What a statement is asked and answers ([`QueryRequest`], [`QueryOutput`]), and results
//! laid out as tables: conformed to a table's Arrow schema, with the schema BigQuery gives
//! a destination table.

use std::sync::Arc;

use bigq_codec::schema::{FieldMode, TableFieldSchema};
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::DataFusionError;

use super::cost::Cost;
use crate::catalog::{Table, TableRef};
use crate::error::{BqError, BqResult};
use crate::sql::names::NameContext;
use crate::sql::params::Params;
use crate::sql::types;

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
    /// `maximumBytesBilled`: a query that would bill more fails before it runs.
    pub maximum_bytes_billed: Option<u64>,
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
    /// The routine it touched, if a routine (`table` its id).
    pub target_routine: Option<TableRef>,
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
    /// The bytes the query processed and is billed for (none but a query's).
    pub cost: Cost,
}

impl QueryOutput {
    pub(crate) fn empty(statement_type: &'static str) -> QueryOutput {
        QueryOutput {
            schema: Vec::new(),
            arrow_schema: Arc::new(Schema::empty()),
            batches: Vec::new(),
            statement_type,
            dml: None,
            ddl: None,
            returns_rows: false,
            session_id: None,
            cost: Cost::default(),
        }
    }

    /// The number of result rows.
    pub fn total_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// A DataFusion error as BigQuery would word it.
pub fn df_err(e: DataFusionError) -> BqError {
    if let DataFusionError::ResourcesExhausted(why) = e.find_root() {
        return BqError {
            status: 400,
            reason: "resourcesExceeded",
            message: format!(
                "Resources exceeded during query execution: The query could not be executed in the allotted memory (bigq-emulator's memory budget: {why})."
            ),
            location: None,
        };
    }
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
    if let Some(rest) = msg.strip_prefix("Field ")
        && let Some(name) = rest.strip_suffix(" not found in struct")
    {
        return BqError::invalid_query(format!("Field name {name} does not exist in STRUCT"));
    }
    if let Some(err) = no_matching_signature(msg) {
        return err;
    }
    if let Some(rest) = msg.strip_prefix("This feature is not implemented: ") {
        return BqError::unsupported(rest);
    }
    if msg.contains("have different number of columns") {
        // DataFusion: "UNION queries have different number of columns".
        return BqError::invalid_query("Queries in a set operation have mismatched column count");
    }
    if msg.contains("Scalar subquery returned more than one row") {
        return BqError::invalid_query("Scalar subquery produced more than one element");
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

/// DataFusion's failure to find a signature for a call (`Function 'sum' failed to match any
/// signature`, `Failed to coerce arguments to satisfy a call to 'string_agg' function`) as
/// BigQuery words it, with the argument types in BigQuery's names where DataFusion lists
/// them.
fn no_matching_signature(msg: &str) -> Option<BqError> {
    // A UDF's own coercion error, wrapped by DataFusion in its listing of candidates: the
    // UDF's message is BigQuery's.
    if msg.starts_with("Function '")
        && let Some((_, inner)) = msg.split_once("user-defined coercion failed with: ")
    {
        let inner = inner
            .strip_prefix("Error during planning: ")
            .unwrap_or(inner);
        let inner = inner
            .split_once(". No function matches")
            .map_or(inner, |(head, _)| head);
        return Some(BqError::invalid_query(inner.trim().to_string()));
    }
    let quoted = |after: &str| -> Option<String> {
        let rest = msg.split_once(after)?.1;
        let rest = rest.strip_prefix('\'')?;
        Some(rest.split('\'').next()?.to_string())
    };
    let name = if msg.starts_with("Function '")
        && (msg.contains("failed to match any signature")
            || (msg.contains("' expects ") && msg.contains("No function matches the given name")))
    {
        quoted("Function ")?
    } else if msg.starts_with("Failed to coerce arguments to satisfy a call to '") {
        quoted("a call to ")?
    } else {
        return None;
    };
    let types = msg
        .split_once("argument types '")
        .and_then(|(_, rest)| rest.split_once('('))
        .and_then(|(_, rest)| rest.split_once(")'"))
        .map(|(list, _)| {
            list.split(", ")
                .map(|t| match t {
                    "Utf8" | "Utf8View" | "LargeUtf8" => "STRING".to_string(),
                    "Binary" | "BinaryView" | "LargeBinary" => "BYTES".to_string(),
                    "Int64" => "INT64".to_string(),
                    "Float64" => "FLOAT64".to_string(),
                    "Boolean" => "BOOL".to_string(),
                    "Date32" => "DATE".to_string(),
                    t if t.starts_with("Decimal128") => "NUMERIC".to_string(),
                    t if t.starts_with("Decimal256") => "BIGNUMERIC".to_string(),
                    t if t.starts_with("Timestamp") && t.contains("None") => "DATETIME".to_string(),
                    t if t.starts_with("Timestamp") => "TIMESTAMP".to_string(),
                    t if t.starts_with("List") => "ARRAY".to_string(),
                    t if t.starts_with("Struct") => "STRUCT".to_string(),
                    t => t.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        });
    let name = name.to_ascii_uppercase();
    Some(BqError::invalid_query(match types {
        Some(types) => {
            format!("No matching signature for function {name} for argument types: {types}")
        }
        None => format!("No matching signature for function {name}"),
    }))
}

/// Casts `batches` (whose columns are in target order) to `target`'s Arrow schema.
pub(super) fn conform(batches: &[RecordBatch], target: &SchemaRef) -> BqResult<Vec<RecordBatch>> {
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

/// A result's BigQuery schema as a table schema (no NULLABLE mode spelled out).
pub(super) fn table_schema_of(arrow: &Schema) -> BqResult<Vec<TableFieldSchema>> {
    let mut fields = types::bq_schema_of(arrow)?;
    let mut seen = std::collections::HashSet::new();
    let duplicates: Vec<&str> = fields
        .iter()
        .filter(|f| !seen.insert(f.name.to_ascii_lowercase()))
        .map(|f| f.name.as_str())
        .collect();
    if !duplicates.is_empty() {
        return Err(BqError::invalid_query(format!(
            "Duplicate column names in the result are not supported. Found duplicate(s): {}",
            duplicates.join(", ")
        )));
    }
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
pub(super) fn result_style(fields: &[TableFieldSchema]) -> Vec<TableFieldSchema> {
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

//! The metadata of `jobs.query` and `jobs.getQueryResults` responses, query statistics,
//! and a decoded response.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bigq_codec::schema::TableSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::admin::Job;
use crate::client::rest::ErrorProto;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::TableId;

/// Identifies a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobReference {
    /// The project the job ran in.
    pub project_id: String,
    /// The job id (absent for dry runs).
    #[serde(default)]
    pub job_id: String,
    /// The location the job ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// DML statistics.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DmlStats {
    /// Rows inserted.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub inserted_row_count: Option<i64>,
    /// Rows deleted.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub deleted_row_count: Option<i64>,
    /// Rows updated.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub updated_row_count: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
struct CreationReason {
    code: Option<String>,
}

/// What BigQuery said about a query besides its rows.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct QueryStats {
    /// The job, when BigQuery created one.
    #[serde(default)]
    pub job_reference: Option<JobReference>,
    /// The query id, when the query ran in short query mode without a job.
    #[serde(default)]
    pub query_id: Option<String>,
    /// Why a job was created in short query mode (`REQUESTED`, `LONG_RUNNING`,
    /// `LARGE_RESULTS`, `OTHER`).
    #[serde(default, deserialize_with = "creation_reason")]
    pub job_creation_reason: Option<String>,
    /// Rows in the whole result.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_u64::deserialize"
    )]
    pub total_rows: Option<u64>,
    /// Bytes processed.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub total_bytes_processed: Option<i64>,
    /// Bytes billed.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub total_bytes_billed: Option<i64>,
    /// Slot milliseconds used.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub total_slot_ms: Option<i64>,
    /// Whether the result came from the cache.
    #[serde(default)]
    pub cache_hit: Option<bool>,
    /// Rows affected by a DML statement.
    #[serde(
        default,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub num_dml_affected_rows: Option<i64>,
    /// Detailed DML counts.
    #[serde(default)]
    pub dml_stats: Option<DmlStats>,
    /// The statement type (`SELECT`, `INSERT`, `CREATE_TABLE`, ...): from the job's
    /// statistics (see [`QueryBuilder::job_statistics`](crate::query::QueryBuilder::job_statistics)).
    #[serde(default)]
    pub statement_type: Option<String>,
    /// The tables the query read: from the job's statistics (`jobs.query` and
    /// `getQueryResults` do not report them).
    #[serde(skip)]
    pub referenced_tables: Vec<TableId>,
    /// The location the query ran in.
    #[serde(default)]
    pub location: Option<String>,
    /// The result schema.
    #[serde(default)]
    pub schema: Option<TableSchema>,
    /// Whether the query has finished.
    #[serde(default)]
    pub(crate) job_complete: Option<bool>,
    #[serde(default)]
    pub(crate) page_token: Option<String>,
    #[serde(default)]
    pub(crate) errors: Vec<ErrorProto>,
}

impl QueryStats {
    pub(crate) fn from_metadata(meta: Map<String, Value>) -> Result<Self> {
        serde_json::from_value(Value::Object(meta)).map_err(|e| {
            Error::new(
                ErrorKind::Decode,
                format!("unexpected query response from BigQuery: {e}"),
            )
        })
    }

    /// Fails when the response reports errors and carries no result columns.
    pub(crate) fn check_errors(&self) -> Result<()> {
        if self.schema.as_ref().is_none_or(|s| s.fields.is_empty())
            && let Some(first) = self.errors.first()
        {
            return Err(Error::job(
                first.reason.clone(),
                first
                    .message
                    .clone()
                    .unwrap_or_else(|| "the query failed".into()),
                first.location.clone(),
            ));
        }
        Ok(())
    }

    /// Fills the fields this response lacks from an earlier response of the same query.
    pub(crate) fn fill_from(&mut self, earlier: QueryStats) {
        self.job_reference = self.job_reference.take().or(earlier.job_reference);
        self.query_id = self.query_id.take().or(earlier.query_id);
        self.job_creation_reason = self
            .job_creation_reason
            .take()
            .or(earlier.job_creation_reason);
        self.location = self.location.take().or(earlier.location);
        self.statement_type = self.statement_type.take().or(earlier.statement_type);
    }

    /// Takes the cost and the counts from the job's final statistics (`jobs.get`), which
    /// has them all whichever call answered the query; what the job lacks is kept.
    pub(crate) fn fill_from_job(&mut self, job: &Job) {
        let stats = job.statistics();
        let Some(q) = &stats.query else {
            return;
        };
        let or = |job: Option<i64>, here: Option<i64>| job.or(here);
        self.total_bytes_processed = or(
            q.total_bytes_processed.or(stats.total_bytes_processed),
            self.total_bytes_processed,
        );
        self.total_bytes_billed = or(q.total_bytes_billed, self.total_bytes_billed);
        self.total_slot_ms = or(q.total_slot_ms.or(stats.total_slot_ms), self.total_slot_ms);
        self.cache_hit = q.cache_hit.or(self.cache_hit);
        self.num_dml_affected_rows = or(q.num_dml_affected_rows, self.num_dml_affected_rows);
        if q.dml_stats.is_some() {
            self.dml_stats = q.dml_stats.clone();
        }
        self.referenced_tables = q.referenced_tables.clone();
        self.statement_type = q.statement_type.clone().or(self.statement_type.take());
        if self.location.is_none() {
            self.location = job.job_reference.location.clone();
        }
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.job_complete.unwrap_or(false)
    }
}

/// One decoded response of a query (`jobs.query`, `jobs.getQueryResults` or their gRPC
/// forms): its statistics and its rows as batches.
pub(crate) struct ResultPage {
    pub(crate) stats: QueryStats,
    pub(crate) batches: Vec<RecordBatch>,
    /// The batches' schema when the response carried its own (Arrow); otherwise the one
    /// derived from `stats.schema`.
    pub(crate) arrow_schema: Option<SchemaRef>,
}

fn creation_reason<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<CreationReason>::deserialize(d)?.and_then(|r| r.code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_recorded_query_response_metadata() {
        let meta: Map<String, Value> = serde_json::from_str(
            r#"{"kind":"bigquery#queryResponse","schema":{"fields":[{"name":"n","type":"INTEGER","mode":"NULLABLE"}]},
            "jobReference":{"projectId":"p","jobId":"j","location":"US"},"totalRows":"100","pageToken":"t",
            "totalBytesProcessed":"0","jobComplete":true,"cacheHit":false,"queryId":"q",
            "jobCreationReason":{"code":"LARGE_RESULTS"},"totalBytesBilled":"0","location":"US",
            "numDmlAffectedRows":"3","dmlStats":{"insertedRowCount":"3"}}"#,
        )
        .unwrap();
        let s = QueryStats::from_metadata(meta).unwrap();
        assert_eq!(s.total_rows, Some(100));
        assert_eq!(s.job_creation_reason.as_deref(), Some("LARGE_RESULTS"));
        assert_eq!(s.job_reference.as_ref().unwrap().job_id, "j");
        assert_eq!(s.num_dml_affected_rows, Some(3));
        assert_eq!(s.dml_stats.as_ref().unwrap().inserted_row_count, Some(3));
        assert!(s.is_complete());
        assert_eq!(s.page_token.as_deref(), Some("t"));
    }

    #[test]
    fn errors_without_schema_fail() {
        let meta: Map<String, Value> = serde_json::from_str(
            r#"{"jobComplete":true,"errors":[{"reason":"invalidQuery","message":"Syntax error","location":"query"}]}"#,
        )
        .unwrap();
        let e = QueryStats::from_metadata(meta)
            .unwrap()
            .check_errors()
            .unwrap_err();
        assert!(e.is_invalid_query());
        assert_eq!(e.location(), Some("query"));
    }
}

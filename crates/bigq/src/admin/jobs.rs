//! Jobs: the resource, `jobs.get` and `jobs.cancel`.

use std::sync::Arc;

use serde::{Deserialize, Deserializer};

use crate::client::Client;
use crate::error::Result;
use crate::ids::TableId;
use crate::paging::{ListStream, Pages};
use crate::query::response::{DmlStats, JobReference};

/// A job (the REST `Job` resource, the fields bigq knows).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Job {
    /// The job's id.
    pub job_reference: JobReference,
    #[serde(default)]
    pub(crate) status: JobStatus,
    #[serde(default)]
    pub(crate) configuration: JobConfiguration,
    #[serde(default)]
    pub(crate) statistics: JobStatistics,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobStatus {
    #[serde(default)]
    pub(crate) state: Option<String>,
    #[serde(default)]
    pub(crate) error_result: Option<JobError>,
}

/// Why a job failed (BigQuery's `ErrorProto`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct JobError {
    /// The reason code (`invalidQuery`, `backendError`, ...).
    #[serde(default)]
    pub reason: Option<String>,
    /// The message.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobConfiguration {
    #[serde(default)]
    pub(crate) query: Option<QueryConfiguration>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryConfiguration {
    #[serde(default)]
    pub(crate) query: Option<String>,
    #[serde(default)]
    pub(crate) destination_table: Option<TableReference>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableReference {
    pub(crate) project_id: String,
    pub(crate) dataset_id: String,
    pub(crate) table_id: String,
}

/// What a job did and cost (the REST `JobStatistics`, the fields bigq knows).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct JobStatistics {
    /// When the job was created, ms since the epoch.
    #[serde(default, deserialize_with = "opt_i64")]
    pub creation_time: Option<i64>,
    /// When it started running, ms since the epoch.
    #[serde(default, deserialize_with = "opt_i64")]
    pub start_time: Option<i64>,
    /// When it ended, ms since the epoch.
    #[serde(default, deserialize_with = "opt_i64")]
    pub end_time: Option<i64>,
    /// Bytes processed.
    #[serde(default, deserialize_with = "opt_i64")]
    pub total_bytes_processed: Option<i64>,
    /// Slot milliseconds used.
    #[serde(default, deserialize_with = "opt_i64")]
    pub total_slot_ms: Option<i64>,
    /// The script job this job is a statement of.
    #[serde(default)]
    pub parent_job_id: Option<String>,
    /// How many child jobs a script job ran.
    #[serde(default, deserialize_with = "opt_i64")]
    pub num_child_jobs: Option<i64>,
    /// A query job's statistics.
    #[serde(default)]
    pub query: Option<QueryJobStatistics>,
}

/// A query job's statistics (the REST `JobStatistics2`, the fields bigq knows).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct QueryJobStatistics {
    /// Bytes processed.
    #[serde(default, deserialize_with = "opt_i64")]
    pub total_bytes_processed: Option<i64>,
    /// Bytes billed.
    #[serde(default, deserialize_with = "opt_i64")]
    pub total_bytes_billed: Option<i64>,
    /// Slot milliseconds used.
    #[serde(default, deserialize_with = "opt_i64")]
    pub total_slot_ms: Option<i64>,
    /// Whether the result came from the cache.
    #[serde(default)]
    pub cache_hit: Option<bool>,
    /// Rows affected by a DML statement.
    #[serde(default, deserialize_with = "opt_i64")]
    pub num_dml_affected_rows: Option<i64>,
    /// Detailed DML counts.
    #[serde(default)]
    pub dml_stats: Option<DmlStats>,
    /// The tables the query read.
    #[serde(default, deserialize_with = "table_references")]
    pub referenced_tables: Vec<TableId>,
    /// The statement type (`SELECT`, `INSERT`, `CREATE_TABLE`, `SCRIPT`, ...).
    #[serde(default)]
    pub statement_type: Option<String>,
}

/// An int64 as BigQuery's JSON writes it (a string, or a number); the error names the value.
fn opt_i64<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<i64>, D::Error> {
    use serde::de::Error as _;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("not an int64: {s:?}"))),
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("not an int64: {n}"))),
        Some(other) => Err(D::Error::custom(format!("not an int64: {other}"))),
    }
}

fn table_references<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Vec<TableId>, D::Error> {
    let refs = Option::<Vec<TableReference>>::deserialize(d)?.unwrap_or_default();
    Ok(refs.into_iter().map(TableReference::into_id).collect())
}

impl TableReference {
    pub(crate) fn into_id(self) -> TableId {
        TableId {
            project: self.project_id,
            dataset: self.dataset_id,
            table: self.table_id,
        }
    }
}

impl Job {
    /// `PENDING`, `RUNNING` or `DONE`.
    pub fn state(&self) -> Option<&str> {
        self.status.state.as_deref()
    }

    /// Whether the job has finished (successfully or not).
    pub fn is_done(&self) -> bool {
        self.state() == Some("DONE")
    }

    /// Why the job failed, if it did.
    pub fn error(&self) -> Option<&JobError> {
        self.status.error_result.as_ref()
    }

    /// The table a query job wrote its result to: the caller's, or the anonymous table
    /// BigQuery keeps results in for a day.
    pub fn destination_table(&self) -> Option<TableId> {
        let t = self
            .configuration
            .query
            .as_ref()?
            .destination_table
            .as_ref()?;
        Some(TableId {
            project: t.project_id.clone(),
            dataset: t.dataset_id.clone(),
            table: t.table_id.clone(),
        })
    }

    /// The kind of statement a query job ran (`SELECT`, `INSERT`, `CREATE_TABLE`, ...).
    pub fn statement_type(&self) -> Option<&str> {
        self.statistics.query.as_ref()?.statement_type.as_deref()
    }

    /// What the job did and cost: times, bytes, slot time, DML counts, referenced tables.
    pub fn statistics(&self) -> &JobStatistics {
        &self.statistics
    }

    /// The SQL of a query job.
    pub fn query(&self) -> Option<&str> {
        self.configuration.query.as_ref()?.query.as_deref()
    }
}

/// A job state, as `jobs.list` filters by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobState {
    /// Waiting to run.
    Pending,
    /// Running.
    Running,
    /// Finished, successfully or not.
    Done,
}

impl JobState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Running => "running",
            JobState::Done => "done",
        }
    }
}

/// Which jobs [`Client::list_jobs`] lists: BigQuery's `jobs.list` filters. By default the
/// caller's jobs of the client's project, newest first, without their configuration.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct ListJobs {
    pub(crate) project: Option<String>,
    pub(crate) states: Vec<JobState>,
    pub(crate) min_creation_time: Option<u64>,
    pub(crate) max_creation_time: Option<u64>,
    pub(crate) parent_job_id: Option<String>,
    pub(crate) all_users: bool,
    pub(crate) full: bool,
    pub(crate) page_size: Option<u32>,
}

impl ListJobs {
    /// All of the caller's jobs of the client's project.
    pub fn new() -> Self {
        Self::default()
    }

    /// The jobs of another project.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Only jobs in this state (call again for several).
    pub fn state(mut self, state: JobState) -> Self {
        self.states.push(state);
        self
    }

    /// Only jobs created at or after this time, ms since the epoch.
    pub fn min_creation_time(mut self, ms: u64) -> Self {
        self.min_creation_time = Some(ms);
        self
    }

    /// Only jobs created at or before this time, ms since the epoch.
    pub fn max_creation_time(mut self, ms: u64) -> Self {
        self.max_creation_time = Some(ms);
        self
    }

    /// Only the child jobs of this script job (one per statement the script ran).
    pub fn parent_job_id(mut self, job_id: impl Into<String>) -> Self {
        self.parent_job_id = Some(job_id.into());
        self
    }

    /// Every user's jobs, not only the caller's (needs the project owner's permission).
    pub fn all_users(mut self, yes: bool) -> Self {
        self.all_users = yes;
        self
    }

    /// With each job's configuration (BigQuery's `full` projection; `minimal` without).
    pub fn full(mut self, yes: bool) -> Self {
        self.full = yes;
        self
    }

    /// Jobs per page fetched.
    pub fn page_size(mut self, jobs: u32) -> Self {
        self.page_size = Some(jobs);
        self
    }
}

impl Client {
    /// Lists jobs, newest first, as a stream that fetches pages as it is read.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// use bigq::admin::{JobState, ListJobs};
    /// use futures::TryStreamExt;
    /// for n in 0..3 {
    ///     client.query(format!("SELECT {n}")).job_id(format!("listed_{n}")).run().await?;
    /// }
    /// let jobs: Vec<_> = client
    ///     .list_jobs(ListJobs::new().state(JobState::Done).page_size(2))
    ///     .try_collect()
    ///     .await?;
    /// let ids: Vec<&str> = jobs.iter().map(|j| j.job_reference.job_id.as_str()).collect();
    /// assert_eq!(ids, ["listed_2", "listed_1", "listed_0"]);
    /// assert!(jobs.iter().all(|j| j.is_done()));
    /// // A script's statements, when BigQuery runs them as child jobs:
    /// let children = client
    ///     .list_jobs(ListJobs::new().parent_job_id("listed_0"))
    ///     .try_collect()
    ///     .await?;
    /// assert!(children.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn list_jobs(&self, filter: ListJobs) -> ListStream<Job> {
        let api = self.inner.api.clone();
        let project = filter
            .project
            .clone()
            .unwrap_or_else(|| self.inner.project.clone());
        let filter = Arc::new(filter);
        ListStream::new(Pages::lazy(None, move |token| {
            let (api, project, filter) = (api.clone(), project.clone(), filter.clone());
            async move { api.list_jobs(&project, &filter, token).await }
        }))
    }

    /// Deletes a job's metadata (`jobs.delete`); a running job must be cancelled first.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let results = client.query("SELECT 1").job_id("to_delete").run().await?;
    /// let job = results.job_reference().unwrap();
    /// client.delete_job(job).await?;
    /// assert!(client.get_job(job).await.unwrap_err().is_not_found());
    /// # Ok(()) }
    /// ```
    pub async fn delete_job(&self, job: &JobReference) -> Result<()> {
        self.inner.api.delete_job(job).await
    }

    /// Gets a job: its state, errors and, for a query, its destination table.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let results = client.query("SELECT 1").job_creation_required(true).run().await?;
    /// let job = client.get_job(results.job_reference().unwrap()).await?;
    /// assert!(job.is_done() && job.error().is_none());
    /// assert_eq!(job.statement_type(), Some("SELECT"));
    /// # Ok(()) }
    /// ```
    pub async fn get_job(&self, job: &JobReference) -> Result<Job> {
        self.inner.api.get_job(job).await
    }

    /// Asks BigQuery to cancel a job; returns the job as it is now (cancellation is
    /// asynchronous: poll [`get_job`](Self::get_job) until it is done).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> bigq::Result<()> {
    /// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
    /// # let client = bigq::Client::builder()
    /// #     .with_project(emulator.project())
    /// #     .with_emulator(emulator.rest_endpoint())
    /// #     .with_emulator_grpc(emulator.grpc_endpoint())
    /// #     .build()
    /// #     .await?;
    /// let results = client.query("SELECT 1").job_creation_required(true).run().await?;
    /// let job = client.cancel_job(results.job_reference().unwrap()).await?;
    /// // Cancelling a finished job leaves it as it was.
    /// assert!(job.is_done());
    /// # Ok(()) }
    /// ```
    pub async fn cancel_job(&self, job: &JobReference) -> Result<Job> {
        self.inner.api.cancel_job(job).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_query_job() {
        let job: Job = serde_json::from_value(serde_json::json!({
            "kind": "bigquery#job",
            "jobReference": {"projectId": "p", "jobId": "j", "location": "US"},
            "configuration": {"query": {"query": "SELECT 1", "destinationTable":
                {"projectId": "p", "datasetId": "_abc", "tableId": "anon123"}}},
            "status": {"state": "DONE"},
            "statistics": {"query": {"statementType": "SELECT"}}
        }))
        .unwrap();
        assert!(job.is_done());
        assert_eq!(job.error(), None);
        assert_eq!(
            job.destination_table().unwrap().to_string(),
            "p._abc.anon123"
        );
        assert_eq!(job.statement_type(), Some("SELECT"));
        let failed: Job = serde_json::from_value(serde_json::json!({
            "jobReference": {"projectId": "p", "jobId": "j"},
            "status": {"state": "DONE", "errorResult": {"reason": "invalidQuery", "message": "bad"}}
        }))
        .unwrap();
        assert_eq!(
            failed.error().unwrap().reason.as_deref(),
            Some("invalidQuery")
        );
        assert_eq!(failed.destination_table(), None);
    }

    #[test]
    fn reads_the_statistics_of_a_query_job() {
        // int64 fields are JSON strings in BigQuery's REST resources.
        let job: Job = serde_json::from_value(serde_json::json!({
            "jobReference": {"projectId": "p", "jobId": "child"},
            "status": {"state": "DONE"},
            "statistics": {
                "creationTime": "1700000000000", "startTime": "1700000000100",
                "endTime": "1700000000900", "totalBytesProcessed": "1592",
                "totalSlotMs": "37", "parentJobId": "script_1",
                "query": {
                    "totalBytesProcessed": "1592", "totalBytesBilled": "10485760",
                    "totalSlotMs": "37", "cacheHit": false, "numDmlAffectedRows": "3",
                    "dmlStats": {"updatedRowCount": "3", "insertedRowCount": "0"},
                    "referencedTables": [{"projectId": "p", "datasetId": "d", "tableId": "t"}],
                    "statementType": "UPDATE"
                }
            }
        }))
        .unwrap();
        let s = job.statistics();
        assert_eq!(s.creation_time, Some(1_700_000_000_000));
        assert_eq!(s.end_time, Some(1_700_000_000_900));
        assert_eq!(s.parent_job_id.as_deref(), Some("script_1"));
        let q = s.query.as_ref().unwrap();
        assert_eq!(q.total_bytes_billed, Some(10 << 20));
        assert_eq!(q.total_slot_ms, Some(37));
        assert_eq!(q.cache_hit, Some(false));
        assert_eq!(q.dml_stats.as_ref().unwrap().updated_row_count, Some(3));
        assert_eq!(q.dml_stats.as_ref().unwrap().deleted_row_count, None);
        assert_eq!(q.referenced_tables[0].to_string(), "p.d.t");
        let mut stats = crate::query::QueryStats::default();
        stats.fill_from_job(&job);
        assert_eq!(stats.total_bytes_processed, Some(1592));
        assert_eq!(stats.num_dml_affected_rows, Some(3));
        assert_eq!(stats.statement_type.as_deref(), Some("UPDATE"));
        assert_eq!(stats.referenced_tables.len(), 1);
        let bad = serde_json::from_value::<Job>(serde_json::json!({
            "jobReference": {"projectId": "p", "jobId": "j"},
            "statistics": {"query": {"totalBytesBilled": "ten"}}
        }));
        let e = bad.unwrap_err().to_string();
        assert!(e.contains(r#"not an int64: "ten""#), "{e}");
    }
}

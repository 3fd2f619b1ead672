//! Jobs: the resource, `jobs.get` and `jobs.cancel`.

use serde::Deserialize;

use crate::client::Client;
use crate::error::Result;
use crate::ids::TableId;
use crate::query::response::JobReference;

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
    pub(crate) destination_table: Option<TableReference>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableReference {
    pub(crate) project_id: String,
    pub(crate) dataset_id: String,
    pub(crate) table_id: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobStatistics {
    #[serde(default)]
    pub(crate) query: Option<QueryStatistics>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryStatistics {
    #[serde(default)]
    pub(crate) statement_type: Option<String>,
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
}

impl Client {
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
}

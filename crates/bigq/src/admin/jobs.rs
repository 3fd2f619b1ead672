//! `jobs.get` and `jobs.cancel`.

use serde::Deserialize;

use super::TableId;
use gcloud_sdk::google::cloud::bigquery::v2 as pb;

use crate::client::grpc::non_empty;
use crate::client::rest::{Idempotent, Request};
use crate::client::{Client, Transport};
use crate::error::Result;
use crate::query::JobReference;

/// A job (the REST `Job` resource, the fields bigq knows).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Job {
    /// The job's id.
    pub job_reference: JobReference,
    #[serde(default)]
    status: JobStatus,
    #[serde(default)]
    configuration: JobConfiguration,
    #[serde(default)]
    statistics: JobStatistics,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobStatus {
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    error_result: Option<JobError>,
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
struct JobConfiguration {
    #[serde(default)]
    query: Option<QueryConfiguration>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueryConfiguration {
    #[serde(default)]
    destination_table: Option<TableReference>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TableReference {
    project_id: String,
    dataset_id: String,
    table_id: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobStatistics {
    #[serde(default)]
    query: Option<QueryStatistics>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueryStatistics {
    #[serde(default)]
    statement_type: Option<String>,
}

impl Job {
    /// A job as the v2 gRPC services describe it (the same fields as the REST resource).
    pub(crate) fn from_proto(job: pb::Job) -> Job {
        let status = job.status.unwrap_or_default();
        let query = job.configuration.and_then(|c| c.query);
        let stats = job.statistics.and_then(|s| s.query);
        Job {
            job_reference: job
                .job_reference
                .map(crate::query::grpc_job_reference)
                .unwrap_or_else(|| JobReference {
                    project_id: String::new(),
                    job_id: String::new(),
                    location: None,
                }),
            status: JobStatus {
                state: non_empty(status.state),
                error_result: status.error_result.map(|e| JobError {
                    reason: non_empty(e.reason),
                    message: non_empty(e.message),
                }),
            },
            configuration: JobConfiguration {
                query: query.map(|q| QueryConfiguration {
                    destination_table: q.destination_table.map(|t| TableReference {
                        project_id: t.project_id,
                        dataset_id: t.dataset_id,
                        table_id: t.table_id,
                    }),
                }),
            },
            statistics: JobStatistics {
                query: stats.map(|q| QueryStatistics {
                    statement_type: non_empty(q.statement_type),
                }),
            },
        }
    }

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

#[derive(Deserialize)]
struct CancelResponse {
    job: Job,
}

impl Client {
    /// Gets a job: its state, errors and, for a query, its destination table.
    pub async fn get_job(&self, job: &JobReference) -> Result<Job> {
        if self.inner.transport == Transport::Grpc {
            return Ok(Job::from_proto(Box::pin(self.grpc_get_job(job)).await?));
        }
        let path = [
            "projects",
            job.project_id.as_str(),
            "jobs",
            job.job_id.as_str(),
        ];
        let mut req = Request::get(&path);
        if let Some(l) = &job.location {
            req = req.query("location", l);
        }
        self.call(req).await
    }

    /// Asks BigQuery to cancel a job; returns the job as it is now (cancellation is
    /// asynchronous: poll [`get_job`](Self::get_job) until it is done).
    pub async fn cancel_job(&self, job: &JobReference) -> Result<Job> {
        if self.inner.transport == Transport::Grpc {
            return Ok(Job::from_proto(Box::pin(self.grpc_cancel_job(job)).await?));
        }
        let path = [
            "projects",
            job.project_id.as_str(),
            "jobs",
            job.job_id.as_str(),
            "cancel",
        ];
        let mut req = Request::post(&path, &serde_json::json!({}), Idempotent::Yes)?;
        if let Some(l) = &job.location {
            req = req.query("location", l);
        }
        Ok(self.call::<CancelResponse>(req).await?.job)
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

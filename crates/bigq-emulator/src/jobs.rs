//! The job store: query jobs, their state and their results.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::catalog::now_millis;
use crate::error::BqError;
use crate::sql::exec::QueryOutput;

/// A job's outcome once done.
pub type JobResult = Result<Arc<QueryOutput>, BqError>;

/// One query job.
#[derive(Debug)]
pub struct Job {
    /// Project id.
    pub project: String,
    /// Job id.
    pub job_id: String,
    /// Location.
    pub location: String,
    /// `configuration` as BigQuery reports it.
    pub configuration: Value,
    /// Creation time, ms since the epoch.
    pub creation_time: i64,
    /// `jobCreationReason.code`.
    pub creation_reason: &'static str,
    /// The anonymous destination table id.
    pub destination: (String, String),
    state: Mutex<JobState>,
    done: watch::Sender<bool>,
}

/// Mutable job state.
#[derive(Debug, Clone, Default)]
pub struct JobState {
    /// Start time, ms.
    pub start_time: Option<i64>,
    /// End time, ms.
    pub end_time: Option<i64>,
    /// The result, once done.
    pub result: Option<JobResult>,
}

impl Job {
    /// The current state.
    pub fn state(&self) -> JobState {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Marks the job started.
    pub fn start(&self) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .start_time = Some(now_millis());
    }

    /// Records the result (the first one wins, so a cancel is final).
    pub fn finish(&self, result: JobResult) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.result.is_some() {
            return;
        }
        let now = now_millis();
        s.start_time.get_or_insert(now);
        s.end_time = Some(now);
        s.result = Some(result);
        drop(s);
        self.done.send_replace(true);
    }

    /// Waits until done or `timeout`; returns whether done.
    pub async fn wait(&self, timeout: Duration) -> bool {
        let mut rx = self.done.subscribe();
        if *rx.borrow() {
            return true;
        }
        tokio::time::timeout(timeout, rx.wait_for(|d| *d))
            .await
            .map(|r| r.is_ok())
            .unwrap_or(false)
    }
}

/// Jobs by (project, job id), and in creation order.
type JobIndex = (HashMap<(String, String), Arc<Job>>, Vec<Arc<Job>>);

/// Jobs by (project, `requestId`), with the query configuration that made them.
type RequestIndex = HashMap<(String, String), (Value, RequestAnswer)>;

/// What a request with a `requestId` was answered with.
#[derive(Clone, Debug)]
pub enum RequestAnswer {
    /// The job it made.
    Job(Arc<Job>),
    /// A short query answered without a job: its result and creation / start / end times.
    Jobless(Arc<QueryOutput>, (i64, i64, i64)),
}

/// All jobs, in creation order.
#[derive(Debug, Default)]
pub struct JobStore {
    inner: Mutex<JobIndex>,
    requests: Mutex<RequestIndex>,
}

impl JobStore {
    /// Registers a new job; `duplicate` when the id is taken.
    pub fn create(
        &self,
        project: &str,
        job_id: &str,
        location: &str,
        configuration: Value,
        creation_reason: &'static str,
    ) -> Result<Arc<Job>, BqError> {
        let (done, _) = watch::channel(false);
        let anon = job_id.replace('-', "_");
        let job = Arc::new(Job {
            project: project.to_string(),
            job_id: job_id.to_string(),
            location: location.to_string(),
            configuration,
            creation_time: now_millis(),
            creation_reason,
            destination: ("_emulator_anonymous".to_string(), format!("anon{anon}")),
            state: Mutex::new(JobState::default()),
            done,
        });
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let key = (project.to_string(), job_id.to_string());
        if g.0.contains_key(&key) {
            return Err(BqError::duplicate(format!(
                "Already Exists: Job {project}:{location}.{job_id}"
            )));
        }
        g.0.insert(key, job.clone());
        g.1.push(job.clone());
        Ok(job)
    }

    /// A job by id.
    pub fn get(&self, project: &str, job_id: &str) -> Result<Arc<Job>, BqError> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0.get(&(project.to_string(), job_id.to_string()))
            .cloned()
            .ok_or_else(|| BqError::not_found(format!("Not found: Job {project}:{job_id}")))
    }

    /// Records what the request with `requestId` `request_id` and query configuration
    /// `config` was answered with.
    pub fn remember_request(
        &self,
        project: &str,
        request_id: &str,
        config: &Value,
        answer: RequestAnswer,
    ) {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                (project.to_string(), request_id.to_string()),
                (config.clone(), answer),
            );
    }

    /// The answer to an earlier request with this `requestId` and the same query
    /// configuration, if any (a request that differs in its query is not a duplicate).
    pub fn by_request(
        &self,
        project: &str,
        request_id: &str,
        config: &Value,
    ) -> Option<RequestAnswer> {
        let g = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        g.get(&(project.to_string(), request_id.to_string()))
            .filter(|(c, _)| c == config)
            .map(|(_, a)| a.clone())
    }

    /// A project's jobs, newest first.
    pub fn list(&self, project: &str) -> Vec<Arc<Job>> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1.iter()
            .rev()
            .filter(|j| j.project == project)
            .cloned()
            .collect()
    }

    /// The job whose anonymous destination table is `project:dataset.table`, if any.
    pub fn by_destination(&self, project: &str, dataset: &str, table: &str) -> Option<Arc<Job>> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1.iter()
            .rev()
            .find(|j| {
                j.project == project && j.destination.0 == dataset && j.destination.1 == table
            })
            .cloned()
    }

    /// Deletes a job's metadata.
    pub fn delete(&self, project: &str, job_id: &str) -> Result<(), BqError> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let key = (project.to_string(), job_id.to_string());
        if g.0.remove(&key).is_none() {
            return Err(BqError::not_found(format!(
                "Not found: Job {project}:{job_id}"
            )));
        }
        g.1.retain(|j| !(j.project == project && j.job_id == job_id));
        Ok(())
    }
}

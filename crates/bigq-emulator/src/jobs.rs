//! The job store: query jobs, their state and their results.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::catalog::{CommitGate, now_millis};
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
    /// When the job or its result was last looked at, ms: the least recently used results
    /// go first when memory runs short.
    last_used: AtomicI64,
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
    /// The statement's change is in the catalog: the job can no longer be stopped, it is
    /// done as soon as its answer is made.
    pub committed: bool,
    /// The result's rows were dropped to keep within the memory budget or their time to
    /// live: the job still answers `jobs.get`, its rows are gone as expired results are.
    pub expired: bool,
    /// The memory budget (bytes) the rows were dropped to keep within, when that was why.
    pub expired_for_budget: Option<usize>,
    /// Bytes the result's rows take (0 once expired).
    pub result_bytes: usize,
    /// What a load, extract or copy job moved.
    pub transfer: Option<TransferStats>,
}

/// What a load, extract or copy job moved: `statistics.load`, `statistics.extract` or
/// `statistics.copy`, and the bad records a load skipped or gave up on (`status.errors`).
#[derive(Debug, Clone, Default)]
pub struct TransferStats {
    /// `inputFiles`: the files read.
    pub input_files: u64,
    /// `inputFileBytes`: their bytes.
    pub input_file_bytes: u64,
    /// `outputRows`: the rows written to the table (load) or files (extract), or copied.
    pub output_rows: u64,
    /// `outputBytes`: the bytes written.
    pub output_bytes: u64,
    /// `badRecords`: the records a load skipped.
    pub bad_records: u64,
    /// `destinationUriFileCounts`: the files an extract wrote for each destination URI.
    pub destination_uri_file_counts: Vec<u64>,
    /// The `errors[]` entries of the bad records.
    pub errors: Vec<Value>,
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
        s.result_bytes = match &result {
            Ok(out) => crate::memory::batches_bytes(&out.batches),
            Err(_) => 0,
        };
        s.result = Some(result);
        drop(s);
        self.done.send_replace(true);
    }

    /// Stops the job with `error` (a cancel, a timeout) unless it is done or its change is
    /// already committed; returns whether it stopped it.
    pub fn stop(&self, error: BqError) -> bool {
        // Decided and recorded under one lock, so no commit can slip in between.
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.result.is_some() || s.committed {
            return false;
        }
        let now = now_millis();
        s.start_time.get_or_insert(now);
        s.end_time = Some(now);
        s.result = Some(Err(error));
        drop(s);
        self.done.send_replace(true);
        true
    }

    /// Records what a load, extract or copy job moved (before it finishes).
    pub fn set_transfer(&self, stats: TransferStats) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .transfer = Some(stats);
    }

    /// Marks the job used now.
    pub fn touch(&self) {
        self.last_used.store(now_millis(), Ordering::Relaxed);
    }

    /// Drops the result's rows (keeping its schema and statistics), to keep within
    /// `budget` bytes when that is why; the bytes freed.
    fn expire_result(&self, budget: Option<usize>) -> usize {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(Ok(out)) = &s.result else {
            return 0;
        };
        if s.expired {
            return 0;
        }
        let mut husk = (**out).clone();
        husk.batches = Vec::new();
        s.result = Some(Ok(Arc::new(husk)));
        s.expired = true;
        s.expired_for_budget = budget;
        std::mem::take(&mut s.result_bytes)
    }

    /// BigQuery's answer for a result that is gone: its destination table is not found.
    /// When the memory budget was why, the message says so (BigQuery would still hold it).
    pub fn expired_error(&self) -> BqError {
        let mut msg = format!(
            "Not found: Table {}:{}.{} was not found in location {}",
            self.project, self.destination.0, self.destination.1, self.location
        );
        if let Some(budget) = self.state().expired_for_budget {
            msg.push_str(&format!(
                " (bigq-emulator dropped the rows of this query result to stay within its \
                 memory budget, {} MiB of which were left for query results; raise it with \
                 --memory-budget-mb)",
                budget.div_ceil(1 << 20)
            ));
        }
        BqError::not_found(msg)
    }

    /// Waits until the job is done (finished, cancelled or timed out).
    pub async fn stopped(&self) {
        let mut rx = self.done.subscribe();
        let _ = rx.wait_for(|d| *d).await;
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

/// The commit gate of a running job: a commit goes through only while the job runs (not
/// cancelled, not timed out), decided under the job's lock so a cancel comes either before
/// the commit (nothing changed) or after it (the job reports done).
#[derive(Debug)]
pub struct JobGate {
    /// The job.
    pub job: Arc<Job>,
    /// A script commits once per statement and may still be stopped between them; a single
    /// statement's commit is its last act.
    pub script: bool,
}

impl CommitGate for JobGate {
    fn commit(&self, commit: &mut dyn FnMut() -> Result<(), BqError>) -> Result<(), BqError> {
        let mut s = self.job.state.lock().unwrap_or_else(|e| e.into_inner());
        match &s.result {
            Some(Err(e)) => return Err(e.clone()),
            Some(Ok(_)) => return Err(BqError::internal("the job has already finished")),
            None => {}
        }
        commit()?;
        if !self.script {
            s.committed = true;
        }
        Ok(())
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
            last_used: AtomicI64::new(now_millis()),
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
        let job =
            g.0.get(&(project.to_string(), job_id.to_string()))
                .cloned()
                .ok_or_else(|| BqError::not_found(format!("Not found: Job {project}:{job_id}")))?;
        job.touch();
        Ok(job)
    }

    /// Bytes the rows of job results hold.
    pub fn result_bytes(&self) -> usize {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1.iter().map(|j| j.state().result_bytes).sum()
    }

    /// Expires results until their rows take at most `limit` bytes, least recently used
    /// first, and those finished more than `ttl` ago whatever their size. Then forgets
    /// the oldest finished jobs beyond `max_jobs`, and `requestId`s older than
    /// `request_ttl`.
    pub fn trim(&self, limit: usize, ttl: Duration, max_jobs: usize, request_ttl: Duration) {
        let now = now_millis();
        let ttl_ms = ttl.as_millis() as i64;
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut held: Vec<(i64, usize, Arc<Job>)> = Vec::new();
        let mut total = 0;
        for j in &g.1 {
            let st = j.state();
            if st.result_bytes == 0 {
                continue;
            }
            if st.end_time.is_some_and(|e| now - e > ttl_ms) {
                j.expire_result(None);
                continue;
            }
            total += st.result_bytes;
            held.push((
                j.last_used.load(Ordering::Relaxed),
                st.result_bytes,
                j.clone(),
            ));
        }
        if total > limit {
            held.sort_by_key(|(used, _, _)| *used);
            for (_, _, j) in held {
                if total <= limit {
                    break;
                }
                total -= j.expire_result(Some(limit));
            }
        }
        if g.1.len() > max_jobs {
            let mut excess = g.1.len() - max_jobs;
            let mut gone = Vec::new();
            g.1.retain(|j| {
                if excess > 0 && j.state().result.is_some() {
                    excess -= 1;
                    gone.push((j.project.clone(), j.job_id.clone()));
                    return false;
                }
                true
            });
            for k in gone {
                g.0.remove(&k);
            }
        }
        drop(g);
        let request_ms = request_ttl.as_millis() as i64;
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, (_, a)| match a {
                RequestAnswer::Job(j) => now - j.creation_time <= request_ms,
                RequestAnswer::Jobless(_, (created, _, _)) => now - *created <= request_ms,
            });
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

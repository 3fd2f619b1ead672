//! The v2 operations over REST: JSON bodies, query results decoded as they stream in.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use bigq_codec::schema::TableSchema;
use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::Deserialize;

use super::api::V2Api;
use crate::admin::{Dataset, DatasetListItem, Job, ListJobs, Table, TableListItem};
use crate::client::rest::{Idempotent, Request, Rest};
use crate::error::Result;
use crate::ids::{DatasetId, TableId};
use crate::paging::ListPage;
use crate::query::pages::{PageSource, rest_pages};
use crate::query::request::QueryRequest;
use crate::query::response::{JobReference, ResultPage};
use crate::query::rest::{job_body, query_body, read_page};
use reqwest::Method;

/// BigQuery's v2 API over REST.
pub(crate) struct RestApi {
    rest: Arc<Rest>,
}

impl RestApi {
    pub(crate) fn new(rest: Arc<Rest>) -> Self {
        RestApi { rest }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DatasetList {
    #[serde(default)]
    datasets: Vec<DatasetListItem>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TableList {
    #[serde(default)]
    tables: Vec<TableListItem>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobList {
    #[serde(default)]
    jobs: Vec<Job>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
struct CancelResponse {
    job: Job,
}

/// A job's `{projectId}/jobs/{jobId}` request with its location.
fn with_location<'a>(req: Request<'a>, job: &JobReference) -> Request<'a> {
    match &job.location {
        Some(l) => req.query("location", l),
        None => req,
    }
}

impl V2Api for RestApi {
    fn query<'a>(
        &'a self,
        request: &'a QueryRequest,
        request_id: &'a str,
        wait: Duration,
        _rows_unused_if_more: bool,
    ) -> BoxFuture<'a, Result<ResultPage>> {
        async move {
            let body = query_body(request, request_id, wait)?;
            let path = ["projects", request.project.as_str(), "queries"];
            // The request id makes a retried jobs.query safe: BigQuery runs it once.
            let req = Request::post(&path, &body, Idempotent::Yes)?.waiting(wait);
            self.rest.send_then(req, |resp| read_page(resp, None)).await
        }
        .boxed()
    }

    fn insert_query_job<'a>(
        &'a self,
        request: &'a QueryRequest,
        job_id: &'a str,
        destination: Option<&'a TableId>,
    ) -> BoxFuture<'a, Result<Job>> {
        async move {
            let body = job_body(request, job_id, destination)?;
            let path = ["projects", request.project.as_str(), "jobs"];
            // The job id is the caller's: a retried insert fails with `duplicate`.
            self.rest
                .call(Request::post(&path, &body, Idempotent::Yes)?)
                .await
        }
        .boxed()
    }

    fn get_query_results<'a>(
        &'a self,
        job: &'a JobReference,
        page_size: Option<u32>,
        wait: Duration,
    ) -> BoxFuture<'a, Result<ResultPage>> {
        async move {
            let path = [
                "projects",
                job.project_id.as_str(),
                "queries",
                job.job_id.as_str(),
            ];
            let mut req = Request::get(&path)
                .query("formatOptions.useInt64Timestamp", "true")
                .query("timeoutMs", wait.as_millis())
                .waiting(wait);
            req = with_location(req, job);
            if let Some(n) = page_size {
                req = req.query("maxResults", n);
            }
            self.rest.send_then(req, |resp| read_page(resp, None)).await
        }
        .boxed()
    }

    fn result_pages(
        &self,
        job: JobReference,
        page_size: Option<u32>,
        schema: TableSchema,
        page_token: String,
        rows_before: u64,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        let source = PageSource::Query { job, page_size };
        rest_pages(
            self.rest.clone(),
            source,
            schema,
            Some(page_token),
            rows_before,
        )
    }

    fn get_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>> {
        async move {
            let path = [
                "projects",
                job.project_id.as_str(),
                "jobs",
                job.job_id.as_str(),
            ];
            self.rest
                .call(with_location(Request::get(&path), job))
                .await
        }
        .boxed()
    }

    fn cancel_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>> {
        async move {
            let path = [
                "projects",
                job.project_id.as_str(),
                "jobs",
                job.job_id.as_str(),
                "cancel",
            ];
            let req = Request::post(&path, &serde_json::json!({}), Idempotent::Yes)?;
            let resp: CancelResponse = self.rest.call(with_location(req, job)).await?;
            Ok(resp.job)
        }
        .boxed()
    }

    fn list_jobs<'a>(
        &'a self,
        project: &'a str,
        filter: &'a ListJobs,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<Job>>> {
        async move {
            let path = ["projects", project, "jobs"];
            let mut req = Request::get(&path)
                .query("projection", if filter.full { "full" } else { "minimal" });
            for s in &filter.states {
                req = req.query("stateFilter", s.as_str());
            }
            if let Some(t) = filter.min_creation_time {
                req = req.query("minCreationTime", t);
            }
            if let Some(t) = filter.max_creation_time {
                req = req.query("maxCreationTime", t);
            }
            if let Some(p) = &filter.parent_job_id {
                req = req.query("parentJobId", p);
            }
            if filter.all_users {
                req = req.query("allUsers", true);
            }
            if let Some(n) = filter.page_size {
                req = req.query("maxResults", n);
            }
            if let Some(t) = page_token {
                req = req.query("pageToken", t);
            }
            let page: JobList = self.rest.call(req).await?;
            Ok(ListPage::new(page.jobs, page.next_page_token))
        }
        .boxed()
    }

    fn delete_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<()>> {
        async move {
            let path = [
                "projects",
                job.project_id.as_str(),
                "jobs",
                job.job_id.as_str(),
                "delete",
            ];
            self.rest
                .call_empty(with_location(Request::delete(&path), job))
                .await
        }
        .boxed()
    }

    fn patch_dataset(&self, dataset: Dataset) -> BoxFuture<'_, Result<Dataset>> {
        async move {
            let r = dataset.dataset_reference.clone();
            let path = [
                "projects",
                r.project_id.as_str(),
                "datasets",
                r.dataset_id.as_str(),
            ];
            let req = Request::post(&path, &dataset, Idempotent::Yes)?
                .with_method(Method::PATCH)
                .if_match(dataset.etag.clone());
            self.rest.call(req).await
        }
        .boxed()
    }

    fn create_dataset(&self, dataset: Dataset) -> BoxFuture<'_, Result<Dataset>> {
        async move {
            let project = dataset.dataset_reference.project_id.clone();
            let path = ["projects", project.as_str(), "datasets"];
            // Creating the same dataset twice fails with `duplicate`, so a retry is harmless.
            self.rest
                .call(Request::post(&path, &dataset, Idempotent::Yes)?)
                .await
        }
        .boxed()
    }

    fn get_dataset<'a>(&'a self, id: &'a DatasetId) -> BoxFuture<'a, Result<Dataset>> {
        async move {
            let path = ["projects", &id.project, "datasets", &id.dataset];
            self.rest.call(Request::get(&path)).await
        }
        .boxed()
    }

    fn list_datasets<'a>(
        &'a self,
        project: &'a str,
        all: bool,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<DatasetListItem>>> {
        async move {
            let path = ["projects", project, "datasets"];
            let mut req = Request::get(&path);
            if all {
                req = req.query("all", true);
            }
            if let Some(t) = page_token {
                req = req.query("pageToken", t);
            }
            let page: DatasetList = self.rest.call(req).await?;
            Ok(ListPage::new(page.datasets, page.next_page_token))
        }
        .boxed()
    }

    fn delete_dataset<'a>(
        &'a self,
        id: &'a DatasetId,
        delete_contents: bool,
    ) -> BoxFuture<'a, Result<()>> {
        async move {
            let path = ["projects", &id.project, "datasets", &id.dataset];
            let req = Request::delete(&path).query("deleteContents", delete_contents);
            self.rest.call_empty(req).await
        }
        .boxed()
    }

    fn create_table(&self, table: Table) -> BoxFuture<'_, Result<Table>> {
        async move {
            let r = table.table_reference.clone();
            let path = [
                "projects",
                r.project_id.as_str(),
                "datasets",
                r.dataset_id.as_str(),
                "tables",
            ];
            self.rest
                .call(Request::post(&path, &table, Idempotent::Yes)?)
                .await
        }
        .boxed()
    }

    fn patch_table(&self, table: Table, replace: bool) -> BoxFuture<'_, Result<Table>> {
        async move {
            let r = table.table_reference.clone();
            let path = [
                "projects",
                r.project_id.as_str(),
                "datasets",
                r.dataset_id.as_str(),
                "tables",
                r.table_id.as_str(),
            ];
            let method = if replace { Method::PUT } else { Method::PATCH };
            // With an etag a resend cannot overwrite anyone's change: it fails the
            // precondition instead. Without one, a patch of the same fields is idempotent.
            let req = Request::post(&path, &table, Idempotent::Yes)?
                .with_method(method)
                .if_match(table.etag.clone());
            self.rest.call(req).await
        }
        .boxed()
    }

    fn get_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<Table>> {
        async move {
            let path = table_path(id);
            self.rest.call(Request::get(&path)).await
        }
        .boxed()
    }

    fn list_tables<'a>(
        &'a self,
        dataset: &'a DatasetId,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<TableListItem>>> {
        async move {
            let path = [
                "projects",
                dataset.project.as_str(),
                "datasets",
                dataset.dataset.as_str(),
                "tables",
            ];
            let mut req = Request::get(&path);
            if let Some(t) = page_token {
                req = req.query("pageToken", t);
            }
            let page: TableList = self.rest.call(req).await?;
            Ok(ListPage::new(page.tables, page.next_page_token))
        }
        .boxed()
    }

    fn delete_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<()>> {
        async move {
            let path = table_path(id);
            self.rest.call_empty(Request::delete(&path)).await
        }
        .boxed()
    }
}

/// The REST path of a table.
fn table_path(id: &TableId) -> [&str; 6] {
    [
        "projects",
        &id.project,
        "datasets",
        &id.dataset,
        "tables",
        &id.table,
    ]
}

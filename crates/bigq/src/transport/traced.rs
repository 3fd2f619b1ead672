//! A `tracing` span around every admin call of a transport (jobs, datasets, tables):
//! `bigq.admin` with the operation, the transport and BigQuery's ids. Queries have a span
//! of their own around the whole run (`query/builder.rs`), so their calls pass through.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use bigq_codec::schema::TableSchema;
use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use tracing::Instrument;

use super::api::V2Api;
use crate::admin::{Dataset, DatasetListItem, Job, ListJobs, Table, TableListItem};
use crate::error::Result;
use crate::ids::{DatasetId, TableId};
use crate::paging::ListPage;
use crate::query::request::QueryRequest;
use crate::query::response::{JobReference, ResultPage};

/// A transport whose admin calls each run in a `bigq.admin` span.
pub(crate) struct Traced {
    inner: Arc<dyn V2Api>,
    transport: &'static str,
}

impl Traced {
    pub(crate) fn new(inner: Arc<dyn V2Api>, transport: &'static str) -> Self {
        Traced { inner, transport }
    }

    fn span(&self, operation: &'static str, project: &str) -> tracing::Span {
        tracing::info_span!(
            "bigq.admin",
            operation,
            transport = self.transport,
            project,
            dataset = tracing::field::Empty,
            table = tracing::field::Empty,
            job_id = tracing::field::Empty,
            location = tracing::field::Empty,
            items = tracing::field::Empty,
        )
    }

    fn job_span(&self, operation: &'static str, job: &JobReference) -> tracing::Span {
        let span = self.span(operation, &job.project_id);
        span.record("job_id", job.job_id.as_str());
        if let Some(l) = &job.location {
            span.record("location", l.as_str());
        }
        span
    }

    fn table_span(&self, operation: &'static str, id: &TableId) -> tracing::Span {
        let span = self.span(operation, &id.project);
        span.record("dataset", id.dataset.as_str());
        span.record("table", id.table.as_str());
        span
    }

    fn dataset_span(&self, operation: &'static str, id: &DatasetId) -> tracing::Span {
        let span = self.span(operation, &id.project);
        span.record("dataset", id.dataset.as_str());
        span
    }
}

impl V2Api for Traced {
    fn query<'a>(
        &'a self,
        request: &'a QueryRequest,
        request_id: &'a str,
        wait: Duration,
        rows_unused_if_more: bool,
    ) -> BoxFuture<'a, Result<ResultPage>> {
        self.inner
            .query(request, request_id, wait, rows_unused_if_more)
    }

    fn insert_query_job<'a>(
        &'a self,
        request: &'a QueryRequest,
        job_id: &'a str,
        destination: Option<&'a TableId>,
    ) -> BoxFuture<'a, Result<Job>> {
        self.inner.insert_query_job(request, job_id, destination)
    }

    fn get_query_results<'a>(
        &'a self,
        job: &'a JobReference,
        page_size: Option<u32>,
        wait: Duration,
    ) -> BoxFuture<'a, Result<ResultPage>> {
        self.inner.get_query_results(job, page_size, wait)
    }

    fn result_pages(
        &self,
        job: JobReference,
        page_size: Option<u32>,
        schema: TableSchema,
        page_token: String,
        rows_before: u64,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        self.inner
            .result_pages(job, page_size, schema, page_token, rows_before)
    }

    fn get_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>> {
        let span = self.job_span("jobs.get", job);
        self.inner.get_job(job).instrument(span).boxed()
    }

    fn cancel_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>> {
        let span = self.job_span("jobs.cancel", job);
        self.inner.cancel_job(job).instrument(span).boxed()
    }

    fn list_jobs<'a>(
        &'a self,
        project: &'a str,
        filter: &'a ListJobs,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<Job>>> {
        let span = self.span("jobs.list", project);
        let call = self.inner.list_jobs(project, filter, page_token);
        listed(call, span)
    }

    fn delete_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<()>> {
        let span = self.job_span("jobs.delete", job);
        self.inner.delete_job(job).instrument(span).boxed()
    }

    fn create_dataset(&self, dataset: Dataset) -> BoxFuture<'_, Result<Dataset>> {
        let r = &dataset.dataset_reference;
        let span = self.span("datasets.insert", &r.project_id);
        span.record("dataset", r.dataset_id.as_str());
        self.inner.create_dataset(dataset).instrument(span).boxed()
    }

    fn patch_dataset(&self, dataset: Dataset) -> BoxFuture<'_, Result<Dataset>> {
        let r = &dataset.dataset_reference;
        let span = self.span("datasets.patch", &r.project_id);
        span.record("dataset", r.dataset_id.as_str());
        self.inner.patch_dataset(dataset).instrument(span).boxed()
    }

    fn get_dataset<'a>(&'a self, id: &'a DatasetId) -> BoxFuture<'a, Result<Dataset>> {
        let span = self.dataset_span("datasets.get", id);
        self.inner.get_dataset(id).instrument(span).boxed()
    }

    fn list_datasets<'a>(
        &'a self,
        project: &'a str,
        all: bool,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<DatasetListItem>>> {
        let span = self.span("datasets.list", project);
        listed(self.inner.list_datasets(project, all, page_token), span)
    }

    fn delete_dataset<'a>(
        &'a self,
        id: &'a DatasetId,
        delete_contents: bool,
    ) -> BoxFuture<'a, Result<()>> {
        let span = self.dataset_span("datasets.delete", id);
        self.inner
            .delete_dataset(id, delete_contents)
            .instrument(span)
            .boxed()
    }

    fn create_table(&self, table: Table) -> BoxFuture<'_, Result<Table>> {
        let r = &table.table_reference;
        let span = self.span("tables.insert", &r.project_id);
        span.record("dataset", r.dataset_id.as_str());
        span.record("table", r.table_id.as_str());
        self.inner.create_table(table).instrument(span).boxed()
    }

    fn patch_table(&self, table: Table, replace: bool) -> BoxFuture<'_, Result<Table>> {
        let r = &table.table_reference;
        let operation = if replace {
            "tables.update"
        } else {
            "tables.patch"
        };
        let span = self.span(operation, &r.project_id);
        span.record("dataset", r.dataset_id.as_str());
        span.record("table", r.table_id.as_str());
        self.inner
            .patch_table(table, replace)
            .instrument(span)
            .boxed()
    }

    fn get_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<Table>> {
        let span = self.table_span("tables.get", id);
        self.inner.get_table(id).instrument(span).boxed()
    }

    fn list_tables<'a>(
        &'a self,
        dataset: &'a DatasetId,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<TableListItem>>> {
        let span = self.dataset_span("tables.list", dataset);
        listed(self.inner.list_tables(dataset, page_token), span)
    }

    fn delete_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<()>> {
        let span = self.table_span("tables.delete", id);
        self.inner.delete_table(id).instrument(span).boxed()
    }
}

/// A list page's call in `span`, with the number of items it returned recorded.
fn listed<'a, T: Send + 'a>(
    call: BoxFuture<'a, Result<ListPage<T>>>,
    span: tracing::Span,
) -> BoxFuture<'a, Result<ListPage<T>>> {
    let record = span.clone();
    call.map(move |page| {
        if let Ok(p) = &page {
            record.record("items", p.items.len());
        }
        page
    })
    .instrument(span)
    .boxed()
}

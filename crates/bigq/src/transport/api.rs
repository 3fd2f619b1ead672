//! The transport choice and the v2 operations each transport implements.

use std::time::Duration;

use arrow_array::RecordBatch;
use bigq_codec::schema::TableSchema;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

use crate::admin::{Dataset, DatasetListItem, Job, ListJobs, Table, TableListItem};
use crate::error::Result;
use crate::ids::{DatasetId, TableId};
use crate::paging::ListPage;
use crate::query::request::QueryRequest;
use crate::query::response::{JobReference, ResultPage};

/// How a [`Client`](crate::Client) reaches BigQuery's v2 API (queries, jobs, datasets,
/// tables); the Storage Read and Write APIs are gRPC either way.
///
/// The API above the transport is the same: every query option, polling, paging, large
/// results through Storage Read, the admin calls. The transport is chosen once, when the
/// client is built ([`ClientBuilder::with_transport`](crate::ClientBuilder::with_transport)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// REST v2 (`jobs.query`, ...), with results decoded from JSON in one streaming pass.
    #[default]
    Rest,
    /// The v2 gRPC services (`google.cloud.bigquery.v2.JobService`, ...): the first page of
    /// a query's result comes as Arrow (LZ4-compressed buffers), decoded like Storage Read.
    /// Later pages (`GetQueryResults`) have no Arrow form in the API; by default they are
    /// read through Storage Read, and otherwise decoded from their struct encoding.
    /// `tabledata.list` and `tabledata.insertAll` have no gRPC form and stay on REST.
    Grpc,
}

/// The BigQuery v2 operations a transport carries. Each call is retried by the client's
/// policy inside the transport; the futures are boxed (v2 messages are kilobytes, and a
/// query's call chain would otherwise copy them at every step).
///
/// `tabledata.list` and `tabledata.insertAll` are not here: they have no gRPC form, and the
/// client sends them over REST whatever its transport.
pub(crate) trait V2Api: Send + Sync + 'static {
    /// Starts a query (`jobs.query` / `Query`) and returns its first response, after the
    /// server waited up to `wait` for it to complete. With `rows_unused_if_more`, rows are
    /// not decoded from a first page that has more pages after it (Storage Read will return
    /// them all).
    fn query<'a>(
        &'a self,
        request: &'a QueryRequest,
        request_id: &'a str,
        wait: Duration,
        rows_unused_if_more: bool,
    ) -> BoxFuture<'a, Result<ResultPage>>;

    /// Inserts a query job, writing into `destination` when given (`jobs.insert` /
    /// `InsertJob`).
    fn insert_query_job<'a>(
        &'a self,
        request: &'a QueryRequest,
        job_id: &'a str,
        destination: Option<&'a TableId>,
    ) -> BoxFuture<'a, Result<Job>>;

    /// Polls a query job for up to `wait` (`jobs.getQueryResults` / `GetQueryResults`) and
    /// returns its first page once it is complete.
    fn get_query_results<'a>(
        &'a self,
        job: &'a JobReference,
        page_size: Option<u32>,
        wait: Duration,
    ) -> BoxFuture<'a, Result<ResultPage>>;

    /// The batches of a complete query's pages after `page_token`, rows counted from
    /// `rows_before` in errors; fetched ahead of the consumer on background tasks.
    fn result_pages(
        &self,
        job: JobReference,
        page_size: Option<u32>,
        schema: TableSchema,
        page_token: String,
        rows_before: u64,
    ) -> BoxStream<'static, Result<RecordBatch>>;

    /// `jobs.get` / `GetJob`.
    fn get_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>>;

    /// `jobs.cancel` / `CancelJob`: the job as it is after the request.
    fn cancel_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>>;

    /// One page of `jobs.list` / `ListJobs`.
    fn list_jobs<'a>(
        &'a self,
        project: &'a str,
        filter: &'a ListJobs,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<Job>>>;

    /// `jobs.delete` / `DeleteJob`.
    fn delete_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<()>>;

    /// `datasets.insert` / `InsertDataset`.
    fn create_dataset(&self, dataset: Dataset) -> BoxFuture<'_, Result<Dataset>>;

    /// `datasets.patch` / `PatchDataset`, with the dataset's etag as a precondition when it
    /// has one.
    fn patch_dataset(&self, dataset: Dataset) -> BoxFuture<'_, Result<Dataset>>;

    /// `datasets.get` / `GetDataset`.
    fn get_dataset<'a>(&'a self, id: &'a DatasetId) -> BoxFuture<'a, Result<Dataset>>;

    /// One page of `datasets.list` / `ListDatasets`.
    fn list_datasets<'a>(
        &'a self,
        project: &'a str,
        all: bool,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<DatasetListItem>>>;

    /// `datasets.delete` / `DeleteDataset`.
    fn delete_dataset<'a>(
        &'a self,
        id: &'a DatasetId,
        delete_contents: bool,
    ) -> BoxFuture<'a, Result<()>>;

    /// `tables.insert` / `InsertTable`.
    fn create_table(&self, table: Table) -> BoxFuture<'_, Result<Table>>;

    /// `tables.patch` (or `tables.update` when `replace`) / `PatchTable`, `UpdateTable`, with
    /// the table's etag as a precondition when it has one.
    fn patch_table(&self, table: Table, replace: bool) -> BoxFuture<'_, Result<Table>>;

    /// `tables.get` / `GetTable`.
    fn get_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<Table>>;

    /// One page of `tables.list` / `ListTables`.
    fn list_tables<'a>(
        &'a self,
        dataset: &'a DatasetId,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<TableListItem>>>;

    /// `tables.delete` / `DeleteTable`.
    fn delete_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<()>>;
}

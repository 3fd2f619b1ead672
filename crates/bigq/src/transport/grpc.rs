//! The v2 operations over the BigQuery v2 gRPC services (`JobService`, `DatasetService`,
//! `TableService`): the same resources as REST, converted to and from the v2 messages.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use arrow_array::RecordBatch;
use bigq_codec::schema::TableSchema;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt, TryStreamExt};
use gcloud_sdk::google::cloud::bigquery::v2 as pb;
use pb::dataset_service_client::DatasetServiceClient;
use pb::table_service_client::TableServiceClient;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

use super::api::V2Api;
use crate::admin::proto::{
    dataset_from_proto, dataset_list_item_from_proto, dataset_to_proto, job_from_proto,
    job_list_item_from_proto, table_from_proto, table_list_item_from_proto, table_to_proto,
};
use crate::admin::{Dataset, DatasetListItem, Job, ListJobs, Table, TableListItem};
use crate::client::grpc::Grpc;
use crate::client::grpc::non_empty;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{DatasetId, TableId};
use crate::paging::{ListPage, Paged, Pages};
use crate::query::grpc::{
    GET_QUERY_RESULTS, QUERY, WithRows, invalid_query, job_proto, jobs, query_proto,
    query_response_page, results_page, results_request, with_rows,
};
use crate::query::request::QueryRequest;
use crate::query::response::{JobReference, ResultPage};

/// BigQuery's v2 API over its gRPC services.
pub(crate) struct GrpcApi {
    v2: Arc<Grpc>,
}

impl GrpcApi {
    pub(crate) fn new(v2: Arc<Grpc>) -> Self {
        GrpcApi { v2 }
    }
}

fn datasets(channel: Channel) -> DatasetServiceClient<Channel> {
    DatasetServiceClient::new(channel)
}

fn tables(channel: Channel) -> TableServiceClient<Channel> {
    TableServiceClient::new(channel)
}

/// A `GetQueryResults` response as it arrives, its rows not yet decoded.
type RawResults = Box<WithRows<pb::GetQueryResultsResponse>>;

/// A page of a result: the next page's token, and its rows being decoded on a task of
/// their own, started as soon as the response arrived.
struct Decoding {
    next_page_token: Option<String>,
    page: JoinHandle<Result<ResultPage>>,
}

impl Paged for Decoding {
    fn next_page_token(&self) -> Option<String> {
        self.next_page_token.clone()
    }
}

/// One `GetQueryResults` call: polls for up to `wait` and returns the page after
/// `page_token` (the first when `None`).
async fn raw_results(
    v2: &Grpc,
    job: &JobReference,
    page_token: Option<&str>,
    page_size: Option<u32>,
    wait: Option<Duration>,
) -> Result<RawResults> {
    let request = Arc::new(results_request(job, page_token, page_size, wait));
    v2.v2_unary_waiting(
        "GetQueryResults",
        &job.project_id,
        wait.unwrap_or_default(),
        request,
        |ch, req| async move { with_rows(ch, req, GET_QUERY_RESULTS).await },
    )
    .await
}

impl V2Api for GrpcApi {
    fn query<'a>(
        &'a self,
        request: &'a QueryRequest,
        request_id: &'a str,
        wait: Duration,
        rows_unused_if_more: bool,
    ) -> BoxFuture<'a, Result<ResultPage>> {
        async move {
            // The request id makes a retried call safe: BigQuery runs the query once.
            let message = Arc::new(query_proto(request, request_id, wait)?);
            let resp = self
                .v2
                .v2_unary_waiting(
                    "Query",
                    &request.project,
                    wait,
                    message,
                    |ch, req| async move { with_rows(ch, req, QUERY).await },
                )
                .await
                .map_err(invalid_query)?;
            query_response_page(*resp, rows_unused_if_more)
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
            let message = job_proto(request, job_id, destination)?;
            let job = self
                .v2
                .v2_unary(
                    "InsertJob",
                    &request.project,
                    message,
                    |ch, req| async move { jobs(ch).insert_job(req).await },
                )
                .await?;
            Ok(job_from_proto(job))
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
            let raw = raw_results(&self.v2, job, None, page_size, Some(wait)).await?;
            results_page(*raw, 0)
        }
        .boxed()
    }

    /// `GetQueryResults` pages, each requested as soon as the page before it arrives and
    /// decoded on a task of its own as soon as it arrives, while the consumer works through
    /// the batches before.
    fn result_pages(
        &self,
        job: JobReference,
        page_size: Option<u32>,
        _schema: TableSchema,
        page_token: String,
        rows_before: u64,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        let v2 = self.v2.clone();
        // Rows before each page, for errors: pages are fetched one after another, so each
        // fetch adds its rows before the next one starts.
        let rows = Arc::new(AtomicU64::new(rows_before));
        let pages = Pages::read_ahead(Some(page_token), move |token| {
            let (v2, job, rows) = (v2.clone(), job.clone(), rows.clone());
            async move {
                let raw = raw_results(&v2, &job, token.as_deref(), page_size, None).await?;
                let before = rows.fetch_add(raw.rows as u64, Ordering::SeqCst);
                Ok(Decoding {
                    next_page_token: non_empty(raw.message.page_token.clone()),
                    page: tokio::spawn(async move { results_page(*raw, before) }),
                })
            }
        });
        pages
            .and_then(|decoding| async move {
                decoding.page.await.map_err(|e| {
                    Error::new(ErrorKind::Decode, format!("decoding a page failed: {e}"))
                })?
            })
            .map_ok(|page| futures::stream::iter(page.batches.into_iter().map(Ok)))
            .try_flatten()
            .boxed()
    }

    fn get_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>> {
        async move {
            let request = pb::GetJobRequest {
                project_id: job.project_id.clone(),
                job_id: job.job_id.clone(),
                location: job.location.clone().unwrap_or_default(),
            };
            let found = self
                .v2
                .v2_unary("GetJob", &job.project_id, request, |ch, req| async move {
                    jobs(ch).get_job(req).await
                })
                .await?;
            Ok(job_from_proto(found))
        }
        .boxed()
    }

    fn cancel_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<Job>> {
        async move {
            let request = pb::CancelJobRequest {
                project_id: job.project_id.clone(),
                job_id: job.job_id.clone(),
                location: job.location.clone().unwrap_or_default(),
            };
            let resp = self
                .v2
                .v2_unary(
                    "CancelJob",
                    &job.project_id,
                    request,
                    |ch, req| async move { jobs(ch).cancel_job(req).await },
                )
                .await?;
            let job = resp.job.ok_or_else(|| {
                Error::new(
                    ErrorKind::Decode,
                    "BigQuery answered CancelJob without the job",
                )
            })?;
            Ok(job_from_proto(job))
        }
        .boxed()
    }

    fn list_jobs<'a>(
        &'a self,
        project: &'a str,
        filter: &'a ListJobs,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<Job>>> {
        use crate::admin::JobState;
        use pb::list_jobs_request::{Projection, StateFilter};
        async move {
            let request = pb::ListJobsRequest {
                project_id: project.to_string(),
                all_users: filter.all_users,
                max_results: filter.page_size.map(|n| n.min(i32::MAX as u32) as i32),
                min_creation_time: filter.min_creation_time.unwrap_or(0),
                max_creation_time: filter.max_creation_time,
                page_token: page_token.unwrap_or_default(),
                projection: if filter.full {
                    Projection::Full
                } else {
                    Projection::Minimal
                }
                .into(),
                state_filter: filter
                    .states
                    .iter()
                    .map(|s| {
                        match s {
                            JobState::Pending => StateFilter::Pending,
                            JobState::Running => StateFilter::Running,
                            JobState::Done => StateFilter::Done,
                        }
                        .into()
                    })
                    .collect(),
                parent_job_id: filter.parent_job_id.clone().unwrap_or_default(),
            };
            let list = self
                .v2
                .v2_unary("ListJobs", project, request, |ch, req| async move {
                    jobs(ch).list_jobs(req).await
                })
                .await?;
            Ok(ListPage::new(
                list.jobs
                    .into_iter()
                    .map(job_list_item_from_proto)
                    .collect(),
                non_empty(list.next_page_token),
            ))
        }
        .boxed()
    }

    fn patch_dataset(&self, _dataset: Dataset) -> BoxFuture<'_, Result<Dataset>> {
        async move {
            Err(Error::config(
                "patching a dataset over the gRPC transport is not supported yet: use Transport::Rest",
            ))
        }
        .boxed()
    }

    fn delete_job<'a>(&'a self, job: &'a JobReference) -> BoxFuture<'a, Result<()>> {
        async move {
            let request = pb::DeleteJobRequest {
                project_id: job.project_id.clone(),
                job_id: job.job_id.clone(),
                location: job.location.clone().unwrap_or_default(),
            };
            self.v2
                .v2_unary(
                    "DeleteJob",
                    &job.project_id,
                    request,
                    |ch, req| async move { jobs(ch).delete_job(req).await },
                )
                .await?;
            Ok(())
        }
        .boxed()
    }

    fn create_dataset(&self, dataset: Dataset) -> BoxFuture<'_, Result<Dataset>> {
        async move {
            if let Some(name) = crate::admin::proto::dataset_option_not_carried(&dataset) {
                return Err(Error::config(format!(
                    "the dataset option `{name}` is not carried over the gRPC transport yet: use Transport::Rest"
                )));
            }
            let project = dataset.dataset_reference.project_id.clone();
            let request = pb::InsertDatasetRequest {
                project_id: project.clone(),
                dataset: Some(dataset_to_proto(dataset)),
                ..Default::default()
            };
            // Creating the same dataset twice fails with ALREADY_EXISTS, so a retry is
            // harmless.
            let created = self
                .v2
                .v2_unary("InsertDataset", &project, request, |ch, req| async move {
                    datasets(ch).insert_dataset(req).await
                })
                .await?;
            Ok(dataset_from_proto(created))
        }
        .boxed()
    }

    fn get_dataset<'a>(&'a self, id: &'a DatasetId) -> BoxFuture<'a, Result<Dataset>> {
        async move {
            let request = pb::GetDatasetRequest {
                project_id: id.project.clone(),
                dataset_id: id.dataset.clone(),
                ..Default::default()
            };
            let found = self
                .v2
                .v2_unary("GetDataset", &id.project, request, |ch, req| async move {
                    datasets(ch).get_dataset(req).await
                })
                .await?;
            Ok(dataset_from_proto(found))
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
            let request = pb::ListDatasetsRequest {
                project_id: project.to_string(),
                page_token: page_token.unwrap_or_default(),
                all,
                ..Default::default()
            };
            let list = self
                .v2
                .v2_unary("ListDatasets", project, request, |ch, req| async move {
                    datasets(ch).list_datasets(req).await
                })
                .await?;
            let items = list.datasets.into_iter().map(dataset_list_item_from_proto);
            Ok(ListPage::new(items.collect(), Some(list.next_page_token)))
        }
        .boxed()
    }

    fn delete_dataset<'a>(
        &'a self,
        id: &'a DatasetId,
        delete_contents: bool,
    ) -> BoxFuture<'a, Result<()>> {
        async move {
            let request = pb::DeleteDatasetRequest {
                project_id: id.project.clone(),
                dataset_id: id.dataset.clone(),
                delete_contents,
            };
            self.v2
                .v2_unary(
                    "DeleteDataset",
                    &id.project,
                    request,
                    |ch, req| async move { datasets(ch).delete_dataset(req).await },
                )
                .await
        }
        .boxed()
    }

    fn create_table(&self, table: Table) -> BoxFuture<'_, Result<Table>> {
        async move {
            refuse_options(&table)?;
            let r = table.table_reference.clone();
            let request = pb::InsertTableRequest {
                project_id: r.project_id.clone(),
                dataset_id: r.dataset_id.clone(),
                table: Some(table_to_proto(table)),
            };
            let created = self
                .v2
                .v2_unary(
                    "InsertTable",
                    &r.project_id,
                    request,
                    |ch, req| async move { tables(ch).insert_table(req).await },
                )
                .await?;
            Ok(table_from_proto(created))
        }
        .boxed()
    }

    fn patch_table(&self, table: Table, _replace: bool) -> BoxFuture<'_, Result<Table>> {
        async move {
            refuse_options(&table)?;
            Err(Error::config(
                "patching a table over the gRPC transport is not supported yet: use Transport::Rest",
            ))
        }
        .boxed()
    }

    fn get_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<Table>> {
        async move {
            let request = pb::GetTableRequest {
                project_id: id.project.clone(),
                dataset_id: id.dataset.clone(),
                table_id: id.table.clone(),
                ..Default::default()
            };
            let found = self
                .v2
                .v2_unary("GetTable", &id.project, request, |ch, req| async move {
                    tables(ch).get_table(req).await
                })
                .await?;
            Ok(table_from_proto(found))
        }
        .boxed()
    }

    fn list_tables<'a>(
        &'a self,
        dataset: &'a DatasetId,
        page_token: Option<String>,
    ) -> BoxFuture<'a, Result<ListPage<TableListItem>>> {
        async move {
            let request = pb::ListTablesRequest {
                project_id: dataset.project.clone(),
                dataset_id: dataset.dataset.clone(),
                page_token: page_token.unwrap_or_default(),
                max_results: None,
            };
            let list = self
                .v2
                .v2_unary(
                    "ListTables",
                    &dataset.project,
                    request,
                    |ch, req| async move { tables(ch).list_tables(req).await },
                )
                .await?;
            let items = list.tables.into_iter().map(table_list_item_from_proto);
            Ok(ListPage::new(items.collect(), Some(list.next_page_token)))
        }
        .boxed()
    }

    fn delete_table<'a>(&'a self, id: &'a TableId) -> BoxFuture<'a, Result<()>> {
        async move {
            let request = pb::DeleteTableRequest {
                project_id: id.project.clone(),
                dataset_id: id.dataset.clone(),
                table_id: id.table.clone(),
            };
            self.v2
                .v2_unary("DeleteTable", &id.project, request, |ch, req| async move {
                    tables(ch).delete_table(req).await
                })
                .await
        }
        .boxed()
    }
}

/// Refuses a table whose options the v2 `Table` message conversion would drop.
fn refuse_options(table: &Table) -> Result<()> {
    match crate::admin::proto::option_not_carried(table) {
        Some(name) => Err(Error::config(format!(
            "the table option `{name}` is not carried over the gRPC transport yet: use Transport::Rest"
        ))),
        None => Ok(()),
    }
}

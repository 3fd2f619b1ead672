//! Paging through row results (`jobs.getQueryResults`, `tabledata.list`) as a stream of
//! Arrow batches, decoding each body as it arrives and fetching the next page while the
//! current one is decoded.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bigq_codec::json::ResponseDecoder;
use bigq_codec::schema::TableSchema;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::JobReference;
use crate::client::rest::{Request, transport_error};
use crate::client::{Client, Transport};
use crate::error::{Error, ErrorKind, Result};

/// Where the pages come from.
#[derive(Debug, Clone)]
pub(crate) enum PageSource {
    /// `jobs.getQueryResults` of a job.
    Query {
        job: JobReference,
        page_size: Option<u32>,
    },
    /// `tabledata.list` of a table.
    Table {
        project: String,
        dataset: String,
        table: String,
        page_size: Option<u32>,
        selected_fields: Option<String>,
        start_index: Option<u64>,
    },
}

impl PageSource {
    async fn fetch(&self, client: &Client, token: Option<&str>) -> Result<reqwest::Response> {
        match self {
            PageSource::Query { job, page_size } => {
                let path = [
                    "projects",
                    job.project_id.as_str(),
                    "queries",
                    job.job_id.as_str(),
                ];
                let mut req = Request::get(&path).query("formatOptions.useInt64Timestamp", "true");
                if let Some(l) = &job.location {
                    req = req.query("location", l);
                }
                if let Some(n) = page_size {
                    req = req.query("maxResults", n);
                }
                if let Some(t) = token {
                    req = req.query("pageToken", t);
                }
                client.send(req).await
            }
            PageSource::Table {
                project,
                dataset,
                table,
                page_size,
                selected_fields,
                start_index,
            } => {
                let path = [
                    "projects",
                    project.as_str(),
                    "datasets",
                    dataset.as_str(),
                    "tables",
                    table.as_str(),
                    "data",
                ];
                let mut req = Request::get(&path).query("formatOptions.useInt64Timestamp", "true");
                if let Some(n) = page_size {
                    req = req.query("maxResults", n);
                }
                if let Some(f) = selected_fields {
                    req = req.query("selectedFields", f);
                }
                match token {
                    Some(t) => req = req.query("pageToken", t),
                    None => {
                        if let Some(i) = start_index {
                            req = req.query("startIndex", i);
                        }
                    }
                }
                client.send(req).await
            }
        }
    }
}

/// A stream of Arrow record batches.
///
/// Pages are fetched and decoded on a background task, one page ahead of the consumer, and
/// handed over through a bounded channel: memory holds at most a few batches however large
/// the result. Dropping the stream stops the task.
pub struct BatchStream {
    schema: SchemaRef,
    buffered: VecDeque<RecordBatch>,
    rx: Option<mpsc::Receiver<Result<RecordBatch>>>,
    task: Option<JoinHandle<()>>,
    /// Batches from a Storage Read of a query's destination table, instead of REST pages.
    other: Option<BoxStream<'static, Result<RecordBatch>>>,
}

impl std::fmt::Debug for BatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStream")
            .field("buffered", &self.buffered.len())
            .field("storage_read", &self.is_storage_read())
            .finish_non_exhaustive()
    }
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

impl BatchStream {
    /// A stream over `first` (batches already in memory), then the pages of `source` after
    /// `next_token` (rows counted from `rows_before` in errors).
    pub(crate) fn after_first_page(
        client: Client,
        source: Option<PageSource>,
        schemas: (TableSchema, SchemaRef),
        first: Vec<RecordBatch>,
        next_token: Option<String>,
        rows_before: u64,
    ) -> Self {
        let (schema, arrow_schema) = schemas;
        let (rx, task) = match (source, next_token) {
            (Some(src), Some(token)) => Self::spawn(client, src, schema, Some(token), rows_before),
            _ => (None, None),
        };
        BatchStream {
            schema: arrow_schema,
            buffered: first.into(),
            rx,
            task,
            other: None,
        }
    }

    /// A stream with no batches.
    pub(crate) fn empty(schema: SchemaRef) -> Self {
        BatchStream {
            schema,
            buffered: VecDeque::new(),
            rx: None,
            task: None,
            other: None,
        }
    }

    /// The batches of a Storage Read.
    pub(crate) fn storage_read(
        schema: SchemaRef,
        batches: BoxStream<'static, Result<RecordBatch>>,
    ) -> Self {
        BatchStream {
            schema,
            buffered: VecDeque::new(),
            rx: None,
            task: None,
            other: Some(batches),
        }
    }

    /// The next batch if it is already in memory.
    pub(crate) fn pop_buffered(&mut self) -> Option<RecordBatch> {
        self.buffered.pop_front()
    }

    /// Whether the batches come through the Storage Read API rather than REST pages.
    pub fn is_storage_read(&self) -> bool {
        self.other.is_some()
    }

    /// A stream over every page of `source`.
    pub(crate) fn all_pages(
        client: Client,
        source: PageSource,
        schema: TableSchema,
        arrow_schema: SchemaRef,
    ) -> Self {
        let (rx, task) = Self::spawn(client, source, schema, None, 0);
        BatchStream {
            schema: arrow_schema,
            buffered: VecDeque::new(),
            rx,
            task,
            other: None,
        }
    }

    #[allow(clippy::type_complexity)]
    fn spawn(
        client: Client,
        source: PageSource,
        schema: TableSchema,
        token: Option<String>,
        rows_before: u64,
    ) -> (
        Option<mpsc::Receiver<Result<RecordBatch>>>,
        Option<JoinHandle<()>>,
    ) {
        let (tx, rx) = mpsc::channel(4);
        let task = match source {
            PageSource::Query { job, page_size } if client.inner.transport == Transport::Grpc => {
                tokio::spawn(pump_grpc(client, job, page_size, token, rows_before, tx))
            }
            source => tokio::spawn(pump(client, source, schema, token, rows_before, tx)),
        };
        (Some(rx), Some(task))
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Collects every batch.
    pub async fn try_collect(mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next().await {
            out.push(b?);
        }
        Ok(out)
    }
}

impl Stream for BatchStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(b) = self.buffered.pop_front() {
            return Poll::Ready(Some(Ok(b)));
        }
        if let Some(rx) = self.rx.as_mut() {
            return rx.poll_recv(cx);
        }
        match self.other.as_mut() {
            Some(s) => s.as_mut().poll_next(cx),
            None => Poll::Ready(None),
        }
    }
}

/// Fetches and decodes pages, sending batches to `tx` until the last page or an error.
async fn pump(
    client: Client,
    source: PageSource,
    schema: TableSchema,
    token: Option<String>,
    mut rows_before: u64,
    tx: mpsc::Sender<Result<RecordBatch>>,
) {
    let spawn_fetch = |token: Option<String>| {
        let client = client.clone();
        let source = source.clone();
        tokio::spawn(async move { source.fetch(&client, token.as_deref()).await })
    };
    let mut next = Some(spawn_fetch(token.clone()));
    let mut current_token = token;
    let mut retries = 0u32;
    while let Some(handle) = next.take() {
        let resp = match handle.await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
            Err(e) => {
                let _ = tx
                    .send(Err(Error::new(
                        ErrorKind::Transport,
                        format!("page task failed: {e}"),
                    )))
                    .await;
                return;
            }
        };
        match decode_page(resp, &schema, rows_before, &tx, &mut next, &spawn_fetch).await {
            Ok(PageEnd::Done { rows, token }) => {
                rows_before += rows;
                retries = 0;
                current_token = token;
                if next.is_none()
                    && let Some(t) = &current_token
                {
                    next = Some(spawn_fetch(Some(t.clone())));
                }
            }
            Ok(PageEnd::ConsumerGone) => {
                if let Some(n) = next {
                    n.abort();
                }
                return;
            }
            Err((e, sent)) => {
                // A page cut mid-body is fetched again; rows already sent are skipped.
                if e.is_retryable() && sent == 0 && retries + 1 < client.inner.retry.max_attempts {
                    retries += 1;
                    if let Some(n) = next.take() {
                        n.abort();
                    }
                    tokio::time::sleep(client.inner.retry.backoff(retries)).await;
                    next = Some(spawn_fetch(current_token.clone()));
                    continue;
                }
                let _ = tx.send(Err(e)).await;
                return;
            }
        }
    }
}

/// `GetQueryResults` pages of `job` over gRPC, sending batches to `tx` until the last page
/// or an error; the next page is requested as soon as a response names it, while this one
/// is decoded. (Each call is retried by the client's policy; a response arrives whole.)
async fn pump_grpc(
    client: Client,
    job: JobReference,
    page_size: Option<u32>,
    token: Option<String>,
    mut rows_before: u64,
    tx: mpsc::Sender<Result<RecordBatch>>,
) {
    let fetch = |token: Option<String>| {
        let (client, job) = (client.clone(), job.clone());
        tokio::spawn(async move {
            client
                .grpc_query_results(&job, token.as_deref(), page_size, None)
                .await
        })
    };
    let mut next = Some(fetch(token));
    'pages: while let Some(handle) = next.take() {
        let page = match handle.await {
            Ok(Ok(resp)) => {
                let token = Some(&resp.message.page_token)
                    .filter(|t| !t.is_empty())
                    .cloned();
                next = token.map(|t| fetch(Some(t)));
                super::grpc::results_page(*resp, rows_before)
            }
            Ok(Err(e)) => Err(e),
            Err(e) => Err(Error::new(
                ErrorKind::Transport,
                format!("page task failed: {e}"),
            )),
        };
        let batches = match page {
            Ok(page) => page.batches,
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                break 'pages;
            }
        };
        for b in batches {
            rows_before += b.num_rows() as u64;
            if tx.send(Ok(b)).await.is_err() {
                break 'pages;
            }
        }
    }
    if let Some(n) = next {
        n.abort();
    }
}

enum PageEnd {
    Done { rows: u64, token: Option<String> },
    ConsumerGone,
}

async fn decode_page(
    resp: reqwest::Response,
    schema: &TableSchema,
    rows_before: u64,
    tx: &mpsc::Sender<Result<RecordBatch>>,
    next: &mut Option<JoinHandle<Result<reqwest::Response>>>,
    spawn_fetch: &impl Fn(Option<String>) -> JoinHandle<Result<reqwest::Response>>,
) -> std::result::Result<PageEnd, (Error, u64)> {
    let mut decoder = ResponseDecoder::new()
        .with_schema(schema.clone())
        .map_err(|e| (Error::from(e), 0))?
        .with_row_offset(rows_before);
    let mut body = resp.bytes_stream();
    let mut sent = 0u64;
    let mut prefetched: Option<String> = None;
    loop {
        let chunk = match body.next().await {
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err((transport_error(e), sent)),
            None => break,
        };
        decoder.decode(&chunk).map_err(|e| (Error::from(e), sent))?;
        if next.is_none()
            && prefetched.is_none()
            && let Some(t) = decoder.metadata().get("pageToken").and_then(|t| t.as_str())
        {
            // The token comes before the rows: start the next page while this one decodes.
            prefetched = Some(t.to_string());
            *next = Some(spawn_fetch(Some(t.to_string())));
        }
        while let Some(b) = decoder.next_batch() {
            sent += b.num_rows() as u64;
            if tx.send(Ok(b)).await.is_err() {
                return Ok(PageEnd::ConsumerGone);
            }
        }
    }
    decoder.finish().map_err(|e| (Error::from(e), sent))?;
    while let Some(b) = decoder.next_batch() {
        sent += b.num_rows() as u64;
        if tx.send(Ok(b)).await.is_err() {
            return Ok(PageEnd::ConsumerGone);
        }
    }
    let has_total_rows = decoder.metadata().contains_key("totalRows");
    let stats = super::QueryStats::from_metadata(decoder.take_metadata()).map_err(|e| (e, sent))?;
    // A page that reports errors instead of a result fails the read.
    if sent == 0 && !has_total_rows {
        stats.check_errors().map_err(|e| (e, 0))?;
    }
    let token = stats.page_token;
    // When the next page was prefetched, `next` holds it and the caller does not fetch again.
    Ok(PageEnd::Done { rows: sent, token })
}

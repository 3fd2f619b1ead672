//! Row results as a stream of Arrow batches ([`BatchStream`]), and the REST pages behind
//! them (`jobs.getQueryResults`, `tabledata.list`): each body decoded as it arrives, the
//! next page fetched while the current one is decoded.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bigq_codec::json::ResponseDecoder;
use bigq_codec::schema::TableSchema;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::response::{JobReference, QueryStats};
use crate::client::rest::{Request, Rest, transport_error};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::TableId;
use crate::retry::Attempts;

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
        table: TableId,
        page_size: Option<u32>,
        selected_fields: Option<String>,
        start_index: Option<u64>,
    },
}

impl PageSource {
    async fn fetch(&self, rest: &Rest, token: Option<&str>) -> Result<reqwest::Response> {
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
                rest.send(req).await
            }
            PageSource::Table {
                table,
                page_size,
                selected_fields,
                start_index,
            } => {
                let path = [
                    "projects",
                    table.project.as_str(),
                    "datasets",
                    table.dataset.as_str(),
                    "tables",
                    table.table.as_str(),
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
                rest.send(req).await
            }
        }
    }
}

/// A stream of Arrow record batches.
///
/// The batches of a result's first response are in memory; the pages after it are fetched
/// and decoded on background tasks, one page ahead of the consumer, and handed over through
/// a bounded channel: memory holds at most a few batches however large the result.
/// Dropping the stream stops the tasks.
pub struct BatchStream {
    schema: SchemaRef,
    buffered: VecDeque<RecordBatch>,
    /// The batches after `buffered`: later pages, or a Storage Read.
    rest: Option<BoxStream<'static, Result<RecordBatch>>>,
    storage_read: bool,
}

impl std::fmt::Debug for BatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStream")
            .field("buffered", &self.buffered.len())
            .field("storage_read", &self.storage_read)
            .finish_non_exhaustive()
    }
}

impl BatchStream {
    /// `first` (batches already in memory), then the batches of `rest`.
    pub(crate) fn new(
        schema: SchemaRef,
        first: Vec<RecordBatch>,
        rest: Option<BoxStream<'static, Result<RecordBatch>>>,
    ) -> Self {
        BatchStream {
            schema,
            buffered: first.into(),
            rest,
            storage_read: false,
        }
    }

    /// A stream with no batches.
    pub(crate) fn empty(schema: SchemaRef) -> Self {
        BatchStream::new(schema, Vec::new(), None)
    }

    /// The batches of a Storage Read.
    pub(crate) fn storage_read(
        schema: SchemaRef,
        batches: BoxStream<'static, Result<RecordBatch>>,
    ) -> Self {
        BatchStream {
            storage_read: true,
            ..BatchStream::new(schema, Vec::new(), Some(batches))
        }
    }

    /// The next batch if it is already in memory.
    pub(crate) fn pop_buffered(&mut self) -> Option<RecordBatch> {
        self.buffered.pop_front()
    }

    /// Whether the batches come through the Storage Read API rather than result pages.
    pub fn is_storage_read(&self) -> bool {
        self.storage_read
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
        match self.rest.as_mut() {
            Some(s) => s.as_mut().poll_next(cx),
            None => Poll::Ready(None),
        }
    }
}

/// The REST pages of `source` after `token` (from the first page when `None`), with rows
/// counted from `rows_before` in errors: fetched and decoded on a background task, each
/// body decoded as it arrives and the next page fetched while it is, and handed over
/// through a bounded channel. Dropping the stream stops the task.
///
/// Not the paginator of [`crate::paging`]: a REST page names its successor partway through
/// its body, before its rows, so the next fetch starts before the page is whole.
pub(crate) fn rest_pages(
    rest: Arc<Rest>,
    source: PageSource,
    schema: TableSchema,
    token: Option<String>,
    rows_before: u64,
) -> BoxStream<'static, Result<RecordBatch>> {
    let (tx, rx) = mpsc::channel(4);
    let task = tokio::spawn(pump(rest, source, schema, token, rows_before, tx));
    Box::pin(Pumped { rx, task })
}

/// The batches a pump task sends; aborts the task when dropped.
struct Pumped {
    rx: mpsc::Receiver<Result<RecordBatch>>,
    task: JoinHandle<()>,
}

impl Stream for Pumped {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for Pumped {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Fetches and decodes pages, sending batches to `tx` until the last page or an error.
///
/// Each fetch is retried by the client's policy. A page whose body breaks before any of its
/// rows were sent is fetched again, under the same policy through the retry driver: its
/// failures in a row are bounded in number and time, and the error given up with says how
/// many attempts were made.
async fn pump(
    rest: Arc<Rest>,
    source: PageSource,
    schema: TableSchema,
    token: Option<String>,
    mut rows_before: u64,
    tx: mpsc::Sender<Result<RecordBatch>>,
) {
    let spawn_fetch = |token: Option<String>| {
        let rest = rest.clone();
        let source = source.clone();
        tokio::spawn(async move { source.fetch(&rest, token.as_deref()).await })
    };
    let mut next = Some(spawn_fetch(token.clone()));
    let mut current_token = token;
    let mut attempts = Attempts::new(rest.retry());
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
                attempts.reset();
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
                // A page cut mid-body before any of its rows went out is fetched again.
                if let Some(wait) = attempts.retry(&e, e.is_retryable() && sent == 0) {
                    tracing::debug!(error = %e, ?wait, "fetching a broken result page again");
                    if let Some(n) = next.take() {
                        n.abort();
                    }
                    tokio::time::sleep(wait).await;
                    next = Some(spawn_fetch(current_token.clone()));
                    continue;
                }
                let _ = tx.send(Err(attempts.give_up(e))).await;
                return;
            }
        }
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
    let stats = QueryStats::from_metadata(decoder.take_metadata()).map_err(|e| (e, sent))?;
    // A page that reports errors instead of a result fails the read.
    if sent == 0 && !has_total_rows {
        stats.check_errors().map_err(|e| (e, 0))?;
    }
    let token = stats.page_token;
    // When the next page was prefetched, `next` holds it and the caller does not fetch again.
    Ok(PageEnd::Done { rows: sent, token })
}

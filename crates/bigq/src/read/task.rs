//! One read stream's task: ReadRows, IPC decoding, optional row decoding, and resuming at
//! the offset already read when the call breaks.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use bigq_codec::de::RowDecoder;
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{ReadRowsRequest, read_rows_response};
use tokio::sync::mpsc;
use tonic::Status;

use super::wire::{ReadResponse, ReadRowsCodec};
use crate::client::grpc::{Grpc, is_resumable, ready_client, status_error};
use crate::error::{Error, ErrorKind, Result};
use crate::retry::{Attempts, Failure, RetryPolicy};
use bigq_codec::ipc::IpcDecoder;

/// The responses of one ReadRows call.
pub(crate) type Responses = BoxStream<'static, std::result::Result<ReadResponse, Status>>;

/// Opens ReadRows on a stream at a row offset. The seam between the task and the network,
/// so the resume logic can be tested with a fake server.
pub(crate) trait RowsSource: Send + 'static {
    fn open(
        &mut self,
        stream: &str,
        offset: i64,
    ) -> BoxFuture<'static, std::result::Result<Responses, Status>>;
}

/// ReadRows over the client's Storage API channel.
pub(crate) struct GrpcRows {
    pub(crate) storage: Arc<Grpc>,
}

impl RowsSource for GrpcRows {
    fn open(
        &mut self,
        stream: &str,
        offset: i64,
    ) -> BoxFuture<'static, std::result::Result<Responses, Status>> {
        let storage = self.storage.clone();
        let stream = stream.to_string();
        Box::pin(async move {
            let to_status = |e: Error| Status::unavailable(e.to_string());
            let channel = storage.channel().channel().await.map_err(to_status)?;
            let request = ReadRowsRequest {
                read_stream: stream.clone(),
                offset,
                ..Default::default()
            };
            // A token endpoint that fails transiently is a failure to retry, as Google's
            // clients treat it; credentials that cannot be had at all end the read.
            let request = storage
                .request(request, "read_stream", &stream)
                .await
                .map_err(|e| {
                    if e.is_retryable() {
                        Status::unavailable(e.to_string())
                    } else {
                        Status::unauthenticated(e.to_string())
                    }
                })?;
            let mut rpc = ready_client(channel).await?;
            let path = http::uri::PathAndQuery::from_static(
                "/google.cloud.bigquery.storage.v1.BigQueryRead/ReadRows",
            );
            let responses = rpc
                .server_streaming(request, path, ReadRowsCodec)
                .await?
                .into_inner();
            Ok(responses.boxed())
        })
    }
}

/// What a task sends for each batch: the batch itself, or its rows decoded.
pub(crate) trait BatchSink: Send + 'static {
    type Item: Send + 'static;
    /// Turns a batch whose first row is row `offset` of its stream into an item.
    fn item(&mut self, batch: RecordBatch, offset: u64) -> Result<Self::Item>;
}

/// Sends batches as they are.
pub(crate) struct Batches;

impl BatchSink for Batches {
    type Item = RecordBatch;
    fn item(&mut self, batch: RecordBatch, _offset: u64) -> Result<RecordBatch> {
        Ok(batch)
    }
}

/// Decodes each batch into rows on the stream's own task, with one decoder for the stream
/// (it keeps its per-batch vectors: allocated anew for every batch, with glibc's malloc
/// they made decoding the benchmark's scan rows 16–23% slower).
pub(crate) struct Rows<T>(RowDecoder<T>);

impl<T> Rows<T> {
    pub(crate) fn new() -> Self {
        Rows(RowDecoder::new())
    }
}

impl<T: serde::de::DeserializeOwned + Send + 'static> BatchSink for Rows<T> {
    type Item = Vec<T>;
    fn item(&mut self, batch: RecordBatch, offset: u64) -> Result<Vec<T>> {
        // The decoder numbers the rows it has decoded, which is the offset: the stream's
        // task ends at the first batch that fails.
        debug_assert_eq!(self.0.rows_decoded(), offset);
        let mut rows = Vec::with_capacity(batch.num_rows());
        self.0.decode_into(&batch, &mut rows)?;
        Ok(rows)
    }
}

/// Reads one stream to its end into `tx`, resuming after resumable failures.
///
/// The offset sent when reopening is the number of rows already delivered, so no row is
/// lost or delivered twice. Failures in a row without progress are bounded by `policy`
/// through the retry driver (attempts, and time since the last row arrived), with the wait
/// a RetryInfo asks for honoured. Ends quietly when the receiver is gone.
pub(crate) async fn read_stream<S: BatchSink>(
    mut source: impl RowsSource,
    stream: String,
    mut decoder: IpcDecoder,
    policy: RetryPolicy,
    mut sink: S,
    tx: mpsc::Sender<Result<S::Item>>,
) {
    let mut offset: u64 = 0;
    let mut attempts = Attempts::new(&policy);
    // Like a REST 401, an UNAUTHENTICATED answer is tried once more with the credentials'
    // headers fetched again: a token can expire between being fetched and being checked,
    // as it does when a long read reopens a stream.
    let mut reauthenticated = false;
    loop {
        let opened = attempts.within(Duration::ZERO, "ReadRows", async {
            source
                .open(&stream, offset as i64)
                .await
                .map_err(|status| Failure {
                    retryable: is_resumable(&status),
                    error: status_error(&status),
                })
        });
        let failure = match opened.await {
            Err(failure) => failure,
            Ok(mut responses) => loop {
                // A stream that sends nothing for the idle timeout is reopened where it broke.
                let Some(next) = attempts.idle(responses.next()).await else {
                    break Failure {
                        error: attempts.idle_error("ReadRows"),
                        retryable: true,
                    };
                };
                match next {
                    None => return,
                    Some(Err(status)) => {
                        break Failure {
                            retryable: is_resumable(&status),
                            error: status_error(&status),
                        };
                    }
                    Some(Ok(resp)) => {
                        let item = decode(&mut decoder, resp, offset, &mut sink);
                        let item = match item {
                            Ok(Some((item, rows))) => {
                                offset += rows;
                                attempts.reset();
                                reauthenticated = false;
                                item
                            }
                            Ok(None) => continue,
                            Err(e) => {
                                let _ = tx.send(Err(e)).await;
                                return;
                            }
                        };
                        if tx.send(Ok(item)).await.is_err() {
                            return;
                        }
                    }
                }
            },
        };
        if failure.error.status() == Some(401) && !reauthenticated {
            reauthenticated = true;
            tracing::debug!(stream, offset, error = %failure.error, "UNAUTHENTICATED: reopening ReadRows with fresh credentials");
            continue;
        }
        let Some(wait) = attempts.retry(&failure.error, failure.retryable) else {
            let _ = tx.send(Err(attempts.give_up(failure.error))).await;
            return;
        };
        tracing::debug!(stream, offset, attempt = attempts.attempt(), error = %failure.error, ?wait, "resuming ReadRows");
        tokio::time::sleep(wait).await;
    }
}

/// Decodes one response: `None` for a response without rows (progress or throttle only).
fn decode<S: BatchSink>(
    decoder: &mut IpcDecoder,
    resp: ReadResponse,
    offset: u64,
    sink: &mut S,
) -> Result<Option<(S::Item, u64)>> {
    let ReadResponse { rest: resp, arrow } = resp;
    let message = match (arrow, &resp.rows) {
        (Some(message), _) => message,
        (None, Some(read_rows_response::Rows::AvroRows(_))) => {
            return Err(Error::new(
                ErrorKind::Decode,
                "the Storage Read API sent Avro rows to an Arrow session",
            ));
        }
        (None, _) => return Ok(None),
    };
    if message.is_empty() {
        return Ok(None);
    }
    let batch = decoder.decode(message)?;
    let rows = batch.num_rows() as u64;
    if resp.row_count > 0 && resp.row_count as u64 != rows {
        return Err(Error::new(
            ErrorKind::Decode,
            format!(
                "a ReadRows response says {} rows but its batch has {rows}",
                resp.row_count
            ),
        ));
    }
    Ok(Some((sink.item(batch, offset)?, rows)))
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use arrow_array::Int64Array;
    use gcloud_sdk::google::cloud::bigquery::storage::v1::{ArrowRecordBatch, ReadRowsResponse};

    use super::*;
    use crate::read::test_batches::{batch, batch_message, schema_stream};
    use crate::retry::tests::throttled;

    /// A fake server: a table of `total` rows served in batches of `per`; each call is cut
    /// by the next planned failure after that many batches (or fails to open).
    struct Fake {
        total: i64,
        per: usize,
        plan: VecDeque<(usize, Status)>,
        opened_at: Arc<Mutex<Vec<i64>>>,
    }

    fn response(start: i64, n: usize) -> ReadRowsResponse {
        ReadRowsResponse {
            row_count: n as i64,
            rows: Some(read_rows_response::Rows::ArrowRecordBatch(
                ArrowRecordBatch {
                    serialized_record_batch: batch_message(&batch(start, n), None),
                    ..Default::default()
                },
            )),
            ..Default::default()
        }
    }

    impl RowsSource for Fake {
        fn open(
            &mut self,
            _stream: &str,
            offset: i64,
        ) -> BoxFuture<'static, std::result::Result<Responses, Status>> {
            self.opened_at.lock().unwrap().push(offset);
            let mut items = Vec::new();
            let mut at = offset;
            while at < self.total {
                let n = (self.per as i64).min(self.total - at) as usize;
                items.push(Ok(response(at, n).into()));
                // A progress-only response between batches, as BigQuery sends.
                items.push(Ok(ReadResponse::default()));
                at += n as i64;
            }
            // A planned `OK` status is a server gone silent: the open never answers (after 0
            // batches), or the stream sends nothing more.
            let result = match self.plan.pop_front() {
                Some((0, status)) if status.code() == tonic::Code::Ok => {
                    return Box::pin(futures::future::pending());
                }
                Some((0, status)) => Err(status),
                Some((after, status)) if status.code() == tonic::Code::Ok => {
                    items.truncate(after * 2);
                    let silent = futures::stream::pending();
                    Ok(futures::stream::iter(items).chain(silent).boxed())
                }
                Some((after, status)) => {
                    items.truncate(after * 2);
                    items.push(Err(status));
                    Ok(futures::stream::iter(items).boxed())
                }
                None => Ok(futures::stream::iter(items).boxed()),
            };
            Box::pin(async move { result })
        }
    }

    fn policy(attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts: attempts,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            attempt_timeout: Duration::from_millis(50),
            idle_timeout: Duration::from_millis(50),
            ..RetryPolicy::default()
        }
    }

    async fn run(plan: Vec<(usize, Status)>, attempts: u32) -> (Vec<Result<i64>>, Vec<i64>) {
        let opened_at = Arc::new(Mutex::new(Vec::new()));
        let fake = Fake {
            total: 1000,
            per: 64,
            plan: plan.into(),
            opened_at: opened_at.clone(),
        };
        let decoder = IpcDecoder::new(&schema_stream(&batch(0, 1))).unwrap();
        let (tx, mut rx) = mpsc::channel(2);
        let task = tokio::spawn(read_stream(
            fake,
            "s".into(),
            decoder,
            policy(attempts),
            Batches,
            tx,
        ));
        let mut out = Vec::new();
        while let Some(item) = rx.recv().await {
            match item {
                Ok(b) => {
                    let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                    out.extend(ids.values().iter().map(|v| Ok(*v)));
                }
                Err(e) => out.push(Err(e)),
            }
        }
        task.await.unwrap();
        let opened = opened_at.lock().unwrap().clone();
        (out, opened)
    }

    #[tokio::test]
    async fn resumes_at_the_offset_read_without_loss_or_duplicates() {
        let plan = vec![
            (3, Status::unavailable("connection reset")),
            (0, Status::unavailable("still down")),
            (
                5,
                Status::internal("h2 protocol error: Received RST_STREAM with error code 2"),
            ),
            (1, throttled(Duration::from_millis(5))),
        ];
        let (rows, opened) = run(plan, 3).await;
        let ids: Vec<i64> = rows.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(ids, (0..1000).collect::<Vec<_>>());
        assert_eq!(opened, vec![0, 192, 192, 512, 576]);
    }

    #[tokio::test]
    async fn gives_up_after_the_policy_and_on_fatal_statuses() {
        // Three failures in a row without progress with max_attempts = 3.
        let plan = vec![
            (2, Status::unavailable("a")),
            (0, Status::unavailable("b")),
            (0, Status::unavailable("c")),
        ];
        let (rows, opened) = run(plan, 3).await;
        assert_eq!(opened, vec![0, 128, 128]);
        let (last, ok) = rows.split_last().unwrap();
        assert_eq!(ok.len(), 128);
        let e = last.as_ref().unwrap_err();
        assert!(e.is_retryable() && e.attempts() == 3, "{e:?}");

        // A quota error without RetryInfo is not resumed.
        let plan = vec![(1, Status::resource_exhausted("quota exceeded"))];
        let (rows, opened) = run(plan, 5).await;
        assert_eq!(opened, vec![0]);
        let e = rows.last().unwrap().as_ref().unwrap_err();
        assert!(e.message() == "quota exceeded", "{e:?}");

        let plan = vec![(1, Status::invalid_argument("bad offset"))];
        let (rows, opened) = run(plan, 5).await;
        assert_eq!(opened, vec![0]);
        let e = rows.last().unwrap().as_ref().unwrap_err();
        assert!(!e.is_retryable() && e.message() == "bad offset", "{e:?}");
    }

    #[tokio::test]
    async fn a_silent_server_is_reopened_at_the_offset_read() {
        let silent = || Status::new(tonic::Code::Ok, "silent");
        // Silent after 3 batches, an open that never answers, silent after 2 more.
        let plan = vec![(3, silent()), (0, silent()), (2, silent())];
        let (rows, opened) = run(plan, 3).await;
        let ids: Vec<i64> = rows.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(ids, (0..1000).collect::<Vec<_>>());
        assert_eq!(opened, vec![0, 192, 192, 320]);

        // Silent for good: the policy's attempts end the read with an idle timeout.
        let plan = vec![(1, silent()), (0, silent()), (0, silent())];
        let (rows, opened) = run(plan, 3).await;
        assert_eq!(opened, vec![0, 64, 64]);
        let e = rows.last().unwrap().as_ref().unwrap_err();
        assert!(e.is_timeout() && e.attempts() == 3, "{e:?}");
        assert_eq!(e.deadline(), Some(crate::Deadline::Attempt), "{e:?}");
    }
}

//! The writer against an in-memory Storage Write server that keeps BigQuery's offset rules
//! (ALREADY_EXISTS below the end of a stream, OUT_OF_RANGE past it) and can cut a connection
//! after appending, refuse rows, or hold its responses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    AppendRowsRequest, AppendRowsResponse, BatchCommitWriteStreamsRequest,
    BatchCommitWriteStreamsResponse, CreateWriteStreamRequest, FinalizeWriteStreamRequest,
    FinalizeWriteStreamResponse, FlushRowsRequest, FlushRowsResponse, GetWriteStreamRequest,
    RowError as PbRowError, WriteStream, append_rows_request, append_rows_response,
    table_field_schema, write_stream,
};
use gcloud_sdk::prost::Message;
use tokio::sync::{Semaphore, mpsc};
use tonic::{Code, Status};

use super::schema::from_storage_schema;
use super::transport::{Requests, Responses, WriteTransport};
use super::*;
use crate::auth::Credentials;
use crate::client::Client;
use crate::retry::RetryPolicy;
use crate::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};
use crate::value::Timestamp;

/// What the server does with one AppendRows request, in the order requests arrive.
#[derive(Debug, Clone)]
enum Fault {
    /// Append the rows, then break the connection before the response.
    CutAfterAppend,
    /// Answer with this error, appending nothing.
    Respond(Code),
    /// Refuse the rows at these indexes of the request.
    RowErrors(Vec<i64>),
    /// Append the rows and report this newer table schema.
    UpdatedSchema(gcloud_sdk::google::cloud::bigquery::storage::v1::TableSchema),
}

#[derive(Default)]
struct Stream {
    kind: i32,
    rows: Vec<Vec<u8>>,
    finalized: bool,
    committed: bool,
    flushed_to: Option<i64>,
}

#[derive(Default)]
struct State {
    streams: HashMap<String, Stream>,
    /// Faults by the number of the request they apply to (counted from 0 over all
    /// connections).
    faults: HashMap<usize, Fault>,
    requests: Vec<AppendRowsRequest>,
    connections: usize,
    already_exists: usize,
}

#[derive(Clone, Default)]
struct Fake {
    state: Arc<Mutex<State>>,
    /// When set, each response waits for a permit.
    gate: Option<Arc<Semaphore>>,
}

const DEFAULT: &str = "projects/p/datasets/d/tables/t/streams/_default";

impl Fake {
    fn fault(&self, request: usize, fault: Fault) {
        self.state.lock().unwrap().faults.insert(request, fault);
    }

    fn rows(&self, stream: &str) -> Vec<Vec<u8>> {
        let s = self.state.lock().unwrap();
        s.streams
            .get(stream)
            .map(|s| s.rows.clone())
            .unwrap_or_default()
    }

    /// Handles one request: the response, and whether the connection breaks after it.
    fn handle(&self, req: &AppendRowsRequest) -> (Option<AppendRowsResponse>, bool) {
        let mut st = self.state.lock().unwrap();
        let n = st.requests.len();
        st.requests.push(req.clone());
        let fault = st.faults.remove(&n);
        let rows = match &req.rows {
            Some(append_rows_request::Rows::ProtoRows(p)) => p
                .rows
                .as_ref()
                .map(|r| r.serialized_rows.clone())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let error = |code: Code, message: &str| AppendRowsResponse {
            response: Some(append_rows_response::Response::Error(
                gcloud_sdk::google::rpc::Status {
                    code: code as i32,
                    message: message.to_string(),
                    details: vec![],
                },
            )),
            ..Default::default()
        };
        match fault {
            Some(Fault::Respond(code)) => return (Some(error(code, "injected")), false),
            Some(Fault::RowErrors(indexes)) => {
                let resp = AppendRowsResponse {
                    row_errors: indexes
                        .iter()
                        .map(|&index| PbRowError {
                            index,
                            code: 1,
                            message: format!("row {index} is bad"),
                        })
                        .collect(),
                    response: error(Code::InvalidArgument, "row errors").response,
                    ..Default::default()
                };
                return (Some(resp), false);
            }
            _ => {}
        }
        let stream = st.streams.entry(req.write_stream.clone()).or_default();
        if stream.finalized {
            return (
                Some(error(Code::InvalidArgument, "stream finalized")),
                false,
            );
        }
        let end = stream.rows.len() as i64;
        if let Some(offset) = req.offset {
            if offset < end {
                st.already_exists += 1;
                return (
                    Some(error(Code::AlreadyExists, "offset already written")),
                    false,
                );
            }
            if offset > end {
                return (Some(error(Code::OutOfRange, "offset past the end")), false);
            }
        }
        stream.rows.extend(rows);
        let resp = AppendRowsResponse {
            response: Some(append_rows_response::Response::AppendResult(
                append_rows_response::AppendResult { offset: req.offset },
            )),
            updated_schema: match &fault {
                Some(Fault::UpdatedSchema(s)) => Some(s.clone()),
                _ => None,
            },
            ..Default::default()
        };
        match fault {
            Some(Fault::CutAfterAppend) => (None, true),
            _ => (Some(resp), false),
        }
    }
}

impl WriteTransport for Fake {
    fn append_rows(
        &self,
        _stream: &str,
        mut requests: Requests,
    ) -> BoxFuture<'static, Result<Responses, Status>> {
        let fake = self.clone();
        fake.state.lock().unwrap().connections += 1;
        Box::pin(async move {
            let (tx, rx) = mpsc::unbounded_channel();
            // Requests are handled as they arrive; responses leave through the gate.
            let (handled_tx, mut handled) = mpsc::unbounded_channel();
            let gate = fake.gate.clone();
            tokio::spawn(async move {
                while let Some((resp, cut)) = handled.recv().await {
                    if let Some(gate) = &gate {
                        gate.acquire().await.unwrap().forget();
                    }
                    if let Some(resp) = resp {
                        let _ = tx.send(Ok(resp));
                    }
                    if cut {
                        let _ = tx.send(Err(Status::unavailable("connection reset")));
                        return;
                    }
                }
            });
            tokio::spawn(async move {
                while let Some(req) = requests.next().await {
                    let (resp, cut) = fake.handle(&req);
                    let _ = handled_tx.send((resp, cut));
                    if cut {
                        return;
                    }
                }
            });
            let responses =
                futures::stream::unfold(
                    rx,
                    |mut rx| async move { rx.recv().await.map(|m| (m, rx)) },
                );
            Ok(responses.boxed())
        })
    }

    fn create_write_stream(
        &self,
        req: CreateWriteStreamRequest,
    ) -> BoxFuture<'static, Result<WriteStream, Status>> {
        let mut st = self.state.lock().unwrap();
        let name = format!("{}/streams/s{}", req.parent, st.streams.len());
        let kind = req.write_stream.map(|w| w.r#type).unwrap_or_default();
        st.streams.insert(
            name.clone(),
            Stream {
                kind,
                ..Default::default()
            },
        );
        Box::pin(async move {
            Ok(WriteStream {
                name,
                r#type: kind,
                ..Default::default()
            })
        })
    }

    fn get_write_stream(
        &self,
        req: GetWriteStreamRequest,
    ) -> BoxFuture<'static, Result<WriteStream, Status>> {
        Box::pin(async move {
            Ok(WriteStream {
                name: req.name,
                ..Default::default()
            })
        })
    }

    fn finalize_write_stream(
        &self,
        req: FinalizeWriteStreamRequest,
    ) -> BoxFuture<'static, Result<FinalizeWriteStreamResponse, Status>> {
        let mut st = self.state.lock().unwrap();
        let r = match st.streams.get_mut(&req.name) {
            Some(s) => {
                s.finalized = true;
                Ok(FinalizeWriteStreamResponse {
                    row_count: s.rows.len() as i64,
                })
            }
            None => Err(Status::not_found("no such stream")),
        };
        Box::pin(async move { r })
    }

    fn batch_commit_write_streams(
        &self,
        req: BatchCommitWriteStreamsRequest,
    ) -> BoxFuture<'static, Result<BatchCommitWriteStreamsResponse, Status>> {
        let mut st = self.state.lock().unwrap();
        let mut ok = true;
        for name in &req.write_streams {
            match st.streams.get(name) {
                Some(s) if s.finalized => {}
                _ => ok = false,
            }
        }
        if ok {
            for name in &req.write_streams {
                st.streams.get_mut(name).unwrap().committed = true;
            }
        }
        Box::pin(async move {
            Ok(BatchCommitWriteStreamsResponse {
                commit_time: ok.then_some(gcloud_sdk::prost_types::Timestamp {
                    seconds: 1,
                    nanos: 0,
                }),
                stream_errors: vec![],
            })
        })
    }

    fn flush_rows(
        &self,
        req: FlushRowsRequest,
    ) -> BoxFuture<'static, Result<FlushRowsResponse, Status>> {
        let mut st = self.state.lock().unwrap();
        let stream = st.streams.entry(req.write_stream).or_default();
        stream.flushed_to = req.offset;
        let offset = req.offset.unwrap_or_default();
        Box::pin(async move { Ok(FlushRowsResponse { offset }) })
    }
}

#[derive(serde::Serialize)]
struct Row {
    id: i64,
    name: String,
}

fn schema() -> TableSchema {
    TableSchema::new(vec![
        TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
        TableFieldSchema::new("name", FieldType::String),
    ])
}

/// Rows of about 1 KB, so that a 64 KiB request holds about 60.
fn rows(range: std::ops::Range<i64>) -> Vec<Row> {
    range
        .map(|id| Row {
            id,
            name: format!("{id:0>1000}"),
        })
        .collect()
}

/// The `id`s of encoded rows (field 1, a varint, first in each row).
fn ids(rows: &[Vec<u8>]) -> Vec<i64> {
    use bigq_codec::proto::wire::{Reader, VARINT};
    rows.iter()
        .map(|r| {
            let mut r = Reader::new(r);
            assert_eq!(r.key(), Ok((1, VARINT)), "field 1 as a varint");
            r.varint().unwrap() as i64
        })
        .collect()
}

async fn client() -> Client {
    Client::builder()
        .with_project("p")
        .with_credentials(Credentials::anonymous())
        .build()
        .await
        .unwrap()
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
        ..Default::default()
    }
}

async fn open(fake: &Fake, b: WriteBuilder) -> Writer {
    b.schema(schema())
        .max_request_bytes(64 * 1024)
        .open_with(Arc::new(fake.clone()), fast_retries())
        .await
        .unwrap()
}

fn request_rows(r: &AppendRowsRequest) -> usize {
    match &r.rows {
        Some(append_rows_request::Rows::ProtoRows(p)) => {
            p.rows.as_ref().map_or(0, |r| r.serialized_rows.len())
        }
        _ => 0,
    }
}

fn has_schema(r: &AppendRowsRequest) -> bool {
    matches!(&r.rows, Some(append_rows_request::Rows::ProtoRows(p)) if p.writer_schema.is_some())
}

#[tokio::test]
async fn requests_stay_under_the_size_limit_and_carry_stream_and_schema() {
    let fake = Fake::default();
    let mut w = open(&fake, client().await.write("d.t")).await;
    w.append(&rows(0..150)).await.unwrap();
    w.append(&rows(150..300)).await.unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(ids(&fake.rows(DEFAULT)), (0..300).collect::<Vec<_>>());
    assert_eq!(summary.rows_written, 300);
    assert_eq!(summary.retries, 0);
    let st = fake.state.lock().unwrap();
    assert!(st.requests.len() >= 5, "{} requests", st.requests.len());
    assert_eq!(summary.requests, st.requests.len() as u64);
    let bytes: usize = st.requests.iter().map(|r| r.encoded_len()).sum();
    assert_eq!(summary.bytes_sent, bytes as u64);
    for (i, r) in st.requests.iter().enumerate() {
        assert!(
            r.encoded_len() <= 64 * 1024,
            "request {i}: {}",
            r.encoded_len()
        );
        // bqemulator wants the stream on every request.
        assert_eq!(r.write_stream, DEFAULT);
        assert_eq!(r.offset, None, "the default stream has no offsets");
        assert_eq!(
            has_schema(r),
            i == 0,
            "request {i}: schema on the first only"
        );
    }
    // Rows were batched across the two appends: no request is a short tail of the first.
    assert!(
        st.requests[..st.requests.len() - 1]
            .iter()
            .all(|r| request_rows(r) > 50)
    );
}

#[tokio::test]
async fn a_committed_stream_writes_exactly_once_across_a_cut_connection() {
    let fake = Fake::default();
    // The server appends request 2 but the connection breaks before its response.
    fake.fault(2, Fault::CutAfterAppend);
    let mut w = open(&fake, client().await.write("d.t").committed()).await;
    let stream = w.stream_name().to_string();
    w.append(&rows(0..400)).await.unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(ids(&fake.rows(&stream)), (0..400).collect::<Vec<_>>());
    assert_eq!(summary.rows_written, 400);
    assert_eq!(summary.retries, 1);
    assert_eq!(summary.finalized_rows, Some(400));
    let st = fake.state.lock().unwrap();
    // Request 2 was sent again and recognised as already there.
    assert!(st.already_exists >= 1);
    assert_eq!(st.connections, 2);
    let mut offset = 0;
    let mut firsts = 0;
    for r in &st.requests {
        if has_schema(r) {
            firsts += 1;
        }
        assert!(r.offset.is_some());
        offset = offset.max(r.offset.unwrap() + request_rows(r) as i64);
    }
    assert_eq!(offset, 400);
    assert_eq!(firsts, 2, "the writer schema starts each connection");
}

#[tokio::test]
async fn the_default_stream_resends_and_may_duplicate() {
    let fake = Fake::default();
    fake.fault(1, Fault::CutAfterAppend);
    let mut w = open(&fake, client().await.write("d.t")).await;
    w.append(&rows(0..200)).await.unwrap();
    let summary = w.finish().await.unwrap();
    let mut got = ids(&fake.rows(DEFAULT));
    assert!(
        got.len() > 200,
        "the request cut after append was written twice"
    );
    got.sort();
    got.dedup();
    assert_eq!(got, (0..200).collect::<Vec<_>>(), "every row at least once");
    assert_eq!(summary.retries, 1);
    assert_eq!(summary.rows_written, 200);
}

#[tokio::test]
async fn a_request_sent_on_a_broken_connection_waits_to_be_resent_after_the_older_ones() {
    // Requests 0-2 go out; the connection breaks after request 1 is appended (2 is never
    // read), and no response comes back yet. Request 3's send then fails on the broken
    // connection, and request 4 must not open a connection of its own: its response would
    // be taken for request 0's and the rows of 1-3 would be lost. It waits, and the
    // reconnection resends 0-4 in order.
    let gate = Arc::new(Semaphore::new(0));
    let fake = Fake {
        gate: Some(gate.clone()),
        ..Default::default()
    };
    fake.fault(1, Fault::CutAfterAppend);
    let mut w = client()
        .await
        .write("d.t")
        .max_in_flight(8)
        .max_batch_rows(50)
        .schema(schema())
        .open_with(Arc::new(fake.clone()), fast_retries())
        .await
        .unwrap();
    w.append(&rows(0..150)).await.unwrap();
    // The server reads requests 0 and 1, and drops the connection.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(fake.state.lock().unwrap().requests.len(), 2);
    w.append(&rows(150..250)).await.unwrap();
    gate.add_permits(10_000);
    let summary = w.finish().await.unwrap();
    let mut got = ids(&fake.rows(DEFAULT));
    got.sort();
    got.dedup();
    assert_eq!(got, (0..250).collect::<Vec<_>>(), "every row at least once");
    assert_eq!(summary.rows_written, 250);
    assert!(summary.retries >= 1, "{summary:?}");
    // The second connection starts with the oldest unconfirmed request, request 0.
    let st = fake.state.lock().unwrap();
    let second = st
        .requests
        .iter()
        .filter(|r| has_schema(r))
        .nth(1)
        .expect("a second connection");
    let first_ids = match &second.rows {
        Some(append_rows_request::Rows::ProtoRows(p)) => ids(&p
            .rows
            .as_ref()
            .map(|r| r.serialized_rows.clone())
            .unwrap_or_default()),
        _ => Vec::new(),
    };
    assert_eq!(first_ids.first(), Some(&0), "{first_ids:?}");
}

#[tokio::test]
async fn out_of_range_and_unavailable_resend_from_the_last_confirmed_offset() {
    for code in [
        Code::OutOfRange,
        Code::Unavailable,
        Code::Aborted,
        Code::Internal,
    ] {
        let fake = Fake::default();
        fake.fault(1, Fault::Respond(code));
        let mut w = open(&fake, client().await.write("d.t").committed()).await;
        let stream = w.stream_name().to_string();
        w.append(&rows(0..300)).await.unwrap();
        let summary = w.finish().await.unwrap();
        assert_eq!(
            ids(&fake.rows(&stream)),
            (0..300).collect::<Vec<_>>(),
            "{code:?}"
        );
        assert_eq!(summary.retries, 1, "{code:?}");
        // The resend starts at the first unconfirmed request: offset of request 1.
        let st = fake.state.lock().unwrap();
        let first_offset = st.requests[1].offset.unwrap();
        assert!(first_offset > 0);
        let resent = st
            .requests
            .iter()
            .skip(2)
            .find(|r| has_schema(r))
            .expect("a new connection");
        assert_eq!(resent.offset, Some(first_offset), "{code:?}");
    }
}

#[tokio::test]
async fn invalid_argument_is_not_retried_and_fails_the_writer() {
    let fake = Fake::default();
    fake.fault(0, Fault::Respond(Code::InvalidArgument));
    let mut w = open(&fake, client().await.write("d.t").committed()).await;
    w.append(&rows(0..10)).await.unwrap();
    let e = w.flush().await.unwrap_err();
    assert!(!e.is_retryable(), "{e}");
    assert_eq!(fake.state.lock().unwrap().requests.len(), 1);
    // Failed for good, with the same error.
    let again = w.append(&rows(10..11)).await.unwrap_err();
    assert_eq!(again.message(), e.message());
    assert_eq!(w.summary().rows_written, 0);
}

#[tokio::test]
async fn row_errors_name_the_callers_rows() {
    let fake = Fake::default();
    fake.fault(1, Fault::RowErrors(vec![2, 5]));
    let mut w = open(&fake, client().await.write("d.t").committed()).await;
    w.append(&rows(0..200)).await.unwrap();
    let e = w.flush().await.unwrap_err();
    let st = fake.state.lock().unwrap();
    let first = request_rows(&st.requests[0]) as u64;
    drop(st);
    let rows: Vec<u64> = e.row_errors().iter().map(|r| r.row).collect();
    assert_eq!(rows, [first + 2, first + 5]);
    assert_eq!(e.row_errors()[0].message, "row 2 is bad");
    assert!(
        e.to_string().contains("none of the request was written"),
        "{e}"
    );
    // Only the first request was confirmed.
    assert_eq!(w.summary().rows_written, first);
}

#[tokio::test]
async fn a_row_that_does_not_fit_is_an_error_and_nothing_of_the_append_is_sent() {
    let fake = Fake::default();
    let mut w = open(&fake, client().await.write("d.t")).await;
    let bad = serde_json::json!([{"id": 1}, {"id": 2}, {"id": "three"}]);
    let e = w.append(bad.as_array().unwrap()).await.unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Encode);
    let c = e.codec_error().unwrap();
    assert_eq!(
        (c.row(), c.column(), c.value()),
        (Some(2), Some("id"), Some("three"))
    );
    // The writer goes on; the good rows of the failed append were not queued.
    w.append(&rows(7..8)).await.unwrap();
    w.finish().await.unwrap();
    assert_eq!(ids(&fake.rows(DEFAULT)), [7]);
}

#[tokio::test]
async fn a_fast_producer_waits_for_the_window() {
    let gate = Arc::new(Semaphore::new(0));
    let fake = Fake {
        gate: Some(gate.clone()),
        ..Default::default()
    };
    let w = client()
        .await
        .write("d.t")
        .max_in_flight(2)
        .schema(schema())
        .max_request_bytes(64 * 1024)
        .open_with(Arc::new(fake.clone()), fast_retries())
        .await
        .unwrap();
    let task = tokio::spawn(async move {
        let mut w = w;
        // About 10 requests of rows.
        w.append(&rows(0..600)).await.unwrap();
        let in_flight = w.in_flight().await;
        (w, in_flight)
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!task.is_finished(), "append waits while no response comes");
    // The server has received the window (2) and the fake's first handled request is
    // waiting on the gate: no more than the window was sent.
    assert_eq!(fake.state.lock().unwrap().requests.len(), 2);
    gate.add_permits(1000);
    let (w, in_flight) = task.await.unwrap();
    assert!(in_flight <= 2, "{in_flight} in flight");
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.rows_written, 600);
}

#[tokio::test]
async fn pending_rows_are_committed_together_and_buffered_rows_flushed() {
    let fake = Fake::default();
    let mut w = open(&fake, client().await.write("d.t").pending()).await;
    let stream = w.stream_name().to_string();
    w.append(&rows(0..100)).await.unwrap();
    let summary = w.commit().await.unwrap();
    assert_eq!(summary.commit_time, Some(Timestamp::new(1_000_000)));
    {
        let st = fake.state.lock().unwrap();
        let s = &st.streams[&stream];
        assert!(s.finalized && s.committed);
        assert_eq!(s.kind, write_stream::Type::Pending as i32);
        assert_eq!(s.rows.len(), 100);
    }
    // A pending stream only finished is finalized, not committed.
    let mut w = open(&fake, client().await.write("d.t").pending()).await;
    let stream = w.stream_name().to_string();
    w.append(&rows(0..3)).await.unwrap();
    w.finish().await.unwrap();
    assert!(!fake.state.lock().unwrap().streams[&stream].committed);

    let mut w = open(&fake, client().await.write("d.t").buffered()).await;
    let stream = w.stream_name().to_string();
    w.append(&rows(0..5)).await.unwrap();
    w.flush().await.unwrap();
    assert_eq!(
        fake.state.lock().unwrap().streams[&stream].flushed_to,
        Some(4)
    );
    // Only PENDING streams commit.
    let w = open(&fake, client().await.write("d.t").committed()).await;
    assert!(w.commit().await.is_err());
}

#[tokio::test]
async fn retries_stop_at_the_policy() {
    let fake = Fake::default();
    for i in 0..20 {
        fake.fault(i, Fault::Respond(Code::Unavailable));
    }
    let mut w = client()
        .await
        .write("d.t")
        .committed()
        .schema(schema())
        .open_with(
            Arc::new(fake.clone()),
            RetryPolicy {
                max_attempts: 3,
                ..fast_retries()
            },
        )
        .await
        .unwrap();
    w.append(&rows(0..3)).await.unwrap();
    let e = w.flush().await.unwrap_err();
    assert!(e.is_retryable(), "{e}");
    assert_eq!(e.attempts(), 3);
    assert_eq!(fake.state.lock().unwrap().requests.len(), 3);
}

#[test]
fn storage_schemas_convert() {
    use gcloud_sdk::google::cloud::bigquery::storage::v1::{
        TableFieldSchema as F, TableSchema as S, table_field_schema::Mode, table_field_schema::Type,
    };
    let s = S {
        fields: vec![
            F {
                name: "a".into(),
                r#type: Type::Int64 as i32,
                mode: Mode::Required as i32,
                ..Default::default()
            },
            F {
                name: "r".into(),
                r#type: Type::Struct as i32,
                mode: Mode::Repeated as i32,
                fields: vec![F {
                    name: "x".into(),
                    r#type: Type::Numeric as i32,
                    ..Default::default()
                }],
                ..Default::default()
            },
            F {
                name: "g".into(),
                r#type: Type::Range as i32,
                range_element_type: Some(table_field_schema::FieldElementType {
                    r#type: Type::Date as i32,
                }),
                ..Default::default()
            },
        ],
    };
    let t = from_storage_schema(&s).unwrap();
    assert_eq!(t.fields[0].field_type, FieldType::Int64);
    assert_eq!(t.fields[0].mode(), FieldMode::Required);
    assert_eq!(t.fields[1].field_type, FieldType::Record);
    assert!(t.fields[1].is_repeated());
    assert_eq!(t.fields[1].fields[0].field_type, FieldType::Numeric);
    assert_eq!(
        t.fields[2]
            .range_element_type
            .as_ref()
            .unwrap()
            .element_type,
        FieldType::Date
    );
}

#[tokio::test]
async fn bad_options_are_config_errors() {
    let fake = Fake::default();
    for b in [
        client().await.write("d.t").max_in_flight(0),
        client()
            .await
            .write("d.t")
            .max_request_bytes(MAX_REQUEST_BYTES + 1),
        client().await.write("not a table"),
    ] {
        let e = b
            .schema(schema())
            .open_with(Arc::new(fake.clone()), fast_retries())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config, "{e}");
    }
}

#[tokio::test]
async fn a_schema_change_on_a_connection_sends_the_new_writer_schema() {
    use arrow_array::{Int64Array, RecordBatch, StringArray};
    let fake = Fake::default();
    let mut w = open(&fake, client().await.write("d.t")).await;
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from(vec![10, 11, 12])) as arrow_array::ArrayRef,
        ),
        ("name", Arc::new(StringArray::from(vec!["a", "b", "c"]))),
    ])
    .unwrap();
    w.append(&rows(0..2)).await.unwrap();
    w.append_batch(&batch).await.unwrap();
    w.append_batch(&batch).await.unwrap();
    w.append(&rows(2..4)).await.unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.rows_written, 2 + 3 + 3 + 2);
    let st = fake.state.lock().unwrap();
    assert_eq!(st.connections, 1);
    // (format, carries a writer schema) of each request, in order.
    let shapes: Vec<(&str, bool)> = st
        .requests
        .iter()
        .map(|r| match &r.rows {
            Some(append_rows_request::Rows::ProtoRows(p)) => ("proto", p.writer_schema.is_some()),
            Some(append_rows_request::Rows::ArrowRows(a)) => {
                let rows = a.rows.as_ref().unwrap();
                assert!(!rows.serialized_record_batch.is_empty());
                ("arrow", a.writer_schema.is_some())
            }
            None => ("none", false),
        })
        .collect();
    assert_eq!(
        shapes,
        [
            ("proto", true),
            ("arrow", true),
            ("arrow", false),
            ("proto", true)
        ]
    );
    // The Arrow schema sent is the batch's, readable by an IPC reader.
    let Some(append_rows_request::Rows::ArrowRows(a)) = &st.requests[1].rows else {
        unreachable!()
    };
    let bytes = &a.writer_schema.as_ref().unwrap().serialized_schema;
    let schema = arrow_ipc::convert::try_schema_from_ipc_buffer(bytes).unwrap();
    assert_eq!(&schema, batch.schema().as_ref());
}

#[tokio::test]
async fn a_batch_larger_than_a_request_is_split_in_order() {
    use arrow_array::{Int64Array, RecordBatch, StringArray};
    let fake = Fake::default();
    let mut w = open(&fake, client().await.write("d.t")).await;
    let ids: Vec<i64> = (0..300).collect();
    let names: Vec<String> = ids.iter().map(|id| format!("{id:0>1000}")).collect();
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from(ids)) as arrow_array::ArrayRef,
        ),
        ("name", Arc::new(StringArray::from(names))),
    ])
    .unwrap();
    w.append_batch(&batch).await.unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.rows_written, 300);
    let st = fake.state.lock().unwrap();
    assert!(st.requests.len() >= 5, "{} requests", st.requests.len());
    let mut next = 0i64;
    for r in &st.requests {
        assert!(r.encoded_len() <= 64 * 1024, "{}", r.encoded_len());
        let Some(append_rows_request::Rows::ArrowRows(a)) = &r.rows else {
            panic!("not Arrow")
        };
        let schema = Arc::new(batch.schema().as_ref().clone());
        let mut decoder = arrow_ipc::reader::StreamDecoder::new();
        let mut stream = Vec::new();
        arrow_ipc::writer::StreamWriter::try_new(&mut stream, &schema)
            .unwrap()
            .finish()
            .unwrap();
        // The schema message (without the end marker), then the request's batch.
        stream.truncate(stream.len() - 8);
        stream.extend_from_slice(&a.rows.as_ref().unwrap().serialized_record_batch);
        let mut buf = arrow_buffer::Buffer::from(stream);
        let mut got = None;
        while !buf.is_empty() {
            if let Some(b) = decoder.decode(&mut buf).unwrap() {
                got = Some(b);
            }
        }
        let got = got.expect("a batch");
        let first = got
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .value(0);
        assert_eq!(first, next, "slices in order");
        next += got.num_rows() as i64;
    }
    assert_eq!(next, 300);
}

#[tokio::test]
async fn a_batch_column_the_table_lacks_is_refused() {
    use arrow_array::{Int64Array, RecordBatch};
    let fake = Fake::default();
    let mut w = open(&fake, client().await.write("d.t")).await;
    let batch = RecordBatch::try_from_iter([(
        "nope",
        Arc::new(Int64Array::from(vec![1])) as arrow_array::ArrayRef,
    )])
    .unwrap();
    let e = w.append_batch(&batch).await.unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Encode);
    assert!(e.to_string().contains("\"nope\""), "{e}");
    assert_eq!(w.finish().await.unwrap().requests, 0);
}

/// Waits (up to a generous bound) until the fake has `n` rows on `stream`.
async fn wait_for_rows(fake: &Fake, stream: &str, n: usize) -> Vec<i64> {
    for _ in 0..1000 {
        let got = fake.rows(stream);
        if got.len() >= n {
            return ids(&got);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ids(&fake.rows(stream))
}

#[tokio::test]
async fn a_partly_filled_request_is_sent_after_the_batch_delay() {
    let fake = Fake::default();
    let mut w = open(
        &fake,
        client()
            .await
            .write("d.t")
            .max_batch_delay(Duration::from_millis(20)),
    )
    .await;
    // A trickle producer: one row at a time, never a flush until the end.
    for id in 0..5 {
        w.append(&rows(id..id + 1)).await.unwrap();
        let got = wait_for_rows(&fake, DEFAULT, id as usize + 1).await;
        assert_eq!(
            got,
            (0..=id).collect::<Vec<_>>(),
            "row {id} written without a flush"
        );
    }
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.rows_written, 5);
    assert_eq!(summary.requests, 5, "one request per row sent on time");
}

#[tokio::test]
async fn a_zero_batch_delay_sends_each_append_before_it_returns() {
    let fake = Fake::default();
    let mut w = open(
        &fake,
        client().await.write("d.t").max_batch_delay(Duration::ZERO),
    )
    .await;
    w.append(&rows(0..3)).await.unwrap();
    w.append(&rows(3..4)).await.unwrap();
    // Sent already: the requests reach the server before any flush.
    let rows = wait_for_rows(&fake, DEFAULT, 4).await;
    assert_eq!(rows, [0, 1, 2, 3]);
    let sent: Vec<usize> = fake
        .state
        .lock()
        .unwrap()
        .requests
        .iter()
        .map(request_rows)
        .collect();
    assert_eq!(sent, [3, 1]);
    w.finish().await.unwrap();
    assert_eq!(ids(&fake.rows(DEFAULT)), [0, 1, 2, 3]);
}

#[tokio::test]
async fn max_batch_rows_bounds_the_rows_of_a_request() {
    let fake = Fake::default();
    let mut w = open(&fake, client().await.write("d.t").max_batch_rows(7)).await;
    w.append(&rows(0..20)).await.unwrap();
    w.finish().await.unwrap();
    let sent: Vec<usize> = fake
        .state
        .lock()
        .unwrap()
        .requests
        .iter()
        .map(request_rows)
        .collect();
    assert_eq!(sent, [7, 7, 6]);
    assert_eq!(ids(&fake.rows(DEFAULT)), (0..20).collect::<Vec<_>>());
}

#[tokio::test]
async fn bytes_in_flight_stay_under_their_bound() {
    let gate = Arc::new(Semaphore::new(0));
    let fake = Fake {
        gate: Some(gate.clone()),
        ..Default::default()
    };
    // Requests of about 20 KB (20 rows of 1 KB), at most 64 KiB of them in flight: three.
    let bound = 64 * 1024;
    let w = client()
        .await
        .write("d.t")
        .schema(schema())
        .max_request_bytes(64 * 1024)
        .max_batch_rows(20)
        .max_in_flight_bytes(bound)
        .open_with(Arc::new(fake.clone()), fast_retries())
        .await
        .unwrap();
    let task = tokio::spawn(async move {
        let mut w = w;
        w.append(&rows(0..200)).await.unwrap();
        w
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !task.is_finished(),
        "append waits while the bytes bound is full"
    );
    let sent: Vec<usize> = {
        let st = fake.state.lock().unwrap();
        st.requests.iter().map(|r| r.encoded_len()).collect()
    };
    assert_eq!(
        sent.len(),
        3,
        "three requests of about 20 KB fit in 64 KiB: {sent:?}"
    );
    gate.add_permits(1000);
    let w = task.await.unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.rows_written, 200);
    assert!(
        summary.peak_in_flight_bytes <= bound as u64,
        "{} bytes in flight over the bound of {bound}",
        summary.peak_in_flight_bytes
    );
    assert!(summary.peak_in_flight_bytes > 40_000, "{summary:?}");
    assert_eq!(ids(&fake.rows(DEFAULT)), (0..200).collect::<Vec<_>>());
}

#[tokio::test]
async fn batching_options_out_of_range_are_config_errors() {
    let fake = Fake::default();
    for b in [
        client().await.write("d.t").max_batch_rows(0),
        client()
            .await
            .write("d.t")
            .max_request_bytes(1024 * 1024)
            .max_in_flight_bytes(1024 * 1024 - 1),
    ] {
        let e = b
            .schema(schema())
            .open_with(Arc::new(fake.clone()), fast_retries())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config, "{e}");
        assert!(e.to_string().contains("max_"), "{e}");
    }
}

#[tokio::test]
async fn a_failure_of_a_request_sent_on_time_is_returned_by_the_next_call() {
    let fake = Fake::default();
    fake.fault(0, Fault::Respond(Code::InvalidArgument));
    let mut w = open(
        &fake,
        client()
            .await
            .write("d.t")
            .max_batch_delay(Duration::from_millis(5))
            .max_in_flight(1),
    )
    .await;
    w.append(&rows(0..1)).await.unwrap();
    // The request goes out on time; its failure is read when the next one needs the slot.
    for _ in 0..1000 {
        if !fake.state.lock().unwrap().requests.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut failed = None;
    for id in 1..200 {
        if let Err(e) = w.append(&rows(id..id + 1)).await {
            failed = Some(e);
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let e = failed.expect("the writer reports the failed request");
    assert!(!e.is_retryable(), "{e}");
    assert!(e.message().contains("injected"), "{e}");
    assert!(w.flush().await.is_err(), "the writer stays failed");
}

/// The writer schema's field names, where a request carries one.
fn descriptor_fields(r: &AppendRowsRequest) -> Option<Vec<String>> {
    match &r.rows {
        Some(append_rows_request::Rows::ProtoRows(p)) => p.writer_schema.as_ref().map(|w| {
            w.proto_descriptor
                .as_ref()
                .map(|d| d.field.iter().map(|f| f.name().to_string()).collect())
                .unwrap_or_default()
        }),
        _ => None,
    }
}

#[tokio::test]
async fn an_updated_schema_on_a_response_is_taken_for_later_rows() {
    use gcloud_sdk::google::cloud::bigquery::storage::v1 as pb;
    let field = |name: &str, t: table_field_schema::Type, mode: table_field_schema::Mode| {
        pb::TableFieldSchema {
            name: name.into(),
            r#type: t as i32,
            mode: mode as i32,
            ..Default::default()
        }
    };
    use table_field_schema::{Mode, Type};
    let newer = pb::TableSchema {
        fields: vec![
            field("id", Type::Int64, Mode::Required),
            field("name", Type::String, Mode::Nullable),
            field("age", Type::Int64, Mode::Nullable),
        ],
    };
    let fake = Fake::default();
    fake.fault(0, Fault::UpdatedSchema(newer));
    let mut w = open(&fake, client().await.write("d.t").max_in_flight(1)).await;
    // Queued under the old schema while the first response is awaited.
    w.append(&rows(0..1)).await.unwrap();
    w.flush().await.unwrap();
    #[derive(serde::Serialize)]
    struct Older {
        id: i64,
        name: String,
        age: i64,
    }
    // A field the old schema lacks is accepted now.
    w.append(&[Older {
        id: 1,
        name: "x".into(),
        age: 40,
    }])
    .await
    .unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.schema_updates, 1, "{summary:?}");
    assert_eq!(summary.rows_written, 2);
    let st = fake.state.lock().unwrap();
    let schemas: Vec<_> = st.requests.iter().map(descriptor_fields).collect();
    assert_eq!(
        schemas,
        [
            Some(vec!["id".to_string(), "name".to_string()]),
            Some(vec![
                "id".to_string(),
                "name".to_string(),
                "age".to_string()
            ]),
        ],
        "the request after the update carries the new writer schema"
    );
    assert_eq!(ids(&st.streams[DEFAULT].rows), [0, 1]);
}

#[tokio::test]
async fn rows_encoded_before_a_schema_update_keep_their_writer_schema() {
    use gcloud_sdk::google::cloud::bigquery::storage::v1 as pb;
    use table_field_schema::{Mode, Type};
    // A newer schema with the columns in another order: rows encoded for the old one must
    // not be sent under it.
    let newer = pb::TableSchema {
        fields: vec![
            pb::TableFieldSchema {
                name: "name".into(),
                r#type: Type::String as i32,
                mode: Mode::Nullable as i32,
                ..Default::default()
            },
            pb::TableFieldSchema {
                name: "id".into(),
                r#type: Type::Int64 as i32,
                mode: Mode::Required as i32,
                ..Default::default()
            },
        ],
    };
    let fake = Fake::default();
    fake.fault(0, Fault::UpdatedSchema(newer));
    let mut w = open(
        &fake,
        client()
            .await
            .write("d.t")
            .max_in_flight(1)
            .max_batch_delay(Duration::MAX),
    )
    .await;
    // About 3 requests of rows in one append: the update arrives while it queues them.
    w.append(&rows(0..150)).await.unwrap();
    w.append(&rows(150..160)).await.unwrap();
    let summary = w.finish().await.unwrap();
    assert_eq!(summary.schema_updates, 1);
    let st = fake.state.lock().unwrap();
    let old = Some(vec!["id".to_string(), "name".to_string()]);
    let new = Some(vec!["name".to_string(), "id".to_string()]);
    let schemas: Vec<_> = st.requests.iter().map(descriptor_fields).collect();
    // The first append's rows all go with the old schema; the second's with the new one.
    assert_eq!(schemas.first(), Some(&old));
    assert_eq!(schemas.last(), Some(&new), "{schemas:?}");
    assert_eq!(
        schemas.iter().filter(|s| **s == new).count(),
        1,
        "{schemas:?}"
    );
    let last = st.requests.last().unwrap();
    assert_eq!(request_rows(last), 10);
    assert_eq!(st.streams[DEFAULT].rows.len(), 160);
}

#[test]
fn a_writer_outside_a_tokio_runtime_is_a_config_error() {
    let client = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(client());
    let fake = Fake::default();
    let e = futures::executor::block_on(
        client
            .write("d.t")
            .schema(schema())
            .open_with(Arc::new(fake), fast_retries()),
    )
    .unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Config, "{e}");
    assert!(e.to_string().contains("Tokio runtime"), "{e}");
}

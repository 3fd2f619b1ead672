//! The Storage Read API (gRPC) at the wire: sessions, streams, responses, compression,
//! offsets, splits, errors and the fault hook, checked with the generated client messages
//! and Arrow IPC decoded here.

use std::sync::Arc;

use arrow_ipc::reader::StreamReader;
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use bigq_emulator::Emulator;
use datafusion::arrow::array::{Array, AsArray, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef};
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    ArrowSerializationOptions, CreateReadSessionRequest, DataFormat, ReadRowsRequest,
    ReadRowsResponse, ReadSession, SplitReadStreamRequest,
    arrow_serialization_options::CompressionCodec, big_query_read_client::BigQueryReadClient,
    read_rows_response, read_session,
};
use serde_json::{Value, json};
use tonic::Code;
use tonic::transport::Channel;

use crate::common;

use common::Rest;

struct Ctx {
    emu: Emulator,
    rpc: BigQueryReadClient<Channel>,
    rest: Rest,
}

impl Ctx {
    async fn new() -> Ctx {
        let emu = common::emulator().await;
        let rpc = BigQueryReadClient::new(common::channel(&emu).await)
            .max_decoding_message_size(64 << 20);
        let rest = Rest::new(&emu);
        rest.dataset("ds").await;
        Ctx { emu, rpc, rest }
    }

    async fn query(&self, sql: &str) -> Value {
        self.rest
            .post_ok("/queries", json!({"query": sql, "useLegacySql": false}))
            .await
    }

    /// `ds.t`: ids 1..=n with a nullable string, a STRUCT and an ARRAY.
    async fn table(&self, n: i64) {
        self.table_named("t", n).await;
    }

    /// `ds.{name}`, as [`Ctx::table`] makes `ds.t`.
    async fn table_named(&self, name: &str, n: i64) {
        self.query(&format!(
            "CREATE TABLE ds.{name} AS SELECT n AS id, \
               IF(MOD(n, 3) = 0, NULL, CONCAT('name ', CAST(n AS STRING))) AS name, \
               STRUCT(n * 2 AS a, IF(MOD(n, 4) = 0, NULL, 'x') AS b) AS st, \
               GENERATE_ARRAY(1, MOD(n, 3)) AS arr \
             FROM UNNEST(GENERATE_ARRAY(1, {n})) AS n"
        ))
        .await;
    }

    async fn session(
        &self,
        table: &str,
        max_streams: i32,
        options: read_session::TableReadOptions,
    ) -> Result<ReadSession, tonic::Status> {
        let req = CreateReadSessionRequest {
            parent: "projects/p".into(),
            read_session: Some(ReadSession {
                table: format!("projects/p/datasets/ds/tables/{table}"),
                data_format: DataFormat::Arrow as i32,
                read_options: Some(options),
                ..Default::default()
            }),
            max_stream_count: max_streams,
            preferred_min_stream_count: 0,
        };
        self.rpc
            .clone()
            .create_read_session(req)
            .await
            .map(|r| r.into_inner())
    }

    /// Every response of one ReadRows call, and the status it ended with.
    async fn read(
        &self,
        stream: &str,
        offset: i64,
    ) -> (Vec<ReadRowsResponse>, Result<(), tonic::Status>) {
        let req = ReadRowsRequest {
            read_stream: stream.into(),
            offset,
            ..Default::default()
        };
        let mut out = Vec::new();
        let mut call = match self.rpc.clone().read_rows(req).await {
            Ok(c) => c.into_inner(),
            Err(s) => return (out, Err(s)),
        };
        loop {
            match call.message().await {
                Ok(Some(r)) => out.push(r),
                Ok(None) => return (out, Ok(())),
                Err(s) => return (out, Err(s)),
            }
        }
    }
}

fn schema_bytes(s: &ReadSession) -> Vec<u8> {
    match &s.schema {
        Some(read_session::Schema::ArrowSchema(a)) => a.serialized_schema.clone(),
        other => panic!("no Arrow schema: {other:?}"),
    }
}

fn arrow_schema(s: &ReadSession) -> SchemaRef {
    StreamReader::try_new(std::io::Cursor::new(schema_bytes(s)), None)
        .unwrap()
        .schema()
}

fn message(r: &ReadRowsResponse) -> &[u8] {
    match &r.rows {
        Some(read_rows_response::Rows::ArrowRecordBatch(b)) => &b.serialized_record_batch,
        other => panic!("no Arrow batch: {other:?}"),
    }
}

/// Decodes responses with the session's schema, as a client does.
fn decode(s: &ReadSession, responses: &[ReadRowsResponse]) -> Vec<RecordBatch> {
    let mut bytes = schema_bytes(s);
    for r in responses {
        bytes.extend_from_slice(message(r));
    }
    StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            let col = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
            col.values().to_vec()
        })
        .collect()
}

#[tokio::test]
async fn sessions_and_responses_have_bigquery_shapes() {
    let ctx = Ctx::new().await;
    ctx.table(10).await;
    let s = ctx.session("t", 4, Default::default()).await.unwrap();
    // A 10-row table is one stream whatever max_stream_count allows, as in BigQuery.
    assert_eq!(s.streams.len(), 1);
    assert!(
        s.name.starts_with("projects/p/locations/us/sessions/"),
        "{}",
        s.name
    );
    assert!(
        s.streams[0]
            .name
            .starts_with(&format!("{}/streams/", s.name))
    );
    assert_eq!(s.table, "projects/p/datasets/ds/tables/t");
    assert_eq!(s.data_format, DataFormat::Arrow as i32);
    assert_eq!(s.estimated_row_count, 10);
    assert!(s.expire_time.is_some());
    let schema = arrow_schema(&s);
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "name", "st", "arr"]);
    let DataType::List(item) = schema.field(3).data_type() else {
        panic!("{:?}", schema.field(3))
    };
    assert!(!schema.field(3).is_nullable() && !item.is_nullable());

    let (responses, end) = ctx.read(&s.streams[0].name, 0).await;
    end.unwrap();
    assert!(responses[0].schema.is_some());
    assert!(responses[1..].iter().all(|r| r.schema.is_none()));
    let batches = decode(&s, &responses);
    assert_eq!(ids(&batches), (1..=10).collect::<Vec<_>>());
    let last = responses.last().unwrap();
    for (r, b) in responses.iter().zip(&batches) {
        assert_eq!(r.row_count, b.num_rows() as i64);
        assert!(r.stats.as_ref().unwrap().progress.is_some());
        assert!(r.throttle_state.is_some());
    }
    let p = last.stats.as_ref().unwrap().progress.as_ref().unwrap();
    assert_eq!(p.at_response_end, 1.0);
    let b = &batches[0];
    let name = b.column(1).as_string::<i32>();
    assert!(name.is_null(2) && name.value(0) == "name 1");
    let arr = b.column(3).as_list::<i32>();
    assert_eq!(arr.value_length(2), 0);
    assert_eq!(arr.value(1).as_primitive::<Int64Type>().values(), &[1, 2]);

    // An offset skips rows; the schema comes again in the call's first response.
    let (responses, end) = ctx.read(&s.streams[0].name, 4).await;
    end.unwrap();
    assert!(responses[0].schema.is_some());
    assert_eq!(ids(&decode(&s, &responses)), (5..=10).collect::<Vec<_>>());
    let p = responses[0]
        .stats
        .as_ref()
        .unwrap()
        .progress
        .as_ref()
        .unwrap();
    assert_eq!(p.at_response_start, 0.4);
    let (responses, end) = ctx.read(&s.streams[0].name, 10).await;
    end.unwrap();
    assert!(responses.is_empty());
    let (_, end) = ctx.read(&s.streams[0].name, 11).await;
    assert_eq!(end.unwrap_err().code(), Code::OutOfRange);
    let (_, end) = ctx.read(&s.streams[0].name, -1).await;
    assert_eq!(end.unwrap_err().code(), Code::InvalidArgument);
    let (_, end) = ctx.read(&format!("{}/streams/nope", s.name), 0).await;
    assert_eq!(end.unwrap_err().code(), Code::NotFound);

    // An empty result has no streams.
    let none = ctx
        .session(
            "t",
            1,
            read_session::TableReadOptions {
                row_restriction: "id > 100".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(none.streams.is_empty());
    assert_eq!(arrow_schema(&none).fields().len(), 4);
}

#[tokio::test]
async fn streams_split_and_cover_every_row_once() {
    let ctx = Ctx::new().await;
    ctx.table(20_000).await;
    let s = ctx.session("t", 3, Default::default()).await.unwrap();
    assert_eq!(s.streams.len(), 3);
    let mut all = all_ids(&ctx, &s).await;
    all.sort();
    assert_eq!(all, (1..=20_000).collect::<Vec<_>>());

    // Split the first stream at a quarter: the two children are its rows, in order.
    let first = &s.streams[0].name;
    let (whole, _) = ctx.read(first, 0).await;
    let whole = ids(&decode(&s, &whole));
    let split = ctx
        .rpc
        .clone()
        .split_read_stream(SplitReadStreamRequest {
            name: first.clone(),
            fraction: 0.25,
        })
        .await
        .unwrap()
        .into_inner();
    let (head, _) = ctx.read(&split.primary_stream.unwrap().name, 0).await;
    let remainder = split.remainder_stream.unwrap().name;
    let (tail, _) = ctx.read(&remainder, 0).await;
    let head = ids(&decode(&s, &head));
    let head_len = head.len();
    assert_eq!(head_len, (whole.len() as f64 * 0.25).round() as usize);
    assert_eq!([head, ids(&decode(&s, &tail))].concat(), whole);
    // A child reads from an offset of its own.
    let (tail_from_10, _) = ctx.read(&remainder, 10).await;
    assert_eq!(ids(&decode(&s, &tail_from_10))[0], whole[head_len + 10]);

    let err = ctx
        .rpc
        .clone()
        .split_read_stream(SplitReadStreamRequest {
            name: first.clone(),
            fraction: 1.5,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

/// Every row of a session, in stream order.
async fn all_ids(ctx: &Ctx, s: &ReadSession) -> Vec<i64> {
    let mut all = Vec::new();
    for st in &s.streams {
        let (responses, end) = ctx.read(&st.name, 0).await;
        end.unwrap();
        all.extend(ids(&decode(s, &responses)));
    }
    all
}

/// A second session asking the same of an unchanged table is served the encodings of the
/// first; once the table changes (DML, a streamed insert, a replacement), a new session
/// sees the new rows, never the kept ones.
#[tokio::test]
async fn sessions_again_serve_the_table_as_it_is_now() {
    let ctx = Ctx::new().await;
    ctx.table(5_000).await;
    let first = ctx.session("t", 2, Default::default()).await.unwrap();
    let second = ctx.session("t", 2, Default::default()).await.unwrap();
    assert_ne!(first.name, second.name);
    let (a, b) = (all_ids(&ctx, &first).await, all_ids(&ctx, &second).await);
    assert_eq!(a, (1..=5_000).collect::<Vec<_>>());
    assert_eq!(a, b);
    // Reading a stream again (its messages were moved into the first call's responses)
    // still returns its rows.
    assert_eq!(all_ids(&ctx, &first).await, a);

    ctx.query("DELETE FROM ds.t WHERE id > 4000").await;
    let after_dml = ctx.session("t", 2, Default::default()).await.unwrap();
    assert_eq!(
        all_ids(&ctx, &after_dml).await,
        (1..=4_000).collect::<Vec<_>>()
    );

    ctx.rest
        .post_ok(
            "/datasets/ds/tables/t/insertAll",
            json!({"rows": [{"json": {"id": 9_999, "name": "new"}}]}),
        )
        .await;
    let after_insert = ctx.session("t", 2, Default::default()).await.unwrap();
    let mut got = all_ids(&ctx, &after_insert).await;
    got.sort();
    assert_eq!(got, [(1..=4_000).collect::<Vec<_>>(), vec![9_999]].concat());

    ctx.query("CREATE OR REPLACE TABLE ds.t AS SELECT 7 AS id")
        .await;
    let replaced = ctx.session("t", 2, Default::default()).await.unwrap();
    assert_eq!(all_ids(&ctx, &replaced).await, vec![7]);
    // The same columns with another filter or compression is another encoding.
    ctx.table_named("t2", 3_000).await;
    let filtered = ctx
        .session(
            "t2",
            2,
            read_session::TableReadOptions {
                row_restriction: "id <= 10".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all_ids(&ctx, &filtered).await, (1..=10).collect::<Vec<_>>());
    let unfiltered = ctx.session("t2", 2, Default::default()).await.unwrap();
    assert_eq!(
        all_ids(&ctx, &unfiltered).await,
        (1..=3_000).collect::<Vec<_>>()
    );
}

fn compressed(codec: CompressionCodec) -> read_session::TableReadOptions {
    read_session::TableReadOptions {
        output_format_serialization_options: Some(
            read_session::table_read_options::OutputFormatSerializationOptions::ArrowSerializationOptions(
                ArrowSerializationOptions {
                    buffer_compression: codec as i32,
                    ..Default::default()
                },
            ),
        ),
        ..Default::default()
    }
}

/// The body compression named in a record batch message's header.
fn ipc_codec(message: &[u8]) -> Option<arrow_ipc::CompressionType> {
    let m = arrow_ipc::root_as_message(&message[8..]).unwrap();
    m.header_as_record_batch()
        .unwrap()
        .compression()
        .map(|c| c.codec())
}

#[tokio::test]
async fn buffer_compression_is_honoured() {
    let ctx = Ctx::new().await;
    ctx.table(5_000).await;
    let plain = ctx.session("t", 1, Default::default()).await.unwrap();
    let (plain_rs, _) = ctx.read(&plain.streams[0].name, 0).await;
    assert_eq!(ipc_codec(message(&plain_rs[0])), None);
    let plain_size: usize = plain_rs.iter().map(|r| message(r).len()).sum();
    let want = decode(&plain, &plain_rs);
    for (codec, ipc) in [
        (
            CompressionCodec::Lz4Frame,
            arrow_ipc::CompressionType::LZ4_FRAME,
        ),
        (CompressionCodec::Zstd, arrow_ipc::CompressionType::ZSTD),
    ] {
        let s = ctx.session("t", 1, compressed(codec)).await.unwrap();
        let ro = s.read_options.as_ref().unwrap();
        assert!(ro.output_format_serialization_options.is_some());
        let (rs, end) = ctx.read(&s.streams[0].name, 0).await;
        end.unwrap();
        assert!(
            rs.iter().all(|r| ipc_codec(message(r)) == Some(ipc)),
            "{codec:?}"
        );
        let size: usize = rs.iter().map(|r| message(r).len()).sum();
        assert!(size < plain_size / 2, "{codec:?}: {size} vs {plain_size}");
        assert_eq!(decode(&s, &rs), want, "{codec:?}");
        // A read from an offset inside a chunk is encoded on the fly, compressed too.
        let (rs, _) = ctx.read(&s.streams[0].name, 1234).await;
        assert_eq!(ipc_codec(message(&rs[0])), Some(ipc));
        assert_eq!(ids(&decode(&s, &rs)), (1235..=5000).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn projection_and_restriction() {
    let ctx = Ctx::new().await;
    ctx.table(100).await;
    let s = ctx
        .session(
            "t",
            1,
            read_session::TableReadOptions {
                // Asked in any order, served in table order; `st.b` keeps one field.
                selected_fields: vec!["st.b".into(), "id".into()],
                row_restriction: "id > 5 AND st.a <= 16 AND name IS NOT NULL".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let schema = arrow_schema(&s);
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "st"]);
    let DataType::Struct(sub) = schema.field(1).data_type() else {
        panic!()
    };
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].name(), "b");
    let (rs, _) = ctx.read(&s.streams[0].name, 0).await;
    let batches = decode(&s, &rs);
    assert_eq!(ids(&batches), vec![7, 8]);
    let st = batches[0].column(1).as_struct();
    let b = st.column(0).as_string::<i32>();
    assert_eq!((b.value(0), b.is_null(1)), ("x", true));

    let err = |r: Result<ReadSession, tonic::Status>| r.unwrap_err();
    let e = err(ctx.session("missing", 1, Default::default()).await);
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    assert!(e.message().contains("missing"), "{e:?}");
    let e = err(ctx
        .session(
            "t",
            1,
            read_session::TableReadOptions {
                selected_fields: vec!["id".into(), "nope".into()],
                ..Default::default()
            },
        )
        .await);
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("nope"), "{e:?}");
    let e = err(ctx
        .session(
            "t",
            1,
            read_session::TableReadOptions {
                row_restriction: "no_such_column = 1".into(),
                ..Default::default()
            },
        )
        .await);
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("no_such_column"), "{e:?}");
    let mut req = CreateReadSessionRequest {
        parent: "projects/p".into(),
        read_session: Some(ReadSession {
            table: "projects/p/datasets/ds/tables/t".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = ctx
        .rpc
        .clone()
        .create_read_session(req.clone())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("data format unspecified"), "{e:?}");
    req.read_session.as_mut().unwrap().data_format = DataFormat::Arrow as i32;
    req.read_session.as_mut().unwrap().table = "ds.t".into();
    let e = ctx.rpc.clone().create_read_session(req).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn query_destination_tables_are_readable() {
    let ctx = Ctx::new().await;
    ctx.table(50).await;
    let job = ctx
        .rest
        .post_ok(
            "/jobs",
            json!({"configuration": {"query": {
                "query": "SELECT id, name FROM ds.t WHERE id <= 20", "useLegacySql": false}}}),
        )
        .await;
    let job_id = job["jobReference"]["jobId"].as_str().unwrap().to_string();
    let mut done = job;
    for _ in 0..100 {
        if done["status"]["state"] == "DONE" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        done = ctx.rest.get(&format!("/jobs/{job_id}")).await;
    }
    let dest = &done["configuration"]["query"]["destinationTable"];
    let (d, t) = (
        dest["datasetId"].as_str().unwrap(),
        dest["tableId"].as_str().unwrap(),
    );
    let req = CreateReadSessionRequest {
        parent: "projects/p".into(),
        read_session: Some(ReadSession {
            table: format!("projects/p/datasets/{d}/tables/{t}"),
            data_format: DataFormat::Arrow as i32,
            ..Default::default()
        }),
        max_stream_count: 1,
        ..Default::default()
    };
    let s = ctx
        .rpc
        .clone()
        .create_read_session(req)
        .await
        .unwrap()
        .into_inner();
    let (rs, _) = ctx.read(&s.streams[0].name, 0).await;
    let mut got = ids(&decode(&s, &rs));
    got.sort();
    assert_eq!(got, (1..=20).collect::<Vec<_>>());
}

#[tokio::test]
async fn fault_hook_cuts_a_call_after_n_rows() {
    let ctx = Ctx::new().await;
    // Seeded straight into the catalog: one Int64 column, 100,000 rows in one batch.
    let schema = vec![TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required)];
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from_iter_values(0..100_000))],
    )
    .unwrap();
    ctx.emu
        .create_table_with_batches("p", "ds", "big", schema, vec![batch])
        .unwrap();
    let s = ctx
        .session("big", 1, compressed(CompressionCodec::Zstd))
        .await
        .unwrap();
    ctx.emu.faults().cut_next_read_rows(12_345);
    let (rs, end) = ctx.read(&s.streams[0].name, 0).await;
    let e = end.unwrap_err();
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    assert_eq!(ctx.emu.faults().read_rows_cut(), 1);
    let head = ids(&decode(&s, &rs));
    assert_eq!(head, (0..12_345).collect::<Vec<_>>());
    // Resumed at the offset reached, the rest arrives once.
    let (rs, end) = ctx.read(&s.streams[0].name, head.len() as i64).await;
    end.unwrap();
    assert_eq!(ids(&decode(&s, &rs)), (12_345..100_000).collect::<Vec<_>>());
    assert_eq!(ctx.emu.faults().read_rows_cut(), 1);
}

/// Loopback throughput of one stream of pre-encoded batches. Timing depends on the
/// machine and the build, so this is measured on request:
/// `cargo test --release -p bigq-emulator --test integration storage_read:: -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread")]
#[ignore]
async fn one_stream_throughput() {
    let ctx = Ctx::new().await;
    let schema = vec![
        TableFieldSchema::new("id", FieldType::Int64),
        TableFieldSchema::new("s", FieldType::String),
    ];
    let columns = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let rows = 2_000_000;
    let batches = (0..rows / 100_000)
        .map(|k| {
            RecordBatch::try_new(
                columns.clone(),
                vec![
                    Arc::new(Int64Array::from_iter_values(k * 100_000..(k + 1) * 100_000)),
                    Arc::new(StringArray::from_iter_values(
                        (0..100_000).map(|i| format!("{i:0>100}")),
                    )),
                ],
            )
            .unwrap()
        })
        .collect();
    ctx.emu
        .create_table_with_batches("p", "ds", "wide", schema, batches)
        .unwrap();
    let s = ctx.session("wide", 1, Default::default()).await.unwrap();
    for _ in 0..3 {
        let started = std::time::Instant::now();
        let req = ReadRowsRequest {
            read_stream: s.streams[0].name.clone(),
            ..Default::default()
        };
        let mut call = ctx.rpc.clone().read_rows(req).await.unwrap().into_inner();
        let (mut bytes, mut n) = (0usize, 0i64);
        while let Some(r) = call.message().await.unwrap() {
            bytes += message(&r).len();
            n += r.row_count;
        }
        let secs = started.elapsed().as_secs_f64();
        assert_eq!(n, rows);
        println!(
            "one stream: {:.0} MB in {secs:.3} s = {:.2} GB/s",
            bytes as f64 / 1e6,
            bytes as f64 / 1e9 / secs
        );
    }
}

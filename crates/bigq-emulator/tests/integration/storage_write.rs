//! The Storage Write API (gRPC) at the wire: stream types and their visibility rules,
//! offsets, row errors, nested and repeated columns, and the fault hook, with protobuf rows
//! encoded by hand here.

use bigq_emulator::Emulator;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    AppendRowsRequest, AppendRowsResponse, BatchCommitWriteStreamsRequest,
    CreateWriteStreamRequest, FinalizeWriteStreamRequest, FlushRowsRequest, GetWriteStreamRequest,
    ProtoRows, ProtoSchema, WriteStream, append_rows_request, append_rows_response,
    big_query_write_client::BigQueryWriteClient, write_stream,
};
use gcloud_sdk::prost_types::field_descriptor_proto::{Label, Type};
use gcloud_sdk::prost_types::{DescriptorProto, FieldDescriptorProto};
use serde_json::{Value, json};
use tonic::Code;
use tonic::transport::Channel;

const TABLE: &str = "projects/p/datasets/ds/tables/t";

use crate::common;

use common::Rest;

struct Ctx {
    emu: Emulator,
    rpc: BigQueryWriteClient<Channel>,
    rest: Rest,
}

impl Ctx {
    async fn new() -> Ctx {
        let emu = common::emulator().await;
        let ctx = Ctx {
            rpc: BigQueryWriteClient::new(common::channel(&emu).await),
            rest: Rest::new(&emu),
            emu,
        };
        ctx.rest.dataset("ds").await;
        ctx.query(
            "CREATE TABLE ds.t (id INT64 NOT NULL, name STRING, day DATE, \
             tags ARRAY<INT64>, st STRUCT<a INT64, b STRING>)",
        )
        .await;
        ctx
    }

    async fn query(&self, sql: &str) -> Value {
        self.rest.query(sql).await
    }

    async fn ids(&self) -> Vec<i64> {
        let v = self.query("SELECT id FROM ds.t ORDER BY id").await;
        v["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|r| r["f"][0]["v"].as_str().unwrap().parse().unwrap())
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn create(&self, kind: write_stream::Type) -> WriteStream {
        self.rpc
            .clone()
            .create_write_stream(CreateWriteStreamRequest {
                parent: TABLE.into(),
                write_stream: Some(WriteStream {
                    r#type: kind as i32,
                    ..Default::default()
                }),
            })
            .await
            .unwrap()
            .into_inner()
    }

    /// Sends the requests on one connection; the responses, then how the call ended.
    async fn append(
        &self,
        reqs: Vec<AppendRowsRequest>,
    ) -> (Vec<AppendRowsResponse>, Result<(), tonic::Status>) {
        let mut out = Vec::new();
        let mut call = match self
            .rpc
            .clone()
            .append_rows(futures::stream::iter(reqs))
            .await
        {
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

fn field(name: &str, number: i32, t: Type, label: Label) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(number),
        r#type: Some(t as i32),
        label: Some(label as i32),
        ..Default::default()
    }
}

fn descriptor() -> DescriptorProto {
    DescriptorProto {
        name: Some("Row".into()),
        field: vec![
            field("id", 1, Type::Int64, Label::Optional),
            field("name", 2, Type::String, Label::Optional),
            field("day", 3, Type::Int32, Label::Optional),
            field("tags", 4, Type::Int64, Label::Repeated),
            FieldDescriptorProto {
                type_name: Some("Inner".into()),
                ..field("st", 5, Type::Message, Label::Optional)
            },
        ],
        nested_type: vec![DescriptorProto {
            name: Some("Inner".into()),
            field: vec![
                field("a", 1, Type::Int64, Label::Optional),
                field("b", 2, Type::String, Label::Optional),
            ],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn len_field(out: &mut Vec<u8>, number: u64, b: &[u8]) {
    varint(out, number << 3 | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A row: id, name, day (days since epoch), tags (packed), st {a, b}.
fn row(id: i64) -> Vec<u8> {
    let mut m = Vec::new();
    varint(&mut m, 1 << 3);
    varint(&mut m, id as u64);
    len_field(&mut m, 2, format!("n{id}").as_bytes());
    varint(&mut m, 3 << 3);
    varint(&mut m, 19_000);
    let mut packed = Vec::new();
    for t in 0..(id % 3) {
        varint(&mut packed, t as u64);
    }
    len_field(&mut m, 4, &packed);
    let mut inner = Vec::new();
    varint(&mut inner, 1 << 3);
    varint(&mut inner, (id * 10) as u64);
    len_field(&mut inner, 2, b"x");
    len_field(&mut m, 5, &inner);
    m
}

fn request(
    stream: &str,
    offset: Option<i64>,
    rows: Vec<Vec<u8>>,
    schema: bool,
) -> AppendRowsRequest {
    AppendRowsRequest {
        write_stream: stream.into(),
        offset,
        rows: Some(append_rows_request::Rows::ProtoRows(
            append_rows_request::ProtoData {
                writer_schema: schema.then(|| ProtoSchema {
                    proto_descriptor: Some(descriptor()),
                }),
                rows: Some(ProtoRows {
                    serialized_rows: rows,
                }),
            },
        )),
        ..Default::default()
    }
}

fn offset(r: &AppendRowsResponse) -> Option<i64> {
    match &r.response {
        Some(append_rows_response::Response::AppendResult(a)) => a.offset,
        other => panic!("not an append result: {other:?}"),
    }
}

fn error_code(r: &AppendRowsResponse) -> i32 {
    match &r.response {
        Some(append_rows_response::Response::Error(s)) => s.code,
        other => panic!("not an error: {other:?}"),
    }
}

#[tokio::test]
async fn default_stream_rows_are_queryable_at_once() {
    let ctx = Ctx::new().await;
    let default = format!("{TABLE}/streams/_default");
    let (rs, end) = ctx
        .append(vec![
            request(&default, None, vec![row(1), row(2)], true),
            // Later requests may leave out the stream name and the schema.
            request("", None, vec![row(3)], false),
        ])
        .await;
    end.unwrap();
    assert_eq!(rs.len(), 2);
    assert!(rs.iter().all(|r| offset(r).is_none()));
    assert_eq!(ctx.ids().await, vec![1, 2, 3]);
    let v = ctx
        .query("SELECT name, day, tags, st.a, st.b FROM ds.t WHERE id = 2")
        .await;
    let f = &v["rows"][0]["f"];
    assert_eq!(f[0]["v"], "n2");
    assert_eq!(f[1]["v"], "2022-01-08");
    assert_eq!(f[2]["v"], json!([{"v": "0"}, {"v": "1"}]));
    assert_eq!(
        (f[3]["v"].as_str(), f[4]["v"].as_str()),
        (Some("20"), Some("x"))
    );

    let got = ctx
        .rpc
        .clone()
        .get_write_stream(GetWriteStreamRequest {
            name: default.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.r#type, write_stream::Type::Committed as i32);
    let e = ctx
        .rpc
        .clone()
        .finalize_write_stream(FinalizeWriteStreamRequest { name: default })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let e = ctx
        .rpc
        .clone()
        .get_write_stream(GetWriteStreamRequest {
            name: format!("{TABLE}/streams/nope"),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("Invalid stream name"), "{e:?}");
}

#[tokio::test]
async fn committed_stream_checks_offsets() {
    let ctx = Ctx::new().await;
    let s = ctx.create(write_stream::Type::Committed).await;
    assert!(s.table_schema.is_some() && s.commit_time.is_some());
    let (rs, end) = ctx
        .append(vec![
            request(&s.name, Some(0), vec![row(1), row(2)], true),
            request(&s.name, Some(5), vec![row(9)], false),
            request(&s.name, Some(0), vec![row(9)], false),
            request(&s.name, Some(2), vec![row(3)], false),
            request(&s.name, None, vec![row(4)], false),
        ])
        .await;
    end.unwrap();
    assert_eq!(offset(&rs[0]), Some(0));
    assert_eq!(error_code(&rs[1]), Code::OutOfRange as i32);
    assert_eq!(error_code(&rs[2]), Code::AlreadyExists as i32);
    assert_eq!(offset(&rs[3]), Some(2));
    assert_eq!(offset(&rs[4]), Some(3));
    assert_eq!(ctx.ids().await, vec![1, 2, 3, 4]);
    let f = ctx
        .rpc
        .clone()
        .finalize_write_stream(FinalizeWriteStreamRequest {
            name: s.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(f.row_count, 4);
    let (rs, _) = ctx
        .append(vec![request(&s.name, None, vec![row(5)], true)])
        .await;
    assert_eq!(error_code(&rs[0]), Code::InvalidArgument as i32);
}

#[tokio::test]
async fn pending_rows_appear_on_commit_and_buffered_on_flush() {
    let ctx = Ctx::new().await;
    let p = ctx.create(write_stream::Type::Pending).await;
    let (rs, end) = ctx
        .append(vec![request(&p.name, None, vec![row(1), row(2)], true)])
        .await;
    end.unwrap();
    assert_eq!(offset(&rs[0]), Some(0));
    assert!(ctx.ids().await.is_empty());
    let commit = |streams: Vec<String>| {
        let mut rpc = ctx.rpc.clone();
        async move {
            rpc.batch_commit_write_streams(BatchCommitWriteStreamsRequest {
                parent: TABLE.into(),
                write_streams: streams,
            })
            .await
            .unwrap()
            .into_inner()
        }
    };
    // Not finalized yet: an error, nothing committed.
    let r = commit(vec![p.name.clone()]).await;
    assert_eq!(r.stream_errors.len(), 1);
    assert!(r.commit_time.is_none());
    assert!(ctx.ids().await.is_empty());
    ctx.rpc
        .clone()
        .finalize_write_stream(FinalizeWriteStreamRequest {
            name: p.name.clone(),
        })
        .await
        .unwrap();
    let r = commit(vec![p.name.clone()]).await;
    assert!(
        r.stream_errors.is_empty() && r.commit_time.is_some(),
        "{r:?}"
    );
    assert_eq!(ctx.ids().await, vec![1, 2]);
    assert_eq!(commit(vec![p.name.clone()]).await.stream_errors.len(), 1);

    let b = ctx.create(write_stream::Type::Buffered).await;
    let flush = |offset: i64| {
        let mut rpc = ctx.rpc.clone();
        let name = b.name.clone();
        async move {
            rpc.flush_rows(FlushRowsRequest {
                write_stream: name,
                offset: Some(offset),
            })
            .await
        }
    };
    let e = flush(0).await.unwrap_err();
    assert_eq!(e.code(), Code::OutOfRange);
    assert!(
        e.message().contains("beyond the end of the stream"),
        "{e:?}"
    );
    ctx.append(vec![request(
        &b.name,
        None,
        vec![row(10), row(11), row(12)],
        true,
    )])
    .await
    .1
    .unwrap();
    assert_eq!(ctx.ids().await, vec![1, 2]);
    assert_eq!(flush(1).await.unwrap().into_inner().offset, 1);
    assert_eq!(ctx.ids().await, vec![1, 2, 10, 11]);
    flush(2).await.unwrap();
    assert_eq!(ctx.ids().await, vec![1, 2, 10, 11, 12]);
}

#[tokio::test]
async fn bad_rows_are_row_errors_and_nothing_is_appended() {
    let ctx = Ctx::new().await;
    let default = format!("{TABLE}/streams/_default");
    // Row 1 lacks the REQUIRED id; row 2 has invalid UTF-8 in name.
    let mut no_id = Vec::new();
    len_field(&mut no_id, 2, b"anon");
    let mut bad_utf8 = row(7);
    len_field(&mut bad_utf8, 2, &[0xff]);
    let (rs, end) = ctx
        .append(vec![request(
            &default,
            None,
            vec![row(1), no_id, bad_utf8],
            true,
        )])
        .await;
    end.unwrap();
    assert_eq!(error_code(&rs[0]), Code::InvalidArgument as i32);
    // Every bad row is reported, each naming its column.
    let idx: Vec<i64> = rs[0].row_errors.iter().map(|e| e.index).collect();
    assert_eq!(idx, vec![1, 2], "{:?}", rs[0].row_errors);
    assert_eq!(rs[0].row_errors[0].message, "id: Missing required field.");
    assert_eq!(
        rs[0].row_errors[1].message,
        "name: invalid UTF-8 in a string"
    );
    let (rs, _) = ctx
        .append(vec![request(
            &default,
            None,
            vec![row(1), {
                let mut m = Vec::new();
                len_field(&mut m, 2, b"anon");
                m
            }],
            true,
        )])
        .await;
    assert_eq!(rs[0].row_errors.len(), 1);
    assert_eq!(rs[0].row_errors[0].index, 1);
    assert!(
        rs[0].row_errors[0].message.contains("id"),
        "{:?}",
        rs[0].row_errors
    );
    assert!(ctx.ids().await.is_empty());

    // A writer schema with a field the table lacks.
    let mut req = request(&default, None, vec![row(1)], true);
    if let Some(append_rows_request::Rows::ProtoRows(p)) = &mut req.rows {
        let d = p
            .writer_schema
            .as_mut()
            .unwrap()
            .proto_descriptor
            .as_mut()
            .unwrap();
        d.field
            .push(field("extra", 9, Type::Int64, Label::Optional));
    }
    let (rs, _) = ctx.append(vec![req]).await;
    assert_eq!(error_code(&rs[0]), Code::InvalidArgument as i32);
    assert!(ctx.ids().await.is_empty());
}

#[tokio::test]
async fn fault_hook_cuts_a_connection_after_n_requests() {
    let ctx = Ctx::new().await;
    let s = ctx.create(write_stream::Type::Committed).await;
    ctx.emu.faults().cut_next_append_rows(1);
    let (rs, end) = ctx
        .append(vec![
            request(&s.name, Some(0), vec![row(1)], true),
            request(&s.name, Some(1), vec![row(2)], false),
        ])
        .await;
    assert_eq!(rs.len(), 1);
    assert_eq!(end.unwrap_err().code(), Code::Unavailable);
    assert_eq!(ctx.emu.faults().append_rows_cut(), 1);
    // Reconnected, the writer resends from the offset it had confirmed.
    let (rs, end) = ctx
        .append(vec![request(&s.name, Some(1), vec![row(2)], true)])
        .await;
    end.unwrap();
    assert_eq!(offset(&rs[0]), Some(1));
    assert_eq!(ctx.ids().await, vec![1, 2]);
}

#[tokio::test]
async fn arrow_rows_are_appended_by_column_name() {
    use bigq_codec::ipc::IpcEncoder;
    use datafusion::arrow::array::{Int64Array, ListArray, StringArray};
    use datafusion::arrow::buffer::OffsetBuffer;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    use gcloud_sdk::google::cloud::bigquery::storage::v1::{ArrowRecordBatch, ArrowSchema};
    use std::sync::Arc;

    let ctx = Ctx::new().await;
    // Columns in another order, `day` and `st` left out, tags as BigQuery's list type.
    let schema = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Int64, false))),
            false,
        ),
        Field::new("ID", DataType::Int64, true),
    ]));
    let batch = |ids: Vec<Option<i64>>| {
        let n = ids.len();
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("a{i}")),
                )),
                Arc::new(ListArray::new(
                    Arc::new(Field::new("item", DataType::Int64, false)),
                    OffsetBuffer::from_lengths(0..n),
                    Arc::new(Int64Array::from_iter_values(
                        (0..n).flat_map(|i| 0..i as i64),
                    )),
                    None,
                )),
                Arc::new(Int64Array::from(ids)),
            ],
        )
        .unwrap()
    };
    let enc = IpcEncoder::new(None).unwrap();
    let req = |b: &RecordBatch, with_schema: bool| AppendRowsRequest {
        write_stream: format!("{TABLE}/streams/_default"),
        rows: Some(append_rows_request::Rows::ArrowRows(
            append_rows_request::ArrowData {
                writer_schema: with_schema.then(|| ArrowSchema {
                    serialized_schema: enc.schema(&schema),
                }),
                rows: Some(ArrowRecordBatch {
                    serialized_record_batch: enc.batch(b).unwrap(),
                    ..Default::default()
                }),
            },
        )),
        ..Default::default()
    };
    let (rs, end) = ctx
        .append(vec![
            req(&batch(vec![Some(1), Some(2)]), true),
            req(&batch(vec![Some(3)]), false),
            // A NULL in the REQUIRED id: a row error, nothing appended.
            req(&batch(vec![Some(4), None]), false),
        ])
        .await;
    end.unwrap();
    assert!(
        rs[0].response.is_some() && rs[0].row_errors.is_empty(),
        "{:?}",
        rs[0]
    );
    assert!(rs[1].row_errors.is_empty(), "{:?}", rs[1]);
    assert_eq!(error_code(&rs[2]), Code::InvalidArgument as i32);
    assert_eq!(rs[2].row_errors.len(), 1);
    assert_eq!(rs[2].row_errors[0].index, 1);
    assert_eq!(ctx.ids().await, vec![1, 2, 3]);
    let v = ctx.query("SELECT name, tags FROM ds.t WHERE id = 2").await;
    assert_eq!(v["rows"][0]["f"][0]["v"], "a1");
    assert_eq!(v["rows"][0]["f"][1]["v"], json!([{"v": "0"}]));
}

#[tokio::test]
async fn missing_value_interpretations_fill_absent_columns_with_defaults() {
    use append_rows_request::MissingValueInterpretation as Mvi;
    let ctx = Ctx::new().await;
    ctx.rest
        .post_ok(
            "/datasets/ds/tables",
            json!({
                "tableReference": {"projectId": "p", "datasetId": "ds", "tableId": "d"},
                "schema": {"fields": [
                    {"name": "id", "type": "INTEGER", "mode": "REQUIRED"},
                    {"name": "note", "type": "STRING", "defaultValueExpression": "'none'"},
                    {"name": "n", "type": "INTEGER", "defaultValueExpression": "42"},
                    {"name": "at", "type": "TIMESTAMP", "defaultValueExpression": "CURRENT_TIMESTAMP()"},
                    {"name": "plain", "type": "STRING"}
                ]}
            }),
        )
        .await;
    let stream = "projects/p/datasets/ds/tables/d/streams/_default";
    let id_only = DescriptorProto {
        name: Some("Row".into()),
        field: vec![field("id", 1, Type::Int64, Label::Optional)],
        ..Default::default()
    };
    let req = |id: i64, default: Mvi, per_column: &[(&str, Mvi)]| {
        let mut m = Vec::new();
        varint(&mut m, 1 << 3);
        varint(&mut m, id as u64);
        AppendRowsRequest {
            write_stream: stream.into(),
            rows: Some(append_rows_request::Rows::ProtoRows(
                append_rows_request::ProtoData {
                    writer_schema: Some(ProtoSchema {
                        proto_descriptor: Some(id_only.clone()),
                    }),
                    rows: Some(ProtoRows {
                        serialized_rows: vec![m],
                    }),
                },
            )),
            default_missing_value_interpretation: default as i32,
            missing_value_interpretations: per_column
                .iter()
                .map(|(c, v)| (c.to_string(), *v as i32))
                .collect(),
            ..Default::default()
        }
    };
    let (rs, end) = ctx
        .append(vec![
            req(1, Mvi::Unspecified, &[]),
            req(2, Mvi::DefaultValue, &[]),
            req(3, Mvi::DefaultValue, &[("N", Mvi::NullValue)]),
            req(4, Mvi::NullValue, &[("note", Mvi::DefaultValue)]),
        ])
        .await;
    end.unwrap();
    assert!(rs.iter().all(|r| r.row_errors.is_empty()), "{rs:?}");
    let v = ctx
        .query("SELECT id, note, n, at IS NOT NULL, plain FROM ds.d ORDER BY id")
        .await;
    let rows: Vec<Vec<Value>> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["f"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["v"].clone())
                .collect()
        })
        .collect();
    let null = Value::Null;
    assert_eq!(
        rows,
        vec![
            vec![
                json!("1"),
                null.clone(),
                null.clone(),
                json!("false"),
                null.clone()
            ],
            vec![
                json!("2"),
                json!("none"),
                json!("42"),
                json!("true"),
                null.clone()
            ],
            vec![
                json!("3"),
                json!("none"),
                null.clone(),
                json!("true"),
                null.clone()
            ],
            vec![
                json!("4"),
                json!("none"),
                null.clone(),
                json!("false"),
                null.clone()
            ],
        ]
    );
}

/// Table `ds.k (id INT64 REQUIRED, name STRING)` with primary key `id`.
async fn keyed_table(ctx: &Ctx) {
    ctx.rest
        .post_ok(
            "/datasets/ds/tables",
            json!({
                "tableReference": {"projectId": "p", "datasetId": "ds", "tableId": "k"},
                "schema": {"fields": [
                    {"name": "id", "type": "INTEGER", "mode": "REQUIRED"},
                    {"name": "name", "type": "STRING"},
                ]},
                "tableConstraints": {"primaryKey": {"columns": ["id"]}},
            }),
        )
        .await;
}

/// The descriptor of change rows of `ds.k` (or `ds.t`'s first two columns).
fn change_descriptor() -> DescriptorProto {
    DescriptorProto {
        name: Some("Change".into()),
        field: vec![
            field("id", 1, Type::Int64, Label::Optional),
            field("name", 2, Type::String, Label::Optional),
            field("_CHANGE_TYPE", 3, Type::String, Label::Optional),
            field("_CHANGE_SEQUENCE_NUMBER", 4, Type::String, Label::Optional),
        ],
        ..Default::default()
    }
}

/// A change row: id, name, `_CHANGE_TYPE`, `_CHANGE_SEQUENCE_NUMBER` when given.
fn change_row(id: i64, name: &str, kind: &str, seq: Option<&str>) -> Vec<u8> {
    let mut m = Vec::new();
    varint(&mut m, 1 << 3);
    varint(&mut m, id as u64);
    len_field(&mut m, 2, name.as_bytes());
    len_field(&mut m, 3, kind.as_bytes());
    if let Some(s) = seq {
        len_field(&mut m, 4, s.as_bytes());
    }
    m
}

fn change_request(stream: &str, offset: Option<i64>, rows: Vec<Vec<u8>>) -> AppendRowsRequest {
    AppendRowsRequest {
        write_stream: stream.into(),
        offset,
        rows: Some(append_rows_request::Rows::ProtoRows(
            append_rows_request::ProtoData {
                writer_schema: Some(ProtoSchema {
                    proto_descriptor: Some(change_descriptor()),
                }),
                rows: Some(ProtoRows {
                    serialized_rows: rows,
                }),
            },
        )),
        ..Default::default()
    }
}

fn error_message(r: &AppendRowsResponse) -> &str {
    match &r.response {
        Some(append_rows_response::Response::Error(s)) => &s.message,
        other => panic!("not an error: {other:?}"),
    }
}

async fn keyed_rows(ctx: &Ctx) -> Vec<(String, String)> {
    let v = ctx.query("SELECT id, name FROM ds.k ORDER BY id").await;
    v["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let s = |i: usize| r["f"][i]["v"].as_str().unwrap_or("NULL").to_string();
                    (s(0), s(1))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn change_rows_merge_by_primary_key_on_the_default_stream() {
    let ctx = Ctx::new().await;
    keyed_table(&ctx).await;
    let default = "projects/p/datasets/ds/tables/k/streams/_default";
    let (rs, end) = ctx
        .append(vec![
            change_request(
                default,
                None,
                vec![
                    change_row(1, "a", "UPSERT", Some("1")),
                    change_row(2, "b", "UPSERT", Some("1")),
                    change_row(3, "c", "UPSERT", None),
                ],
            ),
            change_request(
                default,
                None,
                vec![
                    change_row(1, "a2", "UPSERT", Some("2")),
                    // Lower than the current row's: ignored.
                    change_row(2, "", "DELETE", Some("0")),
                    change_row(3, "", "DELETE", None),
                    // No such key: no change.
                    change_row(9, "", "DELETE", Some("5")),
                ],
            ),
        ])
        .await;
    end.unwrap();
    assert!(rs.iter().all(|r| offset(r).is_none()), "{rs:?}");
    assert_eq!(
        keyed_rows(&ctx).await,
        [("1".into(), "a2".into()), ("2".into(), "b".into())]
    );
    // The deleted key 9 keeps its number: an older upsert of it is ignored.
    let (rs, _) = ctx
        .append(vec![change_request(
            default,
            None,
            vec![
                change_row(9, "old", "UPSERT", Some("4")),
                change_row(2, "b2", "UPSERT", Some("1/0")),
            ],
        )])
        .await;
    offset(&rs[0]);
    assert_eq!(
        keyed_rows(&ctx).await,
        [("1".into(), "a2".into()), ("2".into(), "b2".into())]
    );
}

#[tokio::test]
async fn change_rows_are_refused_as_bigquery_refuses_them() {
    let ctx = Ctx::new().await;
    keyed_table(&ctx).await;
    let default = "projects/p/datasets/ds/tables/k/streams/_default";

    // A _CHANGE_TYPE other than UPSERT or DELETE, and a malformed sequence number: row
    // errors, and nothing of the request is written.
    let (rs, _) = ctx
        .append(vec![change_request(
            default,
            None,
            vec![
                change_row(1, "a", "UPSERT", None),
                change_row(2, "b", "INSERT", None),
                change_row(3, "c", "UPSERT", Some("1/2/3/4/5")),
            ],
        )])
        .await;
    assert_eq!(error_code(&rs[0]), Code::InvalidArgument as i32);
    let rows: Vec<_> = rs[0].row_errors.iter().map(|e| e.index).collect();
    assert_eq!(rows, [1, 2]);
    assert!(
        rs[0].row_errors[0]
            .message
            .contains("not a valid CHANGE_TYPE: INSERT"),
        "{:?}",
        rs[0].row_errors
    );
    assert!(keyed_rows(&ctx).await.is_empty());

    // A table without a primary key (`ds.t`).
    let (rs, _) = ctx
        .append(vec![change_request(
            &format!("{TABLE}/streams/_default"),
            None,
            vec![change_row(1, "a", "UPSERT", None)],
        )])
        .await;
    assert_eq!(error_code(&rs[0]), Code::InvalidArgument as i32);
    assert!(error_message(&rs[0]).contains("primary key"), "{rs:?}");
    assert!(ctx.ids().await.is_empty());

    // Streams other than `_default`: BigQuery's "insert mode" error, nothing written.
    for kind in [
        write_stream::Type::Committed,
        write_stream::Type::Pending,
        write_stream::Type::Buffered,
    ] {
        let s = ctx
            .rpc
            .clone()
            .create_write_stream(CreateWriteStreamRequest {
                parent: "projects/p/datasets/ds/tables/k".into(),
                write_stream: Some(WriteStream {
                    r#type: kind as i32,
                    ..Default::default()
                }),
            })
            .await
            .unwrap()
            .into_inner();
        let (rs, _) = ctx
            .append(vec![change_request(
                &s.name,
                Some(0),
                vec![change_row(1, "a", "DELETE", None)],
            )])
            .await;
        assert_eq!(error_code(&rs[0]), Code::InvalidArgument as i32, "{kind:?}");
        assert!(
            error_message(&rs[0])
                .contains("The given value is not a valid CHANGE_TYPE in insert mode: DELETE"),
            "{kind:?}: {rs:?}"
        );
    }
    assert!(keyed_rows(&ctx).await.is_empty());

    // Rows with the pseudo-columns declared but no _CHANGE_TYPE set are plain appends.
    let mut plain = Vec::new();
    varint(&mut plain, 1 << 3);
    varint(&mut plain, 5);
    let (rs, _) = ctx
        .append(vec![change_request(
            default,
            None,
            vec![plain.clone(), plain],
        )])
        .await;
    offset(&rs[0]);
    assert_eq!(
        keyed_rows(&ctx).await,
        [("5".into(), "NULL".into()), ("5".into(), "NULL".into())]
    );
}

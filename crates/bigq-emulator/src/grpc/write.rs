//! BigQueryWrite: `CreateWriteStream`, `AppendRows` (protobuf or Arrow rows), `GetWriteStream`,
//! `FinalizeWriteStream`, `FlushRows` and `BatchCommitWriteStreams`, with BigQuery's
//! visibility rules: the `_default` stream and COMMITTED streams write into the table at
//! once, BUFFERED streams up to the flushed offset, PENDING streams when committed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use arrow_ipc::reader::StreamReader;
use bigq_codec::proto::{
    CHANGE_SEQUENCE_COLUMN, CHANGE_TYPE_COLUMN, CompileError, DecodeError, RowsDecoder,
    is_change_column,
};
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use datafusion::arrow::array::{Array, new_null_array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use gcloud_sdk::google::cloud::bigquery::storage::v1 as pb;
use gcloud_sdk::google::rpc::Status as RpcStatus;
use gcloud_sdk::prost_types::DescriptorProto;
use pb::{
    AppendRowsRequest, AppendRowsResponse, BatchCommitWriteStreamsRequest,
    BatchCommitWriteStreamsResponse, CreateWriteStreamRequest, FinalizeWriteStreamRequest,
    FinalizeWriteStreamResponse, FlushRowsRequest, FlushRowsResponse, GetWriteStreamRequest,
    RowError, StorageError, WriteStream, append_rows_request, append_rows_response,
    row_error::RowErrorCode, storage_error::StorageErrorCode, write_stream,
};
use tonic::{Code, Status};

use super::changes::{self, ChangeColumns, KeyLog};
use super::service::status;
use crate::catalog::{Table, TableRef};
use crate::error::BqError;
use crate::faults::Faults;
use crate::memory::Expiry;
use crate::state::AppState;

/// One write stream's state.
#[derive(Debug)]
struct Stream {
    table: TableRef,
    kind: write_stream::Type,
    create_time: SystemTime,
    commit_time: Option<SystemTime>,
    /// Rows appended (the next offset).
    rows: u64,
    /// Rows not yet in the table (PENDING until commit, BUFFERED until flushed).
    held: Vec<RecordBatch>,
    /// BUFFERED: rows made visible so far.
    flushed: u64,
    finalized: bool,
    /// The last append, flush or finalize: an idle stream is freed after a while.
    last_used: Instant,
    /// When nothing more can happen to it (finalized, and committed if PENDING): it is
    /// freed a while later.
    done_at: Option<Instant>,
}

/// The BigQueryWrite service's state.
#[derive(Debug)]
pub struct WriteService {
    app: Arc<AppState>,
    faults: Arc<Faults>,
    streams: Mutex<HashMap<String, Stream>>,
    /// Per table written with change rows, the sequence number of each key's last change.
    keys: Mutex<HashMap<TableRef, KeyLog>>,
}

fn timestamp(t: SystemTime) -> gcloud_sdk::prost_types::Timestamp {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    gcloud_sdk::prost_types::Timestamp {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

/// `projects/{p}/datasets/{d}/tables/{t}`.
fn parse_table(path: &str) -> Option<TableRef> {
    match path.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", p, "datasets", d, "tables", t]
            if !p.is_empty() && !d.is_empty() && !t.is_empty() =>
        {
            Some(TableRef {
                project: p.to_string(),
                dataset: d.to_string(),
                table: t.to_string(),
            })
        }
        _ => None,
    }
}

/// `{table}/streams/_default`.
fn default_stream_table(name: &str) -> Option<TableRef> {
    parse_table(name.strip_suffix("/streams/_default")?)
}

/// A BigQuery type as the Storage API's.
fn proto_type(t: &FieldType) -> pb::table_field_schema::Type {
    use pb::table_field_schema::Type;
    match t {
        FieldType::String => Type::String,
        FieldType::Int64 => Type::Int64,
        FieldType::Float64 => Type::Double,
        FieldType::Record => Type::Struct,
        FieldType::Bytes => Type::Bytes,
        FieldType::Bool => Type::Bool,
        FieldType::Timestamp => Type::Timestamp,
        FieldType::Date => Type::Date,
        FieldType::Time => Type::Time,
        FieldType::DateTime => Type::Datetime,
        FieldType::Geography => Type::Geography,
        FieldType::Numeric => Type::Numeric,
        FieldType::BigNumeric => Type::Bignumeric,
        FieldType::Interval => Type::Interval,
        FieldType::Json => Type::Json,
        FieldType::Range => Type::Range,
        _ => Type::Unspecified,
    }
}

/// A BigQuery column as the Storage API's `TableFieldSchema` (a RANGE with its element
/// type).
fn proto_field(f: &TableFieldSchema) -> pb::TableFieldSchema {
    use pb::table_field_schema::{FieldElementType, Mode};
    let mode = match f.mode() {
        FieldMode::Nullable => Mode::Nullable,
        FieldMode::Required => Mode::Required,
        FieldMode::Repeated => Mode::Repeated,
    };
    pb::TableFieldSchema {
        name: f.name.clone(),
        r#type: proto_type(&f.field_type) as i32,
        mode: mode as i32,
        fields: f.fields.iter().map(proto_field).collect(),
        range_element_type: f.range_element_type.as_ref().map(|r| FieldElementType {
            r#type: proto_type(&r.element_type) as i32,
        }),
        ..Default::default()
    }
}

fn table_schema(t: &Table) -> pb::TableSchema {
    pb::TableSchema {
        fields: t.schema.iter().map(proto_field).collect(),
    }
}

fn rpc_status(code: Code, message: impl Into<String>) -> RpcStatus {
    RpcStatus {
        code: code as i32,
        message: message.into(),
        details: Vec::new(),
    }
}

/// The writer schema a connection declared: protobuf or Arrow rows.
#[derive(Debug)]
pub enum WriterSchema {
    /// Protobuf rows of this message type, with its decoder once compiled.
    Proto(Box<ProtoWriter>),
    /// Arrow record batches of this IPC-serialized schema.
    Arrow(Vec<u8>),
}

/// A connection's protobuf writer schema and the decoder compiled from it for the
/// stream's table (compiled again if the table's schema changes).
#[derive(Debug)]
pub struct ProtoWriter {
    desc: DescriptorProto,
    decoder: Option<RowsDecoder>,
    /// Whether the descriptor declares `_CHANGE_TYPE` or `_CHANGE_SEQUENCE_NUMBER`.
    changes: bool,
}

impl ProtoWriter {
    /// A writer schema whose decoder is compiled on first use.
    pub fn new(desc: DescriptorProto) -> ProtoWriter {
        let changes = desc.field.iter().any(|f| is_change_column(f.name()));
        ProtoWriter {
            desc,
            decoder: None,
            changes,
        }
    }
}

/// The columns rows are decoded into: the table's, then the change pseudo-columns (as
/// STRING) when the writer declares them and the table has no columns of their names.
fn decode_columns(
    table: &Table,
    changes: bool,
) -> Result<(Cow<'_, [TableFieldSchema]>, SchemaRef), String> {
    if !changes {
        return Ok((Cow::Borrowed(&table.schema), table.arrow_schema.clone()));
    }
    let mut columns = table.schema.clone();
    for name in [CHANGE_TYPE_COLUMN, CHANGE_SEQUENCE_COLUMN] {
        if !columns.iter().any(|c| c.name.eq_ignore_ascii_case(name)) {
            columns.push(TableFieldSchema::new(name, FieldType::String));
        }
    }
    let schema = crate::sql::types::arrow_schema(&columns).map_err(|e| e.message)?;
    Ok((Cow::Owned(columns), Arc::new(schema)))
}

/// A decoded batch split into the table's columns and the change pseudo-columns.
fn split_changes(
    table: &Table,
    batch: RecordBatch,
) -> Result<(RecordBatch, ChangeColumns), String> {
    let n = table.schema.len();
    let pseudo = |name: &str| {
        batch
            .schema()
            .fields()
            .iter()
            .enumerate()
            .skip(n)
            .find(|(_, f)| f.name().eq_ignore_ascii_case(name))
            .map(|(i, _)| batch.column(i).clone())
    };
    let changes = ChangeColumns {
        change_type: pseudo(CHANGE_TYPE_COLUMN),
        sequence: pseudo(CHANGE_SEQUENCE_COLUMN),
    };
    if batch.num_columns() == n {
        return Ok((batch, changes));
    }
    let columns = batch.columns().iter().take(n).cloned().collect();
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    let rows = RecordBatch::try_new_with_options(table.arrow_schema.clone(), columns, &options)
        .map_err(|e| e.to_string())?;
    Ok((rows, changes))
}

/// Why a request appended nothing.
struct Failure {
    code: Code,
    message: String,
    row_errors: Vec<RowError>,
}

fn rows_failed(name: &str, row_errors: Vec<RowError>) -> Failure {
    Failure {
        code: Code::InvalidArgument,
        message: format!("Errors found while processing rows. Entity: {name}"),
        row_errors,
    }
}

fn extra_field(name: &str, field: &str) -> Failure {
    Failure {
        code: Code::InvalidArgument,
        message: format!(
            "Input schema has more fields than BigQuery schema, extra fields: '{field}' Entity: {name}"
        ),
        row_errors: Vec::new(),
    }
}

/// The text of a column's default value (`defaultValueExpression`) for a row that leaves
/// it out: literals and the `CURRENT_*()` functions; `None` for NULL.
fn default_text(column: &TableFieldSchema, expr: &str) -> Result<Option<Box<str>>, String> {
    use bigq_codec::value::text;
    let e = expr.trim();
    let upper = e.to_ascii_uppercase();
    let now = || {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0)
    };
    let mut out = String::new();
    let _ = match upper.trim_end_matches("()") {
        "NULL" => return Ok(None),
        "TRUE" | "FALSE" => return Ok(Some(upper.to_ascii_lowercase().into())),
        "CURRENT_TIMESTAMP" => text::format_timestamp(now(), &mut out),
        "CURRENT_DATETIME" => text::format_datetime(now(), &mut out),
        "CURRENT_DATE" => {
            text::format_date(now().div_euclid(text::MICROS_PER_DAY) as i32, &mut out)
        }
        "CURRENT_TIME" => text::format_time(now().rem_euclid(text::MICROS_PER_DAY), &mut out),
        _ => {
            // A number, or a string literal with an optional type (`DATE '2024-01-01'`).
            if e.parse::<f64>().is_ok() {
                return Ok(Some(e.into()));
            }
            let quoted = e
                .find(['\'', '"'])
                .filter(|i| e[..*i].trim().chars().all(|c| c.is_ascii_alphanumeric()));
            return match quoted {
                Some(i) if e.len() > i + 1 && e.ends_with(&e[i..i + 1]) => {
                    Ok(Some(e[i + 1..e.len() - 1].into()))
                }
                _ => Err(format!(
                    "Unsupported by bigq-emulator: default value expression `{expr}` of column {}",
                    column.name
                )),
            };
        }
    };
    Ok(Some(out.into()))
}

/// Per column, the text an absent field takes under the request's missing value
/// interpretations (`DEFAULT_VALUE`: the column's default, if it has one).
fn fill_values(
    table: &Table,
    per_column: &HashMap<String, i32>,
    default: i32,
) -> Result<Vec<Option<Box<str>>>, String> {
    use append_rows_request::MissingValueInterpretation as Mvi;
    table
        .schema
        .iter()
        .map(|c| {
            let how = per_column
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(&c.name))
                .map(|(_, v)| *v)
                .unwrap_or(default);
            match (Mvi::try_from(how), &c.default_value_expression) {
                (Ok(Mvi::DefaultValue), Some(expr)) => default_text(c, expr),
                _ => Ok(None),
            }
        })
        .collect()
}

/// Protobuf rows as one batch in the table's layout, by the writer's decoder (compiled
/// for this table on first use).
fn proto_batch(
    table: &Table,
    writer: &mut ProtoWriter,
    serialized: &[Vec<u8>],
    fill: &[Option<Box<str>>],
    name: &str,
) -> Result<(RecordBatch, ChangeColumns), Failure> {
    if serialized.is_empty() {
        return Err(Failure {
            code: Code::InvalidArgument,
            message: format!("No rows in the request. Entity: {name}"),
            row_errors: Vec::new(),
        });
    }
    let unsupported = |m: String| Failure {
        code: Code::InvalidArgument,
        message: format!("Unsupported by bigq-emulator: {m} Entity: {name}"),
        row_errors: Vec::new(),
    };
    let (columns, arrow_schema) = decode_columns(table, writer.changes).map_err(unsupported)?;
    let decoder = match &mut writer.decoder {
        Some(d) if d.is_for(&columns, &arrow_schema) => d,
        slot => {
            // None, or compiled for an older schema of the table: (re)compiled.
            *slot = None;
            let d = RowsDecoder::new(&writer.desc, &columns, arrow_schema.clone()).map_err(
                |e| match e {
                    CompileError::ExtraField(f) => extra_field(name, &f),
                    CompileError::Unsupported(m) => Failure {
                        code: Code::InvalidArgument,
                        message: format!("Unsupported by bigq-emulator: {m} Entity: {name}"),
                        row_errors: Vec::new(),
                    },
                },
            )?;
            slot.insert(d)
        }
    };
    let result = decoder.decode(serialized, fill);
    if result.is_err() {
        // Its builders hold part of the failed request: compile afresh next time.
        writer.decoder = None;
    }
    result
        .map_err(|e| match e {
            DecodeError::Rows(rows) => rows_failed(
                name,
                rows.into_iter()
                    .map(|(i, message)| RowError {
                        index: i as i64,
                        code: RowErrorCode::FieldsError as i32,
                        message,
                    })
                    .collect(),
            ),
            DecodeError::Batch(m) => Failure {
                code: Code::Internal,
                message: format!("Rows do not fit the table: {m} Entity: {name}"),
                row_errors: Vec::new(),
            },
        })
        .and_then(|batch| {
            split_changes(table, batch).map_err(|m| Failure {
                code: Code::Internal,
                message: format!("Rows do not fit the table: {m} Entity: {name}"),
                row_errors: Vec::new(),
            })
        })
}

/// An Arrow record batch (IPC, with the connection's writer schema) in the table's layout:
/// columns matched by name and cast to the column's type, absent columns NULL.
fn arrow_batch(
    table: &Table,
    schema_bytes: &[u8],
    batch_bytes: Vec<u8>,
    name: &str,
) -> Result<(RecordBatch, ChangeColumns), Failure> {
    let invalid = |what: String| Failure {
        code: Code::InvalidArgument,
        message: format!("{what} Entity: {name}"),
        row_errors: Vec::new(),
    };
    let mut bytes = schema_bytes.to_vec();
    bytes.extend_from_slice(&batch_bytes);
    let reader = StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .map_err(|e| invalid(format!("Invalid Arrow writer schema: {e}.")))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("Invalid Arrow record batch: {e}.")))?;
    let [batch] = batches.as_slice() else {
        return Err(invalid(format!(
            "Expected one Arrow record batch, got {}.",
            batches.len()
        )));
    };
    let src = batch.schema();
    let in_table = |f: &str| table.schema.iter().any(|c| c.name.eq_ignore_ascii_case(f));
    if let Some(extra) = src
        .fields()
        .iter()
        .find(|f| !in_table(f.name()) && !is_change_column(f.name()))
    {
        return Err(extra_field(name, extra.name()));
    }
    let pseudo = |column: &str| {
        (!in_table(column))
            .then(|| {
                src.fields()
                    .iter()
                    .position(|f| f.name().eq_ignore_ascii_case(column))
            })
            .flatten()
            .map(|i| batch.column(i).clone())
    };
    let changes = ChangeColumns {
        change_type: pseudo(CHANGE_TYPE_COLUMN),
        sequence: pseudo(CHANGE_SEQUENCE_COLUMN),
    };
    let n = batch.num_rows();
    let mut columns = Vec::with_capacity(table.schema.len());
    let mut row_errors = Vec::new();
    for (col, field) in table.schema.iter().zip(table.arrow_schema.fields()) {
        let found = src
            .fields()
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(&col.name));
        let array = match found {
            None => new_null_array(field.data_type(), n),
            Some(i) => {
                let a = batch.column(i);
                if a.data_type() == field.data_type() {
                    a.clone()
                } else {
                    cast(a, field.data_type()).map_err(|e| {
                        invalid(format!(
                            "Field {}: cannot convert {} to {}: {e}.",
                            col.name,
                            a.data_type(),
                            col.field_type
                        ))
                    })?
                }
            }
        };
        if col.mode() == FieldMode::Required && array.null_count() > 0 {
            for i in (0..n).filter(|i| array.is_null(*i)) {
                row_errors.push(RowError {
                    index: i as i64,
                    code: RowErrorCode::FieldsError as i32,
                    message: format!("{}: Missing required field.", col.name),
                });
            }
        }
        columns.push(array);
    }
    if !row_errors.is_empty() {
        row_errors.sort_by_key(|e| e.index);
        return Err(rows_failed(name, row_errors));
    }
    let options = RecordBatchOptions::new().with_row_count(Some(n));
    RecordBatch::try_new_with_options(table.arrow_schema.clone(), columns, &options)
        .map(|rows| (rows, changes))
        .map_err(|e| invalid(format!("Rows do not fit the table: {e}.")))
}

impl WriteService {
    /// The service over the emulator's catalog.
    pub fn new(app: Arc<AppState>, faults: Arc<Faults>) -> WriteService {
        WriteService {
            app,
            faults,
            streams: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::new()),
        }
    }

    fn table(&self, t: &TableRef) -> Result<Arc<Table>, Status> {
        self.app.catalog.read().table(t).map_err(|e| status(&e))
    }

    /// Appends a batch to the catalog table: visible to queries and reads at once.
    fn publish(&self, t: &TableRef, batches: Vec<RecordBatch>) -> Result<(), BqError> {
        if batches.is_empty() {
            return Ok(());
        }
        self.app.catalog.update(|w| {
            let mut table = (*w.table(t)?).clone();
            table.batches.extend(batches);
            w.put_table(t, table)
        })
    }

    /// Merges change rows into the catalog table by its primary key `key`, under the
    /// catalog's write lock: the whole request at once, visible to queries at once.
    fn publish_changes(
        &self,
        t: &TableRef,
        key: &[usize],
        batch: &RecordBatch,
        changes: &[changes::Change],
    ) -> Result<(), BqError> {
        self.app.catalog.update(|w| {
            let mut table = (*w.table(t)?).clone();
            if table.arrow_schema != batch.schema() {
                return Err(BqError::invalid(format!(
                    "The schema of table {t} changed while the rows were being appended; send them again."
                )));
            }
            let mut logs = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            let log = logs.entry(t.clone()).or_default();
            table.batches = changes::merge(&table, key, log, batch, changes)
                .map_err(|e| BqError::internal(format!("Change rows not merged: {e}")))?;
            w.put_table(t, table)
        })
    }

    /// `CreateWriteStream`.
    pub fn create_write_stream(
        &self,
        req: CreateWriteStreamRequest,
    ) -> Result<WriteStream, Status> {
        let t = parse_table(&req.parent).ok_or_else(|| {
            Status::invalid_argument(format!("Invalid table name. Entity: {}", req.parent))
        })?;
        let table = self.table(&t)?;
        let kind = req
            .write_stream
            .as_ref()
            .and_then(|w| write_stream::Type::try_from(w.r#type).ok())
            .unwrap_or(write_stream::Type::Unspecified);
        if kind == write_stream::Type::Unspecified {
            return Err(Status::invalid_argument(format!(
                "Write stream type must be specified. Entity: {}",
                req.parent
            )));
        }
        let now = SystemTime::now();
        let name = format!("{}/streams/{}", req.parent, uuid::Uuid::new_v4().simple());
        let commit_time = (kind == write_stream::Type::Committed).then_some(now);
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                name.clone(),
                Stream {
                    table: t,
                    kind,
                    create_time: now,
                    commit_time,
                    rows: 0,
                    held: Vec::new(),
                    flushed: 0,
                    finalized: false,
                    last_used: Instant::now(),
                    done_at: None,
                },
            );
        Ok(WriteStream {
            name,
            r#type: kind as i32,
            create_time: Some(timestamp(now)),
            commit_time: commit_time.map(timestamp),
            table_schema: Some(table_schema(&table)),
            ..Default::default()
        })
    }

    /// `GetWriteStream`.
    pub fn get_write_stream(&self, req: GetWriteStreamRequest) -> Result<WriteStream, Status> {
        let full = req.view == pb::WriteStreamView::Full as i32;
        if let Some(t) = default_stream_table(&req.name) {
            let table = self.table(&t)?;
            return Ok(WriteStream {
                name: req.name,
                r#type: write_stream::Type::Committed as i32,
                table_schema: full.then(|| table_schema(&table)),
                location: "us".into(),
                ..Default::default()
            });
        }
        let streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let s = streams.get(&req.name).ok_or_else(|| {
            Status::invalid_argument(format!("Invalid stream name. Entity: {}", req.name))
        })?;
        let table_schema = if full {
            Some(table_schema(&*self.table(&s.table)?))
        } else {
            None
        };
        Ok(WriteStream {
            name: req.name.clone(),
            r#type: s.kind as i32,
            create_time: Some(timestamp(s.create_time)),
            commit_time: s.commit_time.map(timestamp),
            table_schema,
            location: "us".into(),
            ..Default::default()
        })
    }

    /// `FinalizeWriteStream`.
    pub fn finalize_write_stream(
        &self,
        req: FinalizeWriteStreamRequest,
    ) -> Result<FinalizeWriteStreamResponse, Status> {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let s = streams.get_mut(&req.name).ok_or_else(|| {
            Status::not_found(format!(
                "Requested entity was not found. Entity: {}",
                req.name
            ))
        })?;
        s.finalized = true;
        s.last_used = Instant::now();
        if s.kind != write_stream::Type::Pending {
            s.done_at = Some(s.last_used);
        }
        Ok(FinalizeWriteStreamResponse {
            row_count: s.rows as i64,
        })
    }

    /// `FlushRows`: a BUFFERED stream's rows up to and including `offset` become visible.
    pub fn flush_rows(&self, req: FlushRowsRequest) -> Result<FlushRowsResponse, Status> {
        let name = req.write_stream.clone();
        let offset = req.offset.unwrap_or(0);
        let (t, batches) = {
            let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
            let s = streams.get_mut(&name).ok_or_else(|| {
                Status::invalid_argument(format!("Invalid stream name. Entity: {name}"))
            })?;
            if s.kind != write_stream::Type::Buffered {
                return Err(Status::invalid_argument(format!(
                    "FlushRows is only supported on BUFFERED streams. Entity: {name}"
                )));
            }
            if offset < 0 || offset as u64 >= s.rows {
                return Err(Status::out_of_range(format!(
                    "Offset {offset} is beyond the end of the stream Entity: {name}"
                )));
            }
            let upto = offset as u64 + 1;
            let mut out = Vec::new();
            while s.flushed < upto {
                let Some(first) = s.held.first_mut() else {
                    break;
                };
                let n = (first.num_rows() as u64).min(upto - s.flushed);
                out.push(first.slice(0, n as usize));
                if n == first.num_rows() as u64 {
                    s.held.remove(0);
                } else {
                    *first = first.slice(n as usize, first.num_rows() - n as usize);
                }
                s.flushed += n;
            }
            (s.table.clone(), out)
        };
        self.publish(&t, batches).map_err(|e| status(&e))?;
        Ok(FlushRowsResponse { offset })
    }

    /// `BatchCommitWriteStreams`: every PENDING, finalized stream's rows become visible
    /// at once; with any stream in error, none do.
    pub fn batch_commit(
        &self,
        req: BatchCommitWriteStreamsRequest,
    ) -> Result<BatchCommitWriteStreamsResponse, Status> {
        let t = parse_table(&req.parent).ok_or_else(|| {
            Status::invalid_argument(format!("Invalid table name. Entity: {}", req.parent))
        })?;
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let mut errors = Vec::new();
        for name in &req.write_streams {
            let err = |code: StorageErrorCode, msg: &str| StorageError {
                code: code as i32,
                entity: name.clone(),
                error_message: format!("{msg} Entity: {name}"),
            };
            match streams.get(name) {
                None => errors.push(err(StorageErrorCode::StreamNotFound, "Stream not found.")),
                Some(s) if s.table != t => errors.push(err(
                    StorageErrorCode::StreamNotFound,
                    "Stream is not on this table.",
                )),
                Some(s) if s.kind != write_stream::Type::Pending => errors.push(err(
                    StorageErrorCode::InvalidStreamType,
                    "Stream is not PENDING.",
                )),
                Some(s) if s.commit_time.is_some() => errors.push(err(
                    StorageErrorCode::StreamAlreadyCommitted,
                    "Stream is already committed.",
                )),
                Some(s) if !s.finalized => errors.push(err(
                    StorageErrorCode::InvalidStreamState,
                    "Stream is not finalized.",
                )),
                Some(_) => {}
            }
        }
        if !errors.is_empty() {
            return Ok(BatchCommitWriteStreamsResponse {
                commit_time: None,
                stream_errors: errors,
            });
        }
        let now = SystemTime::now();
        let mut batches = Vec::new();
        for name in &req.write_streams {
            if let Some(s) = streams.get_mut(name) {
                batches.append(&mut s.held);
                s.commit_time = Some(now);
                s.done_at = Some(Instant::now());
            }
        }
        drop(streams);
        self.publish(&t, batches).map_err(|e| status(&e))?;
        Ok(BatchCommitWriteStreamsResponse {
            commit_time: Some(timestamp(now)),
            stream_errors: Vec::new(),
        })
    }

    /// One `AppendRows` request of a connection whose writer schema so far is `schema`, and
    /// whose table schema so far is `table_schema`: an append after the table's schema
    /// changed (`ALTER TABLE ADD COLUMN`, a tables.patch or update adding a field) reports
    /// the new one in `updated_schema`, once per change on the connection.
    pub fn append(
        &self,
        req: AppendRowsRequest,
        stream_name: &mut String,
        schema: &mut Option<WriterSchema>,
        table_schema: &mut Option<pb::TableSchema>,
    ) -> AppendRowsResponse {
        let mut resp = self.append_once(req, stream_name, schema);
        let appended = matches!(
            resp.response,
            Some(append_rows_response::Response::AppendResult(_))
        );
        if !appended {
            return resp;
        }
        let Some(table) = self
            .stream_table(stream_name)
            .and_then(|t| self.table(&t).ok())
        else {
            return resp;
        };
        let now = self::table_schema(&table);
        match table_schema {
            Some(seen) if *seen != now => {
                resp.updated_schema = Some(now.clone());
                *seen = now;
            }
            Some(_) => {}
            None => *table_schema = Some(now),
        }
        resp
    }

    /// The table a write stream (`_default` or created) writes to.
    fn stream_table(&self, name: &str) -> Option<TableRef> {
        default_stream_table(name).or_else(|| {
            let streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
            streams.get(name).map(|s| s.table.clone())
        })
    }

    fn append_once(
        &self,
        req: AppendRowsRequest,
        stream_name: &mut String,
        schema: &mut Option<WriterSchema>,
    ) -> AppendRowsResponse {
        if !req.write_stream.is_empty() {
            *stream_name = req.write_stream.clone();
        }
        let name = stream_name.clone();
        let fail = |code: Code, message: String, row_errors: Vec<RowError>| AppendRowsResponse {
            write_stream: name.clone(),
            row_errors,
            response: Some(append_rows_response::Response::Error(rpc_status(
                code, message,
            ))),
            ..Default::default()
        };
        let (t, is_default) = match default_stream_table(&name) {
            Some(t) => (t, true),
            None => {
                let streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
                match streams.get(&name) {
                    Some(s) => (s.table.clone(), false),
                    None => {
                        return fail(
                            Code::InvalidArgument,
                            format!("Invalid stream name. Entity: {name}"),
                            Vec::new(),
                        );
                    }
                }
            }
        };
        let table = match self.table(&t) {
            Ok(t) => t,
            Err(s) => return fail(s.code(), s.message().to_string(), Vec::new()),
        };
        let no_schema = || Failure {
            code: Code::InvalidArgument,
            message: format!("Writer schema is required in the first request. Entity: {name}"),
            row_errors: Vec::new(),
        };
        let batch = match req.rows {
            Some(append_rows_request::Rows::ProtoRows(data)) => {
                if let Some(d) = data.writer_schema.and_then(|w| w.proto_descriptor) {
                    *schema = Some(WriterSchema::Proto(Box::new(ProtoWriter::new(d))));
                }
                match schema.as_mut() {
                    Some(WriterSchema::Proto(writer)) => fill_values(
                        &table,
                        &req.missing_value_interpretations,
                        req.default_missing_value_interpretation,
                    )
                    .map_err(|m| Failure {
                        code: Code::InvalidArgument,
                        message: format!("{m} Entity: {name}"),
                        row_errors: Vec::new(),
                    })
                    .and_then(|fill| {
                        proto_batch(
                            &table,
                            writer,
                            &data.rows.map(|r| r.serialized_rows).unwrap_or_default(),
                            &fill,
                            &name,
                        )
                    }),
                    _ => Err(no_schema()),
                }
            }
            Some(append_rows_request::Rows::ArrowRows(data)) => {
                if let Some(s) = data.writer_schema {
                    *schema = Some(WriterSchema::Arrow(s.serialized_schema));
                }
                match schema.as_ref() {
                    Some(WriterSchema::Arrow(sb)) => arrow_batch(
                        &table,
                        sb,
                        data.rows
                            .map(|r| r.serialized_record_batch)
                            .unwrap_or_default(),
                        &name,
                    ),
                    _ => Err(no_schema()),
                }
            }
            None => Err(Failure {
                code: Code::InvalidArgument,
                message: format!("Rows are required. Entity: {name}"),
                row_errors: Vec::new(),
            }),
        };
        let (batch, change_columns) = match batch {
            Ok(b) => b,
            Err(f) => return fail(f.code, f.message, f.row_errors),
        };
        let n = batch.num_rows() as u64;
        let changes = match changes::parse(&change_columns, batch.num_rows()) {
            Ok(c) => c,
            Err(rows) => {
                let rows = rows
                    .into_iter()
                    .map(|(i, message)| RowError {
                        index: i as i64,
                        code: RowErrorCode::FieldsError as i32,
                        message,
                    })
                    .collect();
                let f = rows_failed(&name, rows);
                return fail(f.code, f.message, f.row_errors);
            }
        };
        // Change rows: only on the `_default` stream, and only to a table with a primary key.
        let change_key = match changes::first_change(&changes) {
            None => None,
            Some(kind) if !is_default => {
                return fail(
                    Code::InvalidArgument,
                    format!(
                        "The given value is not a valid CHANGE_TYPE in insert mode: {kind} Entity: {name}"
                    ),
                    Vec::new(),
                );
            }
            Some(_) => match changes::primary_key(&table) {
                Ok(Some(key)) => Some(key),
                Ok(None) => {
                    return fail(
                        Code::InvalidArgument,
                        format!(
                            "{CHANGE_TYPE_COLUMN} is only supported on tables with a primary key; table {t} has none. Entity: {name}"
                        ),
                        Vec::new(),
                    );
                }
                Err(m) => {
                    return fail(
                        Code::InvalidArgument,
                        format!("{m} Entity: {name}"),
                        Vec::new(),
                    );
                }
            },
        };
        if let Some(key) = change_key {
            if req.offset.is_some() {
                return fail(
                    Code::InvalidArgument,
                    format!("Offset is not supported on the default stream. Entity: {name}"),
                    Vec::new(),
                );
            }
            if let Err(e) = self.publish_changes(&t, &key, &batch, &changes) {
                return fail(status(&e).code(), e.message, Vec::new());
            }
            return AppendRowsResponse {
                write_stream: name.clone(),
                response: Some(append_rows_response::Response::AppendResult(
                    append_rows_response::AppendResult { offset: None },
                )),
                ..Default::default()
            };
        }
        if is_default {
            if req.offset.is_some() {
                return fail(
                    Code::InvalidArgument,
                    format!("Offset is not supported on the default stream. Entity: {name}"),
                    Vec::new(),
                );
            }
            if let Err(e) = self.publish(&t, vec![batch]) {
                return fail(status(&e).code(), e.message, Vec::new());
            }
            return AppendRowsResponse {
                write_stream: name.clone(),
                response: Some(append_rows_response::Response::AppendResult(
                    append_rows_response::AppendResult { offset: None },
                )),
                ..Default::default()
            };
        }
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = streams.get_mut(&name) else {
            return fail(
                Code::InvalidArgument,
                format!("Invalid stream name. Entity: {name}"),
                Vec::new(),
            );
        };
        s.last_used = Instant::now();
        if s.finalized {
            return fail(
                Code::InvalidArgument,
                format!("Stream is finalized. Entity: {name}"),
                Vec::new(),
            );
        }
        let at = s.rows as i64;
        match req.offset {
            Some(o) if o < at => {
                return fail(
                    Code::AlreadyExists,
                    format!(
                        "The offset is within stream, expected offset {at}, received {o} Entity: {name}"
                    ),
                    Vec::new(),
                );
            }
            Some(o) if o > at => {
                return fail(
                    Code::OutOfRange,
                    format!(
                        "The offset is beyond stream, expected offset {at}, received {o} Entity: {name}"
                    ),
                    Vec::new(),
                );
            }
            _ => {}
        }
        s.rows += n;
        let publish_now = s.kind == write_stream::Type::Committed;
        if !publish_now {
            s.held.push(batch.clone());
        }
        drop(streams);
        if publish_now && let Err(e) = self.publish(&t, vec![batch]) {
            return fail(status(&e).code(), e.message, Vec::new());
        }
        AppendRowsResponse {
            write_stream: name.clone(),
            response: Some(append_rows_response::Response::AppendResult(
                append_rows_response::AppendResult { offset: Some(at) },
            )),
            ..Default::default()
        }
    }

    /// The fault hooks.
    /// Frees streams done or idle longer than `expiry` allows; returns the bytes of rows
    /// the others hold.
    pub fn sweep(&self, expiry: &Expiry) -> usize {
        let now = Instant::now();
        {
            // The sequence numbers of tables since dropped.
            let catalog = self.app.catalog.read();
            let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            keys.retain(|t, _| catalog.table(t).is_ok());
        }
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        streams.retain(|_, s| {
            !(s.done_at
                .is_some_and(|d| now.duration_since(d) > expiry.write_done)
                || now.duration_since(s.last_used) > expiry.write_idle)
        });
        crate::memory::batches_bytes(streams.values().flat_map(|s| &s.held))
    }

    pub fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_values_as_text() {
        let c = TableFieldSchema::new("c", FieldType::String);
        let text = |e: &str| default_text(&c, e).map(|t| t.map(|t| t.to_string()));
        assert_eq!(text("'none'"), Ok(Some("none".into())));
        assert_eq!(text(" 42 "), Ok(Some("42".into())));
        assert_eq!(text("-1.5"), Ok(Some("-1.5".into())));
        assert_eq!(text("DATE '2024-01-02'"), Ok(Some("2024-01-02".into())));
        assert_eq!(text("true"), Ok(Some("true".into())));
        assert_eq!(text("NULL"), Ok(None));
        let now = text("CURRENT_TIMESTAMP()").unwrap().unwrap();
        assert!(now.starts_with("20") && now.ends_with('Z'), "{now}");
        let today = text("current_date()").unwrap().unwrap();
        assert!(
            bigq_codec::value::text::parse_date(today.as_bytes()).is_some(),
            "{today}"
        );
        assert_eq!(
            text("GENERATE_UUID()"),
            Err("Unsupported by bigq-emulator: default value expression `GENERATE_UUID()` of column c".into())
        );
    }
}

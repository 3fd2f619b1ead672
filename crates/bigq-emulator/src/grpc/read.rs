//! BigQueryRead: `CreateReadSession`, `ReadRows` and `SplitReadStream`.
//!
//! A session is evaluated when it is created: the row restriction runs on the SQL engine
//! over a snapshot of the table, the selected columns (nested fields too) are cut out, and
//! the rows are laid out in BigQuery's Arrow schema and encoded once as IPC messages, in
//! chunks that never straddle a stream boundary. `ReadRows` then sends those pre-encoded
//! chunks as they are; only a read that starts or stops inside a chunk (an offset, a split,
//! a fault cut) encodes a slice on the fly.
//!
//! Encoding (compression, mostly) is nearly all of a session's cost, so the encoded chunks
//! of recent sessions are kept, up to 512 MiB: a session asking the same of
//! the same table again (same columns, filter, compression and stream count) while the
//! table is unchanged copies them instead of encoding again. A table that changes is a new
//! table value in the catalog, so its old encodings are never served.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use arrow_ipc::CompressionType;
use bigq_codec::schema::{FieldType, TableFieldSchema};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    ArrowRecordBatch, ArrowSchema, CreateReadSessionRequest, DataFormat, ReadRowsRequest,
    ReadRowsResponse, ReadSession, ReadStream, SplitReadStreamRequest, SplitReadStreamResponse,
    StreamStats, ThrottleState, arrow_serialization_options::CompressionCodec, read_rows_response,
    read_session, stream_stats,
};
use gcloud_sdk::prost_types::Timestamp;
use tonic::Status;

use super::arrow::{conform_batch, encode_batch, ipc_encoder, wire_schema};
use super::service::status;
use crate::catalog::{Catalog, Dataset, Table, TableKind, TableRef};
use crate::error::{BqError, BqResult};
use crate::faults::Faults;
use crate::memory::Expiry;
use crate::sql::exec::{Engine, QueryRequest};
use crate::sql::names::NameContext;
use crate::state::AppState;
use bigq_codec::ipc::IpcEncoder;

/// Fewer rows than this per stream and BigQuery would not split a table further: a small
/// table is one stream, whatever `max_stream_count` says.
const MIN_STREAM_ROWS: u64 = 1000;
/// Streams when the caller leaves `max_stream_count` unset.
const DEFAULT_MAX_STREAMS: u64 = 100;
/// The most rows in one `ReadRows` response.
const MAX_CHUNK_ROWS: u64 = 65_536;
/// The uncompressed size one `ReadRows` response aims at (well under gRPC's customary
/// 4 MiB message limit).
const CHUNK_BYTES: u64 = 2 << 20;
/// How long a session lives, as in BigQuery.
const SESSION_TTL: Duration = Duration::from_secs(6 * 3600);
/// The most encoded bytes kept for sessions to come (least recently used dropped first).
const ENCODED_CACHE_BYTES: usize = 512 << 20;

/// One pre-encoded response: rows `start..start + batch.num_rows()` of the session.
#[derive(Debug)]
struct Chunk {
    start: u64,
    /// The rows (slices of the table's own arrays where the wire layout is the same).
    batch: RecordBatch,
    /// The IPC message, until a `ReadRows` call sends it: it is moved into that response
    /// rather than copied, so a session that has been read holds no encoded bytes (a
    /// session lives for hours). A later read of the same rows encodes them again.
    encoded: Mutex<Option<Vec<u8>>>,
}

impl Chunk {
    fn end(&self) -> u64 {
        self.start + self.batch.num_rows() as u64
    }
}

/// A created session: its rows, encoded.
#[derive(Debug)]
struct Session {
    expire_time: SystemTime,
    schema_bytes: Vec<u8>,
    encoder: IpcEncoder,
    chunks: Vec<Chunk>,
}

impl Session {
    /// The bytes of its messages not yet sent.
    fn encoded_bytes(&self) -> usize {
        self.schema_bytes.len()
            + self
                .chunks
                .iter()
                .map(|c| {
                    c.encoded
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .as_ref()
                        .map_or(0, Vec::len)
                })
                .sum::<usize>()
    }
}

/// A stream: a row range of its session.
#[derive(Debug, Clone)]
struct StreamRange {
    session: Arc<Session>,
    start: u64,
    end: u64,
    usage: Arc<StreamUse>,
}

/// When a stream was last read, and whether a read reached its end: a stream read to its
/// end, or left idle, is freed before the session's six hours are up.
#[derive(Debug)]
struct StreamUse {
    last_used: Mutex<Instant>,
    read_to_end: Mutex<Option<Instant>>,
}

impl StreamUse {
    fn new() -> Arc<StreamUse> {
        Arc::new(StreamUse {
            last_used: Mutex::new(Instant::now()),
            read_to_end: Mutex::new(None),
        })
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn finished(&self) {
        *self.read_to_end.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    /// Whether the stream can be freed under `expiry`.
    fn expired(&self, now: Instant, expiry: &Expiry) -> bool {
        let idle = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        let done = *self.read_to_end.lock().unwrap_or_else(|e| e.into_inner());
        now.duration_since(idle) > expiry.read_idle
            || done.is_some_and(|d| now.duration_since(d) > expiry.read_done)
    }
}

/// What a session asks of its table, beside the table itself: sessions asking the same of
/// an unchanged table get the same encoded chunks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct EncodingKey {
    table: String,
    selected: Vec<String>,
    restriction: String,
    compression: Option<i8>,
    max_stream_count: i32,
}

/// The encoded chunks of a session, kept for the next one.
#[derive(Debug)]
struct Encoded {
    /// The table value they were made from; gone or different once the table changes.
    table: Weak<Table>,
    schema_bytes: Vec<u8>,
    chunks: Vec<EncodedChunk>,
    rows: u64,
    streams: u64,
    scanned: u64,
    size: usize,
}

/// A chunk's start row, its rows and their IPC message.
type EncodedChunk = (u64, RecordBatch, Vec<u8>);

/// Recent sessions' encoded chunks, least recently used first.
#[derive(Debug)]
struct EncodedCache {
    entries: Vec<(EncodingKey, Arc<Encoded>)>,
    /// The most bytes kept: [`ENCODED_CACHE_BYTES`], or a quarter of the memory budget if
    /// that is less.
    limit: usize,
}

impl EncodedCache {
    /// The chunks for `key` if they were made from `table` (and so are still its rows).
    fn get(&mut self, key: &EncodingKey, table: &Arc<Table>) -> Option<Arc<Encoded>> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        let (k, e) = self.entries.remove(i);
        if !Weak::ptr_eq(&e.table, &Arc::downgrade(table)) {
            return None;
        }
        self.entries.push((k, e.clone()));
        Some(e)
    }

    /// Keeps `e`, dropping what no longer matches a table and then the least recently used
    /// until everything fits.
    fn put(&mut self, key: EncodingKey, e: Arc<Encoded>) {
        if e.size > self.limit {
            return;
        }
        self.entries
            .retain(|(k, old)| *k != key && old.table.strong_count() > 0);
        self.entries.push((key, e));
        self.trim(self.limit);
    }

    /// Drops the least recently used until at most `limit` bytes are kept.
    fn trim(&mut self, limit: usize) {
        let mut size = self.size();
        while size > limit && !self.entries.is_empty() {
            let (_, old) = self.entries.remove(0);
            size -= old.size;
        }
    }

    fn size(&self) -> usize {
        self.entries.iter().map(|(_, e)| e.size).sum()
    }
}

/// The BigQueryRead service's state.
#[derive(Debug)]
pub struct ReadService {
    app: Arc<AppState>,
    faults: Arc<Faults>,
    streams: Mutex<HashMap<String, StreamRange>>,
    encoded: Mutex<EncodedCache>,
}

fn invalid(message: impl Into<String>) -> BqError {
    BqError::invalid(message)
}

fn timestamp(t: SystemTime) -> Timestamp {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    Timestamp {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

/// `projects/{p}/datasets/{d}/tables/{t}`.
fn parse_table(path: &str) -> BqResult<TableRef> {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["projects", p, "datasets", d, "tables", t]
            if !p.is_empty() && !d.is_empty() && !t.is_empty() =>
        {
            Ok(TableRef {
                project: p.to_string(),
                dataset: d.to_string(),
                table: t.to_string(),
            })
        }
        _ => Err(invalid(format!(
            "request failed: Invalid table name {path:?}: expected projects/{{project}}/datasets/{{dataset}}/tables/{{table}}"
        ))),
    }
}

/// The columns `selected` keeps of `fields`, in table order (as BigQuery orders them,
/// whatever the order of the list); `a.b` keeps field `b` of RECORD `a`.
fn project(fields: &[TableFieldSchema], selected: &[String]) -> BqResult<Vec<TableFieldSchema>> {
    if selected.is_empty() {
        return Ok(fields.to_vec());
    }
    // Each path is split at its first dot: the column, then the rest within it.
    let mut wanted: Vec<(String, Option<String>, bool)> = Vec::new();
    for path in selected {
        let (head, rest) = match path.split_once('.') {
            Some((h, r)) => (h, Some(r.to_string())),
            None => (path.as_str(), None),
        };
        let Some(field) = fields.iter().find(|f| f.name.eq_ignore_ascii_case(head)) else {
            return Err(invalid(format!(
                "request failed: Field {path} in selected_fields was not found in the table schema"
            )));
        };
        if rest.is_some() && field.field_type != FieldType::Record {
            return Err(invalid(format!(
                "request failed: Field {path} in selected_fields: {} is not a RECORD",
                field.name
            )));
        }
        wanted.push((field.name.clone(), rest, true));
    }
    let mut out = Vec::new();
    for f in fields {
        let picks: Vec<&(String, Option<String>, bool)> =
            wanted.iter().filter(|w| w.0 == f.name).collect();
        if picks.is_empty() {
            continue;
        }
        if picks.iter().any(|w| w.1.is_none()) {
            out.push(f.clone());
            continue;
        }
        let sub: Vec<String> = picks.iter().filter_map(|w| w.1.clone()).collect();
        let mut f = f.clone();
        f.fields = project(&f.fields, &sub)?;
        out.push(f);
    }
    Ok(out)
}

/// The rows of `table` (addressed as `t`) matching `restriction`, run on the SQL engine
/// over a private catalog holding only this snapshot of the table, so the restriction sees
/// exactly the rows the session serves and cannot touch anything else.
async fn restrict(t: &TableRef, table: &Table, restriction: &str) -> BqResult<Vec<RecordBatch>> {
    let catalog = Catalog::new();
    {
        let mut w = catalog.write();
        w.create_dataset(&t.project, &t.dataset, Dataset::new(None))?;
        w.create_table(t, table.clone(), false)?;
    }
    let engine = Engine::new(catalog);
    let req = QueryRequest {
        sql: format!(
            "SELECT * FROM `{}.{}.{}` WHERE ({restriction})",
            t.project, t.dataset, t.table
        ),
        names: NameContext {
            project: t.project.clone(),
            default_dataset: None,
            temp: None,
            vars: Default::default(),
            ..Default::default()
        },
        ..Default::default()
    };
    let out = engine.execute(&req).await.map_err(|e| {
        invalid(format!(
            "request failed: Invalid row restriction {restriction:?}: {}",
            e.message
        ))
    })?;
    if out.statement_type != "SELECT" {
        return Err(invalid(format!(
            "request failed: Invalid row restriction {restriction:?}: not a boolean expression"
        )));
    }
    Ok(out.batches)
}

/// The size of the part of a batch's buffers its rows use.
fn sliced_bytes(batch: &RecordBatch) -> u64 {
    batch
        .columns()
        .iter()
        .map(|c| c.to_data().get_slice_memory_size().unwrap_or(0) as u64)
        .sum()
}

/// Where the session's rows split into `n` streams of nearly equal size.
fn stream_bounds(rows: u64, n: u64) -> Vec<u64> {
    (0..=n).map(|i| rows * i / n).collect()
}

/// Cuts the rows into chunks of at most [`MAX_CHUNK_ROWS`] rows and about [`CHUNK_BYTES`],
/// never across a stream boundary, and encodes each, on every core.
fn chunks(
    batches: &[RecordBatch],
    bounds: &[u64],
    encoder: &IpcEncoder,
) -> BqResult<(Vec<EncodedChunk>, u64)> {
    let mut slices = Vec::new();
    let mut bytes = 0;
    let mut at = 0u64;
    for batch in batches {
        let rows = batch.num_rows() as u64;
        if rows == 0 {
            continue;
        }
        let size = sliced_bytes(batch);
        bytes += size;
        let per_row = (size / rows).max(1);
        let chunk_rows = (CHUNK_BYTES / per_row).clamp(1, MAX_CHUNK_ROWS);
        let mut offset = 0;
        while offset < rows {
            let pos = at + offset;
            let next_bound = bounds
                .iter()
                .copied()
                .find(|b| *b > pos)
                .unwrap_or(u64::MAX);
            let len = chunk_rows.min(rows - offset).min(next_bound - pos);
            slices.push((pos, batch.slice(offset as usize, len as usize)));
            offset += len;
        }
        at += rows;
    }
    // Compression is most of a session's set-up: the chunks are encoded in contiguous runs,
    // one per core.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = slices.len().div_ceil(threads).max(1);
    let encoded = std::thread::scope(|scope| {
        let runs: Vec<_> = slices
            .chunks(per_thread)
            .map(|run| {
                scope.spawn(move || {
                    run.iter()
                        .map(|(_, slice)| encode_batch(encoder, slice))
                        .collect::<BqResult<Vec<_>>>()
                })
            })
            .collect();
        runs.into_iter()
            .map(|r| {
                r.join().unwrap_or_else(|_| {
                    Err(BqError::internal("bigq-emulator failed encoding a batch"))
                })
            })
            .collect::<BqResult<Vec<_>>>()
    })?;
    let out = slices
        .into_iter()
        .zip(encoded.into_iter().flatten())
        .map(|((start, batch), encoded)| (start, batch, encoded))
        .collect();
    Ok((out, bytes))
}

fn compression(
    read_options: Option<&read_session::TableReadOptions>,
) -> BqResult<Option<CompressionType>> {
    use read_session::table_read_options::OutputFormatSerializationOptions as O;
    let Some(ro) = read_options else {
        return Ok(None);
    };
    if ro.sample_percentage.is_some() {
        return Err(BqError::unsupported("sample_percentage in a read session"));
    }
    if ro.response_compression_codec.is_some_and(|c| c != 0) {
        return Err(BqError::unsupported(
            "response_compression_codec in a read session",
        ));
    }
    match &ro.output_format_serialization_options {
        Some(O::ArrowSerializationOptions(a)) => {
            if a.picos_timestamp_precision > 1 {
                return Err(BqError::unsupported(
                    "picos_timestamp_precision other than microseconds",
                ));
            }
            match CompressionCodec::try_from(a.buffer_compression) {
                Ok(CompressionCodec::CompressionUnspecified) => Ok(None),
                Ok(CompressionCodec::Lz4Frame) => Ok(Some(CompressionType::LZ4_FRAME)),
                Ok(CompressionCodec::Zstd) => Ok(Some(CompressionType::ZSTD)),
                Err(_) => Err(invalid(format!(
                    "request failed: Invalid buffer_compression {}",
                    a.buffer_compression
                ))),
            }
        }
        Some(O::AvroSerializationOptions(_)) => Err(invalid(
            "request failed: avro_serialization_options given for an ARROW session",
        )),
        None => Ok(None),
    }
}

impl ReadService {
    /// The service over the emulator's catalog and jobs.
    pub fn new(app: Arc<AppState>, faults: Arc<Faults>) -> ReadService {
        let limit = ENCODED_CACHE_BYTES.min(app.memory.budget / 4);
        ReadService {
            app,
            faults,
            streams: Mutex::new(HashMap::new()),
            encoded: Mutex::new(EncodedCache {
                entries: Vec::new(),
                limit,
            }),
        }
    }

    /// The table a session reads: a catalog table, or a query job's anonymous result.
    fn source(&self, t: &TableRef) -> BqResult<Arc<Table>> {
        let table = crate::api::tables::get(&self.app, t)?;
        if let TableKind::View { .. } = table.kind {
            return Err(invalid(format!(
                "request failed: {t} is a view; the Storage Read API reads tables"
            )));
        }
        Ok(table)
    }

    /// `CreateReadSession`.
    pub async fn create_read_session(
        &self,
        req: CreateReadSessionRequest,
    ) -> Result<ReadSession, Status> {
        self.create(req).await.map_err(|e| status(&e))
    }

    async fn create(&self, req: CreateReadSessionRequest) -> BqResult<ReadSession> {
        let parent_project = req
            .parent
            .strip_prefix("projects/")
            .filter(|p| !p.is_empty() && !p.contains('/'))
            .ok_or_else(|| {
                invalid(format!(
                    "request failed: Invalid parent {:?}: expected projects/{{project}}",
                    req.parent
                ))
            })?
            .to_string();
        let mut asked = req
            .read_session
            .ok_or_else(|| invalid("request failed: read_session is required"))?;
        match DataFormat::try_from(asked.data_format) {
            Ok(DataFormat::Arrow) => {}
            Ok(DataFormat::Unspecified) => {
                return Err(invalid("request failed: data format unspecified"));
            }
            Ok(DataFormat::Avro) => {
                return Err(BqError::unsupported("AVRO read sessions (use ARROW)"));
            }
            Err(_) => {
                return Err(invalid(format!(
                    "request failed: Invalid data_format {}",
                    asked.data_format
                )));
            }
        }
        if req.max_stream_count < 0 {
            return Err(invalid(
                "request failed: max_stream_count must not be negative",
            ));
        }
        let t = parse_table(&asked.table)?;
        let table = self.source(&t)?;
        if let Some(snap) = asked
            .table_modifiers
            .as_ref()
            .and_then(|m| m.snapshot_time.as_ref())
        {
            let snap_ms = snap.seconds * 1000 + i64::from(snap.nanos) / 1_000_000;
            if snap_ms < table.last_modified_time {
                return Err(BqError::unsupported(format!(
                    "snapshot_time before the last change of table {t} (the emulator keeps no history)"
                )));
            }
        }
        let ro = asked.read_options.clone();
        let compression = compression(ro.as_ref())?;
        let selected = ro
            .as_ref()
            .map(|r| r.selected_fields.clone())
            .unwrap_or_default();
        let restriction = ro
            .as_ref()
            .map(|r| r.row_restriction.trim().to_string())
            .unwrap_or_default();
        let fields = project(&table.schema, &selected)?;
        let schema = wire_schema(&fields)?;
        let key = EncodingKey {
            table: t.to_string(),
            selected: selected.clone(),
            restriction: restriction.clone(),
            compression: compression.map(|c| c.0),
            max_stream_count: req.max_stream_count,
        };
        let encoder = ipc_encoder(compression)?;
        let cached = self
            .encoded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key, &table);
        let encoded = match cached {
            Some(e) => e,
            None => {
                let batches = if restriction.is_empty() {
                    table.batches.clone()
                } else {
                    restrict(&t, &table, &restriction).await?
                };
                let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
                let max = match req.max_stream_count {
                    0 => DEFAULT_MAX_STREAMS,
                    n => n as u64,
                };
                let n = if rows == 0 {
                    0
                } else {
                    rows.div_ceil(MIN_STREAM_ROWS).clamp(1, max)
                };
                let weak = Arc::downgrade(&table);
                let encoder = encoder.clone();
                let e = Arc::new(
                    off_runtime(move || build(&batches, &schema, rows, n, &encoder, weak))
                        .await??,
                );
                self.encoded
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .put(key, e.clone());
                e
            }
        };
        let (rows, n, bytes) = (encoded.rows, encoded.streams, encoded.scanned);
        // The session's own copy of the messages, moved into responses as they are sent.
        let session = off_runtime(move || Session {
            expire_time: SystemTime::now() + SESSION_TTL,
            schema_bytes: encoded.schema_bytes.clone(),
            encoder,
            chunks: encoded
                .chunks
                .iter()
                .map(|(start, batch, message)| Chunk {
                    start: *start,
                    batch: batch.clone(),
                    encoded: Mutex::new(Some(message.clone())),
                })
                .collect(),
        })
        .await?;

        let session_id = format!("CAIS{}", uuid::Uuid::new_v4().simple());
        let location = self
            .app
            .catalog
            .read()
            .dataset(&t.project, &t.dataset)
            .map(|d| d.location.to_ascii_lowercase())
            .unwrap_or_else(|_| "us".to_string());
        let name = format!("projects/{parent_project}/locations/{location}/sessions/{session_id}");
        let bounds = stream_bounds(rows, n.max(1));
        let session = Arc::new(session);
        let mut stream_names = Vec::new();
        {
            let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
            let now = SystemTime::now();
            streams.retain(|_, s| s.session.expire_time > now);
            for i in 0..n as usize {
                let stream = format!("{name}/streams/GgQ{}", uuid::Uuid::new_v4().simple());
                streams.insert(
                    stream.clone(),
                    StreamRange {
                        session: session.clone(),
                        start: bounds[i],
                        end: bounds[i + 1],
                        usage: StreamUse::new(),
                    },
                );
                stream_names.push(ReadStream { name: stream });
            }
        }

        asked.name = name;
        asked.expire_time = Some(timestamp(session.expire_time));
        asked.schema = Some(read_session::Schema::ArrowSchema(ArrowSchema {
            serialized_schema: session.schema_bytes.clone(),
        }));
        asked.streams = stream_names;
        asked.estimated_total_bytes_scanned = bytes as i64;
        asked.estimated_total_physical_file_size = table.num_bytes() as i64;
        asked.estimated_row_count = table.num_rows() as i64;
        Ok(asked)
    }

    fn stream(&self, name: &str) -> BqResult<StreamRange> {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
            .ok_or_else(|| BqError::not_found(format!("Not found: ReadStream {name}")))
    }

    /// `ReadRows`: the responses of one call.
    pub fn read_rows(
        &self,
        req: ReadRowsRequest,
    ) -> Result<impl Iterator<Item = Result<ReadRowsResponse, Status>> + Send + use<>, Status> {
        let range = self.stream(&req.read_stream).map_err(|e| status(&e))?;
        let len = range.end - range.start;
        if req.offset < 0 {
            return Err(Status::invalid_argument(format!(
                "request failed: offset {} must not be negative",
                req.offset
            )));
        }
        if req.offset as u64 > len {
            return Err(Status::out_of_range(format!(
                "request failed: offset {} is beyond the end of stream {} ({len} rows)",
                req.offset, req.read_stream
            )));
        }
        let pos = range.start + req.offset as u64;
        range.usage.touch();
        let cut = self.faults.take_read_cut().map(|n| pos + n);
        Ok(Responses {
            range,
            pos,
            cut,
            first: true,
            done: false,
            faults: self.faults.clone(),
        })
    }

    /// Frees streams read to their end or idle (per `expiry`) and sessions past their
    /// time; then, if the sessions' encoded rows and the encodings kept for sessions to come
    /// take more than `budget`, drops kept encodings. Returns the bytes still held.
    pub fn sweep(&self, expiry: &Expiry, budget: usize) -> usize {
        let now = Instant::now();
        let wall = SystemTime::now();
        let live = {
            let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
            streams.retain(|_, s| s.session.expire_time > wall && !s.usage.expired(now, expiry));
            let mut seen = std::collections::HashSet::new();
            streams
                .values()
                .filter(|s| seen.insert(Arc::as_ptr(&s.session)))
                .map(|s| s.session.encoded_bytes())
                .sum::<usize>()
        };
        let mut cache = self.encoded.lock().unwrap_or_else(|e| e.into_inner());
        cache.trim(budget.saturating_sub(live));
        live + cache.size()
    }

    /// `SplitReadStream`.
    pub fn split_read_stream(
        &self,
        req: SplitReadStreamRequest,
    ) -> Result<SplitReadStreamResponse, Status> {
        let range = self.stream(&req.name).map_err(|e| status(&e))?;
        if !(req.fraction > 0.0 && req.fraction < 1.0) {
            return Err(Status::invalid_argument(format!(
                "request failed: fraction {} must be between 0 and 1 (exclusive)",
                req.fraction
            )));
        }
        let len = range.end - range.start;
        if len < 2 {
            return Ok(SplitReadStreamResponse::default());
        }
        let at = ((len as f64 * req.fraction).round() as u64).clamp(1, len - 1);
        let session = req
            .name
            .rsplit_once("/streams/")
            .map(|(s, _)| s.to_string())
            .unwrap_or_default();
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let mut child = |start: u64, end: u64| {
            let name = format!("{session}/streams/GgQ{}", uuid::Uuid::new_v4().simple());
            streams.insert(
                name.clone(),
                StreamRange {
                    session: range.session.clone(),
                    start,
                    end,
                    usage: StreamUse::new(),
                },
            );
            ReadStream { name }
        };
        let primary = child(range.start, range.start + at);
        let remainder = child(range.start + at, range.end);
        Ok(SplitReadStreamResponse {
            primary_stream: Some(primary),
            remainder_stream: Some(remainder),
        })
    }
}

/// Runs a session's CPU work (encoding, copying its messages) off the runtime.
async fn off_runtime<R: Send + 'static>(work: impl FnOnce() -> R + Send + 'static) -> BqResult<R> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| BqError::internal(format!("bigq-emulator failed building the session: {e}")))
}

/// Lays the rows out for the wire and encodes them (CPU work, run off the runtime).
fn build(
    batches: &[RecordBatch],
    schema: &SchemaRef,
    rows: u64,
    n: u64,
    encoder: &IpcEncoder,
    table: Weak<Table>,
) -> BqResult<Encoded> {
    let wire = batches
        .iter()
        .filter(|b| b.num_rows() > 0)
        .map(|b| conform_batch(b, schema))
        .collect::<BqResult<Vec<_>>>()?;
    let bounds = stream_bounds(rows, n.max(1));
    let (chunks, scanned) = chunks(&wire, &bounds, encoder)?;
    let schema_bytes = encoder.schema(schema);
    let size = schema_bytes.len() + chunks.iter().map(|c| c.2.len()).sum::<usize>();
    Ok(Encoded {
        table,
        schema_bytes,
        chunks,
        rows,
        streams: n,
        scanned,
        size,
    })
}

/// The responses of one `ReadRows` call, produced as the transport asks for them.
struct Responses {
    range: StreamRange,
    pos: u64,
    cut: Option<u64>,
    first: bool,
    done: bool,
    faults: Arc<Faults>,
}

impl Iterator for Responses {
    type Item = Result<ReadRowsResponse, Status>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(cut) = self.cut
            && self.pos >= cut
            && self.pos < self.range.end
        {
            self.done = true;
            self.faults.read_cut_fired();
            return Some(Err(Status::unavailable(format!(
                "bigq-emulator fault hook: the stream was cut at row {} (connection reset)",
                self.pos - self.range.start
            ))));
        }
        if self.pos >= self.range.end {
            self.done = true;
            self.range.usage.finished();
            return None;
        }
        self.range.usage.touch();
        let session = &self.range.session;
        let i = session.chunks.partition_point(|c| c.end() <= self.pos);
        let Some(chunk) = session.chunks.get(i) else {
            self.done = true;
            return Some(Err(Status::internal(
                "bigq-emulator lost track of a stream's rows",
            )));
        };
        let end = chunk
            .end()
            .min(self.range.end)
            .min(self.cut.unwrap_or(u64::MAX));
        let whole = self.pos == chunk.start && end == chunk.end();
        let take_encoded = || {
            chunk
                .encoded
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
        };
        let message = if let Some(encoded) = whole.then(take_encoded).flatten() {
            encoded
        } else {
            let slice = chunk
                .batch
                .slice((self.pos - chunk.start) as usize, (end - self.pos) as usize);
            match encode_batch(&session.encoder, &slice) {
                Ok(m) => m,
                Err(e) => {
                    self.done = true;
                    return Some(Err(status(&e)));
                }
            }
        };
        let rows = (end - self.pos) as i64;
        let len = (self.range.end - self.range.start) as f64;
        let progress = stream_stats::Progress {
            at_response_start: (self.pos - self.range.start) as f64 / len,
            at_response_end: (end - self.range.start) as f64 / len,
        };
        let schema = std::mem::take(&mut self.first).then(|| {
            read_rows_response::Schema::ArrowSchema(ArrowSchema {
                serialized_schema: session.schema_bytes.clone(),
            })
        });
        self.pos = end;
        Some(Ok(ReadRowsResponse {
            row_count: rows,
            stats: Some(StreamStats {
                progress: Some(progress),
            }),
            throttle_state: Some(ThrottleState {
                throttle_percent: 0,
            }),
            uncompressed_byte_size: None,
            total_estimated_row_count: None,
            // BigQuery still fills the deprecated per-batch count too.
            #[allow(deprecated)]
            rows: Some(read_rows_response::Rows::ArrowRecordBatch(
                ArrowRecordBatch {
                    serialized_record_batch: message,
                    row_count: rows,
                },
            )),
            schema,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bigq_codec::schema::FieldMode;

    fn fields() -> Vec<TableFieldSchema> {
        vec![
            TableFieldSchema::new("id", FieldType::Int64),
            TableFieldSchema::record(
                "st",
                vec![
                    TableFieldSchema::new("a", FieldType::Int64),
                    TableFieldSchema::new("b", FieldType::String),
                ],
            ),
            TableFieldSchema::new("tags", FieldType::String).with_mode(FieldMode::Repeated),
        ]
    }

    #[test]
    fn projection_keeps_table_order_and_nested_fields() {
        let p = project(&fields(), &["tags".into(), "ST.b".into(), "id".into()]).unwrap();
        let names: Vec<&str> = p.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["id", "st", "tags"]);
        assert_eq!(p[1].fields.len(), 1);
        assert_eq!(p[1].fields[0].name, "b");
        let whole = project(&fields(), &["st.a".into(), "st".into()]).unwrap();
        assert_eq!(whole[0].fields.len(), 2);
    }

    #[test]
    fn projection_errors_name_the_field() {
        let e = project(&fields(), &["nope".into()]).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(e.message.contains("nope"), "{e}");
        let e = project(&fields(), &["id.x".into()]).unwrap_err();
        assert!(e.message.contains("id.x"), "{e}");
        let e = project(&fields(), &["st.zz".into()]).unwrap_err();
        assert!(e.message.contains("zz"), "{e}");
    }

    #[test]
    fn table_paths_parse() {
        let t = parse_table("projects/p/datasets/d/tables/t").unwrap();
        assert_eq!(
            (t.project.as_str(), t.dataset.as_str(), t.table.as_str()),
            ("p", "d", "t")
        );
        assert!(parse_table("projects/p/datasets/d").is_err());
        assert!(parse_table("p.d.t").is_err());
    }

    #[test]
    fn bounds_cover_every_row_once() {
        assert_eq!(stream_bounds(10, 3), vec![0, 3, 6, 10]);
        assert_eq!(stream_bounds(5, 1), vec![0, 5]);
    }
}

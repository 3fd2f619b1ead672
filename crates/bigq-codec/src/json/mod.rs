//! REST v2 rows to Arrow: a push decoder for `jobs.query`, `jobs.getQueryResults` and
//! `tabledata.list` bodies; and back ([`encode`]: Arrow into REST rows, as a server writes
//! them).
//!
//! The decoder is fed the body in chunks as they arrive ([`ResponseDecoder::decode`]) and
//! decodes each row of `"rows": [{"f": [{"v": ...}]}]` straight into Arrow buffers typed by
//! the schema, in one pass: no `serde_json::Value` tree, no per-cell allocation, the `f`/`v`
//! envelopes unwrapped in place. The other top-level fields (`schema`, `pageToken`,
//! `jobReference`, `totalRows`, ...) are small and kept as JSON values in
//! [`ResponseDecoder::metadata`]. Keys may come in any order: rows that arrive before the
//! schema are held as raw bytes and decoded once it is known.
//!
//! ```
//! use bigq_codec::json::ResponseDecoder;
//!
//! let body = br#"{"schema":{"fields":[{"name":"n","type":"INTEGER"},{"name":"s","type":"STRING"}]},
//!   "rows":[{"f":[{"v":"1"},{"v":"a"}]},{"f":[{"v":null},{"v":"b"}]}],"totalRows":"2"}"#;
//! let mut decoder = ResponseDecoder::new();
//! for chunk in body.chunks(7) {
//!     decoder.decode(chunk).unwrap();
//! }
//! decoder.finish().unwrap();
//! let batch = decoder.next_batch().unwrap();
//! assert_eq!(batch.num_rows(), 2);
//! assert_eq!(decoder.metadata()["totalRows"], "2");
//! ```

#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// not yet audited for the no-panic rule
mod columns;
pub mod encode;
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// not yet audited for the no-panic rule
mod scan;
mod struct_rows;

use std::collections::VecDeque;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use serde_json::{Map, Value};

pub use columns::TimestampFormat;
use columns::{Column, Nulls, decode_record};
use scan::{Cursor, Stop};
pub use struct_rows::{
    GET_QUERY_RESULTS_ROWS_TAG, QUERY_RESPONSE_ROWS_TAG, SplitRows, split_struct_rows,
    struct_rows_from_json,
};

use crate::CodecError;
use crate::schema::{FieldType, TableFieldSchema, TableSchema};

/// Default number of rows per `RecordBatch`.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `{`.
    Start,
    /// Before a key (or the closing `}`), `first` when no key was read yet.
    Key { first: bool },
    /// After `"rows":`, before `[`.
    RowsStart,
    /// Inside the rows array.
    Rows { first: bool },
    /// After the closing `}`.
    Done,
}

/// Decodes a REST response body with rows into Arrow record batches, chunk by chunk.
pub struct ResponseDecoder {
    state: State,
    /// Bytes received but not consumed yet (a token or row cut at a chunk boundary).
    pending: Vec<u8>,
    /// Length `pending` must reach before the cut row is tried again: each retry rescans
    /// the row from its start, so waiting for the buffer to double keeps a row that spans
    /// many chunks linear to decode.
    retry_at: usize,
    /// Offset in the body of `pending[0]`, for error messages.
    consumed: u64,
    /// The key whose value is being read, when the value was cut.
    key: Option<String>,
    metadata: Map<String, Value>,
    schema: Option<TableSchema>,
    arrow_schema: Option<SchemaRef>,
    columns: Vec<Column>,
    /// Whether each column may hold NULL.
    nulls: Vec<Nulls>,
    /// Whether the `rows` field was seen (a second one is an error).
    rows_seen: bool,
    /// Rows that arrived before the schema, as raw JSON separated by commas.
    deferred: Vec<u8>,
    rows_in_batch: usize,
    rows_decoded: u64,
    row_offset: u64,
    batch_size: usize,
    timestamps: TimestampFormat,
    ready: VecDeque<RecordBatch>,
    scratch: Vec<u8>,
}

impl Default for ResponseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ResponseDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseDecoder")
            .field("state", &self.state)
            .field("rows_decoded", &self.rows_decoded)
            .field("schema", &self.schema.is_some())
            .finish_non_exhaustive()
    }
}

impl ResponseDecoder {
    /// A decoder that learns the schema from the body's `schema` field.
    pub fn new() -> Self {
        ResponseDecoder {
            state: State::Start,
            pending: Vec::new(),
            retry_at: 0,
            consumed: 0,
            key: None,
            metadata: Map::new(),
            schema: None,
            arrow_schema: None,
            columns: Vec::new(),
            nulls: Vec::new(),
            rows_seen: false,
            deferred: Vec::new(),
            rows_in_batch: 0,
            rows_decoded: 0,
            row_offset: 0,
            batch_size: DEFAULT_BATCH_SIZE,
            timestamps: TimestampFormat::Auto,
            ready: VecDeque::new(),
            scratch: Vec::new(),
        }
    }

    /// Gives the schema up front, for bodies that have none (`tabledata.list`). A `schema`
    /// field in the body must then match it.
    pub fn with_schema(mut self, schema: TableSchema) -> Result<Self, CodecError> {
        self.set_schema(schema)?;
        Ok(self)
    }

    /// Sets the number of rows per batch (default [`DEFAULT_BATCH_SIZE`]).
    pub fn with_batch_size(mut self, rows: usize) -> Self {
        self.batch_size = rows.max(1);
        self
    }

    /// Sets how TIMESTAMP cells are read (default: every form BigQuery uses).
    pub fn with_timestamp_format(mut self, f: TimestampFormat) -> Self {
        self.timestamps = f;
        self
    }

    /// Numbers rows in error messages from `offset` (the rows of earlier pages).
    pub fn with_row_offset(mut self, offset: u64) -> Self {
        self.row_offset = offset;
        self
    }

    /// The top-level fields other than `rows` seen so far (`pageToken`, `totalRows`,
    /// `jobReference`, `jobComplete`, `schema`, ...).
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// Takes the top-level fields seen so far, leaving them empty.
    pub fn take_metadata(&mut self) -> Map<String, Value> {
        std::mem::take(&mut self.metadata)
    }

    /// The schema, once known.
    pub fn schema(&self) -> Option<&TableSchema> {
        self.schema.as_ref()
    }

    /// The Arrow schema of the batches, once the schema is known.
    pub fn arrow_schema(&self) -> Option<SchemaRef> {
        self.arrow_schema.clone()
    }

    /// Rows decoded so far.
    pub fn rows_decoded(&self) -> u64 {
        self.rows_decoded
    }

    /// Whether the whole body has been read. The end of a long row cut across chunks may be
    /// held until more bytes arrive or [`finish`](Self::finish) is called.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The next full batch, if one is ready.
    pub fn next_batch(&mut self) -> Option<RecordBatch> {
        self.ready.pop_front()
    }

    fn set_schema(&mut self, schema: TableSchema) -> Result<(), CodecError> {
        if let Some(existing) = &self.schema {
            if existing.fields.len() != schema.fields.len()
                || existing
                    .fields
                    .iter()
                    .zip(&schema.fields)
                    .any(|(a, b)| a.name != b.name || a.field_type != b.field_type)
            {
                return Err(CodecError::schema(
                    "the body's schema differs from the schema given to the decoder",
                ));
            }
            return Ok(());
        }
        let arrow = schema.to_arrow()?;
        self.columns = schema
            .fields
            .iter()
            .zip(arrow.fields().iter())
            .map(|(f, af)| Column::for_field(f, af, self.timestamps))
            .collect::<Result<_, _>>()?;
        self.nulls = arrow.fields().iter().map(|f| Nulls::of(f)).collect();
        self.schema = Some(schema);
        self.arrow_schema = Some(arrow);
        Ok(())
    }

    /// Feeds the next chunk of the body. Full batches become available from
    /// [`next_batch`](Self::next_batch).
    ///
    /// A row cut at the end of a chunk is completed from the next ones; only its bytes are
    /// copied, the rest of each chunk is decoded where it lies.
    pub fn decode(&mut self, chunk: &[u8]) -> Result<(), CodecError> {
        let chunk = if self.pending.is_empty() {
            chunk
        } else {
            match self.complete_pending(chunk)? {
                Some(rest) => rest,
                None => return Ok(()),
            }
        };
        let used = self.run(chunk)?;
        self.consumed += used as u64;
        // `run` consumes at most the bytes it is given.
        #[allow(clippy::indexing_slicing)]
        self.pending.extend_from_slice(&chunk[used..]);
        self.retry_at = Self::retry_size(self.pending.len());
        Ok(())
    }

    /// When to retry a cut row of `len` bytes: once twice as many bytes (and at least 256
    /// more) have arrived.
    fn retry_size(len: usize) -> usize {
        len + len.max(256)
    }

    /// Appends the front of `chunk` to the cut row in `pending` and decodes it. Returns the
    /// rest of `chunk`, to decode in place, once the cut row is done, or `None` when all of
    /// `chunk` went into `pending`.
    fn complete_pending<'c>(&mut self, chunk: &'c [u8]) -> Result<Option<&'c [u8]>, CodecError> {
        let mut taken = 0;
        loop {
            let want = self.retry_at.saturating_sub(self.pending.len());
            let take = want.min(chunk.len() - taken);
            // `take` is at most the `chunk.len() - taken` bytes still untaken.
            #[allow(clippy::indexing_slicing)]
            self.pending.extend_from_slice(&chunk[taken..taken + take]);
            taken += take;
            if self.pending.len() < self.retry_at {
                return Ok(None);
            }
            // Bytes of `pending` from before this chunk.
            let old = self.pending.len() - taken;
            let mut buf = std::mem::take(&mut self.pending);
            let used = match self.run(&buf) {
                Ok(u) => u,
                Err(e) => {
                    self.pending = buf;
                    return Err(e);
                }
            };
            self.consumed += used as u64;
            if used >= old {
                buf.clear();
                self.pending = buf;
                // `run` consumed at most the `old + taken` bytes of `buf`, and here at least `old`.
                #[allow(clippy::indexing_slicing)]
                return Ok(Some(&chunk[used - old..]));
            }
            buf.drain(..used);
            self.pending = buf;
            self.retry_at = Self::retry_size(self.pending.len());
            if taken == chunk.len() {
                return Ok(None);
            }
        }
    }

    /// Signals the end of the body: checks it was complete and makes the last rows available
    /// as a batch.
    pub fn finish(&mut self) -> Result<(), CodecError> {
        if !self.pending.is_empty() {
            // A cut row still waiting for its retry.
            let mut buf = std::mem::take(&mut self.pending);
            let used = self.run(&buf);
            let used = match used {
                Ok(u) => u,
                Err(e) => {
                    self.pending = buf;
                    return Err(e);
                }
            };
            self.consumed += used as u64;
            buf.drain(..used);
            self.pending = buf;
        }
        if self.state != State::Done {
            return Err(CodecError::syntax(format!(
                "truncated body: it ends after {} bytes inside {}",
                self.consumed + self.pending.len() as u64,
                match self.state {
                    State::Rows { .. } | State::RowsStart => "the rows",
                    _ => "the response object",
                }
            )));
        }
        if !self.deferred.is_empty() {
            return Err(CodecError::schema(
                "the body has rows but no schema, and none was given to the decoder",
            ));
        }
        self.flush()?;
        Ok(())
    }

    /// Turns the rows decoded so far into a batch now, even if it is not full.
    pub fn flush(&mut self) -> Result<(), CodecError> {
        if self.rows_in_batch == 0 {
            return Ok(());
        }
        let schema = self.arrow_schema.clone().ok_or_else(|| {
            CodecError::schema("malformed body: rows arrived before the response's schema")
        })?;
        let columns = self
            .columns
            .iter_mut()
            .zip(schema.fields().iter())
            .map(|(c, f)| c.finish(f).map_err(|e| e.with_parent_column(f.name())))
            .collect::<Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows_in_batch));
        let batch = RecordBatch::try_new_with_options(schema, columns, &options)
            .map_err(|e| CodecError::schema(format!("cannot assemble batch: {e}")))?;
        self.rows_in_batch = 0;
        self.ready.push_back(batch);
        Ok(())
    }

    /// Consumes as much of `buf` as forms complete tokens; returns the bytes used.
    fn run(&mut self, buf: &[u8]) -> Result<usize, CodecError> {
        let mut cur = Cursor::new(buf, 0);
        loop {
            let save = cur.pos;
            match self.step(&mut cur) {
                Ok(true) => continue,
                Ok(false) => return Ok(cur.pos),
                Err(Stop::Incomplete) => return Ok(save),
                Err(Stop::Error(e)) => {
                    let e = match e.offset() {
                        Some(_) => e.shift_offset(self.consumed),
                        None => e.with_offset(self.consumed + save as u64),
                    };
                    return Err(e);
                }
            }
        }
    }

    /// Takes one step; `Ok(false)` when the body is done.
    fn step(&mut self, cur: &mut Cursor<'_>) -> Result<bool, Stop> {
        match self.state {
            State::Start => {
                cur.expect(b'{')?;
                self.state = State::Key { first: true };
            }
            State::Key { first } => {
                if self.key.is_none() {
                    let c = cur.peek()?;
                    if c == b'}' {
                        cur.pos += 1;
                        self.state = State::Done;
                        return Ok(true);
                    }
                    if !first {
                        cur.expect(b',')?;
                    }
                    let c = cur.peek()?;
                    if c != b'"' {
                        return Err(cur.unexpected(c, "expected a key"));
                    }
                    let mut scratch = std::mem::take(&mut self.scratch);
                    // `from_utf8` first: `from_utf8_lossy` walks its input chunk by chunk
                    // on top of validating it (0.5k instructions more per `SELECT 1`
                    // response under callgrind); keys are valid UTF-8 in practice.
                    let key = cur
                        .string(&mut scratch)
                        .map(|k| match std::str::from_utf8(k) {
                            Ok(k) => k.to_owned(),
                            Err(_) => String::from_utf8_lossy(k).into_owned(),
                        });
                    self.scratch = scratch;
                    let key = key?;
                    cur.expect(b':')?;
                    if key == "rows" {
                        if self.rows_seen {
                            return Err(Stop::Error(
                                CodecError::syntax("malformed body: a second `rows` field")
                                    .with_offset(cur.pos as u64),
                            ));
                        }
                        self.rows_seen = true;
                        self.state = State::RowsStart;
                        return Ok(true);
                    }
                    self.key = Some(key);
                    // The key is consumed: from here a cut value resumes at the value.
                    return Ok(true);
                }
                let start = {
                    cur.peek()?;
                    cur.pos
                };
                cur.skip_value()?;
                // `start` and `cur.pos` are positions the cursor reached, in order.
                #[allow(clippy::indexing_slicing)]
                let raw = &cur.buf[start..cur.pos];
                let Some(key) = self.key.take() else {
                    return Err(Stop::Error(CodecError::syntax(
                        "malformed body: a value with no key",
                    )));
                };
                let value: Value = serde_json::from_slice(raw).map_err(|e| {
                    Stop::Error(
                        CodecError::syntax(format!("malformed JSON in `{key}`: {e}"))
                            .with_offset(start as u64),
                    )
                })?;
                if key == "schema" {
                    let schema =
                        <TableSchema as serde::Deserialize>::deserialize(&value).map_err(|e| {
                            Stop::Error(
                                CodecError::schema(format!("malformed schema: {e}"))
                                    .with_offset(start as u64),
                            )
                        })?;
                    self.set_schema(schema).map_err(Stop::Error)?;
                    if !self.deferred.is_empty() {
                        self.decode_deferred().map_err(Stop::Error)?;
                    }
                }
                self.metadata.insert(key, value);
                self.state = State::Key { first: false };
            }
            State::RowsStart => {
                let c = cur.peek()?;
                if c == b'n' {
                    cur.literal(b"null")?;
                    self.state = State::Key { first: false };
                } else {
                    cur.expect(b'[')?;
                    self.state = State::Rows { first: true };
                }
            }
            State::Rows { first } => {
                let c = cur.peek()?;
                if c == b']' {
                    cur.pos += 1;
                    self.state = State::Key { first: false };
                    return Ok(true);
                }
                if !first {
                    cur.expect(b',')?;
                }
                self.row(cur)?;
                self.state = State::Rows { first: false };
            }
            State::Done => {
                return match cur.peek() {
                    Err(Stop::Incomplete) => Ok(false),
                    Ok(c) => Err(cur.unexpected(c, "trailing data after the response object")),
                    Err(e) => Err(e),
                };
            }
        }
        Ok(true)
    }

    /// Decodes one row at the cursor, or defers it while there is no schema.
    fn row(&mut self, cur: &mut Cursor<'_>) -> Result<(), Stop> {
        if self.schema.is_none() {
            let start = cur.peek().map(|_| cur.pos)?;
            cur.skip_value()?;
            if !self.deferred.is_empty() {
                self.deferred.push(b',');
            }
            // `start` and `cur.pos` are positions the cursor reached, in order.
            #[allow(clippy::indexing_slicing)]
            self.deferred.extend_from_slice(&cur.buf[start..cur.pos]);
            return Ok(());
        }
        let row = self.rows_in_batch;
        let result = decode_record(&mut self.columns, &self.nulls, cur, &mut self.scratch);
        match result {
            Ok(()) => {
                self.rows_in_batch += 1;
                self.rows_decoded += 1;
                if self.rows_in_batch >= self.batch_size {
                    self.flush().map_err(Stop::Error)?;
                }
                Ok(())
            }
            Err(e) => {
                for c in &mut self.columns {
                    c.truncate(row);
                }
                match e {
                    Stop::Incomplete => Err(Stop::Incomplete),
                    Stop::Error(err) => Err(Stop::Error(self.name_error(err))),
                }
            }
        }
    }

    fn decode_deferred(&mut self) -> Result<(), CodecError> {
        let raw = std::mem::take(&mut self.deferred);
        let mut cur = Cursor::new(&raw, 0);
        let mut first = true;
        while cur.pos < raw.len() {
            if !first {
                cur.expect(b',').map_err(stop_to_error)?;
            }
            first = false;
            self.row(&mut cur).map_err(stop_to_error)?;
        }
        Ok(())
    }

    /// Replaces the column index path (`#2.#0`) with names and adds the row number.
    fn name_error(&self, err: CodecError) -> CodecError {
        let row = self.row_offset + self.rows_decoded;
        let mut named = CodecError::new(err.kind(), err.message()).with_row(row);
        if let Some(path) = err.column() {
            named = named.with_column(self.column_path(path));
        }
        if let Some(v) = err.value() {
            named = named.with_value(v);
        }
        if let Some(o) = err.offset() {
            named = named.with_offset(o);
        }
        named
    }

    fn column_path(&self, path: &str) -> String {
        let mut fields: &[TableFieldSchema] =
            self.schema.as_ref().map(|s| &s.fields[..]).unwrap_or(&[]);
        let mut names = Vec::new();
        for part in path.split('.') {
            let Some(f) = part
                .strip_prefix('#')
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| fields.get(i))
            else {
                names.push(part.to_string());
                continue;
            };
            names.push(f.name.clone());
            fields = if f.field_type == FieldType::Record {
                &f.fields
            } else {
                &[]
            };
        }
        names.join(".")
    }
}

fn stop_to_error(s: Stop) -> CodecError {
    match s {
        Stop::Incomplete => CodecError::syntax("truncated row before the schema"),
        Stop::Error(e) => e,
    }
}

/// Decodes a whole body at once: the batches and the top-level fields.
pub fn decode_body(
    body: &[u8],
    schema: Option<TableSchema>,
) -> Result<(Vec<RecordBatch>, Map<String, Value>), CodecError> {
    let mut d = match schema {
        Some(s) => ResponseDecoder::new().with_schema(s)?,
        None => ResponseDecoder::new(),
    };
    d.decode(body)?;
    d.finish()?;
    let mut batches = Vec::new();
    while let Some(b) = d.next_batch() {
        batches.push(b);
    }
    Ok((batches, d.take_metadata()))
}

#[cfg(test)]
mod tests;

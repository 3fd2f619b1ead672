//! A writer's options: the stream type, what BigQuery does with missing columns, and the
//! request limits and batching triggers.

use std::time::Duration;

use gcloud_sdk::google::cloud::bigquery::storage::v1::{
    append_rows_request::MissingValueInterpretation as PbMissing, write_stream,
};

/// The largest AppendRows request the API takes.
pub const MAX_REQUEST_BYTES: usize = 20 * 1024 * 1024;
/// The default request size limit.
pub const DEFAULT_REQUEST_BYTES: usize = 10 * 1024 * 1024;
/// The default number of requests awaiting their response.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 8;
/// How long the first queued row waits, by default, before its partly filled request is sent.
pub const DEFAULT_MAX_BATCH_DELAY: Duration = Duration::from_millis(100);

/// The type of write stream, and with it the delivery guarantee; chosen with
/// [`WriteBuilder`](super::WriteBuilder)'s `default_stream`, `committed`, `pending` and
/// `buffered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// The table's `_default` stream: rows visible at once, at least once.
    Default,
    /// A COMMITTED stream: rows visible at once, exactly once through offsets.
    Committed,
    /// A PENDING stream: rows visible when the stream is committed; all or nothing.
    Pending,
    /// A BUFFERED stream: rows visible when flushed.
    Buffered,
}

impl StreamKind {
    /// Whether requests carry offsets (every type but `_default`).
    pub(crate) fn has_offsets(self) -> bool {
        self != StreamKind::Default
    }

    /// The stream type as BigQuery names it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            StreamKind::Default => "_default",
            StreamKind::Committed => "COMMITTED",
            StreamKind::Pending => "PENDING",
            StreamKind::Buffered => "BUFFERED",
        }
    }

    pub(crate) fn proto(self) -> write_stream::Type {
        match self {
            StreamKind::Default | StreamKind::Committed => write_stream::Type::Committed,
            StreamKind::Pending => write_stream::Type::Pending,
            StreamKind::Buffered => write_stream::Type::Buffered,
        }
    }
}

/// What BigQuery does with a column a row leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MissingValue {
    /// The column is NULL.
    Null,
    /// The column takes its default value expression (NULL when it has none).
    Default,
}

impl MissingValue {
    pub(crate) fn proto(self) -> i32 {
        match self {
            MissingValue::Null => PbMissing::NullValue as i32,
            MissingValue::Default => PbMissing::DefaultValue as i32,
        }
    }
}

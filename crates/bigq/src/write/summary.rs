//! What a writer wrote.

use crate::value::Timestamp;

/// What a writer wrote.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct WriteSummary {
    /// The write stream.
    pub stream: String,
    /// Rows BigQuery confirmed (counted once even when a resent request was already there).
    pub rows_written: u64,
    /// AppendRows requests sent, resends included.
    pub requests: u64,
    /// Bytes of the requests sent (protobuf-encoded), resends included.
    pub bytes_sent: u64,
    /// Times the writer reconnected and sent the unconfirmed requests again.
    pub retries: u64,
    /// The most bytes of requests awaiting their response at one time (protobuf-encoded,
    /// without the writer schema a connection's first request adds); at most
    /// [`max_in_flight_bytes`](super::WriteBuilder::max_in_flight_bytes) or one request.
    pub peak_in_flight_bytes: u64,
    /// Times the writer took a newer table schema (reported by BigQuery, fetched for a field
    /// its schema lacked, or by the periodic refresh).
    pub schema_updates: u64,
    /// The row count FinalizeWriteStream reported, for streams other than `_default`.
    pub finalized_rows: Option<u64>,
    /// When a PENDING stream was committed.
    pub commit_time: Option<Timestamp>,
}

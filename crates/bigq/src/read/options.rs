//! A read's options: what CreateReadSession asks for.

use crate::value::Timestamp;

/// How the server compresses the Arrow buffers it sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compression {
    /// No compression: the most bytes on the wire, the least CPU.
    None,
    /// LZ4_FRAME (the default): fast to decode, about half the bytes for typical tables.
    #[default]
    Lz4Frame,
    /// ZSTD: fewer bytes than LZ4, more CPU to decode.
    Zstd,
}

#[derive(Debug, Clone)]
pub(crate) struct ReadOptions {
    pub(crate) selected_fields: Vec<String>,
    pub(crate) row_restriction: Option<String>,
    pub(crate) snapshot_time: Option<Timestamp>,
    pub(crate) max_streams: u32,
    pub(crate) preferred_min_streams: u32,
    pub(crate) compression: Compression,
}

impl ReadOptions {
    /// The defaults: every column and row, LZ4_FRAME, and two streams per core.
    pub(crate) fn new() -> Self {
        // Two streams per core: a stream's task decodes a response while its next one is
        // on the way, and a core whose stream waits on the network has another to decode.
        // On bigq-emulator, same 2 cores, a 1M-row read: Arrow 298 -> 261 ms, typed rows
        // 539 -> 483 ms with 4 streams instead of 2 (docs/benchmarks.md, Storage Read).
        let parallelism = std::thread::available_parallelism().map_or(1, |n| n.get());
        ReadOptions {
            selected_fields: Vec::new(),
            row_restriction: None,
            snapshot_time: None,
            max_streams: (2 * parallelism).min(1000) as u32,
            preferred_min_streams: 0,
            compression: Compression::default(),
        }
    }
}

//! Arrow IPC in both directions, in the encapsulated-message form BigQuery's Storage APIs
//! use: [`IpcDecoder`] reads a read stream's schema and record batches (LZ4_FRAME and ZSTD
//! buffers decompressed), [`IpcEncoder`] writes them.

mod read;
mod write;

pub use arrow_ipc::CompressionType;
pub use read::IpcDecoder;
pub use write::IpcEncoder;

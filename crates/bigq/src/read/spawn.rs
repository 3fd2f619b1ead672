//! Starting a read's tasks: one per read stream, sending into one shared channel, or into
//! one channel per stream for an ordered read.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::streams::{Merged, Tasks};
use super::task::{BatchSink, GrpcRows, read_stream};
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use bigq_codec::ipc::IpcDecoder;

/// Starts one task per stream sending `S`'s items into one shared channel, or into one
/// channel per stream for an ordered read.
pub(crate) fn spawn<S: BatchSink>(
    client: &Client,
    schema_bytes: &[u8],
    sink: impl Fn() -> S,
    streams: &[String],
    ordered: bool,
) -> Result<(Merged<S::Item>, Tasks)> {
    let mut tasks = Tasks::default();
    let mut rxs = Vec::new();
    let mut shared = None;
    for stream in streams {
        let tx = if ordered || streams.len() == 1 {
            let (tx, rx) = mpsc::channel(2);
            rxs.push(rx);
            tx
        } else {
            shared
                .get_or_insert_with(|| {
                    let (tx, rx) = mpsc::channel(2 * streams.len());
                    rxs.push(rx);
                    tx
                })
                .clone()
        };
        let decoder = IpcDecoder::new(schema_bytes)?;
        let read = read_stream(
            GrpcRows {
                storage: client.inner.storage.clone(),
            },
            stream.clone(),
            decoder,
            client.inner.retry.clone(),
            sink(),
            tx.clone(),
        );
        let read = read.instrument(tracing::info_span!(
            "bigq.read_stream",
            stream = stream.as_str()
        ));
        let stream = stream.clone();
        let handle = tokio::spawn(async move {
            // A panic (in a Deserialize impl, say) must not look like the end of the rows.
            if let Err(panic) = AssertUnwindSafe(read).catch_unwind().await {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let e = Error::new(
                    ErrorKind::Decode,
                    format!("reading stream {stream} panicked: {what}"),
                );
                let _ = tx.send(Err(e)).await;
            }
        });
        tasks.0.push(handle.abort_handle());
    }
    Ok((Merged::new(rxs), tasks))
}

//! The streams callers read: every read stream merged, typed rows, or one stream each.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::Stream;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::error::Result;

/// Aborts the read tasks when the stream that owns them is dropped.
#[derive(Debug, Default)]
pub(crate) struct Tasks(pub(crate) Vec<AbortHandle>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// The channels of a read's tasks: one shared by every stream (unordered: items as they
/// come), or one per stream, drained in stream order (ordered).
#[derive(Debug)]
pub(crate) struct Merged<I> {
    rxs: VecDeque<mpsc::Receiver<Result<I>>>,
}

impl<I> Merged<I> {
    pub(crate) fn new(rxs: impl IntoIterator<Item = mpsc::Receiver<Result<I>>>) -> Self {
        Merged {
            rxs: rxs.into_iter().collect(),
        }
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<I>>> {
        while let Some(rx) = self.rxs.front_mut() {
            match rx.poll_recv(cx) {
                Poll::Ready(None) => {
                    self.rxs.pop_front();
                }
                other => return other,
            }
        }
        Poll::Ready(None)
    }

    async fn recv(&mut self) -> Option<Result<I>> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

/// Arrow record batches from a Storage Read session: as they arrive from any of its
/// streams, or stream after stream with [`ReadBuilder::ordered`](super::ReadBuilder::ordered).
///
/// Each stream is read on its own task; the batches meet in a bounded channel, so memory
/// stays at a few batches per stream however large the table. The first error ends the
/// stream. Dropping it stops the reads.
#[derive(Debug)]
pub struct ReadBatchStream {
    schema: SchemaRef,
    rx: Merged<RecordBatch>,
    streams: usize,
    done: bool,
    _tasks: Tasks,
}

impl ReadBatchStream {
    pub(crate) fn new(
        schema: SchemaRef,
        rx: Merged<RecordBatch>,
        streams: usize,
        tasks: Tasks,
    ) -> Self {
        ReadBatchStream {
            schema,
            rx,
            streams,
            done: false,
            _tasks: tasks,
        }
    }

    /// The Arrow schema of every batch (the session's, after projection).
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// How many read streams the server gave the session.
    pub fn stream_count(&self) -> usize {
        self.streams
    }

    /// Collects every batch.
    pub async fn try_collect(self) -> Result<Vec<RecordBatch>> {
        futures::TryStreamExt::try_collect(self).await
    }
}

impl Stream for ReadBatchStream {
    type Item = Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        match this.rx.poll_recv(cx) {
            Poll::Ready(Some(Err(e))) => {
                this.done = true;
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            other => other,
        }
    }
}

/// Rows decoded into `T` from a Storage Read session, in no particular order unless the
/// read is [`ordered`](super::ReadBuilder::ordered).
///
/// Each read stream decodes its own batches into rows on its own task, next to its network
/// reads, so typed reads cost about what Arrow reads do. A decode error names the column
/// and the row, counted within its read stream. The first error ends the stream.
pub struct ReadRowStream<T> {
    rx: Merged<Vec<T>>,
    rows: std::vec::IntoIter<T>,
    schema: SchemaRef,
    streams: usize,
    done: bool,
    _tasks: Tasks,
}

// The rows are only moved out, never pinned.
impl<T> Unpin for ReadRowStream<T> {}

impl<T> std::fmt::Debug for ReadRowStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadRowStream")
            .field("streams", &self.streams)
            .finish_non_exhaustive()
    }
}

impl<T> ReadRowStream<T> {
    pub(crate) fn new(schema: SchemaRef, rx: Merged<Vec<T>>, streams: usize, tasks: Tasks) -> Self {
        ReadRowStream {
            rx,
            rows: Vec::new().into_iter(),
            schema,
            streams,
            done: false,
            _tasks: tasks,
        }
    }

    /// The Arrow schema the rows are decoded from.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// How many read streams the server gave the session.
    pub fn stream_count(&self) -> usize {
        self.streams
    }

    /// Collects every row.
    pub async fn try_collect(self) -> Result<Vec<T>> {
        let mut this = self;
        let mut out = Vec::new();
        out.extend(std::mem::take(&mut this.rows));
        while let Some(chunk) = this.rx.recv().await {
            let mut chunk = chunk?;
            if out.is_empty() {
                std::mem::swap(&mut out, &mut chunk);
            } else {
                out.append(&mut chunk);
            }
        }
        Ok(out)
    }
}

impl<T> Stream for ReadRowStream<T> {
    type Item = Result<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(r) = this.rows.next() {
                return Poll::Ready(Some(Ok(r)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(Ok(rows))) => this.rows = rows.into_iter(),
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(None) => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// One read stream of a session, for callers who spread the streams over their own
/// workers. It is read on its own task, a couple of batches ahead of the caller.
#[derive(Debug)]
pub struct ReadStream {
    name: String,
    inner: ReadBatchStream,
}

impl ReadStream {
    pub(crate) fn new(name: String, inner: ReadBatchStream) -> Self {
        ReadStream { name, inner }
    }

    /// The stream's resource name
    /// (`projects/{p}/locations/{l}/sessions/{s}/streams/{id}`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Arrow schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

impl Stream for ReadStream {
    type Item = Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.get_mut().inner).poll_next(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ordered_merge_drains_stream_after_stream() {
        let (tx0, rx0) = mpsc::channel(4);
        let (tx1, rx1) = mpsc::channel(4);
        // The second stream is ready first; its items still come after the first's.
        tx1.send(Ok(10)).await.unwrap();
        tx1.send(Ok(11)).await.unwrap();
        drop(tx1);
        let mut merged = Merged::new([rx0, rx1]);
        let producer = tokio::spawn(async move {
            for i in 0..3 {
                tokio::task::yield_now().await;
                tx0.send(Ok(i)).await.unwrap();
            }
        });
        let mut got = Vec::new();
        while let Some(item) = merged.recv().await {
            got.push(item.unwrap());
        }
        producer.await.unwrap();
        assert_eq!(got, vec![0, 1, 2, 10, 11]);
    }
}

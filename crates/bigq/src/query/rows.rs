//! Typed rows on top of batch streams.

use std::pin::Pin;
use std::task::{Context, Poll};

use bigq_codec::de::RowDecoder;
use futures::Stream;
use futures::stream::BoxStream;
use serde::de::DeserializeOwned;

use super::pages::BatchStream;
use crate::error::Result;

/// A stream of rows decoded into `T` with serde.
///
/// Each Arrow batch is decoded into rows as it arrives; a NULL into a non-`Option` field, a
/// missing column or a value out of range for `T` is an error naming the column and the row.
/// Large query results read through the Storage Read API are decoded on each read
/// stream's task instead.
pub struct RowStream<T> {
    /// Rows decoded elsewhere (on Storage Read tasks); when set, `batches` is unused.
    decoded: Option<BoxStream<'static, Result<T>>>,
    batches: BatchStream,
    rows: std::vec::IntoIter<T>,
    /// Numbers rows over the whole result and keeps its per-batch buffers between batches.
    decoder: RowDecoder<T>,
    failed: bool,
}

// The rows are only moved out, never pinned.
impl<T> Unpin for RowStream<T> {}

impl<T> std::fmt::Debug for RowStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowStream")
            .field("rows_decoded", &self.decoder.rows_decoded())
            .finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned> RowStream<T> {
    pub(crate) fn new(batches: BatchStream) -> Self {
        RowStream {
            decoded: None,
            batches,
            rows: Vec::new().into_iter(),
            decoder: RowDecoder::new(),
            failed: false,
        }
    }

    /// Rows already decoded by `rows`, with `schema` as the stream's Arrow schema.
    pub(crate) fn decoded(
        schema: arrow_schema::SchemaRef,
        rows: BoxStream<'static, Result<T>>,
    ) -> Self {
        RowStream {
            decoded: Some(rows),
            ..RowStream::new(BatchStream::empty(schema))
        }
    }

    /// Collects every row. Rows and batches already in memory (a result's first page) go
    /// straight into the vector; only what is still to come goes through the stream.
    pub async fn try_collect(mut self) -> Result<Vec<T>> {
        use futures::TryStreamExt;
        let mut out: Vec<T> = std::mem::take(&mut self.rows).collect();
        if self.decoded.is_none() && !self.failed {
            while let Some(batch) = self.batches.pop_buffered() {
                self.decoder.decode_into(&batch, &mut out)?;
            }
        }
        while let Some(row) = self.try_next().await? {
            out.push(row);
        }
        Ok(out)
    }
}

impl<T: DeserializeOwned> Stream for RowStream<T> {
    type Item = Result<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(rows) = this.decoded.as_mut() {
            return rows.as_mut().poll_next(cx);
        }
        loop {
            if let Some(r) = this.rows.next() {
                return Poll::Ready(Some(Ok(r)));
            }
            if this.failed {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.batches).poll_next(cx) {
                Poll::Ready(Some(Ok(batch))) => {
                    let rows = match this.decoder.decode(&batch) {
                        Ok(rows) => rows,
                        Err(e) => {
                            this.failed = true;
                            return Poll::Ready(Some(Err(e.into())));
                        }
                    };
                    this.rows = rows.into_iter();
                }
                Poll::Ready(Some(Err(e))) => {
                    this.failed = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

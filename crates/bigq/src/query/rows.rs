//! Typed rows on top of batch streams.

use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use serde::de::DeserializeOwned;

use super::pages::BatchStream;
use crate::error::Result;

/// A stream of rows decoded into `T` with serde.
///
/// Each Arrow batch is decoded into rows as it arrives; a NULL into a non-`Option` field, a
/// missing column or a value out of range for `T` is an error naming the column and the row.
pub struct RowStream<T> {
    batches: BatchStream,
    rows: std::vec::IntoIter<T>,
    rows_before: u64,
    failed: bool,
    _t: PhantomData<fn() -> T>,
}

// The rows are only moved out, never pinned.
impl<T> Unpin for RowStream<T> {}

impl<T> std::fmt::Debug for RowStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowStream")
            .field("rows_before", &self.rows_before)
            .finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned> RowStream<T> {
    pub(crate) fn new(batches: BatchStream) -> Self {
        RowStream {
            batches,
            rows: Vec::new().into_iter(),
            rows_before: 0,
            failed: false,
            _t: PhantomData,
        }
    }

    /// Collects every row.
    pub async fn try_collect(self) -> Result<Vec<T>> {
        use futures::TryStreamExt;
        TryStreamExt::try_collect(self).await
    }
}

impl<T: DeserializeOwned> Stream for RowStream<T> {
    type Item = Result<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(r) = this.rows.next() {
                return Poll::Ready(Some(Ok(r)));
            }
            if this.failed {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.batches).poll_next(cx) {
                Poll::Ready(Some(Ok(batch))) => {
                    let mut rows = Vec::with_capacity(batch.num_rows());
                    let offset = this.rows_before;
                    this.rows_before += batch.num_rows() as u64;
                    if let Err(e) =
                        bigq_codec::de::extend_from_record_batch(&batch, &mut rows, offset)
                    {
                        this.failed = true;
                        return Poll::Ready(Some(Err(e.into())));
                    }
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

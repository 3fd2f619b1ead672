//! The public entry points: decode a batch's rows, all at once or one by one.

use std::marker::PhantomData;

use arrow_array::RecordBatch;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::node::{self, Buffers, StructNode};
use super::row::RowDe;
use crate::CodecError;

/// Decodes every row of `batch` into a `T`.
///
/// Errors name the column (a dotted path for nested fields) and the row, counted from 0.
pub fn from_record_batch<T: DeserializeOwned>(batch: &RecordBatch) -> Result<Vec<T>, CodecError> {
    let mut out = Vec::with_capacity(batch.num_rows());
    extend_from_record_batch(batch, &mut out, 0)?;
    Ok(out)
}

/// Decodes every row of `batch` and appends it to `out`.
///
/// `row_offset` is the index of the batch's first row in the whole result, which errors
/// report. On error `out` is left as it was. For a stream of batches use a [`RowDecoder`],
/// which keeps its per-batch vectors from one batch to the next (allocating them for every
/// batch made the benchmark's scan rows 16–23% slower to decode with glibc's malloc, whose
/// large allocations first merge every small block freed since).
pub fn extend_from_record_batch<T: DeserializeOwned>(
    batch: &RecordBatch,
    out: &mut Vec<T>,
    row_offset: u64,
) -> Result<(), CodecError> {
    BatchRows::with_row_offset(batch, row_offset).decode_into(out)
}

/// Runs `read` (the reading of one row), again if a struct plan turned from positional to
/// named on the way (see [`node`](super::node)); that happens at most once per plan.
#[inline(always)]
fn settled<R>(mut read: impl FnMut() -> R) -> R {
    loop {
        let flips = node::flips();
        let r = read();
        if node::flips() == flips {
            return r;
        }
    }
}

/// Decodes one row (see [`settled`]).
#[inline(always)]
fn decode_row<'a, T: Deserialize<'a>>(
    node: &StructNode<'a>,
    row: usize,
) -> Result<T, super::error::DeError> {
    settled(|| T::deserialize(RowDe::new(node, row)))
}

/// The rows of one batch, decoded into `T` one at a time.
///
/// Making one prepares the batch once (each column downcast to its Arrow type, each target
/// struct's fields matched to columns on first use); every row then reads from plain
/// slices. It is an iterator of `Result<T, CodecError>`; [`BatchRows::row`] reads any row.
///
/// `T` may borrow from the batch (`&'a str`, `&'a [u8]` fields).
pub struct BatchRows<'a, T> {
    node: StructNode<'a>,
    next: usize,
    len: usize,
    row_offset: u64,
    _target: PhantomData<fn() -> T>,
}

impl<'a, T: Deserialize<'a>> BatchRows<'a, T> {
    /// The rows of `batch`, numbered from 0 in errors.
    pub fn new(batch: &'a RecordBatch) -> Self {
        Self::with_row_offset(batch, 0)
    }

    /// The rows of `batch`, whose first row is row `row_offset` of the whole result.
    pub fn with_row_offset(batch: &'a RecordBatch, row_offset: u64) -> Self {
        Self::with_buffers(batch, row_offset, Buffers::default())
    }

    fn with_buffers(batch: &'a RecordBatch, row_offset: u64, buffers: Buffers) -> Self {
        BatchRows {
            node: StructNode::with_buffers(batch.schema_ref().fields(), batch.columns(), buffers),
            next: 0,
            len: batch.num_rows(),
            row_offset,
            _target: PhantomData,
        }
    }

    /// The number of rows in the batch.
    pub fn num_rows(&self) -> usize {
        self.len
    }

    /// Decodes row `index` of the batch (0-based within it).
    pub fn row(&self, index: usize) -> Result<T, CodecError> {
        let at = self.row_offset + index as u64;
        if index >= self.len {
            return Err(CodecError::new(
                crate::CodecErrorKind::Deserialize,
                format!("row {index} is past the end of a batch of {}", self.len),
            )
            .with_row(at));
        }
        decode_row(&self.node, index).map_err(|e| e.at_row(at))
    }

    /// Decodes the rows not yet read and appends them to `out`. On error `out` is left as
    /// it was.
    pub fn decode_into(&mut self, out: &mut Vec<T>) -> Result<(), CodecError> {
        let before = out.len();
        out.reserve(self.len - self.next);
        for i in self.next..self.len {
            // Read once inline; the retry loop of `decode_row` stays out of the hot loop (as
            // a loop here it costs 6% more instructions on the benchmark's rows).
            let flips = node::flips();
            let mut r = T::deserialize(RowDe::new(&self.node, i));
            if node::flips() != flips {
                r = decode_row(&self.node, i);
            }
            match r {
                Ok(v) => out.push(v),
                Err(e) => {
                    self.next = i + 1;
                    out.truncate(before);
                    return Err(e.at_row(self.row_offset + i as u64));
                }
            }
        }
        self.next = self.len;
        Ok(())
    }

    /// Decodes the rows not yet read into `out` in place: its existing rows are overwritten
    /// with serde's `deserialize_in_place` (a `String` or `Vec` field keeps its buffer, so a
    /// caller that reuses `out` batch after batch does not allocate them again), rows are
    /// appended where `out` is shorter and dropped where it is longer. Types whose
    /// `Deserialize` has no in-place form (`Option<T>`, derived structs without serde_derive's
    /// `deserialize_in_place` feature) are decoded whole and assigned. On error `out` is
    /// cleared.
    pub fn decode_in_place(&mut self, out: &mut Vec<T>) -> Result<(), CodecError> {
        let n = self.len - self.next;
        out.truncate(n);
        for (k, i) in (self.next..self.len).enumerate() {
            let r = match out.get_mut(k) {
                Some(place) => {
                    settled(|| T::deserialize_in_place(RowDe::new(&self.node, i), place))
                }
                None => decode_row(&self.node, i).map(|v| out.push(v)),
            };
            if let Err(e) = r {
                self.next = i + 1;
                out.clear();
                return Err(e.at_row(self.row_offset + i as u64));
            }
        }
        self.next = self.len;
        Ok(())
    }
}

impl<'a, T: Deserialize<'a>> Iterator for BatchRows<'a, T> {
    type Item = Result<T, CodecError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.len {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(decode_row(&self.node, i).map_err(|e| e.at_row(self.row_offset + i as u64)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.len - self.next;
        (left, Some(left))
    }
}

impl<'a, T: Deserialize<'a>> ExactSizeIterator for BatchRows<'a, T> {}

/// Decodes the batches of one result in turn, numbering rows over the whole result.
///
/// ```
/// # use std::sync::Arc;
/// # use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
/// use bigq_codec::de::RowDecoder;
///
/// #[derive(serde::Deserialize)]
/// struct Person {
///     id: i64,
///     name: Option<String>,
/// }
///
/// # let batch = RecordBatch::try_from_iter([
/// #     ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
/// #     ("name", Arc::new(StringArray::from(vec![Some("Ada"), None])) as ArrayRef),
/// # ])?;
/// let mut decoder = RowDecoder::<Person>::new();
/// let mut people = Vec::new();
/// for batch in [&batch, &batch] {
///     decoder.decode_into(batch, &mut people)?;
/// }
/// assert_eq!(people.len(), 4);
/// assert_eq!(people[2].name.as_deref(), Some("Ada"));
/// assert_eq!(decoder.rows_decoded(), 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RowDecoder<T> {
    next_row: u64,
    /// The per-batch vectors, kept for the next batch.
    buffers: Buffers,
    _target: PhantomData<fn() -> T>,
}

impl<T> Default for RowDecoder<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> std::fmt::Debug for RowDecoder<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowDecoder")
            .field("next_row", &self.next_row)
            .finish()
    }
}

impl<T> RowDecoder<T> {
    /// A decoder whose first row is row 0.
    pub fn new() -> Self {
        Self::starting_at(0)
    }

    /// A decoder whose first row is row `row` of the result (to resume a read).
    pub fn starting_at(row: u64) -> Self {
        RowDecoder {
            next_row: row,
            buffers: Buffers::default(),
            _target: PhantomData,
        }
    }

    /// Rows handed out so far (plus the starting row), which is the index the next batch's
    /// first row gets.
    pub fn rows_decoded(&self) -> u64 {
        self.next_row
    }

    /// The rows of the next batch, one by one.
    pub fn rows<'a>(&mut self, batch: &'a RecordBatch) -> BatchRows<'a, T>
    where
        T: Deserialize<'a>,
    {
        let rows = BatchRows::with_row_offset(batch, self.next_row);
        self.next_row += batch.num_rows() as u64;
        rows
    }

    /// Decodes the next batch and appends its rows to `out`. On error `out` is left as it
    /// was, and the batch still counts towards the row numbers.
    ///
    /// `T` may borrow from the batch (`&'a str` fields), which then outlives the rows.
    pub fn decode_into<'a>(
        &mut self,
        batch: &'a RecordBatch,
        out: &mut Vec<T>,
    ) -> Result<(), CodecError>
    where
        T: Deserialize<'a>,
    {
        self.with_batch(batch, |rows| rows.decode_into(out))
    }

    /// Decodes the next batch into `out` in place, reusing the buffers of the rows already
    /// there (see [`BatchRows::decode_in_place`]): afterwards `out` holds exactly this
    /// batch's rows. On error `out` is cleared, and the batch still counts towards the row
    /// numbers.
    pub fn decode_in_place<'a>(
        &mut self,
        batch: &'a RecordBatch,
        out: &mut Vec<T>,
    ) -> Result<(), CodecError>
    where
        T: Deserialize<'a>,
    {
        self.with_batch(batch, |rows| rows.decode_in_place(out))
    }

    /// Runs `decode` on the rows of the next batch, prepared with the buffers the decoder
    /// keeps from batch to batch (and keeping them again afterwards); the batch counts
    /// towards the row numbers whatever `decode` returns.
    fn with_batch<'a>(
        &mut self,
        batch: &'a RecordBatch,
        decode: impl FnOnce(&mut BatchRows<'a, T>) -> Result<(), CodecError>,
    ) -> Result<(), CodecError>
    where
        T: Deserialize<'a>,
    {
        let buffers = std::mem::take(&mut self.buffers);
        let mut rows = BatchRows::with_buffers(batch, self.next_row, buffers);
        self.next_row += batch.num_rows() as u64;
        let r = decode(&mut rows);
        self.buffers = rows.node.into_buffers();
        r
    }

    /// Decodes the next batch.
    pub fn decode(&mut self, batch: &RecordBatch) -> Result<Vec<T>, CodecError>
    where
        T: DeserializeOwned,
    {
        let mut out = Vec::with_capacity(batch.num_rows());
        self.decode_into(batch, &mut out)?;
        Ok(out)
    }
}

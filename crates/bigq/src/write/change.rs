//! Change rows for BigQuery's change data capture: a row with what it does to the row of its
//! primary key (`_CHANGE_TYPE`) and where it falls among that key's changes
//! (`_CHANGE_SEQUENCE_NUMBER`).

pub use bigq_codec::proto::{
    CHANGE_SEQUENCE_COLUMN, CHANGE_TYPE_COLUMN, ChangeSequence, ChangeType,
};

/// One change row for [`Writer::append_changes`](super::Writer::append_changes): an
/// upsert of a whole row, or a delete of the row with the key of `row`, with an optional
/// sequence number.
///
/// ```
/// use bigq::write::{Change, ChangeSequence, ChangeType};
///
/// #[derive(serde::Serialize)]
/// struct Key {
///     id: i64,
/// }
/// let c = Change::delete(Key { id: 7 }).with_sequence([2, 0x10]);
/// assert_eq!(c.kind, ChangeType::Delete);
/// assert_eq!(c.sequence.map(|s| s.to_string()).as_deref(), Some("2/10"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change<T> {
    /// UPSERT or DELETE.
    pub kind: ChangeType,
    /// The change's `_CHANGE_SEQUENCE_NUMBER`, if it has one.
    pub sequence: Option<ChangeSequence>,
    /// The row (for a DELETE, its primary key columns are what counts).
    pub row: T,
}

impl<T> Change<T> {
    /// Inserts `row`, or replaces the row with its primary key.
    pub fn upsert(row: T) -> Self {
        Change {
            kind: ChangeType::Upsert,
            sequence: None,
            row,
        }
    }

    /// Deletes the row with the primary key of `key` (a row with the key columns, and the
    /// table's REQUIRED columns, which BigQuery reads but does not keep).
    pub fn delete(key: T) -> Self {
        Change {
            kind: ChangeType::Delete,
            sequence: None,
            row: key,
        }
    }

    /// Gives the change a `_CHANGE_SEQUENCE_NUMBER`: among the changes of one key, the
    /// highest wins, whatever order they arrive in.
    pub fn with_sequence(mut self, sequence: impl Into<ChangeSequence>) -> Self {
        self.sequence = Some(sequence.into());
        self
    }
}

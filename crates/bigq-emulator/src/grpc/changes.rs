//! Change data capture on Storage Write: rows carrying `_CHANGE_TYPE` (`UPSERT` or `DELETE`)
//! and optionally `_CHANGE_SEQUENCE_NUMBER` merged into a table by its primary key, as a
//! table with `max_staleness` 0 shows them: for each key the change with the highest
//! sequence number wins (without sequence numbers, the later write), a DELETE removes the
//! key's rows, and a DELETE of an absent key changes nothing.
//!
//! Sequence numbers are remembered per key (deleted keys too), so that a change arriving
//! after one with a higher sequence number is ignored, as BigQuery ignores it.

use std::collections::HashMap;

use bigq_codec::proto::{CHANGE_SEQUENCE_COLUMN, CHANGE_TYPE_COLUMN, ChangeSequence, ChangeType};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, UInt32Array};
use datafusion::arrow::compute::{cast, filter_record_batch, take_record_batch};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::row::{RowConverter, SortField};

use crate::catalog::Table;

/// The change pseudo-columns of a request's rows (absent: no row carries them).
#[derive(Debug, Default)]
pub struct ChangeColumns {
    /// `_CHANGE_TYPE`.
    pub change_type: Option<ArrayRef>,
    /// `_CHANGE_SEQUENCE_NUMBER`.
    pub sequence: Option<ArrayRef>,
}

/// One row's change; `None` for a row without `_CHANGE_TYPE`, appended as it is.
pub type Change = Option<(ChangeType, Option<ChangeSequence>)>;

/// The changes of a request's `n` rows, or a message per row that is not one.
pub fn parse(columns: &ChangeColumns, n: usize) -> Result<Vec<Change>, Vec<(usize, String)>> {
    let text =
        |a: &Option<ArrayRef>, name: &str| -> Result<Option<ArrayRef>, Vec<(usize, String)>> {
            a.as_ref()
                .map(|a| {
                    cast(a, &DataType::Utf8).map_err(|_| {
                        vec![(
                            0,
                            format!("{name}: a {} column is not a STRING.", a.data_type()),
                        )]
                    })
                })
                .transpose()
        };
    let types = text(&columns.change_type, CHANGE_TYPE_COLUMN)?;
    let sequences = text(&columns.sequence, CHANGE_SEQUENCE_COLUMN)?;
    let types = types.as_ref().map(|a| a.as_string::<i32>());
    let sequences = sequences.as_ref().map(|a| a.as_string::<i32>());
    let mut out = Vec::with_capacity(n);
    let mut errors = Vec::new();
    for i in 0..n {
        let Some(kind) = types.filter(|t| t.is_valid(i)).map(|t| t.value(i)) else {
            out.push(None);
            continue;
        };
        let Some(kind) = ChangeType::parse(kind) else {
            errors.push((
                i,
                format!(
                    "{CHANGE_TYPE_COLUMN}: The given value is not a valid CHANGE_TYPE: {kind}. \
                     Supported values are UPSERT and DELETE."
                ),
            ));
            continue;
        };
        let sequence = match sequences.filter(|s| s.is_valid(i)).map(|s| s.value(i)) {
            None => None,
            Some(s) => match ChangeSequence::parse(s) {
                Ok(s) => Some(s),
                Err(e) => {
                    errors.push((i, format!("{CHANGE_SEQUENCE_COLUMN}: {}", e.message())));
                    continue;
                }
            },
        };
        out.push(Some((kind, sequence)));
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The first change type of `changes`, for BigQuery's message on a stream that takes none.
pub fn first_change(changes: &[Change]) -> Option<ChangeType> {
    changes.iter().flatten().map(|(kind, _)| *kind).next()
}

/// The table's primary key columns (`tableConstraints.primaryKey.columns`) as indices of
/// its schema; `None` without a primary key, `Err` naming a key column it lacks.
pub fn primary_key(table: &Table) -> Result<Option<Vec<usize>>, String> {
    let Some(columns) = table
        .options
        .get("tableConstraints")
        .and_then(|c| c.get("primaryKey"))
        .and_then(|k| k.get("columns"))
        .and_then(|c| c.as_array())
        .filter(|c| !c.is_empty())
    else {
        return Ok(None);
    };
    columns
        .iter()
        .map(|c| {
            let name = c.as_str().unwrap_or_default();
            table
                .schema
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| format!("The primary key column {name} is not in the table."))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// What the emulator remembers of a table's changes: the sequence number of each key's
/// winning change (`None` for one without), deleted keys included.
#[derive(Debug, Default)]
pub struct KeyLog {
    /// The table's creation time and key types when the log began; a table created again
    /// (or keyed otherwise) starts a new log.
    identity: Option<(i64, Vec<DataType>)>,
    sequences: HashMap<Box<[u8]>, Option<ChangeSequence>>,
}

impl KeyLog {
    /// Forgets everything if the log was for another table of the same name.
    fn reset_unless(&mut self, identity: (i64, Vec<DataType>)) {
        if self.identity.as_ref() != Some(&identity) {
            self.sequences.clear();
            self.identity = Some(identity);
        }
    }
}

/// The rows of `table` once `batch` (in the table's layout, with its `changes`) is merged
/// by the key columns `key`. Rows without a change are appended as they are.
pub fn merge(
    table: &Table,
    key: &[usize],
    log: &mut KeyLog,
    batch: &RecordBatch,
    changes: &[Change],
) -> Result<Vec<RecordBatch>, ArrowError> {
    let key_types: Vec<DataType> = key
        .iter()
        .map(|&i| table.arrow_schema.field(i).data_type().clone())
        .collect();
    log.reset_unless((table.creation_time, key_types.clone()));
    let converter = RowConverter::new(key_types.into_iter().map(SortField::new).collect())?;
    let key_columns =
        |b: &RecordBatch| -> Vec<ArrayRef> { key.iter().map(|&i| b.column(i).clone()).collect() };
    let incoming = converter.convert_columns(&key_columns(batch))?;
    // Each key's winning change in this request: the row to keep, or none for a DELETE.
    let mut changed: HashMap<Box<[u8]>, Option<usize>> = HashMap::new();
    let mut keep = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        let Some((kind, sequence)) = change else {
            keep.push(i);
            continue;
        };
        let row: Box<[u8]> = incoming.row(i).as_ref().into();
        // Ties and changes without a sequence number: the later write wins.
        let wins = match (sequence, log.sequences.get(&row)) {
            (Some(new), Some(Some(current))) => new >= current,
            _ => true,
        };
        if wins {
            log.sequences.insert(row.clone(), *sequence);
            changed.insert(row, (*kind == ChangeType::Upsert).then_some(i));
        }
    }
    keep.extend(changed.values().flatten().copied());
    keep.sort_unstable();
    let mut out = Vec::with_capacity(table.batches.len() + 1);
    for b in &table.batches {
        if changed.is_empty() || b.num_rows() == 0 {
            out.push(b.clone());
            continue;
        }
        let rows = converter.convert_columns(&key_columns(b))?;
        let mask: BooleanArray = (0..b.num_rows())
            .map(|i| Some(!changed.contains_key(rows.row(i).as_ref())))
            .collect();
        if mask.true_count() == b.num_rows() {
            out.push(b.clone());
        } else if mask.true_count() > 0 {
            out.push(filter_record_batch(b, &mask)?);
        }
    }
    if !keep.is_empty() {
        let indices = UInt32Array::from_iter_values(keep.into_iter().map(|i| i as u32));
        out.push(take_record_batch(batch, &indices)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bigq_codec::schema::{FieldType, TableFieldSchema};
    use datafusion::arrow::array::{Int64Array, StringArray};

    use super::*;

    fn table(rows: &[(i64, &str)]) -> Table {
        let mut t = Table::new(vec![
            TableFieldSchema::new("id", FieldType::Int64),
            TableFieldSchema::new("v", FieldType::String),
        ])
        .unwrap();
        t.options.insert(
            "tableConstraints".into(),
            serde_json::json!({"primaryKey": {"columns": ["ID"]}}),
        );
        if !rows.is_empty() {
            t.batches.push(batch(&t, rows));
        }
        t
    }

    fn batch(t: &Table, rows: &[(i64, &str)]) -> RecordBatch {
        RecordBatch::try_new(
            t.arrow_schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            ],
        )
        .unwrap()
    }

    fn contents(batches: &[RecordBatch]) -> Vec<(i64, String)> {
        let mut out: Vec<(i64, String)> = batches
            .iter()
            .flat_map(|b| {
                let ids = b
                    .column(0)
                    .as_primitive::<datafusion::arrow::datatypes::Int64Type>();
                let vs = b.column(1).as_string::<i32>();
                (0..b.num_rows())
                    .map(|i| (ids.value(i), vs.value(i).to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort();
        out
    }

    /// Applies `changes` (key, value, UPSERT or DELETE, sequence) one request at a time.
    fn apply(t: &mut Table, log: &mut KeyLog, changes: &[(i64, &str, &str, Option<&str>)]) {
        let rows: Vec<(i64, &str)> = changes.iter().map(|c| (c.0, c.1)).collect();
        let cols = ChangeColumns {
            change_type: Some(Arc::new(StringArray::from_iter_values(
                changes.iter().map(|c| c.2),
            ))),
            sequence: Some(Arc::new(StringArray::from_iter(
                changes.iter().map(|c| c.3),
            ))),
        };
        let parsed = parse(&cols, changes.len()).unwrap();
        let key = primary_key(t).unwrap().unwrap();
        t.batches = merge(t, &key, log, &batch(t, &rows), &parsed).unwrap();
    }

    #[test]
    fn upserts_and_deletes_by_key() {
        let mut t = table(&[(1, "a"), (2, "b"), (3, "c")]);
        let mut log = KeyLog::default();
        apply(
            &mut t,
            &mut log,
            &[
                (2, "B", "UPSERT", None),
                (3, "", "DELETE", None),
                (4, "d", "UPSERT", None),
                (9, "", "DELETE", None),
            ],
        );
        assert_eq!(
            contents(&t.batches),
            [(1, "a".into()), (2, "B".into()), (4, "d".into())]
        );
        // Without sequence numbers, the later change of a key in a request wins.
        apply(
            &mut t,
            &mut log,
            &[
                (1, "x", "UPSERT", None),
                (1, "y", "UPSERT", None),
                (4, "", "DELETE", None),
                (4, "z", "UPSERT", None),
            ],
        );
        assert_eq!(
            contents(&t.batches),
            [(1, "y".into()), (2, "B".into()), (4, "z".into())]
        );
    }

    #[test]
    fn the_highest_sequence_number_wins() {
        let mut t = table(&[]);
        let mut log = KeyLog::default();
        apply(
            &mut t,
            &mut log,
            &[
                (1, "v5", "UPSERT", Some("5")),
                (1, "v3", "UPSERT", Some("3")),
            ],
        );
        assert_eq!(contents(&t.batches), [(1, "v5".into())]);
        // A lower sequence number in a later request is ignored, an equal one wins.
        apply(&mut t, &mut log, &[(1, "v4", "UPSERT", Some("4"))]);
        assert_eq!(contents(&t.batches), [(1, "v5".into())]);
        apply(&mut t, &mut log, &[(1, "v5b", "UPSERT", Some("5"))]);
        assert_eq!(contents(&t.batches), [(1, "v5b".into())]);
        // A DELETE below the current row's number is ignored; above it, it deletes.
        apply(&mut t, &mut log, &[(1, "", "DELETE", Some("4/FFFF"))]);
        assert_eq!(contents(&t.batches), [(1, "v5b".into())]);
        apply(&mut t, &mut log, &[(1, "", "DELETE", Some("5/1"))]);
        assert_eq!(contents(&t.batches), []);
        // The deleted key remembers its number: an older upsert does not bring it back.
        apply(
            &mut t,
            &mut log,
            &[
                (1, "old", "UPSERT", Some("5")),
                (2, "two", "UPSERT", Some("a")),
            ],
        );
        assert_eq!(contents(&t.batches), [(2, "two".into())]);
        apply(&mut t, &mut log, &[(1, "new", "UPSERT", Some("6"))]);
        assert_eq!(contents(&t.batches), [(1, "new".into()), (2, "two".into())]);
    }

    #[test]
    fn bad_change_values_are_row_errors() {
        let cols = ChangeColumns {
            change_type: Some(Arc::new(StringArray::from(vec![
                Some("UPSERT"),
                Some("INSERT"),
                None,
                Some("DELETE"),
            ]))),
            sequence: Some(Arc::new(StringArray::from(vec![
                Some("1"),
                Some("2"),
                Some("zz"),
                Some("1/2/3/4/5"),
            ]))),
        };
        let errors = parse(&cols, 4).unwrap_err();
        assert_eq!(errors.iter().map(|e| e.0).collect::<Vec<_>>(), [1, 3]);
        assert!(
            errors[0].1.contains("not a valid CHANGE_TYPE: INSERT"),
            "{}",
            errors[0].1
        );
        assert!(
            errors[1].1.contains("more than 4 sections"),
            "{}",
            errors[1].1
        );
    }

    #[test]
    fn primary_key_columns_by_name() {
        let t = table(&[]);
        assert_eq!(primary_key(&t), Ok(Some(vec![0])));
        let mut bare = t.clone();
        bare.options.clear();
        assert_eq!(primary_key(&bare), Ok(None));
    }
}

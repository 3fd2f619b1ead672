//! `insertId` de-duplication for `tabledata.insertAll`: BigQuery remembers the ids of rows
//! written to a table for at least a minute, best effort, and writes a row whose id it has
//! seen only once. The index here keeps each id for [`WINDOW`] and at most [`CAPACITY`] ids
//! in all (the oldest forgotten first), so it stays bounded whatever clients send.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long an id is remembered: BigQuery's documented minimum.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The most ids remembered at once (about 100 bytes each).
pub const CAPACITY: usize = 1 << 20;

/// The ids of rows written recently, per table.
#[derive(Debug, Default)]
pub struct InsertIds {
    inner: Mutex<Index>,
}

#[derive(Debug, Default)]
struct Index {
    /// Table, then insertId: when it was written. Looked up by `&str`, with no allocation.
    seen: HashMap<Arc<str>, HashMap<Arc<str>, Instant>>,
    /// (when, table, insertId) in the order they were written, to forget the oldest first.
    order: VecDeque<(Instant, Arc<str>, Arc<str>)>,
}

impl Index {
    fn remember(&mut self, table: &Arc<str>, id: &str, at: Instant) {
        let id: Arc<str> = id.into();
        self.seen
            .entry(table.clone())
            .or_default()
            .insert(id.clone(), at);
        self.order.push_back((at, table.clone(), id));
    }

    fn has(&self, table: &str, id: &str) -> bool {
        self.seen.get(table).is_some_and(|ids| ids.contains_key(id))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.seen.values().map(HashMap::len).sum()
    }

    fn expire(&mut self, now: Instant, window: Duration, capacity: usize) {
        while let Some((at, _, _)) = self.order.front() {
            if now.duration_since(*at) < window && self.order.len() <= capacity {
                break;
            }
            let Some((at, table, id)) = self.order.pop_front() else {
                break;
            };
            if let Some(ids) = self.seen.get_mut(&table) {
                // Only if not written again since.
                if ids.get(&id) == Some(&at) {
                    ids.remove(&id);
                }
                if ids.is_empty() {
                    self.seen.remove(&table);
                }
            }
        }
    }
}

/// The index locked for one `insertAll`: the caller filters its rows, writes them, and
/// records their ids before the lock is let go, so two requests carrying the same id
/// cannot both write it.
pub struct Batch<'a> {
    index: MutexGuard<'a, Index>,
    table: Arc<str>,
    now: Instant,
}

impl InsertIds {
    /// Locks the index for a write to `table` (any text naming the table).
    pub fn begin(&self, table: &str) -> Batch<'_> {
        let mut index = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        index.expire(now, WINDOW, CAPACITY);
        Batch {
            index,
            table: table.into(),
            now,
        }
    }
}

impl Batch<'_> {
    /// Which of `ids` (one per row; None for a row without an id) are to be written: not
    /// seen within the window, and the first of their id in this request.
    pub fn fresh(&self, ids: &[Option<&str>]) -> Vec<bool> {
        let mut here = HashSet::new();
        ids.iter()
            .map(|id| match id {
                None => true,
                Some(id) => here.insert(*id) && !self.index.has(&self.table, id),
            })
            .collect()
    }

    /// Records `ids` as written (call once the rows are committed).
    pub fn record<'i>(mut self, ids: impl IntoIterator<Item = &'i str>) {
        for id in ids {
            self.index.remember(&self.table, id, self.now);
        }
        let now = self.now;
        self.index.expire(now, WINDOW, CAPACITY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seen_id_is_not_fresh_and_the_oldest_go_first() {
        let ids = InsertIds::default();
        let b = ids.begin("t");
        assert_eq!(
            b.fresh(&[Some("a"), None, Some("a"), Some("b")]),
            [true, true, false, true]
        );
        b.record(["a", "b"]);
        assert_eq!(ids.begin("t").fresh(&[Some("a"), Some("c")]), [false, true]);
        // Another table has its own ids.
        assert_eq!(ids.begin("u").fresh(&[Some("a")]), [true]);

        let mut index = Index::default();
        let t0 = Instant::now();
        for (i, k) in ["x", "y", "z"].iter().enumerate() {
            let at = t0 + Duration::from_millis(i as u64);
            index.remember(&"t".into(), k, at);
        }
        index.expire(t0 + Duration::from_millis(2), WINDOW, 2);
        assert!(!index.has("t", "x"));
        assert_eq!(index.len(), 2);
        index.expire(t0 + WINDOW + Duration::from_millis(1), WINDOW, 2);
        assert_eq!(index.len(), 1, "y aged out, z is younger than the window");
    }
}

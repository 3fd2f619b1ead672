//! A row-shaped set of columns (the batch, or one STRUCT column) and the mapping from a
//! target struct's fields to its columns.
//!
//! # Positional reads
//!
//! serde's derived struct visitors take the fields either as a map (a key, then its value)
//! or as a sequence in declaration order. The sequence skips every key comparison and is
//! much faster, but it is only right when the struct's `fields` list names exactly its
//! fields in order: derive also lists every `#[serde(alias)]` there. So a plan in which
//! every name of `fields` has a column starts as [`Mode::Probe`]: its first row is read as a
//! sequence and the plan becomes [`Mode::Positional`] if the visitor succeeded after taking
//! every element. A visitor that took fewer (an alias: derive stops at its own field
//! count), failed, or takes no sequence at all turns the plan to [`Mode::Named`], and the
//! row is read again from the top ([`flips`] tells the row loop), by name this time.

use std::cell::{Cell, OnceCell};
use std::ops::Deref;

use arrow_array::ArrayRef;
use arrow_schema::Fields;

use super::column::Column;

/// The columns of a batch or of a STRUCT column, prepared once.
pub(crate) struct StructNode<'a> {
    pub(crate) names: Vec<&'a str>,
    pub(crate) columns: Vec<Column<'a>>,
    /// The plans built so far, one per target struct (keyed by its `fields` list), filled
    /// in order. A node read as more target structs than this builds the extra plans anew
    /// for each row.
    plans: [OnceCell<Plan>; PLAN_SLOTS],
}

const PLAN_SLOTS: usize = 8;

/// How a plan hands its struct's fields to the visitor.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// Not known yet: read as a sequence and check.
    Probe,
    /// As a sequence, in `fields` order.
    Positional,
    /// As a map keyed by field name.
    Named,
}

/// Which column holds each field of one target struct, worked out once per batch.
pub(crate) struct Plan {
    /// Address and length of the struct's `fields` list.
    key: (usize, usize),
    /// The keys to present, in the struct's field order, with their column. A field with
    /// no column is left out: serde then reports it missing, or `None` for an `Option`.
    entries: Vec<(&'static str, usize)>,
    mode: Cell<Mode>,
}

impl Plan {
    #[inline(always)]
    pub(crate) fn entries(&self) -> &[(&'static str, usize)] {
        &self.entries
    }

    #[inline(always)]
    pub(crate) fn mode(&self) -> Mode {
        self.mode.get()
    }

    /// Ends the probe: positional if the sequence read was whole, by name otherwise.
    #[cold]
    pub(crate) fn settle(&self, whole: bool) {
        if whole {
            self.mode.set(Mode::Positional);
        } else {
            self.mode.set(Mode::Named);
            FLIPS.with(|f| f.set(f.get() + 1));
        }
    }
}

thread_local! {
    static FLIPS: Cell<u64> = const { Cell::new(0) };
}

/// How many plans on this thread have turned to [`Mode::Named`] after a probe. A row during
/// which this changed may have been read wrongly, and is read again.
#[inline(always)]
pub(crate) fn flips() -> u64 {
    FLIPS.with(Cell::get)
}

/// The allocations of a node's vectors, kept empty between batches so that a
/// [`RowDecoder`](super::RowDecoder) allocates nothing large per batch. (glibc's allocator
/// merges all its freed small blocks on any allocation of 1 KiB or more, which slows every
/// small allocation after it: the rows' strings.)
#[derive(Default)]
pub(crate) struct Buffers {
    names: Vec<&'static str>,
    columns: Vec<Column<'static>>,
}

/// Empties `v` and gives its allocation a `'static` element type. Collecting an emptied
/// vector's iterator into a vector of a same-sized type reuses the allocation.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

/// A plan kept in its node, or one built for a single read.
pub(crate) enum PlanRef<'n> {
    Cached(&'n Plan),
    Fresh(Plan),
}

impl Deref for PlanRef<'_> {
    type Target = Plan;
    #[inline(always)]
    fn deref(&self) -> &Plan {
        match self {
            PlanRef::Cached(p) => p,
            PlanRef::Fresh(p) => p,
        }
    }
}

impl<'a> StructNode<'a> {
    pub(crate) fn new(fields: &'a Fields, arrays: &'a [ArrayRef]) -> Self {
        Self::with_buffers(fields, arrays, Buffers::default())
    }

    /// A node whose vectors reuse the allocations of `buffers`.
    pub(crate) fn with_buffers(
        fields: &'a Fields,
        arrays: &'a [ArrayRef],
        buffers: Buffers,
    ) -> Self {
        // An empty `Vec` of a longer lifetime is one of a shorter lifetime (covariance).
        let mut names: Vec<&'a str> = buffers.names;
        let mut columns: Vec<Column<'a>> = buffers.columns;
        names.extend(fields.iter().map(|f| f.name().as_str()));
        columns.extend(arrays.iter().map(Column::new));
        StructNode {
            names,
            columns,
            plans: Default::default(),
        }
    }

    /// The node's vectors, emptied, for the next batch.
    pub(crate) fn into_buffers(self) -> Buffers {
        Buffers {
            names: recycle(self.names),
            columns: recycle(self.columns),
        }
    }

    /// Column `c`, which a plan matched (so it exists).
    #[inline(always)]
    pub(crate) fn column(&self, c: usize) -> &Column<'a> {
        debug_assert!(c < self.columns.len());
        // SAFETY: plans only hold indexes of this node's columns.
        unsafe { self.columns.get_unchecked(c) }
    }

    /// The plan for the struct whose field names are `fields`.
    #[inline(always)]
    pub(crate) fn plan(&self, fields: &'static [&'static str]) -> PlanRef<'_> {
        let key = (fields.as_ptr() as usize, fields.len());
        if let Some(p) = self.plans[0].get()
            && p.key == key
        {
            return PlanRef::Cached(p);
        }
        self.plan_slow(fields, key)
    }

    #[inline(never)]
    fn plan_slow(&self, fields: &'static [&'static str], key: (usize, usize)) -> PlanRef<'_> {
        for slot in &self.plans {
            match slot.get() {
                Some(p) if p.key == key => return PlanRef::Cached(p),
                Some(_) => {}
                None => return PlanRef::Cached(slot.get_or_init(|| self.build_plan(fields, key))),
            }
        }
        // No slot left: a plan that is not kept cannot carry a probe's outcome.
        let plan = self.build_plan(fields, key);
        plan.mode.set(Mode::Named);
        PlanRef::Fresh(plan)
    }

    #[cold]
    // `taken` has one slot per name and every `c` is a position in `names`.
    #[allow(clippy::indexing_slicing)]
    fn build_plan(&self, fields: &'static [&'static str], key: (usize, usize)) -> Plan {
        let mut found: Vec<Option<usize>> = fields
            .iter()
            .map(|f| self.names.iter().position(|n| n == f))
            .collect();
        // BigQuery column names are case-insensitive: a field with no exact match takes a
        // column that differs only in ASCII case and that no other field matched exactly.
        if found.contains(&None) {
            // Not `vec![false; n]`: that is a zeroed allocation, glibc's `calloc`, which
            // has no fast path (a third of the plan's cost).
            let mut taken = Vec::with_capacity(self.names.len());
            taken.resize(self.names.len(), false);
            for c in found.iter().flatten() {
                taken[*c] = true;
            }
            for (slot, f) in found.iter_mut().zip(fields) {
                if slot.is_none()
                    && let Some(c) = (0..self.names.len())
                        .find(|&c| !taken[c] && self.names[c].eq_ignore_ascii_case(f))
                {
                    taken[c] = true;
                    *slot = Some(c);
                }
            }
        }
        let entries: Vec<_> = fields
            .iter()
            .zip(found)
            .filter_map(|(f, c)| Some((*f, c?)))
            .collect();
        // A field without a column cannot be given positionally (serde's missing-field
        // handling only works by name).
        let mode = if entries.len() == fields.len() {
            Mode::Probe
        } else {
            Mode::Named
        };
        Plan {
            key,
            entries,
            mode: Cell::new(mode),
        }
    }
}

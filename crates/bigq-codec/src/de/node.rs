//! A row-shaped set of columns (the batch, or one STRUCT column) and the mapping from a
//! target struct's fields to its columns.

use std::borrow::Cow;
use std::cell::OnceCell;

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

/// The keys to present for one target struct and the column of each.
pub(crate) type Entries<'n> = Cow<'n, [(&'static str, usize)]>;

/// Which column holds each field of one target struct, worked out once per batch.
pub(crate) struct Plan {
    /// Address and length of the struct's `fields` list.
    key: (usize, usize),
    /// The keys to present, in the struct's field order, with their column. A field with
    /// no column is left out: serde then reports it missing, or `None` for an `Option`.
    entries: Vec<(&'static str, usize)>,
}

impl<'a> StructNode<'a> {
    pub(crate) fn new(fields: &'a Fields, arrays: &'a [ArrayRef]) -> Self {
        StructNode {
            names: fields.iter().map(|f| f.name().as_str()).collect(),
            columns: arrays.iter().map(Column::new).collect(),
            plans: Default::default(),
        }
    }

    /// The plan for the struct whose field names are `fields`.
    #[inline]
    pub(crate) fn plan(&self, fields: &'static [&'static str]) -> Entries<'_> {
        let key = (fields.as_ptr() as usize, fields.len());
        for slot in &self.plans {
            match slot.get() {
                Some(p) if p.key == key => return Cow::Borrowed(&p.entries),
                Some(_) => {}
                None => {
                    return Cow::Borrowed(
                        &slot.get_or_init(|| self.build_plan(fields, key)).entries,
                    );
                }
            }
        }
        Cow::Owned(self.build_plan(fields, key).entries)
    }

    #[cold]
    #[inline(never)]
    fn build_plan(&self, fields: &'static [&'static str], key: (usize, usize)) -> Plan {
        let mut taken = vec![false; self.names.len()];
        let mut found: Vec<Option<usize>> = fields
            .iter()
            .map(|f| {
                let c = self.names.iter().position(|n| n == f)?;
                taken[c] = true;
                Some(c)
            })
            .collect();
        // BigQuery column names are case-insensitive: a field with no exact match takes a
        // column that differs only in ASCII case and that no other field matched exactly.
        for (slot, f) in found.iter_mut().zip(fields) {
            if slot.is_none()
                && let Some(c) = (0..self.names.len())
                    .find(|&c| !taken[c] && self.names[c].eq_ignore_ascii_case(f))
            {
                taken[c] = true;
                *slot = Some(c);
            }
        }
        let entries = fields
            .iter()
            .zip(found)
            .filter_map(|(f, c)| Some((*f, c?)))
            .collect();
        Plan { key, entries }
    }
}

//! serde's `MapAccess` and `SeqAccess` over Arrow: a struct's fields, a row's columns, a
//! list's items, a map's entries.

use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::cell::CellDe;
use super::column::Column;
use super::error::DeError;
use super::node::{Mode, StructNode};

/// A struct key: a field name, which serde's derived field visitors match.
pub(crate) struct Key<'k>(pub(crate) &'k str);

impl<'de> de::Deserializer<'de> for Key<'de> {
    type Error = DeError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_borrowed_str(self.0)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Reads row `row` of `node` as the struct whose field names are `fields`.
#[inline(always)]
pub(crate) fn read_struct<'n, 'a, V: Visitor<'a>>(
    node: &'n StructNode<'a>,
    fields: &'static [&'static str],
    row: usize,
    v: V,
) -> Result<V::Value, DeError> {
    let plan = node.plan(fields);
    match plan.mode() {
        // A positional plan has an entry for every field. Cut to `fields.len()`, which is a
        // constant once this inlines into a derived visitor, the slice tells the compiler
        // that each element the visitor asks for exists, and the per-field length checks
        // fold away.
        Mode::Positional => match plan.entries().get(..fields.len()) {
            Some(entries) => v.visit_seq(StructSeq::new(node, entries, row)),
            None => v.visit_map(StructMap::new(node, plan.entries(), row)),
        },
        Mode::Named => v.visit_map(StructMap::new(node, plan.entries(), row)),
        Mode::Probe => {
            let mut seq = StructSeq::new(node, plan.entries(), row);
            let r = v.visit_seq(&mut seq);
            plan.settle(r.is_ok() && seq.next == plan.entries().len());
            r
        }
    }
}

/// The fields of one target struct as a map, in its field order, each with the column the
/// plan matched to it.
pub(crate) struct StructMap<'n, 'p, 'a> {
    node: &'n StructNode<'a>,
    entries: &'p [(&'static str, usize)],
    next: usize,
    row: usize,
}

impl<'n, 'p, 'a> StructMap<'n, 'p, 'a> {
    #[inline(always)]
    fn new(node: &'n StructNode<'a>, entries: &'p [(&'static str, usize)], row: usize) -> Self {
        StructMap {
            node,
            entries,
            next: 0,
            row,
        }
    }
}

impl<'a> MapAccess<'a> for StructMap<'_, '_, 'a> {
    type Error = DeError;

    // serde's derive calls `next_key` and `next_value`; overriding them lets the whole
    // read of a field inline into the struct's `visit_map`.
    #[inline(always)]
    fn next_key<K: Deserialize<'a>>(&mut self) -> Result<Option<K>, DeError> {
        self.next_key_seed(PhantomData)
    }

    #[inline(always)]
    fn next_value<V: Deserialize<'a>>(&mut self) -> Result<V, DeError> {
        self.next_value_seed(PhantomData)
    }

    #[inline(always)]
    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.entries.get(self.next) {
            Some(&(key, _)) => seed.deserialize(Key(key)).map(Some),
            None => Ok(None),
        }
    }

    #[inline(always)]
    // `names` runs parallel to `columns`, and `c` was just found in one of them.
    #[allow(clippy::indexing_slicing)]
    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let Some(&(_, c)) = self.entries.get(self.next) else {
            return Err(DeError::new("a value was asked for before its key"));
        };
        self.next += 1;
        match seed.deserialize(CellDe::new(self.node.column(c), self.row)) {
            Ok(v) => Ok(v),
            Err(e) => Err(e.in_column(self.node.names[c])),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}

/// The fields of one target struct as a sequence in its field order (see
/// [`node`](super::node) for when that is right).
pub(crate) struct StructSeq<'n, 'p, 'a> {
    node: &'n StructNode<'a>,
    entries: &'p [(&'static str, usize)],
    next: usize,
    row: usize,
}

impl<'n, 'p, 'a> StructSeq<'n, 'p, 'a> {
    #[inline(always)]
    fn new(node: &'n StructNode<'a>, entries: &'p [(&'static str, usize)], row: usize) -> Self {
        StructSeq {
            node,
            entries,
            next: 0,
            row,
        }
    }
}

impl<'a> SeqAccess<'a> for StructSeq<'_, '_, 'a> {
    type Error = DeError;

    #[inline(always)]
    fn next_element<T: Deserialize<'a>>(&mut self) -> Result<Option<T>, DeError> {
        self.next_element_seed(PhantomData)
    }

    #[inline(always)]
    // `names` runs parallel to `columns`, and `c` was just found in one of them.
    #[allow(clippy::indexing_slicing)]
    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(&(_, c)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        match seed.deserialize(CellDe::new(self.node.column(c), self.row)) {
            Ok(v) => Ok(Some(v)),
            Err(e) => Err(e.in_column(self.node.names[c])),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}

/// Every column of a row or STRUCT value, keyed by column name: maps, `serde_json::Value`
/// and `#[serde(flatten)]` targets.
pub(crate) struct AllColumnsMap<'n, 'a> {
    node: &'n StructNode<'a>,
    next: usize,
    row: usize,
}

impl<'n, 'a> AllColumnsMap<'n, 'a> {
    pub(crate) fn new(node: &'n StructNode<'a>, row: usize) -> Self {
        AllColumnsMap { node, next: 0, row }
    }
}

impl<'n, 'a> MapAccess<'a> for AllColumnsMap<'n, 'a> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.node.names.get(self.next) {
            Some(name) => seed.deserialize(Key(name)).map(Some),
            None => Ok(None),
        }
    }

    // `names` runs parallel to `columns`, and `c` was just found in one of them.
    #[allow(clippy::indexing_slicing)]
    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let c = self.next;
        let Some(col) = self.node.columns.get(c) else {
            return Err(DeError::new("a value was asked for before its key"));
        };
        self.next += 1;
        seed.deserialize(CellDe::new(col, self.row))
            .map_err(|e| e.in_column(self.node.names[c]))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.node.columns.len() - self.next)
    }
}

/// The columns of a row or STRUCT value by position: tuples.
pub(crate) struct ColumnsSeq<'n, 'a> {
    node: &'n StructNode<'a>,
    next: usize,
    row: usize,
}

impl<'n, 'a> ColumnsSeq<'n, 'a> {
    pub(crate) fn new(node: &'n StructNode<'a>, row: usize) -> Self {
        ColumnsSeq { node, next: 0, row }
    }
}

impl<'n, 'a> SeqAccess<'a> for ColumnsSeq<'n, 'a> {
    type Error = DeError;

    #[inline(always)]
    fn next_element<T: Deserialize<'a>>(&mut self) -> Result<Option<T>, DeError> {
        self.next_element_seed(PhantomData)
    }

    #[inline]
    // `names` runs parallel to `columns`, and `c` was just found in one of them.
    #[allow(clippy::indexing_slicing)]
    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let c = self.next;
        let Some(col) = self.node.columns.get(c) else {
            return Ok(None);
        };
        self.next += 1;
        match seed.deserialize(CellDe::new(col, self.row)) {
            Ok(v) => Ok(Some(v)),
            Err(e) => Err(e.in_column(self.node.names[c])),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.node.columns.len() - self.next)
    }
}

/// The items of one list value.
pub(crate) struct ListSeq<'n, 'a> {
    items: &'n Column<'a>,
    next: usize,
    end: usize,
}

impl<'n, 'a> ListSeq<'n, 'a> {
    #[inline(always)]
    pub(crate) fn new(items: &'n Column<'a>, start: usize, end: usize) -> Self {
        ListSeq {
            items,
            next: start,
            end,
        }
    }
}

impl<'n, 'a> SeqAccess<'a> for ListSeq<'n, 'a> {
    type Error = DeError;

    #[inline(always)]
    fn next_element<T: Deserialize<'a>>(&mut self) -> Result<Option<T>, DeError> {
        self.next_element_seed(PhantomData)
    }

    #[inline(always)]
    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        if self.next >= self.end {
            return Ok(None);
        }
        let i = self.next;
        self.next += 1;
        seed.deserialize(CellDe::new(self.items, i)).map(Some)
    }

    #[inline]
    fn size_hint(&self) -> Option<usize> {
        Some(self.end - self.next)
    }
}

/// The entries of one Arrow `Map` value.
pub(crate) struct MapEntries<'n, 'a> {
    keys: &'n Column<'a>,
    values: &'n Column<'a>,
    next: usize,
    end: usize,
}

impl<'n, 'a> MapEntries<'n, 'a> {
    pub(crate) fn new(
        keys: &'n Column<'a>,
        values: &'n Column<'a>,
        start: usize,
        end: usize,
    ) -> Self {
        MapEntries {
            keys,
            values,
            next: start,
            end,
        }
    }
}

impl<'n, 'a> MapAccess<'a> for MapEntries<'n, 'a> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        if self.next >= self.end {
            return Ok(None);
        }
        seed.deserialize(CellDe::new(self.keys, self.next))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let i = self.next;
        self.next += 1;
        seed.deserialize(CellDe::new(self.values, i))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.end - self.next)
    }
}

/// The bytes of a binary value as a sequence, for `Vec<u8>` targets.
pub(crate) struct BytesSeq<'a> {
    bytes: &'a [u8],
    next: usize,
}

impl<'a> BytesSeq<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        BytesSeq { bytes, next: 0 }
    }
}

impl<'a> SeqAccess<'a> for BytesSeq<'a> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(&b) = self.bytes.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        seed.deserialize(b.into_deserializer()).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.bytes.len() - self.next)
    }
}

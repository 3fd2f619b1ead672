//! The deserializer of one whole row: a struct by field name, a tuple or sequence by
//! position, a map (or `serde_json::Value`) by column name, or, for a one-column batch,
//! that column's value itself.

use serde::de::{self, Visitor};

use super::access::{AllColumnsMap, ColumnsSeq, read_struct};
use super::cell::CellDe;
use super::error::DeError;
use super::node::StructNode;
use crate::value::magic;

/// Row `row` of the batch `node`.
pub(crate) struct RowDe<'n, 'a> {
    node: &'n StructNode<'a>,
    row: usize,
}

impl<'n, 'a> RowDe<'n, 'a> {
    #[inline(always)]
    pub(crate) fn new(node: &'n StructNode<'a>, row: usize) -> Self {
        RowDe { node, row }
    }

    /// The only column, for a target that is one value rather than a row.
    fn single<T>(
        self,
        read: impl FnOnce(CellDe<'n, 'a>) -> Result<T, DeError>,
    ) -> Result<T, DeError> {
        match (self.node.columns.as_slice(), self.node.names.as_slice()) {
            ([col], [name]) => read(CellDe::new(col, self.row)).map_err(|e| e.in_column(name)),
            (cols, _) => Err(DeError::new(format!(
                "a row of {} columns can only be read into a struct, a tuple, a sequence or \
                 a map; a single value needs a one-column result",
                cols.len()
            ))),
        }
    }
}

macro_rules! single_value {
    ($($method:ident$(($($arg:ident: $ty:ty),*))?;)*) => {$(
        fn $method<V: Visitor<'a>>(self, $($($arg: $ty,)*)? v: V) -> Result<V::Value, DeError> {
            self.single(|cell| de::Deserializer::$method(cell, $($($arg,)*)? v))
        }
    )*};
}

impl<'n, 'a> de::Deserializer<'a> for RowDe<'n, 'a> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_map(AllColumnsMap::new(self.node, self.row))
    }

    fn deserialize_map<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_map(AllColumnsMap::new(self.node, self.row))
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        read_struct(self.node, fields, self.row, v)
    }

    fn deserialize_seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_seq(ColumnsSeq::new(self.node, self.row))
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        v.visit_seq(ColumnsSeq::new(self.node, self.row))
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_seq(ColumnsSeq::new(self.node, self.row))
    }

    /// A row is never NULL, except that the row of a one-column result is `None` where
    /// that column is NULL, so that `Option<i64>` reads a nullable column.
    fn deserialize_option<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        match self.node.columns.as_slice() {
            [col] if col.is_null(self.row) => v.visit_none(),
            _ => v.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        if name.starts_with(magic::PREFIX) {
            self.single(|cell| de::Deserializer::deserialize_newtype_struct(cell, name, v))
        } else {
            v.visit_newtype_struct(self)
        }
    }

    single_value! {
        deserialize_bool; deserialize_i8; deserialize_i16; deserialize_i32; deserialize_i64;
        deserialize_i128; deserialize_u8; deserialize_u16; deserialize_u32; deserialize_u64;
        deserialize_u128; deserialize_f32; deserialize_f64; deserialize_char; deserialize_str;
        deserialize_string; deserialize_bytes; deserialize_byte_buf; deserialize_identifier;
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }
}

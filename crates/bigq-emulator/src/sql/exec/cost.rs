//! What a query costs, as BigQuery counts it: the bytes processed are the logical size of
//! every column the query reads of each table it reads (BigQuery's data size of each type,
//! over all the column's rows whatever the filters), and the bytes billed that, rounded up
//! to a megabyte and at least 10 MB for each table read.

use std::collections::{BTreeMap, BTreeSet};

use datafusion::arrow::array::{Array, AsArray, GenericListArray, OffsetSizeTrait, StructArray};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::logical_expr::LogicalPlan;

use crate::catalog::{Catalog, TableRef};
use crate::error::{BqError, BqResult};
use crate::sql::types::{EXTENSION_NAME_KEY, range_element};

/// One megabyte as BigQuery bills it.
const MB: u64 = 1 << 20;

/// The least BigQuery bills for each table a query reads.
const MIN_PER_TABLE: u64 = 10 * MB;

/// The bytes a query processes and is billed for, and the tables it reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// `totalBytesProcessed`.
    pub processed: u64,
    /// `totalBytesBilled`, for a query that runs (a dry run bills nothing).
    pub billed: u64,
    /// `referencedTables`: the catalog's tables the query scans, in name order.
    pub tables: Vec<TableRef>,
}

impl Cost {
    /// The cost of the tables a plan scans, the columns of each it reads.
    pub(super) fn of_plan(plan: &LogicalPlan, catalog: &Catalog) -> BqResult<Cost> {
        let mut read: BTreeMap<TableRef, BTreeSet<usize>> = BTreeMap::new();
        plan.apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node
                && let (Some(project), Some(dataset)) =
                    (scan.table_name.catalog(), scan.table_name.schema())
            {
                let t = TableRef::new(project, dataset, scan.table_name.table());
                let columns = read.entry(t).or_default();
                match &scan.projection {
                    Some(p) => columns.extend(p.iter().copied()),
                    None => columns.extend(0..scan.source.schema().fields().len()),
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })
        .map_err(|e| BqError::internal(format!("reading the tables of a plan: {e}")))?;
        let state = catalog.read();
        let mut cost = Cost::default();
        for (t, columns) in read {
            // A table the catalog does not hold (INFORMATION_SCHEMA) costs nothing.
            let Ok(table) = state.table(&t) else {
                continue;
            };
            cost.tables.push(t.clone());
            let mut bytes = 0;
            for batch in &table.batches {
                for &i in &columns {
                    if i < batch.num_columns() {
                        bytes += data_size(batch.schema().field(i), batch.column(i).as_ref());
                    }
                }
            }
            cost.processed += bytes;
            cost.billed += bytes.div_ceil(MB).saturating_mul(MB).max(MIN_PER_TABLE);
        }
        if cost.processed == 0 {
            cost.billed = 0;
        }
        Ok(cost)
    }
}

/// BigQuery's data size of the values of `array`, a column typed as `field` is: INT64,
/// FLOAT64, DATE, DATETIME, TIME and TIMESTAMP 8 bytes, NUMERIC 16, BIGNUMERIC 32, BOOL 1,
/// INTERVAL 16, STRING and BYTES 2 + their length, JSON the length of its text, GEOGRAPHY
/// 16 + 24 a vertex, RANGE 16, a STRUCT its fields, an ARRAY its elements, NULL nothing.
pub(crate) fn data_size(field: &Field, array: &dyn Array) -> u64 {
    let present = (array.len() - array.null_count()) as u64;
    let tag = field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str);
    match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => match tag {
            Some("google:sqlType:json") => text_bytes(array),
            Some("google:sqlType:geography") => {
                texts(array).flatten().map(|s| 16 + 24 * vertices(s)).sum()
            }
            _ => 2 * present + text_bytes(array),
        },
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            2 * present + a.iter().flatten().map(|b| b.len() as u64).sum::<u64>()
        }
        DataType::LargeBinary => {
            let a = array.as_binary::<i64>();
            2 * present + a.iter().flatten().map(|b| b.len() as u64).sum::<u64>()
        }
        DataType::Boolean => present,
        DataType::Decimal128(..) | DataType::Interval(_) => 16 * present,
        DataType::Decimal256(..) => 32 * present,
        DataType::Struct(_) if range_element(array.data_type()).is_some() => 16 * present,
        DataType::Struct(fields) => {
            let s: &StructArray = array.as_struct();
            fields
                .iter()
                .zip(s.columns())
                .map(|(f, c)| {
                    // A field of a NULL struct is not stored.
                    match s.nulls() {
                        Some(n) if n.null_count() > 0 => {
                            let kept = datafusion::arrow::compute::filter(
                                c,
                                &datafusion::arrow::array::BooleanArray::new(
                                    n.inner().clone(),
                                    None,
                                ),
                            );
                            kept.map(|k| data_size(f, k.as_ref())).unwrap_or(0)
                        }
                        _ => data_size(f, c.as_ref()),
                    }
                })
                .sum()
        }
        DataType::List(item) => list_size(item, array.as_list::<i32>()),
        DataType::LargeList(item) => list_size(item, array.as_list::<i64>()),
        DataType::Null => 0,
        _ => 8 * present,
    }
}

fn list_size<O: OffsetSizeTrait>(item: &Field, list: &GenericListArray<O>) -> u64 {
    if list.null_count() == 0 {
        // Every row's elements, in one slice of the values.
        let offsets = list.value_offsets();
        let (first, last) = (offsets[0].as_usize(), offsets[list.len()].as_usize());
        return data_size(item, list.values().slice(first, last - first).as_ref());
    }
    (0..list.len())
        .filter(|&i| list.is_valid(i))
        .map(|i| data_size(item, list.value(i).as_ref()))
        .sum()
}

/// The non-NULL values of a string array, whichever of Arrow's three string layouts it has.
fn texts(array: &dyn Array) -> Box<dyn Iterator<Item = Option<&str>> + '_> {
    match array.data_type() {
        DataType::Utf8 => Box::new(array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(array.as_string::<i64>().iter()),
        _ => Box::new(array.as_string_view().iter()),
    }
}

/// The UTF-8 bytes of the non-NULL values of a string array: from the offsets when no value
/// is NULL, else value by value.
fn text_bytes(array: &dyn Array) -> u64 {
    if array.null_count() == 0 {
        match array.data_type() {
            DataType::Utf8 => {
                let o = array.as_string::<i32>().value_offsets();
                return (o[o.len() - 1] - o[0]) as u64;
            }
            DataType::LargeUtf8 => {
                let o = array.as_string::<i64>().value_offsets();
                return (o[o.len() - 1] - o[0]) as u64;
            }
            _ => {}
        }
    }
    texts(array).flatten().map(|s| s.len() as u64).sum()
}

/// The vertices of a geography in WKT: its coordinate pairs.
fn vertices(wkt: &str) -> u64 {
    wkt.split([',', '(', ')'])
        .filter(|part| {
            part.split_whitespace()
                .filter(|w| w.parse::<f64>().is_ok())
                .count()
                >= 2
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use datafusion::arrow::array::{
        ArrayRef, BooleanArray, Int64Array, ListArray, StringArray, StructArray,
    };
    use datafusion::arrow::datatypes::Int64Type;

    use super::*;

    fn size(field: Field, a: ArrayRef) -> u64 {
        data_size(&field, a.as_ref())
    }

    #[test]
    fn scalar_types_have_bigquery_sizes() {
        let ints: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
        assert_eq!(size(Field::new("i", DataType::Int64, true), ints), 16);
        let bools: ArrayRef = Arc::new(BooleanArray::from(vec![true, false]));
        assert_eq!(size(Field::new("b", DataType::Boolean, true), bools), 2);
        let text: ArrayRef = Arc::new(StringArray::from(vec![Some("abc"), None, Some("é")]));
        assert_eq!(size(Field::new("s", DataType::Utf8, true), text), 5 + 4);
        // With no NULL the lengths come from the offsets, of a slice too.
        let text = StringArray::from(vec!["zz", "abc", "é"]);
        let text: ArrayRef = Arc::new(text.slice(1, 2));
        assert_eq!(size(Field::new("s", DataType::Utf8, true), text), 5 + 4);
    }

    #[test]
    fn json_and_geography_are_sized_by_their_text_and_vertices() {
        let tag = |t: &str| {
            HashMap::from([(
                EXTENSION_NAME_KEY.to_string(),
                format!("google:sqlType:{t}"),
            )])
        };
        let json: ArrayRef = Arc::new(StringArray::from(vec![r#"{"a":1}"#]));
        let f = Field::new("j", DataType::Utf8, true).with_metadata(tag("json"));
        assert_eq!(size(f, json), 7);
        let geo: ArrayRef = Arc::new(StringArray::from(vec![
            "POINT(1 2)",
            "LINESTRING(0 0, 1 1, 2 2)",
        ]));
        let f = Field::new("g", DataType::Utf8, true).with_metadata(tag("geography"));
        assert_eq!(size(f, geo), (16 + 24) + (16 + 3 * 24));
    }

    #[test]
    fn arrays_and_structs_sum_their_parts() {
        let list = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            None,
            Some(vec![]),
        ]);
        let f = Field::new("a", list.data_type().clone(), true);
        assert_eq!(size(f, Arc::new(list)), 16);
        // With no NULL row the elements are sized in one slice.
        let list = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(9)]),
            Some(vec![Some(1), None]),
            Some(vec![Some(2)]),
        ]);
        let f = Field::new("a", list.data_type().clone(), true);
        assert_eq!(size(f, Arc::new(list.slice(1, 2))), 16);
        let s = StructArray::from(vec![
            (
                Arc::new(Field::new("x", DataType::Int64, true)),
                Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("y", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec!["a", "bc"])) as ArrayRef,
            ),
        ]);
        let f = Field::new("s", s.data_type().clone(), true);
        assert_eq!(size(f, Arc::new(s)), 16 + 3 + 4);
    }
}

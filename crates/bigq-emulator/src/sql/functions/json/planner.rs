//! The JSON operators, planned where DataFusion plans struct and array access: `json.key`,
//! `json['key']` and `json[index]` (a column's `t.j.key` too) on a JSON value, and an array
//! literal of JSON values as an `ARRAY<JSON>` (DataFusion's would lose the JSON tag). A bare
//! `array[i]` is BigQuery's `array[OFFSET(i)]` (DataFusion's counts from 1 and from the end).
//! A STRUCT's field is found by its name in any case (`s.Field` of a field `field`).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{Column, DFSchema, Result as DfResult, ScalarValue, TableReference};
use datafusion::logical_expr::expr::{BinaryExpr, ScalarFunction};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawFieldAccessExpr};
use datafusion::logical_expr::{Expr, ExprSchemable, GetFieldAccess, Operator, lit};

use super::{array_literal_udf, is_json, subscript_udf};
use crate::sql::functions::array::bigq_array_at;

/// Plans the JSON operators before DataFusion's own planners.
#[derive(Debug)]
pub(crate) struct JsonPlanner;

fn subscript(json: Expr, key: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(subscript_udf()),
        vec![lit(false), json, key],
    ))
}

/// The spelling of the field of `fields` that `name` names, ignoring case, when it is not
/// spelled so already (and one field matches).
fn struct_field_named<'a>(fields: &'a Fields, name: &str) -> Option<&'a str> {
    if fields.iter().any(|f| f.name() == name) {
        return None;
    }
    let mut found = fields
        .iter()
        .filter(|f| f.name().eq_ignore_ascii_case(name));
    match (found.next(), found.next()) {
        (Some(f), None) => Some(f.name()),
        _ => None,
    }
}

/// A path of STRUCT field names respelled as the fields are spelled, if any name needs it.
fn respelled_path(mut t: &DataType, names: &[String]) -> Option<Vec<String>> {
    let mut path = Vec::with_capacity(names.len());
    let mut changed = false;
    for name in names {
        let DataType::Struct(fields) = t else {
            return None;
        };
        let spelled = match struct_field_named(fields, name) {
            Some(found) => {
                changed = true;
                found.to_string()
            }
            None => name.clone(),
        };
        t = fields.iter().find(|f| *f.name() == spelled)?.data_type();
        path.push(spelled);
    }
    changed.then_some(path)
}

impl ExprPlanner for JsonPlanner {
    fn plan_field_access(
        &self,
        access: RawFieldAccessExpr,
        schema: &DFSchema,
    ) -> DfResult<PlannerResult<RawFieldAccessExpr>> {
        let field = access.expr.to_field(schema).ok().map(|(_, f)| f);
        let json = field.as_ref().is_some_and(|f| is_json(f));
        let array = field.as_ref().is_some_and(|f| {
            matches!(
                f.data_type(),
                DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
            )
        });
        if array && let GetFieldAccess::ListIndex { key } = access.field_access {
            let ordinal =
                Expr::BinaryExpr(BinaryExpr::new(key, Operator::Plus, Box::new(lit(1i64))));
            return Ok(PlannerResult::Planned(Expr::ScalarFunction(
                ScalarFunction::new_udf(Arc::new(bigq_array_at()), vec![access.expr, ordinal]),
            )));
        }
        if !json {
            // A STRUCT's field names are case-insensitive, as in BigQuery.
            let mut access = access;
            if let (Some(f), GetFieldAccess::NamedStructField { name }) =
                (&field, &mut access.field_access)
                && let DataType::Struct(fields) = f.data_type()
                && let ScalarValue::Utf8(Some(n)) = name
                && let Some(found) = struct_field_named(fields, n)
            {
                *n = found.to_string();
            }
            return Ok(PlannerResult::Original(access));
        }
        let key = match access.field_access {
            GetFieldAccess::NamedStructField { name } => lit(name),
            GetFieldAccess::ListIndex { key } => *key,
            GetFieldAccess::ListRange { .. } => {
                return datafusion::common::plan_err!(
                    "A JSON value cannot be sliced; subscripts take a name or an index"
                );
            }
        };
        Ok(PlannerResult::Planned(subscript(access.expr, key)))
    }

    fn plan_compound_identifier(
        &self,
        field: &Field,
        qualifier: Option<&TableReference>,
        nested_names: &[String],
    ) -> DfResult<PlannerResult<Vec<Expr>>> {
        if !is_json(field) {
            // `s.Field` of a STRUCT column: its names are case-insensitive, as in BigQuery.
            let Some(path) = respelled_path(field.data_type(), nested_names) else {
                return Ok(PlannerResult::Original(Vec::new()));
            };
            let column = Expr::Column(Column::from((qualifier, field)));
            return Ok(PlannerResult::Planned(
                path.iter().fold(column, |e, name| {
                    datafusion::functions::core::expr_fn::get_field(e, name.as_str())
                }),
            ));
        }
        let column = Expr::Column(Column::from((qualifier, field)));
        Ok(PlannerResult::Planned(
            nested_names.iter().fold(column, |e, name| {
                subscript(e, lit(ScalarValue::from(name.as_str())))
            }),
        ))
    }

    fn plan_array_literal(
        &self,
        exprs: Vec<Expr>,
        schema: &DFSchema,
    ) -> DfResult<PlannerResult<Vec<Expr>>> {
        let fields: Vec<_> = exprs.iter().map(|e| e.to_field(schema)).collect();
        let all_json = !exprs.is_empty()
            && fields.iter().all(|f| {
                f.as_ref().is_ok_and(|(_, f)| {
                    is_json(f) || f.data_type() == &datafusion::arrow::datatypes::DataType::Null
                })
            })
            && fields
                .iter()
                .any(|f| f.as_ref().is_ok_and(|(_, f)| is_json(f)));
        if !all_json {
            // `[b'a', NULL]`: DataFusion's `make_array` unifies no BYTES with NULL; the NULLs
            // are given the BYTES type.
            let types: Vec<Option<DataType>> = fields
                .iter()
                .map(|f| f.as_ref().ok().map(|(_, f)| f.data_type().clone()))
                .collect();
            let bytes = types.iter().any(|t| t == &Some(DataType::Binary));
            let only = types
                .iter()
                .all(|t| matches!(t, Some(DataType::Binary | DataType::Null)));
            if bytes && only {
                let exprs = exprs
                    .into_iter()
                    .zip(types)
                    .map(|(e, t)| match t {
                        Some(DataType::Null) => Expr::Cast(datafusion::logical_expr::Cast::new(
                            Box::new(e),
                            DataType::Binary,
                        )),
                        _ => e,
                    })
                    .collect();
                return Ok(PlannerResult::Original(exprs));
            }
            return Ok(PlannerResult::Original(exprs));
        }
        let mut args = vec![lit(false)];
        args.extend(exprs);
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            ScalarFunction::new_udf(Arc::new(array_literal_udf()), args),
        )))
    }
}

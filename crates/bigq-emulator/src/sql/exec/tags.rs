//! The JSON and GEOGRAPHY columns of a query's result. The emulator keeps both types as text
//! tagged in the field's metadata; DataFusion's own functions and operators give fields of
//! their own making, without it, so `IF(c, JSON '1', NULL)`, `COALESCE(j, JSON 'null')`,
//! `ARRAY_AGG(j)`, `[ST_GEOGPOINT(1, 2)]` and `STRUCT(j AS x)` would come out typed STRING.
//! This walk of the planned query infers which columns (and which elements and fields of
//! them) hold JSON or GEOGRAPHY, from the tagged values each expression passes through, and
//! tags the result's schema so.

use std::sync::Arc;

use bigq_codec::schema::FieldType;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};

use crate::sql::types::{tagged, tagged_type};

/// Where a value holds tagged text.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    Plain,
    Tagged(FieldType),
    List(Box<Shape>),
    Struct(Vec<Shape>),
}

impl Shape {
    /// The shape a field's own metadata gives.
    fn of_field(f: &Field) -> Shape {
        if let Some(t) = tagged_type(f) {
            return Shape::Tagged(t);
        }
        match f.data_type() {
            DataType::List(item) | DataType::LargeList(item) => {
                Shape::List(Box::new(Shape::of_field(item)))
            }
            DataType::Struct(fs) => Shape::Struct(fs.iter().map(|f| Shape::of_field(f)).collect()),
            _ => Shape::Plain,
        }
    }

    /// What two values that may both be the result hold (a CASE's branches, a UNION's
    /// inputs): a tagged one wins over plain text (a NULL branch is plain).
    fn merge(self, other: Shape) -> Shape {
        match (self, other) {
            (Shape::Plain, s) | (s, Shape::Plain) => s,
            (Shape::List(a), Shape::List(b)) => Shape::List(Box::new(a.merge(*b))),
            (Shape::Struct(a), Shape::Struct(b)) if a.len() == b.len() => {
                Shape::Struct(a.into_iter().zip(b).map(|(a, b)| a.merge(b)).collect())
            }
            (a, _) => a,
        }
    }

    fn is_plain(&self) -> bool {
        match self {
            Shape::Plain => true,
            Shape::Tagged(_) => false,
            Shape::List(s) => s.is_plain(),
            Shape::Struct(ss) => ss.iter().all(Shape::is_plain),
        }
    }
}

/// The type of the elements of the first column of `plan`, an array, when they are tagged
/// text (JSON, GEOGRAPHY).
pub(super) fn element_tag(plan: &LogicalPlan) -> Option<FieldType> {
    match shapes(plan).into_iter().next()? {
        Shape::List(inner) => match *inner {
            Shape::Tagged(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// The types of the fields of the elements of the first column of `plan`, an array of
/// STRUCTs, where they are tagged text (JSON, GEOGRAPHY).
pub(super) fn struct_element_tags(plan: &LogicalPlan) -> Vec<Option<FieldType>> {
    match shapes(plan).into_iter().next() {
        Some(Shape::List(inner)) => match *inner {
            Shape::Struct(fields) => fields
                .into_iter()
                .map(|f| match f {
                    Shape::Tagged(t) => Some(t),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// `schema` (the planned query's) with the JSON and GEOGRAPHY its columns hold tagged.
pub(super) fn tag_result_schema(plan: &LogicalPlan, schema: &Schema) -> Schema {
    let schema = &spelled(schema);
    let shapes = shapes(plan);
    if shapes.len() != schema.fields().len() || shapes.iter().all(Shape::is_plain) {
        return schema.clone();
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .zip(&shapes)
        .map(|(f, s)| apply(f, s))
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// `schema` with each repeated column name spelled as the query wrote it.
fn spelled(schema: &Schema) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let name = crate::sql::rewrite::result_name(f.name());
            if name == f.name() {
                f.as_ref().clone()
            } else {
                f.as_ref().clone().with_name(name)
            }
        })
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// `f` tagged where `s` says it holds tagged text.
fn apply(f: &Field, s: &Shape) -> Field {
    match (s, f.data_type()) {
        (Shape::Tagged(t), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
            if tagged_type(f).is_none() =>
        {
            tagged(f.clone(), t)
        }
        (Shape::List(inner), DataType::List(item)) => f
            .clone()
            .with_data_type(DataType::List(Arc::new(apply(item, inner)))),
        (Shape::Struct(ss), DataType::Struct(fs)) if ss.len() == fs.len() => {
            f.clone().with_data_type(DataType::Struct(
                fs.iter().zip(ss).map(|(f, s)| apply(f, s)).collect(),
            ))
        }
        _ => f.clone(),
    }
}

/// What each output column of `plan` holds.
fn shapes(plan: &LogicalPlan) -> Vec<Shape> {
    let own = || -> Vec<Shape> {
        plan.schema()
            .fields()
            .iter()
            .map(|f| Shape::of_field(f))
            .collect()
    };
    let inferred = match plan {
        LogicalPlan::Projection(p) => {
            let input = shapes(&p.input);
            p.expr
                .iter()
                .map(|e| expr_shape(e, p.input.schema(), &input))
                .collect()
        }
        LogicalPlan::Aggregate(a) => {
            let input = shapes(&a.input);
            let groups: Vec<Shape> = match a.group_expr.as_slice() {
                [Expr::GroupingSet(set)] => set
                    .distinct_expr()
                    .into_iter()
                    .map(|e| expr_shape(e, a.input.schema(), &input))
                    .collect(),
                exprs => exprs
                    .iter()
                    .map(|e| expr_shape(e, a.input.schema(), &input))
                    .collect(),
            };
            let aggregates: Vec<Shape> = a
                .aggr_expr
                .iter()
                .map(|e| expr_shape(e, a.input.schema(), &input))
                .collect();
            let n = plan.schema().fields().len();
            // A grouping set's aggregate has its grouping id between the two.
            let mut out = groups;
            out.resize(n.saturating_sub(aggregates.len()), Shape::Plain);
            out.extend(aggregates);
            out
        }
        LogicalPlan::Window(w) => {
            let mut out = shapes(&w.input);
            let input = out.clone();
            out.extend(
                w.window_expr
                    .iter()
                    .map(|e| expr_shape(e, w.input.schema(), &input)),
            );
            out
        }
        LogicalPlan::Filter(f) => shapes(&f.input),
        LogicalPlan::Sort(s) => shapes(&s.input),
        LogicalPlan::Limit(l) => shapes(&l.input),
        LogicalPlan::SubqueryAlias(s) => shapes(&s.input),
        LogicalPlan::Repartition(r) => shapes(&r.input),
        LogicalPlan::Distinct(datafusion::logical_expr::Distinct::All(input)) => shapes(input),
        LogicalPlan::Union(u) => {
            let mut inputs = u.inputs.iter().map(|i| shapes(i));
            let first = inputs.next().unwrap_or_default();
            inputs.fold(first, |acc, next| {
                if acc.len() != next.len() {
                    return acc;
                }
                acc.into_iter().zip(next).map(|(a, b)| a.merge(b)).collect()
            })
        }
        LogicalPlan::Unnest(u) => {
            let input = shapes(&u.input);
            u.schema
                .columns()
                .iter()
                .zip(&u.dependency_indices)
                .map(|(out, &i)| {
                    let mut s = input.get(i).cloned().unwrap_or(Shape::Plain);
                    // An unnested array's column holds its elements.
                    if let Some((_, l)) = u
                        .list_type_columns
                        .iter()
                        .find(|(k, l)| *k == i && l.output_column.name == out.name)
                    {
                        for _ in 0..l.depth {
                            s = match s {
                                Shape::List(inner) => *inner,
                                other => other,
                            };
                        }
                    }
                    s
                })
                .collect()
        }
        LogicalPlan::Join(j) => {
            let mut out = shapes(&j.left);
            out.extend(shapes(&j.right));
            out
        }
        _ => own(),
    };
    if inferred.len() != plan.schema().fields().len() {
        return own();
    }
    // What the plan's own fields already say stays.
    own()
        .into_iter()
        .zip(inferred)
        .map(|(a, b)| a.merge(b))
        .collect()
}

/// What the value of `e` (over an input of `schema`, whose columns hold `input`) holds.
fn expr_shape(e: &Expr, schema: &DFSchema, input: &[Shape]) -> Shape {
    let own = || {
        e.to_field(schema)
            .map(|(_, f)| Shape::of_field(&f))
            .unwrap_or(Shape::Plain)
    };
    let arg = |a: &Expr| expr_shape(a, schema, input);
    let inferred = match e {
        Expr::Column(c) => schema
            .maybe_index_of_column(c)
            .and_then(|i| input.get(i).cloned())
            .unwrap_or(Shape::Plain),
        Expr::Alias(a) => arg(&a.expr),
        Expr::Case(c) => c
            .when_then_expr
            .iter()
            .map(|(_, then)| arg(then))
            .chain(c.else_expr.iter().map(|e| arg(e)))
            .fold(Shape::Plain, Shape::merge),
        Expr::ScalarFunction(f) => match f.func.name() {
            "coalesce" | "nvl" | "ifnull" => {
                f.args.iter().map(arg).fold(Shape::Plain, Shape::merge)
            }
            "nullif" => f.args.first().map(arg).unwrap_or(Shape::Plain),
            "make_array" | "make_list" => Shape::List(Box::new(
                f.args.iter().map(arg).fold(Shape::Plain, Shape::merge),
            )),
            "named_struct" => Shape::Struct(f.args.iter().skip(1).step_by(2).map(arg).collect()),
            "struct" => Shape::Struct(f.args.iter().map(arg).collect()),
            "get_field" => match (f.args.first(), f.args.get(1)) {
                (Some(base), Some(Expr::Literal(ScalarValue::Utf8(Some(name)), _))) => {
                    match (arg(base), base.get_type(schema)) {
                        (Shape::Struct(ss), Ok(DataType::Struct(fs))) => fs
                            .iter()
                            .position(|f| f.name() == name)
                            .and_then(|i| ss.get(i).cloned())
                            .unwrap_or(Shape::Plain),
                        _ => Shape::Plain,
                    }
                }
                _ => Shape::Plain,
            },
            // A geography function's array (ST_DUMP's) is of GEOGRAPHY values.
            name if (name.starts_with("st_") || name.starts_with("bigq_st_"))
                && matches!(e.get_type(schema), Ok(DataType::List(item)) if *item.data_type() == DataType::Utf8) =>
            {
                Shape::List(Box::new(Shape::Tagged(FieldType::Geography)))
            }
            _ => Shape::Plain,
        },
        Expr::AggregateFunction(a) => {
            let first = a.params.args.first().map(arg).unwrap_or(Shape::Plain);
            match a.func.name() {
                "array_agg" => Shape::List(Box::new(first)),
                "any_value" | "first_value" | "last_value" | "nth_value" | "min" | "max" => first,
                _ => Shape::Plain,
            }
        }
        Expr::WindowFunction(w) => {
            let first = w.params.args.first().map(arg).unwrap_or(Shape::Plain);
            match w.fun.name() {
                "first_value" | "last_value" | "nth_value" | "lag" | "lead" | "any_value"
                | "array_agg" | "min" | "max" => {
                    if w.fun.name() == "array_agg" {
                        Shape::List(Box::new(first))
                    } else {
                        first
                    }
                }
                _ => Shape::Plain,
            }
        }
        Expr::ScalarSubquery(sq) => shapes(&sq.subquery)
            .into_iter()
            .next()
            .unwrap_or(Shape::Plain),
        _ => Shape::Plain,
    };
    own().merge(inferred)
}

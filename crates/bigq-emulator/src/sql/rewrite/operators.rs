//! Operators DataFusion reads otherwise: arithmetic with BigQuery's types and errors, `x ± INTERVAL` typed as
//! BigQuery types it, `x IN UNNEST(array)` with BigQuery's NULLs, and array subscripts `[OFFSET(i)]` and
//! `[ORDINAL(i)]`.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DfResult, ScalarValue, plan_err};
use datafusion::logical_expr::expr::{Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Expr as DfExpr, ExprSchemable, LogicalPlan, Operator, WriteOp};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast::{self, BinaryOperator, Expr, Value};

use crate::sql::ast::{binary, call, function_args, function_name, number};
use crate::sql::functions::math::{Op, operator_udf, supertype};
use crate::sql::functions::safe;
use crate::sql::functions::{
    bigq_date_in_range, bigq_datetime_minus, cast_decimal_udf, cast_int64_udf, cast_interval_udf,
    cast_string_udf, casts_to_decimal, casts_to_int64, casts_to_string, civil_cast_udf,
    is_datetime_minus,
};

/// `x + INTERVAL ...` or `x - INTERVAL ...` as the UDF that types it as BigQuery does
/// (DATE + INTERVAL is a DATETIME in BigQuery; DataFusion keeps DATE).
pub(super) fn interval_arithmetic(left: &mut Expr, op: &BinaryOperator, right: &mut Expr) -> Expr {
    let name = if *op == BinaryOperator::Plus {
        "bigq_add_interval"
    } else {
        "bigq_sub_interval"
    };
    let l = std::mem::replace(left, Expr::value(Value::Null));
    let r = std::mem::replace(right, Expr::value(Value::Null));
    call(name, vec![l, r])
}

/// `a / b` as the UDF that divides with BigQuery's types and errors (INT64 / INT64 is
/// FLOAT64, NUMERIC / NUMERIC is NUMERIC, a zero divisor an error).
pub(super) fn division(left: &mut Expr, right: &mut Expr) -> Expr {
    let l = std::mem::replace(left, Expr::value(Value::Null));
    let r = std::mem::replace(right, Expr::value(Value::Null));
    call("bigq_divide", vec![l, r])
}

/// The bit operators as the UDFs that have BigQuery's INT64 and BYTES forms; `None` for
/// any other operator.
pub(super) fn bitwise(left: &mut Expr, op: &BinaryOperator, right: &mut Expr) -> Option<Expr> {
    let name = match op {
        BinaryOperator::BitwiseAnd => "bigq_bit_and",
        BinaryOperator::BitwiseOr => "bigq_bit_or",
        BinaryOperator::BitwiseXor => "bigq_bit_xor",
        BinaryOperator::PGBitwiseShiftLeft => "bigq_shift_left",
        BinaryOperator::PGBitwiseShiftRight => "bigq_shift_right",
        _ => return None,
    };
    let l = std::mem::replace(left, Expr::value(Value::Null));
    let r = std::mem::replace(right, Expr::value(Value::Null));
    Some(call(name, vec![l, r]))
}

/// `~x` as the UDF that has BigQuery's INT64 and BYTES forms.
pub(super) fn bitwise_not(expr: &mut Expr) -> Expr {
    let x = std::mem::replace(expr, Expr::value(Value::Null));
    call("bigq_bit_not", vec![x])
}

/// `x [NOT] IN UNNEST(array)` as `[NOT] bigq_in_array(x, array)`: BigQuery's three-valued
/// IN (NULL where no element equals `x` but one is NULL, or `x` is NULL; FALSE for an
/// empty array), which `array_has` is not.
pub(super) fn in_unnest(expr: &Expr, array_expr: &Expr, negated: bool) -> Expr {
    let has = call("bigq_in_array", vec![expr.clone(), array_expr.clone()]);
    if negated {
        Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr: Box::new(has),
        }
    } else {
        has
    }
}

/// `array[OFFSET(i)]` and `array[ORDINAL(i)]` as `bigq_array_at`, which raises
/// BigQuery's error for an index out of bounds; `SAFE_OFFSET`/`SAFE_ORDINAL` as
/// `bigq_array_safe_at`, NULL out of bounds. The whole access, when it changed.
pub(super) fn subscripts(root: &mut Expr, access_chain: &mut Vec<ast::AccessExpr>) -> Option<Expr> {
    let mut base: Option<Expr> = None;
    let mut rest: Vec<ast::AccessExpr> = Vec::new();
    for a in std::mem::take(access_chain) {
        // `(expr).name`: DataFusion takes a field name after a dot only as a string.
        if let ast::AccessExpr::Dot(Expr::Identifier(id)) = &a {
            let name = Expr::value(Value::SingleQuotedString(id.value.clone()));
            rest.push(ast::AccessExpr::Dot(name));
            continue;
        }
        let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = &a else {
            rest.push(a);
            continue;
        };
        let (checked, i) = match index {
            Expr::Function(f) => match (
                function_name(f).as_deref(),
                function_args(f).filter(|a| a.len() == 1),
            ) {
                (Some(n @ ("OFFSET" | "SAFE_OFFSET")), Some(mut args)) => {
                    let i = args.pop().unwrap_or(Expr::value(Value::Null));
                    (n == "OFFSET", binary(i, BinaryOperator::Plus, number(1)))
                }
                (Some(n @ ("ORDINAL" | "SAFE_ORDINAL")), Some(mut args)) => (
                    n == "ORDINAL",
                    args.pop().unwrap_or(Expr::value(Value::Null)),
                ),
                _ => {
                    rest.push(a);
                    continue;
                }
            },
            // A bare `[i]` is planned by its operand's type (`functions::json::planner`): an
            // array's `[OFFSET(i)]`, a JSON value's member or element.
            _ => {
                rest.push(a);
                continue;
            }
        };
        let array = match base.take() {
            None if rest.is_empty() => std::mem::replace(root, Expr::value(Value::Null)),
            None => Expr::CompoundFieldAccess {
                root: Box::new(std::mem::replace(root, Expr::value(Value::Null))),
                access_chain: std::mem::take(&mut rest),
            },
            Some(b) if rest.is_empty() => b,
            Some(b) => Expr::CompoundFieldAccess {
                root: Box::new(b),
                access_chain: std::mem::take(&mut rest),
            },
        };
        let udf = if checked {
            "bigq_array_at"
        } else {
            "bigq_array_safe_at"
        };
        base = Some(call(udf, vec![array, i]));
    }
    match base {
        None => {
            *access_chain = rest;
            None
        }
        Some(b) if rest.is_empty() => Some(b),
        Some(b) => Some(Expr::CompoundFieldAccess {
            root: Box::new(b),
            access_chain: rest,
        }),
    }
}

/// After type coercion, the numeric `+`, `-`, `*` and unary `-` as the UDFs that raise on
/// overflow and round NUMERIC as BigQuery does (DataFusion wraps INT64 and gives FLOAT64
/// infinities), and each `SAFE.` marker around a scalar call as that call made safe.
#[derive(Debug)]
pub(crate) struct TypedOperators;

impl AnalyzerRule for TypedOperators {
    fn name(&self) -> &str {
        "bigq_typed_operators"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> DfResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| {
            let schema = match &plan {
                // MERGE's expressions read the target's columns beside the source's.
                LogicalPlan::Dml(d) if matches!(d.op, WriteOp::MergeInto(_)) => {
                    DFSchema::try_from_qualified_schema(d.table_name.clone(), &d.target.schema())?
                        .join(d.input.schema())?
                }
                _ => merge_schema(&plan.inputs()),
            };
            let names = NamePreserver::new(&plan);
            plan.map_expressions(|e| {
                let name = names.save(&e);
                e.transform_up(|e| typed_operator(e, &schema))
                    .map(|t| t.update_data(|e| name.restore(e)))
            })?
            .map_data(|plan| plan.recompute_schema())
        })
        .map(|t| t.data)
    }
}

fn typed_operator(e: DfExpr, schema: &DFSchema) -> DfResult<Transformed<DfExpr>> {
    match e {
        DfExpr::BinaryExpr(b)
            if matches!(b.op, Operator::Plus | Operator::Minus | Operator::Multiply) =>
        {
            let (lt, rt) = (b.left.get_type(schema)?, b.right.get_type(schema)?);
            // DATE ± INT64 stays in DATE's range (Arrow's goes on to years 0 and 10000).
            // (The days may arrive coerced to an INTERVAL: a user's `DATE ± INTERVAL` does
            // not come here, it is `bigq_add_interval`.)
            let days = |t: &DataType| t.is_integer() || matches!(t, DataType::Interval(_));
            let date_and_days = (lt == DataType::Date32 && days(&rt))
                || (b.op == Operator::Plus && days(&lt) && rt == DataType::Date32);
            if b.op != Operator::Multiply && date_and_days {
                let call = ScalarFunction::new_udf(
                    Arc::new(bigq_date_in_range()),
                    vec![DfExpr::BinaryExpr(b)],
                );
                return Ok(Transformed::yes(DfExpr::ScalarFunction(call)));
            }
            if b.op == Operator::Minus && is_datetime_minus(&lt, &rt) {
                let args = vec![*b.left, *b.right];
                let call = ScalarFunction::new_udf(Arc::new(bigq_datetime_minus()), args);
                return Ok(Transformed::yes(DfExpr::ScalarFunction(call)));
            }
            let numeric =
                |t: &DataType| *t != DataType::Null && supertype(std::slice::from_ref(t)).is_some();
            let Some(t) =
                supertype(&[lt.clone(), rt.clone()]).filter(|_| numeric(&lt) && numeric(&rt))
            else {
                return Ok(Transformed::no(DfExpr::BinaryExpr(b)));
            };
            let original = DfExpr::BinaryExpr(b.clone()).get_type(schema)?;
            let op = match b.op {
                Operator::Plus => Op::Add,
                Operator::Minus => Op::Sub,
                _ => Op::Mul,
            };
            let args = vec![cast_to(*b.left, &lt, &t), cast_to(*b.right, &rt, &t)];
            let call = DfExpr::ScalarFunction(ScalarFunction::new_udf(operator_udf(op), args));
            // A decimal keeps BigQuery's scale (DataFusion widens a product's); any other
            // result keeps the type the plan was typed with.
            let decimal =
                |t: &DataType| matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..));
            if decimal(&t) && decimal(&original) {
                return Ok(Transformed::yes(call));
            }
            Ok(Transformed::yes(cast_to(call, &t, &original)))
        }
        DfExpr::Negative(inner) => {
            let t = inner.get_type(schema)?;
            if t == DataType::Null || supertype(std::slice::from_ref(&t)).is_none() {
                return Ok(Transformed::no(DfExpr::Negative(inner)));
            }
            let call = ScalarFunction::new_udf(operator_udf(Op::Neg), vec![*inner]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        // A STRUCT cast to a STRUCT goes field by field, by position (Arrow's cast matches
        // fields by name): how BigQuery casts, and compares `STRUCT(1 AS a) = STRUCT(1 AS b)`.
        DfExpr::Cast(Cast { expr, field })
            if renames_struct(&expr.get_type(schema)?, field.data_type()) =>
        {
            let from = expr.get_type(schema)?;
            Ok(Transformed::yes(positional_cast(
                *expr,
                &from,
                field.data_type(),
                false,
            )))
        }
        DfExpr::TryCast(TryCast { expr, field })
            if renames_struct(&expr.get_type(schema)?, field.data_type()) =>
        {
            let from = expr.get_type(schema)?;
            Ok(Transformed::yes(positional_cast(
                *expr,
                &from,
                field.data_type(),
                true,
            )))
        }
        // CAST(x AS INT64) rounds half away from zero; Arrow's cast truncates.
        DfExpr::Cast(Cast { expr, field })
            if *field.data_type() == DataType::Int64 && casts_to_int64(&expr.get_type(schema)?) =>
        {
            let call = ScalarFunction::new_udf(cast_int64_udf(false), vec![*expr]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        DfExpr::TryCast(TryCast { expr, field })
            if *field.data_type() == DataType::Int64 && casts_to_int64(&expr.get_type(schema)?) =>
        {
            let call = ScalarFunction::new_udf(cast_int64_udf(true), vec![*expr]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        // CAST(s AS DATE), DATETIME, TIME and TIMESTAMP read the text as BigQuery's
        // literals are read (one-digit parts, zones by name, at most microseconds), where
        // Arrow's parser differs.
        DfExpr::Cast(Cast { expr, field })
            if is_string(&expr.get_type(schema)?)
                && civil_cast_udf(field.data_type()).is_some() =>
        {
            let Some(udf) = civil_cast_udf(field.data_type()) else {
                return Ok(Transformed::no(DfExpr::Cast(Cast { expr, field })));
            };
            let call = ScalarFunction::new_udf(Arc::new(udf), vec![*expr]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        DfExpr::TryCast(TryCast { expr, field })
            if is_string(&expr.get_type(schema)?)
                && civil_cast_udf(field.data_type()).is_some() =>
        {
            let Some(udf) = civil_cast_udf(field.data_type()) else {
                return Ok(Transformed::no(DfExpr::TryCast(TryCast { expr, field })));
            };
            let read = udf.return_type(&[DataType::Utf8])?;
            let call = DfExpr::ScalarFunction(ScalarFunction::new_udf(
                safe::wrap(Arc::new(udf)),
                vec![*expr],
            ));
            Ok(Transformed::yes(cast_to(call, &read, field.data_type())))
        }
        // CAST(s AS INTERVAL) reads BigQuery's interval text and ISO 8601 durations.
        DfExpr::Cast(Cast { expr, field })
            if matches!(field.data_type(), DataType::Interval(_))
                && is_string(&expr.get_type(schema)?) =>
        {
            let call = ScalarFunction::new_udf(cast_interval_udf(false), vec![*expr]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        DfExpr::TryCast(TryCast { expr, field })
            if matches!(field.data_type(), DataType::Interval(_))
                && is_string(&expr.get_type(schema)?) =>
        {
            let call = ScalarFunction::new_udf(cast_interval_udf(true), vec![*expr]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        // CAST(s AS NUMERIC) of a string reads exponents and names BigQuery's type when
        // it fails; Arrow's cast does neither.
        DfExpr::Cast(Cast { expr, field })
            if casts_to_decimal(&expr.get_type(schema)?, field.data_type()) =>
        {
            let call =
                ScalarFunction::new_udf(cast_decimal_udf(field.data_type(), false), vec![*expr]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        DfExpr::TryCast(TryCast { expr, field })
            if casts_to_decimal(&expr.get_type(schema)?, field.data_type()) =>
        {
            let call =
                ScalarFunction::new_udf(cast_decimal_udf(field.data_type(), true), vec![*expr]);
            Ok(Transformed::yes(DfExpr::ScalarFunction(call)))
        }
        // CAST(x AS STRING) writes x as BigQuery does, where Arrow's text differs.
        DfExpr::Cast(Cast { expr, field })
            if is_string(field.data_type()) && casts_to_string(&expr.get_type(schema)?) =>
        {
            let call = ScalarFunction::new_udf(cast_string_udf(), vec![*expr]);
            Ok(Transformed::yes(cast_to(
                DfExpr::ScalarFunction(call),
                &DataType::Utf8,
                field.data_type(),
            )))
        }
        DfExpr::TryCast(TryCast { expr, field })
            if is_string(field.data_type()) && casts_to_string(&expr.get_type(schema)?) =>
        {
            let call = ScalarFunction::new_udf(cast_string_udf(), vec![*expr]);
            Ok(Transformed::yes(cast_to(
                DfExpr::ScalarFunction(call),
                &DataType::Utf8,
                field.data_type(),
            )))
        }
        DfExpr::ScalarFunction(mut f) if f.func.name() == safe::SAFE => match f.args.pop() {
            Some(DfExpr::ScalarFunction(inner)) => Ok(Transformed::yes(DfExpr::ScalarFunction(
                ScalarFunction::new_udf(safe::wrap(inner.func), inner.args),
            ))),
            Some(other) => plan_err!(
                "The SAFE. prefix is not supported for {}",
                other.schema_name()
            ),
            None => plan_err!("SAFE. takes one call"),
        },
        e => Ok(Transformed::no(e)),
    }
}

/// Whether a cast from `from` to `to` is of a STRUCT to a STRUCT of as many fields whose
/// names differ somewhere (at any depth), which Arrow's cast cannot do.
fn renames_struct(from: &DataType, to: &DataType) -> bool {
    match (from, to) {
        (DataType::Struct(f), DataType::Struct(t)) if f.len() == t.len() => f
            .iter()
            .zip(t.iter())
            .any(|(a, b)| a.name() != b.name() || renames_struct(a.data_type(), b.data_type())),
        _ => false,
    }
}

/// `CAST(e AS to)` field by field, by position, where `e` is a `from`; NULL stays NULL.
fn positional_cast(e: DfExpr, from: &DataType, to: &DataType, safe: bool) -> DfExpr {
    use datafusion::functions::core::expr_fn::{get_field, named_struct};
    use datafusion::logical_expr::{lit, when};
    match (from, to) {
        (DataType::Struct(f), DataType::Struct(t)) if f.len() == t.len() => {
            let mut args = Vec::with_capacity(2 * t.len());
            for (a, b) in f.iter().zip(t.iter()) {
                args.push(lit(b.name().as_str()));
                let value = get_field(e.clone(), a.name().as_str());
                args.push(positional_cast(value, a.data_type(), b.data_type(), safe));
            }
            let null = DfExpr::Cast(Cast::new(Box::new(lit(ScalarValue::Null)), to.clone()));
            let plain = DfExpr::Cast(Cast::new(Box::new(e.clone()), to.clone()));
            when(e.is_null(), null)
                .otherwise(named_struct(args))
                .unwrap_or(plain)
        }
        _ if from == to => e,
        _ if safe => DfExpr::TryCast(TryCast::new(Box::new(e), to.clone())),
        _ => DfExpr::Cast(Cast::new(Box::new(e), to.clone())),
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

fn cast_to(e: DfExpr, from: &DataType, to: &DataType) -> DfExpr {
    if from == to {
        e
    } else {
        DfExpr::Cast(Cast::new(Box::new(e), to.clone()))
    }
}

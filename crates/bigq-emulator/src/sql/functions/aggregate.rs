//! Aggregate functions DataFusion lacks or spells otherwise, as rewrites onto its own
//! aggregates: `COUNTIF`, `LOGICAL_AND`/`OR`, `ANY_VALUE(.. HAVING MAX|MIN ..)`,
//! `MAX_BY`/`MIN_BY`, and the `LIMIT` of `ARRAY_AGG`, `ARRAY_CONCAT_AGG` and `STRING_AGG`.

use datafusion::sql::sqlparser::ast::{
    self, Expr, FunctionArgumentClause, HavingBoundKind, Ident, ObjectName, ObjectNamePart,
    OrderByExpr, Value,
};

use super::registry::{Family, Function};
use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, function_args, number, string};

/// The clauses BigQuery allows inside an aggregate's parentheses.
#[derive(Default)]
pub(super) struct Clauses {
    pub(super) distinct: bool,
    pub(super) order_by: Vec<OrderByExpr>,
    pub(super) limit: Option<Expr>,
    pub(super) having: Option<(HavingBoundKind, Expr)>,
    pub(super) nulls: Option<ast::NullTreatment>,
}

/// A call's arguments and clauses; `None` when an argument is not a plain expression.
pub(super) fn arguments(f: &ast::Function) -> Option<(Vec<Expr>, Clauses)> {
    let mut c = Clauses {
        nulls: f.null_treatment,
        ..Clauses::default()
    };
    let args = function_args(f)?;
    if let ast::FunctionArguments::List(list) = &f.args {
        c.distinct = matches!(
            list.duplicate_treatment,
            Some(ast::DuplicateTreatment::Distinct)
        );
        for clause in &list.clauses {
            match clause {
                FunctionArgumentClause::OrderBy(o) => c.order_by = o.clone(),
                FunctionArgumentClause::Limit(l) => c.limit = Some(l.clone()),
                FunctionArgumentClause::Having(h) => c.having = Some((h.0, h.1.clone())),
                FunctionArgumentClause::IgnoreOrRespectNulls(n) => c.nulls = Some(*n),
                _ => return None,
            }
        }
    }
    Some((args, c))
}

/// `name(args ORDER BY ..) FILTER (WHERE filter)`, DISTINCT when asked.
pub(super) fn aggregate(
    name: &str,
    args: Vec<Expr>,
    distinct: bool,
    order_by: Vec<OrderByExpr>,
    filter: Option<Expr>,
) -> Expr {
    let mut clauses = Vec::new();
    if !order_by.is_empty() {
        clauses.push(FunctionArgumentClause::OrderBy(order_by));
    }
    Expr::Function(ast::Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: distinct.then_some(ast::DuplicateTreatment::Distinct),
            args: args
                .into_iter()
                .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
                .collect(),
            clauses,
        }),
        filter: filter.map(Box::new),
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// `expr IS NOT NULL`.
pub(super) fn not_null(e: Expr) -> Expr {
    Expr::IsNotNull(Box::new(e))
}

/// `a AND b`, `b` alone when there is no `a`.
fn and(a: Option<Box<Expr>>, b: Expr) -> Expr {
    match a {
        Some(a) => Expr::BinaryOp {
            left: Box::new(Expr::Nested(a)),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        },
        None => b,
    }
}

/// The call's `LIMIT`, which must be a non-negative integer literal, as BigQuery requires.
fn limit(name: &str, l: &Expr) -> BqResult<i64> {
    let n = match l {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<i64>().ok(),
            _ => None,
        },
        _ => None,
    };
    n.filter(|n| *n >= 0).ok_or_else(|| {
        BqError::invalid_query(format!(
            "{name}: LIMIT expects a non-negative integer literal, got {l}"
        ))
    })
}

/// `array_slice(array, 1, n)`: the first `n` elements.
fn first_n(array: Expr, n: i64) -> Expr {
    call("array_slice", vec![array, number(1), number(n)])
}

/// Keeps the call's `OVER` on its rewrite, when the rewrite is one call.
fn with_over(e: Expr, f: &ast::Function) -> Expr {
    match e {
        Expr::Function(mut g) => {
            g.over = f.over.clone();
            Expr::Function(g)
        }
        other => other,
    }
}

/// The UDF a `COUNTIF`'s condition passes through, whose signature checks it is BOOL.
const COUNTIF_CONDITION: &str = "bigq_countif_condition";

/// `COUNTIF(condition)` as `count(CASE WHEN condition THEN 1 END)`, keeping the call's
/// `OVER`, `FILTER` and the rest.
pub(crate) fn countif(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(args) = function_args(f).filter(|a| a.len() == 1) else {
        return Ok(None);
    };
    let c = args.into_iter().next().unwrap_or(Expr::value(Value::Null));
    let mut g = f.clone();
    g.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("count"))]);
    g.args = ast::FunctionArguments::List(ast::FunctionArgumentList {
        duplicate_treatment: None,
        args: vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
            Expr::Case {
                case_token: ast::helpers::attached_token::AttachedToken::empty(),
                end_token: ast::helpers::attached_token::AttachedToken::empty(),
                operand: None,
                conditions: vec![ast::CaseWhen {
                    condition: crate::sql::ast::call(COUNTIF_CONDITION, vec![c]),
                    result: Expr::value(Value::Number("1".into(), false)),
                }],
                else_result: None,
            },
        ))],
        clauses: Vec::new(),
    });
    Ok(Some(Expr::Function(g)))
}

/// `LOGICAL_AND`/`LOGICAL_OR` as DataFusion's `bool_and`/`bool_or` (both skip NULLs and
/// give NULL for no rows, as BigQuery's do).
pub(crate) fn logical(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let mut g = f.clone();
    let to = if name == "LOGICAL_AND" {
        "bool_and"
    } else {
        "bool_or"
    };
    g.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(to))]);
    Ok(Some(Expr::Function(g)))
}

/// `x` of a row with the greatest (`Max`) or least `y`, rows with a NULL `y` left out: the
/// first `x` in the order of `y`.
fn value_by(kind: HavingBoundKind, x: Expr, y: Expr, f: &ast::Function) -> Expr {
    let order = OrderByExpr {
        expr: y.clone(),
        options: ast::OrderByOptions {
            asc: Some(kind == HavingBoundKind::Min),
            nulls_first: None,
        },
        with_fill: None,
    };
    let filter = and(f.filter.clone(), not_null(y));
    with_over(
        aggregate("first_value", vec![x], false, vec![order], Some(filter)),
        f,
    )
}

/// `ANY_VALUE(x HAVING MAX y)` / `HAVING MIN y`: `x` of a row with the greatest or least `y`.
pub(crate) fn any_value(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((args, c)) = arguments(f) else {
        return Ok(None);
    };
    let Some((kind, y)) = c.having else {
        return Ok(None);
    };
    let [x] = <[Expr; 1]>::try_from(args)
        .map_err(|_| BqError::invalid_query("ANY_VALUE takes one argument"))?;
    Ok(Some(value_by(kind, x, y, f)))
}

/// `MAX_BY(x, y)` / `MIN_BY(x, y)`: `ANY_VALUE(x HAVING MAX|MIN y)`.
pub(crate) fn max_min_by(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((args, _)) = arguments(f) else {
        return Ok(None);
    };
    let [x, y] = <[Expr; 2]>::try_from(args)
        .map_err(|_| BqError::invalid_query(format!("{name} takes two arguments")))?;
    let kind = if name == "MAX_BY" {
        HavingBoundKind::Max
    } else {
        HavingBoundKind::Min
    };
    Ok(Some(value_by(kind, x, y, f)))
}

/// An aggregate other than `ANY_VALUE` with `HAVING MAX|MIN`, which the emulator does not
/// compute: an error naming it rather than the aggregate of every row.
pub(crate) fn having_unsupported(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    match arguments(f) {
        Some((_, c)) if c.having.is_some() => Err(BqError::unsupported(format!(
            "{name} with HAVING MAX or HAVING MIN"
        ))),
        _ => Ok(None),
    }
}

/// `ARRAY_AGG(x .. LIMIT n)` as the first `n` elements of `array_agg(x ..)`.
pub(crate) fn array_agg(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((_, c)) = arguments(f) else {
        return Ok(None);
    };
    if let Some((_, _)) = c.having {
        return having_unsupported(name, f);
    }
    let Some(l) = &c.limit else {
        return Ok(None);
    };
    let n = limit(name, l)?;
    let mut g = f.clone();
    if let ast::FunctionArguments::List(list) = &mut g.args {
        list.clauses
            .retain(|c| !matches!(c, FunctionArgumentClause::Limit(_)));
    }
    Ok(Some(first_n(Expr::Function(g), n)))
}

/// `ARRAY_CONCAT_AGG(a [ORDER BY ..] [LIMIT n])`: the non-NULL arrays aggregated in order,
/// the first `n` of them, flattened; NULL when there are none.
pub(crate) fn array_concat_agg(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((args, c)) = arguments(f) else {
        return Ok(None);
    };
    let [a] = <[Expr; 1]>::try_from(args)
        .map_err(|_| BqError::invalid_query(format!("{name} takes one argument")))?;
    let filter = and(f.filter.clone(), not_null(a.clone()));
    let mut arrays = with_over(
        aggregate("array_agg", vec![a], false, c.order_by, Some(filter)),
        f,
    );
    if let Some(l) = &c.limit {
        arrays = first_n(arrays, limit(name, l)?);
    }
    Ok(Some(call("flatten", vec![arrays])))
}

/// `STRING_AGG(x [, delimiter] [ORDER BY ..] [LIMIT n])`: the non-NULL values (the first
/// `n` with a `LIMIT`) joined by the delimiter, `,` when left out; NULL when there are none.
/// Written as `array_to_string` (as `bigq_string_agg_join`) of `array_agg`, which joins
/// BYTES as BYTES too
/// (DataFusion's `string_agg` takes STRING only).
pub(crate) fn string_agg(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((mut args, c)) = arguments(f) else {
        return Ok(None);
    };
    if args.len() == 1 {
        args.push(string(","));
    }
    if args.len() != 2 {
        return Err(BqError::invalid_query(format!(
            "{name} takes one or two arguments"
        )));
    }
    if f.over.is_some() {
        // A window's STRING_AGG stays DataFusion's.
        let mut g = f.clone();
        if let ast::FunctionArguments::List(list) = &mut g.args {
            list.args = args
                .into_iter()
                .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
                .collect();
        }
        return Ok(Some(Expr::Function(g)));
    }
    let delimiter = args.pop().unwrap_or_else(|| string(","));
    let x = args.pop().unwrap_or(Expr::value(Value::Null));
    let filter = and(f.filter.clone(), not_null(x.clone()));
    let mut values = aggregate("array_agg", vec![x], c.distinct, c.order_by, Some(filter));
    if let Some(l) = &c.limit {
        values = first_n(values, limit(name, l)?);
    }
    Ok(Some(call("bigq_string_agg_join", vec![values, delimiter])))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Aggregate, &["COUNTIF(BOOL) -> INT64"], countif),
    Function::udf(Family::Aggregate, &["bigq_countif_condition(BOOL) -> BOOL"], || super::row::udf_shown(&["bigq_countif_condition(BOOL) -> BOOL"], "COUNTIF", |_, a| Ok(a[0].clone()))),
    Function::rewrite(Family::Aggregate, &["LOGICAL_AND(BOOL) -> BOOL"], logical),
    Function::rewrite(Family::Aggregate, &["LOGICAL_OR(BOOL) -> BOOL"], logical),
    Function::rewrite(Family::Aggregate, &["ANY_VALUE(T [HAVING {MAX | MIN} U]) -> T"], any_value),
    Function::rewrite(Family::Aggregate, &["MAX_BY(T, U) -> T"], max_min_by),
    Function::rewrite(Family::Aggregate, &["MIN_BY(T, U) -> T"], max_min_by),
    Function::rewrite(Family::Aggregate, &["AVG(T HAVING {MAX | MIN} U) -> not supported"], having_unsupported),
    Function::rewrite(Family::Aggregate, &["SUM(T HAVING {MAX | MIN} U) -> not supported"], having_unsupported),
    Function::rewrite(Family::Aggregate, &["ARRAY_AGG(T [ORDER BY ..] [LIMIT n]) -> ARRAY<T>"], array_agg),
    Function::rewrite(Family::Aggregate, &["ARRAY_CONCAT_AGG(ARRAY<T> [ORDER BY ..] [LIMIT n]) -> ARRAY<T>"], array_concat_agg),
    Function::rewrite(Family::Aggregate, &["STRING_AGG(STRING[, STRING] [ORDER BY ..] [LIMIT n]) -> STRING", "STRING_AGG(BYTES[, BYTES] [ORDER BY ..] [LIMIT n]) -> BYTES"], string_agg),
];

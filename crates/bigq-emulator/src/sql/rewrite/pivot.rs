//! `PIVOT` and `UNPIVOT` in FROM, as the queries BigQuery defines them by.
//!
//! `t UNPIVOT [{INCLUDE | EXCLUDE} NULLS] (v FOR n IN (a, b))` is each row of `t` once per
//! listed column (or column tuple), with `t`'s other columns, the values as `v` and the
//! column's name (or the alias given) as `n`; EXCLUDE NULLS, the default, drops the rows whose
//! values are all NULL. It becomes `UNNEST` of an array of one STRUCT per listed column.
//!
//! `t PIVOT(agg [AS a], .. FOR c IN (x [AS y], ..))` groups `t` by its columns that neither
//! an aggregate nor `c` names, with one column per value and aggregate: the aggregate over
//! the group's rows whose `c` is the value (a `FILTER` of it). Knowing those columns needs
//! `t`'s schema, so the engine plans `t` first and hands its column names to [`pivot`].

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    self, Expr, Ident, Query, SelectItem, SetExpr, TableAlias, TableFactor, Value, Visit, VisitMut,
    Visitor, VisitorMut,
};

use crate::error::{BqError, BqResult};
use crate::sql::ast::{call, string};
use crate::sql::parse::parse;

/// The name a derived table takes the place of the input table in a template.
const INPUT: &str = "__bigq_pivot_input";

/// Rewrites an `UNPIVOT` table factor as a derived table.
pub(super) fn unpivot(tf: &mut TableFactor) -> BqResult<()> {
    let TableFactor::Unpivot {
        table,
        value,
        name,
        columns,
        null_inclusion,
        alias,
    } = tf
    else {
        return Ok(());
    };
    let values: Vec<Ident> = match value {
        Expr::Identifier(id) => vec![id.clone()],
        Expr::Tuple(items) => items.iter().map(column).collect::<BqResult<_>>()?,
        Expr::Nested(e) => vec![column(e)?],
        other => {
            return Err(BqError::invalid_query(format!(
                "UNPIVOT value column must be a name, got {other}"
            )));
        }
    };
    let mut unpivoted: Vec<Ident> = Vec::new();
    let mut structs = Vec::new();
    for c in columns.iter() {
        let inputs: Vec<Ident> = match &c.expr {
            Expr::Tuple(items) => items.iter().map(column).collect::<BqResult<_>>()?,
            e => vec![column(e)?],
        };
        if inputs.len() != values.len() {
            return Err(BqError::invalid_query(format!(
                "UNPIVOT: the IN list item {} has {} columns, the value list {}",
                c.expr,
                inputs.len(),
                values.len()
            )));
        }
        let label = match &c.alias {
            Some(a) => match super::unpivot_labels::int_label(&a.value) {
                Some(n) => crate::sql::ast::number(n),
                None => string(&a.value),
            },
            None => string(
                &inputs
                    .iter()
                    .map(|i| i.value.as_str())
                    .collect::<Vec<_>>()
                    .join("_"),
            ),
        };
        let mut args = Vec::new();
        for (k, input) in inputs.iter().enumerate() {
            args.push(string(&format!("v{k}")));
            args.push(Expr::Identifier(input.clone()));
        }
        args.push(string("n"));
        args.push(label);
        structs.push(call("named_struct", args));
        unpivoted.extend(inputs);
    }
    let excepted: Vec<String> = unpivoted
        .iter()
        .map(|i| quoted(&i.value))
        .chain(["__unpivot".to_string()])
        .collect();
    let picked: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(k, v)| format!("get_field(__unpivot, 'v{k}') AS {}", quoted(&v.value)))
        .chain([format!(
            "get_field(__unpivot, 'n') AS {}",
            quoted(&name.value)
        )])
        .collect();
    let include_nulls = matches!(null_inclusion, Some(ast::NullInclusion::IncludeNulls));
    let filter = if include_nulls {
        String::new()
    } else {
        let all_null: Vec<String> = values
            .iter()
            .map(|v| format!("{} IS NULL", quoted(&v.value)))
            .collect();
        format!(" WHERE NOT ({})", all_null.join(" AND "))
    };
    let sql = format!(
        "SELECT * FROM (SELECT * EXCEPT ({}), {} FROM (SELECT *, UNNEST(make_array()) AS __unpivot FROM {INPUT}) AS __unpivot_rows) AS __unpivoted{filter}",
        excepted.join(", "),
        picked.join(", "),
    );
    let mut q = query(&sql)?;
    // The struct array, and the input in place of the template's.
    let mut structs = Some(structs);
    let _ = VisitMut::visit(
        q.as_mut(),
        &mut Splice {
            input: Some(std::mem::replace(table.as_mut(), placeholder())),
            array: &mut structs,
        },
    );
    *tf = TableFactor::Derived {
        lateral: false,
        subquery: q,
        alias: alias.take().or_else(|| derived_alias("__unpivot")),
        sample: None,
    };
    Ok(())
}

/// The input of the innermost `PIVOT` of `q` (for the engine to learn its columns), with the
/// query's WITH clause to plan it under.
pub fn pivot_input(q: &mut Query) -> Option<Box<Query>> {
    let mut found = None;
    let _ = VisitMut::visit(
        q,
        &mut Pivots(|tf: &mut TableFactor| {
            if let TableFactor::Pivot { table, .. } = tf {
                found = Some(table.as_ref().clone());
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }),
    );
    let input = found?;
    let mut probe = query(&format!("SELECT * FROM {INPUT}")).ok()?;
    probe.with = q.with.clone();
    let _ = VisitMut::visit(
        probe.as_mut(),
        &mut Splice {
            input: Some(input),
            array: &mut None,
        },
    );
    Some(probe)
}

/// Rewrites the innermost `PIVOT` of `q` (the one [`pivot_input`] gave), whose input has the
/// columns `input_columns`, as a derived table.
pub fn pivot(q: &mut Query, input_columns: &[String]) -> BqResult<()> {
    let mut result = Ok(());
    let _ = VisitMut::visit(
        q,
        &mut Pivots(|tf: &mut TableFactor| {
            if matches!(tf, TableFactor::Pivot { .. }) {
                result = rewrite_pivot(tf, input_columns);
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }),
    );
    result
}

fn rewrite_pivot(tf: &mut TableFactor, input_columns: &[String]) -> BqResult<()> {
    let TableFactor::Pivot {
        table,
        aggregate_functions,
        value_column,
        value_source,
        default_on_null,
        alias,
    } = tf
    else {
        return Ok(());
    };
    if default_on_null.is_some() {
        return Err(BqError::unsupported("PIVOT with DEFAULT ON NULL"));
    }
    let ast::PivotValueSource::List(values) = value_source else {
        return Err(BqError::invalid_query(
            "PIVOT values must be a list of constants",
        ));
    };
    let [pivot_column] = value_column.as_slice() else {
        return Err(BqError::invalid_query("PIVOT takes one pivot column"));
    };
    if aggregate_functions.len() > 1 && aggregate_functions.iter().any(|a| a.alias.is_none()) {
        return Err(BqError::invalid_query(
            "PIVOT with several aggregates needs an alias for each",
        ));
    }
    // The grouping columns: those that neither an aggregate nor the pivot column names.
    let mut named: HashSet<String> = columns_named(pivot_column).into_iter().collect();
    for a in aggregate_functions.iter() {
        named.extend(columns_named(&a.expr));
    }
    let grouping: Vec<&String> = input_columns
        .iter()
        .filter(|c| !named.iter().any(|n| n.eq_ignore_ascii_case(c)))
        .collect();
    let mut items: Vec<SelectItem> = grouping
        .iter()
        .map(|c| SelectItem::UnnamedExpr(Expr::Identifier(Ident::with_quote('`', c.as_str()))))
        .collect();
    for v in values.iter() {
        let value_name = match &v.alias {
            Some(a) => a.value.clone(),
            None => value_name(&v.expr)?,
        };
        for a in aggregate_functions.iter() {
            let Expr::Function(f) = &a.expr else {
                return Err(BqError::invalid_query(format!(
                    "PIVOT expression must be an aggregate function call, got {}",
                    a.expr
                )));
            };
            let mut f = f.clone();
            let matches =
                Expr::IsNotDistinctFrom(Box::new(pivot_column.clone()), Box::new(v.expr.clone()));
            f.filter = Some(Box::new(match f.filter.take() {
                Some(prev) => Expr::BinaryOp {
                    left: prev,
                    op: ast::BinaryOperator::And,
                    right: Box::new(matches),
                },
                None => matches,
            }));
            let name = match &a.alias {
                Some(alias) => format!("{}_{value_name}", alias.value),
                None => value_name.clone(),
            };
            items.push(SelectItem::ExprWithAlias {
                expr: Expr::Function(f),
                alias: Ident::with_quote('`', name),
            });
        }
    }
    let group_by: Vec<String> = grouping.iter().map(|c| quoted(c)).collect();
    let sql = if group_by.is_empty() {
        format!("SELECT 1 FROM {INPUT}")
    } else {
        format!("SELECT 1 FROM {INPUT} GROUP BY {}", group_by.join(", "))
    };
    let mut q = query(&sql)?;
    if let SetExpr::Select(s) = q.body.as_mut() {
        s.projection = items;
    }
    let _ = VisitMut::visit(
        q.as_mut(),
        &mut Splice {
            input: Some(std::mem::replace(table.as_mut(), placeholder())),
            array: &mut None,
        },
    );
    *tf = TableFactor::Derived {
        lateral: false,
        subquery: q,
        alias: alias.take().or_else(|| derived_alias("__pivot")),
        sample: None,
    };
    Ok(())
}

/// The name BigQuery gives a PIVOT column for a value with no alias: a string's text, `_n`
/// for a non-negative integer `n`. Other values are refused rather than named by a guess.
fn value_name(e: &Expr) -> BqResult<String> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Ok(s.clone()),
            Value::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()) => Ok(format!("_{n}")),
            other => Err(BqError::unsupported(format!(
                "PIVOT value {other} without an alias"
            ))),
        },
        other => Err(BqError::unsupported(format!(
            "PIVOT value {other} without an alias"
        ))),
    }
}

/// The column a name (or a qualified name's last part) refers to.
fn column(e: &Expr) -> BqResult<Ident> {
    match e {
        Expr::Identifier(id) => Ok(id.clone()),
        Expr::CompoundIdentifier(ids) if !ids.is_empty() => Ok(ids[ids.len() - 1].clone()),
        Expr::Nested(e) => column(e),
        other => Err(BqError::invalid_query(format!(
            "UNPIVOT takes column names, got {other}"
        ))),
    }
}

/// The column names an expression refers to (a qualified name by its last part).
fn columns_named(e: &Expr) -> Vec<String> {
    struct Names(Vec<String>);
    impl Visitor for Names {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Identifier(id) => self.0.push(id.value.clone()),
                Expr::CompoundIdentifier(ids) => {
                    if let Some(last) = ids.last() {
                        self.0.push(last.value.clone());
                    }
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut names = Names(Vec::new());
    let _ = Visit::visit(e, &mut names);
    names.0
}

fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "\\`"))
}

fn derived_alias(name: &str) -> Option<TableAlias> {
    Some(TableAlias {
        explicit: true,
        name: Ident::new(name),
        columns: Vec::new(),
        at: None,
    })
}

fn placeholder() -> TableFactor {
    TableFactor::Table {
        name: ast::ObjectName::from(vec![Ident::new(INPUT)]),
        alias: None,
        args: None,
        with_hints: Vec::new(),
        version: None,
        with_ordinality: false,
        partitions: Vec::new(),
        json_path: None,
        sample: None,
        index_hints: Vec::new(),
    }
}

fn query(sql: &str) -> BqResult<Box<Query>> {
    match parse(sql)?.pop() {
        Some(ast::Statement::Query(q)) => Ok(q),
        _ => Err(BqError::internal(format!("not a query: {sql}"))),
    }
}

/// Puts `input` in place of the template's input table, and the elements of `array` into
/// the template's `make_array()`.
struct Splice<'a> {
    input: Option<TableFactor>,
    array: &'a mut Option<Vec<Expr>>,
}

impl VisitorMut for Splice<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, .. } = tf
            && name.to_string() == INPUT
            && let Some(input) = self.input.take()
        {
            *tf = input;
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = e
            && f.name.to_string() == "make_array"
            && let Some(elements) = self.array.take()
        {
            *e = call("make_array", elements);
        }
        ControlFlow::Continue(())
    }
}

/// Calls a closure on table factors, innermost first, until it breaks.
struct Pivots<F>(F);

impl<F: FnMut(&mut TableFactor) -> ControlFlow<()>> VisitorMut for Pivots<F> {
    type Break = ();

    fn post_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        (self.0)(tf)
    }
}

//! `UNNEST` in FROM as BigQuery reads it: `WITH OFFSET` zipped with the array's positions,
//! an alias naming the value column, an unaliased array's value named `f0_`, and the
//! fields of an unaliased array of STRUCTs made its columns.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    self, BinaryOperator, Expr, Ident, Query, TableAlias, TableAliasColumnDef, TableFactor,
    VisitMut, VisitorMut,
};

use crate::error::{BqError, BqResult};
use crate::sql::ast::{binary, call, cast, number, string};
use crate::sql::parse::parse;

/// Rewrites an `UNNEST` in FROM: its offsets and its alias.
pub(super) fn unnest(tf: &mut TableFactor) -> BqResult<()> {
    let TableFactor::UNNEST {
        alias,
        with_offset,
        with_offset_alias,
        array_exprs,
        ..
    } = tf
    else {
        return Ok(());
    };
    if *with_offset {
        // Zip the array with its 0-based positions.
        let [arr] = array_exprs.as_slice() else {
            return Err(BqError::unsupported("UNNEST of several arrays WITH OFFSET"));
        };
        // 0 to length - 1 (DataFusion's `generate_series` includes its end; its
        // `range` would be taken for GoogleSQL's RANGE by the rewrite).
        let positions = call(
            "generate_series",
            vec![
                number(0),
                binary(
                    cast(
                        call("cardinality", vec![arr.clone()]),
                        ast::DataType::BigInt(None),
                    ),
                    BinaryOperator::Minus,
                    number(1),
                ),
            ],
        );
        array_exprs.push(positions);
        let value = alias
            .as_ref()
            .map(|a| a.name.clone())
            .unwrap_or_else(|| Ident::new("f0_"));
        let offset = with_offset_alias
            .take()
            .unwrap_or_else(|| Ident::new("offset"));
        *with_offset = false;
        *alias = Some(TableAlias {
            explicit: true,
            name: Ident::new(format!("__unnest_{}", value.value)),
            columns: vec![
                TableAliasColumnDef {
                    name: value,
                    data_type: None,
                },
                TableAliasColumnDef {
                    name: offset,
                    data_type: None,
                },
            ],
            at: None,
        });
        return Ok(());
    }
    match alias {
        Some(a) if a.columns.is_empty() => {
            a.columns = vec![TableAliasColumnDef {
                name: a.name.clone(),
                data_type: None,
            }];
            a.name = Ident::new(format!("__unnest_{}", a.name.value));
        }
        Some(_) => {}
        None => {
            *alias = Some(TableAlias {
                explicit: true,
                name: Ident::new(ANONYMOUS_UNNEST),
                columns: vec![TableAliasColumnDef {
                    name: Ident::new("f0_"),
                    data_type: None,
                }],
                at: None,
            });
        }
    }
    Ok(())
}

/// The alias the rewrite gives an `UNNEST` the query left without one.
const ANONYMOUS_UNNEST: &str = "__unnest";

fn is_anonymous_unnest(tf: &TableFactor) -> Option<&Expr> {
    match tf {
        TableFactor::UNNEST {
            alias: Some(a),
            array_exprs,
            with_offset: false,
            ..
        } if a.name.value == ANONYMOUS_UNNEST && array_exprs.len() == 1 => array_exprs.first(),
        _ => None,
    }
}

/// The array expressions of the `UNNEST`s in the FROM clauses that have no alias, in the
/// order [`expand_struct_unnests`] meets them (for the engine to learn their types).
pub fn anonymous_unnests(q: &mut Query) -> Vec<Expr> {
    let mut found = Vec::new();
    let _ = q.visit(&mut FactorVisitor(|tf: &mut TableFactor| {
        if let Some(e) = is_anonymous_unnest(tf) {
            found.push(e.clone());
        }
    }));
    found
}

/// BigQuery makes the fields of an unaliased `UNNEST` of an array of STRUCTs its columns:
/// each such `UNNEST` (in [`anonymous_unnests`]' order) whose element is a STRUCT with the
/// `fields` given becomes `(SELECT get_field(v, 'a') AS a, ... FROM UNNEST(..) AS s(v))`.
pub fn expand_struct_unnests(q: &mut Query, fields: &[Option<Vec<String>>]) -> BqResult<()> {
    let template = match parse("SELECT 1 FROM UNNEST([1]) AS __bigq_struct(v)")?.pop() {
        Some(ast::Statement::Query(t)) => t,
        _ => return Err(BqError::internal("UNNEST template")),
    };
    let mut k = 0;
    let _ = q.visit(&mut FactorVisitor(|tf: &mut TableFactor| {
        let Some(array) = is_anonymous_unnest(tf).cloned() else {
            return;
        };
        let names = fields.get(k).cloned().flatten();
        k += 1;
        let Some(names) = names else {
            return;
        };
        let mut sub = template.clone();
        if let ast::SetExpr::Select(select) = sub.body.as_mut() {
            let value =
                Expr::CompoundIdentifier(vec![Ident::new("__bigq_struct"), Ident::new("v")]);
            select.projection = names
                .iter()
                .map(|n| ast::SelectItem::ExprWithAlias {
                    expr: call("get_field", vec![value.clone(), string(n)]),
                    alias: Ident::with_quote('`', n),
                })
                .collect();
            if let Some(TableFactor::UNNEST { array_exprs, .. }) =
                select.from.first_mut().map(|t| &mut t.relation)
            {
                *array_exprs = vec![array];
            }
        }
        *tf = TableFactor::Derived {
            lateral: false,
            subquery: sub,
            alias: Some(TableAlias {
                explicit: true,
                name: Ident::new(format!("__unnest_struct{k}")),
                columns: Vec::new(),
                at: None,
            }),
            sample: None,
        };
    }));
    Ok(())
}

/// Calls a closure on every table factor, before its children.
struct FactorVisitor<F>(F);

impl<F: FnMut(&mut TableFactor)> VisitorMut for FactorVisitor<F> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        (self.0)(tf);
        ControlFlow::Continue(())
    }
}

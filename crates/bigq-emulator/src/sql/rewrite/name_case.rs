//! Column names and table aliases are case-insensitive in GoogleSQL (`SELECT HLL_Sketch`
//! reads a column `hll_sketch`); DataFusion resolves them by exact spelling. When planning
//! fails on a name that is not found, and exactly one name in scope matches it when case is
//! ignored, the query is respelled to that name and planned again.
//!
//! A column's name in the result stays as the query wrote it, as BigQuery names it: a
//! respelled SELECT item keeps its written spelling as its alias.
//!
//! A name that is no column but a table's alias (`SELECT TO_JSON_STRING(t) FROM tbl AS t`)
//! is that table's row: a STRUCT of its columns, in order.

use std::ops::ControlFlow;

use datafusion::common::{Column, DataFusionError, SchemaError};
use datafusion::sql::sqlparser::ast::{Expr, Ident, Query, SelectItem, VisitMut, VisitorMut};

/// Respells in `q` the name whose lookup failed with `e`, when one name in scope matches it
/// ignoring case; `false` when there is nothing to respell (the error stands).
pub(crate) fn respell(q: &mut Query, e: &DataFusionError) -> bool {
    let mut missing = Vec::new();
    not_found(e, &mut missing);
    let mut any = false;
    for (field, valid) in missing {
        any |= respell_one(q, field, valid);
    }
    any
}

fn respell_one(q: &mut Query, field: &Column, valid: &[Column]) -> bool {
    let matches = |c: &&Column| {
        c.name.eq_ignore_ascii_case(&field.name)
            && match (&field.relation, &c.relation) {
                (None, _) => true,
                (Some(r), Some(cr)) => r.table().eq_ignore_ascii_case(cr.table()),
                (Some(_), None) => false,
            }
    };
    let found: Vec<&Column> = valid.iter().filter(matches).collect();
    if found.is_empty() && field.relation.is_none() {
        return row_of_alias(q, &field.name, valid);
    }
    // One spelling; or, as in ORDER BY, a SELECT item's alias beside the column it names.
    let c = match found.as_slice() {
        [] => return false,
        [c, rest @ ..] if rest.iter().all(|o| o.name == c.name) => *c,
        _ => match found
            .iter()
            .filter(|c| c.relation.is_none())
            .collect::<Vec<_>>()[..]
        {
            [c] => *c,
            _ => return false,
        },
    };
    let name = (c.name != field.name).then(|| (field.name.clone(), c.name.clone()));
    let relation = match (&field.relation, &c.relation) {
        (Some(r), Some(cr)) if r.table() != cr.table() => {
            Some((r.table().to_string(), cr.table().to_string()))
        }
        _ => None,
    };
    if name.is_none() && relation.is_none() {
        return false;
    }
    let mut r = Respell {
        name,
        relation,
        row: None,
    };
    let _ = q.visit(&mut r);
    true
}

/// `alias` as the row of the table it names among `valid`'s qualifiers: the STRUCT of that
/// table's columns.
fn row_of_alias(q: &mut Query, alias: &str, valid: &[Column]) -> bool {
    let of = |exact: bool| -> Vec<&Column> {
        valid
            .iter()
            .filter(|c| {
                c.relation.as_ref().is_some_and(|r| {
                    if exact {
                        r.table() == alias
                    } else {
                        r.table().eq_ignore_ascii_case(alias)
                    }
                })
            })
            .collect()
    };
    let mut columns = of(true);
    if columns.is_empty() {
        columns = of(false);
    }
    let Some(table) = columns
        .first()
        .and_then(|c| c.relation.as_ref())
        .map(|r| r.table().to_string())
    else {
        return false;
    };
    if columns
        .iter()
        .any(|c| c.relation.as_ref().is_some_and(|r| r.table() != table))
    {
        return false;
    }
    let values = columns
        .iter()
        .map(|c| Expr::Named {
            expr: Box::new(Expr::CompoundIdentifier(vec![
                Ident::new(&table),
                Ident::new(&c.name),
            ])),
            name: Ident::new(&c.name),
        })
        .collect();
    let mut r = Respell {
        name: None,
        relation: None,
        row: Some((
            alias.to_string(),
            Expr::Struct {
                values,
                fields: Vec::new(),
            },
        )),
    };
    let _ = q.visit(&mut r);
    true
}

/// Each name not found, with the names in scope, in a planning error.
fn not_found<'a>(e: &'a DataFusionError, out: &mut Vec<(&'a Column, &'a [Column])>) {
    match e {
        DataFusionError::SchemaError(inner, _) => {
            if let SchemaError::FieldNotFound {
                field,
                valid_fields,
            } = inner.as_ref()
            {
                out.push((field, valid_fields));
            }
        }
        DataFusionError::Diagnostic(_, inner) | DataFusionError::Context(_, inner) => {
            not_found(inner, out)
        }
        DataFusionError::Collection(all) => all.iter().for_each(|e| not_found(e, out)),
        _ => {}
    }
}

/// Renames a column (`name`, written → found) and a qualifier (`relation`), or makes a
/// table's alias its row (`row`).
struct Respell {
    name: Option<(String, String)>,
    relation: Option<(String, String)>,
    row: Option<(String, Expr)>,
}

impl Respell {
    fn rename(&self, id: &mut Ident, qualifier: bool) -> bool {
        let pair = if qualifier {
            &self.relation
        } else {
            &self.name
        };
        match pair {
            Some((from, to)) if id.value == *from => {
                id.value = to.clone();
                true
            }
            _ => false,
        }
    }
}

impl VisitorMut for Respell {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        for s in crate::sql::ast::body_selects(q.body.as_mut()) {
            for item in &mut s.projection {
                let SelectItem::UnnamedExpr(e) = item else {
                    continue;
                };
                let written = match e {
                    Expr::Identifier(id) => id.clone(),
                    Expr::CompoundIdentifier(parts) => match parts.last() {
                        Some(id) => id.clone(),
                        None => continue,
                    },
                    _ => continue,
                };
                let mut probe = written.clone();
                let row = matches!((&*e, &self.row), (Expr::Identifier(id), Some((a, _))) if id.value == *a);
                if row || self.rename(&mut probe, false) {
                    *item = SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: written,
                    };
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(id) => match &self.row {
                Some((alias, row)) if id.value == *alias => *e = row.clone(),
                _ => {
                    self.rename(id, false);
                }
            },
            Expr::CompoundIdentifier(parts) => {
                let last = parts.len().saturating_sub(1);
                for (i, id) in parts.iter_mut().enumerate() {
                    if !(i < last && self.rename(id, true)) {
                        self.rename(id, false);
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

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

/// BigQuery's correlated joins written without `UNNEST`: in each FROM clause of `q`'s body,
/// a path whose first name is an item before it (`FROM t, t.arr AS x`) is `UNNEST(t.arr)`;
/// and a `JOIN UNNEST(..)` or `LEFT JOIN UNNEST(..)` needs no `ON` (it joins each row with
/// its own array's elements).
pub(super) fn correlated_paths(q: &mut Query) {
    fn from(items: &mut [ast::TableWithJoins]) {
        let mut names: Vec<String> = Vec::new();
        for item in items {
            item_path(&mut item.relation, &names);
            names.extend(item_name(&item.relation));
            for join in &mut item.joins {
                item_path(&mut join.relation, &names);
                names.extend(item_name(&join.relation));
                if matches!(join.relation, TableFactor::UNNEST { .. }) {
                    use ast::JoinOperator as J;
                    match &mut join.join_operator {
                        J::Join(c) | J::Inner(c) | J::Left(c) | J::LeftOuter(c)
                            if matches!(c, ast::JoinConstraint::None) =>
                        {
                            *c = ast::JoinConstraint::On(Expr::value(ast::Value::Boolean(true)));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    for select in crate::sql::ast::body_selects(&mut q.body) {
        from(&mut select.from);
    }
}

/// The name later FROM items know an item by: its alias, or a table's last name.
pub(super) fn item_name(tf: &TableFactor) -> Option<String> {
    match tf {
        TableFactor::Table { alias: Some(a), .. }
        | TableFactor::Derived { alias: Some(a), .. }
        | TableFactor::UNNEST { alias: Some(a), .. } => Some(a.name.value.to_lowercase()),
        TableFactor::Table { name, .. } => match name.0.last() {
            Some(ast::ObjectNamePart::Identifier(i)) => {
                // `dataset.table` quoted as one name is known by its table.
                i.value.rsplit('.').next().map(str::to_lowercase)
            }
            _ => None,
        },
        _ => None,
    }
}

fn item_path(tf: &mut TableFactor, names: &[String]) {
    convert_path(tf, names);
    // DataFusion reads no field of another item's column (`t.s.arr`) in UNNEST: the
    // fields are read with `get_field` on the column.
    if let TableFactor::UNNEST { array_exprs, .. } = tf {
        for e in array_exprs {
            let Expr::CompoundIdentifier(parts) = e else {
                continue;
            };
            let [first, second, fields @ ..] = parts.as_slice() else {
                continue;
            };
            if fields.is_empty() || !names.contains(&first.value.to_lowercase()) {
                continue;
            }
            let mut read = Expr::CompoundIdentifier(vec![first.clone(), second.clone()]);
            for f in fields {
                read = call("get_field", vec![read, string(&f.value)]);
            }
            *e = read;
        }
    }
}

fn convert_path(tf: &mut TableFactor, names: &[String]) {
    let TableFactor::Table {
        name,
        alias,
        args: None,
        ..
    } = tf
    else {
        return;
    };
    let parts: Option<Vec<Ident>> = name
        .0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) if !i.value.contains('.') => Some(i.clone()),
            _ => None,
        })
        .collect();
    let Some(parts) = parts.filter(|p| p.len() >= 2) else {
        return;
    };
    if !parts
        .first()
        .is_some_and(|first| names.contains(&first.value.to_lowercase()))
    {
        return;
    }
    *tf = TableFactor::UNNEST {
        alias: alias.take(),
        array_exprs: vec![Expr::CompoundIdentifier(parts)],
        with_offset: false,
        with_offset_alias: None,
        with_ordinality: false,
    };
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

/// An `UNNEST` [`unnest`] gave an alias of its own (`UNNEST(..) AS x`, `.. WITH OFFSET`):
/// its array, its value column and its offset column.
fn aliased_unnest(tf: &TableFactor) -> Option<(&Expr, &Ident, Option<&Ident>)> {
    match tf {
        TableFactor::UNNEST {
            alias: Some(a),
            array_exprs,
            with_offset: false,
            ..
        } if a.name.value.starts_with("__unnest_")
            && a.name.value != ANONYMOUS_UNNEST
            && (1..=2).contains(&a.columns.len())
            && array_exprs.len() == a.columns.len() =>
        {
            Some((
                array_exprs.first()?,
                &a.columns[0].name,
                a.columns.get(1).map(|c| &c.name),
            ))
        }
        _ => None,
    }
}

/// The array of an `UNNEST` whose element may be a STRUCT whose fields BigQuery makes columns:
/// one without an alias, or one with an alias (a range variable for the element beside them).
fn struct_unnest(tf: &TableFactor) -> Option<&Expr> {
    is_anonymous_unnest(tf).or_else(|| aliased_unnest(tf).map(|(a, _, _)| a))
}

/// The array expressions of the `UNNEST`s in the FROM clauses whose fields may become columns,
/// in the order [`expand_struct_unnests`] meets them (for the engine to learn their types).
pub fn anonymous_unnests(q: &mut Query) -> Vec<Expr> {
    let mut found = Vec::new();
    let _ = q.visit(&mut FactorVisitor(|tf: &mut TableFactor| {
        if let Some(e) = struct_unnest(tf) {
            found.push(e.clone());
        }
    }));
    found
}

/// For the array of each such `UNNEST` that may read columns of other FROM items, keyed by
/// the array's text: the items before it in its FROM clause, and after them those of the
/// FROM clauses of the queries around it (a subquery's `UNNEST(t.arr)` reads its outer query's
/// `t`), for the engine to learn the array's type from a query over them.
pub fn unnest_scopes(q: &mut Query) -> Vec<(String, Vec<ast::TableWithJoins>)> {
    struct Scopes {
        found: Vec<(String, Vec<ast::TableWithJoins>)>,
        /// The FROM items of each query the visit is in, outermost first.
        outer: Vec<Vec<ast::TableWithJoins>>,
    }
    impl Scopes {
        fn from(&mut self, items: &[ast::TableWithJoins]) {
            let mut before: Vec<ast::TableWithJoins> = Vec::new();
            for item in items {
                let mut current = ast::TableWithJoins {
                    relation: item.relation.clone(),
                    joins: Vec::new(),
                };
                self.factor(&item.relation, &before);
                for join in &item.joins {
                    let mut scope = before.clone();
                    scope.push(current.clone());
                    self.factor(&join.relation, &scope);
                    current.joins.push(join.clone());
                }
                before.push(current);
            }
        }
        fn factor(&mut self, tf: &TableFactor, before: &[ast::TableWithJoins]) {
            let Some(array) = struct_unnest(tf).or_else(|| match tf {
                TableFactor::UNNEST {
                    alias: None,
                    array_exprs,
                    ..
                } if array_exprs.len() == 1 => array_exprs.first(),
                _ => None,
            }) else {
                return;
            };
            let mut scope: Vec<ast::TableWithJoins> =
                self.outer.iter().flatten().cloned().collect();
            scope.extend(before.iter().cloned());
            if !scope.is_empty() {
                self.found.push((array.to_string(), scope));
            }
        }
    }
    impl VisitorMut for Scopes {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            let mut mine = Vec::new();
            for select in crate::sql::ast::body_selects(&mut q.body) {
                self.from(&select.from);
                mine.extend(select.from.iter().cloned());
            }
            self.outer.push(mine);
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
            self.outer.pop();
            ControlFlow::Continue(())
        }
    }
    let mut scopes = Scopes {
        found: Vec::new(),
        outer: Vec::new(),
    };
    let _ = q.visit(&mut scopes);
    scopes.found
}

/// What an `UNNEST`'s element is, where the rewrite of it differs from DataFusion's UNNEST.
#[derive(Clone, Debug)]
pub enum Element {
    /// A STRUCT of these fields, which BigQuery makes the UNNEST's columns (each field of
    /// tagged text with the UDF that tags it again).
    Struct(Vec<(String, Option<&'static str>)>),
    /// A value of a type the emulator keeps as tagged text (JSON, GEOGRAPHY), which
    /// DataFusion's UNNEST loses: the UDF that tags it again.
    Tagged(&'static str),
}

/// BigQuery makes the fields of an `UNNEST` of an array of STRUCTs its columns: each such
/// `UNNEST` (in [`anonymous_unnests`]' order) whose element is a STRUCT with the `fields`
/// given becomes `(SELECT get_field(v, 'a') AS a, ... FROM UNNEST(..) AS s(v))`; one with an
/// alias keeps its range variable (`v AS x`, and its offset) beside the fields, and `SELECT
/// *` over it leaves the range variable out, as BigQuery's does. An element of JSON or
/// GEOGRAPHY is tagged again (`bigq_tag_json(v) AS x`).
pub fn expand_struct_unnests(q: &mut Query, elements: &[Option<Element>]) -> BqResult<()> {
    let template = match parse("SELECT 1 FROM UNNEST([1]) AS __bigq_struct(v)")?.pop() {
        Some(ast::Statement::Query(t)) => t,
        _ => return Err(BqError::internal("UNNEST template")),
    };
    let mut k = 0;
    // The alias of each expanded `UNNEST` with a range variable, and the variable's column.
    let mut hidden: Vec<(String, Ident)> = Vec::new();
    let _ = q.visit(&mut FactorVisitor(|tf: &mut TableFactor| {
        let Some(array) = struct_unnest(tf).cloned() else {
            return;
        };
        let element = elements.get(k).cloned().flatten();
        k += 1;
        let Some(element) = element else {
            return;
        };
        let ranged = aliased_unnest(tf).map(|(_, v, o)| (v.clone(), o.cloned()));
        let arrays = match tf {
            TableFactor::UNNEST { array_exprs, .. } => array_exprs.clone(),
            _ => vec![array],
        };
        let alias_name = match tf {
            TableFactor::UNNEST { alias: Some(a), .. } if ranged.is_some() => a.name.clone(),
            _ => Ident::new(format!("__unnest_struct{k}")),
        };
        let column =
            |c: &str| Expr::CompoundIdentifier(vec![Ident::new("__bigq_struct"), Ident::new(c)]);
        let mut sub = template.clone();
        if let ast::SetExpr::Select(select) = sub.body.as_mut() {
            let taken = |n: &str| {
                ranged.as_ref().is_some_and(|(v, o)| {
                    v.value.eq_ignore_ascii_case(n)
                        || o.as_ref().is_some_and(|o| o.value.eq_ignore_ascii_case(n))
                })
            };
            let mut projection = Vec::new();
            match &element {
                Element::Struct(names) => {
                    if let Some((value, _)) = &ranged {
                        projection.push(ast::SelectItem::ExprWithAlias {
                            expr: column("v"),
                            alias: value.clone(),
                        });
                    }
                    projection.extend(
                        names
                            .iter()
                            .filter(|(n, _)| !n.is_empty() && !taken(n))
                            .map(|(n, tag)| {
                                let field = call("get_field", vec![column("v"), string(n)]);
                                ast::SelectItem::ExprWithAlias {
                                    expr: match tag {
                                        Some(udf) => call(udf, vec![field]),
                                        None => field,
                                    },
                                    alias: Ident::with_quote('`', n),
                                }
                            }),
                    );
                }
                Element::Tagged(udf) => projection.push(ast::SelectItem::ExprWithAlias {
                    expr: call(udf, vec![column("v")]),
                    alias: ranged
                        .as_ref()
                        .map_or_else(|| Ident::new("f0_"), |(v, _)| v.clone()),
                }),
            }
            let mut alias_columns = vec![TableAliasColumnDef {
                name: Ident::new("v"),
                data_type: None,
            }];
            if let Some((_, Some(offset))) = &ranged {
                projection.push(ast::SelectItem::ExprWithAlias {
                    expr: column("o"),
                    alias: offset.clone(),
                });
                alias_columns.push(TableAliasColumnDef {
                    name: Ident::new("o"),
                    data_type: None,
                });
            }
            select.projection = projection;
            if let Some(TableFactor::UNNEST {
                array_exprs, alias, ..
            }) = select.from.first_mut().map(|t| &mut t.relation)
            {
                *array_exprs = arrays;
                if let Some(a) = alias {
                    a.columns = alias_columns;
                }
            }
        }
        if let (Some((value, _)), Element::Struct(_)) = (&ranged, &element) {
            hidden.push((alias_name.value.clone(), value.clone()));
        }
        *tf = TableFactor::Derived {
            // It may read the columns of the FROM items before it.
            lateral: true,
            subquery: sub,
            alias: Some(TableAlias {
                explicit: true,
                name: alias_name,
                columns: Vec::new(),
                at: None,
            }),
            sample: None,
        };
    }));
    if !hidden.is_empty() {
        hide_range_variables(q, &hidden);
    }
    Ok(())
}

/// `SELECT *` over an expanded `UNNEST` with a range variable: BigQuery's star gives the
/// element's fields, not the variable, so each `*` whose FROM holds one leaves it out.
fn hide_range_variables(q: &mut Query, hidden: &[(String, Ident)]) {
    struct Hide<'a>(&'a [(String, Ident)]);
    impl VisitorMut for Hide<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            for select in crate::sql::ast::body_selects(&mut q.body) {
                let mut names: Vec<Ident> = Vec::new();
                for item in &select.from {
                    for tf in std::iter::once(&item.relation)
                        .chain(item.joins.iter().map(|j| &j.relation))
                    {
                        if let TableFactor::Derived { alias: Some(a), .. } = tf
                            && let Some((_, v)) = self.0.iter().find(|(n, _)| *n == a.name.value)
                        {
                            names.push(v.clone());
                        }
                    }
                }
                let Some((first, rest)) = names.split_first() else {
                    continue;
                };
                for p in &mut select.projection {
                    if let ast::SelectItem::Wildcard(opts) = p {
                        match &mut opts.opt_except {
                            Some(except) => {
                                except.additional_elements.extend(names.iter().cloned())
                            }
                            None => {
                                opts.opt_except = Some(ast::ExceptSelectItem {
                                    first_element: first.clone(),
                                    additional_elements: rest.to_vec(),
                                })
                            }
                        }
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = q.visit(&mut Hide(hidden));
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

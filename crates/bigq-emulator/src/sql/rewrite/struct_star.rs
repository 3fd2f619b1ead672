//! `s.*` of a STRUCT value in a SELECT list, as BigQuery reads it: one column per field of
//! the struct (`l.location.*`, `s.* EXCEPT (b)`, `arr[OFFSET(0)].*`), where DataFusion
//! knows `x.*` only of a table. The struct's fields are learnt by planning the value over
//! the SELECT's FROM clause (with the query's CTEs); the engine does that planning, between
//! [`struct_stars`] and [`expand_struct_stars`].

use datafusion::sql::sqlparser::ast::{
    self, Expr, Ident, ObjectNamePart, Query, Select, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, Value,
};

use crate::error::{BqError, BqResult};
use crate::sql::ast::body_selects;

/// The names a SELECT's FROM items go by (aliases, else a table's last name part).
fn from_names(s: &Select) -> Vec<String> {
    s.from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)))
        .filter_map(super::unnest::item_name)
        .collect()
}

/// The value a `x.*` item expands, when `x` is not one of the FROM items (a table's `t.*`).
fn struct_value(item: &SelectItem, from: &[String]) -> Option<Expr> {
    let SelectItem::QualifiedWildcard(kind, _) = item else {
        return None;
    };
    match kind {
        SelectItemQualifiedWildcardKind::Expr(e) => Some(e.clone()),
        SelectItemQualifiedWildcardKind::ObjectName(name) => {
            let parts: Vec<Ident> = name
                .0
                .iter()
                .map(|p| match p {
                    ObjectNamePart::Identifier(id) => Some(id.clone()),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            match parts.as_slice() {
                [one] if from.contains(&one.value.to_lowercase()) => None,
                [one] => Some(Expr::Identifier(one.clone())),
                // `t.s.*` where `t` is a FROM item: its column `s`; any other path is a
                // table's name (`dataset.table.*`).
                [first, ..] if from.contains(&first.value.to_lowercase()) => {
                    Some(Expr::CompoundIdentifier(parts))
                }
                _ => None,
            }
        }
    }
}

/// One `x.*` of a STRUCT value: where it is, and the query to plan to learn its fields.
pub(crate) struct StructStar {
    select: usize,
    item: usize,
    value: Expr,
    /// `SELECT <value> FROM <the select's FROM>`, under the query's WITH clause.
    pub(crate) probe: Box<Query>,
}

/// Each `x.*` in the SELECT lists of `q`'s body whose `x` may be a STRUCT value, with the
/// query that types it; `select_of` makes `SELECT <expr>`.
pub(crate) fn struct_stars(
    q: &mut Query,
    select_of: impl Fn(Expr) -> BqResult<Box<Query>>,
) -> BqResult<Vec<StructStar>> {
    let with = q.with.clone();
    let mut out = Vec::new();
    for (si, s) in body_selects(&mut q.body).into_iter().enumerate() {
        let from = from_names(s);
        for (ii, item) in s.projection.iter().enumerate() {
            let Some(value) = struct_value(item, &from) else {
                continue;
            };
            let mut probe = select_of(value.clone())?;
            probe.with = with.clone();
            if let SetExpr::Select(p) = probe.body.as_mut() {
                p.from = s.from.clone();
            }
            out.push(StructStar {
                select: si,
                item: ii,
                value,
                probe,
            });
        }
    }
    Ok(out)
}

/// Replaces each `x.*` of [`struct_stars`] whose value planned as a STRUCT (`fields` in the
/// same order: its field names, or `None`) with one item per field, `EXCEPT` honoured.
pub(crate) fn expand_struct_stars(
    q: &mut Query,
    stars: Vec<StructStar>,
    fields: &[Option<Vec<String>>],
) -> BqResult<()> {
    let mut selects = body_selects(&mut q.body);
    // Last first, so earlier positions stay where they were.
    for (star, names) in stars.into_iter().zip(fields).rev() {
        let Some(names) = names else { continue };
        let Some(s) = selects.get_mut(star.select) else {
            continue;
        };
        let Some(SelectItem::QualifiedWildcard(_, options)) = s.projection.get(star.item) else {
            continue;
        };
        if options.opt_replace.is_some()
            || options.opt_rename.is_some()
            || options.opt_ilike.is_some()
        {
            return Err(BqError::unsupported(
                "REPLACE or RENAME on the fields of a STRUCT's `.*`",
            ));
        }
        let except: Vec<String> = match &options.opt_except {
            Some(e) => std::iter::once(&e.first_element)
                .chain(&e.additional_elements)
                .map(|i| i.value.to_lowercase())
                .collect(),
            None => Vec::new(),
        };
        if let Some(missing) = except
            .iter()
            .find(|e| !names.iter().any(|n| n.to_lowercase() == **e))
        {
            return Err(BqError::invalid_query(format!(
                "Column {missing} in SELECT * EXCEPT list does not exist"
            )));
        }
        let items = names
            .iter()
            .filter(|n| !except.contains(&n.to_lowercase()))
            .map(|n| SelectItem::ExprWithAlias {
                expr: Expr::CompoundFieldAccess {
                    root: Box::new(star.value.clone()),
                    access_chain: vec![ast::AccessExpr::Dot(Expr::value(
                        Value::SingleQuotedString(n.clone()),
                    ))],
                },
                alias: Ident::with_quote('`', n.clone()),
            });
        s.projection.splice(star.item..=star.item, items);
    }
    Ok(())
}

//! GROUP BY's grouping sets in BigQuery's forms, written out as the explicit `GROUPING SETS`
//! DataFusion plans:
//! - `GROUP BY ()`: the one empty grouping set, the grand total, which is no GROUP BY at all
//!   (sqlparser reads it as an empty tuple, which DataFusion does not plan);
//! - `ROLLUP` and `CUBE` over column lists (`ROLLUP (a, (a, b))`), which DataFusion refuses;
//! - `ROLLUP` and `CUBE` inside `GROUPING SETS`, which sqlparser reads as calls.
//!
//! BigQuery keeps a grouping set that appears twice (each yields its rows), and so does
//! DataFusion's plan of the expanded list.

use datafusion::sql::sqlparser::ast::{Expr, GroupByExpr, Query};

use crate::error::BqError;

/// More grouping sets than this in one GROUP BY is refused rather than planned.
const MAX_SETS: usize = 4096;

/// Rewrites the GROUP BY of each SELECT of `q`'s body.
pub(super) fn grouping_sets(q: &mut Query) -> Result<(), BqError> {
    for s in crate::sql::ast::body_selects(q.body.as_mut()) {
        let GroupByExpr::Expressions(exprs, modifiers) = &mut s.group_by else {
            continue;
        };
        if !modifiers.is_empty() {
            continue;
        }
        if exprs.len() == 1 && matches!(&exprs[0], Expr::Tuple(t) if t.is_empty()) {
            exprs.clear();
            continue;
        }
        for e in exprs.iter_mut() {
            if let Some(sets) = sets_of(e)? {
                if sets.len() > MAX_SETS {
                    return Err(BqError::invalid_query(format!(
                        "GROUP BY expands to {} grouping sets; at most {MAX_SETS} are supported",
                        sets.len()
                    )));
                }
                *e = Expr::GroupingSets(sets.into_iter().map(dedup).collect());
            }
        }
    }
    Ok(())
}

/// The grouping sets a GROUP BY item stands for, if it is ROLLUP, CUBE or GROUPING SETS.
fn sets_of(e: &Expr) -> Result<Option<Vec<Vec<Expr>>>, BqError> {
    Ok(Some(match e {
        Expr::Rollup(items) => rollup(items),
        Expr::Cube(items) => cube(items)?,
        Expr::GroupingSets(items) => {
            let mut sets = Vec::new();
            for item in items {
                match item.as_slice() {
                    [one] => match sets_of(one)? {
                        Some(inner) if !matches!(one, Expr::GroupingSets(_)) => sets.extend(inner),
                        Some(_) => {
                            return Err(BqError::invalid_query(
                                "GROUPING SETS cannot be nested inside GROUPING SETS",
                            ));
                        }
                        None => sets.push(item.clone()),
                    },
                    _ => sets.push(item.clone()),
                }
            }
            sets
        }
        Expr::Function(f) => match crate::sql::ast::function_name(f).as_deref() {
            Some(name @ ("ROLLUP" | "CUBE")) => {
                let Some(args) = crate::sql::ast::function_args(f) else {
                    return Err(BqError::invalid_query(format!(
                        "{name} takes a list of grouping columns"
                    )));
                };
                let items: Vec<Vec<Expr>> = args.into_iter().map(column_list).collect();
                if name == "ROLLUP" {
                    rollup(&items)
                } else {
                    cube(&items)?
                }
            }
            _ => return Ok(None),
        },
        _ => return Ok(None),
    }))
}

/// The columns of a ROLLUP or CUBE argument: `(a, b)` is two, anything else one.
fn column_list(e: Expr) -> Vec<Expr> {
    match e {
        Expr::Tuple(v) => v,
        Expr::Nested(inner) => vec![*inner],
        e => vec![e],
    }
}

/// `ROLLUP (x1, .., xn)`: the prefixes `(x1, .., xn)`, .., `(x1)`, `()`.
fn rollup(items: &[Vec<Expr>]) -> Vec<Vec<Expr>> {
    (0..=items.len())
        .rev()
        .map(|n| items[..n].concat())
        .collect()
}

/// `CUBE (x1, .., xn)`: every subset of the items.
fn cube(items: &[Vec<Expr>]) -> Result<Vec<Vec<Expr>>, BqError> {
    if items.len() > MAX_SETS.trailing_zeros() as usize {
        return Err(BqError::invalid_query(format!(
            "CUBE of {} items expands to too many grouping sets; at most {MAX_SETS} are supported",
            items.len()
        )));
    }
    let n = items.len();
    Ok((0..1usize << n)
        .rev()
        .map(|mask| {
            (0..n)
                .filter(|i| mask & (1 << (n - 1 - i)) != 0)
                .flat_map(|i| items[i].iter().cloned())
                .collect()
        })
        .collect())
}

/// A grouping set names each expression once (`ROLLUP (a, (a, b))` groups `(a, a, b)` by
/// `(a, b)`).
fn dedup(set: Vec<Expr>) -> Vec<Expr> {
    let mut seen = std::collections::HashSet::new();
    set.into_iter()
        .filter(|e| seen.insert(e.to_string()))
        .collect()
}

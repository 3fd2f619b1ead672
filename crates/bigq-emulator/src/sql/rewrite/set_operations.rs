//! BigQuery's rules for set operations that sqlparser accepts and BigQuery does not: each
//! operator names ALL or DISTINCT, and operators of different kinds are parenthesized.

use datafusion::sql::sqlparser::ast::{SetExpr, SetOperator, SetQuantifier};

use crate::error::{BqError, BqResult};

/// Checks the set operations of one query body (its nested queries are checked as queries).
pub(super) fn check(body: &SetExpr) -> BqResult<()> {
    let SetExpr::SetOperation {
        op,
        set_quantifier,
        left,
        right,
    } = body
    else {
        return Ok(());
    };
    if matches!(set_quantifier, SetQuantifier::None) {
        return Err(BqError::invalid_query(format!(
            "Syntax error: Expected keyword ALL or keyword DISTINCT but got keyword SELECT after {}",
            name(op)
        )));
    }
    for side in [left, right] {
        if let SetExpr::SetOperation {
            op: o,
            set_quantifier: q,
            ..
        } = side.as_ref()
            && (o != op || q != set_quantifier)
        {
            return Err(BqError::invalid_query(format!(
                "Syntax error: Different set operations cannot be used in the same query without using parentheses for grouping ({} {set_quantifier} and {} {q})",
                name(op),
                name(o)
            )));
        }
        check(side)?;
    }
    Ok(())
}

fn name(op: &SetOperator) -> &'static str {
    match op {
        SetOperator::Union => "UNION",
        SetOperator::Intersect => "INTERSECT",
        SetOperator::Except => "EXCEPT",
        SetOperator::Minus => "MINUS",
    }
}

//! Building sqlparser expressions: literals, casts, operations and calls, reading a call's
//! name and arguments, and the questions rewrites ask of a query's shape.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    self, BinaryOperator, CastKind, Expr, Ident, ObjectName, ObjectNamePart, Query, Value, Visit,
    Visitor,
};

/// A string literal.
pub(crate) fn string(s: &str) -> Expr {
    Expr::value(Value::SingleQuotedString(s.to_string()))
}

/// An integer literal.
pub(crate) fn number(n: i64) -> Expr {
    Expr::value(Value::Number(n.to_string(), false))
}

/// `(left op right)`.
pub(crate) fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::Nested(Box::new(Expr::BinaryOp {
        left: Box::new(left),
        op,
        right: Box::new(right),
    }))
}

/// `CAST(expr AS data_type)`.
pub(crate) fn cast(expr: Expr, data_type: ast::DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(expr),
        data_type,
        array: false,
        format: None,
    }
}

/// The upper-case name of a call of a one-part name (`IFNULL`, not `SAFE.X`).
pub(crate) fn function_name(f: &ast::Function) -> Option<String> {
    match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(id)] => Some(id.value.to_ascii_uppercase()),
        _ => None,
    }
}

/// The arguments of a call, if each is a plain expression (no names, no `*`).
pub(crate) fn function_args(f: &ast::Function) -> Option<Vec<Expr>> {
    match &f.args {
        ast::FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e.clone()),
                _ => None,
            })
            .collect(),
        ast::FunctionArguments::None => Some(Vec::new()),
        _ => None,
    }
}

/// A call of the function `name` with positional arguments.
pub(crate) fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(ast::Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// The SELECTs of a query's body, left to right through its set operations (not those of
/// nested queries).
pub(crate) fn body_selects(body: &mut ast::SetExpr) -> Vec<&mut ast::Select> {
    match body {
        ast::SetExpr::Select(s) => vec![s.as_mut()],
        ast::SetExpr::SetOperation { left, right, .. } => {
            let mut out = body_selects(left);
            out.extend(body_selects(right));
            out
        }
        _ => Vec::new(),
    }
}

/// `q`'s SELECT when `q` is one SELECT with no WITH, DISTINCT, GROUP BY, HAVING, QUALIFY,
/// named window, LIMIT or FETCH (its ORDER BY is the caller's to judge): a query whose rows
/// are its FROM's, filtered and projected.
pub(crate) fn plain_select(q: &Query) -> Option<&ast::Select> {
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let plain = q.with.is_none()
        && q.limit_clause.is_none()
        && q.fetch.is_none()
        && s.distinct.is_none()
        && s.having.is_none()
        && s.qualify.is_none()
        && s.named_window.is_empty()
        && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty());
    plain.then_some(&**s)
}

/// Whether `node` calls a function for which `matches` holds, outside the queries nested in it.
pub(crate) fn calls_outside_subqueries<V: Visit>(
    node: &V,
    matches: impl Fn(&ast::Function) -> bool,
) -> bool {
    struct Calls<F> {
        depth: usize,
        matches: F,
    }
    impl<F: Fn(&ast::Function) -> bool> Visitor for Calls<F> {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Function(f) if self.depth == 0 && (self.matches)(f) => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    node.visit(&mut Calls { depth: 0, matches }).is_break()
}

//! Building sqlparser expressions: literals, casts, operations and calls, and reading a
//! call's name and arguments.

use datafusion::sql::sqlparser::ast::{
    self, BinaryOperator, CastKind, Expr, Ident, ObjectName, ObjectNamePart, Value,
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

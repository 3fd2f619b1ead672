//! Query parameters (`@name`, `@name.field`, `?`) and script variables, replaced by their
//! values as typed literals, so that DataFusion plans them with their types known.

use datafusion::sql::sqlparser::ast::{Expr, Ident, Value};

use crate::error::{BqError, BqResult};
use crate::sql::ast::call;
use crate::sql::names::NameContext;
use crate::sql::params::{Param, Params, to_sql_expr};

/// The `i`-th (0-based) `?` of the query.
pub(super) fn positional(params: &Params, i: usize) -> BqResult<&Param> {
    params.positional(i).ok_or_else(|| {
        BqError::invalid_query(format!("Positional query parameter {} has no value", i + 1))
    })
}

/// `@name`.
pub(super) fn named_param<'a>(params: &'a Params, name: &str) -> BqResult<&'a Param> {
    params
        .named(name)
        .ok_or_else(|| BqError::invalid_query(format!("Query parameter '{name}' not found")))
}

/// `@name` as an expression.
pub(super) fn named(params: &Params, name: &str) -> BqResult<Expr> {
    to_sql_expr(&named_param(params, name)?.value)
}

/// A JSON, GEOGRAPHY, RANGE or INTERVAL parameter as the GoogleSQL literal of its type
/// (for the rewrite to read); `None` for other types.
pub(super) fn typed_literal(p: &Param) -> BqResult<Option<Expr>> {
    p.typed_literal()
        .map(|text| crate::sql::parse::parse_expr(&text))
        .transpose()
}

/// `@name.a.b`: fields of a STRUCT parameter.
pub(super) fn named_path(params: &Params, ids: &[Ident]) -> BqResult<Expr> {
    let mut out = named(params, &ids[0].value[1..])?;
    for f in &ids[1..] {
        out = call(
            "get_field",
            vec![out, Expr::value(Value::SingleQuotedString(f.value.clone()))],
        );
    }
    Ok(out)
}

/// The value of the script variable `name`, if one is declared.
pub(super) fn variable(cx: &NameContext, name: &str) -> Option<Expr> {
    let vars = cx.vars.lock().unwrap_or_else(|e| e.into_inner());
    vars.get(&name.to_ascii_lowercase()).cloned()
}

/// The value of a STRUCT script variable (a `FOR` loop's row), for `var.field`.
pub(super) fn struct_variable(cx: &NameContext, name: &str) -> Option<Expr> {
    let v = variable(cx, name)?;
    match &v {
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("named_struct") => Some(v),
        Expr::Struct { .. } => Some(v),
        _ => None,
    }
}

/// A system variable: `@@project_id`, `@@dataset_id`, `@@time_zone`, and those a script
/// sets (`@@error.message` in an exception handler, `@@row_count` after DML).
pub(super) fn system(cx: &NameContext, name: &str) -> BqResult<Expr> {
    let key = name.to_ascii_lowercase();
    let text = |s: &str| Expr::value(Value::SingleQuotedString(s.to_string()));
    match key.as_str() {
        "@@project_id" => return Ok(text(&cx.project)),
        "@@dataset_id" => {
            return Ok(match &cx.default_dataset {
                Some((_, d)) => text(d),
                None => Expr::value(Value::Null),
            });
        }
        "@@dataset_project_id" => {
            return Ok(match &cx.default_dataset {
                Some((p, _)) => text(p),
                None => Expr::value(Value::Null),
            });
        }
        "@@time_zone" => return Ok(text("UTC")),
        _ => {}
    }
    if let Some(v) = cx
        .vars
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .cloned()
    {
        return Ok(v);
    }
    if key.starts_with("@@error.") {
        return Err(BqError::invalid_query(format!(
            "{name} is only set inside an exception handler"
        )));
    }
    if key == "@@row_count" {
        return Ok(Expr::value(Value::Null));
    }
    Err(BqError::unsupported(format!("system variable {name}")))
}

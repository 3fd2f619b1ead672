//! GoogleSQL text to sqlparser statements, in BigQuery's dialect, after the rewrites that
//! must happen in the text (RANGE syntax and typed array literals, which sqlparser does not
//! know; `table` as a name; UNPIVOT's literal aliases; `ALTER TABLE .. SET OPTIONS`, which
//! it knows as `SET (..)`); string literals' escapes are read after parsing
//! ([`crate::sql::escapes`]).

use datafusion::sql::sqlparser::ast;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::Tokenizer;

use crate::error::{BqError, BqResult};
use crate::sql::dialect::GoogleSql;
use crate::sql::escapes::unescape_in;
use crate::sql::rewrite::range::pre_parse;
use crate::sql::rewrite::{
    aggregate_functions, set_options, table_name, typed_arrays, unpivot_labels,
};
use crate::sql::script::{Node, Part};

/// Parses GoogleSQL statements (a script of them, without the procedural language's
/// blocks).
pub fn parse(sql: &str) -> BqResult<Vec<ast::Statement>> {
    let mut statements = parse_with(sql, |p| p.parse_statements())?;
    crate::sql::escapes::unescape_literals(&mut statements)?;
    Ok(statements)
}

/// Parses one GoogleSQL expression (as `SELECT <text>` reads it).
pub fn parse_expr(text: &str) -> BqResult<ast::Expr> {
    if let Some(ast::Statement::Query(q)) = parse(&format!("SELECT {text}"))?.pop()
        && let ast::SetExpr::Select(s) = *q.body
        && let Some(ast::SelectItem::UnnamedExpr(e)) = s.projection.into_iter().next()
    {
        return Ok(e);
    }
    Err(BqError::invalid_query(format!("Not an expression: {text}")))
}

/// Parses a GoogleSQL script: statements inside the procedural language's blocks.
pub fn parse_script(sql: &str) -> BqResult<Vec<Node>> {
    let mut nodes = parse_with(sql, crate::sql::script::parse_script)?;
    let mut failed = None;
    for n in &mut nodes {
        n.visit_parts(&mut |part| {
            let r = match part {
                Part::Statement(s) => unescape_in(s),
                Part::Expr(e) => unescape_in(e),
                Part::Query(q) => unescape_in(q),
            };
            if let Err(e) = r {
                failed.get_or_insert(e);
            }
        });
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(nodes),
    }
}

/// The text rewritten as sqlparser must see it, then read by `read`.
fn parse_with<T>(sql: &str, read: impl Fn(&mut Parser) -> Result<T, ParserError>) -> BqResult<T> {
    let sql = pre_parse(sql).map_err(BqError::invalid_query)?;
    let sql = aggregate_functions::pre_parse(&sql).map_err(BqError::invalid_query)?;
    let sql = typed_arrays::pre_parse(&sql);
    let sql = table_name::pre_parse(&sql);
    let sql = unpivot_labels::pre_parse(&sql);
    match parse_raw(&sql, &read) {
        Ok(parsed) => Ok(parsed),
        Err(e) => set_options::pre_parse(&sql)
            .and_then(|retry| parse_raw(&retry, &read).ok())
            .ok_or_else(|| {
                BqError::invalid_query(format!("Syntax error: {}", clean_parser_error(&e)))
            }),
    }
}

/// Parses with string literals kept as written (their escapes are read by
/// [`crate::sql::escapes`], as GoogleSQL reads them).
fn parse_raw<T>(
    sql: &str,
    read: &impl Fn(&mut Parser) -> Result<T, ParserError>,
) -> Result<T, ParserError> {
    let dialect = GoogleSql::default();
    let tokens = Tokenizer::new(&dialect, sql)
        .with_unescape(false)
        .tokenize_with_location()?;
    read(&mut Parser::new(&dialect).with_tokens_with_locations(tokens))
}

fn clean_parser_error(e: &ParserError) -> String {
    let s = e.to_string();
    s.strip_prefix("sql parser error: ")
        .unwrap_or(&s)
        .to_string()
}

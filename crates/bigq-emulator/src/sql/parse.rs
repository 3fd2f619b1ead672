//! GoogleSQL text to sqlparser statements, in BigQuery's dialect, after the rewrites that
//! must happen in the text (RANGE syntax and typed array literals, which sqlparser does not know; `table` as a name;
//! `ALTER TABLE .. SET OPTIONS`, which it knows as `SET (..)`).

use datafusion::sql::sqlparser::ast;
use datafusion::sql::sqlparser::parser::Parser;

use crate::error::{BqError, BqResult};
use crate::sql::dialect::GoogleSql;
use crate::sql::rewrite::range::pre_parse;
use crate::sql::rewrite::{set_options, table_name, typed_arrays};

/// Parses GoogleSQL (one statement or a script).
pub fn parse(sql: &str) -> BqResult<Vec<ast::Statement>> {
    let sql = pre_parse(sql).map_err(BqError::invalid_query)?;
    let sql = typed_arrays::pre_parse(&sql);
    let sql = table_name::pre_parse(&sql);
    match Parser::parse_sql(&GoogleSql::default(), &sql) {
        Ok(statements) => Ok(statements),
        Err(e) => set_options::pre_parse(&sql)
            .and_then(|retry| Parser::parse_sql(&GoogleSql::default(), &retry).ok())
            .ok_or_else(|| {
                BqError::invalid_query(format!("Syntax error: {}", clean_parser_error(&e)))
            }),
    }
}

fn clean_parser_error(e: &datafusion::sql::sqlparser::parser::ParserError) -> String {
    let s = e.to_string();
    s.strip_prefix("sql parser error: ")
        .unwrap_or(&s)
        .to_string()
}

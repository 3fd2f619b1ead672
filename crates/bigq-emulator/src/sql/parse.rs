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
use crate::sql::rewrite::range::pre_parse;
use crate::sql::rewrite::{set_options, table_name, typed_arrays, unpivot_labels};

/// Parses GoogleSQL (one statement or a script).
pub fn parse(sql: &str) -> BqResult<Vec<ast::Statement>> {
    let sql = pre_parse(sql).map_err(BqError::invalid_query)?;
    let sql = typed_arrays::pre_parse(&sql);
    let sql = table_name::pre_parse(&sql);
    let sql = unpivot_labels::pre_parse(&sql);
    let mut statements = match parse_raw(&sql) {
        Ok(statements) => statements,
        Err(e) => set_options::pre_parse(&sql)
            .and_then(|retry| parse_raw(&retry).ok())
            .ok_or_else(|| {
                BqError::invalid_query(format!("Syntax error: {}", clean_parser_error(&e)))
            })?,
    };
    crate::sql::escapes::unescape_literals(&mut statements)?;
    Ok(statements)
}

/// Parses with string literals kept as written (their escapes are read by
/// [`crate::sql::escapes`], as GoogleSQL reads them).
fn parse_raw(sql: &str) -> Result<Vec<ast::Statement>, ParserError> {
    let dialect = GoogleSql::default();
    let tokens = Tokenizer::new(&dialect, sql)
        .with_unescape(false)
        .tokenize_with_location()?;
    Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements()
}

fn clean_parser_error(e: &ParserError) -> String {
    let s = e.to_string();
    s.strip_prefix("sql parser error: ")
        .unwrap_or(&s)
        .to_string()
}

//! GoogleSQL as sqlparser reads it: BigQuery's dialect, with the bit shift operators
//! `<<` and `>>` that GoogleSQL has and sqlparser's BigQuery dialect does not parse.

use std::any::TypeId;

use datafusion::sql::sqlparser::ast::{Expr, Ident, ObjectName, Statement};
use datafusion::sql::sqlparser::dialect::{BigQueryDialect, Dialect};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::Token;

/// BigQuery's dialect with `<<` and `>>`; every other behaviour is BigQuery's (the parser
/// asks for the dialect by `dialect()`, which stays BigQuery's).
#[derive(Debug, Default)]
pub(crate) struct GoogleSql(BigQueryDialect);

impl Dialect for GoogleSql {
    fn dialect(&self) -> TypeId {
        self.0.dialect()
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        true
    }

    /// Shifts bind below `+` and `-` and above `&`, as in GoogleSQL.
    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        match parser.peek_token_ref().token {
            Token::ShiftLeft | Token::ShiftRight => Some(Ok(25)),
            _ => None,
        }
    }

    /// `SAFE.f(..)` where `f` is a keyword sqlparser reads with its own syntax (`SUBSTR`,
    /// `LEFT`, ..): the plain call of `SAFE.f` that GoogleSQL means.
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let [safe, dot, name, paren] = parser.peek_tokens::<4>();
        match (safe, dot, name, paren) {
            (Token::Word(safe), Token::Period, Token::Word(name), Token::LParen)
                if safe.quote_style.is_none()
                    && safe.value.eq_ignore_ascii_case("SAFE")
                    && name.quote_style.is_none()
                    && name.keyword != Keyword::NoKeyword =>
            {
                for _ in 0..3 {
                    parser.next_token();
                }
                let f = ObjectName::from(vec![Ident::new(safe.value), Ident::new(name.value)]);
                Some(parser.parse_function(f))
            }
            _ => None,
        }
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.0.parse_statement(parser)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }

    fn supports_projection_trailing_commas(&self) -> bool {
        self.0.supports_projection_trailing_commas()
    }

    fn supports_column_definition_trailing_commas(&self) -> bool {
        self.0.supports_column_definition_trailing_commas()
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }

    fn supports_triple_quoted_string(&self) -> bool {
        self.0.supports_triple_quoted_string()
    }

    fn supports_window_function_null_treatment_arg(&self) -> bool {
        self.0.supports_window_function_null_treatment_arg()
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.0.supports_string_literal_backslash_escape()
    }

    fn supports_window_clause_named_window_reference(&self) -> bool {
        self.0.supports_window_clause_named_window_reference()
    }

    fn supports_parenthesized_set_variables(&self) -> bool {
        self.0.supports_parenthesized_set_variables()
    }

    fn supports_select_wildcard_except(&self) -> bool {
        self.0.supports_select_wildcard_except()
    }

    fn require_interval_qualifier(&self) -> bool {
        self.0.require_interval_qualifier()
    }

    fn supports_struct_literal(&self) -> bool {
        self.0.supports_struct_literal()
    }

    fn supports_select_expr_star(&self) -> bool {
        self.0.supports_select_expr_star()
    }

    fn supports_execute_immediate(&self) -> bool {
        self.0.supports_execute_immediate()
    }

    fn supports_table_versioning(&self) -> bool {
        self.0.supports_table_versioning()
    }

    fn supports_group_by_expr(&self) -> bool {
        self.0.supports_group_by_expr()
    }

    fn is_column_alias(&self, kw: &Keyword, parser: &mut Parser) -> bool {
        self.0.is_column_alias(kw, parser)
    }

    fn supports_pipe_operator(&self) -> bool {
        self.0.supports_pipe_operator()
    }

    fn supports_create_table_multi_schema_info_sources(&self) -> bool {
        self.0.supports_create_table_multi_schema_info_sources()
    }

    fn supports_select_wildcard_replace(&self) -> bool {
        self.0.supports_select_wildcard_replace()
    }

    fn supports_comma_separated_trim(&self) -> bool {
        self.0.supports_comma_separated_trim()
    }
}

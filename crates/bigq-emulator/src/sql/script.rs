//! GoogleSQL scripts as a tree: the statements sqlparser reads, inside the procedural
//! language's blocks, which it reads only in part (`IF`, `BEGIN .. EXCEPTION .. END`) or not
//! at all (`WHILE .. DO`, `LOOP`, `REPEAT`, `FOR .. IN`, `BREAK`, `CONTINUE`, labels,
//! the `CASE` statement). The blocks are read here, with sqlparser's parser for every
//! statement and expression inside them, so positions in errors stay those of the text.

use datafusion::sql::sqlparser::ast::{Expr, Query, Statement};
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::Token;

/// One step of a script.
#[derive(Clone, Debug)]
pub enum Node {
    /// A statement sqlparser reads.
    Statement(Box<Statement>),
    /// `IF c THEN .. [ELSEIF c THEN ..] [ELSE ..] END IF`, and the `CASE` statement.
    If {
        /// The conditions with their statements, in order.
        branches: Vec<(Expr, Vec<Node>)>,
        /// `ELSE`'s statements.
        otherwise: Vec<Node>,
    },
    /// `LOOP`, `WHILE`, `REPEAT` and `FOR`.
    Loop {
        /// `label:` before it.
        label: Option<String>,
        /// Which loop.
        kind: LoopKind,
        /// Its statements.
        body: Vec<Node>,
    },
    /// `BEGIN .. [EXCEPTION WHEN ERROR THEN ..] END`.
    Block {
        /// `label:` before it.
        label: Option<String>,
        /// Its statements.
        body: Vec<Node>,
        /// The statements after `EXCEPTION WHEN ERROR THEN`.
        handler: Option<Vec<Node>>,
    },
    /// `BREAK` / `LEAVE [label]`.
    Break(Option<String>),
    /// `CONTINUE` / `ITERATE [label]`.
    Continue(Option<String>),
    /// `RETURN`.
    Return,
    /// `RAISE [USING MESSAGE = expr]`.
    Raise(Option<Expr>),
}

/// The kinds of loop.
#[derive(Clone, Debug)]
pub enum LoopKind {
    /// `LOOP .. END LOOP`.
    Loop,
    /// `WHILE cond DO .. END WHILE`.
    While(Expr),
    /// `REPEAT .. UNTIL cond END REPEAT`.
    Repeat(Expr),
    /// `FOR var IN (query) DO .. END FOR`.
    For {
        /// The variable holding each row as a STRUCT.
        var: String,
        /// The rows.
        query: Box<Query>,
    },
}

impl Node {
    /// Every statement, expression and query of the node, for a walk over them.
    pub fn visit_parts(&mut self, f: &mut dyn FnMut(Part<'_>)) {
        let all = |nodes: &mut Vec<Node>, f: &mut dyn FnMut(Part<'_>)| {
            for n in nodes {
                n.visit_parts(f);
            }
        };
        match self {
            Node::Statement(s) => f(Part::Statement(s)),
            Node::If {
                branches,
                otherwise,
            } => {
                for (c, body) in branches {
                    f(Part::Expr(c));
                    all(body, f);
                }
                all(otherwise, f);
            }
            Node::Loop { kind, body, .. } => {
                match kind {
                    LoopKind::Loop => {}
                    LoopKind::While(c) | LoopKind::Repeat(c) => f(Part::Expr(c)),
                    LoopKind::For { query, .. } => f(Part::Query(query)),
                }
                all(body, f);
            }
            Node::Block { body, handler, .. } => {
                all(body, f);
                if let Some(h) = handler {
                    all(h, f);
                }
            }
            Node::Raise(Some(e)) => f(Part::Expr(e)),
            Node::Break(_) | Node::Continue(_) | Node::Return | Node::Raise(None) => {}
        }
    }
}

/// A statement, expression or query of a script.
pub enum Part<'a> {
    /// A statement.
    Statement(&'a mut Statement),
    /// A condition or message.
    Expr(&'a mut Expr),
    /// A `FOR` loop's query.
    Query(&'a mut Query),
}

/// Reads a whole script.
pub fn parse_script(parser: &mut Parser) -> Result<Vec<Node>, ParserError> {
    let nodes = statements(parser, &[])?;
    let t = parser.peek_token();
    if t.token != Token::EOF {
        return parser.expected("end of script", t);
    }
    Ok(nodes)
}

/// Whether the next token is the unquoted word `w`.
fn at(parser: &Parser, w: &str) -> bool {
    is_word(&parser.peek_token_ref().token, w)
}

fn is_word(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(word) if word.quote_style.is_none() && word.value.eq_ignore_ascii_case(w))
}

/// Consumes the word `w` when it is next.
fn eat(parser: &mut Parser, w: &str) -> bool {
    if at(parser, w) {
        parser.next_token();
        true
    } else {
        false
    }
}

fn expect(parser: &mut Parser, words: &[&str]) -> Result<(), ParserError> {
    for w in words {
        if !eat(parser, w) {
            let t = parser.peek_token();
            return parser.expected(w, t);
        }
    }
    Ok(())
}

/// Statements up to one of `ends` (not consumed) or the end of the text, each ended by `;`.
fn statements(parser: &mut Parser, ends: &[&str]) -> Result<Vec<Node>, ParserError> {
    let mut out = Vec::new();
    loop {
        while parser.consume_token(&Token::SemiColon) {}
        let t = parser.peek_token_ref().token.clone();
        if t == Token::EOF || ends.iter().any(|e| is_word(&t, e)) {
            return Ok(out);
        }
        out.push(node(parser)?);
        let t = parser.peek_token_ref().token.clone();
        if !parser.consume_token(&Token::SemiColon)
            && t != Token::EOF
            && !ends.iter().any(|e| is_word(&t, e))
        {
            let t = parser.peek_token();
            return parser.expected("end of statement", t);
        }
    }
}

/// A loop's statements, its `END <keyword>` and the optional label after it.
fn loop_body(
    parser: &mut Parser,
    keyword: &str,
    label: &Option<String>,
) -> Result<Vec<Node>, ParserError> {
    let body = statements(parser, &["END"])?;
    expect(parser, &["END", keyword])?;
    end_label(parser, label);
    Ok(body)
}

/// An optional label after a loop's or block's `END ..`.
fn end_label(parser: &mut Parser, label: &Option<String>) {
    if let Some(l) = label
        && at(parser, l)
    {
        parser.next_token();
    }
}

/// The label named after `BREAK`, `CONTINUE`, `LEAVE`, `ITERATE`, if any.
fn jump_label(parser: &mut Parser) -> Result<Option<String>, ParserError> {
    match &parser.peek_token_ref().token {
        Token::Word(_) => Ok(Some(parser.parse_identifier()?.value)),
        _ => Ok(None),
    }
}

fn node(parser: &mut Parser) -> Result<Node, ParserError> {
    // `label: LOOP|WHILE|REPEAT|FOR|BEGIN`.
    let [first, second, third] = parser.peek_tokens::<3>();
    let label = match (&first, &second) {
        (Token::Word(w), Token::Colon)
            if ["LOOP", "WHILE", "REPEAT", "FOR", "BEGIN"]
                .iter()
                .any(|k| is_word(&third, k)) =>
        {
            parser.next_token();
            parser.next_token();
            Some(w.value.clone())
        }
        _ => None,
    };
    let labelled = |label: Option<String>, parser: &Parser| -> Result<(), ParserError> {
        match label {
            Some(l) => parser.expected(
                &format!("LOOP, WHILE, REPEAT, FOR or BEGIN after the label {l}"),
                parser.peek_token(),
            ),
            None => Ok(()),
        }
    };
    if eat(parser, "IF") {
        labelled(label, parser)?;
        let mut branches = Vec::new();
        loop {
            let cond = parser.parse_expr()?;
            expect(parser, &["THEN"])?;
            branches.push((cond, statements(parser, &["ELSEIF", "ELSE", "END"])?));
            if !eat(parser, "ELSEIF") {
                break;
            }
        }
        let otherwise = if eat(parser, "ELSE") {
            statements(parser, &["END"])?
        } else {
            Vec::new()
        };
        expect(parser, &["END", "IF"])?;
        return Ok(Node::If {
            branches,
            otherwise,
        });
    }
    if at(parser, "CASE") {
        labelled(label, parser)?;
        return case_statement(parser);
    }
    if eat(parser, "LOOP") {
        let body = loop_body(parser, "LOOP", &label)?;
        return Ok(Node::Loop {
            label,
            kind: LoopKind::Loop,
            body,
        });
    }
    if eat(parser, "WHILE") {
        let cond = parser.parse_expr()?;
        expect(parser, &["DO"])?;
        let body = loop_body(parser, "WHILE", &label)?;
        return Ok(Node::Loop {
            label,
            kind: LoopKind::While(cond),
            body,
        });
    }
    if eat(parser, "REPEAT") {
        let body = statements(parser, &["UNTIL"])?;
        expect(parser, &["UNTIL"])?;
        let cond = parser.parse_expr()?;
        expect(parser, &["END", "REPEAT"])?;
        end_label(parser, &label);
        return Ok(Node::Loop {
            label,
            kind: LoopKind::Repeat(cond),
            body,
        });
    }
    if eat(parser, "FOR") {
        let var = parser.parse_identifier()?.value;
        expect(parser, &["IN"])?;
        parser.expect_token(&Token::LParen)?;
        let query = parser.parse_query()?;
        parser.expect_token(&Token::RParen)?;
        expect(parser, &["DO"])?;
        let body = loop_body(parser, "FOR", &label)?;
        return Ok(Node::Loop {
            label,
            kind: LoopKind::For { var, query },
            body,
        });
    }
    if at(parser, "BEGIN") {
        // `BEGIN`, `BEGIN TRANSACTION`: a transaction; otherwise a block.
        let next = parser.peek_nth_token(1).token;
        let transaction =
            next == Token::EOF || next == Token::SemiColon || is_word(&next, "TRANSACTION");
        if !transaction || label.is_some() {
            parser.next_token();
            let body = statements(parser, &["EXCEPTION", "END"])?;
            let handler = if eat(parser, "EXCEPTION") {
                expect(parser, &["WHEN", "ERROR", "THEN"])?;
                Some(statements(parser, &["END"])?)
            } else {
                None
            };
            expect(parser, &["END"])?;
            end_label(parser, &label);
            return Ok(Node::Block {
                label,
                body,
                handler,
            });
        }
    }
    labelled(label, parser)?;
    if eat(parser, "BREAK") || eat(parser, "LEAVE") {
        return Ok(Node::Break(jump_label(parser)?));
    }
    if eat(parser, "CONTINUE") || eat(parser, "ITERATE") {
        return Ok(Node::Continue(jump_label(parser)?));
    }
    if eat(parser, "RETURN") {
        return Ok(Node::Return);
    }
    if eat(parser, "RAISE") {
        if eat(parser, "USING") {
            expect(parser, &["MESSAGE"])?;
            parser.expect_token(&Token::Eq)?;
            return Ok(Node::Raise(Some(parser.parse_expr()?)));
        }
        return Ok(Node::Raise(None));
    }
    Ok(Node::Statement(Box::new(parser.parse_statement()?)))
}

/// `CASE [operand] WHEN x THEN .. [..] [ELSE ..] END CASE`, as the IF it means.
fn case_statement(parser: &mut Parser) -> Result<Node, ParserError> {
    parser.next_token();
    let operand = if at(parser, "WHEN") {
        None
    } else {
        Some(parser.parse_expr()?)
    };
    let mut branches = Vec::new();
    while eat(parser, "WHEN") {
        let when = parser.parse_expr()?;
        expect(parser, &["THEN"])?;
        let cond = match &operand {
            Some(o) => Expr::BinaryOp {
                left: Box::new(Expr::Nested(Box::new(o.clone()))),
                op: datafusion::sql::sqlparser::ast::BinaryOperator::Eq,
                right: Box::new(Expr::Nested(Box::new(when))),
            },
            None => when,
        };
        branches.push((cond, statements(parser, &["WHEN", "ELSE", "END"])?));
    }
    if branches.is_empty() {
        let t = parser.peek_token();
        return parser.expected("WHEN", t);
    }
    let otherwise = if eat(parser, "ELSE") {
        statements(parser, &["END"])?
    } else {
        Vec::new()
    };
    expect(parser, &["END", "CASE"])?;
    Ok(Node::If {
        branches,
        otherwise,
    })
}

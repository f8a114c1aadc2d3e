//! The limit of a statement's nesting: a bound on the depth of the tree a statement parses to,
//! computed from its tokens before it is parsed, and refused above [`MAX_DEPTH`].
//!
//! sqlparser reads a chain of infix operators (`a + b + c ...`, `x AND y AND ...`, `s || t`),
//! a CASE's branches and a chain of set operations (`.. UNION ALL ..`) in a loop, but builds a
//! tree as deep as the chain is long, and binding, planning, compiling and evaluating that
//! tree recurse once per level: about 2,600 chained `+` overflowed the stack and aborted the
//! process. Parentheses and subqueries nest by recursion in the parser itself, which refuses
//! more than 50 levels (sqlparser's recursion limit). So the depth of a statement's tree is at
//! most, along any path of nested parentheses, the sum of the operators, keywords and set
//! operations or joins chained at each level between two separators (a `,`, or a clause
//! keyword such as `FROM` or `WHERE`), which this module computes in one pass over the
//! tokens, without recursion. Real statements stay far below the limit; a longer chain is an
//! error naming the position where the bound passes it and the limit (split the expression,
//! e.g. into views, or use `IN (..)` for a long `OR` of equalities).
//!
//! Binding and planning a statement take several kilobytes of stack a level, more than a
//! thread of Rust's default 2 MiB stack holds at the limit: a statement is bound, planned and
//! run from a stack of its own ([`on_statement_stack`], [`STATEMENT_STACK`] bytes, reserved,
//! not committed, until used), whatever thread calls the library.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::sql::error::SqlError;

/// The deepest nesting a statement may have (the bound of the module docs): far above what a
/// statement written by hand reaches, and low enough that its binding fits in
/// [`STATEMENT_STACK`] and its evaluation in a worker's
/// [`WORKER_STACK`](crate::run::WORKER_STACK).
pub const MAX_DEPTH: usize = 1000;

/// The stack a statement is bound, planned and run from: room for [`MAX_DEPTH`] levels at
/// the several kilobytes a level that binding takes (the memory is committed only as used).
pub const STATEMENT_STACK: usize = 64 << 20;

/// Runs `f` (a statement's binding, planning and run) on a stack of [`STATEMENT_STACK`] bytes.
pub(crate) fn on_statement_stack<T>(f: impl FnOnce() -> T) -> T {
    stacker::grow(STATEMENT_STACK, f)
}

/// One level of parentheses being read.
#[derive(Default)]
struct Level {
    /// Operators and keywords chained in the current segment (since the last separator).
    ops: usize,
    /// The deepest closed parenthesis of the current segment.
    inner: usize,
    /// The deepest segment closed at this level.
    deepest: usize,
    /// Set operations and joins at this level (they chain across clauses).
    chained: usize,
}

impl Level {
    /// The bound of this level so far.
    fn depth(&self) -> usize {
        self.chained + self.deepest.max(self.ops + self.inner)
    }

    /// Ends the current segment (a separator).
    fn separate(&mut self) {
        self.deepest = self.deepest.max(self.ops + self.inner);
        self.ops = 0;
        self.inner = 0;
    }
}

/// Checks that no statement of `tokens` nests deeper than [`MAX_DEPTH`] (see the module docs).
///
/// Errors: a syntax error at the token where the bound passes the limit, naming the limit.
pub(super) fn check(tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
    let mut levels = vec![Level::default()];
    for t in tokens {
        match &t.token {
            Token::LParen => levels.push(Level::default()),
            Token::RParen if levels.len() > 1 => {
                let closed = levels.pop().expect("more than one level").depth() + 1;
                let level = levels.last_mut().expect("the statement's level");
                level.inner = level.inner.max(closed);
            }
            Token::SemiColon => levels = vec![Level::default()],
            Token::Comma => levels.last_mut().expect("a level").separate(),
            Token::Word(w) if w.quote_style.is_none() && w.keyword != Keyword::NoKeyword => {
                let level = levels.last_mut().expect("a level");
                match w.keyword {
                    // Values, not operators.
                    Keyword::TRUE | Keyword::FALSE | Keyword::NULL => {}
                    Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT | Keyword::JOIN => {
                        level.chained += 1
                    }
                    Keyword::SELECT
                    | Keyword::FROM
                    | Keyword::WHERE
                    | Keyword::GROUP
                    | Keyword::HAVING
                    | Keyword::ORDER
                    | Keyword::LIMIT
                    | Keyword::OFFSET
                    | Keyword::FETCH
                    | Keyword::VALUES => level.separate(),
                    _ => level.ops += 1,
                }
            }
            Token::Word(_)
            | Token::Number(..)
            | Token::Whitespace(_)
            | Token::Period
            | Token::RParen
            | Token::EOF => {}
            literal if is_literal(literal) => {}
            _ => levels.last_mut().expect("a level").ops += 1,
        }
        if levels.last().expect("a level").depth() > MAX_DEPTH {
            return Err(SqlError::syntax(
                t.span.start,
                format!("the statement nests deeper than the limit of {MAX_DEPTH} levels here (each operator or keyword chained without a ',' between, each CASE branch, set operation and join is a level, added up through parentheses): split it, e.g. into views, or write a long OR of equalities as IN (..)"),
            ));
        }
    }
    Ok(())
}

/// Whether `token` is a string literal.
fn is_literal(token: &Token) -> bool {
    matches!(
        token,
        Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_)
            | Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_)
    )
}

//! What the SQL front end refuses: syntax (with the position and what was expected), names and
//! types (with the position of the offending identifier or expression), and run failures.

use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Location, Span};

use crate::error::TableError;

/// A SQL statement that cannot be parsed, bound or run.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// Text that is not SQL: `line` and `column` (1-based) of the token where the parser stopped,
    /// and what it expected there (`Expected: ..., found: ...`).
    #[error("SQL syntax error at line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What was expected and what was found.
        message: String,
    },
    /// A statement that parses but does not validate (unknown table or column, ambiguous
    /// column, type error, Flink's refusals such as `FOR SYSTEM_TIME AS OF` on a table that is
    /// not versioned, an unknown connector option), at the position of the offending part.
    #[error("SQL validation error at line {line}, column {column}: {message}")]
    Validation {
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What is wrong.
        message: String,
    },
    /// A statement that validated but could not run (a file that cannot be read...).
    #[error(transparent)]
    Table(#[from] TableError),
}

impl SqlError {
    /// A validation error at the start of `span`.
    pub(crate) fn at(span: Span, message: impl Into<String>) -> SqlError {
        SqlError::Validation {
            line: span.start.line,
            column: span.start.column,
            message: message.into(),
        }
    }

    /// A syntax error at `location`.
    pub(crate) fn syntax(location: Location, message: impl Into<String>) -> SqlError {
        SqlError::Syntax {
            line: location.line,
            column: location.column,
            message: message.into(),
        }
    }
}

impl From<crate::error::Error> for SqlError {
    fn from(e: crate::error::Error) -> SqlError {
        SqlError::Table(TableError::Run(e))
    }
}

/// sqlparser's errors carry their position as a suffix ` at Line: L, Column: C`; it becomes the
/// error's fields.
impl From<ParserError> for SqlError {
    fn from(e: ParserError) -> SqlError {
        let text = match e {
            ParserError::TokenizerError(m) | ParserError::ParserError(m) => m,
            ParserError::RecursionLimitExceeded => "the statement nests too deeply".to_string(),
        };
        let (message, line, column) = split_location(&text);
        SqlError::Syntax {
            line,
            column,
            message,
        }
    }
}

fn split_location(text: &str) -> (String, u64, u64) {
    let Some(at) = text.rfind(" at Line: ") else {
        return (text.to_string(), 0, 0);
    };
    let rest = &text[at + " at Line: ".len()..];
    let mut parts = rest.split(", Column: ");
    let line = parts.next().and_then(|l| l.trim().parse().ok());
    let column = parts.next().and_then(|c| c.trim().parse().ok());
    match (line, column) {
        (Some(line), Some(column)) => (text[..at].to_string(), line, column),
        _ => (text.to_string(), 0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_positions_become_fields() {
        let e = SqlError::from(ParserError::ParserError(
            "Expected: an expression, found: FROM at Line: 2, Column: 8".into(),
        ));
        assert_eq!(
            e.to_string(),
            "SQL syntax error at line 2, column 8: Expected: an expression, found: FROM"
        );
    }
}

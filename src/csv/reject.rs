//! Rejected rows: where a row was refused and why.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A column of an input file, named in a [`RowError`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Column {
    /// 1-based position of the column in the file's header.
    pub number: usize,
    /// The column's name in the header (empty for a field beyond the header).
    pub name: String,
}

/// A row that was refused (malformed, or refused by an operator), with its position and reason.
///
/// Ordered by input, line and column: the order of the error report. Displayed as
/// `FILE:LINE:COLUMN: column "NAME": REASON`, or `FILE:LINE: REASON` when no column is at fault.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RowError {
    /// Position of the file among the command's inputs (0 for the first).
    pub input: usize,
    /// 1-based line on which the row starts.
    pub line: u64,
    /// The column at fault, if one is.
    pub column: Option<Column>,
    /// The file's path, as given on the command line.
    pub file: String,
    /// Why the row was refused.
    pub reason: String,
}

impl RowError {
    /// A refusal of the row at `line` of input number `input` (the file `file` with the header
    /// `header`), naming the header column at position `column` (0-based) if one is at fault.
    pub fn at(
        input: usize,
        file: &str,
        header: &[String],
        line: u64,
        column: Option<usize>,
        reason: impl Into<String>,
    ) -> RowError {
        RowError {
            input,
            line,
            column: column.map(|at| Column {
                number: at + 1,
                name: header.get(at).cloned().unwrap_or_default(),
            }),
            file: file.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.column {
            Some(c) if c.name.is_empty() => write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, c.number, self.reason
            ),
            Some(c) => write!(
                f,
                "{}:{}:{}: column {:?}: {}",
                self.file, self.line, c.number, c.name, self.reason
            ),
            None => write!(f, "{}:{}: {}", self.file, self.line, self.reason),
        }
    }
}

impl std::error::Error for RowError {}

//! The errors that stop a run (as opposed to rejected rows, which are reported and counted: see
//! [`crate::csv::RowError`]).

use thiserror::Error;

/// An error that stops a run before or while it executes: exit code 2 of the command-line tool.
#[derive(Debug, Error)]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An input file cannot be used as asked (no header, a named column is missing, ...).
    #[error("{path}: {reason}")]
    Input {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A command-line value is invalid (e.g. an `--as-of` time that does not parse).
    #[error("{0}")]
    Usage(String),
    /// An invalid merge-engine configuration (`dtemporal merge --option ...`).
    #[error("invalid merge-engine options: {0}")]
    MergeOptions(#[from] crate::merge_options::MergeOptionsError),
    /// A plan a command built cannot be rendered.
    #[error("{0}")]
    Plan(#[from] crate::plan::PlanError),
    /// The timely runtime failed to start or a worker failed.
    #[error("timely: {0}")]
    Runtime(String),
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An [`Error::Input`] for `path`.
    pub fn input(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Input {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

//! The errors that stop a run (as opposed to rejected rows, which are reported and counted: see
//! [`crate::csv::RowError`]): [`Error`](enum@Error), and [`TableError`], what building or
//! running a plan of the Table API or of SQL refuses.

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

/// Everything the Table API and SQL statements can refuse, when a plan is built or run.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// A table name that is not registered.
    #[error("table '{name}' not found; registered tables: {registered}")]
    UnknownTable {
        /// The name asked for.
        name: String,
        /// The registered names, comma separated.
        registered: String,
    },
    /// A table or function registered twice.
    #[error("'{0}' is already registered")]
    AlreadyRegistered(String),
    /// An operation whose arguments do not fit its input; says which operation and why.
    #[error("{operation}: {source}")]
    Plan {
        /// The Table API operation (`select`, `group_by(..).select`, `temporal_join`...).
        operation: &'static str,
        /// What the planner refused.
        source: crate::plan::PlanError,
    },
    /// An invalid argument, not about the plan (a bad worker count...).
    #[error("{0}")]
    Invalid(String),
    /// A file that cannot be read or written, a bad timely argument, a worker failure.
    #[error(transparent)]
    Run(#[from] Error),
}

/// A copy of the error, for the next operation of a chain (the first error is the one
/// reported); a run error (not `Clone`) is copied as its message.
impl Clone for TableError {
    fn clone(&self) -> TableError {
        match self {
            TableError::UnknownTable { name, registered } => TableError::UnknownTable {
                name: name.clone(),
                registered: registered.clone(),
            },
            TableError::AlreadyRegistered(n) => TableError::AlreadyRegistered(n.clone()),
            TableError::Plan { operation, source } => TableError::Plan {
                operation,
                source: source.clone(),
            },
            TableError::Invalid(m) => TableError::Invalid(m.clone()),
            TableError::Run(e) => TableError::Invalid(e.to_string()),
        }
    }
}

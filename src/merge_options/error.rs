//! The errors of merge-engine options.

use thiserror::Error;

/// An invalid merge-engine configuration. Each message says what is wrong and lists the valid
/// choices.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MergeOptionsError {
    /// An option not of the form `KEY=VALUE`.
    #[error("malformed option {0:?}: expected KEY=VALUE, e.g. 'sequence.field'='ts' or sequence.field=ts")]
    Malformed(String),
    /// The same key given twice.
    #[error("option '{0}' is given more than once")]
    Duplicate(String),
    /// Both the Fluss and the Paimon engine keys are set.
    #[error("both 'table.merge-engine' and 'merge-engine' are set: use one of them")]
    TwoEngineKeys,
    /// An engine name that does not exist (for that key).
    #[error("unknown merge engine '{value}' for '{key}'; valid choices: {valid}")]
    UnknownEngine {
        /// `table.merge-engine` or `merge-engine`.
        key: String,
        /// The value given.
        value: String,
        /// The valid engine names.
        valid: String,
    },
    /// A key the chosen engine does not know.
    #[error("unknown option '{key}' for the {engine} merge engine; valid options: {valid}")]
    UnknownOption {
        /// The key given.
        key: String,
        /// The engine.
        engine: String,
        /// The valid keys.
        valid: String,
    },
    /// A value that is not one of the choices of its key.
    #[error("invalid value '{value}' for option '{key}'; valid choices: {valid}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// The valid values.
        valid: String,
    },
    /// `versioned` without its version column (Fluss's message).
    #[error("'table.merge-engine.versioned.ver-column' must be set for versioned merge engine.")]
    MissingVersionColumn,
    /// The version column is not in the header (Fluss's message).
    #[error("The version column '{column}' for versioned merge engine doesn't exist in schema. Columns: {columns}")]
    UnknownVersionColumn {
        /// The column named.
        column: String,
        /// The header's columns.
        columns: String,
    },
    /// The version column's declared type cannot be compared (Fluss's message).
    #[error("The version column '{column}' for versioned merge engine must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got {ty}.")]
    WrongVersionType {
        /// The column.
        column: String,
        /// Its declared type.
        ty: String,
    },
    /// `'table.delete.behavior' = 'allow'` on `first_row` / `versioned` (as Fluss refuses it).
    #[error("Table with '{engine}' merge engine does not support delete operations: 'table.delete.behavior' = 'allow' is refused; valid choices: ignore, disable (or 'dtemporal.honor-deletes' = 'true')")]
    DeletesNotSupported {
        /// The engine.
        engine: String,
    },
    /// An option names a column that is not in the header (or a key column not in the header).
    #[error("column '{column}' named by '{key}' doesn't exist; columns: {columns}")]
    UnknownColumn {
        /// The option (or `primary key`).
        key: String,
        /// The column named.
        column: String,
        /// The header's columns.
        columns: String,
    },
    /// A sequence column whose declared type cannot be compared.
    #[error("sequence column '{column}' must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got {ty}")]
    WrongSequenceType {
        /// The column.
        column: String,
        /// Its declared type.
        ty: String,
    },
    /// Options that contradict each other or the table (a key column aggregated, a column in two
    /// sequence groups, ...).
    #[error("{0}")]
    Conflict(String),
}

//! The two kinds of expression errors: [`ExprError`] when an expression is bound against a
//! schema (it does not type-check), [`EvalError`] when a bound expression is evaluated on a
//! row (the row is rejected and reported by the caller, never silently dropped).

use crate::repr::DataType;

/// An expression that cannot be bound: every message names the expression (as SQL text) and
/// says what is wrong, in the wording of Flink's planner (Calcite's validator) where it has one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// A column name that is not in the schema (Calcite: "Column 'x' not found in any table").
    #[error("Column '{name}' not found in any table, in '{expr}'; the columns are: {columns}")]
    UnknownColumn {
        /// The name asked for.
        name: String,
        /// The expression it appears in.
        expr: String,
        /// The columns there are, comma separated.
        columns: String,
    },
    /// A qualified or unqualified name that matches more than one column.
    #[error("Column '{name}' is ambiguous in '{expr}'; it matches: {candidates}")]
    AmbiguousColumn {
        /// The name asked for.
        name: String,
        /// The expression it appears in.
        expr: String,
        /// The columns it matches, comma separated.
        candidates: String,
    },
    /// A function that is neither built in nor registered (Calcite: "No match found for
    /// function signature ...").
    #[error("No match found for function '{name}' in '{expr}'{suggestions}")]
    UnknownFunction {
        /// The name called.
        name: String,
        /// The expression it appears in.
        expr: String,
        /// `"; did you mean: a, b"` when there are close names, else empty.
        suggestions: String,
    },
    /// Arguments whose types the function does not accept (Calcite: "Cannot apply '+' to
    /// arguments of type `'<VARCHAR(2147483647)> + <INTEGER>'`. Supported form(s): ...", with
    /// Flink's type names).
    #[error("Cannot apply '{func}' to arguments of type '{types}' in '{expr}'. Supported form(s): {supported}")]
    TypeMismatch {
        /// The function or operator.
        func: String,
        /// The argument types, as `<T1>, <T2>`.
        types: String,
        /// The expression.
        expr: String,
        /// The accepted forms, as `'<NUMERIC> + <NUMERIC>'`.
        supported: String,
    },
    /// A call with the wrong number of arguments.
    #[error("Invalid number of arguments to function '{func}' in '{expr}': expected {expected}, got {got}")]
    ArgumentCount {
        /// The function.
        func: String,
        /// The expression.
        expr: String,
        /// How many it takes (`"1"`, `"2 or 3"`, `"at least 1"`).
        expected: String,
        /// How many were given.
        got: usize,
    },
    /// A cast between types that Flink does not cast (Calcite: "Cast function cannot convert
    /// value of type INTEGER to type DATE").
    #[error("Cast function cannot convert value of type {from} to type {to} in '{expr}'")]
    InvalidCast {
        /// The source type.
        from: DataType,
        /// The target type.
        to: DataType,
        /// The expression.
        expr: String,
    },
    /// An aggregate call inside a scalar expression (a projection without GROUP BY, a filter,
    /// an aggregate's own argument).
    #[error("aggregate function not allowed here: '{aggregate}' in '{expr}'")]
    AggregateNotAllowed {
        /// The aggregate call.
        aggregate: String,
        /// The expression it appears in.
        expr: String,
    },
    /// `bind_aggregate` of an expression that is not an aggregate call.
    #[error("'{expr}' is not an aggregate function call")]
    NotAnAggregate {
        /// The expression.
        expr: String,
    },
    /// An argument that must be a constant or one of a set of words and is not (a LIKE escape
    /// of two characters, an unknown EXTRACT unit, a LISTAGG separator that is not a literal).
    #[error("Invalid argument in '{expr}': {reason}")]
    InvalidArgument {
        /// The expression.
        expr: String,
        /// What is wrong.
        reason: String,
    },
    /// A function name registered twice, or the name of a built-in.
    #[error("function '{name}' is already defined")]
    DuplicateFunction {
        /// The name.
        name: String,
    },
}

/// A bound expression that fails on one row. The caller rejects the row and reports it (with
/// the row's origin), as the CSV layer does with a cell that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// An integer `/` or `%` by zero (Flink throws `ArithmeticException`). DECIMAL division by
    /// zero is NULL and DOUBLE division is IEEE (inf or NaN), as in Flink.
    #[error("division by zero in '{expr}'")]
    DivisionByZero {
        /// The expression.
        expr: String,
    },
    /// A result that does not fit its type: integer arithmetic past the type's range (Flink
    /// wraps silently; we do not), or a DECIMAL past its precision (Flink gives NULL).
    #[error("numeric overflow in '{expr}': the result does not fit {ty}")]
    Overflow {
        /// The expression.
        expr: String,
        /// The result type.
        ty: DataType,
    },
    /// A `CAST` of a value that does not convert (`TRY_CAST` gives NULL instead).
    #[error("cannot cast '{value}' to {to}: {reason}")]
    InvalidCast {
        /// The value, as text.
        value: String,
        /// The target type.
        to: DataType,
        /// Why.
        reason: String,
    },
    /// A function argument outside the function's domain (a LIKE pattern with a bad escape, a
    /// time outside years 0000-9999).
    #[error("invalid argument in '{expr}': {reason}")]
    InvalidArgument {
        /// The expression.
        expr: String,
        /// What is wrong.
        reason: String,
    },
    /// A user-defined function reported an error.
    #[error("function '{name}' failed: {message}")]
    Udf {
        /// The function.
        name: String,
        /// Its message.
        message: String,
    },
}

/// What a function kernel reports; the call node adds the expression's text
/// ([`Fault::at`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Integer division by zero.
    DivisionByZero,
    /// A result past the range of the type.
    Overflow(DataType),
    /// A value that does not cast.
    Cast {
        value: String,
        to: DataType,
        reason: String,
    },
    /// An argument outside the domain.
    Argument(String),
}

impl Fault {
    /// The evaluation error of this fault in the expression `expr`.
    pub(crate) fn at(self, expr: &str) -> EvalError {
        match self {
            Fault::DivisionByZero => EvalError::DivisionByZero { expr: expr.into() },
            Fault::Overflow(ty) => EvalError::Overflow {
                expr: expr.into(),
                ty,
            },
            Fault::Cast { value, to, reason } => EvalError::InvalidCast { value, to, reason },
            Fault::Argument(reason) => EvalError::InvalidArgument {
                expr: expr.into(),
                reason,
            },
        }
    }
}

//! Table functions (UDTFs): functions that return zero or more rows per call, joined to the
//! row that called them (`LATERAL TABLE (f(..))`, `join_lateral(call("f", [..]))`).
//!
//! Flink's `TableFunction<T>`: an `eval` per call that emits rows with `collect`, an output
//! row type declared once (`@FunctionHint(output = @DataTypeHint("ROW<word STRING, length
//! INT>"))`) and argument types that calls are cast to implicitly, as for a scalar UDF. The
//! function must be deterministic: a retraction of an input row calls it again and retracts
//! the rows of that second call, which must be the rows the first call gave.

use std::fmt;
use std::sync::Arc;

use crate::repr::{DataType, Datum, Field, Row, RowRef, Schema};

use super::ast::Expr;
use super::bind::Binder;
use super::error::{EvalError, ExprError};
use super::registry::FunctionRegistry;
use super::scalar::ScalarExpr;

/// A user-defined table function (Flink's `TableFunction<Row>`): called once per input row
/// with its arguments, it emits zero or more rows of its declared [`output`] columns through
/// [`Collector::collect`]. Register it with
/// [`TableEnv::register_table_function`](crate::table::TableEnv::register_table_function).
///
/// Arguments arrive as datums of the declared [`arguments`] types (NULLs included: the
/// function decides what a NULL means; emitting nothing is Flink's usual answer). An `Err`
/// refuses the calling row: it is reported with its position and reason, and none of the
/// rows the call emitted before failing are kept. Emitted rows must have the declared
/// columns' types; a row with another number of columns refuses the calling row.
///
/// [`output`]: TableFunction::output
/// [`arguments`]: TableFunction::arguments
pub trait TableFunction: Send + Sync {
    /// The name it is called by (case-insensitive).
    fn name(&self) -> &str;
    /// The argument types, in order.
    fn arguments(&self) -> Vec<DataType>;
    /// The columns of the rows it emits (Flink's `@FunctionHint(output = ROW<..>)`).
    fn output(&self) -> Vec<Field>;
    /// Emits the rows of one call into `out`.
    fn eval(&self, args: &[Datum<'_>], out: &mut Collector<'_>) -> Result<(), String>;
}

/// Where a [`TableFunction`] emits its rows. Each collected row is packed once, after the
/// columns of the row that called the function: one allocation per emitted row.
pub struct Collector<'c> {
    prefix: RowRef<'c>,
    width: usize,
    rows: &'c mut Vec<Row>,
    error: Option<String>,
}

impl<'c> Collector<'c> {
    /// A collector that appends, to `rows`, `prefix` followed by each emitted row of `width`
    /// columns.
    pub fn new(prefix: RowRef<'c>, width: usize, rows: &'c mut Vec<Row>) -> Collector<'c> {
        Collector {
            prefix,
            width,
            rows,
            error: None,
        }
    }

    /// Emits one row (its datums in the order of the declared output columns).
    pub fn collect<'d>(&mut self, row: impl IntoIterator<Item = Datum<'d>>) {
        let mut out = Row::new();
        let mut packer = out.packer();
        packer.extend_by_row(self.prefix);
        let mut columns = 0;
        for datum in row {
            packer.push(datum);
            columns += 1;
        }
        if columns == self.width {
            self.rows.push(out);
        } else if self.error.is_none() {
            self.error = Some(format!(
                "it emitted a row of {columns} columns, but declares {} output columns",
                self.width
            ));
        }
    }
}

/// Calls `function` on `args`, appending the rows it emits (after `prefix`) to `rows`. On an
/// error nothing is appended, and the error names the function.
pub fn invoke_table_function(
    function: &dyn TableFunction,
    args: &[Datum<'_>],
    prefix: RowRef<'_>,
    width: usize,
    rows: &mut Vec<Row>,
) -> Result<(), EvalError> {
    let start = rows.len();
    let mut out = Collector::new(prefix, width, rows);
    let result = function.eval(args, &mut out);
    let failed = result.err().or(out.error.take());
    match failed {
        None => Ok(()),
        Some(message) => {
            rows.truncate(start);
            Err(EvalError::Udf {
                name: function.name().to_string(),
                message,
            })
        }
    }
}

/// A registered table function, comparable by identity (the same registration).
#[derive(Clone)]
pub struct TableFunctionRef(pub Arc<dyn TableFunction>);

impl PartialEq for TableFunctionRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for TableFunctionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.0.arguments().iter().map(|t| t.to_string()).collect();
        let output: Vec<String> = (self.0.output().iter())
            .map(|c| format!("{} {}", c.name, c.ty))
            .collect();
        write!(
            f,
            "{}({}) -> ROW<{}>",
            self.0.name(),
            args.join(", "),
            output.join(", ")
        )
    }
}

/// Binds a table-function call `f(args)` against `schema`: the function registered as `f`, and
/// its arguments cast to its declared types. Errors name the call: an unknown function (Flink:
/// "No match found for function signature"), a wrong number or types of arguments.
pub fn bind_table_call(
    call: &Expr,
    schema: &Schema,
    registry: &FunctionRegistry,
) -> Result<(TableFunctionRef, Vec<ScalarExpr>), ExprError> {
    let Expr::Call { func, args } = call.unaliased() else {
        return Err(ExprError::InvalidArgument {
            expr: call.to_string(),
            reason: "a table function is called as f(arguments)".into(),
        });
    };
    let Some(function) = registry.table(func) else {
        return Err(ExprError::UnknownFunction {
            name: func.clone(),
            expr: call.to_string(),
            suggestions: String::new(),
        });
    };
    let binder = Binder::new(schema, registry, call);
    let declared = function.arguments();
    let args = binder.udf_args(func, function.name(), &declared, args, call)?;
    Ok((TableFunctionRef(function.clone()), args))
}

/// The output columns of a table function as a schema: its declared columns, or `names` in
/// their place (`AS T(word, length)`: as many names as columns).
pub fn table_function_schema(
    name: &str,
    fields: Vec<Field>,
    names: Option<&[String]>,
) -> Result<Schema, ExprError> {
    let fields = match names {
        None => fields,
        Some(names) if names.len() == fields.len() => (fields.into_iter())
            .zip(names)
            .map(|(f, n)| Field::new(n.clone(), f.ty))
            .collect(),
        Some(names) => {
            return Err(ExprError::InvalidArgument {
                expr: name.to_string(),
                reason: format!(
                    "{} column aliases given, but the function has {} output columns",
                    names.len(),
                    fields.len()
                ),
            })
        }
    };
    Schema::new(fields).map_err(|e| ExprError::InvalidArgument {
        expr: name.to_string(),
        reason: e.to_string(),
    })
}

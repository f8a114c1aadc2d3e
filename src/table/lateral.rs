//! Table functions in the Table API (Flink's `joinLateral` / `leftOuterJoinLateral` with a
//! `TableFunction`): registering one, and reading a lateral call's column aliases. The plan of
//! the lateral join, a [`Correlate`](crate::plan::Correlate), is built by the lowering the SQL
//! binder shares (`plan::lower`).

use std::sync::Arc;

use crate::expr::{Expr, TableFunction};
use crate::repr::Datum;

use super::{TableEnv, TableError};

impl TableEnv {
    /// Registers a table function (UDTF) under its [`TableFunction::name`], callable in
    /// [`Table::join_lateral`](super::Table::join_lateral) and SQL's `LATERAL TABLE (f(..))`
    /// (Flink's `createTemporarySystemFunction("split", SplitFunction.class)`). Its name must
    /// not be a built-in's or another function's.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use differential_temporal::expr::{Collector, TableFunction};
    /// use differential_temporal::repr::{DataType, Datum, Field};
    /// use differential_temporal::table::TableEnv;
    ///
    /// /// Flink's `SplitFunction`: each word of a string with its length.
    /// struct Split;
    /// impl TableFunction for Split {
    ///     fn name(&self) -> &str { "split" }
    ///     fn arguments(&self) -> Vec<DataType> { vec![DataType::STRING] }
    ///     fn output(&self) -> Vec<Field> {
    ///         vec![Field::new("word", DataType::STRING.nullable()),
    ///              Field::new("length", DataType::Int.nullable())]
    ///     }
    ///     fn eval(&self, args: &[Datum<'_>], out: &mut Collector<'_>) -> Result<(), String> {
    ///         if let Datum::Str(s) = args[0] {
    ///             for word in s.split(' ') {
    ///                 out.collect([Datum::Str(word), Datum::Int(word.chars().count() as i64)]);
    ///             }
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// let env = TableEnv::new();
    /// env.register_table_function(Arc::new(Split)).unwrap();
    /// assert!(env.register_table_function(Arc::new(Split)).is_err());
    /// ```
    pub fn register_table_function(&self, udtf: Arc<dyn TableFunction>) -> Result<(), TableError> {
        self.register_with(|functions| functions.register_table(udtf))
    }
}

/// A lateral call and its column aliases: `call(..).as_columns(["word", "length"])` (Flink's
/// `call(..).as("word", "length")`) gives the call and the names; any other expression is the
/// call itself, without aliases.
pub(super) fn aliased_call(call: &Expr) -> (&Expr, Option<Vec<String>>) {
    if let Expr::Call { func, args } = call {
        if func == crate::expr::AS_COLUMNS {
            if let Some((inner, names)) = args.split_first() {
                let names: Option<Vec<String>> = (names.iter())
                    .map(|n| match n {
                        Expr::Literal(l) => match l.datum() {
                            Datum::Str(s) => Some(s.to_string()),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect();
                if let Some(names) = names {
                    return (inner, Some(names));
                }
            }
        }
    }
    (call, None)
}

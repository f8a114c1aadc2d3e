//! Expressions: what a projection, a filter or an aggregate computes over rows.
//!
//! An [`Expr`] is unbound: column names, literals and calls by name, as the Table API's DSL
//! ([`col`], [`lit`], methods on `Expr`) and the SQL front end build it. Binding it against a
//! [`Schema`](crate::repr::Schema) ([`bind_scalar`], [`bind_aggregate`]) resolves names, types
//! every node with Flink's rules, makes implicit casts explicit and rejects what does not
//! type-check with an [`ExprError`] naming the expression. A bound [`ScalarExpr`] is evaluated
//! on a row's datums by walking the tree ([`ScalarExpr::eval`]) or, faster, through the
//! closure tree [`ScalarExpr::compile`] builds once ([`CompiledExpr`]); computed strings go into
//! a reused [`RowArena`], so evaluation allocates nothing beyond its output.
//!
//! SQL's three-valued logic holds throughout: NULL in, NULL out, except IS \[NOT\] NULL,
//! IS \[NOT\] TRUE/FALSE, IS \[NOT\] DISTINCT FROM, COALESCE, IF, CASE, AND (FALSE AND NULL is
//! FALSE), OR (TRUE OR NULL is TRUE) and IN. A filter keeps a row when its predicate is TRUE.
//!
//! ```
//! use differential_temporal::expr::{bind_scalar, col, lit, FunctionRegistry, RowArena};
//! use differential_temporal::repr::{DataType, Datum, Schema};
//!
//! let schema = Schema::builder()
//!     .column("a", DataType::Int.not_null())
//!     .column("s", DataType::STRING.nullable())
//!     .build()
//!     .unwrap();
//! let registry = FunctionRegistry::new();
//! let e = bind_scalar(&col("a").add(lit(1)), &schema, &registry).unwrap();
//! let upper = bind_scalar(&col("s").upper(), &schema, &registry).unwrap().compile();
//! let arena = RowArena::new();
//! let row = [Datum::Int(41), Datum::Str("eur")];
//! assert_eq!(e.eval(&row, &arena), Ok(Datum::Int(42)));
//! assert_eq!(upper.eval(&row, &arena), Ok(Datum::Str("EUR")));
//! ```

pub mod aggregate;
mod arena;
mod ast;
mod bind;
mod compile;
mod dsl;
mod error;
pub mod func;
mod order;
mod registry;
mod scalar;
mod table_function;

#[cfg(test)]
mod tests;

pub use aggregate::{Accumulator, AggregateExpr, AggregateFunc, AggregateUdf, UdafAccumulator};
pub use arena::{ArenaString, RowArena};
pub use ast::{Expr, Literal};
pub(crate) use bind::coerce::common_type;
pub use bind::{bind_aggregate, bind_scalar};
pub(crate) use bind::{is_builtin, AGGREGATES};
pub use compile::CompiledExpr;
pub use dsl::{
    call, call_aggregate, col, count_star, lit, lit_decimal, null_of, try_lit_decimal, IntoLiteral,
    AS_COLUMNS,
};
pub use error::{EvalError, ExprError};
pub use func::ScalarFunc;
pub use order::SortExpr;
pub use registry::{FunctionRegistry, ScalarUdf, ScalarUdfFn};
pub use scalar::{ScalarExpr, ScalarKind};
pub use table_function::{
    bind_table_call, invoke_table_function, table_function_schema, Collector, TableFunction,
    TableFunctionRef,
};

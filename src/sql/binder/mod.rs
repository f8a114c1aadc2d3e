//! The binder: sqlparser's AST (as the [parser](super::parser) leaves it) onto the plan the
//! Table API builds, a [`RelExpr`](crate::plan::RelExpr), through the same lowering
//! (`plan::lower`), so SQL and the Table API agree by construction. Names are resolved in a
//! scope of the plan's columns; the tables, functions and options a query binds against are
//! read through a [`Catalog`]. One module a construct: the query and its `SELECT`, expressions,
//! regular, temporal, lateral and ASOF joins, window aggregations, OVER aggregates,
//! deduplication and Top-N, set operations, `ORDER BY` / `LIMIT`, and a `CREATE TABLE`'s
//! computed columns and watermark.

mod asof;
mod catalog;
mod computed;
mod dedup;
mod expr;
mod join;
mod lateral;
mod order;
mod over;
mod query;
mod scope;
mod set_op;
mod temporal;
mod watermark;
mod window;

pub use catalog::{Catalog, PlanOptions};
pub(crate) use computed::{declared_table, is_computed};
pub(crate) use query::Binder;
pub(crate) use watermark::with_rowtime;

//! The parser: SQL text onto [`Statement`]s, sqlparser's AST for queries and `INSERT INTO`
//! ([`FlinkDialect`]) and this crate's own types for the statements sqlparser does not read.
//! Every addition to sqlparser's grammar lives here, so a new syntax's home is one of:
//!
//! - a statement: the statement wrapper ([`parse`]), with `CREATE TABLE`'s column forms and
//!   options, the materialized-table statements, `CREATE [TEMPORARY] VIEW`, `SET`, `EXPLAIN`
//!   and `CREATE TEMPORAL TABLE FUNCTION`;
//! - a clause inside a query that sqlparser does not read: a token rewrite (`tokens::rewrite`)
//!   that brings it to a form sqlparser does, keeping every token's position (`ASOF JOIN`,
//!   `SESSION(TABLE t PARTITION BY k, ..)`), which the binder reads back;
//! - a literal of Flink's that is not SQL's: Flink's type names ([`data_type`]) and option
//!   durations ([`parse_duration`]).
//!
//! The parser also refuses a statement nested deeper than [`MAX_DEPTH`] levels, before it builds
//! the tree.

pub(super) mod asof;
pub(super) mod create_table;
mod depth;
mod dialect;
mod duration;
mod materialized;
mod parse;
pub(super) mod session;
mod tokens;
pub(super) mod types;

pub use create_table::{ColumnDef, ColumnKind, CreateTable, TableOption, Watermark};
pub(crate) use depth::on_statement_stack;
pub use depth::{MAX_DEPTH, STATEMENT_STACK};
pub use dialect::FlinkDialect;
pub(crate) use duration::parse_duration;
pub use materialized::{
    AlterMaterializedTable, CreateMaterializedTable, FreshnessClause, NewDefinition,
};
pub use parse::{parse, parse_with_text, Statement};
pub use types::{data_type, parse_columns};

//! Flink SQL: the statements of Flink's SQL client and `TableEnvironment.executeSql`, parsed
//! with `sqlparser` ([`FlinkDialect`] plus a wrapper for Flink's DDL, [`parse`]) and bound to
//! the plan the Table API builds, so SQL and the Table API mix (`TableEnv::execute_sql`,
//! `TableEnv::sql_query`, run by the [`session`](crate::session)) and agree by construction.
//! Two halves: the parser (`sql/parser/`: sqlparser and this crate's additions to its grammar,
//! the statements, token rewrites, type names and durations) and the binder (`sql/binder/`:
//! the AST onto a [`RelExpr`]), which reads the tables, functions and
//! options it binds against through a [`Catalog`]. The `WITH (..)` options of each connector are
//! `catalog/`'s.
//!
//! What is supported:
//! - `CREATE [TEMPORARY] TABLE t (col TYPE [NOT NULL], col TYPE METADATA [FROM 'k'] [VIRTUAL],
//!   col AS expr, pt AS PROCTIME(), WATERMARK FOR c AS c [- INTERVAL 'n' unit], PRIMARY KEY
//!   (..) NOT ENFORCED) WITH
//!   ('connector' = 'filesystem', 'path' = 'file.csv', 'format' = 'csv')`;
//!   `CREATE [TEMPORARY] VIEW v AS query`; `SET 'parallelism.default' = 'n'`; `EXPLAIN query`;
//!   `INSERT INTO t query`.
//! - Queries: `SELECT [DISTINCT]`, `WHERE`, `GROUP BY` columns and expressions, `HAVING`, aggregates with
//!   `DISTINCT` and `FILTER`, `CASE`, `CAST`/`TRY_CAST`, the scalar functions of
//!   [`crate::expr`]; `JOIN t FOR SYSTEM_TIME AS OF l.rowtime ON ..` (event-time temporal
//!   join; `AS OF l.proctime` a lookup join); regular joins `[INNER] JOIN`, `LEFT`, `RIGHT`,
//!   `FULL [OUTER] JOIN .. ON` and `FROM a, b WHERE ..`, with at least one equality; `UNION`, `INTERSECT`, `EXCEPT`
//!   (`ALL` or not); `ORDER BY .. LIMIT n` / `FETCH FIRST n ROWS ONLY` (a Top-N, `OFFSET`
//!   too), `ORDER BY` the ascending rowtime; `FROM l, LATERAL TABLE (f(l.time))` with a
//!   temporal table function; the `ROW_NUMBER() .. WHERE rn = 1` deduplication (or `QUALIFY
//!   rn = 1`); `TIMESTAMP_LTZ '..'` literals. Window aggregations: the window
//!   table-valued functions `TUMBLE`, `HOP`, `CUMULATE` (`TABLE t, DESCRIPTOR(ts), INTERVAL
//!   ..`, positional or named arguments) followed by `GROUP BY window_start, window_end, ..`,
//!   and the legacy `GROUP BY TUMBLE(ts, ..)` / `HOP(..)` with `TUMBLE_START` and so on.
//!   OVER aggregates: `agg(..) OVER (PARTITION BY .. ORDER BY rowtime ROWS|RANGE BETWEEN ..
//!   PRECEDING AND CURRENT ROW)` in the select list, or `OVER w` with `WINDOW w AS (..)`.
//!   Top-N: `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..) AS rn` in a subquery filtered by
//!   `rn <= N` outside it.
//! - **Extension of Flink's grammar**: `CREATE TEMPORAL TABLE FUNCTION f FOR history TIME
//!   time_column KEY key_column` registers a temporal table function, which Flink can only do
//!   in the Table API (`history.createTemporalTableFunction(time, key)`).
//!
//! ```
//! # use differential_temporal::table::tempfile_dir::Dir;
//! use differential_temporal::session::StatementResult;
//! use differential_temporal::table::TableEnv;
//!
//! let dir = Dir::new();
//! let rates = dir.write("rates.csv", "currency,rate,t\nEuro,114,2024-01-01 09:00:00\nEuro,116,2024-01-01 10:45:00\n");
//! let orders = dir.write("orders.csv", "amount,currency,t\n2,Euro,2024-01-01 10:15:00\n3,Euro,2024-01-01 10:52:00\n");
//! let env = TableEnv::new();
//! let script = format!("
//!     CREATE TABLE currency_rates (currency STRING, rate INT, t TIMESTAMP(3), WATERMARK FOR t AS t)
//!       WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv');
//!     CREATE TABLE orders (amount INT, currency STRING, t TIMESTAMP(3), WATERMARK FOR t AS t)
//!       WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
//!     CREATE TEMPORAL TABLE FUNCTION rates FOR currency_rates TIME t KEY currency;
//!     SELECT SUM(amount * rate) AS amount FROM orders, LATERAL TABLE (rates(t))
//!     WHERE rates.currency = orders.currency;");
//! let results = env.execute_sql(&script).unwrap();
//! let StatementResult::Rows(sum) = &results[3] else { panic!() };
//! assert_eq!(sum.rows_as_text(), vec!["576"]);
//! ```

mod binder;
mod error;
mod parser;
mod unsupported;

pub(crate) use binder::{declared_table, is_computed, with_rowtime, Binder};
pub use binder::{Catalog, PlanOptions};
pub use error::SqlError;
pub use parser::{
    data_type, parse, parse_columns, parse_with_text, AlterMaterializedTable, ColumnDef,
    ColumnKind, CreateMaterializedTable, CreateTable, FlinkDialect, FreshnessClause, NewDefinition,
    Statement, TableOption, Watermark, MAX_DEPTH, STATEMENT_STACK,
};
pub(crate) use parser::{on_statement_stack, parse_duration};

use crate::plan::RelExpr;

/// The plan of `text`, one query, bound over `catalog` (on a stack deep enough for
/// [`MAX_DEPTH`] levels of nesting): what `TableEnv::sql_query` wraps in a `Table`, and what
/// a materialized table's definition runs.
///
/// Errors: `text` does not parse, is not exactly one query, or does not bind.
pub(crate) fn query_plan(catalog: &dyn Catalog, text: &str) -> Result<RelExpr, SqlError> {
    match parse(text)?.as_slice() {
        [Statement::Query(q)] => on_statement_stack(|| Binder::new(catalog).query(q)),
        _ => Err(SqlError::Validation {
            line: 1,
            column: 1,
            message: "sql_query takes exactly one query (SELECT ...); use execute_sql for other statements".into(),
        }),
    }
}

//! Materialized tables (issue 14): the cases D01-D06 of `../shared/cases` row by row
//! (`materialized/cases.rs`, `materialized/lifecycle.rs`), and the warehouse: the seed page's
//! flow on a manual clock, reopening, corrupted files, processes sharing a warehouse
//! (`materialized/warehouse.rs`), refreshes killed with SIGKILL (`materialized/crash.rs`), and
//! CONTINUOUS refreshes over a monitored directory and a datagen table
//! (`materialized/continuous.rs`), hostile names, catalogs and files (`materialized/hostile.rs`).

use differential_temporal::session::StatementResult;
use differential_temporal::sql::SqlError;
use differential_temporal::table::TableEnv;

#[path = "materialized/cases.rs"]
mod cases;
#[path = "materialized/continuous.rs"]
mod continuous;
#[path = "materialized/crash.rs"]
mod crash;
#[path = "materialized/hostile.rs"]
mod hostile;
#[path = "materialized/lifecycle.rs"]
mod lifecycle;
#[path = "materialized/warehouse.rs"]
mod warehouse;

/// The message of a validation error (without its position).
fn message(e: SqlError) -> String {
    match e {
        SqlError::Validation { message, .. } | SqlError::Syntax { message, .. } => message,
        other => other.to_string(),
    }
}

/// The rows of a query, as CSV lines sorted.
fn rows(env: &TableEnv, sql: &str) -> Vec<String> {
    env.sql_query(sql)
        .unwrap()
        .execute()
        .unwrap()
        .rows_as_text()
}

/// The text a `DESCRIBE` / `SHOW` / `REFRESH` statement gives.
fn text(env: &TableEnv, sql: &str) -> String {
    match env.execute_sql(sql).unwrap().pop() {
        Some(StatementResult::Text(t)) => t,
        other => panic!("{sql}: {other:?}"),
    }
}

//! The session: SQL statements run against a [`TableEnv`](crate::table::TableEnv). It sits
//! above both the SQL front end ([`crate::sql`], which parses and binds over a
//! [`Catalog`](crate::sql::Catalog)) and the Table API ([`crate::table`], which holds the
//! catalog's state and runs plans), and routes each statement: `CREATE TABLE` to the
//! environment's catalog (`ddl`), materialized-table statements to their manager
//! (`mt_create`, `mt_lifecycle`, `mt_refresh`, `mt_continuous`, with their input positions
//! and Postgres feeds), queries to the binder and then to a run (`exec`, `live_query`).

mod exec;
mod live_query;
mod mt_continuous;
mod mt_create;
mod mt_lifecycle;
mod mt_positions;
mod mt_postgres;
mod mt_refresh;

pub use exec::StatementResult;
pub use live_query::LiveRound;

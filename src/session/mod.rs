//! The session: SQL statements run against a [`TableEnv`](crate::table::TableEnv). It sits
//! above both the SQL front end ([`crate::sql`], which parses and binds over a
//! [`Catalog`](crate::sql::Catalog)) and the Table API ([`crate::table`], which holds the
//! catalog's state and runs plans), and routes each statement (`exec`): `CREATE TABLE` and
//! `DESCRIBE` to the catalog (`catalog/`), the materialized-table statements to their
//! manager ([`crate::materialized`]), views, temporal table functions and `SET` to the
//! environment, queries and `INSERT INTO` to the binder and then to a run. Besides: opening a
//! warehouse, whose recorded statements run again through the router (`warehouse`), and live
//! queries, which run in rounds over the manager's feeds (`live_query`).

mod exec;
mod live_query;
mod warehouse;

pub use exec::StatementResult;
pub use live_query::LiveRound;

//! The catalog's statements: `DESCRIBE`'s columns ([`describe`]) and `CREATE TABLE` onto a
//! registered table ([`create_table`]: the
//! columns a table reads, its primary key and watermark, its computed columns bound by the
//! binder), and the connectors and formats with their `WITH (..)` options, each checked with
//! an error at the option it names: `filesystem` with `csv` and `debezium-json`
//! (`connector`), `datagen`, `nexmark`, `postgres-cdc`, and a table's merge engine
//! (`merge_engine`).
//!
//! It sits above the Table API ([`crate::table`], whose `TableEnv` holds the catalog's state:
//! the registered tables, sinks and sources) and the SQL front end ([`crate::sql`], whose
//! parser leaves a [`CreateTable`](crate::sql::CreateTable)); the session routes `CREATE
//! TABLE` here.

mod connector;
mod create_table;
mod datagen;
mod describe;
mod merge_engine;
mod nexmark;
mod postgres_cdc;

#[cfg(test)]
mod datagen_tests;

pub(crate) use create_table::create_table;
pub(crate) use describe::describe;

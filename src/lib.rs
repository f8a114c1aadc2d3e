//! differential-temporal: Flink-style versioned tables, deduplication, event-time temporal joins
//! and merge engines over timely / differential dataflow, with a CSV layer and a command-line tool.
#![forbid(missing_docs)]

pub(crate) mod catalog;
pub mod cli;
pub mod csv;
pub mod error;
pub mod expr;
pub mod io;
pub mod materialized;
pub mod merge_engine;
pub mod merge_options;
pub mod plan;
pub mod progress;
pub mod render;
pub mod repr;
pub mod row;
pub mod run;
pub mod session;
pub mod sql;
pub mod table;
pub mod tail;
pub mod warehouse;

pub use differential_temporal_operators as operators;

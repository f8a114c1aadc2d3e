//! Sources and sinks of typed rows: CSV files (or Debezium JSON change events, [`Format`]) read
//! into packed [`Row`](crate::repr::Row)s by a [`Schema`](crate::repr::Schema) ([`TypedSource`]), rows written back as CSV ([`CsvSink`]),
//! and Flink's printed tableau ([`Tableau`]); generated rows, Flink's `datagen` connector
//! ([`DatagenSource`]) and the Nexmark benchmark's events ([`NexmarkSource`]).
//!
//! This layer depends on [`crate::repr`] for values and on [`crate::csv`] for the file
//! mechanics (blocks, the record loop, row errors, the CSV writer), which it shares with the
//! command line's text rows.

pub(crate) mod append;
pub(crate) mod changes_file;
pub mod datagen;
mod debezium;
pub(crate) mod directory;
mod generated;
pub mod nexmark;
pub mod postgres;
mod sink;
mod source;
pub mod tableau;
#[cfg(test)]
mod tests;

pub use datagen::{
    DatagenBlocks, DatagenSource, FieldGenerator, Generator, DEFAULT_ROWS_PER_SECOND,
    DEFAULT_STRING_LENGTH,
};
pub use debezium::{write_debezium_json, DebeziumMetadata, DebeziumOptions};
pub use generated::Generated;
pub use nexmark::{NexmarkSource, NexmarkTable};
pub use sink::CsvSink;
pub use source::{Format, TypedSource};
pub use tableau::{Tableau, Widths};

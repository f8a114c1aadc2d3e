//! The CSV layer: reading append-only and changelog CSV files in parallel, reporting malformed
//! rows, and writing deterministic CSV outputs.

mod reject;
mod sink;
mod source;
mod split;
#[cfg(test)]
mod tests;

pub use reject::{Column, RowError};
pub use sink::{into_io, open_output, output_result, write_csv, OutputLine};
pub use source::{
    check_header, for_each_record, read_header, InputSpec, Record, Schema, OP_COLUMN,
};
pub use split::{open_blocks, open_input, open_version, Block, FileIdentity, Splitter};

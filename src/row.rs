//! The dynamic row of the CSV layer: one optional text cell per column.
//!
//! Cells pass through unchanged as text (so output cells equal input cells) unless a column is
//! used as a key, an event time or a version, where it is parsed. `None` is SQL NULL (an empty
//! CSV cell).

/// One cell: `None` is NULL.
pub type Cell = Option<String>;

/// A row: one cell per column, in the order of the file's header.
pub type Row = Vec<Cell>;

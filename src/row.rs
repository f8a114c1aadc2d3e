//! The dynamic row of the CSV layer: one optional text cell per column.
//!
//! Cells pass through unchanged as text (so output cells equal input cells) unless a column is
//! used as a key, an event time or a version, where it is parsed. `None` is SQL NULL (an empty
//! CSV cell).

/// One cell: `None` is NULL.
pub type Cell = Option<String>;

/// A row: one cell per column, in the order of the file's header.
pub type Row = Vec<Cell>;

/// A row with its event time and source sequence number: the value the commands hand to the
/// typed operators, so every output row can be printed unchanged and placed by its source
/// position.
///
/// Ordered by `(time, seq, row)`.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct TimedRow {
    /// The row's event time (0 when the command uses no time column).
    pub time: crate::repr::time::EventTime,
    /// The row's source sequence number (its line in the input).
    pub seq: crate::operators::Seq,
    /// The row's cells, unchanged.
    pub row: Row,
}

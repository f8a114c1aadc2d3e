//! The rows of the commands: packed [`Row`]s of text cells.
//!
//! The commands read files without declared types, so a cell passes through unchanged as text
//! (output cells equal input cells) unless a column is used as a key, an event time or a
//! version, where it is parsed. A *text row* is a [`Row`] of the relational core whose datums
//! are all [`Datum::Str`] or [`Datum::Null`] (an empty CSV cell is NULL): one allocation per
//! row (none for a row of up to 24 packed bytes), not one per cell, and a clone is a `memcpy`.
//!
//! ```
//! use differential_temporal::row::{pack_cells, TextCells};
//!
//! let row = pack_cells([Some("EUR"), None, Some("114")]);
//! assert_eq!(row.cell(0), Some("EUR"));
//! assert_eq!(row.cell(1), None);
//! assert_eq!(row.cells().collect::<Vec<_>>(), vec![Some("EUR"), None, Some("114")]);
//! ```

use std::cmp::Ordering;

pub use crate::repr::Row;
use crate::repr::{Datum, DatumIter};

/// A text row of these cells (`None` is NULL).
pub fn pack_cells<'a>(cells: impl IntoIterator<Item = Option<&'a str>>) -> Row {
    Row::pack(cells.into_iter().map(text_datum))
}

/// A text row from comma-separated cells, an empty cell NULL (`"EUR,,114"`): the tests'
/// shorthand.
#[cfg(test)]
pub(crate) fn csv_row(cells: &str) -> Row {
    pack_cells(cells.split(',').map(|c| (!c.is_empty()).then_some(c)))
}

/// The datum of a text cell: `Str`, or `Null` for `None`.
pub fn text_datum(cell: Option<&str>) -> Datum<'_> {
    cell.map_or(Datum::Null, Datum::Str)
}

/// Reading a text row's cells.
pub trait TextCells {
    /// The cells, in column order (`None` is NULL).
    fn cells(&self) -> Cells<'_>;

    /// Cell `i` (decodes the cells before it); `None` if it is NULL or past the end.
    fn cell(&self, i: usize) -> Option<&str> {
        self.column(i).flatten()
    }

    /// Cell `i` (decodes the cells before it): `Some(None)` if it is NULL, `None` if the row
    /// has no column `i`.
    fn column(&self, i: usize) -> Option<Option<&str>> {
        self.cells().nth(i)
    }

    /// The order of the text cells: cell by cell, NULL first, text by its bytes, a prefix
    /// first; the order of `Vec<Option<String>>`, in which the commands place lines that
    /// share a source position. (A [`Row`]'s own `Ord` compares packed bytes, which puts a
    /// short string before a long one.)
    fn cmp_cells(&self, other: &Self) -> Ordering {
        self.cells().cmp(other.cells())
    }
}

impl TextCells for Row {
    fn cells(&self) -> Cells<'_> {
        Cells(self.iter())
    }
}

/// The cells of a text row ([`TextCells::cells`]).
#[derive(Clone)]
pub struct Cells<'a>(DatumIter<'a>);

impl<'a> Iterator for Cells<'a> {
    type Item = Option<&'a str>;

    #[inline]
    fn next(&mut self) -> Option<Option<&'a str>> {
        // A text row holds STRING and NULL datums only (module docs).
        self.0.next().map(|d| match d {
            Datum::Str(s) => Some(s),
            _ => None,
        })
    }
}

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
    /// The row's text cells, unchanged.
    pub row: Row,
}

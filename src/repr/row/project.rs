//! Projection of packed rows by copying bytes: a key or a few value columns cut out of a row
//! without decoding their datums and encoding them again.

use std::ops::Range;

use super::{decode, Row, RowRef};

/// A reusable buffer of the byte spans of a row's leading columns, from which rows of chosen
/// columns are copied ([`LocatedRow::project`]).
///
/// Locating a column reads only its tag and length; projecting copies its encoded bytes. A
/// GROUP BY's key and the columns its aggregates read are cut out of each input row this way.
///
/// ```
/// use differential_temporal::repr::{ColumnSpans, Datum, Row};
///
/// let mut spans = ColumnSpans::new();
/// let row = Row::pack([Datum::Int(7), Datum::Str("EUR"), Datum::Null]);
/// let located = spans.locate(&row, 3);
/// assert_eq!(located.project(&[2, 0]), Row::pack([Datum::Null, Datum::Int(7)]));
/// assert_eq!(located.project(&[]), Row::new());
/// ```
#[derive(Default)]
pub struct ColumnSpans {
    spans: Vec<Range<usize>>,
}

impl ColumnSpans {
    /// An empty buffer.
    pub fn new() -> ColumnSpans {
        ColumnSpans::default()
    }

    /// The spans of the first `n` columns of `row` (all of them if it has fewer; see
    /// [`prefix_len`](super::prefix_len)).
    pub fn locate<'a>(&'a mut self, row: &'a Row, n: usize) -> LocatedRow<'a> {
        let bytes = row.as_bytes();
        self.spans.clear();
        let mut at = 0;
        while self.spans.len() < n {
            let Some(&tag) = bytes.get(at) else { break };
            let (_, len) = decode(tag, &bytes[at + 1..]);
            self.spans.push(at..at + 1 + len);
            at += 1 + len;
        }
        LocatedRow {
            bytes,
            spans: &self.spans,
        }
    }
}

/// A row with its leading columns located (from [`ColumnSpans::locate`]).
pub struct LocatedRow<'a> {
    bytes: &'a [u8],
    spans: &'a [Range<usize>],
}

impl LocatedRow<'_> {
    /// The row of `columns`, in that order (a column may repeat): at most one allocation, of
    /// the projected row's exact size.
    ///
    /// # Panics
    ///
    /// When a column was not located (past the row's end or the `n` it was located with).
    pub fn project(&self, columns: &[usize]) -> Row {
        let size = columns.iter().map(|&c| self.spans[c].len()).sum();
        let mut row = Row::with_capacity(size);
        let mut packer = row.packer();
        for &c in columns {
            packer.extend_by_row(RowRef::from_packed(&self.bytes[self.spans[c].clone()]));
        }
        row
    }
}

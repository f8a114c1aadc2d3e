//! Projection of packed rows by copying bytes: a key or a few value columns cut out of a row
//! without decoding their datums and encoding them again.

use std::hash::Hasher;
use std::ops::Range;

use smallvec::SmallVec;

use super::{payload_len, Row, RowRef};

/// The byte spans of a row's leading columns (held inline up to eight columns: a buffer made
/// per row costs no allocation), from which rows of chosen columns are copied
/// ([`LocatedRow::project`]), hashed and compared.
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
    spans: SmallVec<[Range<usize>; 8]>,
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
            let len = payload_len(tag, &bytes[at + 1..]);
            self.spans.push(at..at + 1 + len);
            at += 1 + len;
        }
        LocatedRow {
            bytes,
            spans: &self.spans,
        }
    }
}

/// The byte span of the consecutive columns `columns` of `row` (empty where the row ends
/// before them): a key of consecutive columns is one slice of the row, hashed and compared
/// in place, whose bytes are the key row's.
///
/// ```
/// use differential_temporal::repr::{column_range_span, Datum, Row};
///
/// let row = Row::pack([Datum::Int(7), Datum::Str("EUR"), Datum::Null]);
/// let span = column_range_span(&row, 1..3);
/// assert_eq!(&row.as_bytes()[span], Row::pack([Datum::Str("EUR"), Datum::Null]).as_bytes());
/// ```
pub fn column_range_span(row: &Row, columns: Range<usize>) -> Range<usize> {
    let bytes = row.as_bytes();
    let (mut at, mut start) = (0, None);
    for column in 0..columns.end {
        if column == columns.start {
            start = Some(at);
        }
        let Some(&tag) = bytes.get(at) else { break };
        at += 1 + payload_len(tag, &bytes[at + 1..]);
    }
    start.unwrap_or(at)..at
}

/// A row with its leading columns located (from [`ColumnSpans::locate`]).
pub struct LocatedRow<'a> {
    bytes: &'a [u8],
    spans: &'a [Range<usize>],
}

impl<'a> LocatedRow<'a> {
    /// The consecutive located `columns` as one packed slice of the row, copied with
    /// [`RowPacker::extend_by_row`](super::RowPacker::extend_by_row) (a join's output row is
    /// assembled from such runs of its two input rows).
    ///
    /// # Panics
    ///
    /// When a column of a non-empty range was not located.
    pub fn columns(&self, columns: Range<usize>) -> RowRef<'a> {
        match columns.is_empty() {
            true => RowRef::from_packed(&[]),
            false => {
                let span = self.spans[columns.start].start..self.spans[columns.end - 1].end;
                RowRef::from_packed(&self.bytes[span])
            }
        }
    }

    /// The columns from `from` to the row's end as one packed slice: only the first `from`
    /// columns need be located (none for the whole row).
    ///
    /// ```
    /// use differential_temporal::repr::{ColumnSpans, Datum, Row};
    ///
    /// let row = Row::pack([Datum::Int(7), Datum::Str("EUR"), Datum::Null]);
    /// let mut spans = ColumnSpans::new();
    /// let rest = spans.locate(&row, 1).suffix(1);
    /// assert_eq!(rest.as_bytes(), Row::pack([Datum::Str("EUR"), Datum::Null]).as_bytes());
    /// assert_eq!(spans.locate(&row, 0).suffix(0).as_bytes(), row.as_bytes());
    /// ```
    ///
    /// # Panics
    ///
    /// When fewer than `from` columns were located.
    pub fn suffix(&self, from: usize) -> RowRef<'a> {
        let start = match from {
            0 => 0,
            n => self.spans[n - 1].end,
        };
        RowRef::from_packed(&self.bytes[start..])
    }

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

    /// Feeds the encoded bytes of `columns` to `state`, one `write` per column: equal rows of
    /// those columns hash alike, whatever rows they are located in (a projected key row located
    /// whole hashes as the columns it was projected from).
    ///
    /// # Panics
    ///
    /// When a column was not located.
    pub fn hash_columns<H: Hasher>(&self, columns: impl IntoIterator<Item = usize>, state: &mut H) {
        for c in columns {
            state.write(&self.bytes[self.spans[c].clone()]);
        }
    }

    /// Whether [`project(columns)`](Self::project) would equal `row`, without building it.
    ///
    /// # Panics
    ///
    /// When a column was not located.
    pub fn columns_equal(&self, columns: &[usize], row: &Row) -> bool {
        let mut rest = row.as_bytes();
        for &c in columns {
            let bytes = &self.bytes[self.spans[c].clone()];
            match rest.strip_prefix(bytes) {
                Some(after) => rest = after,
                None => return false,
            }
        }
        rest.is_empty()
    }
}

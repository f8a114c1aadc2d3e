//! Random access to a row's columns through a reused buffer of decoded datums.

use super::{Datum, Row, RowRef};

/// How many leading columns of a row must be decoded to read `columns`: one past the largest
/// (0 for none); the `n` of [`DatumVec::borrow_prefix`].
///
/// ```
/// assert_eq!(differential_temporal::repr::prefix_len([3, 0, 1]), 4);
/// assert_eq!(differential_temporal::repr::prefix_len([]), 0);
/// ```
pub fn prefix_len(columns: impl IntoIterator<Item = usize>) -> usize {
    columns.into_iter().max().map_or(0, |c| c + 1)
}

/// A reusable buffer of decoded datums, for random access to a row's columns.
///
/// Unpacking a row into `&[Datum]` once lets an expression read any column in O(1). The
/// buffer's allocation is kept across rows, so unpacking costs no allocation after the first.
///
/// ```
/// use differential_temporal::repr::{Datum, DatumVec, Row};
///
/// let mut buffer = DatumVec::new();
/// let row = Row::pack([Datum::Int(1), Datum::Str("a")]);
/// let datums = buffer.borrow_with(&row);
/// assert_eq!(datums[1], Datum::Str("a"));
/// ```
#[derive(Default)]
pub struct DatumVec {
    buffer: Vec<Datum<'static>>,
}

impl DatumVec {
    /// An empty buffer.
    pub fn new() -> DatumVec {
        DatumVec::default()
    }

    /// The datums of `row`, decoded into the buffer.
    pub fn borrow_with<'a>(&'a mut self, row: &'a Row) -> DatumVecBorrow<'a> {
        self.borrow_with_ref(row.as_row_ref())
    }

    /// The datums of a borrowed row, decoded into the buffer.
    pub fn borrow_with_ref<'a>(&'a mut self, row: RowRef<'a>) -> DatumVecBorrow<'a> {
        self.borrow_with_all([row])
    }

    /// The first `n` datums of `row` (all of them if it has fewer): what an expression that
    /// reads only columns below `n` needs, without decoding the rest of the row.
    ///
    /// ```
    /// use differential_temporal::repr::{Datum, DatumVec, Row};
    ///
    /// let mut buffer = DatumVec::new();
    /// let row = Row::pack([Datum::Int(1), Datum::Str("a"), Datum::Null]);
    /// assert_eq!(&*buffer.borrow_prefix(&row, 2), &[Datum::Int(1), Datum::Str("a")]);
    /// assert!(buffer.borrow_prefix(&row, 0).is_empty());
    /// ```
    pub fn borrow_prefix<'a>(&'a mut self, row: &'a Row, n: usize) -> DatumVecBorrow<'a> {
        self.borrow_datums(row.iter().take(n))
    }

    /// The datums of several rows one after the other (a join's probe and build rows, read as
    /// the one row of the join's output schema).
    pub fn borrow_with_all<'a>(
        &'a mut self,
        rows: impl IntoIterator<Item = RowRef<'a>>,
    ) -> DatumVecBorrow<'a> {
        self.borrow_datums(rows.into_iter().flat_map(|row| row.iter()))
    }

    /// These datums, in the buffer.
    fn borrow_datums<'a>(
        &'a mut self,
        decoded: impl Iterator<Item = Datum<'a>>,
    ) -> DatumVecBorrow<'a> {
        let mut datums = relifetime(std::mem::take(&mut self.buffer));
        datums.extend(decoded);
        DatumVecBorrow {
            datums,
            home: &mut self.buffer,
        }
    }
}

/// The datums of one row in a [`DatumVec`]; the buffer is returned to it on drop.
pub struct DatumVecBorrow<'a> {
    datums: Vec<Datum<'a>>,
    home: &'a mut Vec<Datum<'static>>,
}

impl<'a> std::ops::Deref for DatumVecBorrow<'a> {
    type Target = [Datum<'a>];
    fn deref(&self) -> &[Datum<'a>] {
        &self.datums
    }
}

impl Drop for DatumVecBorrow<'_> {
    fn drop(&mut self) {
        *self.home = relifetime(std::mem::take(&mut self.datums));
    }
}

/// An emptied vector of datums with another lifetime, keeping its allocation: an in-place
/// collect of an empty iterator reuses the buffer (same size and alignment), so this is safe
/// code that costs no allocation.
fn relifetime<'b>(mut datums: Vec<Datum<'_>>) -> Vec<Datum<'b>> {
    datums.clear();
    datums.into_iter().map(|_| Datum::Null).collect()
}

#[cfg(test)]
impl DatumVec {
    /// The buffer's capacity (tests check it is reused).
    pub(crate) fn capacity(&self) -> usize {
        self.buffer.capacity()
    }

    /// Whether no row is decoded into the buffer.
    pub(crate) fn is_idle(&self) -> bool {
        self.buffer.is_empty()
    }
}

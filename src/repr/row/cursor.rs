//! Reading numeric columns of a packed row in place: a GROUP BY's integer key and the columns
//! its COUNT / SUM / AVG aggregates read, without decoding the other columns into datums.

use super::{payload_len, Row, DECIMAL128, DECIMAL64, INT16, INT32, INT64, INT8, NULL};

/// A column's value as far as exact arithmetic is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Number {
    /// SQL NULL (or a column past the row's end, as [`Row::get`] reads it: absent).
    Null,
    /// TINYINT .. BIGINT ([`Datum::Int`](super::Datum::Int)).
    Int(i64),
    /// A DECIMAL's unscaled value ([`Datum::Decimal`](super::Datum::Decimal)).
    Decimal(i128),
    /// Any other datum.
    Other,
}

/// Reads a row's columns, left to right, skipping the ones not asked for by their tag and
/// length alone (a fixed-width column costs one table-like match, a string one length read).
///
/// ```
/// use differential_temporal::repr::{ColumnCursor, Datum, Number, Row};
///
/// let row = Row::pack([Datum::Str("EUR"), Datum::Int(7), Datum::Null, Datum::Decimal(1230)]);
/// let mut cursor = ColumnCursor::new(&row);
/// assert_eq!(cursor.number(1), Number::Int(7));
/// assert_eq!(cursor.number(3), Number::Decimal(1230));
/// assert_eq!(cursor.number(5), Number::Null);
/// assert_eq!(cursor.number(0), Number::Other);
/// ```
pub struct ColumnCursor<'a> {
    /// The whole row.
    row: &'a [u8],
    /// The bytes from column `column` on.
    data: &'a [u8],
    column: usize,
}

impl<'a> ColumnCursor<'a> {
    /// A cursor at `row`'s first column.
    #[inline]
    pub fn new(row: &'a Row) -> ColumnCursor<'a> {
        ColumnCursor {
            row: row.as_bytes(),
            data: row.as_bytes(),
            column: 0,
        }
    }

    /// The value of `column`. Each call moves the cursor past the column it reads, so columns
    /// read in ascending order cost one walk of the row; a column before the cursor starts the
    /// walk again from the row's start.
    #[inline(always)]
    pub fn number(&mut self, column: usize) -> Number {
        if column < self.column {
            (self.data, self.column) = (self.row, 0);
        }
        while self.column < column {
            let Some((&tag, rest)) = self.data.split_first() else {
                return Number::Null;
            };
            self.data = &rest[payload_len(tag, rest)..];
            self.column += 1;
        }
        let Some((&tag, rest)) = self.data.split_first() else {
            return Number::Null;
        };
        let int = |n: usize| {
            let mut le = [0u8; 8];
            le[..n].copy_from_slice(&rest[..n]);
            // Sign-extend the narrow encodings.
            let shift = 64 - 8 * n as u32;
            (i64::from_le_bytes(le) << shift) >> shift
        };
        let (number, len) = match tag {
            NULL => (Number::Null, 0),
            INT8 => (Number::Int(int(1)), 1),
            INT16 => (Number::Int(int(2)), 2),
            INT32 => (Number::Int(int(4)), 4),
            INT64 => (Number::Int(int(8)), 8),
            DECIMAL64 => (Number::Decimal(int(8) as i128), 8),
            DECIMAL128 => {
                let v = i128::from_le_bytes(rest[..16].try_into().expect("well formed"));
                (Number::Decimal(v), 16)
            }
            _ => (Number::Other, payload_len(tag, rest)),
        };
        self.data = &rest[len..];
        self.column += 1;
        number
    }
}

//! Packing a short row of integers, millisecond timestamps and NULLs on the stack: what a GROUP
//! BY of an integer key with counting aggregates outputs, once or twice per input row, and what
//! a source of such rows makes of each.
//!
//! A [`RowPacker`](super::RowPacker) appends to the row's buffer, checking its capacity and
//! whether it is inline at each datum. An [`IntPacker`] writes into a fixed array instead: each
//! integer as a tag and a whole 8-byte word, the length then advanced by its narrowest encoding
//! (the bytes are those `push_int` writes), and the row made from the array in one move when it
//! fits inline.

use smallvec::SmallVec;

use super::{Row, INLINE_BYTES, INT16, INT32, INT64, INT8, NULL, TIMESTAMP_MILLIS};

/// Packs up to [`IntPacker::COLUMNS`] integers, timestamps of whole milliseconds and NULLs on
/// the stack, then makes the [`Row`]: each integer written as a tag and a whole 8-byte word, the
/// length advanced by its narrowest encoding (the bytes
/// [`RowPacker::push_int`](super::RowPacker::push_int) writes), and the row moved out of the
/// array once, without the capacity and inline checks a [`RowPacker`](super::RowPacker) makes
/// at each datum.
///
/// ```
/// use differential_temporal::repr::{Datum, IntPacker, Row};
///
/// let mut packer = IntPacker::new();
/// packer.push_int(7);
/// packer.push_null();
/// packer.push_int(-70_000);
/// let row = Row::pack([Datum::Int(7), Datum::Null, Datum::Int(-70_000)]);
/// assert_eq!(packer.finish(), row);
/// ```
pub struct IntPacker {
    bytes: [u8; IntPacker::COLUMNS * 9],
    len: usize,
}

impl Default for IntPacker {
    fn default() -> Self {
        IntPacker::new()
    }
}

impl IntPacker {
    /// How many datums a row packed here may hold (each at most a tag and 8 bytes).
    pub const COLUMNS: usize = 4;

    /// An empty row.
    #[inline(always)]
    pub fn new() -> IntPacker {
        IntPacker {
            bytes: [0; IntPacker::COLUMNS * 9],
            len: 0,
        }
    }

    /// Appends the integer `v` in its narrowest tag, as
    /// [`RowPacker::push_int`](super::RowPacker::push_int) does.
    ///
    /// # Panics
    ///
    /// When the row already holds [`COLUMNS`](Self::COLUMNS) datums of 9 bytes.
    #[inline(always)]
    pub fn push_int(&mut self, v: i64) {
        let (tag, width) = if v as i8 as i64 == v {
            (INT8, 1)
        } else if v as i16 as i64 == v {
            (INT16, 2)
        } else if v as i32 as i64 == v {
            (INT32, 4)
        } else {
            (INT64, 8)
        };
        self.put(tag, v.to_le_bytes(), width);
    }

    /// Appends the timestamp of `millis` milliseconds since the epoch and no further
    /// nanoseconds, as [`RowPacker::push`](super::RowPacker::push) appends
    /// `Datum::Timestamp(Ts { millis, nanos_of_milli: 0 })`.
    ///
    /// ```
    /// use differential_temporal::repr::{Datum, IntPacker, Row, Ts};
    ///
    /// let mut packer = IntPacker::new();
    /// packer.push_int(7);
    /// packer.push_timestamp_millis(1_700_000_000_000);
    /// let ts = Ts { millis: 1_700_000_000_000, nanos_of_milli: 0 };
    /// assert_eq!(packer.finish(), Row::pack([Datum::Int(7), Datum::Timestamp(ts)]));
    /// ```
    ///
    /// # Panics
    ///
    /// When the row already holds [`COLUMNS`](Self::COLUMNS) datums of 9 bytes.
    #[inline(always)]
    pub fn push_timestamp_millis(&mut self, millis: i64) {
        self.put(TIMESTAMP_MILLIS, millis.to_le_bytes(), 8);
    }

    /// Appends `tag` and the first `width` bytes of `word`.
    #[inline(always)]
    fn put(&mut self, tag: u8, word: [u8; 8], width: usize) {
        let at = self.len;
        self.bytes[at] = tag;
        // The whole word; the bytes past `width` are overwritten by the next datum or ignored.
        self.bytes[at + 1..at + 9].copy_from_slice(&word);
        self.len = at + 1 + width;
    }

    /// Appends NULL.
    ///
    /// # Panics
    ///
    /// When the row has no room left for a byte.
    #[inline(always)]
    pub fn push_null(&mut self) {
        self.bytes[self.len] = NULL;
        self.len += 1;
    }

    /// The row packed.
    #[inline(always)]
    pub fn finish(self) -> Row {
        let data = match self.len <= INLINE_BYTES {
            true => {
                let mut inline = [0; INLINE_BYTES];
                inline.copy_from_slice(&self.bytes[..INLINE_BYTES]);
                SmallVec::from_buf_and_len(inline, self.len)
            }
            false => SmallVec::from_slice(&self.bytes[..self.len]),
        };
        Row { data }
    }
}

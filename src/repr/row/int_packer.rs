//! Packing a short row of integers, millisecond timestamps and NULLs in registers: what a GROUP
//! BY of an integer key with counting aggregates outputs, once or twice per input row, and what
//! a source of such rows makes of each.
//!
//! A [`RowPacker`](super::RowPacker) appends to the row's buffer, checking its capacity and
//! whether it is inline at each datum. An [`IntPacker`] shifts each datum's bytes (its tag and
//! its narrowest encoding, the bytes `push_int` writes) into three integers instead, and makes
//! the row from them once: no byte is stored until the row is, so packing reads none back from
//! smaller stores still in flight, which the CPU cannot forward to a wider load (a stall of
//! tens of cycles: the packing of a GROUP BY's output rows was mostly that, by `perf annotate`,
//! when the datums were written into a byte array). The row's first move may still wait so,
//! once: the compiler stores it in 8-byte words and moves it in 16-byte ones.

use smallvec::SmallVec;

use super::{Row, INLINE_BYTES, INT16, INT32, INT64, INT8, NULL, TIMESTAMP_MILLIS};

/// Packs up to [`IntPacker::COLUMNS`] integers, timestamps of whole milliseconds and NULLs in
/// registers, then makes the [`Row`]: each datum's tag and narrowest encoding (the bytes
/// [`RowPacker::push_int`](super::RowPacker::push_int) writes) shifted into place, and the row
/// stored once, without the capacity and inline checks a [`RowPacker`](super::RowPacker) makes
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
    /// The row's bytes 0..16, 16..32 and 32..40, little-endian.
    low: u128,
    high: u128,
    top: u64,
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
            low: 0,
            high: 0,
            top: 0,
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

    /// Appends `tag` and the first `width` bytes (1 to 8) of `word`.
    #[inline(always)]
    fn put(&mut self, tag: u8, word: [u8; 8], width: usize) {
        assert!(
            self.len + 1 + width <= Self::COLUMNS * 9,
            "an IntPacker holds {} datums",
            Self::COLUMNS
        );
        let value = u64::from_le_bytes(word) & (u64::MAX >> (64 - 8 * width));
        self.shift_in(u128::from(tag) | u128::from(value) << 8, 1 + width);
    }

    /// Appends the `bytes` low bytes of `datum` (at most 9).
    #[inline(always)]
    fn shift_in(&mut self, datum: u128, bytes: usize) {
        // The row's bits from `at` are `datum`'s: each integer takes those that fall in it.
        let at = 8 * self.len as u32;
        self.low |= window(datum, at, 0);
        self.high |= window(datum, at, 128);
        self.top |= window(datum, at, 256) as u64;
        self.len += bytes;
    }

    /// Appends NULL.
    ///
    /// # Panics
    ///
    /// When the row has no room left for a byte.
    #[inline(always)]
    pub fn push_null(&mut self) {
        assert!(
            self.len < Self::COLUMNS * 9,
            "an IntPacker holds {} datums",
            Self::COLUMNS
        );
        self.shift_in(u128::from(NULL), 1);
    }

    /// The row packed.
    #[inline(always)]
    pub fn finish(self) -> Row {
        let mut bytes = [0; 40];
        bytes[..16].copy_from_slice(&self.low.to_le_bytes());
        bytes[16..32].copy_from_slice(&self.high.to_le_bytes());
        bytes[32..].copy_from_slice(&self.top.to_le_bytes());
        let data = match self.len <= INLINE_BYTES {
            true => {
                let mut inline = [0; INLINE_BYTES];
                inline.copy_from_slice(&bytes[..INLINE_BYTES]);
                SmallVec::from_buf_and_len(inline, self.len)
            }
            false => SmallVec::from_slice(&bytes[..self.len]),
        };
        Row { data }
    }
}

/// The bits from `base` of `datum` shifted left by `at` bits (zero where none fall there).
#[inline(always)]
fn window(datum: u128, at: u32, base: u32) -> u128 {
    match at.checked_sub(base) {
        Some(up) => datum.checked_shl(up).unwrap_or(0),
        None => datum.checked_shr(base - at).unwrap_or(0),
    }
}

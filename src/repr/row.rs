//! The packed row: one byte buffer per row, read through borrowed [`Datum`]s.
//!
//! A [`Row`] is a sequence of datums, each encoded as a one-byte tag followed by its payload
//! (little-endian). Integers, decimals and timestamps take the narrowest tag that holds their
//! value, so a small key row (an integer and a short string) fits in the 24 inline bytes and
//! costs no heap allocation; a larger row costs exactly one. Cloning a row is a `memcpy`.
//!
//! Types live in the [`Schema`](super::types::Schema), not in the row: a row holds tags only to
//! carry NULL and to decode. `Eq`, `Hash` and `Ord` compare the bytes, which is a total order
//! consistent with equality: what keys and arrangements need. `ORDER BY`, `MIN` and `MAX`
//! compare [`Datum`]s instead (see [`Datum::cmp`]), since byte order is not value order.
//!
//! ```
//! use differential_temporal::repr::{Datum, Row};
//!
//! let row = Row::pack([Datum::Int(7), Datum::Str("EUR"), Datum::Null]);
//! let datums: Vec<Datum> = row.iter().collect();
//! assert_eq!(datums, vec![Datum::Int(7), Datum::Str("EUR"), Datum::Null]);
//! assert_eq!(row.get(1), Some(Datum::Str("EUR")));
//! ```

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smallvec::SmallVec;

use super::time::Ts;

/// How many bytes a row holds without a heap allocation.
pub const INLINE_BYTES: usize = 24;

/// One value of a row, borrowed from the row's bytes.
///
/// The SQL type of a datum comes from the schema: `Int` carries TINYINT to BIGINT, `Float`
/// FLOAT and DOUBLE, `Decimal` the unscaled value of a DECIMAL(p, s) (the scale is the
/// column's), `Timestamp` both TIMESTAMP(p) and TIMESTAMP_LTZ(p), `Str` CHAR, VARCHAR and
/// STRING, `Bytes` BINARY, VARBINARY and BYTES.
#[derive(Clone, Copy, Debug)]
pub enum Datum<'a> {
    /// SQL NULL.
    Null,
    /// BOOLEAN.
    Bool(bool),
    /// TINYINT, SMALLINT, INT, BIGINT.
    Int(i64),
    /// FLOAT, DOUBLE.
    Float(f64),
    /// DECIMAL(p, s): the unscaled value (`12.30` at scale 2 is `1230`).
    Decimal(i128),
    /// DATE: days since 1970-01-01.
    Date(i32),
    /// TIME(p): nanoseconds since midnight.
    Time(i64),
    /// TIMESTAMP(p) or TIMESTAMP_LTZ(p): Flink's `TimestampData`.
    Timestamp(Ts),
    /// INTERVAL DAY TO SECOND: milliseconds.
    IntervalDayTime(i64),
    /// INTERVAL YEAR TO MONTH: months.
    IntervalYearMonth(i32),
    /// CHAR, VARCHAR, STRING.
    Str(&'a str),
    /// BINARY, VARBINARY, BYTES.
    Bytes(&'a [u8]),
    /// ARRAY: its elements, packed.
    Array(RowRef<'a>),
    /// MAP: keys and values alternating, packed.
    Map(RowRef<'a>),
    /// ROW: its fields, packed.
    Row(RowRef<'a>),
}

impl Datum<'_> {
    /// Whether this is SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// A prefix of the value order ([`Datum::cmp`]) in one integer: `a < b` implies
    /// `a.order_prefix() <= b.order_prefix()`, so a sort compares prefixes first and decodes
    /// whole values only on a tie (a normalized key, as column stores sort). Numbers, dates,
    /// times and timestamps keep their leading 64 bits, strings and bytes their first 8 bytes;
    /// nested values only their type.
    ///
    /// ```
    /// use differential_temporal::repr::Datum;
    ///
    /// let (a, b) = (Datum::Str("EUR"), Datum::Str("EURO"));
    /// assert!(a < b && a.order_prefix() <= b.order_prefix());
    /// assert!(Datum::Null.order_prefix() < Datum::Int(i64::MIN).order_prefix());
    /// assert!(Datum::Int(-1).order_prefix() < Datum::Int(0).order_prefix());
    /// ```
    pub fn order_prefix(&self) -> u128 {
        /// An `i64` as a `u64` of the same order.
        fn signed(v: i64) -> u64 {
            (v as u64) ^ (1 << 63)
        }
        /// The first 8 bytes, big-endian, zero-padded: shorter is never larger.
        fn leading(bytes: &[u8]) -> u64 {
            let mut first = [0u8; 8];
            let n = bytes.len().min(8);
            first[..n].copy_from_slice(&bytes[..n]);
            u64::from_be_bytes(first)
        }
        let value = match *self {
            Datum::Null | Datum::Array(_) | Datum::Map(_) | Datum::Row(_) => 0,
            Datum::Bool(b) => b as u64,
            Datum::Int(v) | Datum::Time(v) | Datum::IntervalDayTime(v) => signed(v),
            Datum::Date(v) | Datum::IntervalYearMonth(v) => signed(v.into()),
            // IEEE total order: negative numbers reversed below the positive ones.
            Datum::Float(f) => {
                let bits = f.to_bits();
                match bits >> 63 {
                    1 => !bits,
                    _ => bits ^ (1 << 63),
                }
            }
            Datum::Decimal(v) => (((v as u128) ^ (1 << 127)) >> 64) as u64,
            Datum::Timestamp(ts) => signed(ts.millis),
            Datum::Str(s) => leading(s.as_bytes()),
            Datum::Bytes(b) => leading(b),
        };
        (u128::from(self.rank()) << 64) | u128::from(value)
    }

    fn rank(&self) -> u8 {
        match self {
            Datum::Null => 0,
            Datum::Bool(_) => 1,
            Datum::Int(_) => 2,
            Datum::Float(_) => 3,
            Datum::Decimal(_) => 4,
            Datum::Date(_) => 5,
            Datum::Time(_) => 6,
            Datum::Timestamp(_) => 7,
            Datum::IntervalDayTime(_) => 8,
            Datum::IntervalYearMonth(_) => 9,
            Datum::Str(_) => 10,
            Datum::Bytes(_) => 11,
            Datum::Array(_) => 12,
            Datum::Map(_) => 13,
            Datum::Row(_) => 14,
        }
    }
}

/// Value order, for `ORDER BY`, `MIN` and `MAX`: NULL first, then by value within a type
/// (numbers numerically, FLOAT/DOUBLE by IEEE total order so NaN is largest as in Java's
/// `Double.compare`, strings by bytes (UTF-8 code point order), nested values element by
/// element). Datums of one column have one type, so the order across types (by variant) only
/// makes the relation total. Decimals compare as unscaled integers: both must have the
/// column's scale.
impl Ord for Datum<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        use Datum::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (Float(a), Float(b)) => a.total_cmp(b),
            (Decimal(a), Decimal(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Time(a), Time(b)) => a.cmp(b),
            (Timestamp(a), Timestamp(b)) => a.cmp(b),
            (IntervalDayTime(a), IntervalDayTime(b)) => a.cmp(b),
            (IntervalYearMonth(a), IntervalYearMonth(b)) => a.cmp(b),
            (Str(a), Str(b)) => a.cmp(b),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (Array(a), Array(b)) | (Map(a), Map(b)) | (Row(a), Row(b)) => a.iter().cmp(b.iter()),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Datum<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Datum<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Datum<'_> {}

// Tags. Integers, decimals and timestamps have several, by the width their value needs.
const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT8: u8 = 3;
const INT16: u8 = 4;
const INT32: u8 = 5;
const INT64: u8 = 6;
const FLOAT: u8 = 7;
const DECIMAL64: u8 = 8;
const DECIMAL128: u8 = 9;
const DATE: u8 = 10;
const TIME: u8 = 11;
const TIMESTAMP_MILLIS: u8 = 12;
const TIMESTAMP_NANOS: u8 = 13;
const INTERVAL_DT: u8 = 14;
const INTERVAL_YM: u8 = 15;
const STR8: u8 = 16;
const STR32: u8 = 17;
const BYTES8: u8 = 18;
const BYTES32: u8 = 19;
const ARRAY: u8 = 20;
const MAP: u8 = 21;
const ROW: u8 = 22;

/// A packed row. See the [module documentation](self).
#[derive(Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Row {
    data: SmallVec<[u8; INLINE_BYTES]>,
}

/// A clone holds exactly the row's bytes. (A derived clone would collect them, and a spilled
/// `SmallVec` that grows by `reserve` rounds its capacity up to a power of two: up to twice
/// the memory for every copy a trace or a batch holds.)
impl Clone for Row {
    #[inline]
    fn clone(&self) -> Row {
        Row {
            data: SmallVec::from_slice(&self.data),
        }
    }

    fn clone_from(&mut self, source: &Row) {
        self.data.clear();
        self.data.extend_from_slice(&source.data);
    }
}

impl Row {
    /// The empty row (no columns).
    pub fn new() -> Row {
        Row::default()
    }

    /// The empty row with room for `bytes` packed bytes: one allocation of the right size when
    /// a row's size is known before it is packed (more than [`INLINE_BYTES`]), instead of the
    /// doublings of a growing buffer.
    pub fn with_capacity(bytes: usize) -> Row {
        Row {
            data: SmallVec::with_capacity(bytes),
        }
    }

    /// A row of the given datums.
    pub fn pack<'a, I: IntoIterator<Item = Datum<'a>>>(datums: I) -> Row {
        let mut row = Row::new();
        row.packer().extend(datums);
        row
    }

    /// A row holding a single datum (how literals and aggregate results are carried).
    pub fn pack_one(datum: Datum<'_>) -> Row {
        let mut row = Row::new();
        row.packer().push(datum);
        row
    }

    /// A packer that writes this row from the start (the row is cleared, its buffer kept).
    pub fn packer(&mut self) -> RowPacker<'_> {
        self.data.clear();
        RowPacker {
            data: &mut self.data,
        }
    }

    /// A borrowed view of this row.
    pub fn as_row_ref(&self) -> RowRef<'_> {
        RowRef { data: &self.data }
    }

    /// The row's datums, in column order.
    pub fn iter(&self) -> DatumIter<'_> {
        self.as_row_ref().iter()
    }

    /// The datum of column `index`, or `None` past the end. The columns before it are
    /// skipped by their tags' lengths, not decoded.
    #[inline]
    pub fn get(&self, index: usize) -> Option<Datum<'_>> {
        self.as_row_ref().get(index)
    }

    /// Drops the first `columns` columns (all of them if the row has fewer), in place: the
    /// later columns' bytes move to the front of the buffer, nothing is allocated. How a row
    /// sheds the leading columns a plan carried for its own use.
    ///
    /// ```
    /// use differential_temporal::repr::{Datum, Row};
    ///
    /// let mut row = Row::pack([Datum::Int(7), Datum::Str("EUR"), Datum::Null]);
    /// row.remove_leading(1);
    /// assert_eq!(row, Row::pack([Datum::Str("EUR"), Datum::Null]));
    /// row.remove_leading(5);
    /// assert!(row.is_empty());
    /// ```
    pub fn remove_leading(&mut self, columns: usize) {
        let mut at = 0;
        for _ in 0..columns {
            let Some(&tag) = self.data.get(at) else { break };
            at += 1 + payload_len(tag, &self.data[at + 1..]);
        }
        let len = self.data.len();
        self.data.copy_within(at.., 0);
        self.data.truncate(len - at);
    }

    /// The packed size in bytes.
    pub fn byte_len(&self) -> usize {
        self.data.len()
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Whether the row's bytes live on the heap (it is longer than [`INLINE_BYTES`]).
    pub fn spilled(&self) -> bool {
        self.data.spilled()
    }

    /// A row from its packed bytes, checking that they decode (used on untrusted input).
    pub fn from_bytes(bytes: &[u8]) -> Result<Row, DecodeError> {
        validate(bytes)?;
        Ok(Row {
            data: SmallVec::from_slice(bytes),
        })
    }

    /// The packed bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_row_ref().fmt(f)
    }
}

impl<'a> IntoIterator for &'a Row {
    type Item = Datum<'a>;
    type IntoIter = DatumIter<'a>;
    fn into_iter(self) -> DatumIter<'a> {
        self.iter()
    }
}

/// Serialised as one byte string (timely exchanges rows between processes with bincode).
impl Serialize for Row {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.data)
    }
}

impl<'de> Deserialize<'de> for Row {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Row, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Row;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a packed row as a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Row, E> {
                Row::from_bytes(bytes).map_err(E::custom)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Row, A::Error> {
                let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element::<u8>()? {
                    bytes.push(b);
                }
                self.visit_bytes(&bytes)
            }
        }
        deserializer.deserialize_bytes(Visitor)
    }
}

/// A borrowed packed row (or the packed elements of an array, map or nested row).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowRef<'a> {
    data: &'a [u8],
}

impl<'a> RowRef<'a> {
    /// A view of bytes a [`RowPacker`] wrote (a [`Row`]'s [`as_bytes`](Row::as_bytes)).
    pub(crate) fn from_packed(data: &'a [u8]) -> RowRef<'a> {
        RowRef { data }
    }

    /// The datums, in order.
    pub fn iter(&self) -> DatumIter<'a> {
        DatumIter { data: self.data }
    }

    /// The datum at `index`, or `None` past the end. The datums before it are skipped by
    /// their tags' lengths, not decoded.
    #[inline]
    pub fn get(&self, index: usize) -> Option<Datum<'a>> {
        let mut data = self.data;
        for _ in 0..index {
            let (&tag, rest) = data.split_first()?;
            data = &rest[payload_len(tag, rest)..];
        }
        DatumIter { data }.next()
    }

    /// An owned copy.
    pub fn to_row(&self) -> Row {
        Row {
            data: SmallVec::from_slice(self.data),
        }
    }

    /// The packed bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }
}

impl fmt::Debug for RowRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Ord for RowRef<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.data.cmp(other.data)
    }
}

impl PartialOrd for RowRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Decodes the datums of a packed row, front to back.
#[derive(Clone)]
pub struct DatumIter<'a> {
    data: &'a [u8],
}

impl<'a> Iterator for DatumIter<'a> {
    type Item = Datum<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<Datum<'a>> {
        let (&tag, rest) = self.data.split_first()?;
        // NULL, integers and short strings, the commonest datums of typed and text-heavy rows,
        // are decoded here so that a caller matching on them gets the value in registers; the
        // other tags take `decode` (out of line, its result passed through memory).
        if tag == NULL {
            self.data = rest;
            return Some(Datum::Null);
        }
        if (INT8..=INT64).contains(&tag) {
            let (value, len) = decode_int(tag, rest);
            self.data = &rest[len..];
            return Some(Datum::Int(value));
        }
        if tag == STR8 {
            let (&len, text) = rest.split_first().expect("a packed row is well formed");
            let (text, after) = text.split_at(len as usize);
            self.data = after;
            // SAFETY: as in `decode`: a row's string bytes are valid UTF-8.
            return Some(Datum::Str(unsafe { std::str::from_utf8_unchecked(text) }));
        }
        let (datum, len) = decode(tag, rest);
        self.data = &rest[len..];
        Some(datum)
    }
}

mod cursor;
mod decode;
mod int_packer;
mod packer;
mod project;
mod validate;

pub use cursor::{ColumnCursor, Number};
use decode::{decode, decode_int, payload_len};
pub use int_packer::IntPacker;
pub use packer::RowPacker;
pub use project::{column_range_span, ColumnSpans, LocatedRow};
use validate::validate;
pub use validate::DecodeError;

mod datum_vec;

pub use datum_vec::{prefix_len, DatumVec, DatumVecBorrow};

#[cfg(test)]
mod tests;

//! Writing a [`Row`](super::Row): datums appended at its end as a tag and a payload.
//!
//! Packing is on every hot path (a source row, a key, an aggregate's output), so each datum is
//! appended with one capacity check and fixed-size copies the compiler turns into moves,
//! instead of a `SmallVec` push per byte group (each a capacity check and a call to `memcpy`).

use smallvec::SmallVec;

use super::{
    Datum, ARRAY, BYTES32, BYTES8, DATE, DECIMAL128, DECIMAL64, FALSE, FLOAT, INLINE_BYTES, INT16,
    INT32, INT64, INT8, INTERVAL_DT, INTERVAL_YM, MAP, NULL, ROW, STR32, STR8, TIME,
    TIMESTAMP_MILLIS, TIMESTAMP_NANOS, TRUE,
};

/// A row's bytes.
type Bytes = SmallVec<[u8; INLINE_BYTES]>;

/// Writes datums at the end of a row. Obtained from [`Row::packer`](super::Row::packer).
pub struct RowPacker<'a> {
    pub(super) data: &'a mut Bytes,
}

impl RowPacker<'_> {
    /// Appends one datum.
    #[inline]
    pub fn push(&mut self, datum: Datum<'_>) {
        let d = &mut *self.data;
        match datum {
            Datum::Null => d.push(NULL),
            Datum::Bool(b) => d.push(if b { TRUE } else { FALSE }),
            Datum::Int(v) => put_int(d, v),
            Datum::Float(v) => put(d, FLOAT, &v.to_le_bytes()),
            Datum::Decimal(v) => match i64::try_from(v) {
                Ok(v) => put(d, DECIMAL64, &v.to_le_bytes()),
                Err(_) => put(d, DECIMAL128, &v.to_le_bytes()),
            },
            Datum::Date(v) => put(d, DATE, &v.to_le_bytes()),
            Datum::Time(v) => put(d, TIME, &v.to_le_bytes()),
            Datum::Timestamp(ts) => {
                if ts.nanos_of_milli == 0 {
                    put(d, TIMESTAMP_MILLIS, &ts.millis.to_le_bytes());
                } else {
                    let mut payload = [0; 12];
                    payload[..8].copy_from_slice(&ts.millis.to_le_bytes());
                    payload[8..].copy_from_slice(&ts.nanos_of_milli.to_le_bytes());
                    put(d, TIMESTAMP_NANOS, &payload);
                }
            }
            Datum::IntervalDayTime(v) => put(d, INTERVAL_DT, &v.to_le_bytes()),
            Datum::IntervalYearMonth(v) => put(d, INTERVAL_YM, &v.to_le_bytes()),
            Datum::Str(s) => push_bytes(d, STR8, STR32, s.as_bytes()),
            Datum::Bytes(b) => push_bytes(d, BYTES8, BYTES32, b),
            Datum::Array(r) => push_nested(d, ARRAY, r.data),
            Datum::Map(r) => push_nested(d, MAP, r.data),
            Datum::Row(r) => push_nested(d, ROW, r.data),
        }
    }

    /// Appends the integer `v`, as [`push`](Self::push) appends `Datum::Int(v)`, without
    /// building and matching a [`Datum`]: for callers that know they hold an integer (a count,
    /// an integer key), where `push` is a call and a dispatch per datum.
    #[inline(always)]
    pub fn push_int(&mut self, v: i64) {
        put_int(self.data, v);
    }

    /// Appends every datum of `datums`.
    pub fn extend<'b, I: IntoIterator<Item = Datum<'b>>>(&mut self, datums: I) {
        for datum in datums {
            self.push(datum);
        }
    }

    /// Appends all datums of a packed row by copying its bytes (no decoding).
    pub fn extend_by_row(&mut self, row: super::RowRef<'_>) {
        append(self.data, &[], row.data);
    }

    /// Appends an ARRAY whose elements `f` pushes.
    pub fn push_array(&mut self, f: impl FnOnce(&mut RowPacker<'_>)) {
        self.push_nested_with(ARRAY, f)
    }

    /// Appends a MAP; `f` pushes keys and values alternating.
    pub fn push_map(&mut self, f: impl FnOnce(&mut RowPacker<'_>)) {
        self.push_nested_with(MAP, f)
    }

    /// Appends a nested ROW whose fields `f` pushes.
    pub fn push_row(&mut self, f: impl FnOnce(&mut RowPacker<'_>)) {
        self.push_nested_with(ROW, f)
    }

    fn push_nested_with(&mut self, tag: u8, f: impl FnOnce(&mut RowPacker<'_>)) {
        /// Cuts the row back to before the nested value if `f` unwinds, so that a row caught
        /// after a panic still decodes (the decoder relies on it: see `decode`).
        struct Unfinished<'r>(&'r mut Bytes, usize);
        impl Drop for Unfinished<'_> {
            fn drop(&mut self) {
                self.0.truncate(self.1);
            }
        }
        let before = self.data.len();
        put(self.data, tag, &[0; 4]);
        let start = before + 1;
        let guard = Unfinished(&mut *self.data, before);
        f(&mut RowPacker {
            data: &mut *guard.0,
        });
        std::mem::forget(guard);
        let len = self.data.len() - start - 4;
        let len = u32::try_from(len).expect("a nested value under 4 GiB");
        self.data[start..start + 4].copy_from_slice(&len.to_le_bytes());
    }
}

/// Appends the integer `v` in its narrowest tag (the packing of an integer is canonical).
#[inline(always)]
fn put_int(d: &mut Bytes, v: i64) {
    if let Ok(v) = i8::try_from(v) {
        put(d, INT8, &v.to_le_bytes());
    } else if let Ok(v) = i16::try_from(v) {
        put(d, INT16, &v.to_le_bytes());
    } else if let Ok(v) = i32::try_from(v) {
        put(d, INT32, &v.to_le_bytes());
    } else {
        put(d, INT64, &v.to_le_bytes());
    }
}

/// Appends `tag` and `payload`: one capacity check, and a copy of a length known at compile
/// time wherever the payload is a fixed-size array.
#[inline(always)]
fn put(d: &mut Bytes, tag: u8, payload: &[u8]) {
    append(d, &[tag], payload);
}

/// Appends `head` then `tail` with one capacity check.
#[inline(always)]
fn append(d: &mut Bytes, head: &[u8], tail: &[u8]) {
    let len = d.len();
    let added = head.len() + tail.len();
    if d.capacity() - len < added {
        d.reserve(added);
    }
    // SAFETY: there is room for `added` more bytes after the first `len`; `head` and
    // `tail` are other buffers (the row is borrowed mutably here), written exactly into that
    // room, so every byte below the new length is initialised.
    unsafe {
        let end = d.as_mut_ptr().add(len);
        std::ptr::copy_nonoverlapping(head.as_ptr(), end, head.len());
        std::ptr::copy_nonoverlapping(tail.as_ptr(), end.add(head.len()), tail.len());
        d.set_len(len + added);
    }
}

/// Appends a string or byte string: its tag (`short` with a one-byte length, or `long` with a
/// four-byte one), its length and its bytes.
fn push_bytes(d: &mut Bytes, short: u8, long: u8, bytes: &[u8]) {
    match u8::try_from(bytes.len()) {
        Ok(len) => append(d, &[short, len], bytes),
        Err(_) => {
            let len = u32::try_from(bytes.len()).expect("a value under 4 GiB");
            let [a, b, c, e] = len.to_le_bytes();
            append(d, &[long, a, b, c, e], bytes)
        }
    }
}

/// Appends a nested value's tag, its four-byte length and its packed bytes.
fn push_nested(d: &mut Bytes, tag: u8, inner: &[u8]) {
    let len = u32::try_from(inner.len()).expect("a nested value under 4 GiB");
    let [a, b, c, e] = len.to_le_bytes();
    append(d, &[tag, a, b, c, e], inner);
}

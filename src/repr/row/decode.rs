//! Reading a packed datum: its tag's payload length, and the [`Datum`] it decodes to.

use super::{
    Datum, RowRef, ARRAY, BYTES32, BYTES8, DATE, DECIMAL128, DECIMAL64, FALSE, FLOAT, INT16, INT32,
    INT64, INT8, INTERVAL_DT, INTERVAL_YM, MAP, NULL, ROW, STR32, STR8, TIME, TIMESTAMP_MILLIS,
    TIMESTAMP_NANOS, TRUE,
};
use crate::repr::time::Ts;

#[inline]
pub(super) fn take<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes[..N].try_into().expect("a packed row is well formed")
}

#[inline]
fn length(tag: u8, bytes: &[u8], short: u8) -> (usize, usize) {
    if tag == short {
        (bytes[0] as usize, 1)
    } else {
        (u32::from_le_bytes(take(bytes)) as usize, 4)
    }
}

/// The payload length of the datum with `tag` whose payload starts `bytes`: what
/// [`decode`] would consume, found without decoding the value.
#[inline]
pub(super) fn payload_len(tag: u8, bytes: &[u8]) -> usize {
    match tag {
        NULL | FALSE | TRUE => 0,
        INT8 => 1,
        INT16 => 2,
        INT32 | DATE | INTERVAL_YM => 4,
        INT64 | FLOAT | DECIMAL64 | TIME | TIMESTAMP_MILLIS | INTERVAL_DT => 8,
        TIMESTAMP_NANOS => 12,
        DECIMAL128 => 16,
        STR8 | BYTES8 => 1 + bytes[0] as usize,
        STR32 | BYTES32 | ARRAY | MAP | ROW => 4 + u32::from_le_bytes(take(bytes)) as usize,
        _ => panic!("a packed row is well formed: unknown tag {tag}"),
    }
}

/// Decodes the integer with tag `INT8..=INT64` from `bytes` (what follows the tag): the value
/// and its payload length (1, 2, 4 or 8 bytes).
#[inline(always)]
pub(super) fn decode_int(tag: u8, bytes: &[u8]) -> (i64, usize) {
    match tag {
        INT8 => (i8::from_le_bytes(take(bytes)) as i64, 1),
        INT16 => (i16::from_le_bytes(take(bytes)) as i64, 2),
        INT32 => (i32::from_le_bytes(take(bytes)) as i64, 4),
        _ => (i64::from_le_bytes(take(bytes)), 8),
    }
}

/// Decodes the datum with `tag` from `bytes` (what follows the tag): the datum and its payload
/// length. Rows are built only by [`RowPacker`](super::RowPacker) or checked by
/// [`validate`](super::validate::validate), so the bytes are
/// well formed.
#[inline]
pub(super) fn decode(tag: u8, bytes: &[u8]) -> (Datum<'_>, usize) {
    match tag {
        NULL => (Datum::Null, 0),
        FALSE => (Datum::Bool(false), 0),
        TRUE => (Datum::Bool(true), 0),
        INT8..=INT64 => {
            let (value, len) = decode_int(tag, bytes);
            (Datum::Int(value), len)
        }
        FLOAT => (Datum::Float(f64::from_le_bytes(take(bytes))), 8),
        DECIMAL64 => (Datum::Decimal(i64::from_le_bytes(take(bytes)) as i128), 8),
        DECIMAL128 => (Datum::Decimal(i128::from_le_bytes(take(bytes))), 16),
        DATE => (Datum::Date(i32::from_le_bytes(take(bytes))), 4),
        TIME => (Datum::Time(i64::from_le_bytes(take(bytes))), 8),
        TIMESTAMP_MILLIS => (
            Datum::Timestamp(Ts {
                millis: i64::from_le_bytes(take(bytes)),
                nanos_of_milli: 0,
            }),
            8,
        ),
        TIMESTAMP_NANOS => {
            let millis = i64::from_le_bytes(take(bytes));
            let nanos = u32::from_le_bytes(take(&bytes[8..]));
            (
                Datum::Timestamp(Ts {
                    millis,
                    nanos_of_milli: nanos,
                }),
                12,
            )
        }
        INTERVAL_DT => (Datum::IntervalDayTime(i64::from_le_bytes(take(bytes))), 8),
        INTERVAL_YM => (Datum::IntervalYearMonth(i32::from_le_bytes(take(bytes))), 4),
        STR8 | STR32 => {
            let (len, head) = length(tag, bytes, STR8);
            let text = &bytes[head..head + len];
            // SAFETY: a row's string bytes come from a `&str` (`RowPacker::push`) or were checked
            // by `validate` (`Row::from_bytes`, the only way to make a row from raw bytes), and
            // a row is never mutated except through its packer; so they are valid UTF-8. Checking
            // again here cost a tenth of a sort of string rows.
            let text = unsafe { std::str::from_utf8_unchecked(text) };
            (Datum::Str(text), head + len)
        }
        BYTES8 | BYTES32 => {
            let (len, head) = length(tag, bytes, BYTES8);
            (Datum::Bytes(&bytes[head..head + len]), head + len)
        }
        ARRAY | MAP | ROW => {
            let len = u32::from_le_bytes(take(bytes)) as usize;
            let inner = RowRef {
                data: &bytes[4..4 + len],
            };
            let datum = match tag {
                ARRAY => Datum::Array(inner),
                MAP => Datum::Map(inner),
                _ => Datum::Row(inner),
            };
            (datum, 4 + len)
        }
        _ => panic!("a packed row is well formed: unknown tag {tag}"),
    }
}

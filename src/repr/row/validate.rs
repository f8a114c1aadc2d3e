//! Checking raw bytes before they become a [`Row`](super::Row)
//! ([`Row::from_bytes`](super::Row::from_bytes), deserialising): every tag known, every payload
//! complete, strings UTF-8, nested values valid, so that decoding a row never meets a malformed
//! datum.

use super::decode::take;
use super::{
    ARRAY, BYTES32, BYTES8, DATE, DECIMAL128, DECIMAL64, FALSE, FLOAT, INT16, INT32, INT64, INT8,
    INTERVAL_DT, INTERVAL_YM, MAP, NULL, ROW, STR32, STR8, TIME, TIMESTAMP_MILLIS, TIMESTAMP_NANOS,
    TRUE,
};

/// Bytes that are not a packed row.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid packed row at byte {offset}: {reason}")]
pub struct DecodeError {
    /// Where decoding failed.
    pub offset: usize,
    /// Why.
    pub reason: &'static str,
}

/// Checks that `bytes` decode as a packed row, without panicking.
pub(super) fn validate(bytes: &[u8]) -> Result<(), DecodeError> {
    let mut at = 0;
    while at < bytes.len() {
        let tag = bytes[at];
        let rest = &bytes[at + 1..];
        let fail = |reason| DecodeError { offset: at, reason };
        let need = |n: usize| {
            if rest.len() < n {
                Err(fail("truncated datum"))
            } else {
                Ok(n)
            }
        };
        let len = match tag {
            NULL | FALSE | TRUE => 0,
            INT8 => need(1)?,
            INT16 => need(2)?,
            INT32 | DATE | INTERVAL_YM => need(4)?,
            INT64 | FLOAT | DECIMAL64 | TIME | TIMESTAMP_MILLIS | INTERVAL_DT => need(8)?,
            TIMESTAMP_NANOS => {
                need(12)?;
                if u32::from_le_bytes(take(&rest[8..])) >= 1_000_000 {
                    return Err(fail("nanoseconds of a millisecond out of range"));
                }
                12
            }
            DECIMAL128 => need(16)?,
            STR8 | STR32 | BYTES8 | BYTES32 => {
                let short = tag == STR8 || tag == BYTES8;
                let head = need(if short { 1 } else { 4 })?;
                let len = if short {
                    rest[0] as usize
                } else {
                    u32::from_le_bytes(take(rest)) as usize
                };
                let total = need(head + len)?;
                let text = tag == STR8 || tag == STR32;
                if text && std::str::from_utf8(&rest[head..total]).is_err() {
                    return Err(fail("invalid UTF-8 in a string"));
                }
                total
            }
            ARRAY | MAP | ROW => {
                need(4)?;
                let len = u32::from_le_bytes(take(rest)) as usize;
                let total = need(4 + len)?;
                validate(&rest[4..total]).map_err(|e| DecodeError {
                    offset: at + 5 + e.offset,
                    reason: e.reason,
                })?;
                total
            }
            _ => return Err(fail("unknown tag")),
        };
        at += 1 + len;
    }
    Ok(())
}

//! Typed ordering columns: the version column of `versioned` and the `sequence.field` columns of
//! `deduplicate`, `partial-update` sequence groups and `aggregation`.
//!
//! A cell is a typed datum (an `INT`/`BIGINT` column holds [`Datum::Int`], a timestamp column
//! [`Datum::Timestamp`]: read as they are, parsed once at ingest) or, in a column of undeclared
//! type, text (a `STRING` datum) parsed into the column's ordering type on every read. Either
//! way it is compared as that type (an `INT` `10` is larger than `9`; `TIMESTAMP(9)` values
//! compare to the nanosecond), never as text.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, NaiveDateTime};
use smallvec::SmallVec;

use super::Row;
use crate::repr::{DataType, Datum};

/// The type of an ordering column: the types Fluss accepts for a version column (rule C1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderType {
    /// 32-bit signed integer.
    Int,
    /// 64-bit signed integer.
    BigInt,
    /// A timestamp without time zone, with fractional-second precision `p` (0..=9).
    Timestamp(u8),
    /// A timestamp with local time zone (an instant), with precision `p` (0..=9).
    TimestampLtz(u8),
}

/// The value of a parsed ordering cell: integers as themselves, timestamps as nanoseconds since
/// 1970-01-01T00:00:00 (UTC for `TIMESTAMP_LTZ`).
pub type OrderValue = i128;

/// The ordering key of a write: one entry per ordering column, compared left to right.
///
/// `None` is NULL, which sorts below every value. One column (a version, a single
/// `sequence.field`) is stored inline, so a key's state holds its order without a heap
/// allocation of its own (one cache miss less per write on a large table).
pub type OrderKey = SmallVec<[Option<OrderValue>; 1]>;

impl OrderType {
    /// The names accepted by [`FromStr`], for error messages.
    pub const NAMES: &'static str =
        "INT, BIGINT, TIMESTAMP, TIMESTAMP(p), TIMESTAMP_LTZ, TIMESTAMP_LTZ(p) (p in 0..=9)";

    /// The smallest value of the type: Fluss compares a NULL version as this value (rule C3).
    pub fn min_value(self) -> OrderValue {
        match self {
            OrderType::Int => i32::MIN as OrderValue,
            OrderType::BigInt => i64::MIN as OrderValue,
            OrderType::Timestamp(_) | OrderType::TimestampLtz(_) => OrderValue::MIN,
        }
    }

    /// Parses one cell of this type.
    ///
    /// Integers are decimal text. Timestamps are `YYYY-MM-DD[T| ]HH:MM:SS[.fffffffff]`; a
    /// `TIMESTAMP_LTZ` may end in `Z` or a `+hh:mm` offset (no suffix means UTC); a plain
    /// integer is read as milliseconds since the epoch (the CSV layer's event-time form).
    pub fn parse(self, text: &str) -> Result<OrderValue, String> {
        let text = text.trim();
        let bad = || format!("cannot parse {text:?} as {self}");
        match self {
            OrderType::Int => text.parse::<i32>().map(OrderValue::from).map_err(|_| bad()),
            OrderType::BigInt => text.parse::<i64>().map(OrderValue::from).map_err(|_| bad()),
            OrderType::Timestamp(_) | OrderType::TimestampLtz(_) => {
                if let Ok(millis) = text.parse::<i64>() {
                    return Ok(OrderValue::from(millis) * 1_000_000);
                }
                let normalised = text.replacen(' ', "T", 1);
                let nanos = |dt: NaiveDateTime| {
                    let utc = dt.and_utc();
                    OrderValue::from(utc.timestamp()) * 1_000_000_000
                        + OrderValue::from(utc.timestamp_subsec_nanos())
                };
                let naive = NaiveDateTime::parse_from_str(&normalised, "%Y-%m-%dT%H:%M:%S%.f");
                match (self, naive) {
                    (_, Ok(dt)) => Ok(nanos(dt)),
                    (OrderType::TimestampLtz(_), Err(_)) => {
                        DateTime::parse_from_rfc3339(&normalised)
                            .map(|dt| nanos(dt.naive_utc()))
                            .map_err(|_| bad())
                    }
                    _ => Err(bad()),
                }
            }
        }
    }
}

impl fmt::Display for OrderType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrderType::Int => f.write_str("INT"),
            OrderType::BigInt => f.write_str("BIGINT"),
            OrderType::Timestamp(p) => write!(f, "TIMESTAMP({p})"),
            OrderType::TimestampLtz(p) => write!(f, "TIMESTAMP_LTZ({p})"),
        }
    }
}

impl OrderType {
    /// The ordering type of a column declared with `ty`; `None` if values of `ty` cannot order
    /// writes (Fluss: a version column is INT, BIGINT, TIMESTAMP or TIMESTAMP_LTZ).
    pub fn of(ty: &DataType) -> Option<OrderType> {
        match ty {
            DataType::Int => Some(OrderType::Int),
            DataType::BigInt => Some(OrderType::BigInt),
            DataType::Timestamp(p) => Some(OrderType::Timestamp(*p)),
            DataType::TimestampLtz(p) => Some(OrderType::TimestampLtz(*p)),
            _ => None,
        }
    }

    /// The value of a non-NULL cell of this type: a typed integer or timestamp as it is, text
    /// parsed ([`parse`](Self::parse)).
    pub fn read(self, cell: Datum<'_>) -> Result<OrderValue, String> {
        match cell {
            Datum::Int(v) => Ok(OrderValue::from(v)),
            Datum::Timestamp(ts) => {
                Ok(OrderValue::from(ts.millis) * 1_000_000 + OrderValue::from(ts.nanos_of_milli))
            }
            Datum::Str(text) => self.parse(text),
            other => Err(format!("{other:?} is not a value of {self}")),
        }
    }
}

/// The error of parsing an [`OrderType`]: the text names no ordering type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAnOrderType(pub String);

impl fmt::Display for NotAnOrderType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not one of {}", self.0, OrderType::NAMES)
    }
}

impl std::error::Error for NotAnOrderType {}

impl FromStr for OrderType {
    type Err = NotAnOrderType;

    /// Parses `INT`, `INTEGER`, `BIGINT`, `TIMESTAMP`, `TIMESTAMP(p)`, `TIMESTAMP_LTZ`,
    /// `TIMESTAMP_LTZ(p)` (case-insensitive; `TIMESTAMP` alone has precision 6, as in Flink).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let upper = s.trim().to_ascii_uppercase();
        let err = || NotAnOrderType(s.trim().to_string());
        let precision = |rest: &str| -> Result<u8, NotAnOrderType> {
            if rest.is_empty() {
                return Ok(6);
            }
            let p = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .and_then(|p| p.trim().parse::<u8>().ok())
                .ok_or_else(err)?;
            if p <= 9 {
                Ok(p)
            } else {
                Err(err())
            }
        };
        match upper.as_str() {
            "INT" | "INTEGER" => Ok(OrderType::Int),
            "BIGINT" => Ok(OrderType::BigInt),
            _ => {
                if let Some(rest) = upper.strip_prefix("TIMESTAMP_LTZ") {
                    precision(rest).map(OrderType::TimestampLtz)
                } else if let Some(rest) = upper.strip_prefix("TIMESTAMP") {
                    precision(rest).map(OrderType::Timestamp)
                } else {
                    Err(err())
                }
            }
        }
    }
}

/// One ordering column: its position in the row and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderField {
    /// Position of the column in the row.
    pub column: usize,
    /// Name of the column (for messages).
    pub name: String,
    /// Its declared type.
    pub ty: OrderType,
}

/// Reads the ordering key of a row from the given columns (left to right; NULL is `None`).
///
/// An unparsable cell or a missing column is an error naming the column.
pub fn order_key(fields: &[OrderField], row: &Row) -> Result<OrderKey, String> {
    fields.iter().map(|f| order_value(f, row)).collect()
}

/// [`order_key`] over cells read by `cell(column)` (`None`: no such column): for a row that is
/// being built and is not packed yet.
pub(crate) fn order_key_by<'c>(
    fields: &[OrderField],
    cell: impl Fn(usize) -> Option<Datum<'c>>,
) -> Result<OrderKey, String> {
    fields
        .iter()
        .map(|f| parse_cell(f, cell(f.column)))
        .collect()
}

/// Reads one ordering column of a row (`None` for NULL); an error names the column.
pub(crate) fn order_value(field: &OrderField, row: &Row) -> Result<Option<OrderValue>, String> {
    parse_cell(field, row.get(field.column))
}

fn parse_cell(field: &OrderField, cell: Option<Datum<'_>>) -> Result<Option<OrderValue>, String> {
    match cell {
        None => Err(format!("row has no column '{}'", field.name)),
        Some(Datum::Null) => Ok(None),
        Some(cell) => field
            .ty
            .read(cell)
            .map(Some)
            .map_err(|e| format!("column '{}': {e}", field.name)),
    }
}

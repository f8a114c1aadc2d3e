//! The one text <-> datum module: a CSV cell or a SQL literal's text read as a value of a
//! [`DataType`] ([`parse_datum`]), and a value written back as text ([`format_datum`] for CSV
//! files, [`print_datum`] for Flink's printed results).
//!
//! What each type accepts (surrounding ASCII whitespace is ignored for every type but the
//! character strings, as Flink's CSV format trims numbers and booleans):
//!
//! | type | accepted text | written as |
//! |---|---|---|
//! | BOOLEAN | `true t yes y 1` / `false f no n 0`, any case (Flink's `CAST(.. AS BOOLEAN)`) | `true`/`false` (CSV), `TRUE`/`FALSE` (print) |
//! | TINYINT..BIGINT | `[+-]digits`, range checked per type (Java's `parseInt`) | decimal digits |
//! | FLOAT, DOUBLE | Rust's float syntax (`1.5`, `-2e10`, `NaN`, `Infinity`, `inf`) | Java's `Float/Double.toString`: `1.0`, `1.0E10` |
//! | CHAR(n), VARCHAR(n), STRING | any text, at most `n` characters | unchanged |
//! | BINARY(n), VARBINARY(n), BYTES | standard base64 with padding (Flink's CSV format), at most `n` bytes | base64 (CSV), `x'0a1b'` (print) |
//! | INTERVAL YEAR TO MONTH / DAY TO SECOND | an integer: months / milliseconds (Flink's CSV format) | the integer (CSV), `+1-02` / `+1 02:03:04.005` (print) |
//! | `ARRAY<T>` | the elements separated by `;` (Flink's CSV `csv.array-element-delimiter`), an empty element NULL | `[a, b]` (print) |
//!
//! Choices where Flink is lenient or unclear: Flink's CSV format reads any text other than
//! `true` as `false` (`Boolean.parseBoolean`); here a boolean must be one of CAST's words, or
//! the cell is an error. A CHAR/VARCHAR(n) value longer than `n` characters is an error: Flink's
//! CSV format keeps it whole (breaking the type) and its CAST cuts it to `n` characters (losing
//! data silently); neither is acceptable for a source whose bad rows must be reported. A shorter
//! CHAR(n) value is kept as written (no padding), as Flink's CSV format does.
//!
//! An empty CSV cell is NULL: that rule belongs to the CSV source, not to this module, so
//! `parse_datum("", STRING)` is the empty string.
//!
//! ```
//! use differential_temporal::repr::cast::{format_datum, parse_datum};
//! use differential_temporal::repr::{DataType, Datum, Row};
//!
//! let mut scratch = Vec::new();
//! let datum = parse_datum(" 42 ", &DataType::Int, &mut scratch).unwrap();
//! assert_eq!(datum, Datum::Int(42));
//! let row = Row::pack([datum]);
//!
//! let mut text = String::new();
//! format_datum(row.get(0).unwrap(), &DataType::Int, &mut text).unwrap();
//! assert_eq!(text, "42");
//!
//! let error = parse_datum("300", &DataType::TinyInt, &mut scratch).unwrap_err();
//! assert_eq!(error.to_string(), "cannot parse \"300\" as TINYINT: out of range -128..=127");
//! ```

use std::fmt::{self, Write};
use std::num::IntErrorKind;

use base64::Engine as _;

use super::row::{Datum, Row, RowRef};
use super::time;
use super::types::DataType;

mod float;
#[cfg(test)]
mod tests;

/// Text that is not a value of the type it was read as: the text, the type and why.
///
/// Displayed as `cannot parse "TEXT" as TYPE: REASON`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse {value:?} as {ty}: {reason}")]
pub struct CastError {
    /// The text that was read.
    pub value: String,
    /// The type it was read as.
    pub ty: DataType,
    /// What is wrong with it.
    pub reason: String,
}

impl CastError {
    fn new(value: &str, ty: &DataType, reason: impl Into<String>) -> CastError {
        CastError {
            value: value.to_string(),
            ty: ty.clone(),
            reason: reason.into(),
        }
    }
}

/// Reads `text` as a value of type `ty` (see the [module documentation](self) for the forms).
///
/// The datum borrows `text` (strings) or `scratch` (decoded bytes; cleared first), so a caller
/// that packs it into a [`Row`] right away allocates nothing: keep one `scratch`
/// buffer per reader. Errors: text that is not a value of the type, a value out of the type's
/// range or longer than its length, and types that have no text form here (ARRAY, MAP, ROW and
/// the NULL type).
pub fn parse_datum<'a>(
    text: &'a str,
    ty: &DataType,
    scratch: &'a mut Vec<u8>,
) -> Result<Datum<'a>, CastError> {
    let fail = |reason: &str| CastError::new(text, ty, reason);
    let trimmed = text.trim_ascii();
    match ty {
        DataType::Boolean => parse_bool(trimmed).ok_or_else(|| {
            fail("expected one of true, t, yes, y, 1, false, f, no, n, 0 (in any case)")
        }),
        DataType::TinyInt => parse_int(trimmed, i8::MIN.into(), i8::MAX.into(), text, ty),
        DataType::SmallInt => parse_int(trimmed, i16::MIN.into(), i16::MAX.into(), text, ty),
        DataType::Int => parse_int(trimmed, i32::MIN.into(), i32::MAX.into(), text, ty),
        DataType::BigInt => parse_int(trimmed, i64::MIN, i64::MAX, text, ty),
        DataType::IntervalYearMonth => {
            parse_int(trimmed, i32::MIN.into(), i32::MAX.into(), text, ty).map(|d| match d {
                Datum::Int(v) => Datum::IntervalYearMonth(v as i32),
                other => other,
            })
        }
        DataType::IntervalDayTime => {
            parse_int(trimmed, i64::MIN, i64::MAX, text, ty).map(|d| match d {
                Datum::Int(v) => Datum::IntervalDayTime(v),
                other => other,
            })
        }
        DataType::Float => trimmed
            .parse::<f32>()
            .map(|v| Datum::Float(f64::from(v)))
            .map_err(|_| fail("not a floating-point number")),
        DataType::Double => trimmed
            .parse::<f64>()
            .map(Datum::Float)
            .map_err(|_| fail("not a floating-point number")),
        DataType::Char(n) | DataType::Varchar(n) => {
            check_length(
                text.len(),
                || text.chars().count(),
                *n,
                "characters",
                text,
                ty,
            )?;
            Ok(Datum::Str(text))
        }
        DataType::Binary(n) | DataType::Varbinary(n) => {
            scratch.clear();
            base64::engine::general_purpose::STANDARD
                .decode_vec(trimmed, scratch)
                .map_err(|e| fail(&format!("not base64: {e}")))?;
            let bytes: &'a [u8] = scratch;
            check_length(bytes.len(), || bytes.len(), *n, "bytes", text, ty)?;
            Ok(Datum::Bytes(bytes))
        }
        DataType::Decimal { precision, scale } => {
            let to = super::decimal::DecimalType {
                precision: *precision,
                scale: *scale,
            };
            super::decimal::parse_decimal(trimmed, to)
                .map(Datum::Decimal)
                .map_err(|e| fail(&decimal_reason(e)))
        }
        DataType::Date => time::parse_date(trimmed)
            .map(Datum::Date)
            .map_err(|e| fail(&e.reason)),
        DataType::Time(p) => time::parse_time(trimmed, *p)
            .map(Datum::Time)
            .map_err(|e| fail(&e.reason)),
        DataType::Timestamp(p) => time::parse_timestamp(trimmed, *p)
            .map(Datum::Timestamp)
            .map_err(|e| fail(&e.reason)),
        // The session time zone is UTC (`table.local-time-zone` is not configurable yet).
        DataType::TimestampLtz(p) => time::parse_timestamp_ltz(trimmed, *p, 0)
            .map(Datum::Timestamp)
            .map_err(|e| fail(&e.reason)),
        DataType::Array(element) => parse_array(text, &element.data_type, scratch),
        DataType::Null | DataType::Map(..) | DataType::Row(_) => {
            Err(fail("this type has no text form here"))
        }
    }
}

/// An ARRAY cell: its elements separated by `;` (Flink's CSV format, whose
/// `csv.array-element-delimiter` defaults to `;`), each read as `element`, an empty element
/// NULL; packed into `scratch`.
fn parse_array<'a>(
    text: &'a str,
    element: &DataType,
    scratch: &'a mut Vec<u8>,
) -> Result<Datum<'a>, CastError> {
    let mut elements = Row::new();
    let mut packer = elements.packer();
    let mut element_scratch = Vec::new();
    for cell in text.split(';') {
        match cell {
            "" => packer.push(Datum::Null),
            cell => packer.push(parse_datum(cell, element, &mut element_scratch)?),
        }
    }
    scratch.clear();
    scratch.extend_from_slice(elements.as_bytes());
    Ok(Datum::Array(RowRef::from_packed(scratch)))
}

fn parse_bool(text: &str) -> Option<Datum<'static>> {
    const TRUE: [&str; 5] = ["true", "t", "yes", "y", "1"];
    const FALSE: [&str; 5] = ["false", "f", "no", "n", "0"];
    let is = |words: [&str; 5]| words.iter().any(|w| w.eq_ignore_ascii_case(text));
    if is(TRUE) {
        Some(Datum::Bool(true))
    } else if is(FALSE) {
        Some(Datum::Bool(false))
    } else {
        None
    }
}

fn parse_int(
    trimmed: &str,
    min: i64,
    max: i64,
    text: &str,
    ty: &DataType,
) -> Result<Datum<'static>, CastError> {
    let range = || format!("out of range {min}..={max}");
    match trimmed.parse::<i64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(Datum::Int(v)),
        Ok(_) => Err(CastError::new(text, ty, range())),
        Err(e) => match e.kind() {
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => {
                Err(CastError::new(text, ty, range()))
            }
            _ => Err(CastError::new(text, ty, "not an integer")),
        },
    }
}

/// Checks a length against the type's `n`; `count` is only called when `bytes` exceeds `n`
/// (a string of at most `n` bytes has at most `n` characters).
fn check_length(
    bytes: usize,
    count: impl FnOnce() -> usize,
    n: u32,
    unit: &str,
    text: &str,
    ty: &DataType,
) -> Result<(), CastError> {
    if bytes <= n as usize {
        return Ok(());
    }
    let len = count();
    if len <= n as usize {
        return Ok(());
    }
    Err(CastError::new(
        text,
        ty,
        format!("{len} {unit}, longer than the type's {n}"),
    ))
}

/// How a value is written: the two places Flink writes values as text differ for BOOLEAN,
/// binary strings and intervals.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Flink's CSV format (what [`parse_datum`] reads back).
    Csv,
    /// `CAST(x AS STRING)` while printing (`TableResult.print()`).
    Print,
}

/// Writes `datum`, a value of type `ty`, as a CSV cell: the form [`parse_datum`] reads back
/// (see the [module documentation](self)). NULL writes nothing (an empty cell).
///
/// The type gives what the datum does not carry: FLOAT vs DOUBLE digits, a DECIMAL's scale, a
/// TIME or TIMESTAMP's precision. Nested values (ARRAY, MAP, ROW) are written as Flink prints
/// them. Errors are `out`'s only.
pub fn format_datum(datum: Datum<'_>, ty: &DataType, out: &mut impl Write) -> fmt::Result {
    write_datum(datum, ty, Style::Csv, out)
}

/// Writes `datum`, a value of type `ty`, as Flink's `TableResult.print()` shows it (Flink's
/// `CAST(x AS STRING)` in its printing mode): `TRUE`/`FALSE`, bytes as `x'0a1b'`, intervals
/// as `+1-02` and `+1 02:03:04.005`, `[1, 2]`, `{k=v}`, `(1, a)`, nested NULL as `NULL`.
/// Everything else as [`format_datum`]. A top-level NULL writes nothing: the printer shows
/// `<NULL>` itself.
pub fn print_datum(datum: Datum<'_>, ty: &DataType, out: &mut impl Write) -> fmt::Result {
    write_datum(datum, ty, Style::Print, out)
}

fn write_datum(datum: Datum<'_>, ty: &DataType, style: Style, out: &mut impl Write) -> fmt::Result {
    match datum {
        Datum::Null => Ok(()),
        Datum::Bool(b) => out.write_str(match (b, style) {
            (true, Style::Csv) => "true",
            (false, Style::Csv) => "false",
            (true, Style::Print) => "TRUE",
            (false, Style::Print) => "FALSE",
        }),
        Datum::Int(v) => write!(out, "{v}"),
        Datum::Float(v) if *ty == DataType::Float => float::write_float(v, out),
        Datum::Float(v) => float::write_double(v, out),
        Datum::Str(s) => out.write_str(s),
        Datum::Bytes(b) => match style {
            Style::Csv => write_base64(b, out),
            Style::Print => {
                out.write_str("x'")?;
                for byte in b {
                    write!(out, "{byte:02x}")?;
                }
                out.write_char('\'')
            }
        },
        Datum::IntervalYearMonth(months) => match style {
            Style::Csv => write!(out, "{months}"),
            Style::Print => {
                let sign = if months < 0 { '-' } else { '+' };
                let m = i64::from(months).unsigned_abs();
                write!(out, "{sign}{}-{:02}", m / 12, m % 12)
            }
        },
        Datum::IntervalDayTime(millis) => match style {
            Style::Csv => write!(out, "{millis}"),
            Style::Print => {
                let sign = if millis < 0 { '-' } else { '+' };
                let ms = millis.unsigned_abs();
                let (s, ms) = (ms / 1000, ms % 1000);
                let (d, s) = (s / 86_400, s % 86_400);
                write!(
                    out,
                    "{sign}{d} {:02}:{:02}:{:02}.{ms:03}",
                    s / 3600,
                    s / 60 % 60,
                    s % 60
                )
            }
        },
        Datum::Array(elements) => {
            let element = match ty {
                DataType::Array(t) => &t.data_type,
                _ => &DataType::Null,
            };
            write_nested(elements.iter().map(|d| (d, element)), "[", "]", out)
        }
        Datum::Row(fields) => {
            let types: &[_] = match ty {
                DataType::Row(fields) => fields,
                _ => &[],
            };
            let ty_of = |i: usize| types.get(i).map_or(&DataType::Null, |f| &f.ty.data_type);
            write_nested(
                fields.iter().enumerate().map(|(i, d)| (d, ty_of(i))),
                "(",
                ")",
                out,
            )
        }
        Datum::Map(entries) => {
            let (k, v) = match ty {
                DataType::Map(k, v) => (&k.data_type, &v.data_type),
                _ => (&DataType::Null, &DataType::Null),
            };
            out.write_char('{')?;
            let mut items = entries.iter();
            let mut first = true;
            while let Some(key) = items.next() {
                if !first {
                    out.write_str(", ")?;
                }
                first = false;
                write_element(key, k, out)?;
                out.write_char('=')?;
                write_element(items.next().unwrap_or(Datum::Null), v, out)?;
            }
            out.write_char('}')
        }
        Datum::Decimal(v) => {
            let scale = match ty {
                DataType::Decimal { scale, .. } => *scale,
                _ => 0,
            };
            super::decimal::format_decimal(out, v, scale)
        }
        Datum::Date(days) => time::format_date(out, days),
        Datum::Time(nanos) => time::format_time(out, nanos, precision_of(ty)),
        Datum::Timestamp(ts) => match ty {
            DataType::TimestampLtz(p) => time::format_timestamp_ltz(out, ts, *p, 0),
            _ => time::format_timestamp(out, ts, precision_of(ty)),
        },
    }
}

fn write_nested<'a>(
    items: impl Iterator<Item = (Datum<'a>, &'a DataType)>,
    open: &str,
    close: &str,
    out: &mut impl Write,
) -> fmt::Result {
    out.write_str(open)?;
    for (i, (datum, ty)) in items.enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        write_element(datum, ty, out)?;
    }
    out.write_str(close)
}

/// A nested value: printed, with NULL as `NULL` (Flink's cast of a collection to a string).
fn write_element(datum: Datum<'_>, ty: &DataType, out: &mut impl Write) -> fmt::Result {
    if datum.is_null() {
        out.write_str("NULL")
    } else {
        write_datum(datum, ty, Style::Print, out)
    }
}

/// Standard base64 with padding, written in chunks through a small stack buffer.
fn write_base64(bytes: &[u8], out: &mut impl Write) -> fmt::Result {
    let mut buf = [0u8; 64];
    for chunk in bytes.chunks(48) {
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(chunk, &mut buf)
            .map_err(|_| fmt::Error)?;
        out.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)?;
    }
    Ok(())
}

/// The fractional-second precision of a time type (3 for anything else).
fn precision_of(ty: &DataType) -> u8 {
    match ty {
        DataType::Time(p) | DataType::Timestamp(p) | DataType::TimestampLtz(p) => *p,
        _ => 3,
    }
}

/// Why a decimal text did not parse, without repeating the value.
fn decimal_reason(e: super::decimal::DecimalError) -> String {
    match e {
        super::decimal::DecimalError::Parse { reason, .. } => reason.to_string(),
        other => other.to_string(),
    }
}

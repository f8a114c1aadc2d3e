//! `CAST` and `TRY_CAST` between the predefined types, and the text form of every datum.
//!
//! Which casts exist follows Flink's `LogicalTypeCasts` (explicit casts): numbers and BOOLEAN
//! among themselves, every predefined type to and from character strings, DATE / TIME /
//! TIMESTAMP / TIMESTAMP_LTZ among themselves (TIMESTAMP_LTZ read in UTC, the default
//! `table.local-time-zone`). Text is written as Flink prints values (BOOLEAN `TRUE`, DOUBLE as
//! Java's `Double.toString`, DECIMAL with its scale, TIMESTAMP(p) `yyyy-MM-dd HH:mm:ss` with `p`
//! fractional digits).
//!
//! Deliberate differences from Flink: a number out of the target's range is an error (Flink's
//! integer casts wrap), a DECIMAL past its precision is an error (Flink gives NULL); TRY_CAST
//! gives NULL for both. Text casts move to `repr::cast` (branch `io`) when it lands.

use std::fmt::Write;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::repr::{DataType, Datum, Ts};

use super::arithmetic::IntType;
use super::decimal;
use super::time::{date_of_days, naive_of_ts, truncate_ts, ts_of_naive, EPOCH_DAYS_CE};
use crate::expr::arena::RowArena;
use crate::expr::error::Fault;

/// A cast from one type to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CastOp {
    /// The operand's type.
    pub from: DataType,
    /// The result's type.
    pub to: DataType,
    /// TRY_CAST: NULL instead of an error.
    pub safe: bool,
}

/// Whether Flink casts `from` to `to` explicitly (`CAST`).
pub fn can_cast(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let numeric_or_bool = |t: &DataType| t.is_numeric() || *t == Boolean;
    let datetime = |t: &DataType| matches!(t, Date | Time(_) | Timestamp(_) | TimestampLtz(_));
    from == to
        || *from == Null
        || from.is_string()
        || to.is_string()
        || (numeric_or_bool(from) && numeric_or_bool(to))
        || (datetime(from)
            && datetime(to)
            && !matches!((from, to), (Date, Time(_)) | (Time(_), Date)))
        || (matches!(from, Binary(_) | Varbinary(_)) && matches!(to, Binary(_) | Varbinary(_)))
}

impl CastOp {
    /// The cast of `datum` (of type `from`); NULL stays NULL.
    pub(crate) fn apply<'a>(
        &self,
        datum: Datum<'a>,
        arena: &'a RowArena,
    ) -> Result<Datum<'a>, Fault> {
        if datum.is_null() {
            return Ok(Datum::Null);
        }
        match cast(datum, &self.from, &self.to, arena) {
            Ok(d) => Ok(d),
            Err(_) if self.safe => Ok(Datum::Null),
            Err(reason) => {
                let mut value = String::new();
                write_datum(&mut value, datum, &self.from);
                Err(Fault::Cast {
                    value,
                    to: self.to.clone(),
                    reason,
                })
            }
        }
    }
}

fn int_of(ty: &DataType, v: i128) -> Result<Datum<'static>, String> {
    let t = IntType::of(ty).ok_or("not an integer type")?;
    let v = i64::try_from(v).map_err(|_| format!("out of the range of {ty}"))?;
    t.check(v)
        .map(Datum::Int)
        .map_err(|_| format!("out of the range of {ty}"))
}

fn float_of(ty: &DataType, v: f64) -> Datum<'static> {
    Datum::Float(if *ty == DataType::Float {
        v as f32 as f64
    } else {
        v
    })
}

/// The cast proper, of a non-NULL datum; the error is the reason.
fn cast<'a>(
    datum: Datum<'a>,
    from: &DataType,
    to: &DataType,
    arena: &'a RowArena,
) -> Result<Datum<'a>, String> {
    use DataType as T;
    if to.is_string() {
        let mut out = arena.string();
        write_datum(&mut out, datum, from);
        let text = out.finish();
        return Ok(Datum::Str(fit_length(text, to, arena)));
    }
    if let Datum::Str(text) = datum {
        return parse(text, to, arena);
    }
    let range = || format!("out of the range of {to}");
    match (datum, to) {
        (_, t) if t == from => Ok(datum),
        (Datum::Bool(b), t) if t.is_integer() => Ok(Datum::Int(b as i64)),
        (Datum::Bool(b), T::Float | T::Double) => Ok(Datum::Float(b as i64 as f64)),
        (Datum::Bool(b), T::Decimal { scale, .. }) => Ok(Datum::Decimal(
            decimal::rescale(b as i128, 0, *scale).ok_or_else(range)?,
        )),
        (Datum::Int(v), T::Boolean) => Ok(Datum::Bool(v != 0)),
        (Datum::Float(v), T::Boolean) => Ok(Datum::Bool(v != 0.0)),
        (Datum::Decimal(v), T::Boolean) => Ok(Datum::Bool(v != 0)),
        (Datum::Int(v), t) if t.is_integer() => int_of(t, v as i128),
        (Datum::Int(v), T::Float | T::Double) => Ok(float_of(to, v as f64)),
        (Datum::Int(v), T::Decimal { precision, scale }) => decimal::rescale(v as i128, 0, *scale)
            .filter(|v| decimal::fits(*v, *precision))
            .map(Datum::Decimal)
            .ok_or_else(range),
        (Datum::Float(v), t) if t.is_integer() => {
            if !v.is_finite() || v.abs() >= 9.3e18 {
                return Err(range());
            }
            int_of(t, v.trunc() as i128)
        }
        (Datum::Float(v), T::Float | T::Double) => Ok(float_of(to, v)),
        (Datum::Float(v), T::Decimal { precision, scale }) => {
            decimal::from_f64(v, *precision, *scale)
                .map(Datum::Decimal)
                .ok_or_else(range)
        }
        (Datum::Decimal(v), t) if t.is_integer() => {
            let (_, s) = decimal::integer_precision(from).unwrap_or((0, 0));
            int_of(t, v / decimal::pow10(s as u32).unwrap_or(1))
        }
        (Datum::Decimal(v), T::Float | T::Double) => {
            let (_, s) = decimal::integer_precision(from).unwrap_or((0, 0));
            Ok(float_of(to, decimal::to_f64(v, s)))
        }
        (Datum::Decimal(v), T::Decimal { precision, scale }) => {
            let (_, s) = decimal::integer_precision(from).unwrap_or((0, 0));
            decimal::rescale(v, s, *scale)
                .filter(|v| decimal::fits(*v, *precision))
                .map(Datum::Decimal)
                .ok_or_else(range)
        }
        (Datum::Timestamp(ts), T::Date) => Ok(Datum::Date(ts.millis.div_euclid(86_400_000) as i32)),
        (Datum::Timestamp(ts), T::Time(p)) => {
            let nanos = ts.millis.rem_euclid(86_400_000) * 1_000_000 + ts.nanos_of_milli as i64;
            Ok(Datum::Time(truncate_nanos(nanos, *p)))
        }
        (Datum::Timestamp(ts), T::Timestamp(p) | T::TimestampLtz(p)) => {
            Ok(Datum::Timestamp(truncate_ts(ts, *p)))
        }
        (Datum::Date(days), T::Timestamp(_) | T::TimestampLtz(_)) => Ok(Datum::Timestamp(Ts {
            millis: days as i64 * 86_400_000,
            nanos_of_milli: 0,
        })),
        (Datum::Time(nanos), T::Time(p)) => Ok(Datum::Time(truncate_nanos(nanos, *p))),
        (Datum::Time(nanos), T::Timestamp(p) | T::TimestampLtz(p)) => {
            Ok(Datum::Timestamp(truncate_ts(
                Ts {
                    millis: nanos.div_euclid(1_000_000),
                    nanos_of_milli: nanos.rem_euclid(1_000_000) as u32,
                },
                *p,
            )))
        }
        (Datum::Bytes(b), T::Binary(_) | T::Varbinary(_)) => Ok(Datum::Bytes(b)),
        _ => Err(format!("no cast from {from} to {to}")),
    }
}

/// Nanoseconds of the day kept to `p` fractional digits.
fn truncate_nanos(nanos: i64, p: u8) -> i64 {
    let unit = 10i64.pow(9u32.saturating_sub(p as u32));
    nanos - nanos.rem_euclid(unit)
}

/// Text cut to a VARCHAR(n)'s length or padded to a CHAR(n)'s, as Flink's casts do.
fn fit_length<'a>(text: &'a str, to: &DataType, arena: &'a RowArena) -> &'a str {
    match *to {
        DataType::Varchar(n) | DataType::Char(n) => {
            let n = n as usize;
            let cut = text.char_indices().nth(n).map_or(text, |(i, _)| &text[..i]);
            let len = cut.chars().count();
            if matches!(to, DataType::Char(_)) && len < n {
                let mut out = arena.string();
                out.push_str(cut);
                (len..n).for_each(|_| out.push(' '));
                out.finish()
            } else {
                cut
            }
        }
        _ => text,
    }
}

/// Text parsed as `to` (surrounding spaces ignored, as Flink trims before parsing).
fn parse<'a>(text: &'a str, to: &DataType, arena: &'a RowArena) -> Result<Datum<'a>, String> {
    use DataType as T;
    let t = text.trim();
    let bad = || format!("not a valid {to}");
    match to {
        T::Boolean => match t.to_ascii_lowercase().as_str() {
            "true" | "t" | "yes" | "y" | "1" => Ok(Datum::Bool(true)),
            "false" | "f" | "no" | "n" | "0" => Ok(Datum::Bool(false)),
            _ => Err(bad()),
        },
        t2 if t2.is_integer() => int_of(to, t.parse::<i64>().map_err(|_| bad())? as i128),
        T::Float | T::Double => t.parse::<f64>().map(|v| float_of(to, v)).map_err(|_| bad()),
        T::Decimal { precision, scale } => decimal::parse_as(t, *precision, *scale)
            .map(Datum::Decimal)
            .ok_or_else(bad),
        T::Date => parse_date(t).map(Datum::Date).ok_or_else(bad),
        T::Time(p) => NaiveTime::parse_from_str(t, "%H:%M:%S%.f")
            .or_else(|_| NaiveTime::parse_from_str(t, "%H:%M"))
            .map(|time| {
                let nanos = time.num_seconds_from_midnight() as i64 * 1_000_000_000
                    + time.nanosecond() as i64;
                Datum::Time(truncate_nanos(nanos, *p))
            })
            .map_err(|_| bad()),
        T::Timestamp(p) | T::TimestampLtz(p) => parse_timestamp(t)
            .map(|ts| Datum::Timestamp(truncate_ts(ts, *p)))
            .ok_or_else(bad),
        T::Binary(_) | T::Varbinary(_) => Ok(Datum::Bytes(arena.push_bytes(text.as_bytes()))),
        _ => Err(format!("no cast from a string to {to}")),
    }
}

/// `yyyy-MM-dd` as days since 1970-01-01 (years 0000-9999).
pub fn parse_date(text: &str) -> Option<i32> {
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    (0..=9999)
        .contains(&date.year())
        .then(|| date.num_days_from_ce() - EPOCH_DAYS_CE)
}

/// `yyyy-MM-dd[ HH:mm[:ss[.fffffffff]]]` (or with `T`) as a timestamp.
pub fn parse_timestamp(text: &str) -> Option<Ts> {
    let normal = |s: &str| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f");
    let naive = normal(text)
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M"))
        .ok()
        .or_else(|| parse_date(text).and_then(|d| date_of_days(d).and_hms_opt(0, 0, 0)))?;
    (0..=9999)
        .contains(&naive.year())
        .then(|| ts_of_naive(naive))
}

/// Writes `datum` (of type `ty`) as Flink prints it; NULL as `NULL`.
pub fn write_datum(out: &mut impl Write, datum: Datum<'_>, ty: &DataType) {
    // Writing to a String or an arena string cannot fail.
    let _ = try_write_datum(out, datum, ty);
}

fn try_write_datum(out: &mut impl Write, datum: Datum<'_>, ty: &DataType) -> std::fmt::Result {
    match datum {
        Datum::Null => out.write_str("NULL"),
        Datum::Bool(b) => out.write_str(if b { "TRUE" } else { "FALSE" }),
        Datum::Int(v) => write!(out, "{v}"),
        Datum::Float(v) => write_double(out, v, *ty == DataType::Float),
        Datum::Decimal(v) => {
            let (_, s) = decimal::integer_precision(ty).unwrap_or((0, 0));
            decimal::write(out, v, s)
        }
        Datum::Date(days) => {
            let d = date_of_days(days);
            write!(out, "{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
        }
        Datum::Time(nanos) => {
            let p = if let DataType::Time(p) = ty { *p } else { 0 };
            let secs = nanos.div_euclid(1_000_000_000);
            write!(
                out,
                "{:02}:{:02}:{:02}",
                secs / 3600,
                secs / 60 % 60,
                secs % 60
            )?;
            write_fraction(out, nanos.rem_euclid(1_000_000_000) as u32, p)
        }
        Datum::Timestamp(ts) => {
            let p = match ty {
                DataType::Timestamp(p) | DataType::TimestampLtz(p) => *p,
                _ => 3,
            };
            match naive_of_ts(ts) {
                Some(n) => {
                    write!(
                        out,
                        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                        n.year(),
                        n.month(),
                        n.day(),
                        n.hour(),
                        n.minute(),
                        n.second()
                    )?;
                    write_fraction(out, n.nanosecond(), p)
                }
                None => write!(out, "{}ms", ts.millis),
            }
        }
        Datum::IntervalDayTime(ms) => {
            let sign = if ms < 0 { "-" } else { "+" };
            let ms = ms.unsigned_abs();
            let secs = ms / 1000;
            write!(
                out,
                "{sign}{} {:02}:{:02}:{:02}.{:03}",
                secs / 86_400,
                secs / 3600 % 24,
                secs / 60 % 60,
                secs % 60,
                ms % 1000
            )
        }
        Datum::IntervalYearMonth(months) => {
            let sign = if months < 0 { "-" } else { "+" };
            let m = months.unsigned_abs();
            write!(out, "{sign}{}-{:02}", m / 12, m % 12)
        }
        Datum::Str(s) => out.write_str(s),
        Datum::Bytes(b) => b.iter().try_for_each(|byte| write!(out, "{byte:02x}")),
        Datum::Array(r) | Datum::Map(r) | Datum::Row(r) => write!(out, "{r:?}"),
    }
}

fn write_fraction(out: &mut impl Write, nanos: u32, p: u8) -> std::fmt::Result {
    if p == 0 {
        return Ok(());
    }
    let p = p.min(9) as u32;
    write!(
        out,
        ".{:0width$}",
        nanos / 10u32.pow(9 - p),
        width = p as usize
    )
}

/// Writes a DOUBLE (or FLOAT) as Java's `Double.toString` (`Float.toString`): the shortest
/// digits that read back, plain between 10^-3 and 10^7 with at least one fractional digit
/// (`1.0`), else scientific (`1.0E7`, `1.5E-4`); `NaN`, `Infinity`, `-Infinity`.
pub fn write_double(out: &mut impl Write, v: f64, single: bool) -> std::fmt::Result {
    if v.is_nan() {
        return out.write_str("NaN");
    }
    if v.is_infinite() {
        return out.write_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
    }
    let mut text = StackText::new();
    let plain = v == 0.0 || (1e-3..1e7).contains(&v.abs());
    match (plain, single) {
        (true, true) => write!(text, "{}", v as f32)?,
        (true, false) => write!(text, "{v}")?,
        (false, true) => write!(text, "{:e}", v as f32)?,
        (false, false) => write!(text, "{v:e}")?,
    }
    let s = text.as_str();
    match s.split_once('e') {
        Some((mantissa, exponent)) => {
            out.write_str(mantissa)?;
            if !mantissa.contains('.') {
                out.write_str(".0")?;
            }
            write!(out, "E{exponent}")
        }
        None => {
            out.write_str(s)?;
            if s.contains('.') {
                Ok(())
            } else {
                out.write_str(".0")
            }
        }
    }
}

/// A small text buffer on the stack, for formatting a number without allocating.
pub(crate) struct StackText {
    buf: [u8; 64],
    len: usize,
}

impl StackText {
    /// An empty buffer.
    pub(crate) fn new() -> StackText {
        StackText {
            buf: [0; 64],
            len: 0,
        }
    }

    /// The text written.
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

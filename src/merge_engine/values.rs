//! The values the aggregate functions compute with: a column's cells read as the column's
//! declared type ([`FieldAgg::ty`](super::FieldAgg::ty)).
//!
//! * A column of a character-string type (`STRING`, `VARCHAR(n)`, `CHAR(n)`; every column of a
//!   table declared without a schema) keeps the text rules: a cell that parses as an `i64` is
//!   an integer, otherwise one that parses as a finite `f64` is a float; integers stay
//!   integers (overflow is an error, never a wrap), mixing in a float gives a float, written
//!   in Rust's shortest round-trip form (`35.5`, `3.0`); `max` and `min` order numbers by
//!   value before any other cell, and the other cells by text; booleans are the words `true`
//!   and `false`.
//! * A typed column (Paimon's and Fluss's tables are typed; here a schema declares the types,
//!   and each cell was parsed once, at ingest): `TINYINT`..`BIGINT` add and multiply exactly,
//!   a result outside the type's range is an error (integer overflow); `DECIMAL(p, s)` keeps
//!   the column's scale, a product is rounded `HALF_UP` to it (Paimon's `DecimalUtils`), more
//!   than `p` digits is an error; `FLOAT`/`DOUBLE` compute in floating point; `max` and `min`
//!   compare values of the type ([`Datum`]'s value order); booleans are `BOOLEAN` values.
//!   Results are values of the column's type, written by the sink as Flink writes the type.

use std::cmp::Ordering;

use super::fold::Cell;
use crate::repr::decimal::{self, DecimalType};
use crate::repr::{DataType, Datum};

/// A number of a column: an integer, a float, or a decimal's unscaled value (at the column's
/// scale).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
    Decimal(i128),
}

/// Whether a column of type `ty` follows the text rules (module docs).
pub(super) fn is_text(ty: &DataType) -> bool {
    ty.is_string()
}

/// The text of a cell of a text column.
pub(super) fn text(cell: Datum<'_>) -> Result<&str, String> {
    match cell {
        Datum::Str(s) => Ok(s),
        other => Err(format!("{other:?} is not text")),
    }
}

impl Num {
    /// The number in a non-NULL cell of a column of type `ty`.
    pub(super) fn read(ty: &DataType, cell: Datum<'_>) -> Result<Num, String> {
        match cell {
            Datum::Str(s) if is_text(ty) => Num::parse(s),
            Datum::Int(i) => Ok(Num::Int(i)),
            Datum::Float(x) => Ok(Num::Float(x)),
            Datum::Decimal(v) => Ok(Num::Decimal(v)),
            other => Err(format!("{other:?} is not a number of type {ty}")),
        }
    }

    /// A number in text: an integer if it parses as `i64`, else a finite float.
    fn parse(text: &str) -> Result<Num, String> {
        let text = text.trim();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Num::Int(i));
        }
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Num::Float(x)),
            _ => Err(format!("{text:?} is not a number")),
        }
    }

    fn float(self, ty: &DataType) -> f64 {
        match (self, ty) {
            (Num::Int(i), _) => i as f64,
            (Num::Float(x), _) => x,
            (Num::Decimal(v), DataType::Decimal { scale, .. }) => decimal::to_f64(v, *scale),
            (Num::Decimal(v), _) => v as f64,
        }
    }

    /// The cell of this number in a column of type `ty`: text in a text column, else a value
    /// of the type (an integer checked against the type's range, a FLOAT rounded to `f32`).
    pub(super) fn cell(self, ty: &DataType) -> Result<Cell<'static>, String> {
        if is_text(ty) {
            return Ok(Cell::Text(match self {
                Num::Int(i) => i.to_string(),
                Num::Float(x) => format!("{x:?}"),
                Num::Decimal(v) => v.to_string(),
            }));
        }
        Ok(Cell::Datum(match self {
            Num::Int(i) => Datum::Int(in_range(ty, i)?),
            Num::Float(x) if *ty == DataType::Float => Datum::Float(f64::from(x as f32)),
            Num::Float(x) => Datum::Float(x),
            Num::Decimal(v) => Datum::Decimal(v),
        }))
    }

    /// `self + other` (`self - other` if `subtract`) in a column of type `ty`.
    pub(super) fn add(self, other: Num, subtract: bool, ty: &DataType) -> Result<Num, String> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => {
                let r = if subtract {
                    a.checked_sub(b)
                } else {
                    a.checked_add(b)
                };
                r.map(Num::Int).ok_or_else(|| overflow(ty))
            }
            (Num::Decimal(a), Num::Decimal(b)) => {
                let (to, s) = decimal_type(ty)?;
                let r = if subtract {
                    decimal::sub(a, s, b, s, to)
                } else {
                    decimal::add(a, s, b, s, to)
                };
                r.map(Num::Decimal).map_err(|e| e.to_string())
            }
            (a, b) if subtract => Ok(Num::Float(a.float(ty) - b.float(ty))),
            (a, b) => Ok(Num::Float(a.float(ty) + b.float(ty))),
        }
    }

    /// `self * other` in a column of type `ty`.
    pub(super) fn mul(self, other: Num, ty: &DataType) -> Result<Num, String> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => {
                a.checked_mul(b).map(Num::Int).ok_or_else(|| overflow(ty))
            }
            (Num::Decimal(a), Num::Decimal(b)) => {
                let (to, s) = decimal_type(ty)?;
                decimal::mul(a, s, b, s, to)
                    .map(Num::Decimal)
                    .map_err(|e| e.to_string())
            }
            (a, b) => Ok(Num::Float(a.float(ty) * b.float(ty))),
        }
    }

    /// `self / other`, undoing a product, in a column of type `ty`: an integer product must
    /// stay exact.
    pub(super) fn div(self, other: Num, ty: &DataType) -> Result<Num, String> {
        let zero = || "cannot retract a zero from a product".to_string();
        match (self, other) {
            (_, Num::Int(0) | Num::Decimal(0)) => Err(zero()),
            (Num::Int(a), Num::Int(b)) if a % b == 0 => Ok(Num::Int(a / b)),
            (Num::Int(_), Num::Int(_)) => {
                Err("retraction would make an integer product inexact".to_string())
            }
            (Num::Decimal(a), Num::Decimal(b)) => {
                let (to, s) = decimal_type(ty)?;
                decimal::div(a, s, b, s, to)
                    .map(Num::Decimal)
                    .map_err(|e| e.to_string())
            }
            (_, b) if b.float(ty) == 0.0 => Err(zero()),
            (a, b) => Ok(Num::Float(a.float(ty) / b.float(ty))),
        }
    }
}

/// Zero in a column of type `ty`.
pub(super) fn zero(ty: &DataType) -> Num {
    match ty {
        DataType::Float | DataType::Double => Num::Float(0.0),
        DataType::Decimal { .. } => Num::Decimal(0),
        _ => Num::Int(0),
    }
}

fn overflow(ty: &DataType) -> String {
    if is_text(ty) {
        "integer overflow".to_string()
    } else {
        format!("integer overflow: the result is out of the range of {ty}")
    }
}

/// `i` if it is a value of the integer type `ty`.
fn in_range(ty: &DataType, i: i64) -> Result<i64, String> {
    let (min, max) = match ty {
        DataType::TinyInt => (i8::MIN.into(), i8::MAX.into()),
        DataType::SmallInt => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    };
    if (min..=max).contains(&i) {
        Ok(i)
    } else {
        Err(overflow(ty))
    }
}

fn decimal_type(ty: &DataType) -> Result<(DecimalType, u8), String> {
    match ty {
        DataType::Decimal { precision, scale } => Ok((
            DecimalType {
                precision: *precision,
                scale: *scale,
            },
            *scale,
        )),
        other => Err(format!("{other} is not a DECIMAL")),
    }
}

/// The order of `max` and `min` in a column of type `ty`: a typed column's value order; in a
/// text column numbers by value before every other cell, the other cells by text, and equal
/// numbers written differently (`10`, `10.0`) by text. A total order over the cells, so the
/// result does not depend on the order the writes arrive in. (Comparing "as numbers if both
/// are, else as text" is not one: `10 > 9`, `9 > 10a` and `10a > 10` as text, so the maximum
/// of `10, 9, 10a` was whichever came last of a cycle.)
pub(super) fn compare(ty: &DataType, a: Datum<'_>, b: Datum<'_>) -> Ordering {
    let (Datum::Str(a), Datum::Str(b)) = (a, b) else {
        return a.cmp(&b);
    };
    let by_value = match (Num::parse(a), Num::parse(b)) {
        (Ok(Num::Int(x)), Ok(Num::Int(y))) => x.cmp(&y),
        (Ok(x), Ok(y)) => x.float(ty).total_cmp(&y.float(ty)),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => Ordering::Equal,
    };
    by_value.then_with(|| a.cmp(b))
}

/// The boolean in a non-NULL cell: a `BOOLEAN` value, or the text `true` / `false`.
pub(super) fn boolean(cell: Datum<'_>) -> Result<bool, String> {
    match cell {
        Datum::Bool(b) => Ok(b),
        Datum::Str(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("{text:?} is not a boolean (true or false)")),
        },
        other => Err(format!("{other:?} is not a boolean")),
    }
}

/// The cell of a boolean in a column of type `ty`.
pub(super) fn boolean_cell(ty: &DataType, b: bool) -> Cell<'static> {
    Cell::Datum(match (is_text(ty), b) {
        (true, true) => Datum::Str("true"),
        (true, false) => Datum::Str("false"),
        (false, b) => Datum::Bool(b),
    })
}

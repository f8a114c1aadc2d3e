//! `+ - * / %`, unary `-` and `ABS` on numbers.
//!
//! Flink's rules: integers stay integers (`INT / INT` is integer division, the result type is
//! the wider operand's; `MOD` takes the type of its second operand); any FLOAT/DOUBLE operand
//! makes the operation approximate; a DECIMAL operand with an integer makes it DECIMAL, with
//! the result precision and scale of `LogicalTypeMerging` (see [`super::decimal`]).
//!
//! Errors and NULLs: an integer `/` or `%` by zero is `Fault::DivisionByZero` (Flink throws
//! `ArithmeticException`); DECIMAL by zero is NULL (Flink's `DecimalDataUtils`); DOUBLE by zero
//! is IEEE infinity or NaN. Integer overflow is an error (deliberately unlike Flink, which wraps
//! as Java does); a DECIMAL past its precision is an error (Flink gives NULL).

use crate::repr::{DataType, Datum};

use super::decimal;
use crate::expr::error::Fault;

/// An integer type, for its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntType {
    /// TINYINT.
    TinyInt,
    /// SMALLINT.
    SmallInt,
    /// INT.
    Int,
    /// BIGINT.
    BigInt,
}

impl IntType {
    /// The integer type of `ty`, if it is one.
    pub fn of(ty: &DataType) -> Option<IntType> {
        Some(match ty {
            DataType::TinyInt => IntType::TinyInt,
            DataType::SmallInt => IntType::SmallInt,
            DataType::Int => IntType::Int,
            DataType::BigInt => IntType::BigInt,
            _ => return None,
        })
    }

    /// The SQL type.
    pub fn data_type(self) -> DataType {
        match self {
            IntType::TinyInt => DataType::TinyInt,
            IntType::SmallInt => DataType::SmallInt,
            IntType::Int => DataType::Int,
            IntType::BigInt => DataType::BigInt,
        }
    }

    /// `v` if it is in range, else an overflow.
    #[inline]
    pub(crate) fn check(self, v: i64) -> Result<i64, Fault> {
        let fits = match self {
            IntType::TinyInt => i8::try_from(v).is_ok(),
            IntType::SmallInt => i16::try_from(v).is_ok(),
            IntType::Int => i32::try_from(v).is_ok(),
            IntType::BigInt => true,
        };
        if fits {
            Ok(v)
        } else {
            Err(Fault::Overflow(self.data_type()))
        }
    }
}

/// How an arithmetic operation computes: both operands (already cast by the binder) and the
/// result are of this kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numeric {
    /// Integers, result of the given type.
    Int(IntType),
    /// FLOAT (results rounded to `f32`).
    Float,
    /// DOUBLE.
    Double,
    /// DECIMAL operands at scales `left` and `right`, result DECIMAL(precision, scale).
    Decimal {
        /// The first operand's scale.
        left: u8,
        /// The second operand's scale.
        right: u8,
        /// The result's precision.
        precision: u8,
        /// The result's scale.
        scale: u8,
    },
}

fn overflow<T>(n: &Numeric) -> Result<T, Fault> {
    Err(Fault::Overflow(n.result_type()))
}

impl Numeric {
    /// The result type.
    pub fn result_type(&self) -> DataType {
        match self {
            Numeric::Int(t) => t.data_type(),
            Numeric::Float => DataType::Float,
            Numeric::Double => DataType::Double,
            Numeric::Decimal {
                precision, scale, ..
            } => DataType::Decimal {
                precision: *precision,
                scale: *scale,
            },
        }
    }

    fn float(&self, v: f64) -> Datum<'static> {
        match self {
            Numeric::Float => Datum::Float(v as f32 as f64),
            _ => Datum::Float(v),
        }
    }

    fn decimal(&self, v: Option<i128>) -> Result<Datum<'static>, Fault> {
        match (self, v) {
            (Numeric::Decimal { precision, .. }, Some(v)) if decimal::fits(v, *precision) => {
                Ok(Datum::Decimal(v))
            }
            _ => overflow(self),
        }
    }

    /// Both operands of a DECIMAL operation at the result scale.
    fn aligned(&self, a: i128, b: i128) -> Option<(i128, i128)> {
        match *self {
            Numeric::Decimal {
                left, right, scale, ..
            } => Some((
                decimal::rescale(a, left, scale)?,
                decimal::rescale(b, right, scale)?,
            )),
            _ => None,
        }
    }

    /// `a + b`.
    #[inline]
    pub(crate) fn add<'a>(&self, a: Datum<'a>, b: Datum<'a>) -> Result<Datum<'a>, Fault> {
        match (self, a, b) {
            (Numeric::Int(t), Datum::Int(a), Datum::Int(b)) => match a.checked_add(b) {
                Some(v) => t.check(v).map(Datum::Int),
                None => overflow(self),
            },
            (_, Datum::Float(a), Datum::Float(b)) => Ok(self.float(a + b)),
            (_, Datum::Decimal(a), Datum::Decimal(b)) => {
                self.decimal(self.aligned(a, b).and_then(|(a, b)| a.checked_add(b)))
            }
            _ => Ok(Datum::Null),
        }
    }

    /// `a - b`.
    #[inline]
    pub(crate) fn sub<'a>(&self, a: Datum<'a>, b: Datum<'a>) -> Result<Datum<'a>, Fault> {
        match (self, a, b) {
            (Numeric::Int(t), Datum::Int(a), Datum::Int(b)) => match a.checked_sub(b) {
                Some(v) => t.check(v).map(Datum::Int),
                None => overflow(self),
            },
            (_, Datum::Float(a), Datum::Float(b)) => Ok(self.float(a - b)),
            (_, Datum::Decimal(a), Datum::Decimal(b)) => {
                self.decimal(self.aligned(a, b).and_then(|(a, b)| a.checked_sub(b)))
            }
            _ => Ok(Datum::Null),
        }
    }

    /// `a * b`.
    #[inline]
    pub(crate) fn mul<'a>(&self, a: Datum<'a>, b: Datum<'a>) -> Result<Datum<'a>, Fault> {
        match (*self, a, b) {
            (Numeric::Int(t), Datum::Int(a), Datum::Int(b)) => match a.checked_mul(b) {
                Some(v) => t.check(v).map(Datum::Int),
                None => overflow(self),
            },
            (_, Datum::Float(a), Datum::Float(b)) => Ok(self.float(a * b)),
            (
                Numeric::Decimal {
                    left, right, scale, ..
                },
                Datum::Decimal(a),
                Datum::Decimal(b),
            ) => self.decimal(
                a.checked_mul(b)
                    .and_then(|v| decimal::rescale(v, left + right, scale)),
            ),
            _ => Ok(Datum::Null),
        }
    }

    /// `a / b`.
    #[inline]
    pub(crate) fn div<'a>(&self, a: Datum<'a>, b: Datum<'a>) -> Result<Datum<'a>, Fault> {
        match (*self, a, b) {
            (Numeric::Int(_), Datum::Int(_), Datum::Int(0)) => Err(Fault::DivisionByZero),
            (Numeric::Int(t), Datum::Int(a), Datum::Int(b)) => match a.checked_div(b) {
                Some(v) => t.check(v).map(Datum::Int),
                None => overflow(self),
            },
            (_, Datum::Float(a), Datum::Float(b)) => Ok(self.float(a / b)),
            (_, Datum::Decimal(_), Datum::Decimal(0)) => Ok(Datum::Null),
            (
                Numeric::Decimal {
                    left, right, scale, ..
                },
                Datum::Decimal(a),
                Datum::Decimal(b),
            ) => self.decimal(decimal::divide(a, left, b, right, scale)),
            _ => Ok(Datum::Null),
        }
    }

    /// `a % b` (the sign of `a`, as Java's `%`).
    #[inline]
    pub(crate) fn rem<'a>(&self, a: Datum<'a>, b: Datum<'a>) -> Result<Datum<'a>, Fault> {
        match (self, a, b) {
            (Numeric::Int(_), Datum::Int(_), Datum::Int(0)) => Err(Fault::DivisionByZero),
            (Numeric::Int(t), Datum::Int(a), Datum::Int(b)) => {
                t.check(if b == -1 { 0 } else { a % b }).map(Datum::Int)
            }
            (_, Datum::Float(a), Datum::Float(b)) => Ok(self.float(a % b)),
            (_, Datum::Decimal(_), Datum::Decimal(0)) => Ok(Datum::Null),
            (_, Datum::Decimal(a), Datum::Decimal(b)) => match self.aligned(a, b) {
                Some((_, 0)) => Ok(Datum::Null),
                Some((a, b)) => self.decimal(Some(a % b)),
                None => overflow(self),
            },
            _ => Ok(Datum::Null),
        }
    }

    /// `-a`.
    pub(crate) fn neg<'a>(&self, a: Datum<'a>) -> Result<Datum<'a>, Fault> {
        match (self, a) {
            (Numeric::Int(t), Datum::Int(a)) => match a.checked_neg() {
                Some(v) => t.check(v).map(Datum::Int),
                None => overflow(self),
            },
            (_, Datum::Float(a)) => Ok(Datum::Float(-a)),
            (_, Datum::Decimal(a)) => Ok(Datum::Decimal(-a)),
            _ => Ok(Datum::Null),
        }
    }

    /// `ABS(a)`.
    pub(crate) fn abs<'a>(&self, a: Datum<'a>) -> Result<Datum<'a>, Fault> {
        match (self, a) {
            (Numeric::Int(t), Datum::Int(a)) => match a.checked_abs() {
                Some(v) => t.check(v).map(Datum::Int),
                None => overflow(self),
            },
            (_, Datum::Float(a)) => Ok(Datum::Float(a.abs())),
            (_, Datum::Decimal(a)) => Ok(Datum::Decimal(a.abs())),
            _ => Ok(Datum::Null),
        }
    }
}

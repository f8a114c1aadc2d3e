//! `ROUND`, `FLOOR`, `CEIL` and the DOUBLE functions `POWER`, `SQRT`, `LN`, `LOG10`, `EXP`.

use crate::repr::Datum;

use super::cast::StackText;
use super::{arg, decimal, Numeric, ScalarFunc};
use crate::expr::error::Fault;

/// How `ROUND`, `FLOOR` or `CEIL` computes, on an operand of kind `input`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundOp {
    /// `ROUND(x, digits)` HALF_UP (Flink: `BigDecimal.setScale(digits, HALF_UP)`; a DOUBLE is
    /// first written as its shortest decimal, as `BigDecimal.valueOf` does). For a DECIMAL,
    /// the result type is `LogicalTypeMerging.findRoundDecimalType` and `out_scale` its scale.
    Round {
        /// The operand's kind.
        input: Numeric,
        /// Digits after the point to keep (negative: before it).
        digits: i32,
        /// The DECIMAL result's scale (unused otherwise).
        out_scale: u8,
    },
    /// `FLOOR(x)`: to an integral value toward negative infinity (a DECIMAL's scale becomes 0).
    Floor(Numeric),
    /// `CEIL(x)`: toward positive infinity.
    Ceil(Numeric),
}

impl RoundOp {
    /// The kernel.
    pub(crate) fn apply<'a>(&self, args: &[Datum<'a>]) -> Result<Datum<'a>, Fault> {
        let x = arg(args, 0);
        match (*self, x) {
            (RoundOp::Round { digits, .. }, Datum::Int(v)) => {
                if digits >= 0 {
                    return Ok(Datum::Int(v));
                }
                let Some(unit) = decimal::pow10((-digits) as u32) else {
                    return Ok(Datum::Int(0));
                };
                let rounded = decimal::div_half_up(v as i128, unit) * unit;
                match (i64::try_from(rounded), self.input()) {
                    (Ok(r), Numeric::Int(t)) => t.check(r).map(Datum::Int),
                    (_, input) => Err(Fault::Overflow(input.result_type())),
                }
            }
            (RoundOp::Round { input, digits, .. }, Datum::Float(v)) => {
                let rounded = round_double(v, digits);
                Ok(Datum::Float(if input == Numeric::Float {
                    rounded as f32 as f64
                } else {
                    rounded
                }))
            }
            (
                RoundOp::Round {
                    input: Numeric::Decimal { scale, .. },
                    digits,
                    out_scale,
                },
                Datum::Decimal(v),
            ) => {
                // Round to `digits` places, then express at the result's scale.
                let keep = digits.clamp(-(decimal::MAX_PRECISION as i32), scale as i32);
                let Some(unit) = decimal::pow10((scale as i32 - keep) as u32) else {
                    return Ok(Datum::Decimal(0));
                };
                let rounded = decimal::div_half_up(v, unit);
                let at = keep.max(0) as u8;
                let value = if keep < 0 {
                    rounded.checked_mul(decimal::pow10((-keep) as u32).unwrap_or(1))
                } else {
                    decimal::rescale(rounded, at, out_scale)
                };
                value
                    .map(Datum::Decimal)
                    .ok_or(Fault::Overflow(self.input().result_type()))
            }
            (RoundOp::Floor(_) | RoundOp::Ceil(_), Datum::Int(v)) => Ok(Datum::Int(v)),
            (RoundOp::Floor(_), Datum::Float(v)) => Ok(Datum::Float(v.floor())),
            (RoundOp::Ceil(_), Datum::Float(v)) => Ok(Datum::Float(v.ceil())),
            (RoundOp::Floor(Numeric::Decimal { scale, .. }), Datum::Decimal(v)) => {
                let unit = decimal::pow10(scale as u32).unwrap_or(1);
                Ok(Datum::Decimal(v.div_euclid(unit)))
            }
            (RoundOp::Ceil(Numeric::Decimal { scale, .. }), Datum::Decimal(v)) => {
                let unit = decimal::pow10(scale as u32).unwrap_or(1);
                let floor = v.div_euclid(unit);
                Ok(Datum::Decimal(if v.rem_euclid(unit) == 0 {
                    floor
                } else {
                    floor + 1
                }))
            }
            _ => Ok(Datum::Null),
        }
    }

    fn input(&self) -> Numeric {
        match *self {
            RoundOp::Round { input, .. } | RoundOp::Floor(input) | RoundOp::Ceil(input) => input,
        }
    }
}

/// `x` rounded HALF_UP to `digits` places of its shortest decimal form.
fn round_double(x: f64, digits: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let mut text = StackText::new();
    if std::fmt::Write::write_fmt(&mut text, format_args!("{x:e}")).is_err() {
        return x;
    }
    let Some((value, scale)) = decimal::parse_exact(text.as_str()) else {
        return x;
    };
    if scale <= digits {
        return x;
    }
    match decimal::to_scale(value, scale, digits) {
        Some(v) if digits >= 0 => v as f64 / 10f64.powi(digits),
        Some(v) => v as f64 * 10f64.powi(-digits),
        None => x,
    }
}

/// The DOUBLE functions (operands cast to DOUBLE by the binder); NaN where the function is
/// undefined, as Java's `Math` gives.
pub(crate) fn apply_double<'a>(func: &ScalarFunc, args: &[Datum<'a>]) -> Datum<'a> {
    let (Datum::Float(x), y) = (arg(args, 0), arg(args, 1)) else {
        return Datum::Null;
    };
    Datum::Float(match (func, y) {
        (ScalarFunc::Power, Datum::Float(y)) => x.powf(y),
        (ScalarFunc::Sqrt, _) => x.sqrt(),
        (ScalarFunc::Ln, _) => x.ln(),
        (ScalarFunc::Log10, _) => x.log10(),
        (ScalarFunc::Exp, _) => x.exp(),
        _ => return Datum::Null,
    })
}

//! `DECIMAL(p, s)`: exact decimals as an `i128` unscaled value `v` meaning `v * 10^-s`, with the
//! type's precision `p` (1..=38 digits, `|v| < 10^p`) and scale `s` (0..=p) kept in the schema.
//!
//! Flink's rules, from its sources:
//!
//! - result types of `+ - * / %`, SUM and AVG and their adjustment past 38 digits:
//!   `LogicalTypeMerging.find{Addition,Multiplication,Division,Modulo}DecimalType`,
//!   `findSumAggType`, `findAvgAggType`, `adjustPrecisionScale` (flink-table-common);
//! - arithmetic: `DecimalDataUtils.add/subtract/multiply/divide/mod` compute exactly with
//!   `BigDecimal` (division to 38 significant digits, `MathContext(38, HALF_UP)`), then
//!   `DecimalData.fromBigDecimal(bd, p, s)` rounds to the result scale with `HALF_UP` (ties away
//!   from zero) and yields NULL when the result has more than `p` digits; here that NULL is
//!   [`DecimalError::Overflow`], and the expression layer decides NULL or error;
//! - text: `BinaryStringDataUtil.toDecimal` (CAST from STRING) and `DecimalData.toString`
//!   (`BigDecimal.toPlainString`, what the SQL client prints).
//!
//! Intermediate values of up to 77 digits (a product of two 38-digit values, a dividend scaled
//! up for the quotient's digits) are held in a 256-bit integer, so nothing wraps or panics.

use thiserror::Error;

mod arith;
mod text;
mod wide;

#[cfg(test)]
mod tests;

pub use arith::{add, compare, div, from_i64, mul, negate, rem, rescale, sub, to_i64};
pub use text::{format_decimal, from_f64, parse_decimal, to_f64};
use wide::U256;

/// The largest `DECIMAL` precision (Flink's `DecimalType.MAX_PRECISION`).
pub const MAX_PRECISION: u8 = 38;

/// Scale digits kept at least when a result type is cut back to 38 digits (Flink's
/// `LogicalTypeMerging.MINIMUM_ADJUSTED_SCALE`).
const MIN_ADJUSTED_SCALE: u32 = 6;

const POW10: [u128; 39] = {
    let mut table = [1u128; 39];
    let mut i = 1;
    while i < 39 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// `10^k` as a `u128`, for `k <= 38`.
fn pow10(k: u32) -> Option<u128> {
    POW10.get(k as usize).copied()
}

/// `x * 10^k`, or `None` past 256 bits.
fn mul_pow10(x: U256, k: u32) -> Option<U256> {
    let mut x = x;
    let mut left = k;
    while left > 0 {
        let step = left.min(38);
        x = x.checked_mul(POW10[step as usize])?;
        left -= step;
    }
    Some(x)
}

/// The type `DECIMAL(precision, scale)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecimalType {
    /// Total number of digits, 1..=38.
    pub precision: u8,
    /// Digits after the point, 0..=precision.
    pub scale: u8,
}

/// Why a `DECIMAL` type, value or operation failed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DecimalError {
    /// A type outside Flink's bounds (`DecimalType`: precision 1..=38, scale 0..=precision).
    #[error(
        "DECIMAL({precision}, {scale}) is not a valid type: the precision must be between 1 and 38 and the scale between 0 and the precision"
    )]
    InvalidType {
        /// The precision asked for.
        precision: u32,
        /// The scale asked for.
        scale: u32,
    },
    /// The value has more integer digits than the type holds (Flink: NULL).
    #[error("value out of range for DECIMAL({precision}, {scale})")]
    Overflow {
        /// The target type's precision.
        precision: u8,
        /// The target type's scale.
        scale: u8,
    },
    /// A decimal that does not fit the integer type named.
    #[error("DECIMAL value out of range for {target}")]
    OutOfRange {
        /// The SQL name of the target type.
        target: &'static str,
    },
    /// Division (or remainder) by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// NaN or an infinity cast to `DECIMAL`.
    #[error("NaN or infinity cannot be a DECIMAL")]
    NotFinite,
    /// Text that is not a decimal number.
    #[error("invalid DECIMAL {text:?}: {reason}")]
    Parse {
        /// The text that failed.
        text: String,
        /// What was wrong with it.
        reason: &'static str,
    },
}

impl DecimalType {
    /// `DECIMAL(precision, scale)`, checked as Flink's `DecimalType` constructor does.
    ///
    /// # Errors
    /// [`DecimalError::InvalidType`] unless `1 <= precision <= 38` and `scale <= precision`.
    pub fn new(precision: u32, scale: u32) -> Result<DecimalType, DecimalError> {
        if !(1..=u32::from(MAX_PRECISION)).contains(&precision) || scale > precision {
            return Err(DecimalError::InvalidType { precision, scale });
        }
        Ok(DecimalType {
            precision: precision as u8,
            scale: scale as u8,
        })
    }

    /// The type of a derived `(precision, scale)` cut back to 38 digits when wider, as Flink's
    /// `LogicalTypeMerging.adjustPrecisionScale` (the Hive/Spark rule): the integer digits are
    /// kept and the scale shrinks to fit, but never below `min(scale, 6)`. For example
    /// `(39, 8)` becomes `DECIMAL(38, 7)`. `scale <= precision` is assumed.
    pub fn adjusted(precision: u32, scale: u32) -> DecimalType {
        let max = u32::from(MAX_PRECISION);
        if precision <= max {
            return DecimalType {
                precision: precision as u8,
                scale: scale as u8,
            };
        }
        let integer_digits = precision - scale;
        let scale = max
            .saturating_sub(integer_digits)
            .max(scale.min(MIN_ADJUSTED_SCALE));
        DecimalType {
            precision: MAX_PRECISION,
            scale: scale as u8,
        }
    }

    fn parts(self) -> (u32, u32) {
        (u32::from(self.precision), u32::from(self.scale))
    }

    /// The type of `self + other` and `self - other`: scale `max(s1, s2)`, precision
    /// `max(p1 - s1, p2 - s2) + max(s1, s2) + 1`, adjusted
    /// (`LogicalTypeMerging.findAdditionDecimalType`).
    pub fn add_result(self, other: DecimalType) -> DecimalType {
        let ((p1, s1), (p2, s2)) = (self.parts(), other.parts());
        let scale = s1.max(s2);
        DecimalType::adjusted((p1 - s1).max(p2 - s2) + scale + 1, scale)
    }

    /// The type of `self * other`: `(p1 + p2 + 1, s1 + s2)`, adjusted
    /// (`findMultiplicationDecimalType`).
    pub fn mul_result(self, other: DecimalType) -> DecimalType {
        let ((p1, s1), (p2, s2)) = (self.parts(), other.parts());
        DecimalType::adjusted(p1 + p2 + 1, s1 + s2)
    }

    /// The type of `self / other`: scale `max(6, s1 + p2 + 1)`, precision
    /// `p1 - s1 + s2 + scale`, adjusted (`findDivisionDecimalType`).
    pub fn div_result(self, other: DecimalType) -> DecimalType {
        let ((p1, s1), (p2, s2)) = (self.parts(), other.parts());
        let scale = MIN_ADJUSTED_SCALE.max(s1 + p2 + 1);
        DecimalType::adjusted(p1 - s1 + s2 + scale, scale)
    }

    /// The type of `self % other`: scale `max(s1, s2)`, precision
    /// `min(p1 - s1, p2 - s2) + max(s1, s2)`, adjusted (`findModuloDecimalType`).
    pub fn rem_result(self, other: DecimalType) -> DecimalType {
        let ((p1, s1), (p2, s2)) = (self.parts(), other.parts());
        let scale = s1.max(s2);
        DecimalType::adjusted((p1 - s1).min(p2 - s2) + scale, scale)
    }

    /// The type of `SUM` over this type: `DECIMAL(38, s)` (`findSumAggType`).
    pub fn sum_result(self) -> DecimalType {
        DecimalType {
            precision: MAX_PRECISION,
            scale: self.scale,
        }
    }

    /// The type of `AVG` over this type: the sum `DECIMAL(38, s)` divided by the count as
    /// `DECIMAL(20, 0)`, which is `DECIMAL(38, max(6, s))` (`findAvgAggType`). Compute it as
    /// [`div`] of the sum (scale `s`) by the count (scale 0) into this type.
    pub fn avg_result(self) -> DecimalType {
        self.sum_result().div_result(DecimalType {
            precision: 20,
            scale: 0,
        })
    }

    fn overflow(self) -> DecimalError {
        DecimalError::Overflow {
            precision: self.precision,
            scale: self.scale,
        }
    }

    /// `value` when its magnitude `mag` has at most `precision` digits.
    fn check(self, negative: bool, mag: u128) -> Result<i128, DecimalError> {
        match pow10(self.parts().0) {
            Some(bound) if mag < bound => Ok(if negative {
                -(mag as i128)
            } else {
                mag as i128
            }),
            _ => Err(self.overflow()),
        }
    }
}

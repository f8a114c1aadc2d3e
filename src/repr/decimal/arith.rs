//! `DECIMAL` arithmetic, rescaling, comparison and integer casts on unscaled `i128` values, as
//! Flink's `DecimalDataUtils`: exact, then rounded `HALF_UP` to the result scale.

use std::cmp::Ordering;

use super::wide::U256;
use super::{mul_pow10, pow10, DecimalError, DecimalType};

fn magnitude(v: i128) -> U256 {
    U256::from_u128(v.unsigned_abs())
}

/// Rounds `±mag * 10^-scale` to `to.scale` digits, `HALF_UP` (ties away from zero), and checks
/// that it fits `to` (Flink's `DecimalData.fromBigDecimal`). `scale` is at most 76.
fn fit(negative: bool, mag: U256, scale: u32, to: DecimalType) -> Result<i128, DecimalError> {
    let to_scale = u32::from(to.scale);
    let mag = if to_scale >= scale {
        mul_pow10(mag, to_scale - scale).ok_or(to.overflow())?
    } else {
        let Some(unit) = U256::pow10(scale - to_scale) else {
            // 10^78 and beyond exceed any 256-bit magnitude: it rounds to zero.
            return to.check(negative, 0);
        };
        let (q, r) = mag.div_rem(unit);
        let half_or_more = r.checked_add(r).is_none_or(|twice| twice >= unit);
        if half_or_more {
            q.checked_add(U256::from_u128(1)).ok_or(to.overflow())?
        } else {
            q
        }
    };
    to.check(negative, mag.to_u128().ok_or(to.overflow())?)
}

fn add_signed(
    (a_neg, a): (bool, U256),
    (b_neg, b): (bool, U256),
    scale: u32,
    to: DecimalType,
) -> Result<i128, DecimalError> {
    let (negative, mag) = if a_neg == b_neg {
        (a_neg, a.checked_add(b).ok_or(to.overflow())?)
    } else if a >= b {
        (a_neg, a.sub(b))
    } else {
        (b_neg, b.sub(a))
    };
    fit(negative, mag, scale, to)
}

/// Aligns `a` (scale `a_scale`) and `b` (scale `b_scale`) to the larger scale.
fn align(
    a: i128,
    a_scale: u8,
    b: i128,
    b_scale: u8,
    to: DecimalType,
) -> Result<(U256, U256, u32), DecimalError> {
    let scale = u32::from(a_scale.max(b_scale));
    let up = |v: i128, s: u8| mul_pow10(magnitude(v), scale - u32::from(s)).ok_or(to.overflow());
    Ok((up(a, a_scale)?, up(b, b_scale)?, scale))
}

/// `a + b` into `to` (normally [`DecimalType::add_result`]), exact then rounded `HALF_UP` to
/// `to.scale` (`DecimalDataUtils.add`). Values are unscaled, each with its scale.
///
/// # Errors
/// [`DecimalError::Overflow`] when the sum has more than `to.precision` digits.
///
/// ```
/// use differential_temporal::repr::decimal::{add, DecimalType};
/// let to = DecimalType::new(5, 2).unwrap().add_result(DecimalType::new(3, 1).unwrap());
/// assert_eq!(to, DecimalType { precision: 6, scale: 2 });
/// assert_eq!(add(12_345, 2, -15, 1, to), Ok(12_195)); // 123.45 + -1.5 = 121.95
/// ```
pub fn add(
    a: i128,
    a_scale: u8,
    b: i128,
    b_scale: u8,
    to: DecimalType,
) -> Result<i128, DecimalError> {
    if a_scale == b_scale && a_scale == to.scale {
        if let Some(sum) = a.checked_add(b) {
            return to.check(sum < 0, sum.unsigned_abs());
        }
    }
    let (am, bm, scale) = align(a, a_scale, b, b_scale, to)?;
    add_signed((a < 0, am), (b < 0, bm), scale, to)
}

/// `a - b` into `to` (normally [`DecimalType::add_result`]), as [`add`]
/// (`DecimalDataUtils.subtract`).
///
/// # Errors
/// [`DecimalError::Overflow`] when the difference has more than `to.precision` digits.
pub fn sub(
    a: i128,
    a_scale: u8,
    b: i128,
    b_scale: u8,
    to: DecimalType,
) -> Result<i128, DecimalError> {
    let (am, bm, scale) = align(a, a_scale, b, b_scale, to)?;
    add_signed((a < 0, am), (b > 0, bm), scale, to)
}

/// `a * b` into `to` (normally [`DecimalType::mul_result`]): the exact product (scale
/// `a_scale + b_scale`, up to 77 digits) rounded `HALF_UP` to `to.scale`
/// (`DecimalDataUtils.multiply`).
///
/// # Errors
/// [`DecimalError::Overflow`] when the product has more than `to.precision` digits.
///
/// ```
/// use differential_temporal::repr::decimal::{mul, DecimalType};
/// let d38_10 = DecimalType::new(38, 10).unwrap();
/// let to = d38_10.mul_result(d38_10); // (77, 20) adjusted to DECIMAL(38, 6)
/// assert_eq!(to, DecimalType { precision: 38, scale: 6 });
/// // 1.0000000005 * 1.0000000005 = 1.00000000100000000025 -> 1.000000
/// assert_eq!(mul(10_000_000_005, 10, 10_000_000_005, 10, to), Ok(1_000_000));
/// ```
pub fn mul(
    a: i128,
    a_scale: u8,
    b: i128,
    b_scale: u8,
    to: DecimalType,
) -> Result<i128, DecimalError> {
    let scale = u32::from(a_scale) + u32::from(b_scale);
    if scale == u32::from(to.scale) {
        if let Some(product) = a.checked_mul(b) {
            return to.check(product < 0, product.unsigned_abs());
        }
    }
    let mag = magnitude(a)
        .checked_mul(b.unsigned_abs())
        .ok_or(to.overflow())?;
    fit((a < 0) != (b < 0), mag, scale, to)
}

/// `a / b` into `to` (normally [`DecimalType::div_result`]), as Flink's
/// `DecimalDataUtils.divide`: the quotient to 38 significant digits (`HALF_UP`), then rounded
/// `HALF_UP` to `to.scale`. That double rounding is reproduced exactly: it differs from
/// rounding once when the 38-digit quotient lands on a tie at `to.scale`.
///
/// # Errors
/// [`DecimalError::DivisionByZero`] when `b` is zero; [`DecimalError::Overflow`] when the
/// quotient has more than `to.precision` digits.
///
/// ```
/// use differential_temporal::repr::decimal::{div, DecimalType};
/// let d = DecimalType::new(1, 0).unwrap();
/// let to = d.div_result(d); // DECIMAL(7, 6)
/// assert_eq!(div(2, 0, 3, 0, to), Ok(666_667)); // 0.666667
/// ```
pub fn div(
    a: i128,
    a_scale: u8,
    b: i128,
    b_scale: u8,
    to: DecimalType,
) -> Result<i128, DecimalError> {
    if b == 0 {
        return Err(DecimalError::DivisionByZero);
    }
    if a == 0 {
        return Ok(0);
    }
    // q = a / b * 10^t = (|a| * 10^(t + sb - sa)) / |b|
    let exp = i32::from(to.scale) + i32::from(b_scale) - i32::from(a_scale);
    let (n, d) = if exp >= 0 {
        let n = mul_pow10(magnitude(a), exp.unsigned_abs()).ok_or(to.overflow())?;
        (n, magnitude(b))
    } else {
        let d = mul_pow10(magnitude(b), exp.unsigned_abs()).ok_or(to.overflow())?;
        (magnitude(a), d)
    };
    let (q, r) = n.div_rem(d);
    let q = if rounds_up(n, d, r) {
        q.checked_add(U256::from_u128(1)).ok_or(to.overflow())?
    } else {
        q
    };
    to.check((a < 0) != (b < 0), q.to_u128().ok_or(to.overflow())?)
}

/// Whether `n / d` (remainder `r`) rounds up at its last integer digit under Flink's division:
/// first to 38 significant digits, then to the integer, both `HALF_UP`.
fn rounds_up(n: U256, d: U256, r: U256) -> bool {
    // d < 2^253 so 2r cannot overflow.
    let twice_r = r.checked_add(r).unwrap_or(d);
    if twice_r >= d {
        return true;
    }
    if r.is_zero() {
        return false;
    }
    // l = floor(log10(n / d)): the quotient's leading digit is at 10^l.
    let m = n.digits() as i32 - d.digits() as i32;
    let at_least_10_m = if m >= 0 {
        mul_pow10(d, m.unsigned_abs()).is_some_and(|x| x <= n)
    } else {
        mul_pow10(n, m.unsigned_abs()).is_some_and(|x| x >= d)
    };
    let l = if at_least_10_m { m } else { m - 1 };
    // The 38-digit rounding falls `below` digits under the integer's last digit; it carries the
    // fraction r/d up to exactly one half when r/d >= 1/2 - 10^-below / 2, i.e. when
    // (d - 2r) * 10^below <= d.
    let below = 37 - l;
    below > 0 && mul_pow10(d.sub(twice_r), below.unsigned_abs()).is_some_and(|x| x <= d)
}

/// `a % b` into `to` (normally [`DecimalType::rem_result`]): the exact remainder with the sign
/// of `a`, `a - trunc(a / b) * b` (Java's `BigDecimal.remainder`, `DecimalDataUtils.mod`).
///
/// # Errors
/// [`DecimalError::DivisionByZero`] when `b` is zero; [`DecimalError::Overflow`] when the
/// remainder does not fit `to`.
pub fn rem(
    a: i128,
    a_scale: u8,
    b: i128,
    b_scale: u8,
    to: DecimalType,
) -> Result<i128, DecimalError> {
    if b == 0 {
        return Err(DecimalError::DivisionByZero);
    }
    let (am, bm, scale) = align(a, a_scale, b, b_scale, to)?;
    let (_, r) = am.div_rem(bm);
    fit(a < 0, r, scale, to)
}

/// `-value` (same type; a value within its precision always negates).
pub fn negate(value: i128) -> i128 {
    value.saturating_neg()
}

/// Casts a value of scale `scale` to `to` (`CAST(... AS DECIMAL(p, s))`,
/// `DecimalDataUtils.castToDecimal`): rounded `HALF_UP` to `to.scale`.
///
/// # Errors
/// [`DecimalError::Overflow`] when the value has more than `to.precision` digits.
///
/// ```
/// use differential_temporal::repr::decimal::{rescale, DecimalType};
/// let to = DecimalType::new(5, 1).unwrap();
/// assert_eq!(rescale(-1_25, 2, to), Ok(-13)); // -1.25 -> -1.3
/// assert!(rescale(123_456, 0, to).is_err());
/// ```
pub fn rescale(value: i128, scale: u8, to: DecimalType) -> Result<i128, DecimalError> {
    if scale == to.scale {
        return to.check(value < 0, value.unsigned_abs());
    }
    fit(value < 0, magnitude(value), u32::from(scale), to)
}

/// Compares `a` (scale `a_scale`) with `b` (scale `b_scale`) by value, so `1.50` equals `1.5`
/// (`DecimalData.compareTo`).
pub fn compare(a: i128, a_scale: u8, b: i128, b_scale: u8) -> Ordering {
    // Scaling the value with fewer fraction digits up; past i128 it outweighs the other side.
    let scaled_cmp = |x: i128, k: u8, y: i128| match pow10(u32::from(k))
        .and_then(|p| x.checked_mul(p as i128))
    {
        Some(x) => x.cmp(&y),
        None if x < 0 => Ordering::Less,
        None => Ordering::Greater,
    };
    match a_scale.cmp(&b_scale) {
        Ordering::Equal => a.cmp(&b),
        Ordering::Less => scaled_cmp(a, b_scale - a_scale, b),
        Ordering::Greater => scaled_cmp(b, a_scale - b_scale, a).reverse(),
    }
}

/// Casts an integer (TINYINT to BIGINT) to `to` (`DecimalDataUtils.castFrom(long, p, s)`).
///
/// # Errors
/// [`DecimalError::Overflow`] when `v` has more than `to.precision - to.scale` digits.
pub fn from_i64(v: i64, to: DecimalType) -> Result<i128, DecimalError> {
    fit(v < 0, magnitude(i128::from(v)), 0, to)
}

/// Casts a value of scale `scale` to BIGINT, dropping the fraction (toward zero), as
/// `DecimalDataUtils.castToIntegral` (`RoundingMode.DOWN`).
///
/// # Errors
/// [`DecimalError::OutOfRange`] past the `i64` range (where Flink's `longValue` would wrap).
pub fn to_i64(value: i128, scale: u8) -> Result<i64, DecimalError> {
    let whole = pow10(u32::from(scale)).map_or(0, |p| value / p as i128);
    i64::try_from(whole).map_err(|_| DecimalError::OutOfRange { target: "BIGINT" })
}

//! DECIMAL arithmetic on `i128` unscaled values, as the expressions need it: Flink's result
//! precision and scale rules (`LogicalTypeMerging`), HALF_UP rounding, overflow as `None`.
//!
//! A stand-in until `repr::decimal` lands (branch `repr-time`); the call sites then move to it.

use crate::repr::DataType;

/// The largest precision (Flink's `DecimalType.MAX_PRECISION`).
pub const MAX_PRECISION: u8 = 38;

/// Flink's `LogicalTypeMerging.MINIMUM_ADJUSTED_SCALE`.
const MINIMUM_ADJUSTED_SCALE: i32 = 6;

/// `10^n` for `n <= 38`.
pub fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Whether `v` has at most `precision` digits.
pub fn fits(v: i128, precision: u8) -> bool {
    match pow10(precision as u32) {
        Some(limit) => v.unsigned_abs() < limit as u128,
        None => true,
    }
}

/// `v` at scale `from` rescaled to scale `to`, rounding HALF_UP when digits are dropped;
/// `None` on overflow.
pub fn rescale(v: i128, from: u8, to: u8) -> Option<i128> {
    if to >= from {
        v.checked_mul(pow10((to - from) as u32)?)
    } else {
        let Some(d) = pow10((from - to) as u32) else {
            return Some(0);
        };
        Some(div_half_up(v, d))
    }
}

/// `n / d` rounded HALF_UP (half away from zero); `d != 0`.
pub fn div_half_up(n: i128, d: i128) -> i128 {
    let q = n / d;
    let r = n % d;
    if r.unsigned_abs() >= d.unsigned_abs() - r.unsigned_abs() {
        if (n < 0) != (d < 0) {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    }
}

/// `v` at scale `s` as a double.
pub fn to_f64(v: i128, s: u8) -> f64 {
    v as f64 / 10f64.powi(s as i32)
}

/// `x` as DECIMAL(p, s), rounding HALF_UP; `None` when NaN, infinite or too large.
pub fn from_f64(x: f64, precision: u8, scale: u8) -> Option<i128> {
    if !x.is_finite() {
        return None;
    }
    let scaled = (x * 10f64.powi(scale as i32)).round();
    if scaled.abs() >= 1e38 {
        return None;
    }
    let v = scaled as i128;
    fits(v, precision).then_some(v)
}

/// The precision and scale an integer type has as a DECIMAL (Flink: TINYINT is DECIMAL(3, 0),
/// SMALLINT (5, 0), INT (10, 0), BIGINT (19, 0)).
pub fn integer_precision(ty: &DataType) -> Option<(u8, u8)> {
    Some(match ty {
        DataType::TinyInt => (3, 0),
        DataType::SmallInt => (5, 0),
        DataType::Int => (10, 0),
        DataType::BigInt => (19, 0),
        DataType::Decimal { precision, scale } => (*precision, *scale),
        _ => return None,
    })
}

/// Flink's `adjustPrecisionScale`: past 38 digits, keep the integral digits and reduce the
/// scale, but to no less than `min(scale, 6)`.
fn adjust(precision: i32, scale: i32) -> (u8, u8) {
    if precision <= MAX_PRECISION as i32 {
        (precision as u8, scale as u8)
    } else {
        let digits = precision - scale;
        let min_scale = scale.min(MINIMUM_ADJUSTED_SCALE);
        let scale = (MAX_PRECISION as i32 - digits).max(min_scale);
        (MAX_PRECISION, scale as u8)
    }
}

/// `e1 + e2`, `e1 - e2`: precision `max(s1, s2) + max(p1-s1, p2-s2) + 1`, scale `max(s1, s2)`
/// (`LogicalTypeMerging.findAdditionDecimalType`).
pub fn addition_type(p1: u8, s1: u8, p2: u8, s2: u8) -> (u8, u8) {
    let (p1, s1, p2, s2) = (p1 as i32, s1 as i32, p2 as i32, s2 as i32);
    let scale = s1.max(s2);
    adjust((p1 - s1).max(p2 - s2) + scale + 1, scale)
}

/// `e1 * e2`: precision `p1 + p2 + 1`, scale `s1 + s2` (`findMultiplicationDecimalType`).
pub fn multiplication_type(p1: u8, s1: u8, p2: u8, s2: u8) -> (u8, u8) {
    adjust(p1 as i32 + p2 as i32 + 1, s1 as i32 + s2 as i32)
}

/// `e1 / e2`: scale `max(6, s1 + p2 + 1)`, precision `p1 - s1 + s2 + scale`
/// (`findDivisionDecimalType`).
pub fn division_type(p1: u8, s1: u8, p2: u8, s2: u8) -> (u8, u8) {
    let scale = MINIMUM_ADJUSTED_SCALE.max(s1 as i32 + p2 as i32 + 1);
    adjust(p1 as i32 - s1 as i32 + s2 as i32 + scale, scale)
}

/// `e1 % e2`: precision `min(p1-s1, p2-s2) + max(s1, s2)`, scale `max(s1, s2)`
/// (`findModuloDecimalType`).
pub fn modulo_type(p1: u8, s1: u8, p2: u8, s2: u8) -> (u8, u8) {
    let scale = s1.max(s2) as i32;
    let digits = (p1 as i32 - s1 as i32).min(p2 as i32 - s2 as i32);
    adjust((digits + scale).max(1), scale)
}

/// SUM(DECIMAL(p, s)) is DECIMAL(38, s) (`findSumAggType`).
pub fn sum_type(s: u8) -> (u8, u8) {
    (MAX_PRECISION, s)
}

/// AVG(DECIMAL(p, s)) is the division of DECIMAL(38, s) by DECIMAL(20, 0), i.e.
/// DECIMAL(38, max(6, s)) (`findAvgAggType`).
pub fn avg_type(s: u8) -> (u8, u8) {
    division_type(MAX_PRECISION, s, 20, 0)
}

/// `(a at s1) / (b at s2)` at scale `s`, HALF_UP; `None` on overflow; `b != 0`.
pub fn divide(a: i128, s1: u8, b: i128, s2: u8, s: u8) -> Option<i128> {
    // a / b * 10^(s - s1 + s2): scale the dividend up (or the divisor when negative).
    let shift = s as i32 - s1 as i32 + s2 as i32;
    if shift >= 0 {
        Some(div_half_up(a.checked_mul(pow10(shift as u32)?)?, b))
    } else {
        Some(div_half_up(a, b.checked_mul(pow10((-shift) as u32)?)?))
    }
}

/// Parses a SQL exact numeric literal (`-12.30`): its unscaled value, precision and scale
/// (precision = all digits written, at least 1 and at least the scale). `None` past 38 digits.
pub fn parse_literal(text: &str) -> Option<(i128, u8, u8)> {
    let text = text.trim();
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = match digits.split_once('.') {
        Some((int, frac)) => (int, frac),
        None => (digits, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut value: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add((b - b'0') as i128)?;
    }
    let scale = u8::try_from(frac.len()).ok()?;
    let int_digits = int.trim_start_matches('0').len();
    let precision = (int_digits + frac.len()).max(1).max(scale as usize);
    if precision > MAX_PRECISION as usize {
        return None;
    }
    Some((
        if negative { -value } else { value },
        precision as u8,
        scale,
    ))
}

/// Parses decimal text, optionally with an exponent as Java's `BigDecimal` reads it
/// (`1.5E3`): the unscaled value and its scale (negative for `1E3`, which is `1 * 10^3`).
pub fn parse_exact(text: &str) -> Option<(i128, i32)> {
    let text = text.trim();
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (value, _, s) = parse_literal(mantissa)?;
    Some((value, s as i32 - exponent))
}

/// Parses decimal text (see [`parse_exact`]) into the unscaled value at scale `scale`,
/// HALF_UP, checked against `precision`.
pub fn parse_as(text: &str, precision: u8, scale: u8) -> Option<i128> {
    let (value, s) = parse_exact(text)?;
    let v = to_scale(value, s, scale as i32)?;
    fits(v, precision).then_some(v)
}

/// `value` at scale `s` brought to scale `t` (HALF_UP when digits are dropped); `None` on
/// overflow.
pub fn to_scale(value: i128, s: i32, t: i32) -> Option<i128> {
    if s <= t {
        value.checked_mul(pow10(u32::try_from(t - s).ok()?)?)
    } else if s - t > MAX_PRECISION as i32 {
        Some(0)
    } else {
        Some(div_half_up(value, pow10((s - t) as u32)?))
    }
}

/// Writes `v` at scale `s` as plain text with exactly `s` digits after the point (Flink
/// prints DECIMAL(10, 2) `1.5` as `1.50`).
pub fn write(out: &mut impl std::fmt::Write, v: i128, s: u8) -> std::fmt::Result {
    if v < 0 {
        out.write_char('-')?;
    }
    let magnitude = v.unsigned_abs();
    if s == 0 {
        return write!(out, "{magnitude}");
    }
    let d = 10u128.pow(s as u32);
    write!(
        out,
        "{}.{:0width$}",
        magnitude / d,
        magnitude % d,
        width = s as usize
    )
}

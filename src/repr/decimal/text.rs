//! `DECIMAL` text (Flink's cast from STRING, and how it prints) and casts from and to `DOUBLE`,
//! which go through the shortest decimal text as Java's `BigDecimal.valueOf(double)` does.

use std::fmt;

use super::{pow10, DecimalError, DecimalType};

/// Casts a double to `to` as `DecimalDataUtils.castFrom(double, p, s)`: the shortest decimal
/// that reads back as `v` (Java's `BigDecimal.valueOf(double)`), rounded `HALF_UP`.
///
/// # Errors
/// [`DecimalError::NotFinite`] for NaN and infinities; [`DecimalError::Overflow`] when the value
/// has more than `to.precision - to.scale` integer digits.
pub fn from_f64(v: f64, to: DecimalType) -> Result<i128, DecimalError> {
    if !v.is_finite() {
        return Err(DecimalError::NotFinite);
    }
    let mut buf = StackText::new();
    // `{:e}` is the shortest round-trip form, at most ~25 bytes.
    fmt::Write::write_fmt(&mut buf, format_args!("{v:e}")).map_err(|_| to.overflow())?;
    parse_decimal(buf.as_str(), to)
}

/// The double nearest to the value (`DecimalDataUtils.doubleValue`; correctly rounded like
/// `BigDecimal.doubleValue`, where Flink's compact path for precision <= 18 divides two doubles).
pub fn to_f64(value: i128, scale: u8) -> f64 {
    let mut buf = StackText::new();
    match format_decimal(&mut buf, value, scale) {
        Ok(()) => buf.as_str().parse().unwrap_or(f64::NAN),
        // Only a scale beyond the buffer (far past 38) gets here.
        Err(_) => value as f64 / 10f64.powi(i32::from(scale)),
    }
}

/// A fixed buffer for short numeric text, so casts do not allocate.
struct StackText {
    bytes: [u8; 96],
    len: usize,
}

impl StackText {
    fn new() -> Self {
        StackText {
            bytes: [0; 96],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only `write_str` fills the buffer, with whole `&str`s.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Parses text into an unscaled value of `to`, as Flink's `CAST(... AS DECIMAL(p, s))`
/// (`BinaryStringDataUtil.toDecimal`): spaces, tabs and newlines around the number are ignored;
/// the number is `[+|-]digits[.digits][(e|E)[+|-]digits]` with at least one mantissa digit
/// (`-12.345`, `+1`, `.5`, `5.`, `1e3`, `1.5E-2`). Digits beyond `to.scale` round `HALF_UP`
/// (ties away from zero).
///
/// # Errors
/// [`DecimalError::Parse`] for text that is not such a number (Flink: NULL);
/// [`DecimalError::Overflow`] for more integer digits than `to.precision - to.scale`.
///
/// ```
/// use differential_temporal::repr::decimal::{parse_decimal, DecimalType};
/// let to = DecimalType::new(6, 2).unwrap();
/// assert_eq!(parse_decimal("-12.345", to), Ok(-1_235));
/// assert_eq!(parse_decimal(" .5 ", to), Ok(50));
/// assert_eq!(parse_decimal("1e3", to), Ok(100_000));
/// assert!(parse_decimal("12345", to).is_err());
/// ```
pub fn parse_decimal(text: &str, to: DecimalType) -> Result<i128, DecimalError> {
    let bad = |reason| DecimalError::Parse {
        text: text.to_string(),
        reason,
    };
    let s = text.trim_matches([' ', '\t', '\n']).as_bytes();
    let mut i = 0;
    let negative = s.first() == Some(&b'-');
    if matches!(s.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let mantissa_start = i;
    let mut point = None;
    while let Some(&b) = s.get(i) {
        match b {
            b'0'..=b'9' => {}
            b'.' if point.is_none() => point = Some(i),
            _ => break,
        }
        i += 1;
    }
    let mantissa = &s[mantissa_start..i];
    let digit_count = mantissa.len() - usize::from(point.is_some());
    if digit_count == 0 {
        return Err(bad("expected digits"));
    }
    let fraction_digits = point.map_or(0, |p| i - p - 1);
    let mut exponent: i64 = 0;
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        let exp_negative = s.get(i) == Some(&b'-');
        if matches!(s.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let start = i;
        while let Some(&b @ b'0'..=b'9') = s.get(i) {
            // Saturate: any exponent this large overflows or rounds to zero anyway.
            exponent = (exponent * 10 + i64::from(b - b'0')).min(100_000);
            i += 1;
        }
        if i == start {
            return Err(bad("expected exponent digits after 'e'"));
        }
        if exp_negative {
            exponent = -exponent;
        }
    }
    if i != s.len() {
        return Err(bad("unexpected character"));
    }
    // The value is D * 10^(exponent - fraction_digits) for the mantissa digits D; its unscaled
    // form is D * 10^shift, dropping -shift digits (HALF_UP on the first dropped) when negative.
    let shift = exponent - fraction_digits as i64 + i64::from(to.scale);
    let keep = digit_count as i64 + shift.min(0);
    let mut value = 0u128;
    let mut round_up = false;
    for (k, digit) in mantissa
        .iter()
        .filter(|b| b.is_ascii_digit())
        .map(|b| u128::from(b - b'0'))
        .enumerate()
    {
        if (k as i64) < keep {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(digit))
                .ok_or(to.overflow())?;
        } else {
            round_up = k as i64 == keep && digit >= 5;
            break;
        }
    }
    value = value
        .checked_add(u128::from(round_up))
        .ok_or(to.overflow())?;
    if shift > 0 && value != 0 {
        value = u32::try_from(shift)
            .ok()
            .and_then(pow10)
            .and_then(|p| value.checked_mul(p))
            .ok_or(to.overflow())?;
    }
    to.check(negative, value)
}

/// Writes an unscaled value of scale `scale` as Flink prints `DECIMAL(p, s)`
/// (`DecimalData.toString`, `BigDecimal.toPlainString`): an optional `-`, the integer digits
/// (at least `0`), and for `s > 0` a point and exactly `s` fraction digits (`1238.00`, `-0.05`).
///
/// ```
/// use differential_temporal::repr::decimal::format_decimal;
/// let mut s = String::new();
/// format_decimal(&mut s, 123_800, 2).unwrap();
/// assert_eq!(s, "1238.00");
/// ```
pub fn format_decimal(out: &mut impl fmt::Write, value: i128, scale: u8) -> fmt::Result {
    let mag = value.unsigned_abs();
    if value < 0 {
        out.write_char('-')?;
    }
    let width = usize::from(scale);
    match pow10(u32::from(scale)) {
        Some(_) if scale == 0 => write!(out, "{mag}"),
        Some(unit) => write!(out, "{}.{:0width$}", mag / unit, mag % unit),
        // Beyond 38 fraction digits every i128 is below one.
        None => write!(out, "0.{mag:0width$}"),
    }
}

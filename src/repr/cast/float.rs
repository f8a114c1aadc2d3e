//! FLOAT and DOUBLE as text, the way Java's `Float.toString` / `Double.toString` write them
//! (Flink prints floating-point values with Java's rules, and its CSV format writes them so).
//!
//! The digits are the shortest that read back to the same value (Rust's formatting and Java 19+
//! agree on them); the layout is Java's: plain `123.0` / `0.001` for magnitudes in
//! `[1e-3, 1e7)`, otherwise computerized scientific notation `1.0E7` / `1.234E-5`, always with
//! at least one digit after the point; `NaN`, `Infinity`, `-Infinity`; `-0.0`.

use std::fmt::{self, Write};

/// A fixed buffer for the digits of one value (`{:e}` of an `f64` is at most 24 bytes).
struct Digits {
    buf: [u8; 40],
    len: usize,
}

impl Write for Digits {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes a DOUBLE as Java's `Double.toString` does.
pub(super) fn write_double(v: f64, out: &mut impl Write) -> fmt::Result {
    if !v.is_finite() {
        return write_special(v.is_nan(), v < 0.0, out);
    }
    let mut digits = Digits {
        buf: [0; 40],
        len: 0,
    };
    write!(digits, "{v:e}")?;
    write_java(&digits.buf[..digits.len], out)
}

/// Writes a FLOAT (held as `f64`) as Java's `Float.toString` does: the shortest digits of the
/// `f32` value.
pub(super) fn write_float(v: f64, out: &mut impl Write) -> fmt::Result {
    let v = v as f32;
    if !v.is_finite() {
        return write_special(v.is_nan(), v < 0.0, out);
    }
    let mut digits = Digits {
        buf: [0; 40],
        len: 0,
    };
    write!(digits, "{v:e}")?;
    write_java(&digits.buf[..digits.len], out)
}

fn write_special(nan: bool, negative: bool, out: &mut impl Write) -> fmt::Result {
    out.write_str(match (nan, negative) {
        (true, _) => "NaN",
        (false, false) => "Infinity",
        (false, true) => "-Infinity",
    })
}

/// Rewrites Rust's shortest scientific form `[-]d[.ddd]e[-]x` in Java's layout.
fn write_java(sci: &[u8], out: &mut impl Write) -> fmt::Result {
    let text = std::str::from_utf8(sci).map_err(|_| fmt::Error)?;
    let (mantissa, exponent) = text.split_once('e').ok_or(fmt::Error)?;
    let exponent: i32 = exponent.parse().map_err(|_| fmt::Error)?;
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let (lead, rest) = mantissa.split_at(1);
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    if negative {
        out.write_char('-')?;
    }
    if lead == "0" {
        return out.write_str("0.0");
    }
    if (-3..7).contains(&exponent) {
        // Plain notation: all digits `lead rest`, with the point after `exponent + 1` of them.
        if exponent < 0 {
            out.write_str("0.")?;
            for _ in 0..(-exponent - 1) {
                out.write_char('0')?;
            }
            out.write_str(lead)?;
            out.write_str(rest)
        } else {
            let whole = exponent as usize;
            out.write_str(lead)?;
            if rest.len() <= whole {
                out.write_str(rest)?;
                for _ in rest.len()..whole {
                    out.write_char('0')?;
                }
                out.write_str(".0")
            } else {
                out.write_str(&rest[..whole])?;
                out.write_char('.')?;
                out.write_str(&rest[whole..])
            }
        }
    } else {
        out.write_str(lead)?;
        out.write_char('.')?;
        out.write_str(if rest.is_empty() { "0" } else { rest })?;
        write!(out, "E{exponent}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(v: f64) -> String {
        let mut s = String::new();
        write_double(v, &mut s).unwrap();
        s
    }

    fn float(v: f32) -> String {
        let mut s = String::new();
        write_float(f64::from(v), &mut s).unwrap();
        s
    }

    #[test]
    fn doubles_as_java_writes_them() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-1.5, "-1.5"),
            (100.0, "100.0"),
            (123.456, "123.456"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1234567.0, "1234567.0"),
            (1e7, "1.0E7"),
            (12345678.9, "1.23456789E7"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::MAX, "1.7976931348623157E308"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (v, text) in cases {
            assert_eq!(double(v), text, "{v:?}");
        }
    }

    #[test]
    fn floats_use_the_shortest_f32_digits() {
        assert_eq!(float(0.1), "0.1");
        assert_eq!(float(1.0e10), "1.0E10");
        assert_eq!(float(3.4028235e38), "3.4028235E38");
        assert_eq!(float(-2.5e-5), "-2.5E-5");
    }
}

//! Time: event times in the CSV layer, and the values of Flink's SQL time types.
//!
//! - **Event time** ([`EventTime`], [`parse_event_time`], [`TimeFormat`]): `i64` milliseconds
//!   since the Unix epoch (UTC), read from any of the text forms below and printed back in the
//!   form it was read in.
//! - **SQL types** (Flink semantics): `DATE` is an `i32` of days since 1970-01-01, `TIME(p)` an
//!   `i64` of nanoseconds of the day, `TIMESTAMP(p)` and `TIMESTAMP_LTZ(p)` a [`Ts`] (Flink's
//!   `TimestampData`), `p` in 0..=9, years 0000-9999. Parsers ([`parse_date`], [`parse_time`],
//!   [`parse_timestamp`], [`parse_timestamp_ltz`]) follow Flink's cast from STRING, formatters
//!   ([`format_date`], [`format_time`], [`format_timestamp`], [`format_timestamp_ltz`]) its cast
//!   to STRING, which is what the SQL client prints.
//!
//! Event-time text forms (see [`parse_event_time`]):
//!
//! | form | example | meaning |
//! |---|---|---|
//! | `YYYY-MM-DD HH:MM:SS[.fff]` | `2024-03-01 10:15:00.250` | a UTC wall-clock timestamp (Flink `TIMESTAMP(3)`, no zone) |
//! | `YYYY-MM-DDTHH:MM[:SS[.fff]]` with optional `Z` / `+HH:MM` / `-HH:MM` | `2024-03-01T10:15:00+02:00` | ISO 8601; with an offset it is an instant (`TIMESTAMP_LTZ`) |
//! | `YYYY-MM-DD` | `2024-03-01` | a date (Flink `DATE`): midnight UTC of that day |
//! | `HH:MM[:SS[.fff]]` | `12:00:00` | a time of day: milliseconds since midnight (the seed examples' convention) |
//! | `[-]digits` | `1700000000000` | milliseconds since the epoch |
//!
//! Fractions of a second keep their first three digits (further digits are truncated toward the
//! past, as a cast to `TIMESTAMP(3)` does). A value before 1970 is negative.
//!
//! Every parse also yields the value's [`TimeFormat`], which renders another event time in the
//! same form: used to print computed times (a history's `valid_to`) like the column they came from.

use std::fmt::Write as _;

use chrono::{DateTime, NaiveDate, NaiveTime, Timelike};
use thiserror::Error;

mod text;
mod ts;

pub use text::{
    format_date, format_time, format_timestamp, format_timestamp_ltz, parse_date, parse_time,
    parse_timestamp, parse_timestamp_ltz,
};
pub use ts::{
    days_in_month, days_to_ymd, is_leap_year, truncate_time_to_precision, truncate_to_precision,
    ymd_to_days, Ts, MAX_PRECISION, MILLIS_PER_DAY, NANOS_PER_DAY, NANOS_PER_MILLI,
};

/// An event time: milliseconds since 1970-01-01T00:00:00Z (negative before).
pub type EventTime = i64;

/// A time value (an event time or a SQL date/time literal) that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("invalid event time {value:?}: {reason}")]
pub struct TimeError {
    /// The text that failed.
    pub value: String,
    /// What was wrong with it.
    pub reason: String,
}

impl TimeError {
    fn new(value: &str, reason: impl Into<String>) -> Self {
        TimeError {
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// A UTC offset as written in an ISO timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offset {
    /// `Z`.
    Zulu,
    /// `+HH:MM` / `-HH:MM`, in minutes east of UTC.
    Minutes(i32),
}

/// The textual form of an event-time value, used to print other event times the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeFormat {
    /// Integer milliseconds since the epoch.
    Millis,
    /// A time of day `HH:MM[:SS[.f..]]`.
    TimeOfDay {
        /// Whether seconds were written.
        seconds: bool,
        /// Number of fraction digits written (0 = none).
        fraction: u8,
    },
    /// A date alone, `YYYY-MM-DD` (SQL `DATE`): midnight UTC of that day.
    Date,
    /// A date and time `YYYY-MM-DD?HH:MM[:SS[.f..]][offset]`.
    DateTime {
        /// The separator between date and time: `' '` or `'T'`.
        separator: char,
        /// Whether seconds were written.
        seconds: bool,
        /// Number of fraction digits written (0 = none).
        fraction: u8,
        /// The offset written after the time, if any.
        offset: Option<Offset>,
    },
}

/// Parses an event time (any form in the module docs) into milliseconds since the epoch.
///
/// # Examples
/// ```
/// use differential_temporal::repr::time::parse_event_time;
/// assert_eq!(parse_event_time("1970-01-01 00:00:01.5").unwrap(), 1_500);
/// assert_eq!(parse_event_time("12:00").unwrap(), 12 * 3_600_000);
/// assert_eq!(parse_event_time("1970-01-01T01:00:00+01:00").unwrap(), 0);
/// assert_eq!(parse_event_time("-3").unwrap(), -3);
/// assert!(parse_event_time("12:61").is_err());
/// ```
pub fn parse_event_time(text: &str) -> Result<EventTime, TimeError> {
    parse_with_format(text).map(|(t, _)| t)
}

/// Parses an event time and reports the form it was written in.
pub fn parse_with_format(text: &str) -> Result<(EventTime, TimeFormat), TimeError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(TimeError::new(text, "empty value"));
    }
    let b = s.as_bytes();
    let is_digits = |r: &[u8]| r.iter().all(u8::is_ascii_digit);
    let integer = s.strip_prefix('-').unwrap_or(s);
    if !integer.is_empty() && is_digits(integer.as_bytes()) {
        return s
            .parse::<i64>()
            .map(|t| (t, TimeFormat::Millis))
            .map_err(|_| TimeError::new(text, "integer milliseconds out of range for i64"));
    }
    if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        parse_date_time(text, s)
    } else if b.len() >= 5 && b[2] == b':' {
        let (ms, seconds, fraction) = parse_clock(text, s)?;
        Ok((ms, TimeFormat::TimeOfDay { seconds, fraction }))
    } else {
        Err(TimeError::new(
            text,
            "expected YYYY-MM-DD, YYYY-MM-DD HH:MM:SS[.fff], YYYY-MM-DDTHH:MM[:SS[.fff]][Z|+HH:MM], HH:MM[:SS[.fff]] or integer milliseconds",
        ))
    }
}

/// Parses `YYYY-MM-DD` + separator + clock + optional offset.
fn parse_date_time(original: &str, s: &str) -> Result<(EventTime, TimeFormat), TimeError> {
    let number = |r: &str, what: &str| -> Result<u32, TimeError> {
        if r.bytes().all(|c| c.is_ascii_digit()) && !r.is_empty() {
            r.parse::<u32>()
                .map_err(|_| TimeError::new(original, format!("bad {what}")))
        } else {
            Err(TimeError::new(original, format!("bad {what} {r:?}")))
        }
    };
    let year = number(&s[0..4], "year")? as i32;
    let month = number(&s[5..7], "month")?;
    let day = number(s.get(8..10).unwrap_or(""), "day")?;
    let date = NaiveDate::from_ymd_opt(year, month, day)
        .ok_or_else(|| TimeError::new(original, "no such date"))?;
    let midnight = date
        .and_hms_opt(0, 0, 0)
        .map(|d| d.and_utc().timestamp_millis())
        .ok_or_else(|| TimeError::new(original, "date out of range"))?;
    let rest = &s[10..];
    let separator = match rest.chars().next() {
        Some(c @ (' ' | 'T')) => c,
        None => return Ok((midnight, TimeFormat::Date)),
        Some(c) => {
            return Err(TimeError::new(
                original,
                format!("expected ' ' or 'T' after the date, found {c:?}"),
            ))
        }
    };
    let rest = &rest[1..];
    let (clock, offset) = split_offset(original, rest)?;
    let (ms_of_day, seconds, fraction) = parse_clock(original, clock)?;
    let shift = match offset {
        Some(Offset::Minutes(m)) => i64::from(m) * 60_000,
        _ => 0,
    };
    let format = TimeFormat::DateTime {
        separator,
        seconds,
        fraction,
        offset,
    };
    Ok((midnight + ms_of_day - shift, format))
}

/// Splits a trailing `Z` / `+HH:MM` / `-HH:MM` / `+HH` offset from a clock.
fn split_offset<'a>(original: &str, rest: &'a str) -> Result<(&'a str, Option<Offset>), TimeError> {
    if let Some(clock) = rest.strip_suffix('Z') {
        return Ok((clock, Some(Offset::Zulu)));
    }
    // A sign after the minutes (position >= 5) starts an offset.
    let Some(pos) = rest.rfind(['+', '-']).filter(|&p| p >= 5) else {
        return Ok((rest, None));
    };
    let (clock, off) = rest.split_at(pos);
    let sign = if off.starts_with('-') { -1 } else { 1 };
    let digits = &off[1..];
    // Only ASCII from here on: slicing by byte positions is then safe.
    if !digits.bytes().all(|c| c.is_ascii_digit() || c == b':') {
        return Err(TimeError::new(original, format!("bad UTC offset {off:?}")));
    }
    let (h, m) = match digits.len() {
        2 => (digits, "00"),
        4 => (&digits[0..2], &digits[2..4]),
        5 if digits.as_bytes()[2] == b':' => (&digits[0..2], &digits[3..5]),
        _ => return Err(TimeError::new(original, format!("bad UTC offset {off:?}"))),
    };
    let parse = |x: &str| {
        x.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| x.parse::<i32>().ok())
            .flatten()
    };
    match (parse(h), parse(m)) {
        (Some(h), Some(m)) if h <= 18 && m < 60 => {
            Ok((clock, Some(Offset::Minutes(sign * (h * 60 + m)))))
        }
        _ => Err(TimeError::new(original, format!("bad UTC offset {off:?}"))),
    }
}

/// Parses `HH:MM[:SS[.f..]]` into milliseconds since midnight, whether seconds were present and
/// the number of fraction digits.
fn parse_clock(original: &str, s: &str) -> Result<(i64, bool, u8), TimeError> {
    let bad = || TimeError::new(original, "expected a time of day HH:MM[:SS[.fff]]");
    let (hms, frac) = match s.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (s, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&parts.len())
        || parts
            .iter()
            .any(|p| p.len() != 2 || !p.bytes().all(|c| c.is_ascii_digit()))
        || (frac.is_some() && parts.len() != 3)
    {
        return Err(bad());
    }
    let field = |i: usize| parts.get(i).map_or(0, |p| p.parse::<u32>().unwrap_or(99));
    let (h, m, sec) = (field(0), field(1), field(2));
    let nanos = match frac {
        None => 0,
        Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|c| c.is_ascii_digit()) => {
            f.parse::<u32>().map_err(|_| bad())? * 10u32.pow(9 - f.len() as u32)
        }
        Some(_) => return Err(bad()),
    };
    let time = NaiveTime::from_hms_nano_opt(h, m, sec, nanos)
        .filter(|t| t.second() < 60 && t.nanosecond() < 1_000_000_000)
        .ok_or_else(|| TimeError::new(original, "time of day out of range"))?;
    let ms = i64::from(time.num_seconds_from_midnight()) * 1000 + i64::from(nanos / 1_000_000);
    Ok((ms, parts.len() == 3, frac.map_or(0, |f| f.len() as u8)))
}

impl TimeFormat {
    /// Renders `t` in this form. A value the form cannot show (a time of day outside one day,
    /// a date outside chrono's range) is rendered as integer milliseconds instead.
    ///
    /// # Examples
    /// ```
    /// use differential_temporal::repr::time::parse_with_format;
    /// let (_, f) = parse_with_format("00:01:00").unwrap();
    /// assert_eq!(f.render(12 * 3_600_000), "12:00:00");
    /// let (_, f) = parse_with_format("2024-01-01T00:00:00.000+01:00").unwrap();
    /// assert_eq!(f.render(0), "1970-01-01T01:00:00.000+01:00");
    /// ```
    pub fn render(&self, t: EventTime) -> String {
        match *self {
            TimeFormat::Millis => t.to_string(),
            TimeFormat::TimeOfDay { seconds, fraction } => {
                if !(0..MILLIS_PER_DAY).contains(&t) {
                    return t.to_string();
                }
                let mut out = String::new();
                push_clock(&mut out, t, seconds, fraction);
                out
            }
            TimeFormat::Date => match DateTime::from_timestamp_millis(t) {
                Some(d) if t.rem_euclid(MILLIS_PER_DAY) == 0 => d.format("%Y-%m-%d").to_string(),
                // Not a whole day: show the time of day too.
                _ => TimeFormat::DateTime {
                    separator: ' ',
                    seconds: true,
                    fraction: 3,
                    offset: None,
                }
                .render(t),
            },
            TimeFormat::DateTime {
                separator,
                seconds,
                fraction,
                offset,
            } => {
                let shift = match offset {
                    Some(Offset::Minutes(m)) => i64::from(m) * 60_000,
                    _ => 0,
                };
                let Some(local) = t
                    .checked_add(shift)
                    .and_then(DateTime::from_timestamp_millis)
                else {
                    return t.to_string();
                };
                let day_ms = local.timestamp_millis().rem_euclid(MILLIS_PER_DAY);
                let mut out = local.date_naive().format("%Y-%m-%d").to_string();
                out.push(separator);
                push_clock(&mut out, day_ms, seconds, fraction);
                match offset {
                    None => {}
                    Some(Offset::Zulu) => out.push('Z'),
                    Some(Offset::Minutes(m)) => {
                        let sign = if m < 0 { '-' } else { '+' };
                        let m = m.abs();
                        let _ = write!(out, "{sign}{:02}:{:02}", m / 60, m % 60);
                    }
                }
                out
            }
        }
    }
}

/// Appends `HH:MM[:SS[.fff]]` for `ms` milliseconds since midnight (`0 <= ms < 1 day`).
fn push_clock(out: &mut String, ms: i64, seconds: bool, fraction: u8) {
    let (h, m, s, milli) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    let _ = write!(out, "{h:02}:{m:02}");
    if seconds || milli != 0 || s != 0 {
        let _ = write!(out, ":{s:02}");
    }
    if fraction > 0 || milli != 0 {
        let digits = format!("{milli:03}");
        let shown = usize::from(fraction.max(1));
        if shown <= 3 && milli % 10i64.pow(3 - shown as u32) == 0 {
            out.push('.');
            out.push_str(&digits[..shown]);
        } else {
            out.push('.');
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', shown.saturating_sub(3)));
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod event_tests {
    use super::*;

    const H: i64 = 3_600_000;

    #[test]
    fn parses_every_form() {
        let cases: [(&str, i64); 14] = [
            ("1970-01-02", 24 * H),
            ("2024-02-29", 1_709_164_800_000),
            ("0", 0),
            ("1700000000123", 1_700_000_000_123),
            ("-1", -1),
            ("00:01:00", 60_000),
            ("12:00", 12 * H),
            ("23:59:59.999", 24 * H - 1),
            ("1970-01-01 00:00:00.001", 1),
            ("1970-01-01T00:00:00.003", 3),
            ("2024-02-29 12:00:00", 1_709_208_000_000),
            ("2024-02-29T12:00Z", 1_709_208_000_000),
            ("2024-02-29T14:00:00+02:00", 1_709_208_000_000),
            ("2024-02-29T07:30:00.5-04:30", 1_709_208_000_500),
        ];
        for (text, ms) in cases {
            assert_eq!(parse_event_time(text), Ok(ms), "{text}");
        }
    }

    #[test]
    fn before_1970_is_negative() {
        assert_eq!(parse_event_time("1969-12-31 23:59:59.999"), Ok(-1));
        assert_eq!(
            parse_event_time("1900-01-01T00:00:00Z"),
            Ok(-2_208_988_800_000)
        );
        assert_eq!(
            parse_event_time("0001-01-01 00:00:00"),
            Ok(-62_135_596_800_000)
        );
    }

    #[test]
    fn sub_millisecond_digits_are_truncated() {
        assert_eq!(parse_event_time("00:00:00.0019"), Ok(1));
        assert_eq!(parse_event_time("1970-01-01 00:00:00.123456789"), Ok(123));
    }

    #[test]
    fn bad_values_name_the_value() {
        for bad in [
            "",
            "abc",
            "12:61",
            "24:00:00",
            "12:00:60",
            "1:00",
            "12:00.5",
            "2024-13-01 00:00:00",
            "2023-02-29 00:00:00",
            "2023-02-29",
            "2024-01-0",
            "2024-01-01X00:00",
            "2024-01-01T00:00+25:00",
            "2024-01-01T00:00:00.",
            "2024-01-01T00:00:00.1234567890",
            "99999999999999999999",
            "--5",
        ] {
            let err = parse_event_time(bad).unwrap_err();
            assert_eq!(err.value, bad);
            assert!(err
                .to_string()
                .starts_with(&format!("invalid event time {bad:?}: ")));
        }
        assert_eq!(
            parse_event_time("99999999999999999999").unwrap_err().reason,
            "integer milliseconds out of range for i64"
        );
    }

    #[test]
    fn renders_in_the_parsed_form() {
        let fmt = |s: &str| parse_with_format(s).unwrap().1;
        assert_eq!(fmt("2024-01-02").render(24 * H), "1970-01-02");
        assert_eq!(
            fmt("2024-01-02").render(24 * H + 1),
            "1970-01-02 00:00:00.001"
        );
        assert_eq!(fmt("00:01:00").render(12 * H), "12:00:00");
        assert_eq!(fmt("00:01").render(12 * H + 30_000), "12:00:30");
        assert_eq!(fmt("00:01:00.000").render(5), "00:00:00.005");
        assert_eq!(fmt("00:01:00.0").render(100), "00:00:00.1");
        assert_eq!(fmt("00:01").render(25 * H), (25 * H).to_string());
        assert_eq!(fmt("5").render(-7), "-7");
        assert_eq!(
            fmt("1970-01-01 00:00:00.001").render(-1),
            "1969-12-31 23:59:59.999"
        );
        assert_eq!(fmt("2024-01-01T00:00Z").render(0), "1970-01-01T00:00Z");
        assert_eq!(
            fmt("2024-01-01T00:00:00-04:30").render(0),
            "1969-12-31T19:30:00-04:30"
        );
        assert_eq!(
            fmt("2024-01-01 00:00:00").render(i64::MAX),
            i64::MAX.to_string()
        );
    }

    #[test]
    fn render_round_trips() {
        for text in [
            "00:00:59",
            "23:59:59.999",
            "1969-07-20 20:17:40",
            "2024-02-29T12:00:00.250+05:45",
            "2000-01-01T00:00Z",
            "-123456",
        ] {
            let (t, f) = parse_with_format(text).unwrap();
            assert_eq!(f.render(t), text);
        }
    }
}

//! Text forms of `DATE`, `TIME(p)`, `TIMESTAMP(p)` and `TIMESTAMP_LTZ(p)`: parsers (Flink's
//! cast from STRING) and formatters (Flink's cast to STRING, which is what the SQL client prints).
//!
//! | type | value | text |
//! |---|---|---|
//! | `DATE` | `i32` days since 1970-01-01 | `YYYY-MM-DD` |
//! | `TIME(p)` | `i64` nanoseconds of the day | `HH:MM:SS[.f..]` |
//! | `TIMESTAMP(p)` | [`Ts`], a wall-clock reading | `YYYY-MM-DD HH:MM:SS[.f{p}]` |
//! | `TIMESTAMP_LTZ(p)` | [`Ts`], an instant | the wall clock in the session zone, as `TIMESTAMP(p)` |
//!
//! Years 0000-9999 of the proleptic Gregorian calendar parse at every precision 0..=9. Leading
//! and trailing ASCII whitespace is ignored. Month, day, hour, minute and second may have one or
//! two digits (Flink's `yyyy-[MM][M]-[dd][d] [HH][H]:[mm][m]:[ss][s]`); the year has four.
//!
//! Fraction digits beyond the precision are **truncated** (toward the past), as Flink's
//! `CAST(... AS TIMESTAMP(p))` does: `DateTimeUtils.parseTimestampData(str, p)` floors the
//! nano-of-second to `10^(9 - p)`. More than nine fraction digits is an error, as in Flink.
//!
//! The session time zone (`table.local-time-zone`, UTC by default) is a fixed offset in seconds
//! east of UTC, within ±18 hours (Java's `ZoneOffset` range); named zones with daylight saving
//! are not supported yet.

use std::fmt;

use super::ts::{
    days_in_month, days_to_ymd, truncate_time_to_precision, truncate_to_precision, ymd_to_days, Ts,
    MAX_PRECISION, MILLIS_PER_DAY, NANOS_PER_MILLI,
};
use super::TimeError;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const MAX_ZONE_SECONDS: i32 = 18 * 3600;
const DATE_SHAPE: &str = "YYYY-MM-DD";
const TIME_SHAPE: &str = "HH:MM[:SS[.fffffffff]]";
const TIMESTAMP_SHAPE: &str = "YYYY-MM-DD[ HH:MM[:SS[.fffffffff]]]";

/// A byte cursor over the trimmed text being parsed.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor {
            bytes: text.trim_ascii().as_bytes(),
            at: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// Consumes `byte` if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    /// Reads `min..=max` decimal digits (`max` <= 9) as a number.
    fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let start = self.at;
        let mut value = 0u32;
        while self.at - start < max {
            match self.peek() {
                Some(b @ b'0'..=b'9') => value = value * 10 + u32::from(b - b'0'),
                _ => break,
            }
            self.at += 1;
        }
        (self.at - start >= min).then_some(value)
    }

    /// Reads 1..=9 fraction digits as nanoseconds of the second.
    fn fraction(&mut self) -> Option<u32> {
        let start = self.at;
        let nanos = self.number(1, 9)?;
        if self.peek().is_some_and(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(nanos * 10u32.pow(9 - (self.at - start) as u32))
    }
}

fn check_precision(text: &str, ty: &str, precision: u8) -> Result<(), TimeError> {
    if precision > MAX_PRECISION {
        return Err(TimeError::new(
            text,
            format!("{ty} precision {precision} is out of range 0..=9"),
        ));
    }
    Ok(())
}

fn check_zone(text: &str, zone: i32) -> Result<(), TimeError> {
    if !(-MAX_ZONE_SECONDS..=MAX_ZONE_SECONDS).contains(&zone) {
        return Err(TimeError::new(
            text,
            format!("session time zone offset {zone} s is outside ±18 hours"),
        ));
    }
    Ok(())
}

/// Parses `YYYY-M[M]-D[D]` into days since the epoch.
fn date_part(c: &mut Cursor, text: &str, ty: &str, shape: &str) -> Result<i64, TimeError> {
    let syntax = || TimeError::new(text, format!("expected {ty} as {shape}"));
    let year = c.number(4, 4).ok_or_else(syntax)?;
    if c.peek().is_some_and(|b| b.is_ascii_digit()) {
        return Err(TimeError::new(text, "year out of range 0000-9999"));
    }
    if !c.eat(b'-') {
        return Err(syntax());
    }
    let month = c.number(1, 2).ok_or_else(syntax)?;
    if !c.eat(b'-') {
        return Err(syntax());
    }
    let day = c.number(1, 2).ok_or_else(syntax)?;
    let year = i64::from(year);
    if !(1..=12).contains(&month) {
        return Err(TimeError::new(
            text,
            format!("month {month} out of range 1-12"),
        ));
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(TimeError::new(
            text,
            format!("no such date {year:04}-{month:02}-{day:02}"),
        ));
    }
    Ok(ymd_to_days(year, month, day))
}

/// Parses `H[H]:M[M][:S[S][.f{1,9}]]` into nanoseconds of the day.
fn clock_part(c: &mut Cursor, text: &str, ty: &str, shape: &str) -> Result<i64, TimeError> {
    let syntax = || TimeError::new(text, format!("expected {ty} as {shape}"));
    let hour = c.number(1, 2).ok_or_else(syntax)?;
    if !c.eat(b':') {
        return Err(syntax());
    }
    let minute = c.number(1, 2).ok_or_else(syntax)?;
    let (second, nanos) = if c.eat(b':') {
        let second = c.number(1, 2).ok_or_else(syntax)?;
        let nanos = if c.eat(b'.') {
            c.fraction().ok_or_else(|| {
                TimeError::new(text, "expected 1 to 9 digits of fraction of a second")
            })?
        } else {
            0
        };
        (second, nanos)
    } else {
        (0, 0)
    };
    for (value, limit, what) in [
        (hour, 23, "hour"),
        (minute, 59, "minute"),
        (second, 59, "second"),
    ] {
        if value > limit {
            return Err(TimeError::new(
                text,
                format!("{what} {value} out of range 0-{limit}"),
            ));
        }
    }
    let seconds = i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second);
    Ok(seconds * NANOS_PER_SECOND + i64::from(nanos))
}

/// Parses a UTC offset `Z`, `±HH`, `±HHMM` or `±HH:MM` (at most ±18:00) into seconds east.
fn offset_part(c: &mut Cursor, text: &str) -> Result<Option<i32>, TimeError> {
    let sign = match c.peek() {
        None => return Ok(None),
        Some(b'Z') => {
            c.at += 1;
            return Ok(Some(0));
        }
        Some(b'+') => 1,
        Some(b'-') => -1,
        Some(_) => return Err(TimeError::new(text, "unexpected text after the time")),
    };
    c.at += 1;
    let bad = || TimeError::new(text, "bad UTC offset: expected Z, ±HH, ±HHMM or ±HH:MM");
    let hours = c.number(2, 2).ok_or_else(bad)?;
    let minutes = if c.done() {
        0
    } else {
        c.eat(b':');
        c.number(2, 2).ok_or_else(bad)?
    };
    let seconds = (hours * 3600 + minutes * 60) as i32;
    if minutes > 59 || seconds > MAX_ZONE_SECONDS {
        return Err(bad());
    }
    Ok(Some(sign * seconds))
}

/// Parses `DATE` text `YYYY-MM-DD` (month and day may have one digit) into days since
/// 1970-01-01, as Flink's `CAST(... AS DATE)` (`DateTimeUtils.parseDate`); unlike Flink, a
/// trailing time of day is an error rather than ignored.
///
/// # Errors
/// A [`TimeError`] naming the text when it is not a date of years 0000-9999.
///
/// ```
/// use differential_temporal::repr::time::parse_date;
/// assert_eq!(parse_date("1970-01-02"), Ok(1));
/// assert_eq!(parse_date("1969-12-31"), Ok(-1));
/// assert!(parse_date("2023-02-29").is_err());
/// ```
pub fn parse_date(text: &str) -> Result<i32, TimeError> {
    let mut c = Cursor::new(text);
    let days = date_part(&mut c, text, "DATE", DATE_SHAPE)?;
    if !c.done() {
        return Err(TimeError::new(
            text,
            format!("expected DATE as {DATE_SHAPE}"),
        ));
    }
    // Years 0000-9999 span ±3 million days: always an i32.
    Ok(days as i32)
}

/// Parses `TIME(p)` text `HH:MM[:SS[.f{1,9}]]` into nanoseconds of the day (`0..NANOS_PER_DAY`),
/// truncating fraction digits beyond `precision` (0..=9).
///
/// Flink keeps `TIME` in milliseconds and its cast (`DateTimeUtils.parseTime`) rounds the fourth
/// fraction digit; here `TIME(p)` keeps nanoseconds and truncates like `TIMESTAMP(p)`.
///
/// # Errors
/// A [`TimeError`] naming the text for bad syntax, a field out of range (`24:00` included), or
/// a precision above 9.
///
/// ```
/// use differential_temporal::repr::time::parse_time;
/// assert_eq!(parse_time("00:00:01.123456", 3), Ok(1_123_000_000));
/// assert!(parse_time("24:00", 0).is_err());
/// ```
pub fn parse_time(text: &str, precision: u8) -> Result<i64, TimeError> {
    check_precision(text, "TIME", precision)?;
    let mut c = Cursor::new(text);
    let nanos = clock_part(&mut c, text, "TIME", TIME_SHAPE)?;
    if !c.done() {
        return Err(TimeError::new(
            text,
            format!("expected TIME as {TIME_SHAPE}"),
        ));
    }
    Ok(truncate_time_to_precision(nanos, precision))
}

/// Parses a date, an optional `' '`/`'T'` and clock, and an optional offset.
fn date_time(c: &mut Cursor, text: &str, ty: &str) -> Result<(i64, i64, Option<i32>), TimeError> {
    let days = date_part(c, text, ty, TIMESTAMP_SHAPE)?;
    if c.done() {
        return Ok((days, 0, None));
    }
    if !(c.eat(b' ') || c.eat(b'T')) {
        return Err(TimeError::new(
            text,
            format!("expected {ty} as {TIMESTAMP_SHAPE}"),
        ));
    }
    let nanos = clock_part(c, text, ty, TIMESTAMP_SHAPE)?;
    let offset = offset_part(c, text)?;
    if !c.done() {
        return Err(TimeError::new(text, "unexpected text after the UTC offset"));
    }
    Ok((days, nanos, offset))
}

fn to_ts(days: i64, nanos_of_day: i64, shift_seconds: i64) -> Ts {
    // Years 0000-9999 and shifts within ±18 h keep every step far inside i64.
    let millis =
        days * MILLIS_PER_DAY + nanos_of_day / i64::from(NANOS_PER_MILLI) - shift_seconds * 1000;
    Ts {
        millis,
        nanos_of_milli: (nanos_of_day % i64::from(NANOS_PER_MILLI)) as u32,
    }
}

/// Parses `TIMESTAMP(p)` text `YYYY-MM-DD[( |T)HH:MM[:SS[.f{1,9}]]]` (a bare date is midnight)
/// into a wall-clock [`Ts`], truncating fraction digits beyond `precision` (0..=9) as Flink's
/// `CAST(... AS TIMESTAMP(p))` does (see the module docs).
///
/// # Errors
/// A [`TimeError`] naming the text for bad syntax, a field out of range, a year outside
/// 0000-9999, a UTC offset (`TIMESTAMP` has no zone: see [`parse_timestamp_ltz`]), or a
/// precision above 9.
///
/// ```
/// use differential_temporal::repr::time::{parse_timestamp, Ts};
/// let ts = parse_timestamp("1970-01-01 00:00:01.2509", 3).unwrap();
/// assert_eq!(ts, Ts::from_millis(1_250));
/// assert_eq!(parse_timestamp("1970-01-02", 0), Ok(Ts::from_millis(86_400_000)));
/// ```
pub fn parse_timestamp(text: &str, precision: u8) -> Result<Ts, TimeError> {
    check_precision(text, "TIMESTAMP", precision)?;
    let (days, nanos, offset) = date_time(&mut Cursor::new(text), text, "TIMESTAMP")?;
    if offset.is_some() {
        return Err(TimeError::new(
            text,
            "a TIMESTAMP has no time zone: a UTC offset needs TIMESTAMP_LTZ",
        ));
    }
    Ok(truncate_to_precision(to_ts(days, nanos, 0), precision))
}

/// Parses `TIMESTAMP_LTZ(p)` text into an instant. With an offset (`Z`, `±HH`, `±HHMM`,
/// `±HH:MM` after the clock) the text names the instant itself; without one it is a wall-clock
/// reading in the session time zone `zone` (seconds east of UTC), as Flink's cast from STRING to
/// `TIMESTAMP_LTZ` does (`DateTimeUtils.parseTimestampData(str, p, sessionZone)`). Fraction
/// digits beyond `precision` are truncated as in [`parse_timestamp`].
///
/// # Errors
/// As [`parse_timestamp`], and for a `zone` outside ±18 hours.
///
/// ```
/// use differential_temporal::repr::time::{parse_timestamp_ltz, Ts};
/// let tokyo = 9 * 3600;
/// assert_eq!(parse_timestamp_ltz("1970-01-01 09:00", 0, tokyo), Ok(Ts::EPOCH));
/// assert_eq!(parse_timestamp_ltz("1970-01-01T01:00+01:00", 0, tokyo), Ok(Ts::EPOCH));
/// ```
pub fn parse_timestamp_ltz(text: &str, precision: u8, zone: i32) -> Result<Ts, TimeError> {
    check_precision(text, "TIMESTAMP_LTZ", precision)?;
    check_zone(text, zone)?;
    let (days, nanos, offset) = date_time(&mut Cursor::new(text), text, "TIMESTAMP_LTZ")?;
    let shift = i64::from(offset.unwrap_or(zone));
    Ok(truncate_to_precision(to_ts(days, nanos, shift), precision))
}

/// Writes `YYYY-MM-DD` for `days` since the epoch (years beyond 9999 get more digits).
///
/// Output files hold one of these per timestamp cell, so the usual years are written from a
/// stack buffer in one call rather than through `write!`'s padding.
fn write_date(out: &mut impl fmt::Write, days: i64) -> fmt::Result {
    let (year, month, day) = days_to_ymd(days);
    let Ok(year @ 0..=9999) = u32::try_from(year) else {
        return write!(out, "{year:04}-{month:02}-{day:02}");
    };
    let mut text = *b"0000-00-00";
    put_digits(&mut text[0..4], year);
    put_digits(&mut text[5..7], month);
    put_digits(&mut text[8..10], day);
    write_ascii(out, &text)
}

/// Writes `HH:MM:SS` for nanoseconds of the day (`0..NANOS_PER_DAY`) and returns the
/// nanoseconds of the second.
fn write_clock(out: &mut impl fmt::Write, nanos_of_day: i64) -> Result<i64, fmt::Error> {
    let seconds = nanos_of_day / NANOS_PER_SECOND;
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut text = *b"00:00:00";
    for (at, v) in [(0, h), (3, m), (6, s)] {
        put_digits(
            &mut text[at..at + 2],
            u32::try_from(v).map_err(|_| fmt::Error)?,
        );
    }
    write_ascii(out, &text)?;
    Ok(nanos_of_day % NANOS_PER_SECOND)
}

/// Fills `digits` with the low decimal digits of `v`, zero-padded.
fn put_digits(digits: &mut [u8], mut v: u32) {
    for d in digits.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// Writes ASCII bytes made by [`put_digits`] and literal separators.
fn write_ascii(out: &mut impl fmt::Write, text: &[u8]) -> fmt::Result {
    out.write_str(std::str::from_utf8(text).map_err(|_| fmt::Error)?)
}

/// Writes a `DATE` (days since 1970-01-01) as `YYYY-MM-DD`, as Flink prints it
/// (`DateTimeUtils.formatDate`).
///
/// ```
/// use differential_temporal::repr::time::format_date;
/// let mut s = String::new();
/// format_date(&mut s, -719_528).unwrap();
/// assert_eq!(s, "0000-01-01");
/// ```
pub fn format_date(out: &mut impl fmt::Write, days: i32) -> fmt::Result {
    write_date(out, i64::from(days))
}

/// Writes a `TIME(p)` value (nanoseconds of the day; taken modulo one day) as Flink prints it
/// (`DateTimeUtils.formatTimestampMillis(time, p)`): `HH:MM:SS`, then for `p > 0` a point and
/// the fraction digits one by one, stopping after `p` digits or as soon as the rest is zero
/// but always writing at least one (`10:15:00.25` and `10:15:00.0` for `TIME(3)`).
///
/// ```
/// use differential_temporal::repr::time::format_time;
/// let mut s = String::new();
/// format_time(&mut s, 36_900_250_000_000, 3).unwrap();
/// assert_eq!(s, "10:15:00.25");
/// ```
pub fn format_time(out: &mut impl fmt::Write, nanos_of_day: i64, precision: u8) -> fmt::Result {
    let mut fraction = write_clock(out, nanos_of_day.rem_euclid(super::ts::NANOS_PER_DAY))?;
    if precision == 0 {
        return Ok(());
    }
    out.write_char('.')?;
    let mut unit = NANOS_PER_SECOND / 10;
    for _ in 0..precision.min(MAX_PRECISION) {
        let digit = (fraction / unit) as u8;
        out.write_char(char::from(b'0' + digit))?;
        fraction %= unit;
        unit /= 10;
        if fraction == 0 {
            break;
        }
    }
    Ok(())
}

/// Writes a `TIMESTAMP(p)` value as Flink prints it (`DateTimeUtils.formatTimestamp(ts, UTC,
/// p)`): `YYYY-MM-DD HH:MM:SS`, then the nine-digit fraction with trailing zeros dropped while
/// longer than `p`, after a point unless empty. A value truncated to `p` therefore shows exactly
/// `p` digits (`2024-03-01 10:15:00.250` for `TIMESTAMP(3)`, no point for `TIMESTAMP(0)`); a
/// finer value shows its extra non-zero digits.
///
/// ```
/// use differential_temporal::repr::time::{format_timestamp, Ts};
/// let mut s = String::new();
/// format_timestamp(&mut s, Ts::from_millis(1_709_288_100_250), 3).unwrap();
/// assert_eq!(s, "2024-03-01 10:15:00.250");
/// ```
pub fn format_timestamp(out: &mut impl fmt::Write, ts: Ts, precision: u8) -> fmt::Result {
    write_date(out, ts.days())?;
    out.write_char(' ')?;
    let mut fraction = write_clock(out, ts.nanos_of_day())?;
    let mut digits = usize::from(MAX_PRECISION);
    while digits > usize::from(precision) && fraction % 10 == 0 {
        fraction /= 10;
        digits -= 1;
    }
    if digits > 0 {
        let mut text = *b".000000000";
        let fraction = u32::try_from(fraction).map_err(|_| fmt::Error)?;
        put_digits(&mut text[1..=digits], fraction);
        write_ascii(out, &text[..=digits])?;
    }
    Ok(())
}

/// Writes a `TIMESTAMP_LTZ(p)` instant as its wall-clock reading in the session time zone
/// `zone` (seconds east of UTC), with no offset, as Flink prints it
/// (`DateTimeUtils.formatTimestamp(ts, sessionZone, p)`); otherwise as [`format_timestamp`].
///
/// ```
/// use differential_temporal::repr::time::{format_timestamp_ltz, Ts};
/// let mut s = String::new();
/// format_timestamp_ltz(&mut s, Ts::EPOCH, 0, -5 * 3600).unwrap();
/// assert_eq!(s, "1969-12-31 19:00:00");
/// ```
pub fn format_timestamp_ltz(
    out: &mut impl fmt::Write,
    ts: Ts,
    precision: u8,
    zone: i32,
) -> fmt::Result {
    let local = Ts {
        millis: ts.millis.saturating_add(i64::from(zone) * 1000),
        nanos_of_milli: ts.nanos_of_milli,
    };
    format_timestamp(out, local, precision)
}

//! Time functions: `EXTRACT`, `FLOOR(t TO unit)` / `CEIL(t TO unit)`, datetime +/- interval,
//! `DATE_FORMAT`, `TO_TIMESTAMP`, `TO_DATE`.
//!
//! TIMESTAMP values are Flink's `TimestampData` ([`Ts`]: epoch milliseconds plus nanoseconds of
//! the millisecond); a TIMESTAMP_LTZ is read in UTC (the default `table.local-time-zone`). The
//! calendar is chrono's proleptic Gregorian one, as Java's `LocalDateTime`.

use chrono::{Datelike, Duration, Months, NaiveDate, NaiveDateTime, Timelike};

use crate::repr::{Datum, Ts};

use super::{arg, ScalarFunc};
use crate::expr::arena::RowArena;
use crate::expr::error::Fault;

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
pub const EPOCH_DAYS_CE: i32 = 719_163;

const MILLIS_PER_DAY: i64 = 86_400_000;

/// A unit of time, for EXTRACT and FLOOR/CEIL TO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// YEAR.
    Year,
    /// QUARTER (1-4).
    Quarter,
    /// MONTH (1-12).
    Month,
    /// WEEK: EXTRACT gives the ISO week of the year; FLOOR goes back to Sunday (Calcite).
    Week,
    /// DAY of the month.
    Day,
    /// DOY: day of the year (1-366).
    DayOfYear,
    /// DOW: day of the week, Sunday = 1 to Saturday = 7 (Calcite).
    DayOfWeek,
    /// HOUR.
    Hour,
    /// MINUTE.
    Minute,
    /// SECOND.
    Second,
    /// MILLISECOND: EXTRACT gives the seconds and milliseconds in milliseconds (Calcite:
    /// `56.789` seconds is 56789).
    Millisecond,
    /// MICROSECOND, as MILLISECOND in microseconds.
    Microsecond,
    /// NANOSECOND, as MILLISECOND in nanoseconds.
    Nanosecond,
    /// EPOCH: seconds since 1970-01-01 00:00:00.
    Epoch,
}

impl TimeUnit {
    /// The unit named `name` (case-insensitive; SQL's names and the abbreviations DOY, DOW).
    pub fn parse(name: &str) -> Option<TimeUnit> {
        Some(match name.to_ascii_uppercase().as_str() {
            "YEAR" => TimeUnit::Year,
            "QUARTER" => TimeUnit::Quarter,
            "MONTH" => TimeUnit::Month,
            "WEEK" => TimeUnit::Week,
            "DAY" => TimeUnit::Day,
            "DOY" | "DAYOFYEAR" => TimeUnit::DayOfYear,
            "DOW" | "DAYOFWEEK" => TimeUnit::DayOfWeek,
            "HOUR" => TimeUnit::Hour,
            "MINUTE" => TimeUnit::Minute,
            "SECOND" => TimeUnit::Second,
            "MILLISECOND" => TimeUnit::Millisecond,
            "MICROSECOND" => TimeUnit::Microsecond,
            "NANOSECOND" => TimeUnit::Nanosecond,
            "EPOCH" => TimeUnit::Epoch,
            _ => return None,
        })
    }

    /// Whether FLOOR/CEIL TO this unit is defined.
    pub fn floorable(self) -> bool {
        !matches!(
            self,
            TimeUnit::DayOfYear
                | TimeUnit::DayOfWeek
                | TimeUnit::Microsecond
                | TimeUnit::Nanosecond
                | TimeUnit::Epoch
        )
    }
}

/// Datetime +/- interval; the datetime is the first operand, the interval the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalOp {
    /// The datetime is a DATE (else a TIMESTAMP).
    pub date: bool,
    /// The interval is YEAR TO MONTH (else DAY TO SECOND).
    pub months: bool,
    /// Subtract.
    pub negate: bool,
}

/// The calendar date `days` after 1970-01-01 (clamped to chrono's range).
pub fn date_of_days(days: i32) -> NaiveDate {
    NaiveDate::from_num_days_from_ce_opt(days.saturating_add(EPOCH_DAYS_CE))
        .unwrap_or(NaiveDate::MIN)
}

/// The wall-clock date and time of `ts`, if chrono can represent it.
pub fn naive_of_ts(ts: Ts) -> Option<NaiveDateTime> {
    let secs = ts.millis.div_euclid(1000);
    let nanos = ts.millis.rem_euclid(1000) as u32 * 1_000_000 + ts.nanos_of_milli;
    chrono::DateTime::from_timestamp(secs, nanos).map(|t| t.naive_utc())
}

/// The timestamp of a wall-clock date and time.
pub fn ts_of_naive(n: NaiveDateTime) -> Ts {
    let utc = n.and_utc();
    let nanos = utc.timestamp_subsec_nanos();
    Ts {
        millis: utc.timestamp() * 1000 + (nanos / 1_000_000) as i64,
        nanos_of_milli: nanos % 1_000_000,
    }
}

/// `ts` kept to `p` fractional-second digits (lower digits dropped, as Flink's casts do).
pub fn truncate_ts(ts: Ts, p: u8) -> Ts {
    if p >= 9 {
        return ts;
    }
    if p >= 3 {
        let unit = 10u32.pow(9 - p as u32);
        return Ts {
            millis: ts.millis,
            nanos_of_milli: ts.nanos_of_milli - ts.nanos_of_milli % unit,
        };
    }
    let unit = 10i64.pow(3 - p as u32);
    Ts {
        millis: ts.millis - ts.millis.rem_euclid(unit),
        nanos_of_milli: 0,
    }
}

fn out_of_range() -> Fault {
    Fault::Argument("the result is outside years 0000-9999".into())
}

/// The time functions' kernel.
pub(crate) fn apply<'a>(
    func: &ScalarFunc,
    args: &[Datum<'a>],
    arena: &'a RowArena,
) -> Result<Datum<'a>, Fault> {
    // The unit is operand 0 (a literal the binder read); the value is operand 1.
    match (func, arg(args, 0), arg(args, 1)) {
        (ScalarFunc::Extract(unit, _), _, Datum::Date(days)) => Ok(Datum::Int(extract(
            *unit,
            date_of_days(days).and_time(chrono::NaiveTime::MIN),
            0,
        ))),
        (ScalarFunc::Extract(unit, _), _, Datum::Timestamp(ts)) => {
            let n = naive_of_ts(ts).ok_or_else(out_of_range)?;
            Ok(Datum::Int(extract(*unit, n, ts.millis.div_euclid(1000))))
        }
        (ScalarFunc::FloorTo(unit), _, Datum::Timestamp(ts)) => {
            floor(*unit, ts).map(Datum::Timestamp)
        }
        (ScalarFunc::CeilTo(unit), _, Datum::Timestamp(ts)) => {
            let down = floor(*unit, ts)?;
            if down == ts {
                return Ok(Datum::Timestamp(ts));
            }
            let n = naive_of_ts(down).ok_or_else(out_of_range)?;
            let up = match unit {
                TimeUnit::Year => n.checked_add_months(Months::new(12)),
                TimeUnit::Quarter => n.checked_add_months(Months::new(3)),
                TimeUnit::Month => n.checked_add_months(Months::new(1)),
                TimeUnit::Week => n.checked_add_signed(Duration::days(7)),
                TimeUnit::Day => n.checked_add_signed(Duration::days(1)),
                TimeUnit::Hour => n.checked_add_signed(Duration::hours(1)),
                TimeUnit::Minute => n.checked_add_signed(Duration::minutes(1)),
                TimeUnit::Second => n.checked_add_signed(Duration::seconds(1)),
                _ => n.checked_add_signed(Duration::milliseconds(1)),
            };
            up.map(|n| Datum::Timestamp(ts_of_naive(n)))
                .ok_or_else(out_of_range)
        }
        (ScalarFunc::Interval(op), t, i) => add_interval(*op, t, i),
        (ScalarFunc::DateFormat, Datum::Timestamp(ts), Datum::Str(format)) => {
            let n = naive_of_ts(ts).ok_or_else(out_of_range)?;
            let mut out = arena.string();
            format_java(&mut out, n, format);
            Ok(Datum::Str(out.finish()))
        }
        (ScalarFunc::ToTimestamp, Datum::Str(text), format) => {
            let parsed = match format {
                Datum::Str(f) => NaiveDateTime::parse_from_str(text.trim(), &chrono_format(f)).ok(),
                _ => NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%d %H:%M:%S%.f").ok(),
            };
            // Flink: a string that does not parse is NULL.
            Ok(parsed.map_or(Datum::Null, |n| Datum::Timestamp(ts_of_naive(n))))
        }
        (ScalarFunc::ToDate, Datum::Str(text), format) => {
            let parsed = match format {
                Datum::Str(f) => NaiveDate::parse_from_str(text.trim(), &chrono_format(f)).ok(),
                _ => NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok(),
            };
            Ok(parsed.map_or(Datum::Null, |d| {
                Datum::Date(d.num_days_from_ce() - EPOCH_DAYS_CE)
            }))
        }
        _ => Ok(Datum::Null),
    }
}

fn extract(unit: TimeUnit, n: NaiveDateTime, epoch_seconds: i64) -> i64 {
    let sub = n.nanosecond() as i64;
    let second = n.second() as i64;
    match unit {
        TimeUnit::Year => n.year() as i64,
        TimeUnit::Quarter => (n.month0() / 3 + 1) as i64,
        TimeUnit::Month => n.month() as i64,
        TimeUnit::Week => n.iso_week().week() as i64,
        TimeUnit::Day => n.day() as i64,
        TimeUnit::DayOfYear => n.ordinal() as i64,
        TimeUnit::DayOfWeek => n.weekday().number_from_sunday() as i64,
        TimeUnit::Hour => n.hour() as i64,
        TimeUnit::Minute => n.minute() as i64,
        TimeUnit::Second => second,
        TimeUnit::Millisecond => second * 1000 + sub / 1_000_000,
        TimeUnit::Microsecond => second * 1_000_000 + sub / 1000,
        TimeUnit::Nanosecond => second * 1_000_000_000 + sub,
        TimeUnit::Epoch => epoch_seconds,
    }
}

/// `FLOOR(ts TO unit)`.
fn floor(unit: TimeUnit, ts: Ts) -> Result<Ts, Fault> {
    let fixed = |unit_ms: i64| Ts {
        millis: ts.millis - ts.millis.rem_euclid(unit_ms),
        nanos_of_milli: 0,
    };
    Ok(match unit {
        TimeUnit::Millisecond => fixed(1),
        TimeUnit::Second => fixed(1000),
        TimeUnit::Minute => fixed(60_000),
        TimeUnit::Hour => fixed(3_600_000),
        TimeUnit::Day => fixed(MILLIS_PER_DAY),
        TimeUnit::Week => {
            // 1970-01-01 was a Thursday; weeks start on Sunday, 4 days earlier.
            let shifted = ts.millis + 4 * MILLIS_PER_DAY;
            Ts {
                millis: shifted - shifted.rem_euclid(7 * MILLIS_PER_DAY) - 4 * MILLIS_PER_DAY,
                nanos_of_milli: 0,
            }
        }
        TimeUnit::Year | TimeUnit::Quarter | TimeUnit::Month => {
            let n = naive_of_ts(ts).ok_or_else(out_of_range)?;
            let month0 = match unit {
                TimeUnit::Year => 0,
                TimeUnit::Quarter => n.month0() / 3 * 3,
                _ => n.month0(),
            };
            let first =
                NaiveDate::from_ymd_opt(n.year(), month0 + 1, 1).ok_or_else(out_of_range)?;
            ts_of_naive(first.and_time(chrono::NaiveTime::MIN))
        }
        _ => ts,
    })
}

fn add_interval<'a>(op: IntervalOp, t: Datum<'a>, i: Datum<'a>) -> Result<Datum<'a>, Fault> {
    let overflow = || Fault::Argument("the result is outside the range of timestamps".into());
    match (op.date, op.months, t, i) {
        (false, false, Datum::Timestamp(ts), Datum::IntervalDayTime(ms)) => {
            let ms = if op.negate {
                ms.checked_neg().ok_or_else(overflow)?
            } else {
                ms
            };
            let millis = ts.millis.checked_add(ms).ok_or_else(overflow)?;
            Ok(Datum::Timestamp(Ts { millis, ..ts }))
        }
        (true, false, Datum::Date(days), Datum::IntervalDayTime(ms)) => {
            let delta = ms.div_euclid(MILLIS_PER_DAY);
            let delta = if op.negate { -delta } else { delta };
            i32::try_from(days as i64 + delta)
                .map(Datum::Date)
                .map_err(|_| overflow())
        }
        (date, true, t, Datum::IntervalYearMonth(months)) => {
            let months = if op.negate {
                -(months as i64)
            } else {
                months as i64
            };
            let (n, ts) = match (date, t) {
                (true, Datum::Date(days)) => {
                    (date_of_days(days).and_time(chrono::NaiveTime::MIN), None)
                }
                (false, Datum::Timestamp(ts)) => (naive_of_ts(ts).ok_or_else(overflow)?, Some(ts)),
                _ => return Ok(Datum::Null),
            };
            let shifted = if months >= 0 {
                n.checked_add_months(Months::new(months as u32))
            } else {
                n.checked_sub_months(Months::new(months.unsigned_abs() as u32))
            }
            .ok_or_else(overflow)?;
            Ok(match ts {
                Some(ts) => Datum::Timestamp(Ts {
                    nanos_of_milli: ts.nanos_of_milli,
                    ..ts_of_naive(shifted)
                }),
                None => Datum::Date(shifted.date().num_days_from_ce() - EPOCH_DAYS_CE),
            })
        }
        _ => Ok(Datum::Null),
    }
}

/// The runs of one letter in a Java `SimpleDateFormat` pattern, with quoted text kept.
fn java_runs(format: &str, mut each: impl FnMut(Option<(char, usize)>, &str)) {
    let mut chars = format.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '\'' {
            let start = at + 1;
            let mut end = format.len();
            for (i, q) in chars.by_ref() {
                if q == '\'' {
                    end = i;
                    break;
                }
            }
            each(
                None,
                if end == start {
                    "'"
                } else {
                    &format[start..end]
                },
            );
        } else if c.is_ascii_alphabetic() {
            let mut n = 1;
            while chars.peek().is_some_and(|&(_, d)| d == c) {
                chars.next();
                n += 1;
            }
            each(Some((c, n)), "");
        } else {
            each(None, &format[at..at + c.len_utf8()]);
        }
    }
}

/// Writes `n` in a Java `SimpleDateFormat` pattern (`yyyy-MM-dd HH:mm:ss.SSS`; letters
/// y M d H h m s S a E, quoted text).
fn format_java(out: &mut crate::expr::arena::ArenaString<'_>, n: NaiveDateTime, format: &str) {
    use std::fmt::Write;
    java_runs(format, |run, text| {
        let _ = match run {
            None => out.write_str(text),
            Some(('y', 2)) => write!(out, "{:02}", n.year().rem_euclid(100)),
            Some(('y', w)) => write!(out, "{:0w$}", n.year()),
            Some(('M', w)) => write!(out, "{:0w$}", n.month()),
            Some(('d', w)) => write!(out, "{:0w$}", n.day()),
            Some(('H', w)) => write!(out, "{:0w$}", n.hour()),
            Some(('h', w)) => write!(out, "{:0w$}", n.hour12().1),
            Some(('m', w)) => write!(out, "{:0w$}", n.minute()),
            Some(('s', w)) => write!(out, "{:0w$}", n.second()),
            Some(('S', w)) => {
                let digits = w.min(9);
                write!(
                    out,
                    "{:0digits$}",
                    n.nanosecond() / 10u32.pow(9 - digits as u32)
                )
            }
            Some(('a', _)) => out.write_str(if n.hour12().0 { "PM" } else { "AM" }),
            Some(('E', w)) if w >= 4 => write!(out, "{}", n.format("%A")),
            Some(('E', _)) => write!(out, "{}", n.format("%a")),
            Some((c, w)) => (0..w).try_for_each(|_| out.write_char(c)),
        };
    });
}

/// A Java `SimpleDateFormat` pattern as a chrono format string, for parsing.
fn chrono_format(format: &str) -> String {
    let mut out = String::new();
    java_runs(format, |run, text| match run {
        None => out.push_str(&text.replace('%', "%%")),
        Some(('y', 2)) => out.push_str("%y"),
        Some(('y', _)) => out.push_str("%Y"),
        Some(('M', _)) => out.push_str("%m"),
        Some(('d', _)) => out.push_str("%d"),
        Some(('H', _)) => out.push_str("%H"),
        Some(('h', _)) => out.push_str("%I"),
        Some(('m', _)) => out.push_str("%M"),
        Some(('s', _)) => out.push_str("%S"),
        Some(('S', _)) => out.push_str("%.f"),
        Some(('a', _)) => out.push_str("%p"),
        Some((c, w)) => (0..w).for_each(|_| out.push(c)),
    });
    out
}

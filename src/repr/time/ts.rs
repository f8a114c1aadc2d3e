//! [`Ts`], the value of `TIMESTAMP(p)` and `TIMESTAMP_LTZ(p)`, precision truncation, and the
//! proleptic Gregorian calendar arithmetic behind `DATE`.

use serde::{Deserialize, Serialize};

/// The largest fractional-second precision of `TIME(p)`, `TIMESTAMP(p)` and `TIMESTAMP_LTZ(p)`
/// (Flink's `TimestampType.MAX_PRECISION`).
pub const MAX_PRECISION: u8 = 9;

/// Milliseconds in one day.
pub const MILLIS_PER_DAY: i64 = 86_400_000;

/// Nanoseconds in one day: a `TIME(p)` value is in `0..NANOS_PER_DAY`.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Nanoseconds in one millisecond: the bound of [`Ts::nanos_of_milli`].
pub const NANOS_PER_MILLI: u32 = 1_000_000;

/// A point on the time line with nanosecond resolution: Flink's `TimestampData`.
///
/// `millis` counts milliseconds since 1970-01-01 00:00:00 (negative before), `nanos_of_milli`
/// the nanoseconds within that millisecond, always in `0..1_000_000` (the constructors keep
/// this; a value built by hand must too). For `TIMESTAMP(p)` the point is a wall-clock reading
/// with no zone (read as if in UTC); for `TIMESTAMP_LTZ(p)` it is an instant, shown in the
/// session time zone. An `i64` of milliseconds spans far more than years 0000-9999, which an
/// `i64` of nanoseconds (±292 years) could not.
///
/// The derived order (by `millis`, then `nanos_of_milli`) is the order of the instants. `Debug`
/// prints the UTC reading with as many fractional digits as it has (`2024-01-01 10:00:12`,
/// `1970-01-01 00:00:00.001`), which is how an event time appears in lateness reports.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ts {
    /// Milliseconds since 1970-01-01 00:00:00 (UTC for `TIMESTAMP_LTZ`).
    pub millis: i64,
    /// Nanoseconds within the millisecond, `0..1_000_000`.
    pub nanos_of_milli: u32,
}

impl std::fmt::Debug for Ts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::text::format_timestamp(f, *self, 0)
    }
}

impl Ts {
    /// 1970-01-01 00:00:00.
    pub const EPOCH: Ts = Ts::from_millis(0);

    /// The timestamp `millis` milliseconds after the epoch (Flink's
    /// `TimestampData.fromEpochMillis`).
    pub const fn from_millis(millis: i64) -> Ts {
        Ts {
            millis,
            nanos_of_milli: 0,
        }
    }

    /// The timestamp `nanos` nanoseconds after the epoch, or `None` when its milliseconds do not
    /// fit an `i64`.
    pub fn from_nanos(nanos: i128) -> Option<Ts> {
        let millis = i64::try_from(nanos.div_euclid(i128::from(NANOS_PER_MILLI))).ok()?;
        let nanos_of_milli = nanos.rem_euclid(i128::from(NANOS_PER_MILLI)) as u32;
        Some(Ts {
            millis,
            nanos_of_milli,
        })
    }

    /// Nanoseconds since the epoch (exact: every `Ts` fits an `i128`).
    pub const fn to_nanos(self) -> i128 {
        self.millis as i128 * NANOS_PER_MILLI as i128 + self.nanos_of_milli as i128
    }

    /// The day of this timestamp: days since 1970-01-01 (floor, so 1969-12-31 23:00 is `-1`).
    pub const fn days(self) -> i64 {
        self.millis.div_euclid(MILLIS_PER_DAY)
    }

    /// Nanoseconds since midnight of [`Ts::days`], in `0..NANOS_PER_DAY`.
    pub const fn nanos_of_day(self) -> i64 {
        self.millis.rem_euclid(MILLIS_PER_DAY) * NANOS_PER_MILLI as i64 + self.nanos_of_milli as i64
    }
}

/// The length in nanoseconds of the last digit kept at `precision` (`10^(9 - p)`); precisions
/// above 9 count as 9.
const fn unit_nanos(precision: u8) -> i64 {
    let p = if precision > MAX_PRECISION {
        MAX_PRECISION
    } else {
        precision
    };
    10i64.pow((MAX_PRECISION - p) as u32)
}

/// Drops the fraction digits of `ts` beyond `precision` (0..=9; more counts as 9), rounding
/// toward the past, as Flink's cast from STRING to `TIMESTAMP(p)` does
/// (`DateTimeUtils.fromTemporalAccessor`: `floor(nanoOfSecond, 10^(9 - p))`).
///
/// ```
/// use differential_temporal::repr::time::{truncate_to_precision, Ts};
/// let ts = Ts { millis: -1, nanos_of_milli: 999_999 }; // 1969-12-31 23:59:59.999999999
/// assert_eq!(truncate_to_precision(ts, 0), Ts::from_millis(-1000));
/// assert_eq!(truncate_to_precision(ts, 6), Ts { millis: -1, nanos_of_milli: 999_000 });
/// ```
pub const fn truncate_to_precision(ts: Ts, precision: u8) -> Ts {
    let unit = unit_nanos(precision);
    if unit <= NANOS_PER_MILLI as i64 {
        let unit = unit as u32;
        Ts {
            millis: ts.millis,
            nanos_of_milli: ts.nanos_of_milli - ts.nanos_of_milli % unit,
        }
    } else {
        let unit_millis = unit / NANOS_PER_MILLI as i64;
        Ts::from_millis(ts.millis - ts.millis.rem_euclid(unit_millis))
    }
}

/// Drops the fraction digits of a `TIME` value (`nanos_of_day`) beyond `precision` (0..=9),
/// rounding toward the past like [`truncate_to_precision`].
pub const fn truncate_time_to_precision(nanos_of_day: i64, precision: u8) -> i64 {
    nanos_of_day - nanos_of_day.rem_euclid(unit_nanos(precision))
}

/// Whether `year` is a leap year of the proleptic Gregorian calendar.
pub const fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1..=12) of `year`; 0 for a month outside 1..=12.
pub const fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of the proleptic Gregorian date `year-month-day` (the `DATE` value).
/// The date is not checked: see [`days_in_month`]. Exact for any year an `i64` of days holds.
pub const fn ymd_to_days(year: i64, month: u32, day: u32) -> i64 {
    // Howard Hinnant's days_from_civil: years start on March 1st so the leap day is last.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian `(year, month, day)` of `days` since 1970-01-01 (inverse of
/// [`ymd_to_days`]). Never panics: any `days` within ±2^60 gives its date.
pub const fn days_to_ymd(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

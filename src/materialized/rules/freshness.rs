//! Freshness and refresh mode (semantics D1-D5): Flink's `IntervalFreshness`, its conversion to
//! the cron schedule of a FULL table, and the inference of the refresh mode from the freshness
//! against `materialized-table.refresh-mode.freshness-threshold`.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The unit of a freshness interval: the four Flink accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TimeUnit {
    /// `SECOND`.
    Second,
    /// `MINUTE`.
    Minute,
    /// `HOUR`.
    Hour,
    /// `DAY`.
    Day,
}

impl TimeUnit {
    /// The unit named `name` (any case), or Flink's error for the others (`MONTH`, `YEAR`...).
    pub fn parse(name: &str) -> Result<TimeUnit, String> {
        match name.to_ascii_uppercase().as_str() {
            "SECOND" => Ok(TimeUnit::Second),
            "MINUTE" => Ok(TimeUnit::Minute),
            "HOUR" => Ok(TimeUnit::Hour),
            "DAY" => Ok(TimeUnit::Day),
            _ => Err("Materialized table freshness only support SECOND, MINUTE, HOUR, DAY as the time unit.".into()),
        }
    }

    /// Seconds in one unit.
    pub fn seconds(self) -> u64 {
        match self {
            TimeUnit::Second => 1,
            TimeUnit::Minute => 60,
            TimeUnit::Hour => 3600,
            TimeUnit::Day => 86_400,
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeUnit::Second => "SECOND",
            TimeUnit::Minute => "MINUTE",
            TimeUnit::Hour => "HOUR",
            TimeUnit::Day => "DAY",
        })
    }
}

/// `FRESHNESS = INTERVAL 'n' unit`: how stale the table may be (Flink's `IntervalFreshness`).
///
/// ```
/// use differential_temporal::materialized::{IntervalFreshness, TimeUnit};
///
/// let f = IntervalFreshness::of("30", TimeUnit::Minute).unwrap();
/// assert_eq!(f.to_string(), "INTERVAL '30' MINUTE");
/// assert_eq!(f.to_cron().unwrap(), "0 0/30 * * * ? *");
/// assert_eq!(
///     IntervalFreshness::of("2.5", TimeUnit::Minute).unwrap_err(),
///     "The freshness interval currently only supports positive integer type values. But was: 2.5"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalFreshness {
    /// The count of units, positive and fitting an `INT`.
    pub interval: u32,
    /// The unit.
    pub unit: TimeUnit,
}

impl IntervalFreshness {
    /// The freshness `INTERVAL 'interval' unit`; `interval` is the literal's text.
    ///
    /// Errors: Flink's, when `interval` is not a positive integer fitting an `INT`.
    pub fn of(interval: &str, unit: TimeUnit) -> Result<IntervalFreshness, String> {
        match interval.trim().parse::<i32>() {
            Ok(n) if n > 0 => Ok(IntervalFreshness {
                interval: n as u32,
                unit,
            }),
            _ => Err(format!(
                "The freshness interval currently only supports positive integer type values. But was: {interval}"
            )),
        }
    }

    /// The freshness as a duration.
    pub fn duration(&self) -> Duration {
        Duration::from_secs(u64::from(self.interval) * self.unit.seconds())
    }

    /// A duration in the largest unit that divides it exactly (Flink's
    /// `IntervalFreshness.fromDuration`: 3 min is `INTERVAL '3' MINUTE`, 90 s `INTERVAL '90'
    /// SECOND`). Errors: a duration that is not a positive whole number of seconds fitting an INT.
    pub fn from_duration(d: Duration) -> Result<IntervalFreshness, String> {
        let secs = d.as_secs();
        if d.subsec_nanos() != 0 || secs == 0 {
            return Err(format!(
                "a freshness must be a positive whole number of seconds, not {d:?}"
            ));
        }
        let unit = [
            TimeUnit::Day,
            TimeUnit::Hour,
            TimeUnit::Minute,
            TimeUnit::Second,
        ]
        .into_iter()
        .find(|u| secs.is_multiple_of(u.seconds()))
        .unwrap_or(TimeUnit::Second);
        IntervalFreshness::of(&(secs / unit.seconds()).to_string(), unit)
    }

    /// The cron expression of a FULL table's refresh workflow (Flink's
    /// `IntervalFreshness.convertFreshnessToCron`, Quartz syntax with seconds and years).
    ///
    /// Errors (Flink's messages): a SECOND or MINUTE freshness not below 60 or not dividing 60,
    /// an HOUR freshness not below 24 or not dividing 24, a DAY freshness other than 1.
    pub fn to_cron(&self) -> Result<String, String> {
        self.validate_for_cron()?;
        let n = self.interval;
        Ok(match self.unit {
            TimeUnit::Second => format!("0/{n} * * * * ? *"),
            TimeUnit::Minute => format!("0 0/{n} * * * ? *"),
            TimeUnit::Hour => format!("0 0 0/{n} * * ? *"),
            TimeUnit::Day => "0 0 0 * * ? *".to_string(),
        })
    }

    fn validate_for_cron(&self) -> Result<(), String> {
        let n = self.interval;
        let (limit, name) = match self.unit {
            TimeUnit::Second => (60, "SECOND"),
            TimeUnit::Minute => (60, "MINUTE"),
            TimeUnit::Hour => (24, "HOUR"),
            TimeUnit::Day if n == 1 => return Ok(()),
            TimeUnit::Day => {
                return Err(
                    "In full refresh mode, freshness must be 1 when the time unit is DAY.".into(),
                )
            }
        };
        if n >= limit {
            return Err(format!(
                "In full refresh mode, freshness must be less than {limit} when the time unit is {name}."
            ));
        }
        if !limit.is_multiple_of(n) {
            return Err(format!(
                "In full refresh mode, only freshness that are factors of {limit} are currently supported when the time unit is {name}."
            ));
        }
        Ok(())
    }
}

impl fmt::Display for IntervalFreshness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "INTERVAL '{}' {}", self.interval, self.unit)
    }
}

/// How a materialized table is kept fresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefreshMode {
    /// A live dataflow publishing a snapshot at least once per freshness interval.
    Continuous,
    /// A bounded run of the definition at each scheduled time, overwriting the table or the
    /// period's partition.
    Full,
}

impl fmt::Display for RefreshMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RefreshMode::Continuous => "CONTINUOUS",
            RefreshMode::Full => "FULL",
        })
    }
}

/// The refresh mode as declared: `AUTOMATIC` when the statement has no `REFRESH_MODE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LogicalRefreshMode {
    /// No `REFRESH_MODE`: inferred from the freshness.
    Automatic,
    /// `REFRESH_MODE = CONTINUOUS`.
    Continuous,
    /// `REFRESH_MODE = FULL`.
    Full,
}

impl fmt::Display for LogicalRefreshMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LogicalRefreshMode::Automatic => "AUTOMATIC",
            LogicalRefreshMode::Continuous => "CONTINUOUS",
            LogicalRefreshMode::Full => "FULL",
        })
    }
}

/// Flink's `materialized-table.*` options (`MaterializedTableConfigOptions`), with their
/// defaults: threshold 30 min, default freshness 3 min (continuous) and 1 h (full).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaterializedTableConfig {
    /// `materialized-table.refresh-mode.freshness-threshold`: a freshness strictly below it
    /// infers CONTINUOUS, otherwise FULL.
    pub freshness_threshold: Duration,
    /// `materialized-table.default-freshness.continuous`.
    pub default_continuous_freshness: Duration,
    /// `materialized-table.default-freshness.full`.
    pub default_full_freshness: Duration,
}

impl Default for MaterializedTableConfig {
    fn default() -> Self {
        MaterializedTableConfig {
            freshness_threshold: Duration::from_secs(30 * 60),
            default_continuous_freshness: Duration::from_secs(3 * 60),
            default_full_freshness: Duration::from_secs(3600),
        }
    }
}

/// The freshness and refresh mode a table ends up with (semantics D3-D5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedRefresh {
    /// The freshness, given or defaulted.
    pub freshness: IntervalFreshness,
    /// As declared.
    pub logical: LogicalRefreshMode,
    /// As resolved.
    pub mode: RefreshMode,
}

impl MaterializedTableConfig {
    /// Resolves `FRESHNESS` and `REFRESH_MODE` (either may be absent): a missing freshness is
    /// the full default for `REFRESH_MODE = FULL`, else the continuous default (Flink's
    /// `DefaultMaterializedTableEnricher`); an explicit mode wins, otherwise CONTINUOUS iff the
    /// freshness is strictly below the threshold (`MaterializedTableUtils.deriveRefreshMode`).
    ///
    /// Errors: a FULL result whose freshness has no cron schedule ([`IntervalFreshness::to_cron`]).
    ///
    /// ```
    /// use differential_temporal::materialized::{IntervalFreshness, MaterializedTableConfig, RefreshMode, TimeUnit};
    ///
    /// let config = MaterializedTableConfig::default();
    /// let thirty = IntervalFreshness::of("30", TimeUnit::Minute).unwrap();
    /// assert_eq!(config.resolve(Some(thirty), None).unwrap().mode, RefreshMode::Full);
    /// let defaulted = config.resolve(None, None).unwrap();
    /// assert_eq!((defaulted.freshness.to_string(), defaulted.mode), ("INTERVAL '3' MINUTE".into(), RefreshMode::Continuous));
    /// ```
    pub fn resolve(
        &self,
        freshness: Option<IntervalFreshness>,
        declared: Option<RefreshMode>,
    ) -> Result<ResolvedRefresh, String> {
        let freshness = match freshness {
            Some(f) => f,
            None if declared == Some(RefreshMode::Full) => {
                IntervalFreshness::from_duration(self.default_full_freshness)?
            }
            None => IntervalFreshness::from_duration(self.default_continuous_freshness)?,
        };
        let mode = declared.unwrap_or(if freshness.duration() < self.freshness_threshold {
            RefreshMode::Continuous
        } else {
            RefreshMode::Full
        });
        if mode == RefreshMode::Full {
            freshness.to_cron()?;
        }
        let logical = match declared {
            None => LogicalRefreshMode::Automatic,
            Some(RefreshMode::Full) => LogicalRefreshMode::Full,
            Some(RefreshMode::Continuous) => LogicalRefreshMode::Continuous,
        };
        Ok(ResolvedRefresh {
            freshness,
            logical,
            mode,
        })
    }
}

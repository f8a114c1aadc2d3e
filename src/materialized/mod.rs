//! Materialized tables (Flink's `CREATE MATERIALIZED TABLE`, semantics section D): the rules
//! that do not depend on where the table lives: freshness and refresh-mode inference
//! ([`freshness`](self::IntervalFreshness)), the partition a refresh overwrites, the refresh
//! status state machine, and the refresh schedule over a [`Clock`].
//!
//! The statements are [`crate::sql`]'s; the catalog and the data are the
//! [`warehouse`](crate::warehouse)'s.

mod freshness;
mod lifecycle;
mod partition;
mod schedule;

pub use freshness::{
    IntervalFreshness, LogicalRefreshMode, MaterializedTableConfig, RefreshMode, ResolvedRefresh,
    TimeUnit,
};
pub use lifecycle::{check_drop, missing_table, resume, suspend, RefreshStatus};
pub use partition::{
    format_java, formatter_column, period_partition, refresh_query, refresh_statement,
    validate_partition_spec, FORMATTER_PREFIX, FORMATTER_SUFFIX, SCHEDULE_TIME_FORMAT,
};
pub(crate) use schedule::sleep_until;
pub use schedule::{
    due_schedule_times, format_schedule_time, next_schedule_time, Clock, ManualClock,
    RefreshSchedule, SystemClock,
};

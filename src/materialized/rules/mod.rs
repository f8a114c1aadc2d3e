//! The rules of materialized tables (Flink's `CREATE MATERIALIZED TABLE`, semantics section
//! D) that do not depend on where the table lives: freshness and refresh-mode inference
//! ([`freshness`](self::IntervalFreshness)), the partition a refresh overwrites, the refresh
//! status state machine, and the refresh schedule over a [`Clock`].
//!
//! They import nothing of this crate's but each other: the [`warehouse`](crate::warehouse)
//! (the catalog and the data on disk) and the Table API's environment build on them, and the
//! manager above both ([`crate::materialized`]) runs the statements with them.

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

//! Materialized tables (Flink's `CREATE MATERIALIZED TABLE`, semantics section D): the one
//! manager of their statements and refreshes, over the warehouse that keeps their catalog and
//! snapshots ([`crate::warehouse`]) and the Table API that runs their definitions
//! ([`crate::table`]):
//!
//! - `create`: `CREATE [OR ALTER] MATERIALIZED TABLE` (freshness and refresh mode resolved,
//!   the schema inferred and checked, the catalog entry and an empty first snapshot);
//! - `statements`: `ALTER .. SUSPEND | RESUME | REFRESH | AS`, `DROP`, `SHOW MATERIALIZED
//!   TABLES` and `DESCRIBE`'s lines about a materialized table;
//! - `refresh`: FULL refreshes, manual and periodic
//!   ([`TableEnv::run_scheduled_refreshes`](crate::table::TableEnv::run_scheduled_refreshes));
//! - `continuous`: CONTINUOUS refreshes, a live dataflow in rounds
//!   ([`TableEnv::run_continuous_refresh`](crate::table::TableEnv::run_continuous_refresh)),
//!   with their input positions (`positions`) and Postgres feeds (`postgres`);
//! - [`serve`]: the loop that runs a warehouse's refreshes until stopped (`dtemporal serve`).
//!
//! The pure rules (freshness, refresh modes, status, schedule, partitions) are a module below
//! the warehouse (`rules`, re-exported here); they import nothing of the manager. The session
//! routes the materialized-table statements here.

mod continuous;
mod create;
mod positions;
mod postgres;
mod refresh;
pub(crate) mod rules;
mod serve;
mod statements;

pub(crate) use continuous::Feed;
pub(crate) use create::create;
pub(crate) use positions::Positions;
pub(crate) use rules::sleep_until;
pub use rules::{
    check_drop, due_schedule_times, format_java, format_schedule_time, formatter_column,
    missing_table, next_schedule_time, period_partition, refresh_query, refresh_statement, resume,
    suspend, validate_partition_spec, Clock, IntervalFreshness, LogicalRefreshMode, ManualClock,
    MaterializedTableConfig, RefreshMode, RefreshSchedule, RefreshStatus, ResolvedRefresh,
    SystemClock, TimeUnit, FORMATTER_PREFIX, FORMATTER_SUFFIX, SCHEDULE_TIME_FORMAT,
};
pub use serve::{serve, Open, Served};
pub(crate) use statements::{alter, describe, drop, show};

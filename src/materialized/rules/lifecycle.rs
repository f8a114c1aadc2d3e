//! The refresh status of a materialized table and the `SUSPEND` / `RESUME` / `DROP` state
//! machine of Flink's `MaterializedTableManager` (semantics D12), with its messages.
//!
//! `INITIALIZING` is the status between the catalog entry's creation and its first refresh
//! pipeline being set up; `ACTIVATED` and `SUSPENDED` alternate by `SUSPEND` and `RESUME`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::RefreshMode;

/// Where a materialized table's refresh pipeline stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefreshStatus {
    /// Being created: no pipeline yet.
    Initializing,
    /// Refreshed at its freshness.
    Activated,
    /// Not refreshed until `RESUME` (a manual `REFRESH` still runs).
    Suspended,
}

impl fmt::Display for RefreshStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RefreshStatus::Initializing => "INITIALIZING",
            RefreshStatus::Activated => "ACTIVATED",
            RefreshStatus::Suspended => "SUSPENDED",
        })
    }
}

/// `ALTER MATERIALIZED TABLE t SUSPEND` on a table refreshed in `mode`: its status after, or
/// Flink's error (`table` is the identifier the message names): a FULL table's refresh
/// workflow, a CONTINUOUS table's refresh job (Flink's `MaterializedTableManager`
/// `suspendRefreshWorkflow` / `suspendContinuousRefreshJob`; Flink's continuous message ends in
/// the job's id, `, jobId is ..`, which a refresh here has not).
///
/// ```
/// use differential_temporal::materialized::{suspend, RefreshMode, RefreshStatus};
/// assert_eq!(suspend(RefreshStatus::Activated, RefreshMode::Full, "`t`"), Ok(RefreshStatus::Suspended));
/// assert_eq!(
///     suspend(RefreshStatus::Suspended, RefreshMode::Full, "`t`").unwrap_err(),
///     "Materialized table `t` refresh workflow has been suspended."
/// );
/// assert_eq!(
///     suspend(RefreshStatus::Suspended, RefreshMode::Continuous, "`t`").unwrap_err(),
///     "Materialized table `t` continuous refresh job has been suspended."
/// );
/// ```
pub fn suspend(
    status: RefreshStatus,
    mode: RefreshMode,
    table: &str,
) -> Result<RefreshStatus, String> {
    match status {
        RefreshStatus::Initializing => Err(format!(
            "Materialized table {table} is being initialized and does not support suspend operation."
        )),
        RefreshStatus::Suspended => Err(format!(
            "Materialized table {table} {} has been suspended.",
            pipeline(mode)
        )),
        RefreshStatus::Activated => Ok(RefreshStatus::Suspended),
    }
}

/// `ALTER MATERIALIZED TABLE t RESUME [WITH (..)]` on a table refreshed in `mode`: its status
/// after, or Flink's error (see [`suspend`]).
///
/// ```
/// use differential_temporal::materialized::{resume, RefreshMode, RefreshStatus};
/// assert_eq!(
///     resume(RefreshStatus::Activated, RefreshMode::Continuous, "`t`").unwrap_err(),
///     "Materialized table `t` continuous refresh job has been resumed."
/// );
/// ```
pub fn resume(
    status: RefreshStatus,
    mode: RefreshMode,
    table: &str,
) -> Result<RefreshStatus, String> {
    match status {
        RefreshStatus::Initializing => Err(format!(
            "Materialized table {table} is being initialized and does not support resume operation."
        )),
        RefreshStatus::Activated => Err(format!(
            "Materialized table {table} {} has been resumed.",
            pipeline(mode)
        )),
        RefreshStatus::Suspended => Ok(RefreshStatus::Activated),
    }
}

/// What refreshes a table of `mode`, as Flink's messages name it.
fn pipeline(mode: RefreshMode) -> &'static str {
    match mode {
        RefreshMode::Full => "refresh workflow",
        RefreshMode::Continuous => "continuous refresh job",
    }
}

/// Whether `DROP MATERIALIZED TABLE` may remove a table of `status` (Flink's error otherwise).
pub fn check_drop(status: RefreshStatus, table: &str) -> Result<(), String> {
    match status {
        RefreshStatus::Initializing => Err(format!(
            "Current refresh status of materialized table {table} is initializing, skip the drop operation."
        )),
        _ => Ok(()),
    }
}

/// The error of `DROP MATERIALIZED TABLE t` (without `IF EXISTS`) for a missing `t`.
pub fn missing_table(table: &str) -> String {
    format!("Materialized table with identifier {table} does not exist.")
}

//! Live queries: a query over a table that never ends (a `postgres-cdc` table in a streaming
//! startup mode, a `datagen` or `nexmark` table without a bound) runs as a live dataflow
//! ([`LiveRun`]) that takes new input in rounds, as a CONTINUOUS materialized table's refresh
//! does ([`TableEnv::run_continuous_refresh`]: the same sources, the same rounds), and hands its
//! changelog to the caller round by round until it is stopped, as Flink's SQL client runs a
//! streaming query until it is cancelled. Nothing is kept: a live query started again reads
//! its tables from their start (a `postgres-cdc` table from a new snapshot, through a
//! temporary replication slot that the server drops when the query ends, however it ends).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::materialized::{sleep_until, Feed, Positions, SystemClock};
use crate::operators::{Change, RowKind, SysTime};
use crate::repr::{Row, Schema};
use crate::sql::SqlError;
use crate::table::live::{Keep, LiveRun};
use crate::table::{table_changelog, TableEnv, TableError};

/// What one round of a live query changed.
#[derive(Debug)]
pub struct LiveRound {
    /// The round's number: 0, 1, 2, ...
    pub round: u64,
    /// The result's changes, as [`TableResult::changelog`](crate::table::TableResult::changelog)
    /// gives them (per upsert key, `-U`/`+U` pairs), each with the round as its system time.
    pub changes: Vec<(SysTime, Change<Row>)>,
    /// The round's malformed and refused rows, as text: never dropped silently.
    pub problems: Vec<String>,
}

impl TableEnv {
    /// Whether the query `sql` reads a table that never ends (a `postgres-cdc` table read
    /// with `'scan.startup.mode'` `'initial'` or `'latest-offset'`, a `datagen` table without
    /// `'number-of-rows'`, a `nexmark` table without `'events.num'`): a batch query refuses
    /// it, [`run_live_query`](Self::run_live_query) runs it.
    ///
    /// Errors: `sql` is not one query that binds.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// let (env, _dir) = doc_env();
    /// env.execute_sql("CREATE TABLE g (n BIGINT) WITH ('connector' = 'datagen')").unwrap();
    /// assert!(env.reads_unbounded("SELECT COUNT(*) FROM g").unwrap());
    /// assert!(!env.reads_unbounded("SELECT a FROM Orders").unwrap());
    /// ```
    pub fn reads_unbounded(&self, sql: &str) -> Result<bool, SqlError> {
        let table = self.sql_query(sql)?;
        let plan = table
            .plan()
            .map_err(|e| TableError::Invalid(e.to_string()))?;
        for name in plan.scans() {
            let source = self.source(name)?;
            let bounded = match (&source.generated, &source.postgres) {
                (Some(generated), _) => generated.check_bounded(),
                (_, Some(postgres)) => postgres.check_bounded(),
                (None, None) => Ok(()),
            };
            if bounded.is_err() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Runs the query `sql` live until `stop` is set: its tables are read in rounds, as a
    /// CONTINUOUS materialized table's refresh reads them (one round every
    /// `'source.monitor-interval'`, the least of its monitored tables', 1 s without one: a
    /// `postgres-cdc` table gives a round the transactions committed since the last, the first
    /// round of `'initial'` its snapshot too; a `datagen` table `rows-per-second x interval`
    /// rows; a monitored directory its new files; another filesystem table is read in the first
    /// round), and `round` is called with the result's schema and each round's changes once
    /// the round is complete. A `postgres-cdc` table's slot is temporary (the server drops it
    /// when the query ends, however it ends) and advanced after each call: a query started
    /// again reads a new snapshot. Stops when `stop` is set (looked at every
    /// 20 ms while a round runs) or when `round` fails.
    ///
    /// Errors: `sql` is not one query that binds; a source cannot be read (a `postgres-cdc`
    /// table's server errors, a file that cannot be opened); timely's process options (`-n`,
    /// `-p`, `-h`: a live run's workers are threads of one process); `round`'s error.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use std::sync::atomic::{AtomicBool, Ordering};
    ///
    /// let (env, _dir) = doc_env();
    /// env.execute_sql(
    ///     "CREATE TABLE g (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000')",
    /// )
    /// .unwrap();
    /// let stop = AtomicBool::new(false);
    /// let mut counts = Vec::new();
    /// env.run_live_query("SELECT COUNT(*) AS c FROM g", &stop, |_, round| {
    ///     for (_, change) in &round.changes {
    ///         counts.push(format!("{} {:?}", change.kind, change.row.get(0).unwrap()));
    ///     }
    ///     // Two rounds (a second each) and stop.
    ///     stop.store(round.round == 1, Ordering::SeqCst);
    ///     Ok(())
    /// })
    /// .unwrap();
    /// assert_eq!(counts, ["+I Int(1000)", "-U Int(1000)", "+U Int(2000)"]);
    /// ```
    pub fn run_live_query(
        &self,
        sql: &str,
        stop: &AtomicBool,
        mut round: impl FnMut(&Schema, LiveRound) -> Result<(), SqlError>,
    ) -> Result<(), SqlError> {
        let table = self.sql_query(sql)?;
        let plan = (table.plan().map_err(|e| TableError::Invalid(e.to_string())))?.clone();
        let (feeds, interval) = self.feeds(&plan, None)?;
        let workers = crate::table::live::workers(&self.options().timely_args)?;
        let mut positions = Positions::read(&BTreeMap::new(), &feeds, interval);
        let tables = feeds.keys().cloned().collect();
        let run = LiveRun::start(&plan, tables, Keep::Changes, workers, &self.options())?;
        let key = plan.mode.upsert_key();
        loop {
            let started = Instant::now();
            if stop.load(Ordering::SeqCst) {
                break;
            }
            run.check()?;
            let inputs = positions.next_round(&feeds)?;
            if !inputs.is_empty() {
                let number = run.push_round(inputs);
                if !run.wait_for(number, stop)? {
                    break;
                }
                let rows = run.take_changes().into_iter();
                let changes = rows.map(|(row, t, d)| (Change::new(0, RowKind::Insert, row), t, d));
                let changes = table_changelog(changes.collect(), key, plan.schema.len());
                let problems = run.problems();
                round(
                    &plan.schema,
                    LiveRound {
                        round: number,
                        changes,
                        problems,
                    },
                )?;
                positions.confirm(&feeds)?;
            }
            // At once when a source is behind.
            let behind = feeds.values().any(Feed::is_behind);
            let next = if behind {
                std::time::Duration::ZERO
            } else {
                interval
            };
            let left = next.saturating_sub(started.elapsed());
            sleep_until(&SystemClock, i64::MAX, left, stop);
        }
        Ok(run.close()?)
    }
}

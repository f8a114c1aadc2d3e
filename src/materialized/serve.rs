//! The serve loop: the scheduler of a warehouse's FULL materialized tables and the runner of
//! its CONTINUOUS ones, until stopped (Flink needs a SQL gateway and an external workflow
//! scheduler for this); `dtemporal serve` runs it and prints what it reports.
//!
//! Each round opens the warehouse afresh (so tables created, suspended, resumed or dropped by
//! other processes meanwhile are seen; what a killed run left is recovered by the first
//! refresh, under the lock), runs the due periodic refreshes one by one
//! ([`TableEnv::refresh_schedule`], [`TableEnv::run_periodic_refresh`]) and sleeps until the
//! next schedule time or the poll interval, whichever comes first. Each CONTINUOUS table runs
//! on its own thread (see [`Continuous`]). Setting the stop flag lets the FULL refresh under
//! way finish and publish, and stops the continuous runs after their round in progress
//! (publishing nothing more; the next run resumes from their last snapshot).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::rules::{format_schedule_time, sleep_until, Clock, RefreshMode, RefreshStatus};
use crate::sql::SqlError;
use crate::table::TableEnv;
use crate::warehouse::RefreshRecord;

/// Opens an environment on the warehouse (its catalog's statements replayed), afresh at each
/// round and for each continuous run's thread.
pub type Open = Arc<dyn Fn() -> Result<TableEnv, SqlError> + Send + Sync>;

/// What the serve loop reports, from its own thread or a continuous run's.
pub enum Served<'a> {
    /// A FULL table's periodic refresh published a snapshot, after `took`.
    Refreshed {
        /// The table.
        table: &'a str,
        /// The refresh.
        record: &'a RefreshRecord,
        /// How long it ran.
        took: Duration,
    },
    /// A CONTINUOUS table's run published a snapshot, `since` the previous snapshot of this
    /// run, or its start.
    Published {
        /// The table.
        table: &'a str,
        /// The snapshot's refresh.
        record: &'a RefreshRecord,
        /// Since the run's previous snapshot or its start.
        since: Duration,
    },
    /// Another process's run holds `lock`, the CONTINUOUS `table`'s owner lock: this loop
    /// waits for it to stop (said once a table).
    Waiting {
        /// The table.
        table: &'a str,
        /// The lock file.
        lock: &'a Path,
    },
    /// Something failed and is tried again at a next round: the message.
    Failed(String),
    /// The warehouse opened: serving begins.
    Started,
}

/// Serves the warehouse `open` opens until `stop` is set, sleeping at most `poll` between
/// rounds, on `clock`, reporting to `report`; returns when every continuous run has stopped.
///
/// Errors: the warehouse does not open at the start (later, a round that cannot open it is
/// reported and retried).
///
/// ```
/// # use differential_temporal::table::tempfile_dir::Dir;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use differential_temporal::materialized::{serve, Clock, ManualClock, Open, Served};
/// use differential_temporal::table::TableEnv;
///
/// let dir = Dir::new();
/// let orders = dir.write("orders.csv", "id,amount\n1,10\n2,5\n");
/// let warehouse = dir.path("wh");
/// let manual = ManualClock::at("2024-01-01 00:10:00").unwrap();
/// let clock: Arc<dyn Clock> = Arc::new(manual.clone());
/// let env = TableEnv::new().with_clock(Arc::clone(&clock)).with_warehouse(&warehouse).unwrap();
/// env.execute_sql(&format!("
///     CREATE TABLE orders (id INT, amount INT) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
///     CREATE MATERIALIZED TABLE total FRESHNESS = INTERVAL '1' HOUR AS SELECT SUM(amount) AS s FROM orders;")).unwrap();
/// manual.advance_ms(3_600_000); // 01:10: the refresh of 01:00 is due
/// let env_clock = Arc::clone(&clock);
/// let open: Open = Arc::new(move || TableEnv::new().with_clock(Arc::clone(&env_clock)).with_warehouse(&warehouse));
/// // This server stops after its first refresh.
/// let stop = Arc::new(AtomicBool::new(false));
/// let (flag, lines) = (Arc::clone(&stop), Arc::new(Mutex::new(Vec::new())));
/// let seen = Arc::clone(&lines);
/// let report = Arc::new(move |served: Served| {
///     if let Served::Refreshed { table, record, .. } = served {
///         let time = record.schedule_time.clone().unwrap_or_default();
///         seen.lock().unwrap().push(format!("{table} {time} rows={}", record.rows));
///         flag.store(true, Ordering::SeqCst);
///     }
/// });
/// serve(open, clock, Duration::from_millis(10), &stop, report).unwrap();
/// assert_eq!(*lines.lock().unwrap(), ["total 2024-01-01 01:00:00 rows=1"]);
/// ```
pub fn serve(
    open: Open,
    clock: Arc<dyn Clock>,
    poll: Duration,
    stop: &AtomicBool,
    report: Arc<dyn Fn(Served) + Send + Sync>,
) -> Result<(), SqlError> {
    let mut env = Some(open()?);
    report(Served::Started);
    let mut continuous = Continuous {
        open: Arc::clone(&open),
        report: Arc::clone(&report),
        runs: BTreeMap::new(),
        waiting: BTreeSet::new(),
    };
    while !stop.load(Ordering::SeqCst) {
        let env = match env.take().map_or_else(|| open(), Ok) {
            Ok(env) => env,
            Err(e) => {
                report(Served::Failed(e.to_string()));
                sleep_until(&*clock, i64::MAX, poll, stop);
                continue;
            }
        };
        continuous.reap();
        continuous.start_new(&env);
        let next = round(&env, stop, &*report);
        sleep_until(&*clock, next.unwrap_or(i64::MAX), poll, stop);
    }
    continuous.stop_all();
    Ok(())
}

/// The CONTINUOUS tables' refreshes, each on its own thread with its own environment on the
/// warehouse ([`TableEnv::run_continuous_refresh`]): started for every ACTIVATED CONTINUOUS
/// table that has none running, at each round, unless another process's run owns the table
/// (a second server of the warehouse: it waits, said once, and takes the table over when that
/// run stops); a run ends by itself when its table is suspended, dropped or redefined, or on
/// an error (reported, and started again at the next round).
struct Continuous {
    open: Open,
    report: Arc<dyn Fn(Served) + Send + Sync>,
    runs: BTreeMap<String, (Arc<AtomicBool>, JoinHandle<Result<(), String>>)>,
    /// The tables whose refresh another process owns, said once each.
    waiting: BTreeSet<String>,
}

impl Continuous {
    /// Starts a run for each ACTIVATED CONTINUOUS table of `env`'s warehouse without one.
    fn start_new(&mut self, env: &TableEnv) {
        let Some(warehouse) = env.warehouse() else {
            return;
        };
        let catalog = match warehouse.catalog() {
            Ok(catalog) => catalog,
            Err(e) => return (self.report)(Served::Failed(e.to_string())),
        };
        for (table, entry) in catalog.materialized {
            let active = entry.refresh_mode == RefreshMode::Continuous
                && entry.status == RefreshStatus::Activated;
            if !active || self.runs.contains_key(&table) {
                continue;
            }
            // Another process's run owns the table: wait for it to stop, saying so once.
            match warehouse.try_own(&table) {
                Ok(Ok(_free)) => {
                    self.waiting.remove(&table);
                }
                Ok(Err(lock)) => {
                    if self.waiting.insert(table.clone()) {
                        (self.report)(Served::Waiting {
                            table: &table,
                            lock: &lock,
                        });
                    }
                    continue;
                }
                Err(e) => {
                    (self.report)(Served::Failed(e.to_string()));
                    continue;
                }
            }
            let stop = Arc::new(AtomicBool::new(false));
            let (flag, name) = (Arc::clone(&stop), table.clone());
            let (open, report) = (Arc::clone(&self.open), Arc::clone(&self.report));
            let thread = std::thread::spawn(move || {
                let env = open().map_err(|e| e.to_string())?;
                let mut last = Instant::now();
                env.run_continuous_refresh(&name, &flag, |record| {
                    report(Served::Published {
                        table: &name,
                        record,
                        since: last.elapsed(),
                    });
                    last = Instant::now();
                })
                .map_err(|e| e.to_string())
            });
            self.runs.insert(table, (stop, thread));
        }
    }

    /// Joins the runs that ended, reporting their errors.
    fn reap(&mut self) {
        let ended: Vec<String> = self
            .runs
            .iter()
            .filter(|(_, (_, thread))| thread.is_finished())
            .map(|(table, _)| table.clone())
            .collect();
        for table in ended {
            let (_, thread) = self.runs.remove(&table).expect("listed above");
            self.ended(&table, thread.join());
        }
    }

    /// Stops every run and waits for it (each publishes nothing more).
    fn stop_all(mut self) {
        for (stop, _) in self.runs.values() {
            stop.store(true, Ordering::SeqCst);
        }
        for (table, (_, thread)) in std::mem::take(&mut self.runs) {
            self.ended(&table, thread.join());
        }
    }

    /// Reports how a continuous refresh's thread ended, if not well.
    fn ended(&self, table: &str, ended: std::thread::Result<Result<(), String>>) {
        match ended {
            Ok(Ok(())) => {}
            Ok(Err(e)) => (self.report)(Served::Failed(format!(
                "continuous refresh of {table}: {e}"
            ))),
            Err(_) => (self.report)(Served::Failed(format!(
                "continuous refresh of {table} panicked"
            ))),
        }
    }
}

/// Runs the due refreshes of `env`'s warehouse one by one until `stop` is set, reporting
/// each; returns the next schedule time.
fn round(env: &TableEnv, stop: &AtomicBool, report: &dyn Fn(Served)) -> Option<i64> {
    let schedule = env
        .refresh_schedule()
        .map_err(|e| report(Served::Failed(e.to_string())))
        .ok()?;
    for (table, time) in schedule.due {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let started = Instant::now();
        match env.run_periodic_refresh(&table, time) {
            Ok(Some(record)) => report(Served::Refreshed {
                table: &table,
                record: &record,
                took: started.elapsed(),
            }),
            Ok(None) => {}
            Err(e) => report(Served::Failed(format!(
                "refresh of {table} for {}: {e}",
                format_schedule_time(time)
            ))),
        }
    }
    schedule.next_ms
}

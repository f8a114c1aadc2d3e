//! `dtemporal serve`: the scheduler of a warehouse's FULL materialized tables and the runner of
//! its CONTINUOUS ones, until stopped (Flink needs a SQL gateway and an external workflow
//! scheduler for this).
//!
//! Each round opens the warehouse afresh (so tables created, suspended, resumed or dropped by
//! `dtemporal sql --warehouse` meanwhile are seen; what a killed run left is recovered by the
//! first refresh, under the lock),
//! runs the due periodic refreshes one by one ([`TableEnv::refresh_schedule`],
//! [`TableEnv::run_periodic_refresh`]) and sleeps until the next schedule time or the poll
//! interval, whichever comes first. Each CONTINUOUS table runs on its own thread (see
//! [`Continuous`]). SIGINT and SIGTERM only set a flag: the FULL refresh under way finishes
//! and publishes, the continuous runs stop after their round in progress (publishing nothing
//! more; the next run resumes from their last snapshot), and the process exits 0.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clap::Args;

use super::Cli;
use crate::error::Error;
use crate::materialized::{
    format_schedule_time, sleep_until, Clock, ManualClock, RefreshMode, RefreshStatus, SystemClock,
};
use crate::sql::parse_duration;
use crate::table::TableEnv;
use crate::warehouse::RefreshRecord;

pub(super) const EXAMPLE: &str = "\
Example (each user's total, refreshed every minute):
  printf 'user_id,amount\\nalice,10\\nbob,5\\nalice,7\\n' > /tmp/orders.csv
  dtemporal sql --warehouse wh -e \"
    CREATE TABLE orders (user_id STRING, amount BIGINT)
      WITH ('connector' = 'filesystem', 'path' = '/tmp/orders.csv', 'format' = 'csv');
    CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' MINUTE REFRESH_MODE = FULL
      AS SELECT user_id, SUM(amount) AS total FROM orders GROUP BY user_id\"
  dtemporal serve --warehouse wh
  table=totals mode=FULL trigger=periodic schedule_time='2026-12-03 17:21:00' rows=2 duration_ms=90 snapshot=1

Runs every ACTIVATED FULL materialized table's periodic refreshes, at the schedule times of
its freshness (a schedule time missed while nothing ran is caught up at start), and prints one
line per refresh on standard output. Every ACTIVATED CONTINUOUS table runs as a live dataflow
over its sources (a filesystem table with 'source.monitor-interval' is a directory watched
for new files; a datagen table makes its rows at its rate), publishing a snapshot at most
once per freshness interval (one line each, mode=CONTINUOUS); a run resumes from the input
positions its last snapshot recorded. Statements of `dtemporal sql --warehouse` run meanwhile
(CREATE, SUSPEND, RESUME, DROP) are picked up at the next round. A failing refresh is
reported on standard error and tried again at the next round. SIGINT (Ctrl-C) or SIGTERM:
the refresh under way finishes, then the process exits 0. A killed process (SIGKILL, a
crash) leaves the last published snapshot; the next run removes the rest and catches up.
A CONTINUOUS table is refreshed by one process at a time: a second `serve` of the warehouse
waits for the first's runs to stop (said on standard error) and then takes them over.";

/// `dtemporal serve` arguments.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The warehouse directory (created if missing; see `dtemporal sql --warehouse`).
    #[arg(long, value_name = "DIR")]
    pub warehouse: String,
    /// How long to sleep at most between rounds (each round re-reads the catalog): `500 ms`,
    /// `2 s`, `1 min`; a bare number is milliseconds. A round starts sooner when a schedule
    /// time falls due.
    #[arg(long, value_name = "DURATION", default_value = "1 s", value_parser = poll_interval)]
    pub poll_interval: Duration,
    /// For tests and demonstrations: the clock starts at TIME (`yyyy-MM-dd HH:mm:ss`, UTC)
    /// instead of the system's time, and runs on from there at the system clock's pace.
    #[arg(long, value_name = "TIME")]
    pub clock_start: Option<String>,
}

fn poll_interval(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        0 => Err("the poll interval must be positive".into()),
        ms => Ok(Duration::from_millis(ms as u64)),
    }
}

/// A clock that started at a given time and runs at the system clock's pace.
struct StartedClock {
    origin_ms: i64,
    started: Instant,
}

impl Clock for StartedClock {
    fn now_ms(&self) -> i64 {
        self.origin_ms + self.started.elapsed().as_millis() as i64
    }
}

/// Serves until SIGINT or SIGTERM; returns the exit code (0, or 2 when the warehouse cannot
/// be opened at start or a signal cannot be handled).
pub(super) fn run(cli: &Cli, args: &ServeArgs) -> i32 {
    serve(cli, args).map_or_else(
        |e| {
            eprintln!("dtemporal: error: {e}");
            2
        },
        |()| 0,
    )
}

fn serve(cli: &Cli, args: &ServeArgs) -> Result<(), Error> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| Error::Usage(format!("cannot handle signal {signal}: {e}")))?;
    }
    let clock: Arc<dyn Clock> = match &args.clock_start {
        Some(time) => Arc::new(StartedClock {
            origin_ms: ManualClock::at(time)
                .map_err(|e| Error::Usage(format!("--clock-start: {e}")))?
                .now_ms(),
            started: Instant::now(),
        }),
        None => Arc::new(SystemClock),
    };
    let open = || {
        TableEnv::new()
            .with_timely_args(super::timely_args(cli))
            .with_progress(false)
            .with_clock(Arc::clone(&clock))
            .with_warehouse(&args.warehouse)
    };
    // A warehouse that does not open at start is an error; later, a round that cannot open
    // it (a statement of another process left it unreadable) is reported and retried.
    let mut env = Some(open().map_err(|e| Error::Usage(e.to_string()))?);
    eprintln!(
        "dtemporal: serving {} (stop: Ctrl-C or SIGTERM)",
        args.warehouse
    );
    let mut continuous = Continuous {
        warehouse: args.warehouse.clone(),
        timely_args: super::timely_args(cli),
        clock: Arc::clone(&clock),
        runs: BTreeMap::new(),
        waiting: BTreeSet::new(),
    };
    while !stop.load(Ordering::SeqCst) {
        let env = match env.take().map_or_else(open, Ok) {
            Ok(env) => env,
            Err(e) => {
                eprintln!("dtemporal: error: {e}");
                sleep_until(&*clock, i64::MAX, args.poll_interval, &stop);
                continue;
            }
        };
        continuous.reap();
        continuous.start_new(&env);
        let next = round(&env, &stop);
        sleep_until(&*clock, next.unwrap_or(i64::MAX), args.poll_interval, &stop);
    }
    continuous.stop_all();
    eprintln!("dtemporal: stopped");
    Ok(())
}

/// The CONTINUOUS tables' refreshes, each on its own thread with its own environment on the
/// warehouse ([`TableEnv::run_continuous_refresh`]): started for every ACTIVATED CONTINUOUS
/// table that has none running, at each round, unless another process's run owns the table
/// (a second `serve` of the warehouse: it waits, said once on standard error, and takes the
/// table over when that run stops); a run ends by itself when its table is
/// suspended, dropped or redefined, or on an error (reported, and started again at the next
/// round).
struct Continuous {
    warehouse: String,
    timely_args: Vec<String>,
    clock: Arc<dyn Clock>,
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
            Err(e) => return eprintln!("dtemporal: error: {e}"),
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
                        eprintln!(
                            "dtemporal: table {table} is refreshed by another process (it holds {}): waiting for it to stop",
                            lock.display()
                        );
                    }
                    continue;
                }
                Err(e) => {
                    eprintln!("dtemporal: error: {e}");
                    continue;
                }
            }
            let stop = Arc::new(AtomicBool::new(false));
            let (flag, name) = (Arc::clone(&stop), table.clone());
            let (warehouse, args) = (self.warehouse.clone(), self.timely_args.clone());
            let clock = Arc::clone(&self.clock);
            let thread = std::thread::spawn(move || {
                let env = TableEnv::new()
                    .with_timely_args(args)
                    .with_progress(false)
                    .with_clock(clock)
                    .with_warehouse(&warehouse)
                    .map_err(|e| e.to_string())?;
                let mut last = Instant::now();
                env.run_continuous_refresh(&name, &flag, |record| {
                    status(&continuous_line(&name, record, last.elapsed()));
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
            report(&table, thread.join());
        }
    }

    /// Stops every run and waits for it (each publishes nothing more).
    fn stop_all(self) {
        for (stop, _) in self.runs.values() {
            stop.store(true, Ordering::SeqCst);
        }
        for (table, (_, thread)) in self.runs {
            report(&table, thread.join());
        }
    }
}

/// Reports how a continuous refresh's thread ended, if not well.
fn report(table: &str, ended: std::thread::Result<Result<(), String>>) {
    match ended {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("dtemporal: error: continuous refresh of {table}: {e}"),
        Err(_) => eprintln!("dtemporal: error: continuous refresh of {table} panicked"),
    }
}

/// `table=T mode=CONTINUOUS rows=N since_ms=N snapshot=N` (`since_ms`: since the previous
/// snapshot of this run, or its start).
fn continuous_line(table: &str, record: &RefreshRecord, since: Duration) -> String {
    format!(
        "table={table} mode=CONTINUOUS rows={} since_ms={} snapshot={}",
        record.rows,
        since.as_millis(),
        record.snapshot_id
    )
}

/// Runs the due refreshes of `env`'s warehouse one by one until `stop` is set, reporting
/// each; returns the next schedule time.
fn round(env: &TableEnv, stop: &AtomicBool) -> Option<i64> {
    let schedule = env
        .refresh_schedule()
        .map_err(|e| eprintln!("dtemporal: error: {e}"))
        .ok()?;
    for (table, time) in schedule.due {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let started = Instant::now();
        match env.run_periodic_refresh(&table, time) {
            Ok(Some(record)) => status(&status_line(&table, &record, started.elapsed())),
            Ok(None) => {}
            Err(e) => eprintln!(
                "dtemporal: error: refresh of {table} for {}: {e}",
                format_schedule_time(time)
            ),
        }
    }
    schedule.next_ms
}

/// Writes a refresh's status `line` to standard output; a closed standard output drops it
/// quietly (the refreshes go on), another write error is reported on standard error.
fn status(line: &str) {
    if let Err(e) = super::print_out(&format!("{line}\n")) {
        eprintln!("dtemporal: error: {e}");
    }
}

/// `table=T mode=FULL trigger=periodic schedule_time='..' [partition='k=v,..'] rows=N
/// duration_ms=N snapshot=N`.
fn status_line(table: &str, record: &RefreshRecord, took: Duration) -> String {
    let mut line = format!("table={table} mode=FULL trigger=periodic");
    if let Some(time) = &record.schedule_time {
        line.push_str(&format!(" schedule_time='{time}'"));
    }
    if !record.partition.is_empty() {
        let spec: Vec<String> = record
            .partition
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        line.push_str(&format!(" partition='{}'", spec.join(",")));
    }
    line.push_str(&format!(
        " rows={} duration_ms={} snapshot={}",
        record.rows,
        took.as_millis(),
        record.snapshot_id
    ));
    line
}

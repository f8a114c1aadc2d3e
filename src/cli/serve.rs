//! `dtemporal serve`: the arguments of the materialized tables' serve loop
//! ([`materialized::serve`]: the scheduler of a warehouse's FULL tables and the runner of its
//! CONTINUOUS ones, until stopped), and the lines it prints of what the loop reports: one
//! line per refresh on standard output, the rest on standard error.
//!
//! SIGINT and SIGTERM only set the loop's stop flag: the FULL refresh under way finishes and
//! publishes, the continuous runs stop after their round in progress (publishing nothing
//! more; the next run resumes from their last snapshot), and the process exits 0.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use super::Cli;
use crate::error::Error;
use crate::materialized::{self, Clock, ManualClock, Open, Served, SystemClock};
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
    let (warehouse, timely_args) = (args.warehouse.clone(), super::timely_args(cli));
    let env_clock = Arc::clone(&clock);
    let open: Open = Arc::new(move || {
        TableEnv::new()
            .with_timely_args(timely_args.clone())
            .with_progress(false)
            .with_clock(Arc::clone(&env_clock))
            .with_warehouse(&warehouse)
    });
    let name = args.warehouse.clone();
    let report = Arc::new(move |served: Served| {
        match served {
        Served::Started => eprintln!("dtemporal: serving {name} (stop: Ctrl-C or SIGTERM)"),
        Served::Refreshed {
            table,
            record,
            took,
        } => status(&status_line(table, record, took)),
        Served::Published {
            table,
            record,
            since,
        } => status(&continuous_line(table, record, since)),
        Served::Waiting { table, lock } => eprintln!(
            "dtemporal: table {table} is refreshed by another process (it holds {}): waiting for it to stop",
            lock.display()
        ),
        Served::Failed(e) => eprintln!("dtemporal: error: {e}"),
    }
    });
    // A warehouse that does not open at start is an error; later, a round that cannot open
    // it (a statement of another process left it unreadable) is reported and retried.
    materialized::serve(open, clock, args.poll_interval, &stop, report)
        .map_err(|e| Error::Usage(e.to_string()))?;
    eprintln!("dtemporal: stopped");
    Ok(())
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

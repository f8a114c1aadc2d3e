//! The flights x weather example's join (the library's SQL path) agrees row for row with an
//! independent sorted-merge as-of join in plain Rust over the same shipped files (issue 3,
//! "Real data"), and with the `temporal-join` command on the same files (issue 11).

mod common;

#[path = "../examples/flights_weather.rs"]
#[allow(dead_code)]
mod example;

use std::collections::HashMap;

const FLIGHTS: &str = "data/nycflights13/flights_2013-01.csv";
const WEATHER: &str = "data/nycflights13/weather_2013-01.csv";

fn read(path: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// Sorted-merge as-of: per origin, weather rows sorted by (ts, file position); each flight (in
/// ts order) takes the last weather row of its origin with ts <= its ts. Timestamps are
/// `YYYY-MM-DD HH:MM:SS` text, so text order is time order; the example's `TIMESTAMP(3)`
/// columns are written with milliseconds.
fn expected() -> Vec<String> {
    let (fh, flights) = read(FLIGHTS);
    let (wh, weather) = read(WEATHER);
    let col = |h: &[String], n: &str| h.iter().position(|c| c == n).unwrap();
    let (f_id, f_ts, f_origin) = (col(&fh, "id"), col(&fh, "ts"), col(&fh, "origin"));
    let (w_ts, w_origin) = (col(&wh, "ts"), col(&wh, "origin"));
    let mut by_origin: HashMap<&str, Vec<(&str, usize)>> = HashMap::new();
    for (p, w) in weather.iter().enumerate() {
        by_origin
            .entry(&w[w_origin])
            .or_default()
            .push((&w[w_ts], p));
    }
    for v in by_origin.values_mut() {
        v.sort();
    }
    let mut order: Vec<usize> = (0..flights.len()).collect();
    order.sort_by_key(|&i| (&flights[i][f_origin], &flights[i][f_ts], i));
    let millis = |mut row: Vec<String>, ts: usize| {
        row[ts].push_str(".000");
        row
    };
    let mut out = Vec::with_capacity(flights.len());
    let mut cursor: (Option<&str>, usize) = (None, 0);
    for i in order {
        let f = &flights[i];
        let versions = by_origin
            .get(f[f_origin].as_str())
            .map_or(&[][..], Vec::as_slice);
        if cursor.0 != Some(f[f_origin].as_str()) {
            cursor = (Some(f[f_origin].as_str()), 0);
        }
        while cursor.1 < versions.len() && versions[cursor.1].0 <= f[f_ts].as_str() {
            cursor.1 += 1;
        }
        let mut row = millis(f.clone(), f_ts);
        match cursor.1.checked_sub(1) {
            Some(v) => row.extend(millis(weather[versions[v].1].clone(), w_ts)),
            None => row.extend(std::iter::repeat_n(String::new(), wh.len())),
        }
        out.push((f[f_id].parse::<u64>().unwrap(), row.join(",")));
    }
    out.sort();
    out.into_iter().map(|(_, r)| r).collect()
}

fn workers(n: usize) -> Vec<String> {
    vec!["-w".to_string(), n.to_string()]
}

#[test]
fn flights_weather_matches_sorted_merge_as_of() {
    let out = example::flights_weather(FLIGHTS, WEATHER, workers(2))
        .unwrap()
        .unwrap();
    assert!(out.result.refused().is_empty());
    assert!(out.result.malformed().is_empty());
    assert_eq!(out.rows.len(), 27_004);
    // Every January flight finds an observation at or before its departure (data/README.md).
    assert_eq!(out.unmatched, 0);
    let want = expected();
    assert_eq!(out.rows.len(), want.len());
    for (g, w) in out.rows.iter().zip(&want) {
        assert_eq!(g, w);
    }
    let header = out.header.join(",");
    assert!(header.starts_with("id,ts,year,"), "{header}");
    assert!(header.ends_with(",id0,ts0,origin0,year0,month0,day0,hour0,temp,dewp,humid,wind_dir,wind_speed,wind_gust,precip,pressure,visib,time_hour0"), "{header}");
}

#[test]
fn flights_weather_does_not_depend_on_worker_count() {
    let one = example::flights_weather(FLIGHTS, WEATHER, workers(1))
        .unwrap()
        .unwrap();
    let three = example::flights_weather(FLIGHTS, WEATHER, workers(3))
        .unwrap()
        .unwrap();
    assert_eq!(one.rows, three.rows);
}

#[test]
fn flights_weather_equals_the_temporal_join_command() {
    // The command carries the cells as text: its rows are the example's with the timestamps
    // as written in the files and a leading `op`. In final mode without a watermark it emits
    // at the end of the input, each flight once (+I).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("joined.csv");
    let code = differential_temporal::cli::main_with_args([
        "dtemporal",
        "temporal-join",
        "-w",
        "2",
        "--probe",
        FLIGHTS,
        "--build",
        WEATHER,
        "--on",
        "origin=origin",
        "--probe-time",
        "ts",
        "--build-time",
        "ts",
        "--left",
        "--mode",
        "final",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let (header, lines) = read(out.to_str().unwrap());
    let example = example::flights_weather(FLIGHTS, WEATHER, workers(2))
        .unwrap()
        .unwrap();
    assert_eq!(header[1..], example.header[..]);
    let (id, ts, ts0) = (1, 2, header.iter().position(|h| h == "ts0").unwrap());
    let mut command: Vec<(u64, String)> = lines
        .into_iter()
        .map(|mut cells| {
            assert_eq!(cells[0], "+I");
            for at in [ts, ts0] {
                if !cells[at].is_empty() {
                    cells[at].push_str(".000");
                }
            }
            (cells[id].parse().unwrap(), cells[1..].join(","))
        })
        .collect();
    command.sort();
    let command: Vec<String> = command.into_iter().map(|(_, line)| line).collect();
    assert_eq!(command, example.rows);
}

#[test]
fn flights_weather_on_two_processes_equals_one_process() {
    // Two timely processes of two workers each (here two threads of the test, connected over
    // 127.0.0.1): process 0 returns everything, process 1 nothing.
    let dir = tempfile::tempdir().unwrap();
    let hostfile = common::fixture(dir.path(), "hosts.txt", &common::free_ports(2));
    let cluster = move |p: usize| -> Vec<String> {
        ["-n", "2", "-p", &p.to_string(), "-h", &hostfile, "-w", "2"]
            .iter()
            .map(|a| a.to_string())
            .collect()
    };
    let second = cluster(1);
    let other = std::thread::spawn(move || example::flights_weather(FLIGHTS, WEATHER, second));
    let zero = example::flights_weather(FLIGHTS, WEATHER, cluster(0))
        .unwrap()
        .unwrap();
    assert!(other.join().unwrap().unwrap().is_none());
    let one = example::flights_weather(FLIGHTS, WEATHER, workers(1))
        .unwrap()
        .unwrap();
    assert!(zero.result.refused().is_empty());
    assert_eq!(zero.rows.len(), 27_004);
    assert_eq!(zero.rows, one.rows);
}

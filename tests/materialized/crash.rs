//! Crash safety under `kill -9`: `dtemporal sql --warehouse` processes killed at many points of
//! a refresh (reading, writing files, publishing) leave a warehouse that opens, holds either
//! the last published snapshot or the new one whole, never a mix, and refreshes again.
//!
//! Each round rewrites the source so that its table's content is unique to the round (every
//! `v` is the round number), so the totals read after a kill tell which snapshot is current.
//! Where in the refresh a kill lands depends on timing; what the test asserts does not.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::table::TableEnv;

use super::rows;

/// Keys and rows of the source (rows per key: `ROWS / KEYS`).
const KEYS: u64 = 500;
const ROWS: u64 = 20_000;

/// Writes the source of round `round`: `ROWS` rows over `KEYS` keys, every `v` equal to
/// `round`.
fn write_source(dir: &Dir, round: u64) {
    let mut csv = String::from("k,v\n");
    for i in 0..ROWS {
        csv.push_str(&format!("{},{round}\n", i % KEYS));
    }
    dir.write("src.csv", &csv);
}

/// `(keys, total rows, sum of totals)` of the table as a new process-local environment
/// reads it, after reopening the warehouse (which changes nothing: a reader ignores what a
/// killed refresh left).
fn content(dir: &Dir) -> Vec<String> {
    let env = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    rows(
        &env,
        "SELECT COUNT(*) AS keys, SUM(n) AS n, SUM(total) AS total FROM totals",
    )
}

/// The content a whole snapshot of round `round` has (round 0: the empty table, over which a
/// streaming global aggregate has no row).
fn content_of(round: u64) -> Vec<String> {
    match round {
        0 => vec![],
        r => vec![format!("{KEYS},{ROWS},{}", r * ROWS)],
    }
}

/// Starts `ALTER MATERIALIZED TABLE totals REFRESH` in its own process.
fn start_refresh(dir: &Dir) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(["sql", "--quiet", "--warehouse", &dir.path("wh")])
        .args(["-e", "ALTER MATERIALIZED TABLE totals REFRESH"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn refreshes_killed_at_any_point_leave_a_whole_snapshot() {
    let dir = Dir::new();
    write_source(&dir, 0);
    TableEnv::new()
        .with_warehouse(dir.path("wh"))
        .unwrap()
        .execute_sql(&format!(
            "CREATE TABLE src (k BIGINT, v BIGINT)
               WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
             CREATE MATERIALIZED TABLE totals REFRESH_MODE = FULL
               AS SELECT k, COUNT(*) AS n, SUM(v) AS total FROM src GROUP BY k",
            dir.path("src.csv")
        ))
        .unwrap();
    assert_eq!(content(&dir), content_of(0));

    // How long one uncut refresh takes here: the kills are spread over it (and a little past).
    write_source(&dir, 1);
    let started = Instant::now();
    assert!(start_refresh(&dir).wait().unwrap().success());
    let whole = started.elapsed();
    assert_eq!(content(&dir), content_of(1));

    let mut published = 1;
    let rounds = 16u32;
    for round in 2..2 + u64::from(rounds) {
        write_source(&dir, round);
        let mut child = start_refresh(&dir);
        std::thread::sleep(whole * (round as u32 - 2) / (rounds - 2) + Duration::from_millis(1));
        child.kill().unwrap(); // SIGKILL: no destructor, no flush, the lock released by the OS.
        let finished = child.wait().unwrap().success();
        let now = content(&dir);
        if now == content_of(round) {
            published = round;
        } else {
            assert!(
                !finished,
                "round {round}: a refresh that exited 0 is published"
            );
            assert_eq!(
                now,
                content_of(published),
                "round {round}: not the last snapshot"
            );
        }
    }
    // The warehouse still refreshes: an uncut refresh publishes the next snapshot, and its
    // recovery keeps the current and the previous snapshot only.
    let last = 2 + u64::from(rounds);
    write_source(&dir, last);
    assert!(start_refresh(&dir).wait().unwrap().success());
    assert_eq!(content(&dir), content_of(last));
    let mut names: Vec<String> = std::fs::read_dir(dir.path("wh/data/totals"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        names.len() == 5 && names.iter().all(|n| !n.starts_with('.')),
        "leftovers after the last refresh: {names:?}"
    );
}

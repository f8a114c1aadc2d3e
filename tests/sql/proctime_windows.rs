//! Processing-time windows (issue 12): TUMBLE, HOP and CUMULATE over a `PROCTIME()` attribute,
//! in SQL (window TVF and legacy group window) and the Table API (`Tumble::over(..).on(pt)`), with the environment's
//! processing-time clock set so that the stamps and windows are exact: one row an epoch, epoch
//! `s` at processing time `s` seconds after 1970-01-01 00:00:00. Both modes, 1 and 2 workers;
//! and the refusal of a processing-time window over an updating table.

use std::time::Duration;

use differential_temporal::expr::col;
use differential_temporal::plan::ProcessingClock;
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::Ts;
use differential_temporal::table::{seconds, TableEnv, Tumble};

use super::{changelog_text, env};

/// One system time is one second of processing time, from the epoch.
fn clock() -> ProcessingClock {
    ProcessingClock::new(Ts::from_millis(0), Duration::from_secs(1)).unwrap()
}

/// `Clicks(user STRING, n INT, pt AS PROCTIME())`: `a,1 b,2 a,3 a,4 b,5 a,6 a,7 b,8`, one row
/// an epoch (row `i` at processing time `i` s), in `mode` (the row-count windows' input too).
pub(super) fn clicks_env(dir: &tempfile::TempDir, workers: usize, mode: ExecutionMode) -> TableEnv {
    let path = dir.path().join("clicks.csv");
    std::fs::write(&path, "user,n\na,1\nb,2\na,3\na,4\nb,5\na,6\na,7\nb,8\n").unwrap();
    let env = env(workers).with_mode(mode).with_processing_clock(clock());
    env.execute_sql(&format!(
        "CREATE TABLE Clicks (`user` STRING, n INT, pt AS PROCTIME())
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    ))
    .unwrap();
    env
}

fn sorted(mut rows: Vec<String>) -> Vec<String> {
    rows.sort();
    rows
}

/// Per user, 3-second windows: `[0, 3)` holds a,1 b,2 a,3; `[3, 6)` a,4 b,5 a,6; `[6, 9)` a,7 b,8.
const TUMBLE_SUMS: [&str; 6] = [
    "a,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,2,4",
    "a,1970-01-01 00:00:03.000,1970-01-01 00:00:06.000,2,10",
    "a,1970-01-01 00:00:06.000,1970-01-01 00:00:09.000,1,7",
    "b,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,1,2",
    "b,1970-01-01 00:00:03.000,1970-01-01 00:00:06.000,1,5",
    "b,1970-01-01 00:00:06.000,1970-01-01 00:00:09.000,1,8",
];

#[test]
fn proctime_stamps_are_the_clock_of_each_rows_epoch() {
    let dir = tempfile::tempdir().unwrap();
    for workers in [1, 2] {
        let env = clicks_env(&dir, workers, ExecutionMode::Incremental);
        let rows = (env.sql_query("SELECT n, pt FROM Clicks WHERE n < 4"))
            .unwrap()
            .execute()
            .unwrap()
            .rows_as_text();
        assert_eq!(
            sorted(rows),
            [
                "1,1970-01-01 00:00:00.000",
                "2,1970-01-01 00:00:01.000",
                "3,1970-01-01 00:00:02.000"
            ],
            "{workers} workers"
        );
    }
}

#[test]
fn sql_tumble_over_proctime_is_exact_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let query = "SELECT `user`, window_start, window_end, COUNT(*) AS c, SUM(n) AS s
        FROM TABLE(TUMBLE(TABLE Clicks, DESCRIPTOR(pt), INTERVAL '3' SECOND))
        GROUP BY `user`, window_start, window_end";
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = clicks_env(&dir, workers, mode);
            let result = env.sql_query(query).unwrap().execute().unwrap();
            let label = format!("{mode:?} on {workers} workers");
            assert_eq!(sorted(result.rows_as_text()), TUMBLE_SUMS, "{label}");
            let legacy = "SELECT `user`, TUMBLE_START(pt, INTERVAL '3' SECOND),
                TUMBLE_END(pt, INTERVAL '3' SECOND), COUNT(*), SUM(n)
                FROM Clicks GROUP BY `user`, TUMBLE(pt, INTERVAL '3' SECOND)";
            let rows = env.sql_query(legacy).unwrap().execute().unwrap();
            assert_eq!(sorted(rows.rows_as_text()), TUMBLE_SUMS, "legacy, {label}");
            if mode == ExecutionMode::Final {
                // Each window emitted once (nothing is ever late on processing time).
                let changes = changelog_text(&result);
                assert!(changes.iter().all(|c| c.starts_with("+I,")), "{label}");
                assert_eq!(changes.len(), 6, "{label}");
            } else {
                // a's first window grows as its rows arrive: 1, then 4 at the third epoch.
                let a_first: Vec<String> = changelog_text(&result)
                    .into_iter()
                    .filter(|c| c.contains(",a,1970-01-01 00:00:00.000"))
                    .collect();
                assert_eq!(
                    a_first,
                    [
                        "+I,a,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,1,1",
                        "-U,a,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,1,1",
                        "+U,a,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,2,4",
                    ],
                    "{label}"
                );
            }
        }
    }
}

#[test]
fn sql_hop_and_cumulate_over_proctime() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        let env = clicks_env(&dir, 2, mode);
        let run = |tvf: &str| {
            let query = format!(
                "SELECT window_start, window_end, SUM(n) FROM TABLE({tvf})
                 GROUP BY window_start, window_end"
            );
            let rows = env.sql_query(&query).unwrap().execute().unwrap();
            sorted(rows.rows_as_text())
        };
        // 4 s windows every 2 s: [-2, 2) 1+2, [0, 4) 1..4, [2, 6) 3..6, [4, 8) 5..8, [6, 10) 7+8.
        assert_eq!(
            run("HOP(TABLE Clicks, DESCRIPTOR(pt), INTERVAL '2' SECOND, INTERVAL '4' SECOND)"),
            [
                "1969-12-31 23:59:58.000,1970-01-01 00:00:02.000,3",
                "1970-01-01 00:00:00.000,1970-01-01 00:00:04.000,10",
                "1970-01-01 00:00:02.000,1970-01-01 00:00:06.000,18",
                "1970-01-01 00:00:04.000,1970-01-01 00:00:08.000,26",
                "1970-01-01 00:00:06.000,1970-01-01 00:00:10.000,15",
            ],
            "{mode:?}"
        );
        // Within 4 s windows, growing by 2 s: [0, 2) 1+2, [0, 4) 1..4, [4, 6) 5+6, [4, 8) 5..8.
        assert_eq!(
            run("CUMULATE(TABLE Clicks, DESCRIPTOR(pt), INTERVAL '2' SECOND, INTERVAL '4' SECOND)"),
            [
                "1970-01-01 00:00:00.000,1970-01-01 00:00:02.000,3",
                "1970-01-01 00:00:00.000,1970-01-01 00:00:04.000,10",
                "1970-01-01 00:00:04.000,1970-01-01 00:00:06.000,11",
                "1970-01-01 00:00:04.000,1970-01-01 00:00:08.000,26",
            ],
            "{mode:?}"
        );
    }
}

#[test]
fn table_api_tumble_on_proctime_matches_sql() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = clicks_env(&dir, workers, mode);
            let table = (env.from("Clicks"))
                .window(Tumble::over(seconds(3)).on(col("pt")).alias("w"))
                .group_by([col("w"), col("user")])
                .select([
                    col("user"),
                    col("w").start(),
                    col("w").end(),
                    col("n").count().alias("c"),
                    col("n").sum().alias("s"),
                ]);
            let rows = table.execute().unwrap().rows_as_text();
            assert_eq!(sorted(rows), TUMBLE_SUMS, "{mode:?} on {workers} workers");
        }
    }
}

#[test]
fn a_proctime_window_over_an_updating_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("changes.csv");
    std::fs::write(&path, "op,k,n\n+I,a,1\n-U,a,1\n+U,a,2\n").unwrap();
    let env = env(1).with_processing_clock(clock());
    env.execute_sql(&format!(
        "CREATE TABLE Changes (k STRING, n INT, pt AS PROCTIME(), PRIMARY KEY (k) NOT ENFORCED)
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    ))
    .unwrap();
    // Its rows keep one processing time, the clock's start: a retraction equals its insertion.
    let rows = env.sql_query("SELECT k, n, pt FROM Changes").unwrap();
    assert_eq!(
        rows.execute().unwrap().rows_as_text(),
        ["a,2,1970-01-01 00:00:00.000"]
    );
    let err = env
        .sql_query(
            "SELECT k, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE Changes, DESCRIPTOR(pt),
             INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end",
        )
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains(
            "WindowAggregate doesn't support consuming update and delete changes which is produced by node"
        ),
        "{err}"
    );
}

/// The clock set in SQL: `SET 'dtemporal.proctime.start'` (a UTC timestamp) and
/// `'dtemporal.proctime.tick'` (a duration), for the tables declared after them; bad values
/// refused naming the option.
#[test]
fn the_clock_is_set_in_sql() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clicks.csv");
    std::fs::write(&path, "user,n\na,1\nb,2\na,3\na,4\nb,5\na,6\na,7\nb,8\n").unwrap();
    let env = env(2);
    env.execute_sql(&format!(
        "SET 'dtemporal.proctime.start' = '1970-01-01 00:00:00';
         SET 'dtemporal.proctime.tick' = '1 s';
         CREATE TABLE Clicks (`user` STRING, n INT, pt AS PROCTIME())
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    ))
    .unwrap();
    let query = "SELECT `user`, window_start, window_end, COUNT(*), SUM(n)
        FROM TABLE(TUMBLE(TABLE Clicks, DESCRIPTOR(pt), INTERVAL '3' SECOND))
        GROUP BY `user`, window_start, window_end";
    let rows = env.sql_query(query).unwrap().execute().unwrap();
    assert_eq!(sorted(rows.rows_as_text()), TUMBLE_SUMS);
    let err = |set: &str| env.execute_sql(set).unwrap_err().to_string();
    assert!(
        err("SET 'dtemporal.proctime.tick' = '0 s'")
            .contains("the processing-time clock's tick must be a positive whole number of milliseconds, but is 0ns"),
        "{}",
        err("SET 'dtemporal.proctime.tick' = '0 s'")
    );
    let bad_start = err("SET 'dtemporal.proctime.start' = 'noon'");
    assert!(
        bad_start.contains(
            "'dtemporal.proctime.start' takes a UTC timestamp like '2024-01-01 00:00:00'"
        ),
        "{bad_start}"
    );
}

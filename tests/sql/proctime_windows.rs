//! Processing time (issue 12): TUMBLE, HOP and CUMULATE over a `PROCTIME()` attribute, in SQL
//! (window TVF and legacy group window) and the Table API (`Tumble::over(..).on(pt)`); the rows
//! of processing-time window TVFs, whose `window_time` is a proctime attribute; the Table API's
//! `w.proctime()` feeding a later processing-time window; OVER ordered by the proctime
//! attribute (ROWS and RANGE, peers within a system time). The environment's processing-time
//! clock is set so that the stamps and windows are exact: one row an epoch, epoch `s` at
//! processing time `s` seconds after 1970-01-01 00:00:00. Both modes, 1 and 2 workers; and the
//! refusals (a processing-time window over an updating table, `w.rowtime()` of a
//! processing-time window).

use std::time::Duration;

use differential_temporal::expr::col;
use differential_temporal::plan::ProcessingClock;
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::Ts;
use differential_temporal::table::{row_interval, seconds, Over, TableEnv, Tumble};

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

/// The rows of a processing-time window TVF: each row with its window, `window_time = end - 1`
/// the output's proctime attribute; the same rows in both modes, final mode's all `+I`.
#[test]
fn sql_tvf_rows_over_proctime() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = clicks_env(&dir, workers, mode);
            let label = format!("{mode:?} on {workers} workers");
            let query = "SELECT `user`, n, window_start, window_end, window_time
                FROM TABLE(TUMBLE(TABLE Clicks, DESCRIPTOR(pt), INTERVAL '3' SECOND)) WHERE n <= 4";
            let table = env.sql_query(query).unwrap();
            assert!(
                table.explain().unwrap().contains("proctime=window_time"),
                "{label}"
            );
            let result = table.execute().unwrap();
            assert_eq!(
                sorted(result.rows_as_text()),
                [
                    "a,1,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,1970-01-01 00:00:02.999",
                    "a,3,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,1970-01-01 00:00:02.999",
                    "a,4,1970-01-01 00:00:03.000,1970-01-01 00:00:06.000,1970-01-01 00:00:05.999",
                    "b,2,1970-01-01 00:00:00.000,1970-01-01 00:00:03.000,1970-01-01 00:00:02.999",
                ],
                "{label}"
            );
            assert!(changelog_text(&result).iter().all(|c| c.starts_with("+I,")));
            // HOP: a row in two windows; CUMULATE: in every growing window holding it.
            let hop = "SELECT n, window_start, window_end FROM TABLE(HOP(TABLE Clicks,
                DESCRIPTOR(pt), INTERVAL '2' SECOND, INTERVAL '4' SECOND)) WHERE n = 4";
            let rows = env.sql_query(hop).unwrap().execute().unwrap();
            assert_eq!(
                sorted(rows.rows_as_text()),
                [
                    "4,1970-01-01 00:00:00.000,1970-01-01 00:00:04.000",
                    "4,1970-01-01 00:00:02.000,1970-01-01 00:00:06.000",
                ],
                "{label}"
            );
            let cumulate = "SELECT n, window_end FROM TABLE(CUMULATE(TABLE Clicks,
                DESCRIPTOR(pt), INTERVAL '2' SECOND, INTERVAL '4' SECOND)) WHERE n = 5";
            let rows = env.sql_query(cumulate).unwrap().execute().unwrap();
            assert_eq!(
                sorted(rows.rows_as_text()),
                ["5,1970-01-01 00:00:06.000", "5,1970-01-01 00:00:08.000"],
                "{label}"
            );
        }
    }
}

/// `w.proctime()`: the processing-time attribute `end - 1` of a processing-time window's row;
/// over a TVF's rows (append-only) a later processing-time window groups by it: the 3 s
/// windows close at 2.999, 5.999 and 8.999 s, so the 6 s windows hold rows 1..6 and 7, 8.
#[test]
fn table_api_window_proctime_feeds_a_later_window() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = clicks_env(&dir, workers, mode);
            let label = format!("{mode:?} on {workers} workers");
            let window = Tumble::over(seconds(3)).on(col("pt")).alias("w");
            let grouped = (env.from("Clicks").window(window.clone()))
                .group_by([col("w"), col("user")])
                .select([col("user"), col("w").proctime(), col("n").sum()]);
            assert!(grouped.explain().unwrap().contains("proctime=window_time"));
            assert_eq!(
                sorted(grouped.execute().unwrap().rows_as_text()),
                [
                    "a,1970-01-01 00:00:02.999,4",
                    "a,1970-01-01 00:00:05.999,10",
                    "a,1970-01-01 00:00:08.999,7",
                    "b,1970-01-01 00:00:02.999,2",
                    "b,1970-01-01 00:00:05.999,5",
                    "b,1970-01-01 00:00:08.999,8",
                ],
                "{label}"
            );
            let rows = (env.from("Clicks").window(window))
                .select([col("n"), col("w").proctime().alias("closed")]);
            let outer = (rows.window(Tumble::over(seconds(6)).on(col("closed")).alias("v")))
                .group_by([col("v")])
                .select([col("v").start(), col("n").sum(), col("n").count()]);
            assert_eq!(
                sorted(outer.execute().unwrap().rows_as_text()),
                [
                    "1970-01-01 00:00:00.000,21,6",
                    "1970-01-01 00:00:06.000,15,2"
                ],
                "{label}"
            );
        }
    }
}

/// `w.rowtime()` of a processing-time window is refused with Flink's message, naming the alias
/// (`w.proctime()` of an event-time window: the doctest of `Expr::proctime`).
#[test]
fn a_proctime_window_has_no_rowtime() {
    let dir = tempfile::tempdir().unwrap();
    let env = clicks_env(&dir, 1, ExecutionMode::Incremental);
    let table = (env.from("Clicks"))
        .window(Tumble::over(seconds(3)).on(col("pt")).alias("w"))
        .group_by([col("w")])
        .select([col("w").rowtime(), col("n").sum()]);
    let Err(err) = table.execute() else {
        panic!("w.rowtime() of a processing-time window must be refused")
    };
    let err = err.to_string();
    assert!(
        err.contains("A proctime window cannot provide a rowtime attribute: 'w' is over a processing-time attribute (use w.proctime())"),
        "{err}"
    );
}

/// Processing-time OVER: rows ordered by their stamp (one row an epoch here), ROWS counting
/// them and RANGE reading the stamps, in SQL and the Table API, both modes. `a`'s rows are at
/// 0, 2, 3, 5, 6 s with n = 1, 3, 4, 6, 7; `b`'s at 1, 4, 7 s with n = 2, 5, 8.
#[test]
fn over_ordered_by_proctime() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = clicks_env(&dir, workers, mode);
            let label = format!("{mode:?} on {workers} workers");
            let run = |frame: &str| {
                let query = format!(
                    "SELECT `user`, n, SUM(n) OVER (PARTITION BY `user` ORDER BY pt {frame}) FROM Clicks"
                );
                sorted(
                    env.sql_query(&query)
                        .unwrap()
                        .execute()
                        .unwrap()
                        .rows_as_text(),
                )
            };
            let rows = run("ROWS BETWEEN 1 PRECEDING AND CURRENT ROW");
            let expected = [
                "a,1,1", "a,3,4", "a,4,7", "a,6,10", "a,7,13", "b,2,2", "b,5,7", "b,8,13",
            ];
            assert_eq!(rows, expected, "ROWS, {label}");
            // [t - 3 s, t]: a at 3 s holds 0, 2, 3; at 5 s 2, 3, 5; b at 4 s holds 1, 4.
            let rows = run("RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW");
            let expected = [
                "a,1,1", "a,3,4", "a,4,8", "a,6,13", "a,7,17", "b,2,2", "b,5,7", "b,8,13",
            ];
            assert_eq!(rows, expected, "RANGE, {label}");
            let table = (env.from("Clicks"))
                .window(
                    Over::partition_by([col("user")])
                        .order_by(col("pt"))
                        .preceding(row_interval(1))
                        .alias("o"),
                )
                .select([col("user"), col("n"), col("n").sum().over(col("o"))]);
            let rows = sorted(table.execute().unwrap().rows_as_text());
            assert_eq!(
                rows,
                run("ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"),
                "{label}"
            );
        }
    }
}

/// Within one system time the rows are peers of RANGE (one result) and ROWS counts them in
/// arrival order: all eight rows in one block, at processing time 0.
#[test]
fn over_proctime_peers_share_a_system_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clicks.csv");
    std::fs::write(&path, "user,n\na,1\nb,2\na,3\n").unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        let env = (TableEnv::new().with_block_bytes(1 << 20))
            .with_mode(mode)
            .with_processing_clock(clock());
        env.execute_sql(&format!(
            "CREATE TABLE Clicks (`user` STRING, n INT, pt AS PROCTIME())
             WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
            path.display()
        ))
        .unwrap();
        let run = |frame: &str| {
            let query = format!("SELECT n, SUM(n) OVER (ORDER BY pt {frame}) FROM Clicks");
            sorted(
                env.sql_query(&query)
                    .unwrap()
                    .execute()
                    .unwrap()
                    .rows_as_text(),
            )
        };
        assert_eq!(
            run("RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"),
            ["1,6", "2,6", "3,6"],
            "{mode:?}"
        );
        assert_eq!(
            run("ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"),
            ["1,1", "2,3", "3,6"],
            "{mode:?}"
        );
    }
}

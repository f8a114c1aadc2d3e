//! The rows of a window table-valued function read directly (issue 12): `SELECT *` over
//! TUMBLE, a projection and WHERE over HOP and CUMULATE (the seed's Orders), Flink's window
//! Top-N following a window TVF in both modes on 1 and 2 workers with a late row and a NULL
//! rowtime (final mode refuses the late row, both refuse the NULL one), and SESSION's
//! refusal; the Table API's `window(..).select(..)` against the SQL.

use differential_temporal::expr::col;
use differential_temporal::render::ExecutionMode;
use differential_temporal::table::{minutes, Session, Slide, TableEnv, TableResult};

use super::{changelog_text, env, orders_env};

fn run(env: &TableEnv, sql: &str) -> TableResult {
    env.sql_query(sql).unwrap().execute().unwrap()
}

/// The result's rows as CSV lines, sorted as text.
fn sorted_rows(result: &TableResult) -> Vec<String> {
    let mut rows = result.rows_as_text();
    rows.sort();
    rows
}

/// Each window shape's rows, the same in both modes and on 1 and 2 workers (the seed's rows
/// are in order: none is late).
#[test]
fn tumble_hop_and_cumulate_rows() {
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = orders_env(workers, mode);
            let all = run(
                &env,
                "SELECT * FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES))",
            );
            let names: Vec<&str> = all.schema().names().collect();
            assert_eq!(
                names,
                [
                    "a",
                    "b",
                    "c",
                    "rowtime",
                    "window_start",
                    "window_end",
                    "window_time"
                ]
            );
            assert_eq!(
                sorted_rows(&all),
                [
                    "x,,40,2024-01-01 10:15:00.000,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,2024-01-01 10:19:59.999",
                    "x,1,10,2024-01-01 10:00:00.000,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,2024-01-01 10:09:59.999",
                    "x,3,30,2024-01-01 10:10:00.000,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,2024-01-01 10:19:59.999",
                    "y,2,20,2024-01-01 10:05:00.000,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,2024-01-01 10:09:59.999",
                ],
                "{mode:?} {workers}"
            );
            // Windows of 10 minutes every 5: two a row; c >= 20 keeps y, x 30 and x 40.
            let hop = run(
                &env,
                "SELECT a, c, window_start, window_end FROM TABLE(
                   HOP(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
                 WHERE c >= 20",
            );
            assert_eq!(
                sorted_rows(&hop),
                [
                    "x,30,2024-01-01 10:05:00.000,2024-01-01 10:15:00.000",
                    "x,30,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000",
                    "x,40,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000",
                    "x,40,2024-01-01 10:15:00.000,2024-01-01 10:25:00.000",
                    "y,20,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000",
                    "y,20,2024-01-01 10:05:00.000,2024-01-01 10:15:00.000",
                ],
                "{mode:?} {workers}"
            );
            // Windows growing by 5 minutes up to 10: a row at 10:00 is in [10:00, 10:05) and
            // [10:00, 10:10), one at 10:05 in [10:00, 10:10) only.
            let cumulate = run(
                &env,
                "SELECT a, c, window_start, window_end FROM TABLE(
                   CUMULATE(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))",
            );
            assert_eq!(
                sorted_rows(&cumulate),
                [
                    "x,10,2024-01-01 10:00:00.000,2024-01-01 10:05:00.000",
                    "x,10,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000",
                    "x,30,2024-01-01 10:10:00.000,2024-01-01 10:15:00.000",
                    "x,30,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000",
                    "x,40,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000",
                    "y,20,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000",
                ],
                "{mode:?} {workers}"
            );
        }
    }
}

/// The Table API form (`window(..).select(..)` without `group_by`) gives the SQL's rows.
#[test]
fn table_api_window_rows_equal_the_sql() {
    let env = orders_env(2, ExecutionMode::Incremental);
    let table = (env.from("Orders"))
        .window(
            Slide::over(minutes(10))
                .every(minutes(5))
                .on(col("rowtime"))
                .alias("w"),
        )
        .select([
            col("a"),
            col("c"),
            col("w").start(),
            col("w").rowtime().alias("t"),
        ]);
    let sql = run(
        &env,
        "SELECT a, c, window_start, window_time AS t FROM TABLE(
           HOP(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))",
    );
    let rows = sorted_rows(&table.execute().unwrap());
    assert_eq!(rows, sorted_rows(&sql));
    assert_eq!(
        rows[..2],
        [
            "x,10,2024-01-01 09:55:00.000,2024-01-01 10:04:59.999",
            "x,10,2024-01-01 10:00:00.000,2024-01-01 10:09:59.999",
        ]
    );
    assert_eq!(rows.len(), 8);
    let session = (env.from("Orders"))
        .window(Session::with_gap(minutes(10)).on(col("rowtime")).alias("w"))
        .select([col("a")]);
    let e = session.plan().err().unwrap().to_string();
    assert!(
        e.contains("SESSION window table-valued function cannot be read directly"),
        "{e}"
    );
}

/// Bids, one row an epoch, watermark 1 s behind: A 5 at 10:01, B 7 at 10:04, C 6 at 10:12
/// (the watermark then passes [10:00, 10:10)), D 9 at 10:08 (late in final mode), E 3 at
/// 10:15, F 4 with a NULL time (refused in both modes).
const BIDS: &str = "item,price,ts
A,5,2024-01-01 10:01:00
B,7,2024-01-01 10:04:00
C,6,2024-01-01 10:12:00
D,9,2024-01-01 10:08:00
E,3,2024-01-01 10:15:00
F,4,
";

/// Flink's window Top-N following a window TVF: the 2 highest bids of each 10-minute window
/// (the window's bounds selected, so that the changes are keyed by window and rank).
/// Incremental mode ranks every row as it comes, the late D included; final mode ranks each
/// window once, when the watermark passes it, and refuses D, whose window had closed.
#[test]
fn window_top_n_over_a_tvf_in_both_modes() {
    let dir = differential_temporal::table::tempfile_dir::Dir::new();
    let csv = dir.write("bids.csv", BIDS);
    let sql = "SELECT window_start, window_end, item, price, rn FROM (
                 SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                              ORDER BY price DESC) AS rn
                 FROM TABLE(TUMBLE(TABLE Bids, DESCRIPTOR(ts), INTERVAL '10' MINUTES)))
               WHERE rn <= 2";
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = env(workers).with_mode(mode);
            env.execute_sql(&format!(
                "CREATE TABLE Bids (item STRING, price BIGINT, ts TIMESTAMP(3),
                   WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
                 WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv')"
            ))
            .unwrap();
            let result = run(&env, sql);
            let (rows, changes, refused): (&[&str], &[&str], &[&str]) = match mode {
                ExecutionMode::Incremental => (
                    &[
                        "2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,B,7,2",
                        "2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,D,9,1",
                        "2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,C,6,1",
                        "2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,E,3,2",
                    ],
                    // A leads, B takes rank 1 and pushes A to 2, C and E fill the second
                    // window, D takes rank 1 of the first (B to 2, A out).
                    &[
                        "+I,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,A,5,1",
                        "+I,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,A,5,2",
                        "+I,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,C,6,1",
                        "+I,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,E,3,2",
                        "+U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,B,7,1",
                        "+U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,B,7,2",
                        "+U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,D,9,1",
                        "-U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,A,5,1",
                        "-U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,A,5,2",
                        "-U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,B,7,1",
                    ],
                    &["the event time is NULL"],
                ),
                ExecutionMode::Final => (
                    &[
                        "2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,A,5,2",
                        "2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,B,7,1",
                        "2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,C,6,1",
                        "2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,E,3,2",
                    ],
                    // One insert a rank, each window once.
                    &[
                        "+I,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,A,5,2",
                        "+I,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,B,7,1",
                        "+I,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,C,6,1",
                        "+I,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,E,3,2",
                    ],
                    &["late row", "the event time is NULL"],
                ),
            };
            assert_eq!(sorted_rows(&result), rows, "{mode:?} {workers}");
            let mut changelog = changelog_text(&result);
            changelog.sort();
            assert_eq!(changelog, changes, "{mode:?} {workers}");
            let mut reasons: Vec<&str> = (result.refused().iter())
                .map(|(_, r)| {
                    let late = r.reason.starts_with("late row");
                    if late {
                        "late row"
                    } else {
                        &*r.reason
                    }
                })
                .collect();
            reasons.sort();
            assert_eq!(reasons, refused, "{mode:?} {workers}");
            // Flink's documented form, `SELECT *` and the top 3: every bid of a window kept
            // (D only in incremental mode), all columns and the rank.
            let star = run(
                &env,
                "SELECT * FROM (
                   SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                                ORDER BY price DESC) AS rn
                   FROM TABLE(TUMBLE(TABLE Bids, DESCRIPTOR(ts), INTERVAL '10' MINUTES)))
                 WHERE rn <= 3",
            );
            let names: Vec<&str> = star.schema().names().collect();
            assert_eq!(
                names,
                [
                    "item",
                    "price",
                    "ts",
                    "window_start",
                    "window_end",
                    "window_time",
                    "rn"
                ]
            );
            let items: Vec<String> = (sorted_rows(&star).iter())
                .map(|r| format!("{}{}", &r[..1], &r[r.len() - 1..]))
                .collect();
            let expected: &[&str] = match mode {
                ExecutionMode::Incremental => &["A3", "B2", "C1", "D1", "E2"],
                ExecutionMode::Final => &["A2", "B1", "C1", "E2"],
            };
            assert_eq!(items, expected, "{mode:?} {workers}");
        }
    }
}

#[test]
fn session_rows_and_other_misuse_are_refused() {
    let env = orders_env(1, ExecutionMode::Incremental);
    let error = |sql: &str| env.sql_query(sql).err().expect(sql).to_string();
    let e = error(
        "SELECT * FROM TABLE(SESSION(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '5' MINUTES))",
    );
    assert!(
        e.contains("the rows of a SESSION window table-valued function cannot be read directly (Flink does not support it either"),
        "{e}"
    );
    let e = error("SELECT * FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(c), INTERVAL '5' MINUTES))");
    assert!(
        e.contains("The window function TUMBLE requires the timecol to be a time attribute, but 'c' (BIGINT) is not one"),
        "{e}"
    );
    // A window aggregation still needs GROUP BY window_start, window_end.
    let e = error(
        "SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '5' MINUTES))",
    );
    assert!(
        e.contains("followed by GROUP BY window_start, window_end"),
        "{e}"
    );
}

//! Interval joins (issue 13) through SQL and the Table API: the plan node, final mode (matches
//! when the second row arrives, padded rows once the watermark passes their window, late rows
//! reported), incremental mode (the regular join, exact), and an updating input (a regular
//! join, as Flink plans it). Every CSV record is its own system time.

use differential_temporal::expr::{col, lit};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Datum};
use differential_temporal::table::TableEnv;

use super::{changelog_text, last_rows};

const L: &str = "id,k,rt\n1,a,2024-01-01 10:00:00\n2,a,2024-01-01 10:05:00\n3,b,2024-01-01 10:00:00\n4,a,2024-01-01 10:10:00\n5,a,2024-01-01 10:20:00\n";
const R: &str = "id,k,rt\n10,a,2024-01-01 10:00:30\n11,a,2024-01-01 10:02:00\n12,b,2024-01-01 10:03:00\n13,a,2024-01-01 10:10:30\n14,a,2024-01-01 10:20:00\n";
const BETWEEN: &str = "L.rt BETWEEN R.rt - INTERVAL '1' MINUTE AND R.rt + INTERVAL '1' MINUTE";

/// `L` and `R` with `WATERMARK FOR rt AS rt` on `workers` workers in `mode`.
fn tables(dir: &tempfile::TempDir, workers: usize, mode: ExecutionMode) -> TableEnv {
    tables_of(dir, workers, mode, (L, R))
}

/// `L` and `R` as [`tables`] declares them, with the CSV texts `l` and `r`.
fn tables_of(
    dir: &tempfile::TempDir,
    workers: usize,
    mode: ExecutionMode,
    (l, r): (&str, &str),
) -> TableEnv {
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let (l, r) = (write("l.csv", l), write("r.csv", r));
    let env = super::env(workers).with_mode(mode);
    env.execute_sql(&format!(
        "CREATE TABLE L (id INT, k STRING, rt TIMESTAMP(3), WATERMARK FOR rt AS rt) WITH ('connector' = 'filesystem', 'path' = '{l}', 'format' = 'csv');
         CREATE TABLE R (id INT, k STRING, rt TIMESTAMP(3), WATERMARK FOR rt AS rt) WITH ('connector' = 'filesystem', 'path' = '{r}', 'format' = 'csv');"
    ))
    .unwrap();
    env
}

/// The changelog as sorted `step,op,cells` lines (system time `t` is step `t + 1`).
fn steps(env: &TableEnv, sql: &str) -> (Vec<String>, Vec<String>) {
    let result = last_rows(env, sql);
    let times = result.changelog().iter().map(|(time, _)| time + 1);
    let mut lines: Vec<String> = times
        .zip(changelog_text(&result))
        .map(|(step, line)| format!("{step},{line}"))
        .collect();
    lines.sort();
    let refused = (result.refused().iter())
        .map(|(_, r)| r.reason.split(';').next().unwrap_or("").to_string())
        .collect();
    (lines, refused)
}

/// The watermark of both inputs is `min(max L.rt, max R.rt)` of the earlier steps: 10:00 at
/// step 2, 10:02 at step 3, 10:03 at step 4, 10:10 at step 5. Row 3 (10:00, step 3) is late.
#[test]
fn final_mode_frees_state_on_the_watermark_and_reports_late_rows() {
    let dir = tempfile::tempdir().unwrap();
    for workers in [1, 2] {
        let env = tables(&dir, workers, ExecutionMode::Final);
        let query = |kind: &str| {
            format!("SELECT L.id, R.id FROM L {kind} JOIN R ON L.k = R.k AND {BETWEEN}")
        };
        let late = vec![
            "late row: event time 2024-01-01 10:00:00 is behind the watermark 2024-01-01 10:02:00"
                .to_string(),
        ];
        // INNER: each match when its second row arrives, append-only.
        let inner = ["1,+I,1,10", "4,+I,4,13", "5,+I,5,14"];
        assert_eq!(
            steps(&env, &query("INNER")),
            (inner.map(String::from).to_vec(), late.clone())
        );
        // LEFT: row 2 (10:05) may join right rows up to 10:06; the watermark passes 10:06 at
        // step 5, which frees it and emits it padded.
        let left = ["1,+I,1,10", "4,+I,4,13", "5,+I,2,", "5,+I,5,14"];
        assert_eq!(
            steps(&env, &query("LEFT")),
            (left.map(String::from).to_vec(), late.clone())
        );
        // FULL: the right rows 11 (10:02) and 12 (b, 10:03; its partner 3 was late) too.
        let full = [
            "1,+I,1,10",
            "4,+I,4,13",
            "5,+I,,11",
            "5,+I,,12",
            "5,+I,2,",
            "5,+I,5,14",
        ];
        assert_eq!(
            steps(&env, &query("FULL")),
            (full.map(String::from).to_vec(), late.clone())
        );
        // RIGHT, with strict bounds in the `>`/`<` form.
        let strict = "L.rt > R.rt - INTERVAL '1' MINUTE AND L.rt < R.rt + INTERVAL '1' MINUTE";
        let right = format!("SELECT L.id, R.id FROM L RIGHT JOIN R ON L.k = R.k AND {strict}");
        let expected = [
            "1,+I,1,10",
            "4,+I,4,13",
            "5,+I,,11",
            "5,+I,,12",
            "5,+I,5,14",
        ];
        assert_eq!(
            steps(&env, &right),
            (expected.map(String::from).to_vec(), late.clone())
        );
    }
}

/// `SET 'table.exec.source.idle-timeout'`: `R` sends 10:00:30 at step 1 and nothing until
/// step 6; `L` sends 10:00, 10:05, 10:10 at steps 1-3 and nothing until step 7 (10:20). With
/// 3 ms (3 system times at the default 1 ms tick) `R` is idle from step 5, where no input
/// sends anything: the watermark rises to `L`'s 10:10 there and frees row 2 (padded). `R`'s
/// row at 10:01 (step 6) is then late, and `R` holds the watermark back again from step 7 on
/// (it never goes back): rows 3 and 4 are padded when the inputs end (step 8).
/// Without the timeout `R`'s 10:00:30 holds every `L` row until the inputs end (step 8), and
/// the row at 10:01 joins row 1.
#[test]
fn an_idle_side_stops_holding_the_watermark_after_the_timeout() {
    let l = "id,k,rt\n1,a,2024-01-01 10:00:00\n2,a,2024-01-01 10:05:00\n3,a,2024-01-01 10:10:00\n\n\n\n4,a,2024-01-01 10:20:00\n";
    let r = "id,k,rt\n10,a,2024-01-01 10:00:30\n\n\n\n\n11,a,2024-01-01 10:01:00\n";
    let query = format!("SELECT L.id, R.id FROM L LEFT JOIN R ON L.k = R.k AND {BETWEEN}");
    let dir = tempfile::tempdir().unwrap();
    for workers in [1, 2] {
        let env = tables_of(&dir, workers, ExecutionMode::Final, (l, r));
        let lines = |rows: &[&str]| rows.iter().map(|r| r.to_string()).collect::<Vec<_>>();
        let held = lines(&["1,+I,1,10", "6,+I,1,11", "8,+I,2,", "8,+I,3,", "8,+I,4,"]);
        assert_eq!(steps(&env, &query), (held, vec![]));
        env.execute_sql("SET 'table.exec.source.idle-timeout' = '3 ms'")
            .unwrap();
        let late =
            "late row: event time 2024-01-01 10:01:00 is behind the watermark 2024-01-01 10:10:00";
        let released = lines(&["1,+I,1,10", "5,+I,2,", "8,+I,3,", "8,+I,4,"]);
        assert_eq!(steps(&env, &query), (released, vec![late.to_string()]));
    }
    let env = TableEnv::new();
    let err = env
        .execute_sql("SET 'table.exec.source.idle-timeout' = 'soon'")
        .unwrap_err();
    assert!(
        err.to_string().contains(
            "'table.exec.source.idle-timeout' takes a duration ('0' for off), not 'soon'"
        ),
        "{err}"
    );
}

/// Incremental mode is the regular join: exact, the late row joined (here: padded).
#[test]
fn incremental_mode_is_the_regular_join() {
    let dir = tempfile::tempdir().unwrap();
    let env = tables(&dir, 2, ExecutionMode::Incremental);
    let sql = format!("SELECT L.id, R.id FROM L LEFT JOIN R ON L.k = R.k AND {BETWEEN}");
    let result = last_rows(&env, &sql);
    assert_eq!(result.rows_as_text(), ["1,10", "2,", "3,", "4,13", "5,14"]);
    assert!(result.refused().is_empty());
}

/// The plan: an `IntervalJoin` with its window from SQL and from the Table API; with an
/// updating input, a regular `Join`.
#[test]
fn explain_shows_the_interval_join() {
    let dir = tempfile::tempdir().unwrap();
    let env = tables(&dir, 1, ExecutionMode::Final);
    let sql = format!("SELECT * FROM L JOIN R ON L.k = R.k AND {BETWEEN}");
    let explained = env.sql_query(&sql).unwrap().plan().unwrap().explain();
    assert!(
        explained.contains("IntervalJoin(kind=INNER, keys=[k=k0], interval=[rt - rt0 BETWEEN -60000 ms AND 60000 ms]"),
        "{explained}"
    );
    // The Table API: `rt BETWEEN rt0 - 1 min AND rt0 + 1 min`, LEFT.
    let minute = || {
        let interval = (
            Datum::IntervalDayTime(60_000),
            DataType::IntervalDayTime.not_null(),
        );
        lit(interval)
    };
    let window = col("rt").between(col("rt0").sub(minute()), col("rt0").add(minute()));
    let api = env
        .from("L")
        .left_outer_join(&env.from("R"), col("k").eq(col("k0")).and(window));
    let explained = api.plan().unwrap().explain();
    assert!(explained.contains("IntervalJoin(kind=LEFT"), "{explained}");
    let result = api.select([col("id"), col("id0")]).execute().unwrap();
    assert_eq!(result.rows_as_text(), ["1,10", "2,", "4,13", "5,14"]);
    assert_eq!(result.refused().len(), 1);
    // An updating input (a changelog file): Flink plans a regular join, so do we.
    let path = dir.path().join("u.csv");
    std::fs::write(
        &path,
        "op,id,k,rt\n+I,10,a,2024-01-01 10:00:30\n-D,10,a,2024-01-01 10:00:30\n",
    )
    .unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE U (id INT, k STRING, rt TIMESTAMP(3), WATERMARK FOR rt AS rt) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    ))
    .unwrap();
    let sql = format!("SELECT * FROM L JOIN U AS R ON L.k = R.k AND {BETWEEN}");
    let explained = env.sql_query(&sql).unwrap().plan().unwrap().explain();
    assert!(
        explained.contains("Join(kind=INNER") && !explained.contains("IntervalJoin"),
        "{explained}"
    );
}

//! Deduplication by rowtime through SQL in both modes (rules A8, A9): keep-first in incremental
//! mode revises a key's row when an earlier one arrives (`-U`/`+U`); in final mode it is the
//! insert-only keep-first of Flink 2.1 and later, each key's row emitted once when the
//! watermark passes it, rows behind the watermark reported as late. Every CSV record is its
//! own system time.

use differential_temporal::render::ExecutionMode;

use super::{changelog_text, last_rows};

/// Key `a` at 10:05, then 10:04:30 (earlier: it replaces 10:05, and in final mode it is not
/// behind the watermark 10:05 - 1 min), key `b` at 10:10, key `a` at 10:01 (in final mode behind
/// the watermark 10:09, which has passed 10:04:30: `a`'s row is emitted), key `a` at 10:20
/// (ignored in final mode: `a`'s row was emitted).
const EVENTS: &str = "id,k,rt\n1,a,2024-01-01 10:05:00\n2,a,2024-01-01 10:04:30\n3,b,2024-01-01 10:10:00\n4,a,2024-01-01 10:01:00\n5,a,2024-01-01 10:20:00\n";

const FIRST: &str = "SELECT id, k, rt FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY rt ASC) AS rn FROM E) WHERE rn = 1";

/// The changelog and the refused rows' reasons of [`FIRST`] over [`EVENTS`] in `mode`.
fn first_rows(workers: usize, mode: ExecutionMode) -> (Vec<String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.csv");
    std::fs::write(&path, EVENTS).unwrap();
    let env = super::env(workers).with_mode(mode);
    let ddl = format!(
        "CREATE TABLE E (id INT, k STRING, rt TIMESTAMP(3), WATERMARK FOR rt AS rt - INTERVAL '1' MINUTE)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');",
        path.display()
    );
    env.execute_sql(&ddl).unwrap();
    let result = last_rows(&env, FIRST);
    let refused = (result.refused().iter())
        .map(|(_, r)| format!("line {}: {}", r.seq, r.reason))
        .collect();
    (changelog_text(&result), refused)
}

#[test]
fn keep_first_by_rowtime_revises_in_incremental_mode() {
    for workers in [1, 2] {
        let (changelog, refused) = first_rows(workers, ExecutionMode::Incremental);
        assert_eq!(
            changelog,
            [
                "+I,1,a,2024-01-01 10:05:00.000",
                "-U,1,a,2024-01-01 10:05:00.000",
                "+U,2,a,2024-01-01 10:04:30.000",
                "+I,3,b,2024-01-01 10:10:00.000",
                "-U,2,a,2024-01-01 10:04:30.000",
                "+U,4,a,2024-01-01 10:01:00.000",
            ],
            "{workers} worker(s)"
        );
        assert!(refused.is_empty(), "{refused:?}");
    }
}

#[test]
fn keep_first_by_rowtime_is_insert_only_in_final_mode() {
    for workers in [1, 2] {
        let (changelog, refused) = first_rows(workers, ExecutionMode::Final);
        assert_eq!(
            changelog,
            [
                "+I,2,a,2024-01-01 10:04:30.000",
                "+I,3,b,2024-01-01 10:10:00.000",
            ],
            "{workers} worker(s)"
        );
        assert_eq!(
            refused,
            ["line 5: late row: event time 2024-01-01 10:01:00 is behind the watermark 2024-01-01 10:09:00"],
            "{workers} worker(s)"
        );
    }
}

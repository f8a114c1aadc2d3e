//! Top-N (issue 12): `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..) AS rn` in a subquery with
//! `rn <= N` (or `rn < N`, `rn = 1` by a non-time order) outside it, with and without `rn` in
//! the outer select, over the seed's Orders; the changelog holds only the changed ranks. Window
//! Top-N ranks a window aggregation's rows per `window_start, window_end`.

use differential_temporal::render::ExecutionMode;

use super::{changelog_text, orders_env};

#[test]
fn top_n_per_partition_with_the_row_number() {
    for workers in [1, 2] {
        let env = orders_env(workers, ExecutionMode::Incremental);
        let sql = "SELECT a, b, rn FROM (
                     SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC) AS rn FROM Orders)
                   WHERE rn <= 2";
        let result = env.sql_query(sql).unwrap().execute().unwrap();
        // x: 3 then 1 (NULL is the smallest value, last when descending); y: 2.
        assert_eq!(
            result.rows_as_text(),
            ["x,1,2", "x,3,1", "y,2,1"],
            "{workers}"
        );
        let mut changes = changelog_text(&result);
        changes.sort();
        // x,3 takes rank 1 of x (an update by the key: partition and rank), x,1 moves to rank
        // 2; x,NULL (rank 3) changes nothing.
        assert_eq!(
            changes,
            ["+I,x,1,1", "+I,x,1,2", "+I,y,2,1", "+U,x,3,1", "-U,x,1,1"],
            "{workers}"
        );
    }
}

#[test]
fn top_n_without_the_row_number_emits_only_entering_and_leaving_rows() {
    let env = orders_env(2, ExecutionMode::Incremental);
    let sql = "SELECT a, c FROM (
                 SELECT *, ROW_NUMBER() OVER (ORDER BY c) AS rn FROM Orders) WHERE rn < 3";
    let result = env.sql_query(sql).unwrap().execute().unwrap();
    assert_eq!(result.rows_as_text(), ["x,10", "y,20"]);
    let mut changes = changelog_text(&result);
    changes.sort();
    assert_eq!(changes, ["+I,x,10", "+I,y,20"]);
    // Top-1 by a column that is not a time attribute is a Top-N, not a deduplication.
    let top1 = "SELECT a, c FROM (
                  SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY c DESC) AS rn FROM Orders)
                WHERE rn = 1";
    let result = env.sql_query(top1).unwrap().execute().unwrap();
    assert_eq!(result.rows_as_text(), ["x,40", "y,20"]);
}

#[test]
fn other_row_number_filters_are_refused() {
    let env = orders_env(1, ExecutionMode::Incremental);
    let err = |sql: &str| match env.sql_query(sql) {
        Ok(_) => panic!("accepted: {sql}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err("SELECT a FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY c) AS rn FROM Orders) WHERE rn >= 2"),
        "SQL validation error at line 1, column 26: ROW_NUMBER() is supported in Flink's Top-N and deduplication patterns: the outer query must filter WHERE rn <= N (or rn < N, rn = 1)"
    );
    assert_eq!(
        err("SELECT a FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a) AS rn FROM Orders) WHERE rn <= 2"),
        "SQL validation error at line 1, column 26: ROW_NUMBER() needs an ORDER BY and no window frame"
    );
}

/// Window Top-N (Flink's form: `ROW_NUMBER()` partitioned by `window_start, window_end` over a
/// window aggregation): the top supplier of each 10-minute window by summed `c`. Incremental
/// mode ranks as the windows fill; final mode ranks each window once, when it closes.
#[test]
fn window_top_n_over_a_window_aggregation() {
    let sql = "SELECT window_start, window_end, a, total, rownum FROM (
                 SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                              ORDER BY total DESC) AS rownum
                 FROM (SELECT window_start, window_end, a, SUM(c) AS total
                       FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '10' MINUTE))
                       GROUP BY window_start, window_end, a))
               WHERE rownum <= 1";
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = orders_env(workers, mode);
            let result = env.sql_query(sql).unwrap().execute().unwrap();
            // [10:00, 10:10): x 10, y 20; [10:10, 10:20): x 30 + 40.
            assert_eq!(
                result.rows_as_text(),
                [
                    "2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,y,20,1",
                    "2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,x,70,1"
                ],
                "{mode:?} {workers}"
            );
            let mut changes = changelog_text(&result);
            changes.sort();
            let expected: &[&str] = match mode {
                // Each window's leader as its sums grow: x leads both, then y and x (70).
                ExecutionMode::Incremental => &[
                    "+I,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,x,10,1",
                    "+I,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,x,30,1",
                    "+U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,y,20,1",
                    "+U,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,x,70,1",
                    "-U,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,x,10,1",
                    "-U,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,x,30,1",
                ],
                // Each window's sums once, when it closes: one insert a window.
                ExecutionMode::Final => &[
                    "+I,2024-01-01 10:00:00.000,2024-01-01 10:10:00.000,y,20,1",
                    "+I,2024-01-01 10:10:00.000,2024-01-01 10:20:00.000,x,70,1",
                ],
            };
            assert_eq!(changes, expected, "{mode:?} {workers}");
        }
    }
}

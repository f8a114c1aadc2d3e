//! OVER aggregations (issue 12) in SQL and the Table API: RANGE and ROWS frames over the seed's
//! Orders, `WINDOW w AS (...)`, arithmetic on OVER calls, an out-of-order row revising the rows
//! after it (incremental mode) or refused as late (final mode), and the refusals.

use differential_temporal::expr::col;
use differential_temporal::render::ExecutionMode;
use differential_temporal::table::{minutes, Over, TableEnv, UNBOUNDED_RANGE};

use super::{changelog_text, env, last_rows, orders_env};

fn rows(env: &TableEnv, sql: &str) -> Vec<String> {
    env.sql_query(sql)
        .unwrap()
        .execute()
        .unwrap()
        .rows_as_text()
}

/// Per `a`, the sum and count of the last 10 minutes: `x`'s 10:15 row sees 10:10 and itself
/// (its NULL `b` counted by COUNT(*) only), not 10:00.
const RANGE_10_MIN: [&str; 4] = ["x,,3,2", "x,1,1,1", "x,3,4,2", "y,2,2,1"];

#[test]
fn range_frame_per_partition_in_sql_and_table_api() {
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = orders_env(workers, mode);
            let sql = rows(
                &env,
                "SELECT a, b,
                   SUM(b) OVER (PARTITION BY a ORDER BY rowtime
                     RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW) AS s,
                   COUNT(*) OVER (PARTITION BY a ORDER BY rowtime
                     RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW) AS n
                 FROM Orders",
            );
            assert_eq!(sql, RANGE_10_MIN, "{mode:?} on {workers} workers");
            let w = Over::partition_by([col("a")])
                .order_by(col("rowtime"))
                .preceding(minutes(10))
                .alias("w");
            let table_api = env.from("Orders").window(w).select([
                col("a"),
                col("b"),
                col("b").sum().over(col("w")).alias("s"),
                differential_temporal::expr::count_star()
                    .over(col("w"))
                    .alias("n"),
            ]);
            let result = table_api.execute().unwrap();
            assert_eq!(
                result.rows_as_text(),
                RANGE_10_MIN,
                "{mode:?} on {workers} workers"
            );
        }
    }
}

#[test]
fn named_window_rows_frame_and_arithmetic() {
    let env = orders_env(2, ExecutionMode::Incremental);
    // The last two rows by time, whatever their `a`: 10:00, 10:05, 10:10, 10:15.
    let sql =
        "SELECT b, MAX(b) OVER w AS m, SUM(b) OVER w * 10 / COUNT(*) OVER w AS q, COUNT(b) OVER w
               FROM Orders WINDOW w AS (ORDER BY rowtime ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)";
    assert_eq!(
        rows(&env, sql),
        [",3,15,1", "1,1,10,1", "2,2,15,2", "3,3,25,2"]
    );
    let result = env.sql_query(sql).unwrap().execute().unwrap();
    assert_eq!(
        result.schema().names().collect::<Vec<_>>(),
        ["b", "m", "q", "EXPR$3"]
    );
    // Flink's default frame: every row up to the current one's time, unbounded.
    let running = "SELECT b, SUM(b) OVER (ORDER BY rowtime) AS s FROM Orders";
    assert_eq!(rows(&env, running), [",6", "1,1", "2,3", "3,6"]);
    let table_api = env
        .from("Orders")
        .window(
            Over::order_by(col("rowtime"))
                .preceding(UNBOUNDED_RANGE)
                .alias("w"),
        )
        .select([col("b"), col("b").sum().over(col("w")).alias("s")]);
    assert_eq!(
        table_api.execute().unwrap().rows_as_text(),
        [",6", "1,1", "2,3", "3,6"]
    );
}

/// Rows at 1, 2, 4, 8 then 3 ms, one an epoch, the watermark at the largest time seen: in
/// incremental mode the row at 3 ms enters the 5 ms frames of the rows at 4 ms (1 + 2 + 4 -> 10)
/// and 8 ms (4 + 8 -> 15), which are retracted and re-emitted; in final mode it is behind the
/// watermark 8 and refused.
#[test]
fn an_out_of_order_row_revises_or_is_refused() {
    let dir = differential_temporal::table::tempfile_dir::Dir::new();
    let csv = dir.write(
        "t.csv",
        "v,rowtime\n1,1970-01-01 00:00:00.001\n2,1970-01-01 00:00:00.002\n\
         4,1970-01-01 00:00:00.004\n8,1970-01-01 00:00:00.008\n3,1970-01-01 00:00:00.003\n",
    );
    let script = format!(
        "CREATE TABLE T (v BIGINT, rowtime TIMESTAMP(3), WATERMARK FOR rowtime AS rowtime)
         WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv');
         SELECT v, SUM(v) OVER (ORDER BY rowtime
           RANGE BETWEEN INTERVAL '0.005' SECOND PRECEDING AND CURRENT ROW) AS s FROM T;"
    );
    let incremental = last_rows(&env(2), &script);
    assert_eq!(
        incremental.rows_as_text(),
        ["1,1", "2,3", "3,6", "4,10", "8,15"]
    );
    let changes = changelog_text(&incremental);
    assert!(changes.contains(&"-D,4,7".to_string()), "{changes:?}");
    assert!(changes.contains(&"-D,8,12".to_string()), "{changes:?}");
    let final_mode = last_rows(&env(2).with_mode(ExecutionMode::Final), &script);
    assert_eq!(final_mode.rows_as_text(), ["1,1", "2,3", "4,7", "8,12"]);
    let refused: Vec<_> = final_mode.refused().iter().map(|(_, r)| r.seq).collect();
    assert_eq!(refused.len(), 1, "{:?}", final_mode.refused());
}

#[test]
fn unsupported_over_windows_are_refused_with_the_reason() {
    let env = orders_env(1, ExecutionMode::Incremental);
    let err = |sql: &str| match env.sql_query(sql) {
        Ok(_) => panic!("accepted: {sql}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err("SELECT SUM(b) OVER (ORDER BY rowtime), COUNT(*) OVER (PARTITION BY a ORDER BY rowtime) FROM Orders"),
        "SQL validation error at line 1, column 40: All aggregates must be computed on the same window: this OVER window differs from the first one of the select"
    );
    assert_eq!(
        err("SELECT SUM(b) OVER (ORDER BY b) FROM Orders"),
        "SQL validation error at line 1, column 8: OverAggregate: OVER windows' ordering in stream mode must be defined on a time attribute, but 'b' (BIGINT) is not one (declare a WATERMARK for it, or AS PROCTIME())"
    );
    assert_eq!(
        err("SELECT SUM(b) OVER (ORDER BY rowtime DESC) FROM Orders"),
        "SQL validation error at line 1, column 30: OVER windows' ordering in stream mode must be ascending on a time attribute, not DESC"
    );
    assert_eq!(
        err("SELECT SUM(b) OVER (ORDER BY rowtime ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM Orders"),
        "SQL validation error at line 1, column 8: OVER windows end at CURRENT ROW in streaming mode; the bound 1 FOLLOWING is not supported"
    );
    assert_eq!(
        err("SELECT SUM(b) OVER (ORDER BY rowtime RANGE BETWEEN 10 PRECEDING AND CURRENT ROW) FROM Orders"),
        "SQL validation error at line 1, column 8: a RANGE frame over a time attribute is an interval: RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW, not 10 PRECEDING"
    );
    assert_eq!(
        err("SELECT SUM(b) OVER w FROM Orders"),
        "SQL validation error at line 1, column 8: Window 'w' not found: define it with WINDOW w AS (...)"
    );
    assert_eq!(
        err("SELECT a, SUM(b) OVER (ORDER BY rowtime) FROM Orders GROUP BY a"),
        "SQL validation error at line 1, column 8: OVER aggregates and GROUP BY in one select are not supported: aggregate in a subquery, then apply the OVER window"
    );
}

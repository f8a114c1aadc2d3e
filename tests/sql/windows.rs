//! Window aggregations (issue 12) in SQL and the Table API: the seed's hourly tumbling window
//! with `avg` (Table API, SQL window TVF, SQL legacy group window), case E03 (tumbling window
//! with allowed lateness, final mode), case E02 (session merge) in both modes and a late row
//! bridging fired sessions within the allowed lateness (final mode), the hourly count of flights per origin over the shipped
//! January 2013 flights in the three forms, and the refusals.

use differential_temporal::expr::{col, lit};
use differential_temporal::render::ExecutionMode;
use differential_temporal::table::{hours, millis, Session, Slide, TableEnv, TableResult, Tumble};

use super::{changelog_text, env, last_rows, orders_env};

/// The seed's second Table API example: `x` has b = 1 and 3 in the hour from 10:00 (its row
/// with a NULL b filtered out), `y` has 2.
const SEED_HOURLY: [&str; 2] = ["x,2024-01-01 11:00:00.000,2", "y,2024-01-01 11:00:00.000,2"];

#[test]
fn seed_hourly_tumbling_window_avg_in_table_api_and_sql() {
    for workers in [1, 2] {
        let env = orders_env(workers, ExecutionMode::Incremental);
        let hourly = env
            .from("Orders")
            .filter(
                col("a")
                    .is_not_null()
                    .and(col("b").is_not_null())
                    .and(col("c").is_not_null()),
            )
            .select([col("a").lower().alias("a"), col("b"), col("rowtime")])
            .window(
                Tumble::over(hours(1))
                    .on(col("rowtime"))
                    .alias("hourlyWindow"),
            )
            .group_by([col("hourlyWindow"), col("a")])
            .select([
                col("a"),
                col("hourlyWindow").end().alias("hour"),
                col("b").avg().alias("avg_billing_amount"),
            ]);
        let table_api = hourly.execute().unwrap();
        assert_eq!(table_api.rows_as_text(), SEED_HOURLY, "{workers} workers");
        let where_ = "WHERE a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL";
        let tvf = format!(
            "SELECT LOWER(a) AS a, window_end AS `hour`, AVG(b) AS avg_billing_amount
             FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '1' HOUR)) {where_}
             GROUP BY window_start, window_end, LOWER(a)"
        );
        let legacy = format!(
            "SELECT LOWER(a) AS a, TUMBLE_END(rowtime, INTERVAL '1' HOUR) AS `hour`,
                    AVG(b) AS avg_billing_amount
             FROM Orders {where_} GROUP BY TUMBLE(rowtime, INTERVAL '1' HOUR), LOWER(a)"
        );
        for sql in [tvf, legacy] {
            let rows = env.sql_query(&sql).unwrap().execute().unwrap();
            assert_eq!(rows.rows_as_text(), SEED_HOURLY, "{sql}");
            assert_eq!(
                rows.schema().names().collect::<Vec<_>>(),
                ["a", "hour", "avg_billing_amount"]
            );
        }
    }
}

/// Named arguments, an offset, HOP and CUMULATE: `x`'s rows at 10:00 and 10:10 (b = 1, 3),
/// `y`'s at 10:05 (b = 2), `x`'s 10:15 row with a NULL b counted by COUNT(*) only.
#[test]
fn hop_cumulate_offsets_and_named_arguments() {
    let env = orders_env(2, ExecutionMode::Incremental);
    let rows = |sql: &str| {
        env.sql_query(sql)
            .unwrap()
            .execute()
            .unwrap()
            .rows_as_text()
    };
    assert_eq!(
        rows(
            "SELECT a, window_start, COUNT(*) AS n, SUM(b) AS s FROM TABLE(TUMBLE(
                DATA => TABLE Orders, TIMECOL => DESCRIPTOR(rowtime),
                SIZE => INTERVAL '10' MINUTE, `OFFSET` => INTERVAL '5' MINUTE))
              GROUP BY a, window_start, window_end"
        ),
        [
            "x,2024-01-01 09:55:00.000,1,1",
            "x,2024-01-01 10:05:00.000,1,3",
            "x,2024-01-01 10:15:00.000,1,",
            "y,2024-01-01 10:05:00.000,1,2",
        ]
    );
    assert_eq!(
        rows(
            "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(
                HOP(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '10' MINUTE, INTERVAL '20' MINUTE))
              GROUP BY window_start, window_end"
        ),
        [
            "2024-01-01 09:50:00.000,2024-01-01 10:10:00.000,2",
            "2024-01-01 10:00:00.000,2024-01-01 10:20:00.000,4",
            "2024-01-01 10:10:00.000,2024-01-01 10:30:00.000,2",
        ]
    );
    assert_eq!(
        rows("SELECT window_end, COUNT(*) AS n, MAX(b) AS m FROM TABLE(
                CUMULATE(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '10' MINUTE, INTERVAL '1' HOUR))
              GROUP BY window_start, window_end"),
        [
            "2024-01-01 10:10:00.000,2,2",
            "2024-01-01 10:20:00.000,4,3",
            "2024-01-01 10:30:00.000,4,3",
            "2024-01-01 10:40:00.000,4,3",
            "2024-01-01 10:50:00.000,4,3",
            "2024-01-01 11:00:00.000,4,3",
        ]
    );
    let slide = env
        .from("Orders")
        .window(
            Slide::over(differential_temporal::table::minutes(20))
                .every(differential_temporal::table::minutes(10))
                .on(col("rowtime"))
                .alias("w"),
        )
        .group_by([col("w")])
        .select([
            col("w").start(),
            col("w").end(),
            col("w").rowtime(),
            lit(1i64).count().alias("n"),
        ]);
    assert_eq!(
        slide.execute().unwrap().rows_as_text(),
        [
            "2024-01-01 09:50:00.000,2024-01-01 10:10:00.000,2024-01-01 10:09:59.999,2",
            "2024-01-01 10:00:00.000,2024-01-01 10:20:00.000,2024-01-01 10:19:59.999,4",
            "2024-01-01 10:10:00.000,2024-01-01 10:30:00.000,2024-01-01 10:29:59.999,2",
        ]
    );
}

/// Case E03 (`../shared/cases/E03_tumble_allowed_lateness.case`): in final mode with an allowed
/// lateness of 10 ms and the watermark at the largest time seen, one row an epoch, the rows of
/// the 5 ms windows emit when the watermark passes them, late rows within the lateness update
/// them (-U/+U; here in the epoch the window fires, so the changelog shows the updated row),
/// and the last row (3 ms, behind the watermark 16 by more than 4 + 10) is refused
/// and reported. The case's `weightAvgFun` (a test UDAF) is left out.
#[test]
fn case_e03_tumble_with_allowed_lateness() {
    let dir = differential_temporal::table::tempfile_dir::Dir::new();
    let csv = dir.write(
        "t1.csv",
        "long,int,string,rowtime\n\
         1,1,Hi,1970-01-01 00:00:00.001\n\
         2,2,Hello,1970-01-01 00:00:00.002\n\
         4,2,Hello,1970-01-01 00:00:00.004\n\
         8,3,Hello world,1970-01-01 00:00:00.008\n\
         4,3,Hello,1970-01-01 00:00:00.004\n\
         16,3,Hello world,1970-01-01 00:00:00.016\n\
         9,4,Hello world,1970-01-01 00:00:00.009\n\
         3,1,Hi,1970-01-01 00:00:00.003\n",
    );
    let query = "SELECT `string`,
          TUMBLE_START(rowtime, INTERVAL '0.005' SECOND) AS w_start,
          TUMBLE_END(rowtime, INTERVAL '0.005' SECOND) AS w_end,
          COUNT(DISTINCT `long`), COUNT(`int`), CAST(AVG(`int`) AS INT),
          MIN(`int`), MAX(`int`), SUM(`int`)
        FROM T1
        GROUP BY `string`, TUMBLE(rowtime, INTERVAL '0.005' SECOND)";
    for workers in [1, 2] {
        let env = env(workers).with_mode(ExecutionMode::Final);
        let script = format!(
            "CREATE TABLE T1 (`long` BIGINT, `int` INT, `string` STRING, rowtime TIMESTAMP(3),
                WATERMARK FOR rowtime AS rowtime)
             WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv');
             SET 'table.exec.emit.allow-lateness' = '10 ms';
             {query};"
        );
        let result: TableResult = last_rows(&env, &script);
        assert_eq!(
            result.rows_as_text(),
            [
                "Hello,1970-01-01 00:00:00.000,1970-01-01 00:00:00.005,2,3,2,2,3,7",
                "Hello world,1970-01-01 00:00:00.005,1970-01-01 00:00:00.010,2,2,3,3,4,7",
                "Hello world,1970-01-01 00:00:00.015,1970-01-01 00:00:00.020,1,1,3,3,3,3",
                "Hi,1970-01-01 00:00:00.000,1970-01-01 00:00:00.005,1,1,1,1,1,1",
            ],
            "{workers} workers"
        );
        let refused: Vec<_> = result.refused().iter().map(|(_, r)| r.seq).collect();
        assert_eq!(refused.len(), 1, "{:?}", result.refused());
        assert!(result.refused()[0].1.reason.starts_with("late row"));
    }
}

/// Sub-millisecond event times in final mode: the window `[0, 10 ms)` fires when the
/// watermark reaches its end, not as soon as it passes `window_time` (9 ms): a row at 9.7 ms
/// arriving after one at 9.5 ms (watermark 9.5 ms, no delay) is in the window, not late; the
/// row at 10.2 ms then closes it. Both the TVF and the legacy form.
#[test]
fn a_window_closes_at_its_end_with_sub_millisecond_times() {
    let dir = differential_temporal::table::tempfile_dir::Dir::new();
    let csv = dir.write(
        "fine.csv",
        "k,ts\n\
         a,1970-01-01 00:00:00.009500\n\
         a,1970-01-01 00:00:00.009700\n\
         a,1970-01-01 00:00:00.010200\n",
    );
    for workers in [1, 2] {
        let env = env(workers).with_mode(ExecutionMode::Final);
        let ddl = format!(
            "CREATE TABLE fine (k STRING, ts TIMESTAMP(6), WATERMARK FOR ts AS ts)
             WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv')"
        );
        env.execute_sql(&ddl).unwrap();
        for query in [
            "SELECT k, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE fine, DESCRIPTOR(ts),
               INTERVAL '0.01' SECOND)) GROUP BY k, window_start, window_end",
            "SELECT k, TUMBLE_START(ts, INTERVAL '0.01' SECOND), COUNT(*) FROM fine
               GROUP BY k, TUMBLE(ts, INTERVAL '0.01' SECOND)",
        ] {
            let result = env.sql_query(query).unwrap().execute().unwrap();
            assert_eq!(
                result.rows_as_text(),
                ["a,1970-01-01 00:00:00.000,2", "a,1970-01-01 00:00:00.010,1"],
                "{workers} workers: {query}"
            );
            assert!(
                result.refused().is_empty(),
                "{workers} workers: {query}: {:?}",
                result.refused()
            );
        }
    }
}

/// The hourly number of flights per origin over the shipped January 2013 flights: the Table
/// API, the SQL window TVF and the legacy group window give the same 1,642 windows.
#[test]
fn hourly_flights_per_origin_agree_in_three_forms() {
    let windows = hourly_flights_per_origin("flights_2013-01.csv", 27_004);
    assert_eq!(windows.len(), 1642);
    for row in [
        "EWR,2013-01-01 05:00:00.000,2",
        "JFK,2013-01-01 06:00:00.000,17",
        "EWR,2013-01-15 08:00:00.000,28",
        "EWR,2013-01-04 06:00:00.000,35",
    ] {
        assert!(windows.iter().any(|r| r == row), "{row}");
    }
}

/// The same over the whole year (`flights_2013_origin.csv.gz`: every 2013 flight's `id`, `ts`
/// and `origin`, the columns the query reads): 19,486 windows in each form.
#[test]
fn hourly_flights_per_origin_over_the_year_agree_in_three_forms() {
    let windows = hourly_flights_per_origin("flights_2013_origin.csv.gz", 336_776);
    assert_eq!(windows.len(), 19_486);
    assert!(windows.iter().any(|r| r == "EWR,2013-01-01 05:00:00.000,2"));
}

/// The hourly windows of flights per origin over the shipped flights file `file`, by the Table
/// API, checked equal to the SQL window TVF's and the legacy group window's, their counts
/// adding up to the file's `rows`.
fn hourly_flights_per_origin(file: &str, rows: i64) -> Vec<String> {
    let env = TableEnv::new().with_workers(2);
    let path = format!("{}/data/nycflights13/{file}", env!("CARGO_MANIFEST_DIR"));
    env.execute_sql(&format!(
        "CREATE TABLE flights (id BIGINT, ts TIMESTAMP(3), origin STRING,
            WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)
         WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"
    ))
    .unwrap();
    let table_api = env
        .from("flights")
        .window(Tumble::over(hours(1)).on(col("ts")).alias("w"))
        .group_by([col("origin"), col("w")])
        .select([
            col("origin"),
            col("w").start().alias("hour"),
            col("id").count().alias("n"),
        ])
        .execute()
        .unwrap()
        .rows_as_text();
    let sql = |q: &str| env.sql_query(q).unwrap().execute().unwrap().rows_as_text();
    let tvf = sql("SELECT origin, window_start AS `hour`, COUNT(id) AS n
         FROM TABLE(TUMBLE(TABLE flights, DESCRIPTOR(ts), INTERVAL '1' HOUR))
         GROUP BY origin, window_start, window_end");
    let legacy = sql(
        "SELECT origin, TUMBLE_START(ts, INTERVAL '1' HOUR) AS `hour`, COUNT(id) AS n
         FROM flights GROUP BY origin, TUMBLE(ts, INTERVAL '1' HOUR)",
    );
    assert_eq!(tvf, table_api);
    assert_eq!(legacy, table_api);
    let total: i64 = table_api
        .iter()
        .map(|r| r.rsplit(',').next().unwrap().parse::<i64>().unwrap())
        .sum();
    assert_eq!(total, rows);
    table_api
}

/// Misuse is refused with the reason (Flink's words where it has them).
#[test]
fn window_misuse_is_refused() {
    let env = orders_env(1, ExecutionMode::Incremental);
    let error = |sql: &str| env.sql_query(sql).err().expect(sql).to_string();
    let e = error(
        "SELECT a, COUNT(*) FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(rowtime), INTERVAL '1' HOUR))
         GROUP BY a",
    );
    assert!(
        e.contains("followed by GROUP BY window_start, window_end"),
        "{e}"
    );
    let e = error(
        "SELECT COUNT(*) FROM TABLE(CUMULATE(TABLE Orders, DESCRIPTOR(rowtime),
            INTERVAL '7' MINUTE, INTERVAL '1' HOUR)) GROUP BY window_start, window_end",
    );
    assert!(
        e.contains("Cumulative Window requires maxSize must be an integral multiple of step, but got maxSize 3600000ms and step 420000ms."),
        "{e}"
    );
    let e = error(
        "SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(a), INTERVAL '1' HOUR))
         GROUP BY window_start, window_end",
    );
    assert!(e.contains("Window aggregate can only be defined over a time attribute column, but 'a' (STRING) is not one"), "{e}");
    let e = error(
        "SELECT HOP_END(rowtime, INTERVAL '1' HOUR, INTERVAL '2' HOUR), COUNT(*) FROM Orders
         GROUP BY TUMBLE(rowtime, INTERVAL '1' HOUR)",
    );
    assert!(
        e.contains("HOP_END must have the arguments of the group window TUMBLE(..)"),
        "{e}"
    );
    let e = error(
        "SELECT a, COUNT(*) FROM TABLE(SESSION(TABLE Orders PARTITION BY (a, b), DESCRIPTOR(rowtime),
            INTERVAL '1' HOUR)) GROUP BY a, window_start, window_end",
    );
    assert!(
        e.contains("the PARTITION BY column 'b' of SESSION must be a GROUP BY key"),
        "{e}"
    );
    let table = env
        .from("Orders")
        .window(Tumble::over(hours(1)).on(col("rowtime")).alias("w"))
        .group_by([col("a")])
        .select([col("a")]);
    let e = table.plan().err().unwrap().to_string();
    assert!(
        e.contains("group_by must contain the window alias 'w' exactly once"),
        "{e}"
    );
}

/// Case E02 (`../shared/cases/E02_session_window_merge.case`), one row an epoch: the row at
/// 4 ms bridges Hello's sessions {1, 2} and {8}; in incremental mode they are retracted and the
/// merged session {1, 2, 4, 8} emitted, in final mode only the merged one is; in SQL's legacy
/// and TVF forms and the Table API.
#[test]
fn case_e02_session_window_merge() {
    let dir = differential_temporal::table::tempfile_dir::Dir::new();
    let csv = dir.write(
        "t1.csv",
        "int,string,name,rowtime\n\
         1,Hello,a,1970-01-01 00:00:00.001\n\
         2,Hello,b,1970-01-01 00:00:00.002\n\
         8,Hello,a,1970-01-01 00:00:00.008\n\
         9,Hello World,b,1970-01-01 00:00:00.009\n\
         4,Hello,c,1970-01-01 00:00:00.004\n\
         16,Hello,d,1970-01-01 00:00:00.016\n",
    );
    let expected = [
        "Hello,1970-01-01 00:00:00.001,1970-01-01 00:00:00.012,4,4,4,15,3",
        "Hello,1970-01-01 00:00:00.016,1970-01-01 00:00:00.020,1,1,1,16,1",
        "Hello World,1970-01-01 00:00:00.009,1970-01-01 00:00:00.013,1,1,1,9,1",
    ];
    let aggregates = "COUNT(1), SUM(1), COUNT(`int`), SUM(`int`), COUNT(DISTINCT name)";
    let legacy = format!(
        "SELECT `string`, SESSION_START(rowtime, INTERVAL '0.005' SECOND),
            SESSION_ROWTIME(rowtime, INTERVAL '0.005' SECOND), {aggregates}
         FROM T1 GROUP BY `string`, SESSION(rowtime, INTERVAL '0.005' SECOND)"
    );
    let tvf = format!(
        "SELECT `string`, window_start, window_time, {aggregates}
         FROM TABLE(SESSION(TABLE T1, DESCRIPTOR(rowtime), INTERVAL '0.005' SECOND))
         GROUP BY `string`, window_start, window_end"
    );
    // Flink's partitioned form, with one key and with a list, named arguments too.
    let partitioned = format!(
        "SELECT `string`, window_start, window_time, {aggregates}
         FROM TABLE(SESSION(TABLE T1 PARTITION BY `string`, DESCRIPTOR(rowtime), INTERVAL '0.005' SECOND))
         GROUP BY `string`, window_start, window_end"
    );
    let named = format!(
        "SELECT `string`, window_start, window_time, {aggregates}
         FROM TABLE(SESSION(DATA => TABLE T1 PARTITION BY (`string`), TIMECOL => DESCRIPTOR(rowtime),
                            GAP => INTERVAL '0.005' SECOND))
         GROUP BY `string`, window_start, window_end"
    );
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&format!(
            "CREATE TABLE T1 (`int` INT, `string` STRING, name STRING, rowtime TIMESTAMP(3),
                WATERMARK FOR rowtime AS rowtime - INTERVAL '0.01' SECOND)
             WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv')"
        ))
        .unwrap();
        for sql in [&legacy, &tvf, &partitioned, &named] {
            let result = env.sql_query(sql).unwrap().execute().unwrap();
            assert_eq!(result.rows_as_text(), expected, "{sql}");
            let merge: Vec<String> = changelog_text(&result)
                .into_iter()
                .filter(|l| l.contains(",Hello,") && !l.contains(".016"))
                .collect();
            assert_eq!(
                merge,
                [
                    "+I,Hello,1970-01-01 00:00:00.001,1970-01-01 00:00:00.005,1,1,1,1,1",
                    "-D,Hello,1970-01-01 00:00:00.001,1970-01-01 00:00:00.005,1,1,1,1,1",
                    "+I,Hello,1970-01-01 00:00:00.001,1970-01-01 00:00:00.006,2,2,2,3,2",
                    "+I,Hello,1970-01-01 00:00:00.008,1970-01-01 00:00:00.012,1,1,1,8,1",
                    "-D,Hello,1970-01-01 00:00:00.001,1970-01-01 00:00:00.006,2,2,2,3,2",
                    "-D,Hello,1970-01-01 00:00:00.008,1970-01-01 00:00:00.012,1,1,1,8,1",
                    "+I,Hello,1970-01-01 00:00:00.001,1970-01-01 00:00:00.012,4,4,4,15,3",
                ],
                "{workers} workers"
            );
        }
        // The Table API's form of the legacy query, on an environment of either mode.
        let table_api = |env: &TableEnv| {
            env.from("T1")
                .window(Session::with_gap(millis(5)).on(col("rowtime")).alias("w"))
                .group_by([col("string"), col("w")])
                .select([
                    col("string"),
                    col("w").start(),
                    col("w").rowtime(),
                    lit(1i64).count(),
                    lit(1i64).sum(),
                    col("int").count(),
                    col("int").sum(),
                    col("name").count().distinct(),
                ])
                .execute()
                .unwrap()
                .rows_as_text()
        };
        assert_eq!(table_api(&env), expected);
        // Final mode: the watermark (10 ms behind) never reaches a session's end before the
        // input ends, so each session is emitted once, merged, as in Flink's test.
        let final_mode = env.with_mode(ExecutionMode::Final);
        for sql in [&legacy, &tvf] {
            let result = final_mode.sql_query(sql).unwrap().execute().unwrap();
            assert_eq!(result.rows_as_text(), expected, "{sql}");
            let hello: Vec<String> = changelog_text(&result)
                .into_iter()
                .filter(|l| l.contains(",Hello,"))
                .collect();
            assert_eq!(
                hello,
                [
                    "+I,Hello,1970-01-01 00:00:00.001,1970-01-01 00:00:00.012,4,4,4,15,3",
                    "+I,Hello,1970-01-01 00:00:00.016,1970-01-01 00:00:00.020,1,1,1,16,1",
                ],
                "{workers} workers"
            );
        }
        assert_eq!(table_api(&final_mode), expected);
    }
}

/// Final-mode sessions (gap 5 ms) with an allowed lateness of 12 ms and the watermark at the
/// largest time seen, one row an epoch: `k`'s sessions {1, 2} and {10} fire under the
/// watermarks 10 and 16; the row at 6 (`6 + 12 >= 17`) bridges both: they are retracted and
/// the merged session emitted at once; the row at 3 (`3 + 12 < 17`) is refused and reported.
#[test]
fn final_sessions_late_bridge_within_lateness() {
    let dir = differential_temporal::table::tempfile_dir::Dir::new();
    let csv = dir.write(
        "t.csv",
        "name,v,rowtime\n\
         k,1,1970-01-01 00:00:00.001\n\
         k,2,1970-01-01 00:00:00.002\n\
         k,10,1970-01-01 00:00:00.010\n\
         z,16,1970-01-01 00:00:00.016\n\
         z,17,1970-01-01 00:00:00.017\n\
         k,6,1970-01-01 00:00:00.006\n\
         k,3,1970-01-01 00:00:00.003\n",
    );
    for workers in [1, 2] {
        let env = env(workers).with_mode(ExecutionMode::Final);
        let script = format!(
            "CREATE TABLE T (name STRING, v BIGINT, rowtime TIMESTAMP(3),
                WATERMARK FOR rowtime AS rowtime)
             WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv');
             SET 'table.exec.emit.allow-lateness' = '12 ms';
             SELECT name, window_start, window_end, COUNT(*), SUM(v)
             FROM TABLE(SESSION(TABLE T PARTITION BY name, DESCRIPTOR(rowtime), INTERVAL '0.005' SECOND))
             GROUP BY name, window_start, window_end;"
        );
        let result = last_rows(&env, &script);
        assert_eq!(
            result.rows_as_text(),
            [
                "k,1970-01-01 00:00:00.001,1970-01-01 00:00:00.015,4,19",
                "z,1970-01-01 00:00:00.016,1970-01-01 00:00:00.022,2,33",
            ],
            "{workers} workers"
        );
        assert_eq!(
            changelog_text(&result),
            [
                "+I,k,1970-01-01 00:00:00.001,1970-01-01 00:00:00.007,2,3",
                "+I,k,1970-01-01 00:00:00.010,1970-01-01 00:00:00.015,1,10",
                "-D,k,1970-01-01 00:00:00.001,1970-01-01 00:00:00.007,2,3",
                "-D,k,1970-01-01 00:00:00.010,1970-01-01 00:00:00.015,1,10",
                "+I,k,1970-01-01 00:00:00.001,1970-01-01 00:00:00.015,4,19",
                "+I,z,1970-01-01 00:00:00.016,1970-01-01 00:00:00.022,2,33",
            ],
            "{workers} workers"
        );
        let refused: Vec<_> = result.refused().iter().map(|(_, r)| r.seq).collect();
        assert_eq!(refused, [8], "{:?}", result.refused());
        assert!(result.refused()[0].1.reason.starts_with("late row"));
    }
}

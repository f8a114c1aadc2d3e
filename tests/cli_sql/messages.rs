//! Refusals of valid Flink SQL (issue 46, item 12): statements from Flink's documentation that
//! this crate does not run yet are refused with the feature's name (as Flink's docs name it)
//! at its position, never a generic syntax error or a wrong diagnosis; those it runs, run.
//! Each statement is the script's second line, after the table it reads.

use differential_temporal::table::tempfile_dir::Dir;

use super::dtemporal_in;

const DDL: &str = "CREATE TABLE t (a STRING, b INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');";

/// A Flink-valid statement and what `dtemporal sql` says of it: `Ok(stdout)` when it runs,
/// `Err(message)` (after `dtemporal: error: `) when it is refused.
const CASES: &[(&str, Result<&str, &str>)] = &[
    (
        "SELECT a, window_start FROM TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES);",
        Ok("op,a,window_start\n+I,x,2020-04-15 08:00:00.000\n"),
    ),
    (
        "SELECT window_start, COUNT(*) AS n FROM TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES) GROUP BY window_start, window_end;",
        Ok("op,window_start,n\n+I,2020-04-15 08:00:00.000,1\n"),
    ),
    (
        "EXECUTE STATEMENT SET BEGIN INSERT INTO t SELECT * FROM t; END;",
        Err("SQL validation error at line 2, column 1: EXECUTE STATEMENT SET is not supported yet"),
    ),
    (
        "BEGIN STATEMENT SET;",
        Err("SQL validation error at line 2, column 1: BEGIN STATEMENT SET is not supported yet"),
    ),
    (
        "VALUES (1, 'a'), (2, 'b');",
        Err("SQL validation error at line 2, column 8: VALUES (a table of literal rows) is not supported yet"),
    ),
    (
        "SELECT a FROM t WHERE b IN (SELECT b FROM t);",
        Err("SQL validation error at line 2, column 23: IN with a subquery is not supported yet"),
    ),
    (
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM t);",
        Err("SQL validation error at line 2, column 31: EXISTS (subquery) is not supported yet"),
    ),
    (
        "SELECT a, b, COUNT(*) FROM t GROUP BY GROUPING SETS ((a), (b), ());",
        Err("SQL validation error at line 2, column 55: GROUPING SETS is not supported yet"),
    ),
    (
        "SELECT a, COUNT(*) FROM t GROUP BY ROLLUP (a);",
        Err("SQL validation error at line 2, column 44: ROLLUP is not supported yet"),
    ),
    (
        "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY a ORDER BY ts MEASURES A.b AS x PATTERN (A) DEFINE A AS A.b > 0);",
        Err("SQL validation error at line 2, column 17: MATCH_RECOGNIZE (pattern recognition) is not supported yet"),
    ),
    (
        "SELECT TIMESTAMPDIFF(DAY, ts, ts) FROM t;",
        Err("SQL validation error at line 2, column 8: the built-in function TIMESTAMPDIFF is not supported yet"),
    ),
    (
        "SELECT a, PROCTIME() AS pt FROM t;",
        Err("SQL validation error at line 2, column 11: the built-in function PROCTIME is not supported yet"),
    ),
    (
        "SET 'parallelism.default' = '1';",
        Ok(""),
    ),
    (
        "SHOW TABLES;",
        Err("SQL validation error at line 2, column 1: SHOW TABLES is not supported yet"),
    ),
    (
        "DROP TABLE t;",
        Err("SQL validation error at line 2, column 1: DROP TABLE is not supported yet"),
    ),
    (
        "SELECT ROW(a, b) FROM t;",
        Err("SQL validation error at line 2, column 8: the ROW value constructor (ROW(..)) is not supported yet"),
    ),
    (
        "SELECT ARRAY[1, 2] FROM t;",
        Err("SQL validation error at line 2, column 14: the ARRAY value constructor (ARRAY[..]) is not supported yet"),
    ),
    (
        "CREATE TABLE r (x ROW<a INT, b STRING>) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');",
        Err("SQL validation error at line 2, column 19: the ROW<..> type is not supported yet"),
    ),
    (
        "SELECT JSON_VALUE(a, '$.x') FROM t;",
        Err("SQL validation error at line 2, column 8: the built-in function JSON_VALUE is not supported yet"),
    ),
    (
        "INSERT OVERWRITE t SELECT * FROM t;",
        Err("SQL validation error at line 2, column 1: INSERT OVERWRITE is not supported yet"),
    ),
    (
        "SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '2020-04-15 08:00:00';",
        Err("SQL validation error at line 2, column 15: time travel (FOR SYSTEM_TIME AS OF a point in time, not a join's time) is not supported yet"),
    ),
    (
        "CREATE FUNCTION f AS 'com.example.F';",
        Err("SQL validation error at line 2, column 1: CREATE FUNCTION is not supported yet"),
    ),
];

#[test]
fn flink_statements_run_or_name_the_missing_feature() {
    let dir = Dir::new();
    dir.write("t.csv", "a,b,ts\nx,1,2020-04-15 08:05:00\n");
    let at = std::path::Path::new(&dir.path("")).to_path_buf();
    for (statement, expected) in CASES {
        let script = format!("{DDL}\n{statement}");
        for workers in ["1", "2"] {
            let (code, stdout, stderr) = dtemporal_in(&at, &["sql", "-e", &script, "-w", workers]);
            match expected {
                Ok(out) => assert_eq!(
                    (code, stdout.as_str(), stderr.as_str()),
                    (0, *out, ""),
                    "{statement}"
                ),
                Err(message) => assert_eq!(
                    (code, stdout.as_str(), stderr.as_str()),
                    (2, "", format!("dtemporal: error: {message}\n").as_str()),
                    "{statement}"
                ),
            }
        }
    }
}

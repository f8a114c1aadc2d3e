//! Changelog modes through `dtemporal sql` (issue 46, item 13): the orders joined as of their
//! time with rates whose 10:30 version arrives after the 11:00 order (one line an epoch with
//! `--epoch-bytes 1`), read by a running `SUM(v) OVER (..)`. In incremental mode the join
//! retracts the 11:00 order's row when that version arrives, so the OVER aggregation (which
//! consumes inserts only, as Flink's) is refused before anything runs, whatever the block size;
//! in final mode the join emits each row once and the running sums are exact. On 1 and 2
//! workers. No operator drops a negative count silently: a group aggregation, and the final
//! table of a result without an upsert key, report a retraction of a row they do not hold at
//! its line, and a session window over a revised window takes the revision.

mod common;

use common::{dtemporal, fixture};

/// The DDL of the orders and rates under `dir` (the 10:30 EUR rate is the rates' third line,
/// after the 11:00 EUR order, the orders' second line).
fn tables(dir: &std::path::Path) -> String {
    let orders = fixture(
        dir,
        "orders.csv",
        "order_time,currency,amount\n2024-01-01 10:00:00,EUR,100\n2024-01-01 11:00:00,EUR,100\n2024-01-01 11:30:00,USD,1\n",
    );
    let rates = fixture(
        dir,
        "rates.csv",
        "rate_time,currency,rate\n2024-01-01 09:00:00,EUR,10\n2024-01-01 09:30:00,USD,1\n2024-01-01 10:30:00,EUR,13\n",
    );
    format!(
        "CREATE TABLE orders (order_time TIMESTAMP(0), currency STRING, amount INT,
           WATERMARK FOR order_time AS order_time)
           WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
         CREATE TABLE rates (rate_time TIMESTAMP(0), currency STRING, rate INT,
           PRIMARY KEY (currency) NOT ENFORCED, WATERMARK FOR rate_time AS rate_time)
           WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv');
         CREATE VIEW joined AS SELECT o.currency, o.order_time, o.amount * r.rate AS v
           FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
           ON o.currency = r.currency;\n"
    )
}

/// Runs `dtemporal sql -e SQL ARGS..` on 1 and 2 workers, with one line a block and with
/// blocks of 64 KiB, and asserts each run's exit code, standard output and standard error.
fn assert_every_run(sql: &str, args: &[&str], expected: (i32, &str, &str)) {
    for workers in ["1", "2"] {
        for block in ["1", "65536"] {
            let head = ["sql", "-e", sql];
            let run =
                dtemporal(&[&head[..], args, &["--epoch-bytes", block, "-w", workers]].concat());
            assert_eq!(
                (run.code, run.stdout.as_str(), run.stderr.as_str()),
                expected,
                "{workers} worker(s), --epoch-bytes {block}"
            );
        }
    }
}

const RUNNING_SUM: &str = "SELECT currency, order_time, SUM(v) OVER (PARTITION BY currency
  ORDER BY order_time ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS total FROM joined";

#[test]
fn an_over_aggregation_of_a_temporal_join_is_refused_in_incremental_mode() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!("{}{RUNNING_SUM}", tables(dir.path()));
    let refused = "dtemporal: error: SQL validation error at line 10, column 1: OverAggregate: OverAggregate doesn't support consuming update and delete changes which is produced by node TemporalJoin in the incremental mode (a build version arriving late retracts the rows joined with the version it supersedes); run it in the final mode (`--mode final`), which emits each joined row once\n";
    assert_every_run(&sql, &["--emit", "final"], (2, "", refused));
}

#[test]
fn an_over_aggregation_of_a_temporal_join_is_exact_in_final_mode() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!("{}{RUNNING_SUM}", tables(dir.path()));
    let table = "currency,order_time,total\nEUR,2024-01-01 10:00:00,1000\nEUR,2024-01-01 11:00:00,2300\nUSD,2024-01-01 11:30:00,1\n";
    let args = ["--mode", "final", "--emit", "final"];
    assert_every_run(&sql, &args, (0, table, ""));
}

/// A window aggregation reads the join's retractions in incremental mode: the 11:00 order
/// counts once, at the 10:30 rate, at every block size.
#[test]
fn a_window_aggregation_of_a_temporal_join_takes_its_retractions() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!(
        "{}SELECT window_start, currency, MIN(v) AS low, MAX(v) AS high, COUNT(*) AS n
           FROM TABLE(TUMBLE(TABLE joined, DESCRIPTOR(order_time), INTERVAL '1' DAY))
           GROUP BY window_start, window_end, currency",
        tables(dir.path())
    );
    let table = "window_start,currency,low,high,n\n2024-01-01 00:00:00.000,EUR,1000,1300,2\n2024-01-01 00:00:00.000,USD,1,1,1\n";
    assert_every_run(&sql, &["--emit", "final"], (0, table, ""));
}

/// `EXPLAIN` gives each node's mode in the mode the statement runs in: the join and the nodes
/// above it are updating in incremental mode, append-only in final mode.
#[test]
fn explain_shows_the_modes_of_the_execution_mode() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!(
        "{}EXPLAIN SELECT currency, v FROM joined",
        tables(dir.path())
    );
    let modes = |mode: &str, workers: &str| -> Vec<String> {
        let run = dtemporal(&["sql", "-e", &sql, "--mode", mode, "-w", workers]);
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (0, ""),
            "{mode}, -w {workers}"
        );
        let node_and_mode = |line: &str| {
            let node = line.trim_start().split('(').next().unwrap_or_default();
            let after = line.rsplit("] ").next().unwrap_or_default();
            let mode = after.split(' ').next().unwrap_or_default();
            format!("{node} {mode}")
        };
        run.stdout
            .lines()
            .filter(|l| !l.is_empty())
            .map(node_and_mode)
            .collect()
    };
    let expected = |join: &str| {
        vec![
            format!("Project {join}"),
            format!("Project {join}"),
            format!("Map {join}"),
            format!("TemporalJoin {join}"),
            "Scan append-only".to_string(),
            "Scan append-only".to_string(),
        ]
    };
    for workers in ["1", "2"] {
        assert_eq!(modes("incremental", workers), expected("updating"));
        assert_eq!(modes("final", workers), expected("append-only"));
    }
}

/// A group aggregation that recomputes its groups (LISTAGG over a changelog) reports each
/// retraction of a row its group does not hold, at its line, once, whatever the block size:
/// the `-D` of `y` at line 3 (no `+I` before it) and the second one at line 5. The group holds
/// `x` and `z` (the `+I` of `y` at line 6 cancels one retraction). The retractions were dropped
/// silently.
#[test]
fn a_retraction_of_a_row_not_held_is_reported_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let changelog = fixture(
        dir.path(),
        "t.csv",
        "op,k,s\n+I,a,x\n-D,a,y\n+I,a,z\n-D,a,y\n+I,a,y\n",
    );
    let sql = format!(
        "CREATE TABLE t (k STRING, s STRING)
           WITH ('connector' = 'filesystem', 'path' = '{changelog}', 'format' = 'csv');
         SELECT k, LISTAGG(s) AS l FROM t GROUP BY k"
    );
    let refused = "row 3: a retraction of a row the group aggregation does not hold (no earlier change of its input inserted it)\n\
        row 5: a retraction of a row the group aggregation does not hold (no earlier change of its input inserted it)\n\
        dtemporal: 2 row(s) rejected (reported to standard error); --max-errors 0: failing\n";
    let expected = (1, "k,l\na,\"x,z\"\n", refused);
    assert_every_run(&sql, &["--emit", "final"], expected);
}

/// A result without an upsert key (the changelog's rows selected as they are) reports each
/// retraction of a row it does not hold at its line, as the group aggregation does, in its
/// final table (`--emit final`) and in its changelog alike: the `-D` of `y` at line 3 and the
/// second at line 5; the final table holds `x` and `z`. Both were dropped silently (the final
/// table clamped `y`'s count of -1 to 0, exit 0).
#[test]
fn a_result_reports_a_retraction_of_a_row_it_does_not_hold() {
    let dir = tempfile::tempdir().unwrap();
    let changelog = fixture(
        dir.path(),
        "t.csv",
        "op,k,s\n+I,a,x\n-D,a,y\n+I,a,z\n-D,a,y\n+I,a,y\n",
    );
    let sql = format!(
        "CREATE TABLE t (k STRING, s STRING)
           WITH ('connector' = 'filesystem', 'path' = '{changelog}', 'format' = 'csv');
         SELECT k, s FROM t"
    );
    let refused = "row 3: a retraction of row (k=a, s=y) that the table does not hold (no earlier change inserted it)\n\
        row 5: a retraction of row (k=a, s=y) that the table does not hold (no earlier change inserted it)\n\
        dtemporal: 2 row(s) rejected (reported to standard error); --max-errors 0: failing\n";
    assert_every_run(&sql, &["--emit", "final"], (1, "k,s\na,x\na,z\n", refused));
    let changes = "op,k,s\n+I,a,x\n-D,a,y\n+I,a,z\n-D,a,y\n+I,a,y\n";
    assert_every_run(&sql, &[], (1, changes, refused));
}

/// The DDL of a changelog `t` whose `-D` at line 3 retracts a row never inserted
/// (`+I,a,x` then `-D,b,y`), and of an append-only `u` holding `a` and `c`.
fn overdrawn_tables(dir: &std::path::Path) -> String {
    let t = fixture(dir, "t.csv", "op,k,s\n+I,a,x\n-D,b,y\n");
    let u = fixture(dir, "u.csv", "k\na\nc\n");
    format!(
        "CREATE TABLE t (k STRING, s STRING)
           WITH ('connector' = 'filesystem', 'path' = '{t}', 'format' = 'csv');
         CREATE TABLE u (k STRING)
           WITH ('connector' = 'filesystem', 'path' = '{u}', 'format' = 'csv');\n"
    )
}

/// The report of `t`'s `-D` at line 3 by the operator `node`, and the run's failure.
fn overdrawn_at_line_3(node: &str) -> String {
    format!(
        "row 3: a retraction of a row the {node} does not hold (no earlier change of its input inserted it)\n\
         dtemporal: 1 row(s) rejected (reported to standard error); --max-errors 0: failing\n"
    )
}

/// `SELECT DISTINCT` (a group aggregation without aggregates, as Flink plans it) holds only
/// the rows inserted more often than retracted, and reports the `-D` of `b` at its line: it
/// output `b`, a row never inserted, and exited 0 (differential's `distinct` outputs a row
/// whose count is -1 once).
#[test]
fn distinct_reports_a_retraction_of_a_row_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!("{}SELECT DISTINCT k FROM t", overdrawn_tables(dir.path()));
    let refused = overdrawn_at_line_3("group aggregation");
    assert_every_run(&sql, &["--emit", "final"], (1, "k\na\n", &refused));
}

/// The set operations read an updating input as the rows it holds and report the `-D` of
/// `b` at its line. Before, `UNION` output `b`; `EXCEPT ALL` output `b` (`0 - (-1)`);
/// `INTERSECT ALL` took `b` to -1 rows; `EXCEPT` dropped the retraction silently.
#[test]
fn set_operations_report_a_retraction_of_a_row_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let tables = overdrawn_tables(dir.path());
    let refused = overdrawn_at_line_3("set operation");
    for (query, rows) in [
        ("SELECT k FROM t UNION SELECT k FROM u", "k\na\nc\n"),
        ("SELECT k FROM u EXCEPT SELECT k FROM t", "k\nc\n"),
        ("SELECT k FROM u EXCEPT ALL SELECT k FROM t", "k\nc\n"),
        ("SELECT k FROM u INTERSECT SELECT k FROM t", "k\na\n"),
        ("SELECT k FROM u INTERSECT ALL SELECT k FROM t", "k\na\n"),
    ] {
        let sql = format!("{tables}{query}");
        assert_every_run(&sql, &["--emit", "final"], (1, rows, &refused));
    }
}

/// A group aggregation that keeps accumulators (COUNT and SUM over a changelog) refuses a
/// retraction into a group that holds fewer rows, at its line, and leaves it out: `b`'s `-D`
/// at line 3 comes before its `+I` at line 5, so `b` holds that row alone, and `a` holds its
/// two rows. The retraction was skipped silently (exit 0), and with one line an epoch `b`'s
/// `+I` then only brought its count back to zero, so `b` was missing.
#[test]
fn a_group_aggregation_of_counters_refuses_a_retraction_of_a_row_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let t = fixture(
        dir.path(),
        "t.csv",
        "op,k,v\n+I,a,1\n-D,b,2\n+I,a,3\n+I,b,5\n",
    );
    let sql = format!(
        "CREATE TABLE t (k STRING, v INT)
           WITH ('connector' = 'filesystem', 'path' = '{t}', 'format' = 'csv');
         SELECT k, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY k"
    );
    let refused = overdrawn_at_line_3("group aggregation");
    assert_every_run(
        &sql,
        &["--emit", "final"],
        (1, "k,n,s\na,2,4\nb,1,5\n", &refused),
    );
}

/// Session windows over a tumbling window's rows (a cascade) in incremental mode: the late
/// row at 10:00:20 revises the 10:00 window from 1 to 5, and the session takes the revision
/// (its retraction cancels the old row, though its position differs), so the final table is
/// the same for every block size. With one line a block the old row was kept beside the new
/// one (a total of 8 over 3 windows).
#[test]
fn a_session_window_takes_the_revisions_of_a_cascade() {
    let dir = tempfile::tempdir().unwrap();
    let events = fixture(
        dir.path(),
        "e.csv",
        "ts,v\n2024-01-01 10:00:10,1\n2024-01-01 10:05:10,2\n2024-01-01 10:00:20,4\n2024-01-01 10:20:00,8\n",
    );
    let sql = format!(
        "CREATE TABLE e (ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)
           WITH ('connector' = 'filesystem', 'path' = '{events}', 'format' = 'csv');
         CREATE VIEW w AS SELECT window_time AS wt, SUM(v) AS s
           FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
           GROUP BY window_start, window_end, window_time;
         SELECT window_start, SUM(s) AS total, COUNT(*) AS n
           FROM TABLE(SESSION(TABLE w, DESCRIPTOR(wt), INTERVAL '10' MINUTE))
           GROUP BY window_start, window_end"
    );
    let table = "window_start,total,n\n2024-01-01 10:00:59.999,7,2\n2024-01-01 10:20:59.999,8,1\n";
    assert_every_run(&sql, &["--emit", "final"], (0, table, ""));
}

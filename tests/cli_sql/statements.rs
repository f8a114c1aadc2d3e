//! The CLI's statements and outputs (issue 46, item 11): a script that starts with a comment,
//! `--emit upsert` CSV through the one CSV writer, `ALTER MATERIALIZED TABLE .. REFRESH`'s
//! status on standard error, SUSPEND / RESUME of a CONTINUOUS table with its own messages,
//! `DESC` as Flink's SQL client prints it, a command's final-mode changelog in emission
//! order, and a closed standard output's quiet end.

use differential_temporal::table::tempfile_dir::Dir;

use super::{dtemporal_in, in_dir};

/// `-e` takes a script that starts with `--` (a comment), not a flag.
#[test]
fn a_script_may_start_with_a_comment() {
    let dir = Dir::new();
    dir.write("t.csv", "a\nx\n");
    let script = "-- the table\nCREATE TABLE t (a STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');\nSELECT a FROM t;";
    for workers in ["1", "2"] {
        let run = dtemporal_in(&in_dir(&dir), &["sql", "-e", script, "-w", workers]);
        assert_eq!(run, (0, "op,a\n+I,x\n".into(), String::new()));
    }
}

/// `--emit upsert --format csv` quotes a cell holding a comma or a quote, as the retract and
/// final forms do (it had a writer of its own that wrote cells as they are).
#[test]
fn upsert_csv_quotes_its_cells() {
    let dir = Dir::new();
    dir.write("t.csv", "k,v\n\"a,b\",1\n\"a,b\",2\n\"say \"\"hi\"\"\",3\n");
    let script = "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
        SELECT k, SUM(v) AS s FROM t GROUP BY k;";
    for workers in ["1", "2"] {
        let args = [
            "sql",
            "-e",
            script,
            "--emit",
            "upsert",
            "--epoch-bytes",
            "1",
            "-w",
            workers,
        ];
        let run = dtemporal_in(&in_dir(&dir), &args);
        let expected = "op,k,s\n+I,\"a,b\",1\n+U,\"a,b\",3\n+I,\"say \"\"hi\"\"\",3\n";
        assert_eq!(run, (0, expected.into(), String::new()), "-w {workers}");
    }
}

/// A manual refresh's status line goes to standard error: standard output holds the query's
/// CSV alone.
#[test]
fn refresh_status_goes_to_standard_error() {
    let dir = Dir::new();
    dir.write("s.csv", "a\n1\n2\n");
    let script = "CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = 's.csv', 'format' = 'csv');
        CREATE MATERIALIZED TABLE m FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS SELECT a FROM s;
        ALTER MATERIALIZED TABLE m REFRESH;
        SELECT a FROM m;";
    for workers in ["1", "2"] {
        let warehouse = format!("wh{workers}");
        let args = [
            "sql",
            "--warehouse",
            &warehouse,
            "-e",
            script,
            "--emit",
            "final",
            "-w",
            workers,
        ];
        let run = dtemporal_in(&in_dir(&dir), &args);
        let status =
            "dtemporal: refreshed `default_catalog`.`default_database`.`m`: 2 row(s), snapshot 1\n";
        assert_eq!(run, (0, "a\n1\n2\n".into(), status.into()), "-w {workers}");
    }
}

/// SUSPEND and RESUME of a CONTINUOUS table answer with the continuous refresh job's messages
/// (Flink's `suspendContinuousRefreshJob` / `resumeContinuousRefreshJob`), not the FULL
/// refresh workflow's, and `RESUME WITH (..)` names the continuous refresh job.
#[test]
fn suspend_and_resume_of_a_continuous_table() {
    for workers in ["1", "2"] {
        let dir = Dir::new();
        dir.write("s.csv", "a\n1\n");
        let at = in_dir(&dir);
        let create = "CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = 's.csv', 'format' = 'csv');
            CREATE MATERIALIZED TABLE m FRESHNESS = INTERVAL '1' SECOND AS SELECT a FROM s;
            ALTER MATERIALIZED TABLE m SUSPEND;";
        let sql = |script: &str| {
            dtemporal_in(
                &at,
                &["sql", "--warehouse", "wh", "-e", script, "-w", workers],
            )
        };
        assert_eq!(sql(create), (0, String::new(), String::new()));
        let t = "`default_catalog`.`default_database`.`m`";
        let error = |column: u32, m: &str| {
            (
                2,
                String::new(),
                format!("dtemporal: error: SQL validation error at line 1, column {column}: {m}\n"),
            )
        };
        assert_eq!(
            sql("ALTER MATERIALIZED TABLE m SUSPEND"),
            error(
                26,
                &format!("Materialized table {t} continuous refresh job has been suspended.")
            )
        );
        assert_eq!(
            sql("ALTER MATERIALIZED TABLE m RESUME WITH ('k' = 'v')"),
            error(41, "RESUME WITH option 'k' is not supported: a CONTINUOUS refresh job takes no dynamic options yet")
        );
        assert_eq!(
            sql("ALTER MATERIALIZED TABLE m RESUME"),
            (0, String::new(), String::new())
        );
        assert_eq!(
            sql("ALTER MATERIALIZED TABLE m RESUME"),
            error(
                26,
                &format!("Materialized table {t} continuous refresh job has been resumed.")
            )
        );
    }
}

/// `DESC` prints Flink's columns (name, type with `*ROWTIME*`, null, key, extras, watermark)
/// as Flink's SQL client draws them, here for the window-aggregation page's `Bid` table.
#[test]
fn desc_prints_flinks_columns() {
    let dir = Dir::new();
    dir.write("bid.csv", "bidtime,price,item,supplier_id\n");
    let script = "CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING,
        supplier_id STRING, pt AS PROCTIME(), WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND,
        PRIMARY KEY (item, supplier_id) NOT ENFORCED)
      WITH ('connector' = 'filesystem', 'path' = 'bid.csv', 'format' = 'csv');
      DESC Bid;";
    let expected = "\
+-------------+-----------------------------+-------+------------------------+---------------+---------------------------------+
|        name |                        type |  null |                    key |        extras |                       watermark |
+-------------+-----------------------------+-------+------------------------+---------------+---------------------------------+
|     bidtime |      TIMESTAMP(3) *ROWTIME* |  TRUE |                        |               | `bidtime` - INTERVAL '1' SECOND |
|       price |              DECIMAL(10, 2) |  TRUE |                        |               |                                 |
|        item |                      STRING | FALSE | PRI(item, supplier_id) |               |                                 |
| supplier_id |                      STRING | FALSE | PRI(item, supplier_id) |               |                                 |
|          pt | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |                        | AS PROCTIME() |                                 |
+-------------+-----------------------------+-------+------------------------+---------------+---------------------------------+
5 rows in set
";
    for workers in ["1", "2"] {
        let run = dtemporal_in(&in_dir(&dir), &["sql", "-e", script, "-w", workers]);
        assert_eq!(run, (0, expected.into(), String::new()), "-w {workers}");
    }
}

/// `temporal-join --mode final` writes its changelog in emission order, as the README says and
/// `dtemporal sql` does: order 2 (at 10) is emitted when the watermark reaches 15, before
/// order 1 (at 20), emitted when it reaches 20; in file order order 1 came first.
#[test]
fn a_final_mode_changelog_is_in_emission_order() {
    let dir = Dir::new();
    let probe = dir.write("o.csv", "id,cur,t\n1,E,20\n2,E,10\n");
    let build = dir.write("r.csv", "cur,rate,t\nE,1,0\nE,2,15\nE,3,25\n");
    let join = [
        "temporal-join",
        "--probe",
        &probe,
        "--build",
        &build,
        "--on",
        "cur=cur",
    ];
    let times = ["--probe-time", "t", "--build-time", "t"];
    for workers in ["1", "2"] {
        let mode = ["--mode", "final", "--lateness", "0", "--epoch-bytes", "1"];
        let args = [&join[..], &times, &mode, &["-w", workers]].concat();
        let run = dtemporal_in(&in_dir(&dir), &args);
        let expected = "op,id,cur,t,cur0,rate,t0\n+I,2,E,10,E,1,0\n+I,1,E,20,E,2,15\n";
        assert_eq!(run, (0, expected.into(), String::new()), "-w {workers}");
    }
}

/// `dedup --mode final` writes its changelog in emission order: with the watermark 10 behind
/// the largest time, b (at 21) is emitted when c (at 35) moves it to 25, before a (at 30),
/// emitted with c when d (at 50) moves it to 40; in file order a came first. In one block
/// every row is emitted at the end of input, in file order.
#[test]
fn a_final_mode_dedup_is_in_emission_order() {
    let dir = Dir::new();
    let input = dir.write("d.csv", "k,t\na,30\nb,21\nc,35\nd,50\n");
    let dedup = [
        "dedup", "--input", &input, "--key", "k", "--time", "t", "--keep", "first",
    ];
    let mode = ["--mode", "final", "--lateness", "10"];
    for workers in ["1", "2"] {
        for (block, expected) in [
            ("1", "op,k,t\n+I,b,21\n+I,a,30\n+I,c,35\n+I,d,50\n"),
            ("65536", "op,k,t\n+I,a,30\n+I,b,21\n+I,c,35\n+I,d,50\n"),
        ] {
            let args = [&dedup[..], &mode, &["--epoch-bytes", block, "-w", workers]].concat();
            let run = dtemporal_in(&in_dir(&dir), &args);
            let label = format!("-w {workers} --epoch-bytes {block}");
            assert_eq!(run, (0, expected.into(), String::new()), "{label}");
        }
    }
}

/// A closed standard output (`dtemporal sql -e "EXPLAIN .." | head -1`) ends the output
/// quietly, as docs/cli.md says, on every path a statement writes by: EXPLAIN's plan, DESC's
/// text, a query's CSV and its tableau. EXPLAIN, DESC and the tableau were written by
/// `println!`/`print!`, which panicked with "failed printing to stdout: Broken pipe".
#[test]
fn a_closed_standard_output_ends_quietly() {
    use std::process::{Command, Stdio};
    let dir = Dir::new();
    dir.write("t.csv", "a\nx\n");
    let create = "CREATE TABLE t (a STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');";
    for (format, statement) in [
        ("csv", "EXPLAIN SELECT a FROM t;"),
        ("csv", "DESC t;"),
        ("csv", "SELECT a FROM t;"),
        ("table", "SELECT a FROM t;"),
    ] {
        for workers in ["1", "2"] {
            let script = format!("{create} {statement}");
            let mut child = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
                .args(["sql", "--format", format, "-e", &script, "-w", workers])
                .current_dir(in_dir(&dir))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // The reader goes away before the process writes anything.
            drop(child.stdout.take());
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                (out.status.code(), stderr.as_ref()),
                (Some(0), ""),
                "{format}: {statement}, -w {workers}"
            );
        }
    }
}

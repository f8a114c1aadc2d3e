//! `dtemporal sql -f` on the seed scripts of `tests/sql_seed/` (run in that directory, so the
//! scripts' relative `'path'` options resolve), with exact standard output.

use std::process::Command;

const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql_seed");

#[path = "cli_sql/batch.rs"]
mod batch;
#[path = "cli_sql/cascade.rs"]
mod cascade;
#[path = "cli_sql/messages.rs"]
mod messages;
#[path = "cli_sql/statements.rs"]
mod statements;
#[path = "cli_sql/upsert.rs"]
mod upsert;

fn dtemporal(args: &[&str]) -> (i32, String, String) {
    dtemporal_in(std::path::Path::new(SEED), args)
}

/// The directory `dir` is, to run `dtemporal` in (its scripts' relative paths resolve there).
fn in_dir(dir: &differential_temporal::table::tempfile_dir::Dir) -> std::path::PathBuf {
    std::path::Path::new(&dir.path("")).to_path_buf()
}

/// `dtemporal args` run in `dir`: its exit code, standard output and standard error.
fn dtemporal_in(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn seed_temporal_table_function_final() {
    for workers in ["1", "2"] {
        let run = dtemporal(&[
            "sql",
            "-f",
            "temporal_table_function.sql",
            "--emit",
            "final",
            "-w",
            workers,
        ]);
        assert_eq!(run, (0, "amount\n1238.000000\n".into(), String::new()));
    }
}

/// The Table API overview's grouped count in SQL form, on 1 and 2 workers: the changelog with
/// one record an epoch (each update of a group a `-U`/`+U` pair), with the whole file in one
/// epoch (only the totals), and the final table.
#[test]
fn seed_table_api_group_by_in_sql() {
    for workers in ["1", "2"] {
        let per_record = ["--epoch-bytes", "1", "-w", workers];
        let changelog =
            dtemporal(&[&["sql", "-f", "table_api_group_by.sql"][..], &per_record].concat());
        let expected = "op,a,cnt\n+I,x,1\n+I,y,1\n-U,x,1\n+U,x,2\n";
        assert_eq!(changelog, (0, expected.into(), String::new()));
        let one_epoch = dtemporal(&["sql", "-f", "table_api_group_by.sql", "-w", workers]);
        assert_eq!(
            one_epoch,
            (0, "op,a,cnt\n+I,x,2\n+I,y,1\n".into(), String::new())
        );
        let table = dtemporal(&[
            "sql",
            "-f",
            "table_api_group_by.sql",
            "--emit",
            "final",
            "-w",
            workers,
        ]);
        assert_eq!(table, (0, "a,cnt\nx,2\ny,1\n".into(), String::new()));
    }
}

/// Case A07 (its data in `tests/data/`): deduplication on a `PROCTIME()` column, keep-first
/// then keep-last, the final tables.
#[test]
fn case_a07_dedup_on_proctime_final() {
    let expected = "a,b,c
1,1,Hi
2,2,Hello
4,3,\"Hello world, how are you?\"
7,4,Comment#1
11,5,Comment#5
16,6,Comment#10
a,b,c
1,1,Hi
3,2,Hello world
6,3,Luke Skywalker
10,4,Comment#4
15,5,Comment#9
21,6,Comment#15
";
    for workers in ["1", "2"] {
        let run = dtemporal(&[
            "sql",
            "-f",
            "a07_dedup_proctime.sql",
            "--emit",
            "final",
            "-w",
            workers,
        ]);
        assert_eq!(run, (0, expected.into(), String::new()));
    }
}

/// The seed script `name` with `from` replaced by `to`, for `-e`: its comment lines are dropped
/// (an `-e` value cannot start with `-`).
fn seed_script_with(name: &str, from: &str, to: &str) -> String {
    std::fs::read_to_string(format!("{SEED}/{name}"))
        .unwrap()
        .replace(from, to)
        .lines()
        .filter(|l| !l.starts_with("--"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The seed's orders as a directory of two files (and a hidden one, skipped).
#[test]
fn seed_orders_from_a_directory() {
    let script = seed_script_with(
        "temporal_table_function.sql",
        "'orders.csv'",
        "'orders_parts'",
    );
    for workers in ["1", "2"] {
        let run = dtemporal(&["sql", "-e", &script, "--emit", "final", "-w", workers]);
        assert_eq!(run, (0, "amount\n1238.000000\n".into(), String::new()));
    }
}

/// Debezium change events (`'format' = 'debezium-json'`, plain and with the schema wrapper).
#[test]
fn debezium_json_products() {
    let run = dtemporal(&["sql", "-f", "debezium_products.sql", "--epoch-bytes", "1"]);
    let changelog = "op,id,name,weight
+I,101,scooter,3.14
+I,102,car battery,8.10
-U,101,scooter,3.14
+U,101,scooter,5.15
-D,102,car battery,8.10
+I,103,12-pack drill bits,0.80
op,products,total_weight
+I,1,3.14
-U,1,3.14
+U,2,11.24
-U,2,11.24
+U,2,13.25
-U,2,13.25
+U,1,5.15
-U,1,5.15
+U,2,5.95
";
    assert_eq!(run, (0, changelog.into(), String::new()));
    let run = dtemporal(&[
        "sql",
        "-f",
        "debezium_products.sql",
        "--emit",
        "final",
        "-w",
        "2",
    ]);
    let table = "id,name,weight\n101,scooter,5.15\n103,12-pack drill bits,0.80\nproducts,total_weight\n2,5.95\n";
    assert_eq!(run, (0, table.into(), String::new()));
}

/// Case A01: every probe of the products' versioned table (computed rowtimes over the case's
/// times of day).
#[test]
fn case_a01_versioned_table_as_of() {
    let run = dtemporal(&[
        "sql",
        "-f",
        "a01_versioned_table_as_of.sql",
        "--emit",
        "final",
    ]);
    let expected = "t,product_id,product_name,price,update_time
1970-01-01 00:00:59.000,p_001,,,
1970-01-01 00:01:00.000,p_001,scooter,11.11,00:01:00
1970-01-01 00:01:00.000,p_002,,,
1970-01-01 10:00:00.000,p_001,scooter,11.11,00:01:00
1970-01-01 10:00:00.000,p_002,basketball,23.11,00:02:00
1970-01-01 11:59:59.000,p_001,scooter,11.11,00:01:00
1970-01-01 12:00:00.000,p_001,scooter,12.99,12:00:00
1970-01-01 12:00:00.000,p_002,basketball,19.99,12:00:00
1970-01-01 13:00:00.000,p_001,scooter,12.99,12:00:00
1970-01-01 13:00:00.000,p_002,basketball,19.99,12:00:00
1970-01-01 18:00:00.000,p_001,,,
1970-01-01 18:00:00.000,p_002,basketball,19.99,12:00:00
1970-01-01 19:00:00.000,p_001,,,
";
    assert_eq!(run, (0, expected.into(), String::new()));
}

/// The seed's `products` DDL verbatim over Debezium events, its `METADATA FROM
/// 'value.source.timestamp'` column read from each event's `source.ts_ms`.
#[test]
fn seed_products_from_debezium_events() {
    let script = seed_script_with(
        "products.sql",
        "'products.csv', 'format' = 'csv'",
        "'products_debezium_seed.json', 'format' = 'debezium-json'",
    );
    let run = dtemporal(&["sql", "-e", &script, "--emit", "final", "-w", "2"]);
    let expected = "t,product_id,product_name,price
2024-01-01 10:00:00.000,p_001,scooter,11.11
2024-01-01 10:00:00.000,p_002,basketball,23.11
2024-01-01 13:00:00.000,p_001,scooter,12.99
2024-01-01 13:00:00.000,p_002,basketball,19.99
";
    assert_eq!(run, (0, expected.into(), String::new()));
}

#[test]
fn seed_versioned_rates_changelog() {
    let run = dtemporal(&["sql", "-f", "versioned_rates.sql", "--epoch-bytes", "1"]);
    assert_eq!(
        run,
        (
            0,
            "op,currency,rate,update_time
+I,Yen,102.0000000000,2024-01-01 09:00:00.000
+I,Euro,114.0000000000,2024-01-01 09:00:00.000
+I,USD,1.0000000000,2024-01-01 09:00:00.000
-U,Euro,114.0000000000,2024-01-01 09:00:00.000
+U,Euro,119.0000000000,2024-01-01 11:15:00.000
+I,Pounds,108.0000000000,2024-01-01 11:49:00.000
"
            .into(),
            String::new()
        )
    );
}

#[test]
fn seed_products_as_table() {
    let run = dtemporal(&[
        "sql",
        "-f",
        "products.sql",
        "--emit",
        "final",
        "--format",
        "table",
    ]);
    assert_eq!(run.0, 0, "{}", run.2);
    assert_eq!(
        run.1,
        "\
+-------------------------+--------------------------------+--------------------------------+------------------------------------+
|                       t |                     product_id |                   product_name |                              price |
+-------------------------+--------------------------------+--------------------------------+------------------------------------+
| 2024-01-01 10:00:00.000 |                          p_001 |                        scooter |                              11.11 |
| 2024-01-01 10:00:00.000 |                          p_002 |                     basketball |                              23.11 |
| 2024-01-01 13:00:00.000 |                          p_001 |                        scooter |                              12.99 |
| 2024-01-01 13:00:00.000 |                          p_002 |                     basketball |                              19.99 |
+-------------------------+--------------------------------+--------------------------------+------------------------------------+
4 rows in set
"
    );
}

#[test]
fn statements_on_the_command_line_and_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let sql =
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount DECIMAL(10, 2), currency STRING)
        WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
        SELECT currency, amount FROM orders WHERE amount >= 5";
    let run = dtemporal(&["sql", "-e", sql, "--output", out.to_str().unwrap()]);
    assert_eq!(run, (0, String::new(), String::new()));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "op,currency,amount\n+I,Yen,50.00\n+I,US Dollar,5.00\n"
    );
}

/// Runs `dtemporal sql` with `stdin` piped to it (no -f or -e: the prompt's input).
fn dtemporal_piped(stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(["sql", "--emit", "final"])
        .current_dir(SEED)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn statements_piped_to_the_prompt() {
    // Statements span lines, share a line, carry comments; a failing one is reported and the
    // next one runs; QUIT ends the input before the last statement.
    let run = dtemporal_piped(
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount DECIMAL(10, 2), currency STRING)
           WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
         SELECT nope FROM orders;
         SELECT currency, amount -- a comment; not the end
         FROM orders WHERE amount >= 5; SELECT COUNT(*) AS n FROM orders;
         quit;
         SELECT 1;
",
    );
    assert_eq!(
        run,
        (
            2,
            "\
+--------------------------------+--------------+
|                       currency |       amount |
+--------------------------------+--------------+
|                      US Dollar |         5.00 |
|                            Yen |        50.00 |
+--------------------------------+--------------+
2 rows in set
+----------------------+
|                    n |
+----------------------+
|                    5 |
+----------------------+
1 row in set
"
            .into(),
            "[ERROR] SQL validation error at line 1, column 17: Column 'nope' not found in any table; the columns are: orders.order_time, orders.amount, orders.currency\n\
             dtemporal: error: 1 statement(s) failed\n"
                .into()
        )
    );
    // Input that ends inside a statement is an error.
    let run = dtemporal_piped("SELECT 1");
    assert_eq!(
        run,
        (
            2,
            String::new(),
            "[ERROR] the input ended inside a statement (a statement ends with ';')\n\
             dtemporal: error: 1 statement(s) failed\n"
                .into()
        )
    );
}

/// `--mode final`: the temporal join emits each probe row once, when the watermarks pass it; a
/// build version behind them is kept for later probe rows and reported (exit code 1 under the
/// default `--max-errors 0`).
#[test]
fn final_mode_reports_a_late_build_version() {
    let dir = tempfile::tempdir().unwrap();
    let (orders, rates) = (dir.path().join("o.csv"), dir.path().join("r.csv"));
    std::fs::write(
        &orders,
        "id,t,cur\no1,2024-01-01 10:00:10,E\no2,2024-01-01 10:00:13,E\n",
    )
    .unwrap();
    std::fs::write(
        &rates,
        "t,cur,rate\n2024-01-01 10:00:00,E,1\n2024-01-01 10:00:15,E,2\n2024-01-01 10:00:12,E,3\n",
    )
    .unwrap();
    let sql = format!(
        "CREATE TABLE o (id STRING, t TIMESTAMP(0), cur STRING, WATERMARK FOR t AS t)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE TABLE r (t TIMESTAMP(0), cur STRING, rate INT, PRIMARY KEY (cur) NOT ENFORCED,
           WATERMARK FOR t AS t)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         SELECT id, rate FROM o JOIN r FOR SYSTEM_TIME AS OF o.t ON o.cur = r.cur",
        orders.display(),
        rates.display()
    );
    for workers in ["1", "2"] {
        let run = dtemporal(&[
            "sql",
            "-e",
            &sql,
            "--mode",
            "final",
            "--epoch-bytes",
            "1",
            "-w",
            workers,
        ]);
        assert_eq!(
            run,
            (
                1,
                "op,id,rate\n+I,o1,1\n+I,o2,3\n".into(),
                "row 4: late build version: event time 2024-01-01 10:00:12 is behind the watermark \
                 2024-01-01 10:00:13 (kept for later probe rows; earlier results are not revised)\n\
                 dtemporal: 1 row(s) rejected (reported to standard error); --max-errors 0: failing\n"
                    .into()
            ),
            "{workers} worker(s)"
        );
    }
}

/// Each statement's result is written before the next statement runs: a failing statement keeps
/// the earlier results (and stops the script, exit code 2); a syntax error anywhere stops the
/// script before anything runs.
#[test]
fn results_are_written_statement_by_statement() {
    let ddl =
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount DECIMAL(10, 2), currency STRING)
        WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');";
    let run = dtemporal(&[
        "sql",
        "-e",
        &format!("{ddl} SELECT amount FROM orders WHERE amount > 10; SELECT nope FROM orders; SELECT 1 FROM orders"),
    ]);
    assert_eq!(
        run,
        (
            2,
            "op,amount\n+I,50.00\n".into(),
            "dtemporal: error: SQL validation error at line 2, column 137: Column 'nope' not found in any table; the columns are: orders.order_time, orders.amount, orders.currency\n".into()
        )
    );
    let run = dtemporal(&[
        "sql",
        "-e",
        &format!("{ddl} SELECT amount FROM orders; SELECT FROM WHERE"),
    ]);
    assert_eq!(
        run,
        (
            2,
            String::new(),
            "dtemporal: error: SQL syntax error at line 2, column 124: Expected an expression, found: FROM\n".into()
        )
    );
}

/// Case E04 as a seed script: the LEFT JOIN's changelog, one step an epoch, on 1 and 2 workers.
#[test]
fn seed_e04_left_join_changelog() {
    for workers in ["1", "2"] {
        let run = dtemporal(&[
            "sql",
            "-f",
            "e04_left_join.sql",
            "--epoch-bytes",
            "1",
            "-w",
            workers,
        ]);
        let expected = "op,k,v,k0,v0\n+I,1,a,,\n-D,1,a,,\n+I,1,a,1,x\n+I,1,a,1,y\n-D,1,a,1,x\n-D,1,a,1,y\n+I,1,a,,\n-D,1,a,,\n";
        assert_eq!(
            run,
            (0, expected.into(), String::new()),
            "{workers} workers"
        );
    }
}

/// `--emit final` shapes a query's output only: in the same script, `INSERT INTO` still writes
/// the changelog (worker 0 keeps every change for it), and the query gets the final table.
#[test]
fn emit_final_leaves_insert_into_a_changelog() {
    let dir = tempfile::tempdir().unwrap();
    let sink = dir.path().join("counts.csv");
    let sql = format!(
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount DECIMAL(10, 2), currency STRING)
           WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
         CREATE TABLE counts (currency STRING, n BIGINT)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         INSERT INTO counts SELECT currency, COUNT(*) AS n FROM orders GROUP BY currency;
         SELECT currency, COUNT(*) AS n FROM orders GROUP BY currency",
        sink.display()
    );
    for workers in ["1", "2"] {
        // INSERT INTO appends: each run writes a new sink file.
        let _ = std::fs::remove_file(&sink);
        let run = dtemporal(&[
            "sql",
            "-e",
            &sql,
            "--emit",
            "final",
            "--epoch-bytes",
            "1",
            "-w",
            workers,
        ]);
        assert_eq!(run.0, 0, "{run:?}");
        assert_eq!(run.1, "currency,n\nEuro,2\nUS Dollar,2\nYen,1\n");
        assert_eq!(
            std::fs::read_to_string(&sink).unwrap(),
            "op,currency,n\n+I,Euro,1\n+I,US Dollar,1\n+I,Yen,1\n-U,Euro,1\n+U,Euro,2\n-U,US Dollar,1\n+U,US Dollar,2\n"
        );
    }
}

/// A query over an unbounded datagen table runs live: its changelog comes round by round (one
/// a second, `rows-per-second` rows each), as CSV or as Flink's streaming tableau, until
/// Ctrl-C ends it cleanly.
#[test]
fn a_query_over_an_unbounded_table_runs_until_interrupted() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let script = "CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');
                  SELECT COUNT(*) AS c FROM g";
    for (format, head, rounds, tail) in [
        (
            "csv",
            &["op,c"][..],
            &["+I,5", "-U,5", "+U,10"][..],
            &[][..],
        ),
        (
            "table",
            &[
                "+----+----------------------+",
                "| op |                    c |",
                "+----+----------------------+",
            ][..],
            &[
                "| +I |                    5 |",
                "| -U |                    5 |",
                "| +U |                   10 |",
            ][..],
            &["+----+----------------------+", "Received a total of"][..],
        ),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
            .args(["sql", "--format", format, "-e", script])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..head.len() + rounds.len() {
            seen.push(lines.next().unwrap().unwrap());
        }
        assert_eq!(seen, [head, rounds].concat(), "{format}");
        // SAFETY: a plain kill(2) of the child's pid.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        let status = child.wait().unwrap();
        assert!(status.success(), "{format}: {status}");
        // The rounds that completed before the interrupt, then the tail (the tableau's
        // bottom border and its count of every row printed).
        let rest: Vec<String> = lines.map(Result::unwrap).collect();
        let (more, end) = rest.split_at(rest.len() - tail.len());
        assert_eq!(more.len() % 2, 0, "{format}: whole rounds: {more:?}");
        if let [border, count] = tail {
            let printed = rounds.len() + more.len();
            assert_eq!(end, [border.to_string(), format!("{count} {printed} rows")]);
        }
    }
}

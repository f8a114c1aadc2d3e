//! Batch execution (issue 48): `dtemporal sql --emit final` in incremental mode enters all input
//! at one system time, and writes the bytes the streaming run writes; `SET
//! 'execution.runtime-mode'` picks streaming, batch or the automatic choice.

use differential_temporal::table::tempfile_dir::Dir;

use super::{dtemporal_in, in_dir};

/// Facts with keep-last ties (key `a` twice at 00:00:03, the later line wins), a key with one row
/// and out-of-order times; versions of `a` and `b` (two of `a` at the same event time: the later
/// line is the version).
fn tables(dir: &Dir) -> String {
    dir.write(
        "facts.csv",
        "id,k,ts,amount\n\
         1,a,2024-01-01 00:00:01,1.50\n\
         2,b,2024-01-01 00:00:02,2.00\n\
         3,a,2024-01-01 00:00:03,3.25\n\
         4,a,2024-01-01 00:00:03,4.00\n\
         5,c,2024-01-01 00:01:05,5.00\n\
         6,b,2024-01-01 00:00:00,6.00\n",
    );
    dir.write(
        "versions.csv",
        "k,vts,rate\n\
         a,2024-01-01 00:00:00,10\n\
         b,2024-01-01 00:00:01,20\n\
         a,2024-01-01 00:00:02,11\n\
         a,2024-01-01 00:00:02,12\n",
    );
    "CREATE TABLE facts (id BIGINT, k STRING, ts TIMESTAMP(3), amount DECIMAL(10,2),
       WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'facts.csv', 'format' = 'csv');
     CREATE TABLE versions (k STRING, vts TIMESTAMP(3), rate BIGINT, PRIMARY KEY (k) NOT ENFORCED,
       WATERMARK FOR vts AS vts) WITH ('connector' = 'filesystem', 'path' = 'versions.csv', 'format' = 'csv');\n"
        .to_string()
}

/// The five query shapes, each with its exact final table.
const QUERIES: [(&str, &str); 5] = [
    (
        "SELECT k, COUNT(*) AS n, SUM(amount) AS total, MAX(ts) AS last_ts FROM facts GROUP BY k",
        "k,n,total,last_ts\na,3,8.75,2024-01-01 00:00:03.000\nb,2,8.00,2024-01-01 00:00:02.000\nc,1,5.00,2024-01-01 00:01:05.000\n",
    ),
    (
        "SELECT id, k FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn
         FROM facts) WHERE rn = 1",
        "id,k\n2,b\n4,a\n5,c\n",
    ),
    (
        "SELECT f.id, v.rate FROM facts AS f LEFT JOIN versions FOR SYSTEM_TIME AS OF f.ts AS v
         ON f.k = v.k",
        "id,rate\n1,10\n2,20\n3,12\n4,12\n5,\n6,\n",
    ),
    (
        "SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE facts, DESCRIPTOR(ts),
         INTERVAL '1' MINUTES)) GROUP BY k, window_start, window_end",
        "k,window_start,n\na,2024-01-01 00:00:00.000,3\nb,2024-01-01 00:00:00.000,2\nc,2024-01-01 00:01:00.000,1\n",
    ),
    (
        "SELECT f.id, t.top FROM facts AS f JOIN (SELECT k, MAX(rate) AS top FROM versions
         GROUP BY k) AS t ON f.k = t.k",
        "id,top\n1,12\n2,20\n3,12\n4,12\n6,20\n",
    ),
];

/// Each query's final table, automatic (batch) and with `SET 'execution.runtime-mode' =
/// 'streaming'`, one line an epoch, on 1 and 2 workers: the same bytes, the exact table.
#[test]
fn emit_final_runs_as_a_batch_job_with_the_streaming_bytes() {
    let dir = Dir::new();
    let ddl = tables(&dir);
    for (i, (query, expected)) in QUERIES.iter().enumerate() {
        for (mode, set) in [
            ("automatic", ""),
            ("streaming", "SET 'execution.runtime-mode' = 'streaming';\n"),
        ] {
            let script = format!("q{i}_{mode}.sql");
            dir.write(&script, &format!("{set}{ddl}{query};\n"));
            for workers in ["1", "2"] {
                let args = [
                    "sql",
                    "-f",
                    &script,
                    "--emit",
                    "final",
                    "--epoch-bytes",
                    "1",
                ];
                let run = dtemporal_in(&in_dir(&dir), &[&args[..], &["-w", workers]].concat());
                assert_eq!(
                    run,
                    (0, expected.to_string(), String::new()),
                    "{query}: {mode} on {workers} workers"
                );
            }
        }
    }
}

/// Under `'batch'` a query's changelog is its final table as `+I` rows, where the streaming
/// changelog, one line an epoch, revises key `a` twice.
#[test]
fn a_batch_changelog_is_the_final_table() {
    let dir = Dir::new();
    let ddl = tables(&dir);
    let query = "SELECT k, COUNT(*) AS n FROM facts GROUP BY k;\n";
    dir.write(
        "batch.sql",
        &format!("SET 'execution.runtime-mode' = 'batch';\n{ddl}{query}"),
    );
    dir.write("streaming.sql", &format!("{ddl}{query}"));
    let args = |script| ["sql", "-f", script, "--epoch-bytes", "1"];
    let batch = dtemporal_in(&in_dir(&dir), &args("batch.sql"));
    let expected = "op,k,n\n+I,a,3\n+I,b,2\n+I,c,1\n";
    assert_eq!(batch, (0, expected.into(), String::new()));
    let streaming = dtemporal_in(&in_dir(&dir), &args("streaming.sql"));
    let expected =
        "op,k,n\n+I,a,1\n+I,b,1\n-U,a,1\n+U,a,2\n-U,a,2\n+U,a,3\n+I,c,1\n-U,b,1\n+U,b,2\n";
    assert_eq!(streaming, (0, expected.into(), String::new()));
}

/// `dtemporal sql -f script` with `args` in `dir`, which must fail with exit code 2: its
/// standard error.
fn refused(dir: &Dir, script: &str, args: &[&str]) -> String {
    let (code, out, err) = dtemporal_in(&in_dir(dir), &[&["sql", "-f", script][..], args].concat());
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    err
}

/// `'batch'` refuses final mode (at the `SET`, with its position) and a query that reads
/// processing time; an unknown value is refused with the choices.
#[test]
fn batch_refuses_what_depends_on_arrival() {
    let dir = Dir::new();
    let ddl = tables(&dir);
    let batch = "SET 'execution.runtime-mode' = 'batch';\n";
    dir.write("final.sql", &format!("{batch}{ddl}SELECT k FROM facts;\n"));
    assert_eq!(
        refused(&dir, "final.sql", &["--mode", "final"]),
        "dtemporal: error: SQL validation error at line 1, column 1: 'execution.runtime-mode' = \
         'batch' runs in incremental mode only: final mode's watermarks and lateness depend on \
         the order input arrives in\n"
    );
    dir.write("clicks.csv", "user\nx\n");
    let clicks = "CREATE TABLE clicks (user STRING, pt AS PROCTIME()) WITH ('connector' = \
        'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');\n";
    dir.write(
        "proctime.sql",
        &format!("{batch}{clicks}SELECT user, pt FROM clicks;\n"),
    );
    assert_eq!(
        refused(&dir, "proctime.sql", &[]),
        "dtemporal: error: 'execution.runtime-mode' = 'batch' cannot run a query that reads \
         processing time (PROCTIME(), a lookup join, a row-count window or \
         'table.exec.state.ttl'): its result depends on when input arrives\n"
    );
    dir.write("bad.sql", "SET 'execution.runtime-mode' = 'fast';\n");
    assert_eq!(
        refused(&dir, "bad.sql", &[]),
        "dtemporal: error: SQL validation error at line 1, column 1: 'execution.runtime-mode' \
         takes 'streaming', 'batch' or 'automatic', not 'fast'\n"
    );
}

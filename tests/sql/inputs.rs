//! Hostile inputs (issue 45, items 6 and 7): statements nested far too deep, files replaced
//! while a run reads them, tables over paths that do not exist, and `INSERT INTO` a file or a
//! directory that already holds rows. Each gives a clear error or the right answer.

use differential_temporal::io::TypedSource;
use differential_temporal::session::StatementResult;
use differential_temporal::table::TableEnv;

/// Runs `sql` over the table `t` of one row, `x` = 1, on 2 workers, from a thread of 2 MiB of
/// stack (Rust's default for a spawned thread, and the harness's); returns its error's text,
/// or its rows.
fn on_small_stack(sql: String) -> Result<Vec<String>, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "x\n1\n").unwrap();
    let ddl = format!(
        "CREATE TABLE t (x BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    );
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let env = TableEnv::new().with_workers(2);
            env.execute_sql(&ddl).unwrap();
            match env.execute_sql(&sql) {
                Ok(mut results) => match results.pop() {
                    Some(StatementResult::Rows(rows)) => Ok(rows.rows_as_text()),
                    other => panic!("not a query: {other:?}"),
                },
                Err(e) => Err(e.to_string()),
            }
        })
        .unwrap()
        .join()
        .unwrap()
}

/// The limit's message, at `column` of line 1.
fn too_deep(column: usize) -> String {
    format!("SQL syntax error at line 1, column {column}: the statement nests deeper than the limit of 1000 levels here (each operator or keyword chained without a ',' between, each CASE branch, set operation and join is a level, added up through parentheses): split it, e.g. into views, or write a long OR of equalities as IN (..)")
}

/// 10,000-term expressions (chained `+`, `AND`, `OR`, `||`, CASE branches, UNION ALL
/// branches) and 10,000 nested parentheses are errors naming the limit, never a stack overflow
/// (which aborted the process from about 2,600 terms); below the limit the answer is right.
#[test]
fn statements_nested_too_deep_are_errors_naming_the_limit() {
    let chain = |term: &str, op: &str, n: usize| vec![term; n].join(op);
    // The 1,001st `+` of `SELECT 1 + 1 + ...` is at column 10 + 4 * 1000 (the first at 10).
    let plus = format!("SELECT {} AS s", chain("1", " + ", 10_000));
    assert_eq!(on_small_stack(plus), Err(too_deep(10 + 4 * 1000)));
    let and = format!("SELECT {} AS s", chain("TRUE", " AND ", 10_000));
    assert_eq!(on_small_stack(and), Err(too_deep(13 + 9 * 1000)));
    let or = format!("SELECT {} AS s", chain("FALSE", " OR ", 10_000));
    assert_eq!(on_small_stack(or), Err(too_deep(14 + 9 * 1000)));
    let concat = format!("SELECT {} AS s", chain("'a'", " || ", 10_000));
    assert_eq!(on_small_stack(concat), Err(too_deep(12 + 7 * 1000)));
    let branches: Vec<String> = (0..10_000).map(|i| format!("WHEN {i} THEN 1")).collect();
    let case = format!("SELECT CASE 0 {} ELSE 2 END AS s", branches.join(" "));
    assert!(on_small_stack(case)
        .unwrap_err()
        .contains("the statement nests deeper than the limit of 1000 levels here"));
    let union = vec!["SELECT 1 AS s"; 10_000].join(" UNION ALL ");
    assert!(on_small_stack(union)
        .unwrap_err()
        .contains("the statement nests deeper than the limit of 1000 levels here"));
    let nested = format!("SELECT {}1{} AS s", "(".repeat(10_000), ")".repeat(10_000));
    assert!(on_small_stack(nested)
        .unwrap_err()
        .starts_with("SQL syntax error"));
    // Within the limit, from the same small stack: the sum, the CASE and the union are
    // computed.
    let sum = format!("SELECT {} AS s FROM t", chain("x", " + ", 900));
    assert_eq!(on_small_stack(sum), Ok(vec!["900".to_string()]));
    let branches: Vec<String> = (0..450).map(|i| format!("WHEN {i} THEN {i}")).collect();
    let case = format!(
        "SELECT CASE x {} ELSE -1 END AS s FROM t",
        branches.join(" ")
    );
    assert_eq!(on_small_stack(case), Ok(vec!["1".to_string()]));
    let union = vec!["SELECT x AS s FROM t"; 900].join(" UNION ALL ");
    assert_eq!(on_small_stack(union), Ok(vec!["1".to_string(); 900]));
}

/// A file replaced (by a rename) after a run opened it is not read as its new version by some
/// workers and its old by others: each worker checks the file it opens against the version the
/// run opened, and a change is an error naming the file.
#[test]
fn a_file_replaced_while_read_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "a\n1\n2\n").unwrap();
    let path = path.to_str().unwrap();
    let (source, _) = TypedSource::open(path, None).unwrap();
    assert!(source.blocks(1).is_ok());
    let staged = dir.path().join("next.csv");
    std::fs::write(&staged, "a\n3\n4\n").unwrap();
    std::fs::rename(&staged, path).unwrap();
    let error = source.blocks(1).err().unwrap().to_string();
    assert_eq!(
        error,
        format!("{path}: the file changed while the run read it (it was replaced or rewritten after the run opened it, so its workers would read different versions): run again once it no longer changes")
    );
}

/// A table over a path that does not exist is refused at CREATE when it could never be read
/// or written: a monitored directory must exist (it may be empty), a file's directory must
/// exist. A file that does not exist yet in a directory that does is a sink: reading it says so.
#[test]
fn a_table_over_a_missing_path_is_named_at_create() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().to_str().unwrap();
    let env = TableEnv::new();
    let error = |sql: String| env.execute_sql(&sql).unwrap_err().to_string();
    assert_eq!(
        error(format!("CREATE TABLE m (a INT) WITH ('connector' = 'filesystem', 'path' = '{base}/in', 'format' = 'csv', 'source.monitor-interval' = '1 s')")),
        format!("SQL validation error at line 1, column 58: the monitored directory '{base}/in' of table 'm' does not exist ('source.monitor-interval' watches a directory, which may be empty but must exist): create it first")
    );
    assert_eq!(
        error(format!("CREATE TABLE f (a INT) WITH ('connector' = 'filesystem', 'path' = '{base}/nowhere/f.csv', 'format' = 'csv')")),
        format!("SQL validation error at line 1, column 58: the path '{base}/nowhere/f.csv' of table 'f' does not exist, nor does its directory '{base}/nowhere': the table can be neither read nor written")
    );
    std::fs::create_dir(dir.path().join("in")).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE m (a INT) WITH ('connector' = 'filesystem', 'path' = '{base}/in', 'format' = 'csv', 'source.monitor-interval' = '1 s');
         CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = '{base}/s.csv', 'format' = 'csv');"
    ))
    .unwrap();
    assert_eq!(
        error("SELECT * FROM s".to_string()),
        format!("SQL validation error at line 1, column 15: table 's' is a sink only: its path '{base}/s.csv' did not exist when it was declared, so it has nothing to read (declare it again once the path exists to read it)")
    );
}

/// `INSERT INTO` appends: a file (of a merge-engine table, whose writes `docs/sql.md` says are
/// appended) gets the new rows at its end, a directory a new part file of the engine's name;
/// rows whose columns are not the file's (a changelog into an append-only file) are refused,
/// naming the file, which is left as it was.
#[test]
fn insert_into_appends_to_a_file_and_adds_a_part_file_to_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().to_str().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    std::fs::write(dir.path().join("logs/a.csv"), "id\n1\n").unwrap();
    std::fs::write(dir.path().join("src.csv"), "id,price\n1,10\n2,20\n").unwrap();
    let env = TableEnv::new();
    env.execute_sql(&format!(
        "CREATE TABLE src (id BIGINT, price BIGINT) WITH ('connector' = 'filesystem', 'path' = '{base}/src.csv', 'format' = 'csv');
         CREATE TABLE prices (id BIGINT, price BIGINT, PRIMARY KEY (id) NOT ENFORCED)
           WITH ('connector' = 'filesystem', 'path' = '{base}/prices.csv', 'format' = 'csv', 'merge-engine' = 'deduplicate');
         CREATE TABLE logs (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{base}/logs', 'format' = 'csv');
         INSERT INTO prices SELECT id, price FROM src;
         INSERT INTO prices SELECT id, price + 1 FROM src WHERE id = 1;
         INSERT INTO logs SELECT id FROM src WHERE id = 2;"
    ))
    .unwrap();
    let prices = dir.path().join("prices.csv");
    assert_eq!(
        std::fs::read_to_string(&prices).unwrap(),
        "id,price\n1,10\n2,20\n1,11\n"
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "a.csv");
    assert!(
        names[1].starts_with("part-") && names[1].ends_with(".csv"),
        "{names:?}"
    );
    let part = dir.path().join("logs").join(&names[1]);
    assert_eq!(std::fs::read_to_string(part).unwrap(), "id\n2\n");
    let error = env
        .execute_sql("INSERT INTO prices SELECT id, SUM(price) FROM src GROUP BY id")
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        format!("{base}/prices.csv: INSERT INTO appends to this file, whose columns (id,price) are not those of the rows written (op,id,price): write to a new file or a directory")
    );
    assert_eq!(
        std::fs::read_to_string(&prices).unwrap(),
        "id,price\n1,10\n2,20\n1,11\n"
    );
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(leftovers, 0);
}

/// The command line refuses a 10,000-term expression with the error and exit code 2 (a syntax
/// error); it aborted with a stack overflow (SIGABRT, no message).
#[test]
fn the_command_line_refuses_a_statement_nested_too_deep() {
    let sql = format!("SELECT {} AS s", vec!["1"; 10_000].join(" + "));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(["sql", "-e", &sql])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&too_deep(10 + 4 * 1000)), "{stderr}");
}

/// A statement just within the limit runs whatever stack the threads of the process are given:
/// each worker evaluates on a stack of its own, not on the thread timely starts it on (with
/// threads of 256 KiB, as `RUST_MIN_STACK` sets them here, and in a build without incremental
/// compilation at 2 MiB, a 900-term sum overflowed a worker's stack and aborted the process).
#[test]
fn a_statement_within_the_limit_runs_on_workers_of_any_thread_stack() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "x\n1\n").unwrap();
    let sql = format!(
        "CREATE TABLE t (x BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv'); SELECT {} AS s FROM t",
        path.display(),
        vec!["x"; 900].join(" + ")
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(["sql", "-w", "2", "-e", &sql])
        .env("RUST_MIN_STACK", (256 << 10).to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "op,s\n+I,900\n");
}

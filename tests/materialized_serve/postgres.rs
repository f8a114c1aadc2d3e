//! A CONTINUOUS materialized table over a live postgres-cdc table (against the test server,
//! see `tests/postgres_cdc.rs`), killed before its first snapshot or while publishing one, and
//! served again: it ends equal to the table, each change applied once.

use std::time::{Duration, Instant};

use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::warehouse::TEST_REFRESH_PAUSE;

use super::common::{postgres_fresh_table, postgres_server, postgres_setup, postgres_with_options};
use super::{rows, sql, wait_for_file, Serve, TIMEOUT};

/// A warehouse with the CONTINUOUS materialized table `copy` of the postgres-cdc table `table`
/// (created afresh on the server of `line` with rows `(id, 1)` for ids 1 to 100).
fn postgres_copy(line: &str, table: &str) -> Dir {
    postgres_fresh_table(line, table, "id integer PRIMARY KEY, v integer", true);
    postgres_setup(
        line,
        &format!("INSERT INTO {table} SELECT i, 1 FROM generate_series(1, 100) AS i;"),
    );
    let dir = Dir::new();
    sql(
        &dir,
        &format!(
            "CREATE TABLE src (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED)
               WITH ({}, 'table-name' = '{table}', 'slot.name' = '{table}');
             CREATE MATERIALIZED TABLE copy FRESHNESS = INTERVAL '1' SECOND
               REFRESH_MODE = CONTINUOUS AS SELECT id, v FROM src",
            postgres_with_options(line)
        ),
    );
    dir
}

/// The sorted rows `id,v` of ids 1 to 100 with `v(id)` (none: deleted).
fn contents(v: &dyn Fn(u64) -> Option<u64>) -> Vec<String> {
    let mut rows: Vec<String> = (1..=100)
        .filter_map(|id| v(id).map(|v| format!("{id},{v}")))
        .collect();
    rows.sort();
    rows
}

/// Killed (SIGKILL) before its first snapshot is published, with a change after: the slot
/// it created was never advanced, so the next run renews it and reads the table from the
/// start again (a new snapshot, holding the change), and ends equal to the table.
#[test]
fn a_continuous_copy_of_postgres_killed_before_its_first_snapshot_starts_again() {
    let Some(line) = postgres_server() else {
        return;
    };
    let table = "pgcdc_serve_first";
    let dir = postgres_copy(&line, table);
    let pause = dir.path("pause");
    let hook = [(TEST_REFRESH_PAUSE, format!("written={pause}"))];
    let mut serve = Serve::start(&dir, &["-w", "2"], &hook);
    wait_for_file(&pause, &serve);
    serve.child.kill().unwrap();
    assert!(!serve.wait());
    std::fs::remove_file(&pause).unwrap();
    postgres_setup(&line, &format!("UPDATE {table} SET v = 2 WHERE id <= 50;"));
    let serve = Serve::start(&dir, &["-w", "2"], &[]);
    wait_for_rows(
        &dir,
        &contents(&|id| Some(if id <= 50 { 2 } else { 1 })),
        &serve,
    );
    serve.stop();
}

/// A CONTINUOUS copy of a live postgres-cdc table, killed (SIGKILL) at `stage` of publishing
/// the snapshot of a transaction made while it was stopped, and served again: it ends equal to
/// the table, each change applied once (the transaction's round is read again from the slot,
/// which only a published snapshot advances, or replayed from its file once published).
fn postgres_continuous_killed_at(stage: &str) {
    let Some(line) = postgres_server() else {
        return;
    };
    let table = format!("pgcdc_serve_{stage}");
    let dir = postgres_copy(&line, &table);
    let serve = Serve::start(&dir, &["-w", "2"], &[]);
    wait_for_rows(&dir, &contents(&|_| Some(1)), &serve);
    serve.stop();
    // While stopped: one transaction changes every row and deletes ten.
    postgres_setup(
        &line,
        &format!(
            "BEGIN; UPDATE {table} SET v = v + id; DELETE FROM {table} WHERE id % 10 = 0; COMMIT;"
        ),
    );
    let after = contents(&|id| (id % 10 != 0).then_some(1 + id));
    let pause = dir.path("pause");
    let hook = [(TEST_REFRESH_PAUSE, format!("{stage}={pause}"))];
    let mut serve = Serve::start(&dir, &["-w", "2"], &hook);
    wait_for_file(&pause, &serve);
    serve.child.kill().unwrap();
    assert!(!serve.wait());
    std::fs::remove_file(&pause).unwrap();
    let serve = Serve::start(&dir, &["-w", "2"], &[]);
    wait_for_rows(&dir, &after, &serve);
    serve.stop();
    let mut copy = rows(&dir, "SELECT * FROM copy");
    copy.sort();
    assert_eq!(copy, after, "{stage}");
}

/// Waits (bounded) until `copy` holds `expected` (sorted rows).
fn wait_for_rows(dir: &Dir, expected: &[String], serve: &Serve) {
    let started = Instant::now();
    loop {
        let mut now = rows(dir, "SELECT * FROM copy");
        now.sort();
        if now == expected {
            return;
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "copy never became the table; stderr: {}",
            serve.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_continuous_copy_of_postgres_killed_before_publishing_resumes() {
    postgres_continuous_killed_at("written");
}

#[test]
fn a_continuous_copy_of_postgres_killed_after_publishing_resumes() {
    postgres_continuous_killed_at("published");
}

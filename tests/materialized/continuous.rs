//! CONTINUOUS materialized tables: a live refresh over a monitored directory and over a
//! `datagen` table, stopped and resumed from the positions its snapshot recorded (nothing lost
//! or counted twice), and stopped by `SUSPEND`. Each run is a thread with its own environment
//! on the warehouse; the test reads the table as any reader does, waiting (at most 60 s, a
//! bound, not a timing the results depend on) for the snapshot it expects.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::table::TableEnv;
use differential_temporal::warehouse::{current, RefreshRecord};

use super::rows;

/// A continuous refresh of `table` running on its own thread with `workers` workers.
struct Running {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<Vec<RefreshRecord>, String>>,
}

impl Running {
    fn start(warehouse: &Path, table: &str, workers: usize) -> Running {
        let stop = Arc::new(AtomicBool::new(false));
        let (warehouse, table, flag) = (warehouse.to_path_buf(), table.to_string(), stop.clone());
        let thread = std::thread::spawn(move || {
            let env = TableEnv::new()
                .with_workers(workers)
                .with_warehouse(&warehouse)
                .map_err(|e| e.to_string())?;
            let mut published = Vec::new();
            env.run_continuous_refresh(&table, &flag, |r| published.push(r.clone()))
                .map_err(|e| e.to_string())?;
            Ok(published)
        });
        Running { stop, thread }
    }

    /// Stops the run; the snapshots it published.
    fn stop(self) -> Vec<RefreshRecord> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap().unwrap()
    }
}

/// Waits until `query` gives `expected` (the rows sorted), at most 60 s.
fn wait_for_rows(env: &TableEnv, query: &str, expected: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut got = rows(env, query);
        got.sort();
        if got == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{query}: still {got:?}, expected {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes `text` as `name` in `dir` the way a continuous source wants it: written elsewhere,
/// then moved in whole.
fn drop_file(dir: &Path, name: &str, text: &str) {
    let staged = dir.parent().unwrap().join(format!(".{name}.staged"));
    std::fs::write(&staged, text).unwrap();
    std::fs::rename(&staged, dir.join(name)).unwrap();
}

const TOTALS: &str = "SELECT * FROM totals";

#[test]
fn a_monitored_directory_is_read_as_files_arrive_and_resumed_without_duplicates() {
    let dir = Dir::new();
    let input = Path::new(&dir.path("orders")).to_path_buf();
    std::fs::create_dir_all(&input).unwrap();
    drop_file(&input, "a.csv", "user_id,amount\nalice,10\nbob,5\n");
    let warehouse = Path::new(&dir.path("wh")).to_path_buf();
    let env = TableEnv::new().with_warehouse(&warehouse).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE orders (user_id STRING, amount BIGINT) WITH ('connector' = 'filesystem',
           'path' = '{}', 'format' = 'csv', 'source.monitor-interval' = '20 ms');
         CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' SECOND
           AS SELECT user_id, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY user_id",
        input.display()
    ))
    .unwrap();
    let run = Running::start(&warehouse, "totals", 2);
    wait_for_rows(&env, TOTALS, &["alice,10,1", "bob,5,1"]);
    drop_file(&input, "b.csv", "user_id,amount\nalice,7\ncarol,1\n");
    wait_for_rows(&env, TOTALS, &["alice,17,2", "bob,5,1", "carol,1,1"]);
    let published = run.stop();
    assert!(published.len() >= 2, "{published:?}");
    assert_eq!(published.last().unwrap().rows, 3);

    // A file that arrives while nothing runs is read by the next run, which first reads
    // again what the snapshot was made of: no row is counted twice.
    drop_file(&input, "c.csv", "user_id,amount\nbob,1\n");
    let run = Running::start(&warehouse, "totals", 1);
    wait_for_rows(&env, TOTALS, &["alice,17,2", "bob,6,2", "carol,1,1"]);
    run.stop();
    let manifest = current(&warehouse.join("data").join("totals")).unwrap();
    let read: Vec<&String> = manifest.input_positions.keys().collect();
    assert_eq!(read.len(), 4, "{read:?}"); // `rounds` and one entry a file
    let mut batch = rows(
        &env,
        "SELECT user_id, SUM(amount), COUNT(*) FROM orders GROUP BY user_id",
    );
    batch.sort();
    assert_eq!(batch, ["alice,17,2", "bob,6,2", "carol,1,1"]);
}

#[test]
fn a_datagen_table_is_made_at_its_rate_up_to_its_row_count() {
    let dir = Dir::new();
    let warehouse = Path::new(&dir.path("wh")).to_path_buf();
    let env = TableEnv::new().with_warehouse(&warehouse).unwrap();
    env.execute_sql(
        "CREATE TABLE gen (id BIGINT, v INT) WITH ('connector' = 'datagen',
           'number-of-rows' = '3000', 'rows-per-second' = '1000',
           'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000',
           'fields.v.min' = '0', 'fields.v.max' = '9');
         CREATE MATERIALIZED TABLE counts FRESHNESS = INTERVAL '1' SECOND
           AS SELECT COUNT(*) AS n, SUM(id) AS s FROM gen",
    )
    .unwrap();
    let run = Running::start(&warehouse, "counts", 2);
    // Rows come at 1000 a second: the table grows before it reaches 3000.
    wait_for_rows(&env, "SELECT n > 0 AND n < 3000 FROM counts", &["true"]);
    run.stop();
    let run = Running::start(&warehouse, "counts", 2);
    wait_for_rows(&env, "SELECT * FROM counts", &["3000,4501500"]);
    run.stop();
    let manifest = current(&warehouse.join("data").join("counts")).unwrap();
    assert_eq!(manifest.input_positions["rows:gen"], 3000);
}

#[test]
fn suspend_stops_a_continuous_refresh_and_resume_goes_on() {
    let dir = Dir::new();
    let input = Path::new(&dir.path("events")).to_path_buf();
    std::fs::create_dir_all(&input).unwrap();
    drop_file(&input, "1.csv", "k\na\n");
    let warehouse = Path::new(&dir.path("wh")).to_path_buf();
    let env = TableEnv::new().with_warehouse(&warehouse).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '{}',
           'format' = 'csv', 'source.monitor-interval' = '20 ms');
         CREATE MATERIALIZED TABLE seen FRESHNESS = INTERVAL '1' SECOND
           AS SELECT k, COUNT(*) AS n FROM events GROUP BY k",
        input.display()
    ))
    .unwrap();
    let run = Running::start(&warehouse, "seen", 1);
    wait_for_rows(&env, "SELECT * FROM seen", &["a,1"]);
    env.execute_sql("ALTER MATERIALIZED TABLE seen SUSPEND")
        .unwrap();
    // The run sees the status at its next round and ends by itself.
    let published = run.thread.join().unwrap().unwrap();
    assert_eq!(published.len(), 1);
    drop_file(&input, "2.csv", "k\na\nb\n");
    env.execute_sql("ALTER MATERIALIZED TABLE seen RESUME")
        .unwrap();
    let run = Running::start(&warehouse, "seen", 1);
    wait_for_rows(&env, "SELECT * FROM seen", &["a,2", "b,1"]);
    run.stop();
}

#[test]
fn a_full_table_has_no_continuous_refresh() {
    let dir = Dir::new();
    let orders = dir.write("orders.csv", "id\n1\n");
    let env = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE orders (id INT) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
         CREATE MATERIALIZED TABLE t FRESHNESS = INTERVAL '1' HOUR AS SELECT COUNT(*) AS n FROM orders"
    ))
    .unwrap();
    let err = env
        .run_continuous_refresh("t", &AtomicBool::new(false), |_| {})
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "materialized table `default_catalog`.`default_database`.`t` is refreshed in FULL mode, by its schedule"
    );
}

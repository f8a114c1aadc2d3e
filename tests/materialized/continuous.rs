//! CONTINUOUS materialized tables: a live refresh over a monitored directory and over a
//! `datagen` table, stopped and resumed from the positions its snapshot recorded (nothing lost
//! or counted twice), and stopped by `SUSPEND`. Each run is a thread with its own environment
//! on the warehouse; the test reads the table as any reader does, waiting (at most 60 s, a
//! bound, not a timing the results depend on) for the snapshot it expects.

use std::path::{Path, PathBuf};
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

/// Under `dir`: the monitored directory `name` holding `files` and the warehouse `wh`, on
/// which `sql` ran (`{input}` in it: the directory's path). The directory, the warehouse and
/// the environment.
fn monitored(
    dir: &Dir,
    name: &str,
    files: &[(&str, &str)],
    sql: &str,
) -> (PathBuf, PathBuf, TableEnv) {
    let input = Path::new(&dir.path(name)).to_path_buf();
    std::fs::create_dir_all(&input).unwrap();
    for (file, text) in files {
        drop_file(&input, file, text);
    }
    let warehouse = Path::new(&dir.path("wh")).to_path_buf();
    let env = TableEnv::new().with_warehouse(&warehouse).unwrap();
    env.execute_sql(&sql.replace("{input}", &input.display().to_string()))
        .unwrap();
    (input, warehouse, env)
}

const TOTALS: &str = "SELECT * FROM totals";

/// The table `orders` over the monitored directory `{input}` and the CONTINUOUS table `totals`.
const ORDERS_TOTALS: &str = "
    CREATE TABLE orders (user_id STRING, amount BIGINT) WITH ('connector' = 'filesystem',
      'path' = '{input}', 'format' = 'csv', 'source.monitor-interval' = '20 ms');
    CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' SECOND
      AS SELECT user_id, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY user_id";

#[test]
fn a_monitored_directory_is_read_as_files_arrive_and_resumed_without_duplicates() {
    let dir = Dir::new();
    let a = ("a.csv", "user_id,amount\nalice,10\nbob,5\n");
    let (input, warehouse, env) = monitored(&dir, "orders", &[a], ORDERS_TOTALS);
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

/// Runs the continuous refresh of `table` on this thread with `workers` workers until `done`
/// (given each published snapshot and the table as a reader sees it then) says so; the
/// snapshots it published.
fn run_until(
    warehouse: &Path,
    table: &str,
    workers: usize,
    mut done: impl FnMut(&RefreshRecord, Vec<String>) -> bool,
) -> Vec<RefreshRecord> {
    let env = TableEnv::new()
        .with_workers(workers)
        .with_warehouse(warehouse)
        .unwrap();
    let stop = AtomicBool::new(false);
    let mut published = Vec::new();
    env.run_continuous_refresh(table, &stop, |record| {
        published.push(record.clone());
        if done(record, rows(&env, &format!("SELECT * FROM {table}"))) {
            stop.store(true, Ordering::SeqCst);
        }
    })
    .unwrap();
    published
}

/// A round takes `rows-per-second x interval` rows (1000: the interval is 1 s without a
/// monitored table) and the first round is published at once: the first snapshot holds
/// exactly the first 1000 rows. The next run reads that round again and goes on to the
/// table's 3000 rows, no row counted twice.
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
    let mut first = Vec::new();
    run_until(&warehouse, "counts", 2, |_, now| {
        first = now;
        true
    });
    assert_eq!(first, ["1000,500500"]);
    let last = run_until(&warehouse, "counts", 2, |_, now| now == ["3000,4501500"]);
    assert_eq!(last.last().unwrap().rows, 1);
    let manifest = current(&warehouse.join("data").join("counts")).unwrap();
    assert_eq!(manifest.input_positions["rows:gen"], 3000);
}

/// An unbounded datagen table (no row count, no sequence) is made at its rate for as long as
/// the refresh runs; a stop and a restart lose and double nothing (the ids are random BIGINTs:
/// a row read twice would count twice but not as a distinct id). A batch query over it is
/// refused, and so is a FULL materialized table.
#[test]
fn an_unbounded_datagen_table_is_read_round_by_round_and_resumed() {
    let dir = Dir::new();
    let warehouse = Path::new(&dir.path("wh")).to_path_buf();
    let env = TableEnv::new().with_warehouse(&warehouse).unwrap();
    env.execute_sql(
        "CREATE TABLE clicks (id BIGINT, v INT) WITH ('connector' = 'datagen',
           'rows-per-second' = '500', 'fields.v.min' = '0', 'fields.v.max' = '9');
         CREATE MATERIALIZED TABLE clicked FRESHNESS = INTERVAL '1' SECOND
           AS SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids FROM clicks",
    )
    .unwrap();
    let first = run_until(&warehouse, "clicked", 2, |_, now| {
        assert_eq!(now, ["500,500"]);
        true
    });
    assert_eq!(first.len(), 1);
    // The next run reads round 0 again, then makes round 1, published at once.
    run_until(&warehouse, "clicked", 1, |_, now| {
        assert_eq!(now, ["1000,1000"]);
        true
    });
    let manifest = current(&warehouse.join("data").join("clicked")).unwrap();
    assert_eq!(manifest.input_positions["rows:clicks"], 1000);
    assert_eq!(manifest.input_positions["round-rows:clicks"], 500);

    let batch = env
        .sql_query("SELECT COUNT(*) FROM clicks")
        .unwrap()
        .execute()
        .unwrap_err();
    assert_eq!(
        batch.to_string(),
        "table 'clicks' is unbounded (the connector 'datagen' without 'number-of-rows' makes rows forever), so a batch query over it never ends: read it from a CONTINUOUS materialized table, or add 'number-of-rows' = '<n>' to its WITH options"
    );
    let full = env
        .execute_sql(
            "CREATE MATERIALIZED TABLE hourly FRESHNESS = INTERVAL '1' HOUR
               AS SELECT COUNT(*) AS n FROM clicks",
        )
        .unwrap_err();
    assert!(
        full.to_string().ends_with(
            "a FULL refresh is a batch query: table 'clicks' is unbounded (the connector 'datagen' without 'number-of-rows' makes rows forever), so a batch query over it never ends: read it from a CONTINUOUS materialized table, or add 'number-of-rows' = '<n>' to its WITH options"
        ),
        "{full}"
    );
}

/// An unbounded Nexmark table gives each round the bids among `first-event.rate` events (920
/// of 1000): the first snapshot equals the same query over a bounded table of 1000 events.
#[test]
fn an_unbounded_nexmark_table_is_read_at_its_event_rate() {
    let dir = Dir::new();
    let warehouse = Path::new(&dir.path("wh")).to_path_buf();
    let env = TableEnv::new().with_warehouse(&warehouse).unwrap();
    let bids = |name: &str, events: &str| {
        format!(
            "CREATE TABLE {name} (auction BIGINT, price BIGINT) WITH ('connector' = 'nexmark',
               'nexmark.table' = 'bid', 'first-event.rate' = '1000'{events});"
        )
    };
    env.execute_sql(&format!(
        "{}{}
         CREATE MATERIALIZED TABLE spent FRESHNESS = INTERVAL '1' SECOND
           AS SELECT COUNT(*) AS n, SUM(price) AS total FROM bid",
        bids("bid", ""),
        bids("bid_1000", ", 'events.num' = '1000'")
    ))
    .unwrap();
    let batch = rows(&env, "SELECT COUNT(*), SUM(price) FROM bid_1000");
    assert!(batch[0].starts_with("920,"), "{batch:?}");
    run_until(&warehouse, "spent", 2, |_, now| {
        assert_eq!(now, batch);
        true
    });
}

/// A monitored directory may be empty when its table and the materialized table are made
/// (the columns are declared); the refresh publishes nothing until the first file arrives,
/// then reads it; a file whose kind (changelog or not) is not the table's is refused.
#[test]
fn a_monitored_directory_may_start_empty() {
    let dir = Dir::new();
    let (input, warehouse, env) = monitored(&dir, "orders", &[], ORDERS_TOTALS);
    let run = Running::start(&warehouse, "totals", 2);
    drop_file(
        &input,
        "a.csv",
        "user_id,amount\nalice,10\nbob,5\nalice,1\n",
    );
    wait_for_rows(&env, TOTALS, &["alice,11,2", "bob,5,1"]);
    let published = run.stop();
    assert_eq!(
        published[0].rows, 2,
        "nothing published before the file: {published:?}"
    );

    // A run whose tables were declared before the file came refuses it when it arrives.
    let env = TableEnv::new().with_warehouse(&warehouse).unwrap();
    drop_file(&input, "b.csv", "op,user_id,amount\n+I,carol,1\n");
    let err = env
        .run_continuous_refresh("totals", &AtomicBool::new(false), |_| {})
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the file {} has an \"op\" column, but table 'orders' is append-only: the files of a table are all changelogs or all append-only",
            input.join("b.csv").display()
        )
    );
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

/// A PARTITIONED BY table publishes partition-wise: a snapshot keeps the file of a partition
/// no round changed (a hard link to the previous snapshot's, the same inode) and writes only
/// the partitions that changed.
#[test]
fn a_partitioned_table_rewrites_only_the_partitions_that_changed() {
    use std::os::unix::fs::MetadataExt;

    let dir = Dir::new();
    let one = ("1.csv", "ds,k\n2024-01-01,a\n2024-01-02,b\n");
    let (input, warehouse, env) = monitored(
        &dir,
        "events",
        &[one],
        "CREATE TABLE events (ds STRING, k STRING) WITH ('connector' = 'filesystem',
           'path' = '{input}', 'format' = 'csv', 'source.monitor-interval' = '20 ms');
         CREATE MATERIALIZED TABLE per_day PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' SECOND
           AS SELECT ds, COUNT(*) AS n FROM events GROUP BY ds",
    );
    let table_dir = warehouse.join("data").join("per_day");
    // The inode and rows of each partition's file of the current snapshot.
    let files = || {
        let manifest = current(&table_dir).unwrap();
        let snapshot = manifest.dir(&table_dir);
        let mut files: Vec<(String, u64, u64)> = manifest
            .files
            .iter()
            .map(|f| {
                let day = f.partition[0].1.clone().unwrap();
                let inode = std::fs::metadata(snapshot.join(&f.name)).unwrap().ino();
                (day, inode, f.rows)
            })
            .collect();
        files.sort();
        files
    };
    let run = Running::start(&warehouse, "per_day", 2);
    wait_for_rows(
        &env,
        "SELECT * FROM per_day",
        &["2024-01-01,1", "2024-01-02,1"],
    );
    let before = files();
    drop_file(&input, "2.csv", "ds,k\n2024-01-02,c\n2024-01-03,d\n");
    wait_for_rows(
        &env,
        "SELECT * FROM per_day",
        &["2024-01-01,1", "2024-01-02,2", "2024-01-03,1"],
    );
    run.stop();
    let after = files();
    let days: Vec<(&str, u64)> = after.iter().map(|(d, _, r)| (d.as_str(), *r)).collect();
    assert_eq!(
        days,
        [("2024-01-01", 1), ("2024-01-02", 1), ("2024-01-03", 1)]
    );
    assert_eq!(
        after[0].1, before[0].1,
        "2024-01-01 kept: {before:?} {after:?}"
    );
    assert_ne!(
        after[1].1, before[1].1,
        "2024-01-02 rewritten: {before:?} {after:?}"
    );
}

/// A continuous refresh of a changelog directory selected as it is reports a retraction of a
/// row the table does not hold (the `-D` of `bob` at line 3, no `+I` before it) at its
/// position, and fails the refresh, on 1 and 2 workers: the table's count of the row went
/// to -1 and was held as 0 silently, the refresh going on.
#[test]
fn a_retraction_of_a_row_not_held_fails_a_continuous_refresh() {
    for workers in [1, 2] {
        let dir = Dir::new();
        let changes = ("a.csv", "op,user_id,amount\n+I,alice,10\n-D,bob,5\n");
        let sql = "CREATE TABLE orders (user_id STRING, amount BIGINT) WITH (
              'connector' = 'filesystem', 'path' = '{input}', 'format' = 'csv',
              'source.monitor-interval' = '20 ms');
            CREATE MATERIALIZED TABLE kept FRESHNESS = INTERVAL '1' SECOND
              AS SELECT user_id, amount FROM orders";
        let (_, warehouse, _) = monitored(&dir, "orders", &[changes], sql);
        let run = Running::start(&warehouse, "kept", workers);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !run.thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(run.thread.is_finished(), "-w {workers}: still running");
        assert_eq!(
            run.thread.join().unwrap().unwrap_err(),
            "continuous refresh of `default_catalog`.`default_database`.`kept` read 1 bad row(s), the first: refused row (seq 3): a retraction of row (user_id=bob, amount=5) that the table does not hold (no earlier change inserted it)",
            "-w {workers}"
        );
    }
}

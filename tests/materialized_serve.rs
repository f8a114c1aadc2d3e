//! `dtemporal serve` (issue 14) as a child process: a missed schedule time caught up at start,
//! SIGTERM during a refresh (it finishes and publishes, exit 0), SIGKILL at each stage of
//! publishing a snapshot (readers keep the previous snapshot, do not wait for the paused
//! refresh's lock and remove nothing; a restart recovers and publishes
//! the batch answer), catalog changes made by `dtemporal sql --warehouse` while it runs, and a
//! CONTINUOUS table over a monitored directory, or over a live postgres-cdc table (in
//! `postgres`), killed while publishing and resumed.
//!
//! The kill points are the test hook `DTEMPORAL_TEST_REFRESH_PAUSE` (the refresh waits at a
//! stage while a file exists), not timing; the schedule is fixed with `--clock-start`. Every
//! wait for the child is bounded (60 s) and never decides a result by itself.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use differential_temporal::materialized::ManualClock;
use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::table::TableEnv;
use differential_temporal::warehouse::{current, Warehouse, PAUSE_STAGES, TEST_REFRESH_PAUSE};

mod common;
#[path = "materialized_serve/owner.rs"]
mod owner;
#[path = "materialized_serve/postgres.rs"]
mod postgres;

/// Keys and rows of the source (rows per key: `ROWS / KEYS`).
const KEYS: u64 = 500;
const ROWS: u64 = 20_000;
/// How long a wait for the child may take before the test fails.
const TIMEOUT: Duration = Duration::from_secs(60);
/// The definition of `totals`.
const DEFINITION: &str = "SELECT k, COUNT(*) AS n, SUM(v) AS total FROM src GROUP BY k";

/// Writes the source of round `round`: `ROWS` rows over `KEYS` keys, every `v` equal to
/// `round`.
fn write_source(dir: &Dir, round: u64) {
    let mut csv = String::from("k,v\n");
    for i in 0..ROWS {
        csv.push_str(&format!("{},{round}\n", i % KEYS));
    }
    dir.write("src.csv", &csv);
}

/// A warehouse whose FULL table `totals` (freshness 1 hour) was created at 00:10 and, when
/// `refreshed`, refreshed at 01:00 over round 1's source (snapshot 1). The source then holds
/// round 2.
fn seed(dir: &Dir, refreshed: bool) {
    write_source(dir, 1);
    let clock = ManualClock::at("2024-01-01 00:10:00").unwrap();
    let env = TableEnv::new()
        .with_clock(Arc::new(clock.clone()))
        .with_warehouse(dir.path("wh"))
        .unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE src (k BIGINT, v BIGINT)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
           AS {DEFINITION}",
        dir.path("src.csv")
    ))
    .unwrap();
    if refreshed {
        clock.advance_ms(3_000_000);
        assert_eq!(env.run_scheduled_refreshes().unwrap().len(), 1);
    }
    write_source(dir, 2);
}

/// The rows of a query (CSV lines, sorted) in a new environment on the warehouse.
fn rows(dir: &Dir, sql: &str) -> Vec<String> {
    let env = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    env.sql_query(sql)
        .unwrap()
        .execute()
        .unwrap()
        .rows_as_text()
}

/// `totals` as a whole snapshot of round `round` holds it (in the order [`rows`] gives): every
/// key, `ROWS / KEYS` rows each.
fn content_of(round: u64) -> Vec<String> {
    let per_key = ROWS / KEYS;
    (0..KEYS)
        .map(|k| format!("{k},{per_key},{}", per_key * round))
        .collect()
}

/// A running `dtemporal serve`: its stdout lines as they come, its stderr gathered.
struct Serve {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Serve {
    /// Starts `dtemporal serve` on the warehouse with `args` and the environment `envs`.
    fn start(dir: &Dir, args: &[&str], envs: &[(&str, String)]) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
            .args([
                "serve",
                "--warehouse",
                &dir.path("wh"),
                "--poll-interval",
                "50 ms",
            ])
            .args(args)
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (send, lines) = channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let _ = send.send(line.unwrap());
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let gathered = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut text = String::new();
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                text.push_str(&String::from_utf8_lossy(&buf[..n]));
                *gathered.lock().unwrap() = text.clone();
            }
        });
        Serve {
            child,
            lines,
            stderr,
        }
    }

    /// The next status line (at most `TIMEOUT` away).
    fn next_line(&self) -> String {
        self.lines.recv_timeout(TIMEOUT).unwrap_or_else(|e| {
            panic!(
                "no status line: {e}; stderr: {}",
                self.stderr.lock().unwrap()
            )
        })
    }

    /// The next status line of `table`.
    fn next_line_of(&self, table: &str) -> String {
        loop {
            let line = self.next_line();
            if line.starts_with(&format!("table={table} ")) {
                return line;
            }
        }
    }

    /// Sends SIGTERM.
    fn terminate(&self) {
        // SAFETY: sends a signal to the child, which has not been reaped yet.
        assert_eq!(
            unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) },
            0
        );
    }

    /// Waits (bounded) for the child to exit and returns whether it exited 0.
    fn wait(&mut self) -> bool {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(started.elapsed() < TIMEOUT, "serve did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (bounded) until serve has said it serves: its signal handlers are in place.
    fn wait_until_serving(&self) {
        let started = Instant::now();
        while !self.stderr.lock().unwrap().contains("dtemporal: serving") {
            assert!(started.elapsed() < TIMEOUT, "serve did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGTERM (once serve handles it), then the exit; asserts it is 0 and nothing was
    /// reported as an error.
    fn stop(mut self) {
        self.wait_until_serving();
        self.terminate();
        assert!(self.wait(), "stderr: {}", self.stderr.lock().unwrap());
        let stderr = self.stderr.lock().unwrap();
        assert!(!stderr.contains("error"), "stderr: {stderr}");
    }
}

/// A test that fails while serve runs does not leave it running.
impl Drop for Serve {
    fn drop(&mut self) {
        if self.child.try_wait().is_ok_and(|status| status.is_none()) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits (bounded) until `file` exists.
fn wait_for_file(file: &str, serve: &Serve) {
    let started = Instant::now();
    while !Path::new(file).exists() {
        assert!(
            started.elapsed() < TIMEOUT,
            "the refresh did not reach its pause; stderr: {}",
            serve.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The names in the table's data directory, sorted.
fn listing(dir: &Dir) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.path("wh/data/totals"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_missed_schedule_time_is_caught_up_at_start() {
    let dir = Dir::new();
    seed(&dir, false);
    // Created at 00:10, nothing ran since: at 03:30 the latest schedule time, 03:00, is due
    // (a table without partition formatters is overwritten once, for the latest).
    let serve = Serve::start(&dir, &["--clock-start", "2024-01-01 03:30:00"], &[]);
    let line = serve.next_line();
    assert!(
        line.starts_with("table=totals mode=FULL trigger=periodic schedule_time='2024-01-01 03:00:00' rows=500 duration_ms="),
        "{line}"
    );
    assert!(line.ends_with(" snapshot=1"), "{line}");
    serve.stop();
    assert_eq!(rows(&dir, "SELECT * FROM totals"), content_of(2));
}

#[test]
fn sigterm_during_a_refresh_finishes_and_publishes_it() {
    let dir = Dir::new();
    seed(&dir, true);
    let pause = dir.path("pause");
    let serve = Serve::start(
        &dir,
        &["--clock-start", "2024-01-01 02:30:00"],
        &[(TEST_REFRESH_PAUSE, format!("written={pause}"))],
    );
    wait_for_file(&pause, &serve);
    serve.terminate();
    std::fs::remove_file(&pause).unwrap();
    let line = serve.next_line();
    assert!(line.ends_with(" snapshot=2"), "{line}");
    serve.stop();
    assert_eq!(rows(&dir, "SELECT * FROM totals"), content_of(2));
}

/// Kills serve with SIGKILL at `stage` of publishing snapshot 2 (round 2's), checks what a
/// reader sees, restarts it, and checks the snapshot it publishes and the data directory.
fn killed_at(stage: &str) {
    let dir = Dir::new();
    seed(&dir, true);
    let pause = dir.path("pause");
    let clock = ["--clock-start", "2024-01-01 02:30:00"];
    let mut serve = Serve::start(
        &dir,
        &clock,
        &[(TEST_REFRESH_PAUSE, format!("{stage}={pause}"))],
    );
    wait_for_file(&pause, &serve);
    // Paused: a reader of the pointer sees the previous snapshot until the pointer is
    // replaced (the last stage).
    let published = stage == "published";
    let table_dir = dir.path("wh/data/totals");
    let id = current(Path::new(&table_dir)).unwrap().snapshot_id;
    assert_eq!(id, if published { 2 } else { 1 }, "{stage}");
    // A reader does not wait for the paused refresh, which holds the warehouse's lock: it
    // opens the warehouse without recovering it and reads the published snapshot.
    assert_eq!(
        rows(&dir, "SELECT * FROM totals"),
        content_of(id),
        "{stage}"
    );
    serve.child.kill().unwrap(); // SIGKILL: no destructor, no flush, the lock released by the OS.
    assert!(!serve.wait());
    std::fs::remove_file(&pause).unwrap();

    // A reader sees a whole snapshot: the previous one, or round 2's once its pointer was
    // published; it removes nothing (issue 45): the restarted serve recovers.
    let round = if published { 2 } else { 1 };
    let left = listing(&dir);
    assert_eq!(
        rows(&dir, "SELECT * FROM totals"),
        content_of(round),
        "{stage}"
    );
    assert_eq!(listing(&dir), left, "{stage}");

    // Restarted, serve runs the 02:00 refresh again (the catalog never recorded it) and
    // publishes the batch answer, without duplicates.
    let serve = Serve::start(&dir, &clock, &[]);
    let line = serve.next_line();
    let snapshot = if published { 3 } else { 2 };
    assert!(
        line.starts_with(
            "table=totals mode=FULL trigger=periodic schedule_time='2024-01-01 02:00:00' rows=500 "
        ) && line.ends_with(&format!(" snapshot={snapshot}")),
        "{stage}: {line}"
    );
    serve.stop();
    let batch = rows(&dir, DEFINITION);
    assert_eq!(batch, content_of(2));
    assert_eq!(rows(&dir, "SELECT * FROM totals"), batch, "{stage}");
    let catalog = Warehouse::open(dir.path("wh")).unwrap().catalog().unwrap();
    let history = &catalog.materialized["totals"].history;
    assert_eq!(history.len(), 2, "{stage}: {history:?}");
    assert_eq!(history[1].snapshot_id, snapshot);
    // Recovery left the current and the previous snapshot only, and no temporary file.
    let previous = snapshot - 1;
    assert_eq!(
        listing(&dir),
        [
            "CURRENT".to_string(),
            format!("manifest-{previous}.json"),
            format!("manifest-{snapshot}.json"),
            format!("snap-{previous}"),
            format!("snap-{snapshot}"),
        ],
        "{stage}"
    );
}

#[test]
fn killed_after_writing_the_data_files() {
    assert_eq!(PAUSE_STAGES[0], "written");
    killed_at("written");
}

#[test]
fn killed_after_renaming_the_snapshot_directory() {
    killed_at("renamed");
}

#[test]
fn killed_after_writing_the_manifest() {
    killed_at("manifest");
}

#[test]
fn killed_after_publishing_the_pointer() {
    killed_at("published");
}

/// Runs statements in a `dtemporal sql --warehouse` process.
fn sql(dir: &Dir, statements: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args([
            "sql",
            "--quiet",
            "--warehouse",
            &dir.path("wh"),
            "-e",
            statements,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The refreshes the catalog records for `table`.
fn history_len(dir: &Dir, table: &str) -> usize {
    let catalog = Warehouse::open(dir.path("wh")).unwrap().catalog().unwrap();
    catalog.materialized[table].history.len()
}

#[test]
fn catalog_changes_made_while_serving_are_picked_up() {
    let dir = Dir::new();
    write_source(&dir, 1);
    // The system clock, and tables refreshed every second.
    let serve = Serve::start(&dir, &[], &[]);
    let every_second = |name: &str| {
        format!(
            "CREATE MATERIALIZED TABLE {name} FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL
               AS SELECT COUNT(*) AS n FROM src"
        )
    };
    sql(
        &dir,
        &format!(
            "CREATE TABLE src (k BIGINT, v BIGINT)
               WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
             {}",
            dir.path("src.csv"),
            every_second("a")
        ),
    );
    assert!(serve.next_line_of("a").contains(" rows=1 "));

    // Suspended: once a round has seen the catalog after the suspension (it refreshed `b`,
    // created after it), `a` has no new refresh.
    sql(&dir, "ALTER MATERIALIZED TABLE a SUSPEND");
    let suspended = history_len(&dir, "a");
    sql(&dir, &every_second("b"));
    serve.next_line_of("b");
    assert_eq!(history_len(&dir, "a"), suspended);

    // Resumed: refreshed again. Dropped: the rounds go on without it, and without errors.
    sql(&dir, "ALTER MATERIALIZED TABLE a RESUME");
    serve.next_line_of("a");
    sql(&dir, "DROP MATERIALIZED TABLE a");
    serve.next_line_of("b");
    serve.next_line_of("b");
    serve.stop();
    assert_eq!(rows(&dir, "SELECT * FROM b"), ["20000"]);
    let catalog = Warehouse::open(dir.path("wh")).unwrap().catalog().unwrap();
    assert_eq!(catalog.materialized.keys().collect::<Vec<_>>(), ["b"]);
}

/// Moves a file of `ROWS` rows over `KEYS` keys, every `v` equal to `v`, into the monitored
/// directory `in` as `name` (written beside it first: a file is read whole once it appears).
fn drop_source_file(dir: &Dir, name: &str, v: u64) {
    let mut csv = String::from("k,v\n");
    for i in 0..ROWS {
        csv.push_str(&format!("{},{v}\n", i % KEYS));
    }
    let staged = dir.write(".staged.csv", &csv);
    std::fs::rename(staged, Path::new(&dir.path("in")).join(name)).unwrap();
}

/// `totals` over files whose `v` are `vs`.
fn content_over(vs: &[u64]) -> Vec<String> {
    let per_key = ROWS / KEYS;
    let n = per_key * vs.len() as u64;
    let total: u64 = vs.iter().map(|v| v * per_key).sum();
    (0..KEYS).map(|k| format!("{k},{n},{total}")).collect()
}

/// Waits (bounded) until `totals` holds `expected`.
fn wait_for_totals(dir: &Dir, expected: &[String], serve: &Serve) {
    let started = Instant::now();
    while rows(dir, "SELECT * FROM totals") != expected {
        assert!(
            started.elapsed() < TIMEOUT,
            "totals never became {expected:?}; stderr: {}",
            serve.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A warehouse whose CONTINUOUS `totals` reads the monitored directory `in`, which holds
/// `1.csv` (every `v` 1).
fn continuous_totals() -> Dir {
    let dir = Dir::new();
    std::fs::create_dir_all(dir.path("in")).unwrap();
    drop_source_file(&dir, "1.csv", 1);
    sql(
        &dir,
        &format!(
            "CREATE TABLE src (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem',
               'path' = '{}', 'format' = 'csv', 'source.monitor-interval' = '20 ms');
             CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' SECOND
               REFRESH_MODE = CONTINUOUS AS {DEFINITION}",
            dir.path("in")
        ),
    );
    dir
}

/// A CONTINUOUS `totals` over a monitored directory: served, stopped, given a second file,
/// served again with the snapshot of that file paused at `stage` and killed there; readers see
/// the previous snapshot (the new one once its pointer is published), and a restart resumes
/// from the published snapshot's positions to the batch answer, without duplicates.
fn continuous_killed_at(stage: &str) {
    let dir = continuous_totals();
    let serve = Serve::start(&dir, &["-w", "2"], &[]);
    let line = serve.next_line_of("totals");
    assert!(
        line.starts_with("table=totals mode=CONTINUOUS rows=500 "),
        "{line}"
    );
    serve.stop();
    assert_eq!(rows(&dir, "SELECT * FROM totals"), content_over(&[1]));

    drop_source_file(&dir, "2.csv", 2);
    let pause = dir.path("pause");
    let hook = [(TEST_REFRESH_PAUSE, format!("{stage}={pause}"))];
    let mut serve = Serve::start(&dir, &["-w", "2"], &hook);
    wait_for_file(&pause, &serve);
    let published = stage == "published";
    let before = if published { vec![1, 2] } else { vec![1] };
    assert_eq!(
        rows(&dir, "SELECT * FROM totals"),
        content_over(&before),
        "{stage}"
    );
    serve.child.kill().unwrap();
    assert!(!serve.wait());
    std::fs::remove_file(&pause).unwrap();
    assert_eq!(
        rows(&dir, "SELECT * FROM totals"),
        content_over(&before),
        "{stage}"
    );

    let serve = Serve::start(&dir, &["-w", "2"], &[]);
    wait_for_totals(&dir, &content_over(&[1, 2]), &serve);
    serve.stop();
    let batch = rows(&dir, DEFINITION);
    assert_eq!(batch, content_over(&[1, 2]));
    assert!(
        listing(&dir).iter().all(|n| !n.starts_with('.')),
        "{:?}",
        listing(&dir)
    );
}

#[test]
fn a_continuous_table_killed_after_writing_its_data_files_resumes() {
    continuous_killed_at("written");
}

#[test]
fn a_continuous_table_killed_after_publishing_its_pointer_resumes() {
    continuous_killed_at("published");
}

/// One table's damaged manifest does not stop serve (issue 45): the warehouse opens, the other
/// table is refreshed, and the damaged one's refresh is reported with the file's name.
#[test]
fn a_damaged_table_does_not_stop_the_others() {
    let dir = Dir::new();
    seed(&dir, false);
    let clock = ManualClock::at("2024-01-01 00:10:00").unwrap();
    TableEnv::new()
        .with_clock(Arc::new(clock))
        .with_warehouse(dir.path("wh"))
        .unwrap()
        .execute_sql(&format!("CREATE MATERIALIZED TABLE broken FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS {DEFINITION}"))
        .unwrap();
    let manifest = dir.path("wh/data/broken/manifest-0.json");
    std::fs::write(&manifest, "{").unwrap();
    let serve = Serve::start(&dir, &["--clock-start", "2024-01-01 03:30:00"], &[]);
    let line = serve.next_line_of("totals");
    assert!(line.ends_with(" snapshot=1"), "{line}");
    let started = Instant::now();
    while !serve
        .stderr
        .lock()
        .unwrap()
        .contains(&format!("{manifest}: corrupted warehouse file"))
    {
        assert!(
            started.elapsed() < TIMEOUT,
            "stderr: {}",
            serve.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(serve);
    assert_eq!(rows(&dir, "SELECT * FROM totals"), content_of(2));
}

//! The warehouse: the seed page's flow (a FULL table partitioned by day over a CSV directory)
//! on a manual clock, a second environment reopening it, corrupted and missing files, crash
//! leftovers removed by the next change (never by a reader), and `dtemporal sql --warehouse`
//! processes sharing one warehouse.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use differential_temporal::materialized::ManualClock;
use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::table::TableEnv;
use differential_temporal::warehouse::{RefreshTrigger, Warehouse};

use super::{message, rows, text};

const HEADER: &str = "order_id,user_id,amount,order_time\n";

/// Orders of three days in a directory, a warehouse, and a FULL table of each day's totals
/// per user, partitioned by day (`ds`) and refreshed daily (freshness 1 day).
fn seed(dir: &Dir, clock: &ManualClock) -> TableEnv {
    std::fs::create_dir_all(dir.path("orders")).unwrap();
    dir.write(
        "orders/part-1.csv",
        &format!("{HEADER}1,alice,10,2024-01-01 09:00:00\n2,bob,5,2024-01-01 18:30:00\n3,alice,7,2024-01-02 08:00:00\n4,carol,3,2024-01-03 12:00:00\n"),
    );
    let env = TableEnv::new()
        .with_clock(Arc::new(clock.clone()))
        .with_warehouse(dir.path("wh"))
        .unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE orders (order_id BIGINT, user_id STRING, amount BIGINT, order_time TIMESTAMP(3))
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE MATERIALIZED TABLE daily_totals
           PARTITIONED BY (ds)
           WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
           FRESHNESS = INTERVAL '1' DAY
           AS SELECT ds, user_id, SUM(amount) AS total, COUNT(*) AS orders
              FROM (SELECT DATE_FORMAT(order_time, 'yyyy-MM-dd') AS ds, user_id, amount FROM orders) AS o
              GROUP BY ds, user_id;",
        dir.path("orders")
    ))
    .unwrap();
    env
}

const DAY_MS: i64 = 86_400_000;

/// The names in `dir`, sorted.
fn listing(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `scripts` at once, each in its own `dtemporal sql --warehouse` process, and waits for
/// all of them to succeed.
fn run_processes(warehouse: &str, scripts: &[String]) {
    let children: Vec<_> = scripts
        .iter()
        .map(|script| {
            Command::new(env!("CARGO_BIN_EXE_dtemporal"))
                .args(["sql", "--warehouse", warehouse, "-e", script])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn seed_flow_on_a_manual_clock() {
    let dir = Dir::new();
    let clock = ManualClock::at("2024-01-01 10:00:00").unwrap();
    let env = seed(&dir, &clock);
    let all = "SELECT * FROM daily_totals";
    assert!(env.run_scheduled_refreshes().unwrap().is_empty());
    assert_eq!(rows(&env, all), Vec::<String>::new());

    // Past two periods: the refreshes at 2024-01-02 00:00 and 2024-01-03 00:00 write the days
    // that ended then (schedule time - freshness), each its own partition.
    clock.advance_ms(2 * DAY_MS);
    let done = env.run_scheduled_refreshes().unwrap();
    let summary: Vec<(String, Option<String>, Vec<(String, String)>, u64)> = done
        .iter()
        .map(|(t, r)| {
            (
                t.clone(),
                r.schedule_time.clone(),
                r.partition.clone(),
                r.rows,
            )
        })
        .collect();
    let ds = |d: &str| vec![("ds".to_string(), d.to_string())];
    assert_eq!(
        summary,
        [
            (
                "daily_totals".to_string(),
                Some("2024-01-02 00:00:00".to_string()),
                ds("2024-01-01"),
                2
            ),
            (
                "daily_totals".to_string(),
                Some("2024-01-03 00:00:00".to_string()),
                ds("2024-01-02"),
                1
            ),
        ]
    );
    assert_eq!(
        rows(&env, &format!("{all} WHERE ds = '2024-01-01'")),
        ["2024-01-01,alice,10,1", "2024-01-01,bob,5,1"]
    );
    assert_eq!(
        rows(&env, &format!("{all} WHERE ds = '2024-01-02'")),
        ["2024-01-02,alice,7,1"]
    );
    assert_eq!(rows(&env, all).len(), 3, "2024-01-03 is not over yet");
    assert!(
        env.run_scheduled_refreshes().unwrap().is_empty(),
        "nothing is due twice"
    );

    // Late files for the first day, and a manual refresh of that partition only.
    dir.write(
        "orders/part-2.csv",
        &format!("{HEADER}5,bob,20,2024-01-01 23:59:59\n6,dave,1,2024-01-02 00:00:00\n"),
    );
    assert_eq!(
        text(
            &env,
            "ALTER MATERIALIZED TABLE daily_totals REFRESH PARTITION (ds = '2024-01-01')"
        ),
        "refreshed `default_catalog`.`default_database`.`daily_totals`: 2 row(s), snapshot 3\n"
    );
    assert_eq!(
        rows(&env, all),
        [
            "2024-01-01,alice,10,1",
            "2024-01-01,bob,25,2",
            "2024-01-02,alice,7,1"
        ],
        "2024-01-02 keeps its snapshot (dave's order is not in it until it is refreshed)"
    );

    // Suspended, the table misses the refresh of 2024-01-04 00:00; resumed, it catches up.
    env.execute_sql("ALTER MATERIALIZED TABLE daily_totals SUSPEND")
        .unwrap();
    clock.advance_ms(DAY_MS);
    assert!(env.run_scheduled_refreshes().unwrap().is_empty());
    env.execute_sql("ALTER MATERIALIZED TABLE daily_totals RESUME")
        .unwrap();
    let done = env.run_scheduled_refreshes().unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].1.partition, ds("2024-01-03"));
    assert_eq!(
        rows(&env, all),
        [
            "2024-01-01,alice,10,1",
            "2024-01-01,bob,25,2",
            "2024-01-02,alice,7,1",
            "2024-01-03,carol,3,1"
        ]
    );

    // A new environment (as a new process would) sees the table, its data and its history.
    let reopened = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    assert_eq!(rows(&reopened, all), rows(&env, all));
    let catalog = Warehouse::open(dir.path("wh")).unwrap().catalog().unwrap();
    let history: Vec<(RefreshTrigger, u64)> = catalog.materialized["daily_totals"]
        .history
        .iter()
        .map(|r| (r.trigger, r.snapshot_id))
        .collect();
    assert_eq!(
        history,
        [
            (RefreshTrigger::Periodic, 1),
            (RefreshTrigger::Periodic, 2),
            (RefreshTrigger::Manual, 3),
            (RefreshTrigger::Periodic, 4)
        ]
    );
    // Only the current snapshot and the one before it are kept.
    assert_eq!(
        listing(&dir.path("wh/data/daily_totals")),
        [
            "CURRENT",
            "manifest-3.json",
            "manifest-4.json",
            "snap-3",
            "snap-4"
        ]
    );

    env.execute_sql("DROP MATERIALIZED TABLE daily_totals")
        .unwrap();
    assert_eq!(text(&reopened, "SHOW MATERIALIZED TABLES"), "");
    assert!(!Path::new(&dir.path("wh/data/daily_totals")).exists());
}

#[test]
fn definitions_are_recorded_and_replayed() {
    let dir = Dir::new();
    let clock = ManualClock::at("2024-01-01 10:00:00").unwrap();
    let env = seed(&dir, &clock);
    env.execute_sql("CREATE VIEW big AS SELECT * FROM orders WHERE amount > 6")
        .unwrap();
    let err = env
        .execute_sql("CREATE VIEW big AS SELECT * FROM orders")
        .unwrap_err();
    assert_eq!(
        message(err),
        format!(
            "'big' is already defined in the warehouse catalog {}",
            dir.path("wh/catalog.json")
        )
    );
    let reopened = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    assert_eq!(rows(&reopened, "SELECT order_id FROM big"), ["1", "3"]);
    assert_eq!(
        text(&reopened, "SHOW MATERIALIZED TABLES"),
        "daily_totals\n"
    );
}

/// A schedule read before the table was refreshed elsewhere, suspended or dropped: running it
/// does nothing and says so (`None`), as a scheduler that read the catalog before another
/// process changed it must not refresh or fail.
#[test]
fn a_periodic_refresh_no_longer_due_does_nothing() {
    let dir = Dir::new();
    let clock = ManualClock::at("2024-01-01 10:00:00").unwrap();
    let env = seed(&dir, &clock);
    clock.advance_ms(DAY_MS);
    let schedule = env.refresh_schedule().unwrap();
    let due = 1_704_153_600_000; // 2024-01-02 00:00:00
    assert_eq!(schedule.due, [("daily_totals".to_string(), due)]);

    let other = TableEnv::new()
        .with_clock(Arc::new(clock.clone()))
        .with_warehouse(dir.path("wh"))
        .unwrap();
    let ran = other.run_periodic_refresh("daily_totals", due).unwrap();
    assert_eq!(ran.map(|r| (r.snapshot_id, r.rows)), Some((1, 2)));
    assert!(env
        .run_periodic_refresh("daily_totals", due)
        .unwrap()
        .is_none());

    clock.advance_ms(DAY_MS);
    let next = due + DAY_MS;
    assert_eq!(
        env.refresh_schedule().unwrap().due,
        [("daily_totals".to_string(), next)]
    );
    env.execute_sql("ALTER MATERIALIZED TABLE daily_totals SUSPEND")
        .unwrap();
    assert!(env
        .run_periodic_refresh("daily_totals", next)
        .unwrap()
        .is_none());
    env.execute_sql("ALTER MATERIALIZED TABLE daily_totals RESUME")
        .unwrap();
    env.execute_sql("DROP MATERIALIZED TABLE daily_totals")
        .unwrap();
    assert!(env
        .run_periodic_refresh("daily_totals", next)
        .unwrap()
        .is_none());
    assert!(!Path::new(&dir.path("wh/data/daily_totals")).exists());
}

/// The error of reading `daily_totals` after `damage` is done to the warehouse.
fn after(damage: impl FnOnce(&Dir)) -> String {
    let dir = Dir::new();
    let clock = ManualClock::at("2024-01-01 10:00:00").unwrap();
    let env = seed(&dir, &clock);
    damage(&dir);
    match TableEnv::new().with_warehouse(dir.path("wh")) {
        Err(e) => e.to_string().replace(&dir.path(""), "DIR/"),
        Ok(reopened) => {
            let first = env
                .execute_sql("SELECT * FROM daily_totals")
                .unwrap_err()
                .to_string();
            let second = reopened
                .execute_sql("SELECT * FROM daily_totals")
                .unwrap_err()
                .to_string();
            assert_eq!(first, second);
            first.replace(&dir.path(""), "DIR/")
        }
    }
}

#[test]
fn corrupted_or_missing_files_are_named() {
    let table = |d: &Dir, f: &str| d.path(&format!("wh/data/daily_totals/{f}"));
    assert_eq!(
        after(|d| std::fs::remove_file(table(d, "CURRENT")).unwrap()),
        "DIR/wh/data/daily_totals/CURRENT: No such file or directory (os error 2)"
    );
    assert_eq!(
        after(|d| std::fs::write(table(d, "CURRENT"), "garbage").unwrap()),
        "DIR/wh/data/daily_totals/CURRENT: corrupted warehouse file: the pointer file names no manifest (it holds \"garbage\")"
    );
    assert_eq!(
        after(|d| std::fs::write(table(d, "manifest-0.json"), "{\"snapshot_id\": 0").unwrap()),
        "DIR/wh/data/daily_totals/manifest-0.json: corrupted warehouse file: not a snapshot manifest: EOF while parsing an object at line 1 column 17"
    );
    assert_eq!(
        after(|d| std::fs::remove_file(table(d, "manifest-0.json")).unwrap()),
        "DIR/wh/data/daily_totals/manifest-0.json: No such file or directory (os error 2)"
    );
    assert_eq!(
        after(|d| std::fs::remove_file(table(d, "snap-0/part-0.csv")).unwrap()),
        "DIR/wh/data/daily_totals/snap-0/part-0.csv: corrupted warehouse file: data file named by DIR/wh/data/daily_totals/manifest-0.json is missing"
    );
    assert_eq!(
        after(|d| std::fs::write(d.path("wh/catalog.json"), "[]").unwrap()),
        "DIR/wh/catalog.json: corrupted warehouse file: invalid length 0, expected struct Catalog with 3 elements at line 1 column 2"
    );
    assert_eq!(
        after(|d| std::fs::remove_file(d.path("wh/catalog.json")).unwrap()),
        "DIR/wh/catalog.json: corrupted warehouse file: the catalog file is missing, but the warehouse holds materialized tables' data"
    );
}

#[test]
fn leftovers_of_an_interrupted_refresh_are_removed_by_the_next_change() {
    let dir = Dir::new();
    let clock = ManualClock::at("2024-01-01 10:00:00").unwrap();
    let env = seed(&dir, &clock);
    // What a process killed mid-refresh leaves: a half-written snapshot, a temporary manifest,
    // a snapshot renamed into place whose manifest was never published; and a table
    // directory the catalog does not name, which is not the warehouse's to remove (issue 45).
    std::fs::create_dir_all(dir.path("wh/data/daily_totals/.snap-1.tmp")).unwrap();
    dir.write(
        "wh/data/daily_totals/.snap-1.tmp/part-0.csv",
        "ds,user_id\n2024",
    );
    dir.write("wh/data/daily_totals/.manifest-1.json.tmp-99", "{");
    std::fs::create_dir_all(dir.path("wh/data/daily_totals/snap-1")).unwrap();
    std::fs::create_dir_all(dir.path("wh/data/dropped_table/snap-0")).unwrap();
    // A reader leaves them (issue 45); the next change, under the lock, removes them.
    let left = [
        ".manifest-1.json.tmp-99",
        ".snap-1.tmp",
        "CURRENT",
        "manifest-0.json",
        "snap-0",
        "snap-1",
    ];
    let reopened = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    assert_eq!(
        rows(&reopened, "SELECT * FROM daily_totals"),
        Vec::<String>::new()
    );
    assert_eq!(listing(&dir.path("wh/data/daily_totals")), left);
    reopened
        .execute_sql("CREATE VIEW v AS SELECT order_id FROM orders")
        .unwrap();
    assert_eq!(
        listing(&dir.path("wh/data/daily_totals")),
        ["CURRENT", "manifest-0.json", "snap-0"]
    );
    assert!(Path::new(&dir.path("wh/data/dropped_table/snap-0")).is_dir());
    // The next refresh takes the id the interrupted one had.
    clock.advance_ms(DAY_MS);
    assert_eq!(env.run_scheduled_refreshes().unwrap()[0].1.snapshot_id, 1);
}

#[test]
fn processes_on_one_warehouse_lose_no_catalog_update() {
    let dir = Dir::new();
    let source = dir.write("s.csv", "a\n1\n");
    TableEnv::new()
        .with_warehouse(dir.path("wh"))
        .unwrap()
        .execute_sql(&format!("CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = '{source}', 'format' = 'csv')"))
        .unwrap();
    let scripts: Vec<String> = (0..4)
        .map(|p| {
            (0..5)
                .map(|v| format!("CREATE VIEW v_{p}_{v} AS SELECT a FROM s;"))
                .collect()
        })
        .collect();
    run_processes(&dir.path("wh"), &scripts);
    let catalog = Warehouse::open(dir.path("wh")).unwrap().catalog().unwrap();
    let mut names: Vec<String> = catalog.statements.iter().map(|s| s.name.clone()).collect();
    names.sort();
    let mut expected: Vec<String> = (0..4)
        .flat_map(|p| (0..5).map(move |v| format!("v_{p}_{v}")))
        .collect();
    expected.push("s".to_string());
    expected.sort();
    assert_eq!(names, expected);
}

#[test]
fn a_failed_publish_leaves_the_previous_snapshot_and_the_next_refresh_succeeds() {
    let dir = Dir::new();
    let clock = ManualClock::at("2024-01-01 10:00:00").unwrap();
    let env = seed(&dir, &clock);
    // A snapshot directory of the next id, renamed into place by a refresh whose manifest and
    // pointer were never written (this process went on; no reopen cleaned it).
    std::fs::create_dir_all(dir.path("wh/data/daily_totals/snap-1")).unwrap();
    dir.write(
        "wh/data/daily_totals/snap-1/part-0.csv",
        "ds,user_id,total,orders\nbad,bad,1,1\n",
    );
    assert_eq!(
        rows(&env, "SELECT * FROM daily_totals"),
        Vec::<String>::new()
    );
    clock.advance_ms(DAY_MS);
    assert_eq!(env.run_scheduled_refreshes().unwrap()[0].1.snapshot_id, 1);
    assert_eq!(
        rows(&env, "SELECT * FROM daily_totals"),
        ["2024-01-01,alice,10,1", "2024-01-01,bob,5,1"]
    );
}

#[test]
fn processes_refreshing_one_table_publish_one_snapshot_at_a_time() {
    let dir = Dir::new();
    let clock = ManualClock::at("2024-01-01 10:00:00").unwrap();
    let env = seed(&dir, &clock);
    let script = "ALTER MATERIALIZED TABLE daily_totals REFRESH;".repeat(3);
    run_processes(&dir.path("wh"), &[script.clone(), script]);
    let catalog = Warehouse::open(dir.path("wh")).unwrap().catalog().unwrap();
    let ids: Vec<u64> = catalog.materialized["daily_totals"]
        .history
        .iter()
        .map(|r| r.snapshot_id)
        .collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        rows(&env, "SELECT * FROM daily_totals"),
        [
            "2024-01-01,alice,10,1",
            "2024-01-01,bob,5,1",
            "2024-01-02,alice,7,1",
            "2024-01-03,carol,3,1"
        ]
    );
}

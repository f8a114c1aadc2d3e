//! `dtemporal sql` running a query over a live postgres-cdc table: a temporal join of a file of
//! orders against rates changed in transactions while the query runs writes, round by round,
//! a changelog whose accumulated table equals after each transaction the same join over a
//! changelog file of the changes so far; interrupted, it ends cleanly and its temporary slot is
//! gone.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::continuous::{fresh_rates, join_over_file, tables, JOIN};
use super::{server, setup, with_options};

/// A changelog's lines accumulated into a table.
#[derive(Default)]
struct Accumulated(BTreeMap<String, i64>);

impl Accumulated {
    fn apply(&mut self, line: &str) {
        let (op, row) = line.split_once(',').expect("op,row");
        let sign = match op {
            "+I" | "+U" => 1,
            "-U" | "-D" => -1,
            other => panic!("not a row kind: {other} in {line:?}"),
        };
        *self.0.entry(row.to_string()).or_default() += sign;
        self.0.retain(|_, n| *n != 0);
    }

    fn rows(&self) -> Vec<String> {
        assert!(self.0.values().all(|n| *n == 1), "{:?}", self.0);
        self.0.keys().cloned().collect()
    }
}

/// Reads `lines` into `table` until it holds `expected`, failing after a minute.
fn wait_until(lines: &mpsc::Receiver<String>, table: &mut Accumulated, expected: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while table.rows() != expected {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => table.apply(&line),
            Err(e) => panic!("{e}: the output holds {:?}, not {expected:?}", table.rows()),
        }
    }
}

#[test]
fn a_live_query_follows_rates_changed_in_transactions() {
    let Some(line) = server() else { return };
    let name = "pgcdc_live_query";
    fresh_rates(&line, name);
    let with = format!(
        "{}, 'table-name' = '{name}', 'slot.name' = '{name}'",
        with_options(&line)
    );
    let script = format!("{} {JOIN};", tables(&with));
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(["-w", "2", "sql", "-e", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut stdout = BufReader::new(stdout).lines();
        let header = stdout.next().unwrap().unwrap();
        assert_eq!(header, "op,order_time,amount,currency,rate");
        for line in stdout {
            let _ = send.send(line.unwrap());
        }
    });
    let mut table = Accumulated::default();
    // The snapshot's round, then each transaction's, equal to the join over the file so far.
    wait_until(&lines, &mut table, &join_over_file(1));
    setup(
        &line,
        &format!("UPDATE {name} SET rate = 119, update_time = '2024-01-01 10:00:00' WHERE currency = 'Euro'"),
    );
    wait_until(&lines, &mut table, &join_over_file(2));
    setup(
        &line,
        &format!(
            "BEGIN; INSERT INTO {name} VALUES ('US Dollar', 2, '2024-01-01 10:00:00');
             DELETE FROM {name} WHERE currency = 'Yen'; COMMIT;"
        ),
    );
    wait_until(&lines, &mut table, &join_over_file(3));
    assert_eq!(
        table.rows(),
        [
            "2024-01-01 10:15:00.000,2,Euro,119",
            "2024-01-01 10:30:00.000,1,US Dollar,2",
            "2024-01-01 10:52:00.000,3,Euro,119",
            "2024-01-01 11:04:00.000,5,US Dollar,2",
        ]
    );
    // Interrupted (Ctrl-C): it ends cleanly, and its slot was temporary.
    // SAFETY: a plain kill(2) of the child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(lines.try_recv().is_err(), "nothing after the last change");
    let mut client = postgres::Client::connect(&line, postgres::NoTls).unwrap();
    let slots = client
        .query(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1",
            &[&name],
        )
        .unwrap();
    assert!(slots.is_empty(), "the temporary slot outlived the query");
}

/// A live query reads a `'snapshot'` table once, in its first round, and a streaming one's
/// changes as they come (`TableEnv::run_live_query`): the union of the two declarations of
/// one table counts its rows twice, then the inserted row once.
#[test]
fn a_live_query_reads_a_snapshot_mode_table_once() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(line) = server() else { return };
    let name = "pgcdc_live_once";
    super::fresh_table(&line, name, "id integer PRIMARY KEY", true);
    setup(&line, &format!("INSERT INTO {name} VALUES (1), (2);"));
    let env = differential_temporal::table::TableEnv::new();
    let base = format!("{}, 'table-name' = '{name}'", with_options(&line));
    env.execute_sql(&format!(
        "CREATE TABLE snap (id INT) WITH ({base}, 'scan.startup.mode' = 'snapshot');
         CREATE TABLE live (id INT) WITH ({base}, 'slot.name' = '{name}');"
    ))
    .unwrap();
    let sql = "SELECT COUNT(*) AS n FROM (SELECT id FROM snap UNION ALL SELECT id FROM live)";
    assert!(env.reads_unbounded(sql).unwrap());
    let stop = AtomicBool::new(false);
    let mut counts = Vec::new();
    std::thread::scope(|scope| {
        // Rounds come a second apart: four seconds see the insert's round and two more.
        scope.spawn(|| {
            std::thread::sleep(Duration::from_secs(4));
            stop.store(true, Ordering::SeqCst);
        });
        env.run_live_query(sql, &stop, |_, round| {
            if round.round == 0 {
                setup(&line, &format!("INSERT INTO {name} VALUES (3);"));
            }
            for (_, change) in &round.changes {
                counts.push(format!("{} {:?}", change.kind, change.row.get(0).unwrap()));
            }
            Ok(())
        })
        .unwrap();
    });
    assert_eq!(counts, ["+I Int(4)", "-U Int(4)", "+U Int(5)"]);
}

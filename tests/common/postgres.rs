//! The PostgreSQL server of the postgres-cdc tests and the helpers that set up its tables.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The PostgreSQL server of the postgres-cdc tests: its connection line, or `None` (with a
/// message on standard error) when there is none to test against.
///
/// The server is the one `DTEMPORAL_POSTGRES` names (CI starts one with
/// `scripts/postgres.sh start DIR`); without it, one this test process starts itself where the
/// server's binaries are installed (`scripts/postgres.sh installed`), on a free port in a
/// directory under the temporary directory, stopped and removed when the process exits. A
/// server that is installed but does not start fails the test; one that is not installed skips
/// it with the line that installs it, unless `DTEMPORAL_REQUIRE_POSTGRES` is set (then it fails).
pub fn postgres_server() -> Option<String> {
    if let Ok(line) = std::env::var("DTEMPORAL_POSTGRES") {
        return Some(line);
    }
    static STARTED: OnceLock<Option<String>> = OnceLock::new();
    let started = STARTED
        .get_or_init(|| installed().then(start_own_server))
        .clone();
    if started.is_none() {
        assert!(
            std::env::var_os("DTEMPORAL_REQUIRE_POSTGRES").is_none(),
            "DTEMPORAL_REQUIRE_POSTGRES is set but there is no PostgreSQL server: set DTEMPORAL_POSTGRES or install the server ({INSTALL})"
        );
        // Straight to the process's standard error: the harness shows a passing test's
        // `eprintln!` only with --nocapture, and a skip must be seen.
        let _ = std::io::stderr().write_all(
            format!("SKIPPED: the PostgreSQL server is not installed (install it: {INSTALL}; or set DTEMPORAL_POSTGRES to a server's connection line)\n").as_bytes(),
        );
    }
    started
}

/// The line that installs the PostgreSQL server (Debian's package, as `scripts/postgres.sh` uses).
const INSTALL: &str = "`sudo apt-get install postgresql`";

/// The name the servers this crate's tests start have under the temporary directory, before
/// the process id.
const SERVER_DIR: &str = "dtemporal-test-pg-";

fn script() -> String {
    format!("{}/scripts/postgres.sh", env!("CARGO_MANIFEST_DIR"))
}

/// Whether the PostgreSQL server's binaries are installed.
fn installed() -> bool {
    Command::new(script())
        .arg("installed")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Starts a server of this process's own (stopped at exit) and returns its connection line;
/// first stops and removes those that test processes no longer running left (killed ones).
fn start_own_server() -> String {
    stop_orphans();
    let dir = std::env::temp_dir().join(format!("{SERVER_DIR}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let run = Command::new(script())
        .arg("start")
        .arg(&dir)
        .env("PGTEST_PORT", port.to_string())
        .output()
        .expect("scripts/postgres.sh runs");
    assert!(
        run.status.success(),
        "the PostgreSQL server is installed but did not start (scripts/postgres.sh start {}): {}",
        dir.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    OWN_SERVER.set(dir).expect("started once");
    // SAFETY: `stop_own_server` is a plain function with no arguments, as `atexit` takes.
    unsafe { libc::atexit(stop_own_server) };
    String::from_utf8(run.stdout)
        .expect("a UTF-8 line")
        .trim()
        .to_string()
}

/// The directory of the server this process started.
static OWN_SERVER: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn stop_own_server() {
    if let Some(dir) = OWN_SERVER.get() {
        stop(dir);
    }
}

/// Stops the server in `dir` and removes the directory.
fn stop(dir: &Path) {
    let _ = Command::new(script())
        .arg("stop")
        .arg(dir)
        .stderr(Stdio::null())
        .status();
    let _ = std::fs::remove_dir_all(dir);
}

/// Stops and removes the servers of test processes that are gone (killed before their exit).
fn stop_orphans() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix(SERVER_DIR));
        let Some(pid) = pid.and_then(|p| p.parse::<libc::pid_t>().ok()) else {
            continue;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            stop(&entry.path());
        }
    }
}

/// The value of `key` in the connection line `line` (`key=value` pairs).
pub fn postgres_value(line: &str, key: &str) -> String {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
        .to_string()
}

/// The `WITH` options reaching the server of `line`, without the table.
pub fn postgres_with_options(line: &str) -> String {
    format!(
        "'connector' = 'postgres-cdc', 'hostname' = '{}', 'port' = '{}', 'username' = '{}', 'password' = '{}', 'database-name' = '{}'",
        postgres_value(line, "host"),
        postgres_value(line, "port"),
        postgres_value(line, "user"),
        postgres_value(line, "password"),
        postgres_value(line, "dbname")
    )
}

/// Runs `sql` on the server of `line` (the tests' setup).
pub fn postgres_setup(line: &str, sql: &str) {
    let mut client =
        postgres::Client::connect(line, postgres::NoTls).expect("connect to the test server");
    client.batch_execute(sql).expect("the setup statements");
}

/// Creates the table `name` as `columns` declare it (`REPLICA IDENTITY FULL` when `full`)
/// on the server of `line`, with no replication slot or publication of that name left from
/// an earlier run (the postgres-cdc tests name their slots after their tables).
pub fn postgres_fresh_table(line: &str, name: &str, columns: &str, full: bool) {
    let identity = if full { "FULL" } else { "DEFAULT" };
    postgres_setup(
        line,
        &format!(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{name}';
             DROP PUBLICATION IF EXISTS {name};
             DROP TABLE IF EXISTS {name};
             CREATE TABLE {name} ({columns});
             ALTER TABLE {name} REPLICA IDENTITY {identity};"
        ),
    );
}

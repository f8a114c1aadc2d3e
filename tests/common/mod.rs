//! Running the built `dtemporal` binary on the fixtures in `tests/data/`, alone or as a cluster of
//! processes on 127.0.0.1.
// Each test binary uses a part of these helpers.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fmt::Debug;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod postgres;
// Each test binary uses a part of these helpers (as of the ones above).
#[allow(unused_imports)]
pub use postgres::*;

/// The path of a fixture file.
pub fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The path of a file of the shipped data sets (`data/` in the repository).
pub fn shipped(name: &str) -> String {
    format!("{}/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Writes `text` to the file `name` in `dir` and returns its path.
pub fn fixture(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the fixture is written");
    path.to_str().expect("a UTF-8 path").to_string()
}

/// Writes a join's probe side `probe` and build side `build` (CSV text) into `dir` as `o.csv`
/// and `r.csv`, and runs `dtemporal COMMAND --probe o.csv --build r.csv ARGS..` (`COMMAND`
/// `temporal-join` or `lookup-join`).
pub fn join_run(dir: &Path, command: &str, (probe, build): (&str, &str), args: &[&str]) -> Run {
    let probe = fixture(dir, "o.csv", probe);
    let build = fixture(dir, "r.csv", build);
    let head = [command, "--probe", &probe, "--build", &build];
    dtemporal(&[&head[..], args].concat())
}

/// The arguments of a one-input command: `COMMAND --input tests/data/FILE ARGS...`.
pub fn on_input(command: &str, file: &str, args: &[&str]) -> Vec<String> {
    let head = [command.to_string(), "--input".to_string(), data(file)];
    head.into_iter()
        .chain(args.iter().map(|a| a.to_string()))
        .collect()
}

/// The arguments of a command over the products changelog of case A01 (or a variant of it):
/// `COMMAND --input tests/data/FILE --key product_id --time update_time ARGS...`.
pub fn on_products(command: &str, file: &str, args: &[&str]) -> Vec<String> {
    let key_time = ["--key", "product_id", "--time", "update_time"];
    on_input(command, file, &[&key_time[..], args].concat())
}

/// What a run of the binary gave.
#[derive(Debug, PartialEq, Eq)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().expect("exited normally"),
            stdout: String::from_utf8(out.stdout).expect("UTF-8 output"),
            stderr: String::from_utf8(out.stderr).expect("UTF-8 errors"),
        }
    }
}

/// Runs `dtemporal` with `args`.
pub fn dtemporal<A: AsRef<OsStr>>(args: &[A]) -> Run {
    Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(args)
        .output()
        .expect("the binary runs")
        .into()
}

/// Runs `dtemporal`, expects exit code 0 and nothing on standard error, returns the output.
pub fn output_of<A: AsRef<OsStr> + Debug>(args: &[A]) -> String {
    let run = dtemporal(args);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (0, ""),
        "dtemporal {args:?}"
    );
    run.stdout
}

/// Runs `args` alone and then with each of `variants` appended (e.g. `["-w", "2",
/// "--epoch-bytes", "1"]`), asserts that every run writes the same bytes, and returns them.
pub fn same_output<A: AsRef<str> + Debug>(args: &[A], variants: &[&[&str]]) -> String {
    let base: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let one = output_of(&base[..]);
    for variant in variants {
        let with = [&base[..], variant].concat();
        assert_eq!(output_of(&with), one, "with {variant:?}");
    }
    one
}

/// How long a cluster run may take before its processes are killed.
const CLUSTER_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `args` as `processes` `dtemporal` processes of `workers` threads each, connected over
/// 127.0.0.1 (timely's `-n -p -h`, free ports chosen here), with `--output` into a temporary
/// directory. Asserts that every process exits 0 with nothing on standard error and that only
/// process 0 (which hosts worker 0) writes the output; returns the output.
pub fn cluster_output(processes: usize, workers: usize, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let hostfile = fixture(dir.path(), "hosts.txt", &free_ports(processes));
    let outputs: Vec<_> = (0..processes)
        .map(|p| dir.path().join(format!("out{p}.csv")))
        .collect();
    let children: Vec<Child> = outputs
        .iter()
        .enumerate()
        .map(|(p, output)| {
            Command::new(env!("CARGO_BIN_EXE_dtemporal"))
                .args([
                    "-n",
                    processes.to_string().as_str(),
                    "-p",
                    p.to_string().as_str(),
                ])
                .args(["-h", hostfile.as_str(), "-w", workers.to_string().as_str()])
                .args(args)
                .arg("--output")
                .arg(output)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the binary starts")
        })
        .collect();
    let started = Instant::now();
    let mut children: Vec<Option<Child>> = children.into_iter().map(Some).collect();
    while children.iter().flatten().count() > 0 {
        for slot in children.iter_mut() {
            let done = slot
                .as_mut()
                .is_some_and(|c| c.try_wait().unwrap().is_some());
            if done {
                let run = Run::from(slot.take().unwrap().wait_with_output().unwrap());
                assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
            }
        }
        if started.elapsed() > CLUSTER_TIMEOUT {
            for child in children.iter_mut().flatten() {
                let _ = child.kill();
            }
            panic!("the cluster run did not end within {CLUSTER_TIMEOUT:?}: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        outputs[1..].iter().all(|o| !o.exists()),
        "only process 0 writes"
    );
    std::fs::read_to_string(&outputs[0]).expect("process 0 wrote the output")
}

/// A hostfile's text: `n` lines `127.0.0.1:PORT` with ports that were free a moment ago (bound,
/// then released for timely to bind).
pub fn free_ports(n: usize) -> String {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    listeners
        .iter()
        .map(|l| format!("127.0.0.1:{}\n", l.local_addr().unwrap().port()))
        .collect()
}

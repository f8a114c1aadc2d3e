//! Running the built `dtemporal` binary on the fixtures in `tests/data/`.
// Each test binary uses a part of these helpers.
#![allow(dead_code)]

use std::process::Command;

/// The path of a fixture file.
pub fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
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

/// Runs `dtemporal` with `args`.
pub fn dtemporal(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(args)
        .output()
        .expect("the binary runs");
    Run {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 errors"),
    }
}

/// Runs `dtemporal`, expects exit code 0 and nothing on standard error, returns the output.
pub fn output_of(args: &[&str]) -> String {
    let run = dtemporal(args);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (0, ""),
        "dtemporal {args:?}"
    );
    run.stdout
}

//! A test aid, not a feature: crash tests (`tests/materialized_serve.rs`) kill a process at a
//! known point of publishing a snapshot instead of guessing one by timing. With
//! `DTEMPORAL_TEST_REFRESH_PAUSE=<stage>=<file>` in its environment, a process reaching
//! `stage` creates `<file>` and waits while it exists; the test kills it there, or removes the
//! file to let it go on. Unset (always, outside tests) it costs one environment lookup per
//! stage of a publish, never per row.

use std::path::Path;
use std::time::Duration;

/// The environment variable.
pub const TEST_REFRESH_PAUSE: &str = "DTEMPORAL_TEST_REFRESH_PAUSE";

/// The stages of [`SnapshotWriter::publish`](super::SnapshotWriter::publish) where a test may
/// pause a refresh, in order: the data files are written under the temporary directory; the
/// directory is renamed into place; the manifest is written; the pointer names it (the
/// snapshot is published, the catalog's refresh record not yet written).
pub const PAUSE_STAGES: [&str; 4] = ["written", "renamed", "manifest", "published"];

/// Pauses here if the environment asks for `stage` (see the module doc).
pub(super) fn pause_point(stage: &str) {
    let Some(wanted) = std::env::var_os(TEST_REFRESH_PAUSE) else {
        return;
    };
    let wanted = wanted.to_string_lossy();
    let Some(file) = wanted
        .strip_prefix(stage)
        .and_then(|rest| rest.strip_prefix('='))
    else {
        return;
    };
    let file = Path::new(file);
    if let Err(e) = std::fs::write(file, stage) {
        eprintln!("dtemporal: {TEST_REFRESH_PAUSE}: {}: {e}", file.display());
        return;
    }
    while file.exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
}

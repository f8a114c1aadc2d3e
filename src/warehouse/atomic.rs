//! Atomic file replacement: write a temporary file beside the target, fsync it, rename it over
//! the target, fsync the directory. A reader sees the old file or the new one, never a part;
//! after a crash the temporary file (a name starting with `.`) is left for recovery to remove.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use super::{io_at, Error};

/// Replaces `path` with `bytes` atomically (see the module docs).
///
/// Errors: the temporary file cannot be written or synced, or the rename fails; the error names
/// the file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let io = io_at(&temp);
    let mut file = File::create(&temp).map_err(&io)?;
    file.write_all(bytes).map_err(&io)?;
    file.sync_all().map_err(&io)?;
    drop(file);
    fs::rename(&temp, path).map_err(io_at(path))?;
    sync_dir(dir)
}

/// Fsyncs the directory `dir`, so that a rename or creation in it is durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

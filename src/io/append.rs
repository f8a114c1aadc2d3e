//! Where `INSERT INTO` writes a filesystem table's new rows: **appended**, never replacing
//! what the table holds (Flink's `INSERT INTO`; only `INSERT OVERWRITE` replaces).
//!
//! The rows are first written whole to a hidden file (`.insert-<pid>-<n>.inprogress`, which
//! table readers skip as they skip every name starting with `.`) beside the table's data, then:
//! - a table over a **directory** gets them as a new part file of a name the engine chooses,
//!   `part-<nanoseconds since the epoch>-<pid>-<n>.<csv|json>` (as Flink's filesystem sink
//!   writes part files; the names sort in the order they were written), by a rename;
//! - a table over a **file** that holds rows gets them at its end: its header must be the one
//!   the rows are written with (the same columns, and `op` when the rows are a changelog),
//!   and the new rows follow without a header of their own;
//! - a path that does not exist yet (or an empty file) becomes the written file, by a rename.
//!
//! No user string becomes a path here: the part file's name is the engine's.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::csv::{read_header, Splitter};
use crate::error::Error;

/// Part files and in-progress files made by this process so far.
static WRITTEN: AtomicU64 = AtomicU64::new(0);

/// Appends what `write` writes (to the path it is given) to the table at `path`, as the module
/// docs say; `csv`: whether it is CSV with a header (else lines of JSON). Returns the file
/// that received the rows.
///
/// Errors: `write`'s; the file or directory cannot be written; a file whose header is not the
/// written rows' (the message names the file and both headers). The table is left as it was
/// on every error.
pub(crate) fn append(
    path: &str,
    csv: bool,
    write: impl FnOnce(&str) -> Result<(), Error>,
) -> Result<String, Error> {
    let target = Path::new(path);
    let is_dir = target.is_dir();
    let dir = match target.parent() {
        _ if is_dir => target,
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let n = WRITTEN.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    let staged = dir.join(format!(".insert-{pid}-{n}.inprogress"));
    let staged_text = staged.to_string_lossy().into_owned();
    let placed = write(&staged_text).and_then(|()| {
        if is_dir {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let extension = if csv { "csv" } else { "json" };
            let part = dir.join(format!("part-{nanos:020}-{pid}-{n}.{extension}"));
            rename(&staged, &part)?;
            return Ok(part.to_string_lossy().into_owned());
        }
        let empty = std::fs::metadata(target).map_or(true, |m| m.len() == 0);
        if empty {
            rename(&staged, target)?;
            return Ok(path.to_string());
        }
        append_file(&staged_text, path, csv)?;
        Ok(path.to_string())
    });
    let _ = std::fs::remove_file(&staged);
    placed
}

/// Renames `from` to `to`.
fn rename(from: &Path, to: &Path) -> Result<(), Error> {
    std::fs::rename(from, to).map_err(|e| Error::io(to.to_string_lossy(), e))
}

/// Appends the rows of the written file `staged` to the file `path` (its header checked and
/// left out for CSV), after a newline if `path` does not end in one.
fn append_file(staged: &str, path: &str, csv: bool) -> Result<(), Error> {
    let mut rows = File::open(staged).map_err(|e| Error::io(staged, e))?;
    if csv {
        let (theirs, ours) = (read_header(path)?, read_header(staged)?);
        if theirs != ours {
            return Err(Error::input(
                path,
                format!(
                    "INSERT INTO appends to this file, whose columns ({}) are not those of the rows written ({}): write to a new file or a directory",
                    theirs.join(","),
                    ours.join(",")
                ),
            ));
        }
        let header = Splitter::new(&mut rows, 1)
            .header()
            .map_err(|e| Error::io(staged, e))?
            .map_or(0, |h| h.bytes.len());
        rows.seek(SeekFrom::Start(header as u64))
            .map_err(|e| Error::io(staged, e))?;
    }
    let at = |e| Error::io(path, e);
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(at)?;
    let len = file.metadata().map_err(at)?.len();
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len.saturating_sub(1)))
        .map_err(at)?;
    if len > 0 && file.read(&mut last).map_err(at)? == 1 && last[0] != b'\n' {
        file.write_all(b"\n").map_err(at)?;
    }
    std::io::copy(&mut rows, &mut file).map_err(at)?;
    file.flush().map_err(at)
}

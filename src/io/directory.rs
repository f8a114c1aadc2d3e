//! A table's files: the `path` of a filesystem table names one file or a directory of them
//! (Flink's filesystem connector reads every file under the directory).

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::error::Error;

/// How long before a round's listing a file must have arrived to be taken by it
/// ([`files_arrived`]): more than the granularity of the file system's clock (a tick, 4 to
/// 10 ms on Linux).
pub(crate) const ARRIVAL_MARGIN: Duration = Duration::from_millis(20);

/// The files of the table at `path`: `[path]` for a file; for a directory, every file under it,
/// nested directories included, sorted by path. Names starting with `.` or `_` are skipped,
/// files and directories alike (hidden files such as `.part-0.crc` or `_SUCCESS`, as Flink's
/// `DefaultFileFilter` skips them).
///
/// Errors: `path` cannot be read; a directory that holds no file but hidden ones.
pub(crate) fn table_files(path: &str) -> Result<Vec<String>, Error> {
    let files = files_now(path)?;
    if files.is_empty() {
        return Err(Error::input(
            path,
            "the table's directory holds no file (names starting with '.' or '_' are skipped)",
        ));
    }
    Ok(files)
}

/// The files [`table_files`] names, as the directory holds them now: none for a directory
/// that holds none yet (a monitored directory a live run waits on).
///
/// Errors: `path` cannot be read.
pub(crate) fn files_now(path: &str) -> Result<Vec<String>, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_string()]);
    }
    let mut files = Vec::new();
    collect(Path::new(path), &mut files)?;
    files.sort();
    Ok(files)
}

/// The files of the directory `path` that arrived before `before`, less [`ARRIVAL_MARGIN`]:
/// those whose status last changed then (a file moved or written in changes it), sorted by
/// path. A directory listed while files are moved into it may show a file moved in late and
/// miss one moved in earlier; a file that arrived before the listing began is always listed.
/// So a round that takes only those never takes a file before one moved in ahead of it: the
/// later one waits for the next round.
///
/// Errors: `path` or a file's status cannot be read.
pub(crate) fn files_arrived(path: &str, before: SystemTime) -> Result<Vec<String>, Error> {
    let cutoff = before.checked_sub(ARRIVAL_MARGIN).unwrap_or(before);
    let mut arrived = Vec::new();
    for file in files_now(path)? {
        let meta = std::fs::metadata(&file).map_err(|e| Error::io(&file, e))?;
        if changed_at(&meta) < cutoff {
            arrived.push(file);
        }
    }
    Ok(arrived)
}

/// When a file's status last changed (its inode's change time; on other systems its last
/// modification).
fn changed_at(meta: &std::fs::Metadata) -> SystemTime {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let since = Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec() as u32);
        SystemTime::UNIX_EPOCH + since
    }
    #[cfg(not(unix))]
    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Appends the files under `dir` that are not hidden to `files`.
fn collect(dir: &Path, files: &mut Vec<String>) -> Result<(), Error> {
    let at = |e| Error::io(dir.to_string_lossy(), e);
    for entry in std::fs::read_dir(dir).map_err(at)? {
        let entry = entry.map_err(at)?;
        if entry.file_name().to_string_lossy().starts_with(['.', '_']) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else {
            files.push(path.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round takes the files that arrived before it began, not one moved in after: that
    /// one waits for the next round, so no file is taken before one moved in ahead of it.
    #[test]
    fn a_round_takes_only_files_that_arrived_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        let early = dir.path().join("b.csv");
        std::fs::write(&early, "a\n1\n").unwrap();
        std::thread::sleep(ARRIVAL_MARGIN * 3);
        let round = SystemTime::now();
        std::thread::sleep(ARRIVAL_MARGIN);
        let staged = dir.path().join(".staged");
        std::fs::write(&staged, "a\n2\n").unwrap();
        std::fs::rename(&staged, dir.path().join("a.csv")).unwrap();
        let early = early.to_str().unwrap().to_string();
        assert_eq!(files_arrived(path, round).unwrap(), [early]);
        let all = files_arrived(path, SystemTime::now() + ARRIVAL_MARGIN * 2).unwrap();
        assert_eq!(all.len(), 2);
    }
}

//! A table's files: the `path` of a filesystem table names one file or a directory of them
//! (Flink's filesystem connector reads every file under the directory).

use std::path::Path;

use crate::error::Error;

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

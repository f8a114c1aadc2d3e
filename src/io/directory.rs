//! A table's files: the `path` of a filesystem table names one file or a directory of them
//! (Flink's filesystem connector reads every file of the directory).

use crate::error::Error;

/// The files of the table at `path`: `[path]` for a file; for a directory, its files sorted by
/// name, names starting with `.` skipped (hidden files, as Flink's filesystem source skips
/// them).
///
/// Errors: `path` cannot be read; a directory that holds a directory (nested directories are
/// not read, and nothing is skipped silently) or no file.
pub(crate) fn table_files(path: &str) -> Result<Vec<String>, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_string()]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| Error::io(path, e))? {
        let entry = entry.map_err(|e| Error::io(path, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let file = entry.path().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            return Err(Error::input(
                path,
                format!("the table's directory holds the directory {name}; only its files are read, so move it out"),
            ));
        }
        files.push(file);
    }
    if files.is_empty() {
        return Err(Error::input(
            path,
            "the table's directory holds no file (names starting with '.' are skipped)",
        ));
    }
    files.sort();
    Ok(files)
}

//! Where a materialized table's data lies: `<warehouse>/data/<dir>`, where `<dir>` is a name
//! the **warehouse** chooses and records in the catalog ([`DataLayout`]). A table's name is
//! data, never a path: `` `../../victim` ``, `` `/etc` ``, `` `..` `` or `` `a/b` `` are
//! names like any other (Flink accepts any quoted identifier), and each gets a directory that
//! is one plain path component directly under `data/`.
//!
//! The chosen name is the table's name with every byte other than `A-Z a-z 0-9 _ -` written
//! `%XX` ([`escape`]: `daily_totals` stays `daily_totals`, `../x` becomes `%2E%2E%2Fx`); a
//! name whose escape is longer than [`MAX_DIR_LEN`] bytes is cut there and ends with `.` and
//! the CRC-32 of the whole name; a name already taken on disk (a directory the catalog does
//! not know, kept, see below) gets `.1`, `.2`, ... (no escape holds a `.`).
//!
//! Catalogs of version 1 kept a table at `data/<its name>` ([`DataLayout::ByName`]): such a
//! table is read where it is when its name is one plain path component, and refused (naming
//! it) otherwise; the warehouse is never written through such a name.
//!
//! **Ownership**: a directory under `data/` is a table's when the catalog names it. Creating a
//! table writes its first snapshot under `.staged-<dir>`, saves the catalog, then renames it to
//! `<dir>`; dropping renames `<dir>` to `.staged-<dir>`, saves the catalog, then removes it.
//! So a process about to change the warehouse (under the lock, before its first change)
//! renames a `.staged-<dir>` to `<dir>` when the catalog names `<dir>` and it is missing (the
//! statement was cut between its steps), and removes it otherwise; a reader changes nothing and
//! reads such a table from its `.staged-<dir>`. Any other directory the catalog does not name
//! is reported on standard error (once per process) by every process that opens the warehouse,
//! kept, and removed only by [`Warehouse::remove_unknown`](super::Warehouse::remove_unknown).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::atomic::sync_dir;
use super::{io_at, Catalog, Error, MaterializedTableEntry};

/// The directory, under the warehouse, of the tables' data directories.
pub const DATA_DIR: &str = "data";

/// The prefix of a table directory between the steps of a create or a drop.
pub const STAGED_PREFIX: &str = ".staged-";

/// The longest directory name [`file_name`] makes, in bytes (file systems allow 255).
pub const MAX_DIR_LEN: usize = 200;

/// Where a materialized table's data directory is, under `<warehouse>/data/`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataLayout {
    /// At the table's name: tables of catalogs of version 1 (the default when a catalog entry
    /// says nothing).
    #[default]
    ByName,
    /// At a name the warehouse chose ([`file_name`], with `.1`, `.2`, ... when taken).
    Dir(String),
}

/// `name` with every byte other than `A-Z a-z 0-9 _ -` written `%XX` (upper-case hex): one
/// plain path component for any name but the empty one, and reversible.
///
/// ```
/// use differential_temporal::warehouse::escape;
///
/// assert_eq!(escape("daily_totals"), "daily_totals");
/// assert_eq!(escape("../x"), "%2E%2E%2Fx");
/// ```
pub fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The directory name of the table `name` whose entry is `entry`, checked to be one plain path
/// component: not empty, not `.` or `..`, without `/` or NUL, not a staged name, at most 255
/// bytes.
///
/// Errors: the name fails the check (a catalog of version 1 named a table so, or the catalog
/// was edited); the message names the table.
pub(super) fn dir_name<'a>(
    name: &'a str,
    entry: &'a MaterializedTableEntry,
) -> Result<&'a str, String> {
    let dir = match &entry.layout {
        DataLayout::ByName => name,
        DataLayout::Dir(dir) => dir,
    };
    let plain = !dir.is_empty()
        && dir != "."
        && dir != ".."
        && !dir.contains(['/', '\0'])
        && !dir.starts_with(STAGED_PREFIX)
        && dir.len() <= 255;
    if plain {
        Ok(dir)
    } else {
        Err(format!(
            "materialized table {name:?}: its data directory {dir:?} is not a directory name \
             inside the warehouse (the table is not read; drop it or restore its entry)"
        ))
    }
}

/// The data directory `data/<dir>` of `name`, checked ([`dir_name`]) and not a symbolic link
/// (so that it resolves inside the warehouse).
///
/// Errors: those of [`dir_name`], naming the catalog file; the directory is a symbolic link.
pub(super) fn table_dir(
    root: &Path,
    catalog_path: &Path,
    name: &str,
    entry: &MaterializedTableEntry,
) -> Result<PathBuf, Error> {
    let dir =
        dir_name(name, entry).map_err(|e| Error::input(catalog_path.display().to_string(), e))?;
    let path = root.join(DATA_DIR).join(dir);
    if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::input(
            path.display().to_string(),
            format!("the data directory of materialized table {name:?} is a symbolic link; the warehouse reads only its own directories"),
        ));
    }
    Ok(path)
}

/// The file name the warehouse gives to something named `name` (a table's data directory, a
/// source's directory under a table's `input/`): its [`escape`], cut to [`MAX_DIR_LEN`] bytes
/// and ended with `.` and the CRC-32 of `name` when longer, `%` for the empty name.
///
/// ```
/// use differential_temporal::warehouse::file_name;
///
/// assert_eq!(file_name("a/b"), "a%2Fb");
/// assert_eq!(file_name(&"x".repeat(300)).len(), 200);
/// ```
pub fn file_name(name: &str) -> String {
    let mut base = escape(name);
    if base.len() > MAX_DIR_LEN {
        base.truncate(MAX_DIR_LEN - 9);
        base.push_str(&format!(".{:08x}", crc32fast::hash(name.as_bytes())));
    }
    if base.is_empty() {
        base.push('%');
    }
    base
}

/// A directory name for a new table `name` (see the [module docs](self)): no entry of
/// `catalog` uses it and neither it nor its staged name exists under `data`.
pub(super) fn choose_dir(data: &Path, catalog: &Catalog, name: &str) -> String {
    let base = file_name(name);
    let used: BTreeSet<&str> = catalog
        .materialized
        .iter()
        .filter_map(|(name, entry)| dir_name(name, entry).ok())
        .collect();
    let free = |dir: &str| {
        !used.contains(dir)
            && !data.join(dir).exists()
            && !data.join(format!("{STAGED_PREFIX}{dir}")).exists()
    };
    if free(&base) {
        return base;
    }
    (1..)
        .map(|n| format!("{base}.{n}"))
        .find(|dir| free(dir))
        .expect("some suffix is free")
}

/// The staged name of the directory `dir` (see the [module docs](self)).
pub(super) fn staged(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    dir.with_file_name(format!("{STAGED_PREFIX}{name}"))
}

/// Renames the staged directory of `dir` to `dir` if `dir` is missing (a create or a drop cut
/// between its steps, the catalog naming `dir`); returns whether it did.
///
/// Errors: the rename fails (the error names the directory).
pub(super) fn unstage(dir: &Path) -> Result<bool, Error> {
    let from = staged(dir);
    if dir.exists() || !from.is_dir() {
        return Ok(false);
    }
    fs::rename(&from, dir).map_err(io_at(dir))?;
    sync_dir(dir.parent().unwrap_or(Path::new(".")))?;
    Ok(true)
}

/// What lies under `data/` (read only): the directories of the catalog's tables, and the
/// staged directories the catalog does not name. A table whose directory is refused and a
/// directory the catalog does not name (not a staged one) are reported (see the
/// [module docs](self)).
pub(super) struct Survey {
    tables: Vec<PathBuf>,
    staged: Vec<PathBuf>,
}

/// Lists `data/` against `catalog` and reports what it does not own ([`Survey`]); changes
/// nothing.
///
/// Errors: `data/` cannot be listed.
pub(super) fn survey(root: &Path, catalog_path: &Path, catalog: &Catalog) -> Result<Survey, Error> {
    let data = root.join(DATA_DIR);
    let mut tables = Vec::new();
    for (name, entry) in &catalog.materialized {
        match table_dir(root, catalog_path, name, entry) {
            Ok(dir) => tables.push(dir),
            Err(e) => report(&format!("{e}")),
        }
    }
    let mut staged = Vec::new();
    for item in fs::read_dir(&data).map_err(io_at(&data))? {
        let path = item.map_err(io_at(&data))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if tables.contains(&path) {
            continue;
        }
        if name.starts_with(STAGED_PREFIX) {
            staged.push(path);
        } else {
            report(&format!(
                "{}: not a table of the catalog {}; kept (`dtemporal warehouse --warehouse {} --remove-unknown {}` removes it)",
                path.display(),
                catalog_path.display(),
                root.display(),
                name
            ));
        }
    }
    Ok(Survey { tables, staged })
}

/// Resolves the staged directories of `survey`, under the lock, before a change (see the
/// [module docs](self)): a table's is renamed into place, the others are removed.
///
/// Errors: a directory cannot be renamed or removed.
pub(super) fn resolve(survey: &Survey) -> Result<(), Error> {
    for dir in &survey.tables {
        unstage(dir)?;
    }
    for dir in &survey.staged {
        super::remove_dir(dir)?;
    }
    Ok(())
}

/// Writes `message` to standard error, once per process (`serve` opens the warehouse every
/// round).
fn report(message: &str) {
    static REPORTED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let mut reported = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if reported.insert(message.to_string()) {
        eprintln!("dtemporal: warehouse: {message}");
    }
}

//! The **warehouse**: a directory holding a catalog and the data of materialized tables, so
//! that what one process defines another sees (Flink keeps these in a catalog store, a SQL
//! gateway and an external workflow scheduler; here it is a directory).
//!
//! ```text
//! <warehouse>/
//!   LOCK                      advisory lock (see below)
//!   owners/<hash>.lock        a continuous refresh's owner lock (lock.rs)
//!   catalog.json              tables, views, functions, materialized tables (catalog.rs)
//!   data/<dir>/CURRENT        pointer: names the published manifest (snapshot.rs)
//!   data/<dir>/manifest-<id>.json
//!   data/<dir>/snap-<id>/part-<n>.csv
//! ```
//!
//! `<dir>` is a directory name the warehouse chose for the table and recorded in the catalog,
//! never a path taken from the table's name (layout.rs, which also says what the warehouse
//! owns and what recovery may remove).
//!
//! Every write is atomic (temporary file, fsync, rename, fsync of the directory). Changes take
//! the warehouse's exclusive advisory lock (`LOCK`, an `flock` through the `fs4` crate) for the
//! length of one statement: a second process **waits** for it, then re-reads the catalog, so
//! that no update is lost; before its first change it removes what a crashed statement left.
//! Reads take no lock and change nothing: they see the last whole catalog or snapshot, and
//! opening a warehouse does not wait for a statement in progress ([`Warehouse::open`]).
//! A missing or corrupted catalog, pointer or manifest is an error naming the file.

mod atomic;
mod catalog;
mod layout;
mod lock;
mod snapshot;
mod snapshot_csv;
mod test_pause;

use std::path::{Path, PathBuf};

pub use crate::error::Error;
pub use catalog::{
    Catalog, CatalogStatement, MaterializedTableEntry, RefreshRecord, RefreshTrigger,
    CATALOG_VERSION,
};
pub use layout::{escape, file_name, DataLayout, DATA_DIR, MAX_DIR_LEN, STAGED_PREFIX};
pub use snapshot::{
    current, recover, verify, DataFile, Manifest, SnapshotWriter, INPUT_DIR, POINTER,
};
pub use snapshot_csv::{NULL_CELL, SNAPSHOT_FORMAT};
pub use test_pause::{PAUSE_STAGES, TEST_REFRESH_PAUSE};

/// An open warehouse directory. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Warehouse {
    root: PathBuf,
}

/// The catalog file's name.
pub const CATALOG_FILE: &str = "catalog.json";

impl Warehouse {
    /// Opens the warehouse at `root`, creating the directory and an empty catalog if it holds
    /// none (under the lock), and reports on standard error what `data/` holds that the catalog
    /// does not name (kept, layout.rs). Opening deletes nothing and waits for no one: what a
    /// crashed refresh, CREATE or DROP left is invisible to readers (`CURRENT` names the
    /// published snapshot; [`Warehouse::table_dir`] finds a table whose directory a cut
    /// statement left staged) and is removed only by a process about to change the warehouse,
    /// under the lock, before its first change ([`Warehouse::update`],
    /// [`Warehouse::drop_materialized`], [`Warehouse::remove_unknown`]).
    ///
    /// Errors: the directory cannot be created or listed; the catalog is unreadable or
    /// corrupted (the error names the file).
    pub fn open(root: impl AsRef<Path>) -> Result<Warehouse, Error> {
        let root = root.as_ref().to_path_buf();
        let data = root.join(DATA_DIR);
        std::fs::create_dir_all(&data).map_err(io_at(&root))?;
        let warehouse = Warehouse { root };
        let path = warehouse.catalog_path();
        if !path.exists() {
            // Another process may be creating it: its lock, then its catalog.
            let _guard = lock::lock(&warehouse.root)?;
            if !path.exists() {
                // A new warehouse has no data yet; data without a catalog is a lost catalog,
                // never silently an empty one.
                let mut entries = std::fs::read_dir(&data).map_err(io_at(&data))?;
                if entries.next().is_some() {
                    return Err(corrupt(&path, "the catalog file is missing, but the warehouse holds materialized tables' data"));
                }
                Catalog::load(&path, true)?.save(&path)?;
            }
        }
        let catalog = Catalog::load(&path, false)?;
        layout::survey(&warehouse.root, &path, &catalog)?;
        Ok(warehouse)
    }

    /// Takes the lock for a change (waiting for another holder) and, before the change, removes
    /// what a crashed statement left: staged directories are put in place or removed
    /// (layout.rs), and each table's data directory loses what a refresh left half-done
    /// ([`recover`]; a table whose recovery fails is reported and left as it is). Returns the
    /// lock and the catalog.
    fn lock_to_change(&self) -> Result<(lock::LockGuard, Catalog), Error> {
        let guard = lock::lock(&self.root)?;
        let path = self.catalog_path();
        let catalog = Catalog::load(&path, false)?;
        layout::resolve(&layout::survey(&self.root, &path, &catalog)?)?;
        for (name, entry) in &catalog.materialized {
            if let Err(e) =
                layout::table_dir(&self.root, &path, name, entry).and_then(|dir| recover(&dir))
            {
                eprintln!("dtemporal: warehouse: materialized table {name:?} not recovered: {e}");
            }
        }
        Ok((guard, catalog))
    }

    /// Takes the ownership of materialized table `table`'s continuous refresh, held until the
    /// guard drops (or the process ends): `Ok(Err(path))`, the lock file, while another run
    /// (of this process or another) holds it.
    ///
    /// Errors: the lock file cannot be created or locked (the error names it).
    pub(crate) fn try_own(&self, table: &str) -> Result<Result<lock::LockGuard, PathBuf>, Error> {
        lock::try_own(&self.root, table)
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The catalog file.
    pub fn catalog_path(&self) -> PathBuf {
        self.root.join(CATALOG_FILE)
    }

    /// The data directory of materialized table `name`, whose catalog entry is `entry`: a
    /// directory directly under `data/`, never a symbolic link (layout.rs); its staged name
    /// while a CREATE or DROP cut between its steps left it there and no change has put it
    /// back yet (a reader reads it there).
    ///
    /// Errors: the entry names a directory outside the warehouse (a version 1 catalog's table
    /// named `..` or `a/b`, a hand edit), or a symbolic link; the error names the table.
    pub fn table_dir(&self, name: &str, entry: &MaterializedTableEntry) -> Result<PathBuf, Error> {
        let dir = layout::table_dir(&self.root, &self.catalog_path(), name, entry)?;
        let staged = layout::staged(&dir);
        let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
        Ok(if !is_dir(&dir) && is_dir(&staged) {
            staged
        } else {
            dir
        })
    }

    /// The data directory of the materialized table `name` as the catalog names it now.
    ///
    /// Errors: those of [`Warehouse::catalog`] and [`Warehouse::table_dir`]; no materialized
    /// table is named `name`.
    pub fn table_dir_of(&self, name: &str) -> Result<PathBuf, Error> {
        let catalog = self.catalog()?;
        let entry = catalog.materialized.get(name).ok_or_else(|| {
            Error::input(
                self.catalog_path().display().to_string(),
                format!("no materialized table {name:?}"),
            )
        })?;
        self.table_dir(name, entry)
    }

    /// For a new materialized table `name` of `catalog` (in an [`update`](Warehouse::update)):
    /// the layout its entry records, and the directory to write its first snapshot in, which
    /// `update` moves into place once the catalog names the table.
    pub fn stage_new_table(&self, catalog: &Catalog, name: &str) -> (DataLayout, PathBuf) {
        let data = self.root.join(DATA_DIR);
        let dir = layout::choose_dir(&data, catalog, name);
        let staged = layout::staged(&data.join(&dir));
        (DataLayout::Dir(dir), staged)
    }

    /// The catalog as last written (no lock: the file is replaced atomically).
    ///
    /// Errors: the catalog file is missing (after the warehouse was created), unreadable or
    /// corrupted.
    pub fn catalog(&self) -> Result<Catalog, Error> {
        Catalog::load(&self.catalog_path(), false)
    }

    /// Runs `change` on the current catalog under the warehouse's lock (waiting for another
    /// holder; what a crashed statement left is removed first, see [`Warehouse::open`]) and writes the catalog back if `change` succeeds; anything `change` writes
    /// besides (a snapshot) is written under the same lock.
    ///
    /// Errors: the lock or the catalog cannot be read or written, or `change`'s error (the
    /// catalog is then left as it was).
    pub fn update<T, E: From<Error>>(
        &self,
        change: impl FnOnce(&mut Catalog) -> Result<T, E>,
    ) -> Result<T, E> {
        let (_guard, mut catalog) = self.lock_to_change()?;
        let path = self.catalog_path();
        let before = catalog.clone();
        let result = change(&mut catalog)?;
        if catalog != before {
            catalog.save(&path)?;
            // The first snapshots of tables created now ([`Warehouse::stage_new_table`]).
            for (name, entry) in &catalog.materialized {
                if !before.materialized.contains_key(name) {
                    layout::unstage(&layout::table_dir(&self.root, &path, name, entry)?)?;
                }
            }
        }
        Ok(result)
    }
}

impl Warehouse {
    /// Removes the materialized table `name` from the catalog and then its data directory,
    /// under the lock; `check` sees its entry first (`None`: there is none) and may refuse.
    /// Returns whether the table existed. The directory is renamed to its staged name first,
    /// so that a crash before the catalog is saved leaves the table as it was, and one after
    /// leaves a staged directory that the next change removes (layout.rs).
    ///
    /// Errors: `check`'s, or the catalog or the directory cannot be written or removed.
    pub fn drop_materialized<E: From<Error>>(
        &self,
        name: &str,
        check: impl FnOnce(Option<&MaterializedTableEntry>) -> Result<(), E>,
    ) -> Result<bool, E> {
        let (_guard, mut catalog) = self.lock_to_change()?;
        let path = self.catalog_path();
        check(catalog.materialized.get(name))?;
        let Some(entry) = catalog.materialized.remove(name) else {
            return Ok(false);
        };
        // A table whose directory is refused (outside the warehouse) loses its entry only.
        let staged = match self.table_dir(name, &entry) {
            Ok(dir) => {
                let staged = layout::staged(&dir);
                match std::fs::rename(&dir, &staged) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(io_at(&dir)(e).into())
                    }
                    _ => Some(staged),
                }
            }
            Err(_) => None,
        };
        catalog.save(&path)?;
        if let Some(staged) = staged {
            remove_dir(&staged)?;
        }
        Ok(true)
    }

    /// Removes the directory `data/<dir>` that the catalog does not name (one
    /// [`Warehouse::open`] reported: a table an older catalog did not know, a copy put there
    /// by hand), under the lock. `dtemporal warehouse --warehouse W --remove-unknown DIR`
    /// runs it.
    ///
    /// Errors: `dir` is not a plain directory name, or names a table of the catalog, or is not
    /// a directory under `data/`; it cannot be removed.
    pub fn remove_unknown(&self, dir: &str) -> Result<(), Error> {
        let (_guard, catalog) = self.lock_to_change()?;
        let data = self.root.join(DATA_DIR);
        let path = data.join(dir);
        let owned = catalog
            .materialized
            .iter()
            .filter_map(|(name, entry)| self.table_dir(name, entry).ok())
            .any(|owned| owned == path);
        let refuse = |why: &str| Err(Error::input(path.display().to_string(), why.to_string()));
        if dir.is_empty() || dir == "." || dir == ".." || dir.contains(['/', '\0']) {
            return refuse("not a directory name under the warehouse's data directory");
        }
        if owned {
            return refuse("the data directory of a table of the catalog (drop the table instead)");
        }
        let is_dir = std::fs::symlink_metadata(&path)
            .map_err(io_at(&path))?
            .is_dir();
        if !is_dir {
            return refuse("not a directory");
        }
        remove_dir(&path)
    }
}

fn remove_dir(dir: &Path) -> Result<(), Error> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_at(dir)(e)),
        _ => Ok(()),
    }
}

/// An I/O error at `path`, naming it.
pub(crate) fn io_at(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(path.display().to_string(), e)
}

/// A file that is not what the warehouse wrote there.
pub(crate) fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::input(
        path.display().to_string(),
        format!("corrupted warehouse file: {}", reason.into()),
    )
}

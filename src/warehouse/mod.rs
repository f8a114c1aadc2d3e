//! The **warehouse**: a directory holding a catalog and the data of materialized tables, so
//! that what one process defines another sees (Flink keeps these in a catalog store, a SQL
//! gateway and an external workflow scheduler; here it is a directory).
//!
//! ```text
//! <warehouse>/
//!   LOCK                      advisory lock (see below)
//!   catalog.json              tables, views, functions, materialized tables (catalog.rs)
//!   data/<table>/CURRENT      pointer: names the published manifest (snapshot.rs)
//!   data/<table>/manifest-<id>.json
//!   data/<table>/snap-<id>/part-<n>.csv
//! ```
//!
//! Every write is atomic (temporary file, fsync, rename, fsync of the directory). Changes take
//! the warehouse's exclusive advisory lock (`LOCK`, an `flock` through the `fs4` crate) for the
//! length of one statement: a second process **waits** for it, then re-reads the catalog, so
//! that no update is lost. Reads take no lock: they see the last whole catalog or snapshot, and
//! opening a warehouse does not wait for a statement in progress ([`Warehouse::open`]).
//! A missing or corrupted catalog, pointer or manifest is an error naming the file.

mod atomic;
mod catalog;
mod lock;
mod snapshot;
mod test_pause;

use std::path::{Path, PathBuf};

pub use crate::error::Error;
pub use catalog::{
    Catalog, CatalogStatement, MaterializedTableEntry, RefreshRecord, RefreshTrigger,
    CATALOG_VERSION,
};
pub use snapshot::{current, recover, DataFile, Manifest, SnapshotWriter, INPUT_DIR, POINTER};
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
    /// none, and recovers every materialized table's data directory ([`recover`]) when no other
    /// process holds the lock. When one does (a refresh or a statement in progress), the
    /// warehouse opens at once without recovering: readers see only published snapshots, so
    /// they need not wait, and a crashed writer's leftovers are removed by the next open that
    /// finds the lock free (or overwritten by the next snapshot of their table).
    ///
    /// Errors: the directory cannot be created; the catalog, a pointer or a manifest is
    /// unreadable or corrupted (the error names the file).
    pub fn open(root: impl AsRef<Path>) -> Result<Warehouse, Error> {
        let root = root.as_ref().to_path_buf();
        let data = root.join("data");
        std::fs::create_dir_all(&data).map_err(io_at(&root))?;
        let warehouse = Warehouse { root };
        let path = warehouse.catalog_path();
        let _guard = match lock::try_lock(&warehouse.root)? {
            Some(guard) => guard,
            None if path.exists() => return Ok(warehouse),
            // Being created by another process: wait for its catalog.
            None => lock::lock(&warehouse.root)?,
        };
        if !path.exists() {
            // A new warehouse has no data yet; data without a catalog is a lost catalog,
            // never silently an empty one.
            let mut entries = std::fs::read_dir(&data).map_err(io_at(&data))?;
            if entries.next().is_some() {
                return Err(corrupt(&path, "the catalog file is missing, but the warehouse holds materialized tables' data"));
            }
            Catalog::load(&path, true)?.save(&path)?;
        }
        let catalog = Catalog::load(&path, false)?;
        for name in catalog.materialized.keys() {
            recover(&warehouse.table_dir(name))?;
        }
        warehouse.remove_orphans(&catalog)?;
        Ok(warehouse)
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The catalog file.
    pub fn catalog_path(&self) -> PathBuf {
        self.root.join(CATALOG_FILE)
    }

    /// The data directory of materialized table `name`.
    pub fn table_dir(&self, name: &str) -> PathBuf {
        self.root.join("data").join(name)
    }

    /// The catalog as last written (no lock: the file is replaced atomically).
    ///
    /// Errors: the catalog file is missing (after the warehouse was created), unreadable or
    /// corrupted.
    pub fn catalog(&self) -> Result<Catalog, Error> {
        Catalog::load(&self.catalog_path(), false)
    }

    /// Runs `change` on the current catalog under the warehouse's lock (waiting for another
    /// holder) and writes the catalog back if `change` succeeds; anything `change` writes
    /// besides (a snapshot) is written under the same lock.
    ///
    /// Errors: the lock or the catalog cannot be read or written, or `change`'s error (the
    /// catalog is then left as it was).
    pub fn update<T, E: From<Error>>(
        &self,
        change: impl FnOnce(&mut Catalog) -> Result<T, E>,
    ) -> Result<T, E> {
        let _guard = lock::lock(&self.root)?;
        let path = self.catalog_path();
        let mut catalog = Catalog::load(&path, false)?;
        let before = catalog.clone();
        let result = change(&mut catalog)?;
        if catalog != before {
            catalog.save(&path)?;
        }
        Ok(result)
    }
}

impl Warehouse {
    /// Removes the materialized table `name` from the catalog and then its data directory,
    /// under the lock; `check` sees its entry first (`None`: there is none) and may refuse.
    /// Returns whether the table existed. A crash between the two steps leaves an orphan data
    /// directory, which [`Warehouse::open`] removes.
    ///
    /// Errors: `check`'s, or the catalog or the directory cannot be written or removed.
    pub fn drop_materialized<E: From<Error>>(
        &self,
        name: &str,
        check: impl FnOnce(Option<&MaterializedTableEntry>) -> Result<(), E>,
    ) -> Result<bool, E> {
        let _guard = lock::lock(&self.root)?;
        let path = self.catalog_path();
        let mut catalog = Catalog::load(&path, false)?;
        check(catalog.materialized.get(name))?;
        if catalog.materialized.remove(name).is_none() {
            return Ok(false);
        }
        catalog.save(&path)?;
        remove_dir(&self.table_dir(name))?;
        Ok(true)
    }

    /// Removes data directories that no catalog entry names (left by a crash during a drop).
    fn remove_orphans(&self, catalog: &Catalog) -> Result<(), Error> {
        let data = self.root.join("data");
        for entry in std::fs::read_dir(&data).map_err(io_at(&data))? {
            let entry = entry.map_err(io_at(&data))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !catalog.materialized.contains_key(&name) {
                remove_dir(&entry.path())?;
            }
        }
        Ok(())
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

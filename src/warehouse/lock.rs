//! The warehouse's advisory lock: an exclusive `flock` on `<warehouse>/LOCK` (the `fs4` crate),
//! held while a statement reads, changes and writes the catalog or publishes a snapshot.
//!
//! A second process (or a second environment in this process) that wants the lock **waits**
//! until the holder's statement ends; nothing fails and no update is lost, because every
//! change re-reads the catalog under the lock before writing it. The lock is released when the
//! guard drops, and by the operating system when a process dies. A reader takes no lock: it
//! does not wait for a refresh in progress.
//!
//! A materialized table's continuous refresh has an **owner**: the run that holds the table's
//! owner lock ([`try_own`], `<warehouse>/owners/<hash of the name>.lock`) for its whole life.
//! A second run of the table, in this process or another, is refused while the first holds it
//! (two runs reading one input, such as a replication slot, would split or repeat it).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use fs4::{FileExt, TryLockError};

use super::{io_at, Error};

/// The held lock; dropping it releases it.
pub(crate) struct LockGuard {
    file: File,
}

/// Takes the lock of the warehouse at `root`, waiting while another holds it.
///
/// Errors: the lock file cannot be opened or locked (the error names it).
pub(crate) fn lock(root: &Path) -> Result<LockGuard, Error> {
    let (file, path) = lock_file(root)?;
    FileExt::lock(&file).map_err(io_at(&path))?;
    Ok(LockGuard { file })
}

/// Takes the owner lock of materialized table `table` of the warehouse at `root` if no run
/// holds it: `Ok(None)` and the lock file's path when one does. The file is named by the
/// FNV-1a hash of the name (in hex), never by the name itself.
///
/// Errors: the lock file cannot be created, opened or locked (the error names it).
pub(crate) fn try_own(root: &Path, table: &str) -> Result<Result<LockGuard, PathBuf>, Error> {
    let dir = root.join("owners");
    std::fs::create_dir_all(&dir).map_err(io_at(&dir))?;
    let hash = crate::io::datagen::fnv1a(table.as_bytes());
    let path = dir.join(format!("{hash:016x}.lock"));
    let file = open(&path)?;
    match FileExt::try_lock(&file) {
        Ok(()) => Ok(Ok(LockGuard { file })),
        Err(TryLockError::WouldBlock) => Ok(Err(path)),
        Err(TryLockError::Error(e)) => Err(io_at(&path)(e)),
    }
}

/// The lock file, opened (created if missing), and its path.
fn lock_file(root: &Path) -> Result<(File, PathBuf), Error> {
    let path: PathBuf = root.join("LOCK");
    Ok((open(&path)?, path))
}

/// The file at `path` opened for locking (created if missing).
fn open(path: &Path) -> Result<File, Error> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io_at(path))
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes it prompt.
        let _ = FileExt::unlock(&self.file);
    }
}

//! The warehouse's advisory lock: an exclusive `flock` on `<warehouse>/LOCK` (the `fs4` crate),
//! held while a statement reads, changes and writes the catalog or publishes a snapshot.
//!
//! A second process (or a second environment in this process) that wants the lock **waits**
//! until the holder's statement ends; nothing fails and no update is lost, because every
//! change re-reads the catalog under the lock before writing it. The lock is released when the
//! guard drops, and by the operating system when a process dies. A reader takes no lock: it
//! does not wait for a refresh in progress.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use fs4::FileExt;

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

/// The lock file, opened (created if missing), and its path.
fn lock_file(root: &Path) -> Result<(File, PathBuf), Error> {
    let path: PathBuf = root.join("LOCK");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_at(&path))?;
    Ok((file, path))
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes it prompt.
        let _ = FileExt::unlock(&self.file);
    }
}

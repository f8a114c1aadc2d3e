//! The data of a materialized table: immutable **snapshots**, each a directory of CSV files
//! (`<warehouse>/data/<dir>/snap-<id>/part-<n>.csv`, written in the format of
//! [`snapshot_csv`](super::snapshot_csv)), described by a
//! **manifest** (`manifest-<id>.json`: files, partitions, rows, refresh and schedule time, and
//! the input positions a continuous refresh resumes from), and published by atomically
//! replacing the **pointer** file `CURRENT`, which names the manifest.
//!
//! Crash safety: a snapshot is built in `.snap-<id>.tmp/` and renamed into place when whole;
//! the manifest and the pointer are replaced atomically ([`write_atomic`]). A process killed
//! at any point leaves `CURRENT` naming the previous snapshot, which is untouched (files of
//! unchanged partitions are hard links, not moves). [`recover`] removes everything no kept
//! manifest names. The current and the previous snapshot are kept, so that a reader that
//! started on the previous one finishes it.
//!
//! What is read back is checked: [`current`] refuses a data file of another size than the
//! manifest records, a missing one and a file the manifest does not name in the snapshot's
//! directory; [`verify`] (run before a snapshot is read) checks each file's CRC-32. Manifests
//! of earlier builds record neither: their files are checked for presence only.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic::{sync_dir, write_atomic};
use super::snapshot_csv::{self, SNAPSHOT_FORMAT};
use super::test_pause::pause_point;
use super::{corrupt, io_at, Error};
use crate::repr::{Row, Schema};

/// The pointer file's name.
pub const POINTER: &str = "CURRENT";

/// The directory, in a table's data directory, of the input its refresh keeps for itself (a
/// CONTINUOUS refresh's copy of a postgres-cdc table's changes, which its snapshots' input
/// positions name): kept as the snapshots come and go, removed with the table.
pub const INPUT_DIR: &str = "input";

/// What one published snapshot holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The snapshot's id (0: the empty snapshot published at creation).
    pub snapshot_id: u64,
    /// The snapshot it replaced.
    pub previous: Option<u64>,
    /// When it was published (ms since the epoch, by the environment's clock).
    pub refresh_time_ms: i64,
    /// The schedule time of the periodic refresh that made it (`yyyy-MM-dd HH:mm:ss`).
    pub schedule_time: Option<String>,
    /// The partition the refresh overwrote (empty: the whole table).
    pub refreshed_partition: Vec<(String, String)>,
    /// Its data files.
    pub files: Vec<DataFile>,
    /// Per source, how far the input was read (empty for a FULL refresh, which reads its
    /// sources whole; a continuous refresh resumes from these).
    pub input_positions: BTreeMap<String, u64>,
    /// The format of its data files ([`SNAPSHOT_FORMAT`]; 1 when absent: NULL and the empty
    /// string were both written as an empty cell).
    #[serde(default = "format_1")]
    pub format: u32,
}

fn format_1() -> u32 {
    1
}

/// One data file of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFile {
    /// The file's name within the snapshot's directory.
    pub name: String,
    /// Its partition: each partition column's value (`None`: NULL), in `PARTITIONED BY` order.
    pub partition: Vec<(String, Option<String>)>,
    /// Its rows.
    pub rows: u64,
    /// Its size in bytes (absent in manifests of earlier builds).
    #[serde(default)]
    pub size: Option<u64>,
    /// The CRC-32 (IEEE) of its bytes (absent in manifests of earlier builds).
    #[serde(default)]
    pub crc32: Option<u32>,
}

impl Manifest {
    /// The directory of this snapshot's files, under the table's data directory.
    pub fn dir(&self, table_dir: &Path) -> PathBuf {
        table_dir.join(snapshot_dir_name(self.snapshot_id))
    }

    /// The rows of all files.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }
}

fn snapshot_dir_name(id: u64) -> String {
    format!("snap-{id}")
}

fn manifest_name(id: u64) -> String {
    format!("manifest-{id}.json")
}

/// The published manifest of the table whose data directory is `table_dir`.
///
/// Errors (each names the file): the pointer or the manifest it names is missing, unreadable
/// or not a manifest, or of a format this build does not read; a data file the manifest names is missing or of another size than
/// recorded; a file in the snapshot's directory that the manifest does not name.
pub fn current(table_dir: &Path) -> Result<Manifest, Error> {
    let pointer = table_dir.join(POINTER);
    let text = fs::read_to_string(&pointer).map_err(io_at(&pointer))?;
    let name = text.trim();
    if name
        .strip_prefix("manifest-")
        .and_then(|n| n.strip_suffix(".json"))
        .is_none()
    {
        return Err(corrupt(
            &pointer,
            format!("the pointer file names no manifest (it holds {name:?})"),
        ));
    }
    let path = table_dir.join(name);
    let bytes = fs::read(&path).map_err(io_at(&path))?;
    let manifest: Manifest = serde_json::from_slice(&bytes)
        .map_err(|e| corrupt(&path, format!("not a snapshot manifest: {e}")))?;
    if manifest.format == 0 || manifest.format > SNAPSHOT_FORMAT {
        return Err(corrupt(
            &path,
            format!(
                "snapshot format {} (this build reads formats 1 to {SNAPSHOT_FORMAT})",
                manifest.format
            ),
        ));
    }
    let dir = manifest.dir(table_dir);
    for file in &manifest.files {
        let data = dir.join(&file.name);
        let Some(size) = fs::metadata(&data)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
        else {
            return Err(corrupt(
                &data,
                format!("data file named by {} is missing", path.display()),
            ));
        };
        if file.size.is_some_and(|recorded| recorded != size) {
            return Err(corrupt(
                &data,
                format!(
                    "data file of snapshot {} holds {size} bytes, its manifest {} records {}",
                    manifest.snapshot_id,
                    path.display(),
                    file.size.unwrap_or_default()
                ),
            ));
        }
    }
    for entry in fs::read_dir(&dir).map_err(io_at(&dir))? {
        let entry = entry.map_err(io_at(&dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !manifest.files.iter().any(|f| f.name == name) {
            return Err(corrupt(
                &entry.path(),
                format!(
                    "a file in snapshot {} that its manifest {} does not name",
                    manifest.snapshot_id,
                    path.display()
                ),
            ));
        }
    }
    Ok(manifest)
}

/// Checks each data file of `manifest` (of the table whose data directory is `table_dir`)
/// against the CRC-32 its manifest records (files without one, of earlier builds, pass).
///
/// Errors: a file cannot be read, or its checksum differs (naming the file and the snapshot).
pub fn verify(table_dir: &Path, manifest: &Manifest) -> Result<(), Error> {
    let dir = manifest.dir(table_dir);
    for file in &manifest.files {
        let Some(recorded) = file.crc32 else {
            continue;
        };
        let path = dir.join(&file.name);
        let read = snapshot_csv::checksum(&path)?;
        if read.crc32 != recorded || file.size.is_some_and(|s| s != read.size) {
            return Err(corrupt(
                &path,
                format!(
                    "data file of snapshot {} does not match its manifest's checksum (CRC-32 {:08x}, recorded {recorded:08x})",
                    manifest.snapshot_id, read.crc32
                ),
            ));
        }
    }
    Ok(())
}

/// A snapshot being written: rows go to new files, unchanged partitions are linked from the
/// previous snapshot, and [`publish`](SnapshotWriter::publish) makes it current.
pub struct SnapshotWriter {
    table_dir: PathBuf,
    temp: PathBuf,
    manifest: Manifest,
}

impl SnapshotWriter {
    /// Starts snapshot `previous.snapshot_id + 1` (or 0 without a previous one) of the table
    /// whose data directory is `table_dir` (created if missing).
    pub fn begin(table_dir: &Path, previous: Option<&Manifest>) -> Result<SnapshotWriter, Error> {
        fs::create_dir_all(table_dir).map_err(io_at(table_dir))?;
        let id = previous.map_or(0, |p| p.snapshot_id + 1);
        let temp = table_dir.join(format!(".{}.tmp", snapshot_dir_name(id)));
        // Leftovers of an attempt at this id that failed before its pointer was published.
        for stale in [&temp, &table_dir.join(snapshot_dir_name(id))] {
            if stale.exists() {
                fs::remove_dir_all(stale).map_err(io_at(stale))?;
            }
        }
        fs::create_dir(&temp).map_err(io_at(&temp))?;
        Ok(SnapshotWriter {
            table_dir: table_dir.to_path_buf(),
            temp,
            manifest: Manifest {
                snapshot_id: id,
                previous: previous.map(|p| p.snapshot_id),
                refresh_time_ms: 0,
                schedule_time: None,
                refreshed_partition: Vec::new(),
                files: Vec::new(),
                input_positions: BTreeMap::new(),
                format: SNAPSHOT_FORMAT,
            },
        })
    }

    /// Writes `rows` (all of one partition, `partition`) as a new CSV file of `schema`
    /// (format [`SNAPSHOT_FORMAT`]: NULL is `\N`, every value reads back identical).
    ///
    /// Errors: the file cannot be written; a value would not read back identical (the error
    /// names the row and the column).
    pub fn write_file(
        &mut self,
        schema: &Schema,
        partition: Vec<(String, Option<String>)>,
        rows: &[&Row],
    ) -> Result<(), Error> {
        let name = format!("part-{}.csv", self.manifest.files.len());
        let written = snapshot_csv::write(&self.temp.join(&name), schema, rows)?;
        self.manifest.files.push(DataFile {
            name,
            partition,
            rows: rows.len() as u64,
            size: Some(written.size),
            crc32: Some(written.crc32),
        });
        Ok(())
    }

    /// Records how far a continuous refresh read its inputs (see [`Manifest::input_positions`]).
    pub fn set_input_positions(&mut self, positions: BTreeMap<String, u64>) {
        self.manifest.input_positions = positions;
    }

    /// The files written or kept so far.
    pub fn file_count(&self) -> usize {
        self.manifest.files.len()
    }

    /// Carries `file` of the snapshot `from` over unchanged (a hard link: no copy, and the
    /// previous snapshot keeps its file); a file of an earlier format is rewritten in this
    /// one (format [`SNAPSHOT_FORMAT`]).
    ///
    /// Errors: the file cannot be linked, read or written.
    pub fn keep_file(&mut self, from: &Manifest, file: &DataFile) -> Result<(), Error> {
        let name = format!("part-{}.csv", self.manifest.files.len());
        let source = from.dir(&self.table_dir).join(&file.name);
        let target = self.temp.join(&name);
        let (size, crc32) = if from.format < SNAPSHOT_FORMAT {
            let written = snapshot_csv::convert_v1(&source, &target)?;
            (Some(written.size), Some(written.crc32))
        } else {
            fs::hard_link(&source, &target).map_err(io_at(&source))?;
            (file.size, file.crc32)
        };
        self.manifest.files.push(DataFile {
            name,
            size,
            crc32,
            ..file.clone()
        });
        Ok(())
    }

    /// Publishes the snapshot: renames its directory into place, writes its manifest, then
    /// replaces the pointer (the moment readers switch), and removes snapshots older than
    /// the previous one. Returns the manifest.
    pub fn publish(
        mut self,
        refresh_time_ms: i64,
        schedule_time: Option<String>,
        refreshed_partition: Vec<(String, String)>,
    ) -> Result<Manifest, Error> {
        self.manifest.refresh_time_ms = refresh_time_ms;
        self.manifest.schedule_time = schedule_time;
        self.manifest.refreshed_partition = refreshed_partition;
        sync_dir(&self.temp)?;
        pause_point("written");
        let dir = self.manifest.dir(&self.table_dir);
        fs::rename(&self.temp, &dir).map_err(io_at(&dir))?;
        sync_dir(&self.table_dir)?;
        pause_point("renamed");
        let name = manifest_name(self.manifest.snapshot_id);
        let bytes = serde_json::to_vec_pretty(&self.manifest).expect("a manifest serializes");
        write_atomic(&self.table_dir.join(&name), &bytes)?;
        pause_point("manifest");
        write_atomic(
            &self.table_dir.join(POINTER),
            format!("{name}\n").as_bytes(),
        )?;
        recover(&self.table_dir)?;
        pause_point("published");
        Ok(self.manifest)
    }
}

/// Removes from the table's data directory everything that neither the current manifest nor
/// the one before it names: temporary files and directories of an interrupted refresh, older
/// snapshots and manifests. A directory without a pointer is left alone (nothing published);
/// the [`INPUT_DIR`] is kept.
///
/// Errors: those of [`current`], or a file that cannot be removed.
pub fn recover(table_dir: &Path) -> Result<(), Error> {
    if !table_dir.join(POINTER).exists() {
        return Ok(());
    }
    let manifest = current(table_dir)?;
    let mut keep = vec![
        INPUT_DIR.to_string(),
        POINTER.to_string(),
        manifest_name(manifest.snapshot_id),
        snapshot_dir_name(manifest.snapshot_id),
    ];
    if let Some(previous) = manifest.previous {
        keep.push(manifest_name(previous));
        keep.push(snapshot_dir_name(previous));
    }
    for entry in fs::read_dir(table_dir).map_err(io_at(table_dir))? {
        let entry = entry.map_err(io_at(table_dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if keep.contains(&name) {
            continue;
        }
        let path = entry.path();
        let removed = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(io_at(&path))?;
    }
    Ok(())
}

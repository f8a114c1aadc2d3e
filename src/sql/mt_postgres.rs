//! A postgres-cdc table read by a CONTINUOUS refresh ([`super::mt_continuous`]).
//!
//! Each round reads the transactions committed since the last one (the first round of
//! `'initial'` also the snapshot; `'snapshot'` only the snapshot, in the first round) and
//! writes them, before the round enters the dataflow, to a changelog CSV file of the
//! materialized table's own (`input/<table>/<round>.csv` in its data directory, the warehouse's
//! [`INPUT_DIR`](crate::warehouse::INPUT_DIR), synced to disk): the
//! round's input is that file, recorded among the snapshot's input positions like any file a
//! round read, so that a run that starts again replays the published rounds from their files.
//! The position also records the LSN the rounds have read to (`lsn:<table>`); the replication
//! slot is advanced to it only once a snapshot recording it is published, so a run that stops
//! before publishing reads those transactions again from the slot. Nothing is lost or applied
//! twice across stops and crashes.
//!
//! A CSV file writes an empty string as it writes NULL: a text value `''` is read back NULL.

use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::error::SqlError;
use super::mt_continuous::FileTable;
use crate::io::postgres::{ChangeStream, PostgresSource, StartupMode};
use crate::io::CsvSink;
use crate::operators::Change;
use crate::repr::Row;
use crate::table::TableError;

/// The changes a round reads at most (whole transactions, so a round may hold more).
const ROUND_CHANGES: i32 = 100_000;

/// How a CONTINUOUS refresh reads a postgres-cdc table: its source, the directory of its round
/// files (as a file table), and the change stream once opened.
pub(super) struct PostgresFeed {
    source: Arc<PostgresSource>,
    pub(super) files: FileTable,
    stream: RefCell<Option<ChangeStream>>,
}

impl PostgresFeed {
    /// The feed of `source` writing its round files under `dir` (created).
    pub(super) fn new(source: Arc<PostgresSource>, dir: &Path) -> Result<PostgresFeed, SqlError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| TableError::from(crate::error::Error::io(dir.display().to_string(), e)))?;
        // An upsert changelog's deletes are by key: their other values are NULL.
        let mut schema = source.schema.clone();
        if source.options.upsert {
            let key = schema.primary_key.clone().unwrap_or_default();
            for (i, field) in schema.fields.iter_mut().enumerate() {
                if !key.contains(&i) {
                    field.ty.nullable = true;
                }
            }
        }
        let files = FileTable {
            path: dir.display().to_string(),
            schema,
            format: crate::io::Format::Csv,
            changelog: source.options.startup != StartupMode::Snapshot,
        };
        Ok(PostgresFeed {
            source,
            files,
            stream: RefCell::new(None),
        })
    }

    /// The round file of round `round` holding what was committed since the last read (`None`
    /// when nothing was), and the LSN read to (`None` for `'snapshot'`). `resume`: the LSN the
    /// published rounds read to; `read_before`: whether they read the table at all.
    ///
    /// Errors: the server's (see [`PostgresSource::open_stream`]), a value the declared type
    /// cannot hold (the round would lose the row), the file cannot be written.
    pub(super) fn next(
        &self,
        round: u64,
        resume: Option<u64>,
        read_before: bool,
    ) -> Result<(Option<String>, Option<u64>), SqlError> {
        let mut changes: Vec<Change<Row>> = Vec::new();
        let mut keep = |row: Result<Change<Row>, crate::csv::RowError>| match row {
            Ok(change) => {
                changes.push(change);
                Ok(())
            }
            Err(e) => Err(SqlError::from(TableError::Invalid(format!(
                "table '{}' (postgres-cdc) has a row its declared types cannot hold: {e}",
                self.source.name
            )))),
        };
        let read_to = if self.source.options.startup == StartupMode::Snapshot {
            if !read_before {
                let snapshot = self.source.snapshot().map_err(TableError::from)?;
                snapshot.rows().iter().cloned().try_for_each(&mut keep)?;
            }
            None
        } else {
            let mut stream = self.stream.borrow_mut();
            if stream.is_none() {
                let (snapshot, opened) =
                    self.source.open_stream(resume).map_err(TableError::from)?;
                if let Some(snapshot) = snapshot {
                    snapshot.rows().iter().cloned().try_for_each(&mut keep)?;
                }
                *stream = Some(opened);
            }
            let stream = stream.as_mut().expect("opened above");
            let batch = stream.next_batch(ROUND_CHANGES).map_err(TableError::from)?;
            for transaction in batch {
                transaction.changes.into_iter().try_for_each(&mut keep)?;
            }
            Some(stream.read_to())
        };
        if changes.is_empty() {
            return Ok((None, read_to));
        }
        let path = format!("{}/{round:010}.csv", self.files.path);
        self.write(&path, &changes)
            .map_err(|e| TableError::from(crate::error::Error::io(&path, e)))?;
        Ok((Some(path), read_to))
    }

    /// Writes `changes` to the round file `path` and syncs it to disk.
    fn write(&self, path: &str, changes: &[Change<Row>]) -> std::io::Result<()> {
        let mut sink = CsvSink::new(Vec::new(), &self.files.schema, self.files.changelog)?;
        for change in changes {
            sink.write_change(change.kind, &change.row)?;
        }
        let mut file = std::fs::File::create(path)?;
        file.write_all(&sink.finish()?)?;
        file.sync_all()
    }

    /// Advances the replication slot to `lsn`, read by a published snapshot.
    ///
    /// Errors: the server refuses.
    pub(super) fn confirm(&self, lsn: u64) -> Result<(), SqlError> {
        if let Some(stream) = self.stream.borrow_mut().as_mut() {
            stream.confirm(lsn).map_err(TableError::from)?;
        }
        Ok(())
    }
}

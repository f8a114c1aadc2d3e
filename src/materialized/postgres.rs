//! A postgres-cdc table read in rounds by a live run: a CONTINUOUS refresh
//! ([`super::continuous`]) or a live query ([`super::live_query`]).
//!
//! Each round reads the transactions committed since the last one (the first round of
//! `'initial'` also the snapshot; `'snapshot'` only the snapshot, in the first round) and hands
//! them to the workers as the round's changes. A materialized table's feed also writes them,
//! before the round enters the dataflow, to a changes file of the table's own
//! (`input/<table>/<round>.changes` in its data directory, the warehouse's
//! [`INPUT_DIR`](crate::warehouse::INPUT_DIR), synced to disk; [`crate::io::changes_file`]: the
//! rows exactly as read), recorded among the snapshot's input positions like any file a round
//! read, so that a run that starts again replays the published rounds from their files. The
//! position also records the LSN the rounds have read to (`lsn:<table>`); the replication slot
//! is advanced to it only once a snapshot recording it is published, so a run that stops
//! before publishing reads those transactions again from the slot. Nothing is lost or applied
//! twice across stops and crashes. A run that stops before its first publish leaves the slot
//! it created (noted by the file `slot` in its directory) unadvanced: the next run drops it
//! and reads the table from the start again.
//!
//! A live query keeps no files: its slot is temporary (the server drops it when the query's
//! connection ends), and the slot is advanced as soon as a round's changes are written out.
//!
//! A slot has **one reader**: a materialized table that would read a slot another one reads
//! (two tables over one postgres-cdc declaration) is refused at CREATE, naming the slot
//! ([`check_own_slots`]); two readers would split its changes between them (`'latest-offset'`)
//! or the second could never start (`'initial'`). As each Flink CDC job needs its own
//! `slot.name`, each materialized table needs its own postgres-cdc declaration.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sqlparser::tokenizer::Span;

use crate::csv::RowError;
use crate::io::changes_file::{read_changes, write_changes};
use crate::io::postgres::{ChangeStream, PostgresSource, Slot, StartupMode};
use crate::operators::Change;
use crate::plan::RelExpr;
use crate::repr::Row;
use crate::sql::SqlError;
use crate::table::live::RoundInput;
use crate::table::{TableEnv, TableError};
use crate::warehouse::Catalog;

/// The changes a round reads at most (whole transactions, so a round may hold more).
const ROUND_CHANGES: i32 = 100_000;

/// The file, in a feed's directory, that notes that a run created the slot.
const SLOT_NOTE: &str = "slot";

/// How a live run reads a postgres-cdc table: its source, the directory of its round files
/// (`None`: a live query's, which keeps none), and the change stream once opened.
pub(crate) struct PostgresFeed {
    source: Arc<PostgresSource>,
    dir: Option<PathBuf>,
    stream: RefCell<Option<ChangeStream>>,
    /// `'snapshot'`: whether this run read it.
    snapshot_read: Cell<bool>,
}

/// What a round read: its changes, and its changes file (a materialized table's feed).
pub(super) struct FeedRound {
    pub(super) changes: Arc<Vec<Change<Row>>>,
    pub(super) file: Option<String>,
}

impl PostgresFeed {
    /// The feed of `source` writing its round files under `dir` (created), or none.
    ///
    /// Errors: `dir` cannot be created.
    pub(super) fn new(
        source: Arc<PostgresSource>,
        dir: Option<&Path>,
    ) -> Result<PostgresFeed, SqlError> {
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
        Ok(PostgresFeed {
            source,
            dir: dir.map(Path::to_path_buf),
            stream: RefCell::new(None),
            snapshot_read: Cell::new(false),
        })
    }

    /// The changes of round `round`, what was committed since the last read (`None` when
    /// nothing was), and the LSN read to (`None` for `'snapshot'`). `resume`: the LSN the
    /// published rounds read to; `read_before`: whether they read the table at all.
    ///
    /// Errors: the server's (see [`PostgresSource::open_stream`]), a value the declared type
    /// cannot hold (the round would lose the row), the round's file cannot be written.
    pub(super) fn next(
        &self,
        round: u64,
        resume: Option<u64>,
        read_before: bool,
    ) -> Result<(Option<FeedRound>, Option<u64>), SqlError> {
        let mut changes: Vec<Change<Row>> = Vec::new();
        let mut keep = |row: Result<Change<Row>, RowError>| match row {
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
            // Once: by a published round (`read_before`) or by this run.
            if !read_before && !self.snapshot_read.replace(true) {
                let snapshot = self.source.snapshot().map_err(TableError::from)?;
                snapshot.into_rows().into_iter().try_for_each(&mut keep)?;
            }
            None
        } else {
            let mut stream = self.stream.borrow_mut();
            if stream.is_none() {
                let (snapshot, opened) = self.open(resume)?;
                if let Some(snapshot) = snapshot {
                    snapshot.into_rows().into_iter().try_for_each(&mut keep)?;
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
        let file = match &self.dir {
            Some(dir) => {
                let path = dir.join(format!("{round:010}.changes"));
                write_changes(&path, &changes).map_err(|e| io_error(&path, e))?;
                Some(path.display().to_string())
            }
            None => None,
        };
        let changes = Arc::new(changes);
        Ok((Some(FeedRound { changes, file }), read_to))
    }

    /// Opens the change stream, resuming after `resume`: a live query's on a temporary slot;
    /// a materialized table's on a kept slot, noted in its directory once opened, and renewed
    /// when a run noted it but published no position.
    fn open(
        &self,
        resume: Option<u64>,
    ) -> Result<(Option<crate::io::postgres::Snapshot>, ChangeStream), SqlError> {
        let note = self.dir.as_ref().map(|dir| dir.join(SLOT_NOTE));
        let slot = match &note {
            None => Slot::Temporary,
            Some(note) if resume.is_none() && note.is_file() => Slot::Renewed,
            Some(_) => Slot::Kept,
        };
        let opened = (self.source.open_stream(resume, slot)).map_err(TableError::from)?;
        if let Some(note) = note {
            std::fs::write(&note, "").map_err(|e| io_error(&note, e))?;
        }
        Ok(opened)
    }

    /// The input of table `table` of a published round, read again from its changes file.
    ///
    /// Errors: the file cannot be read or is damaged.
    pub(super) fn replay(&self, table: &str, file: &str) -> Result<RoundInput, SqlError> {
        let columns = self.source.schema.len();
        let changes = read_changes(Path::new(file), columns).map_err(TableError::from)?;
        Ok(RoundInput::Changes(table.to_string(), Arc::new(changes)))
    }

    /// Whether the last round stopped at its limit of changes with more in the slot: the
    /// next round should not wait.
    pub(super) fn is_behind(&self) -> bool {
        (self.stream.borrow().as_ref()).is_some_and(ChangeStream::is_behind)
    }

    /// Advances the replication slot to `lsn`, read by a published snapshot (a live query:
    /// written out).
    ///
    /// Errors: the server refuses.
    pub(super) fn confirm(&self, lsn: u64) -> Result<(), SqlError> {
        if let Some(stream) = self.stream.borrow_mut().as_mut() {
            stream.confirm(lsn).map_err(TableError::from)?;
        }
        Ok(())
    }
}

/// The error of a file or directory of the feed.
fn io_error(path: &Path, e: std::io::Error) -> SqlError {
    TableError::from(crate::error::Error::io(path.display().to_string(), e)).into()
}

/// The replication slots `plan` reads changes from (its postgres-cdc tables not read as
/// `'snapshot'`): the server (host and port: a slot's name is unique in a server), the slot's
/// name, and the postgres-cdc table's name.
fn slots(env: &TableEnv, plan: &RelExpr) -> Vec<(String, u16, String, String)> {
    let sources = plan
        .scans()
        .into_iter()
        .filter_map(|scan| env.source(scan).ok());
    sources
        .filter_map(|source| source.postgres)
        .filter(|p| p.options.startup != StartupMode::Snapshot)
        .filter_map(|p| {
            let o = &p.options;
            let slot = o.slot.clone()?;
            Some((o.hostname.clone(), o.port, slot, p.name.clone()))
        })
        .collect()
}

/// Checks that materialized table `name`, of the plan `plan`, reads no replication slot that
/// another materialized table of `catalog` reads (or that it reads through two declarations).
///
/// Errors, at `span`: a slot read by another table, naming the slot, its server and the other
/// table.
pub(super) fn check_own_slots(
    env: &TableEnv,
    name: &str,
    plan: &RelExpr,
    catalog: &Catalog,
    span: Span,
) -> Result<(), SqlError> {
    let mine = slots(env, plan);
    let others = catalog
        .materialized
        .iter()
        .filter(|(other, _)| other.as_str() != name)
        .filter_map(|(other, entry)| {
            let plan = crate::sql::query_plan(env, &entry.definition).ok()?;
            Some((other.clone(), slots(env, &plan)))
        });
    let others: Vec<(String, Vec<_>)> = others.collect();
    for (i, (host, port, slot, table)) in mine.iter().enumerate() {
        let same = |s: &&(String, u16, String, String)| (&s.0, s.1, &s.2) == (host, *port, slot);
        let reader = match mine[..i].iter().find(same) {
            Some(twice) => Some(format!("its table '{}' too", twice.3)),
            None => others.iter().find_map(|(other, slots)| {
                slots
                    .iter()
                    .find(same)
                    .map(|_| format!("materialized table {}", super::create::identifier(other)))
            }),
        };
        if let Some(reader) = reader {
            return Err(SqlError::at(
                span,
                format!(
                    "replication slot '{slot}' on {host}:{port} (postgres-cdc table '{table}') is already read by {reader}: a slot has one reader (two split its changes, and with 'initial' the second cannot start); declare the Postgres table again under another name with its own 'slot.name' (as each Flink CDC job needs its own slot)"
                ),
            ));
        }
    }
    Ok(())
}

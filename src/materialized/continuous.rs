//! CONTINUOUS refreshes: a materialized table's definition runs as a live dataflow
//! ([`LiveRun`]) over sources that keep growing, and a snapshot of its result (a complete
//! round: never part of one) is published when a round completes and waiting for the next
//! round would let more than `freshness` pass since the last snapshot (with rounds as long as
//! the freshness, every round is published), so a snapshot follows the last one within one
//! freshness interval as long as a round's work takes less than its interval.
//!
//! Sources, read in **rounds** (one every `interval`, the least `'source.monitor-interval'` of
//! the monitored tables the definition reads, 1 s without one; the next one at once when a
//! `postgres-cdc` table's round stopped at its limit of changes with more waiting):
//! - a filesystem table with `'source.monitor-interval'` is a monitored directory: each round
//!   lists it and reads the files it gained, each once and whole (as Flink's continuous file
//!   source: write a file elsewhere and move it in; a file that changes after it was read is
//!   not read again);
//! - a filesystem table without it (or a materialized table) is read once, in the first round;
//! - a `datagen` table gives each round its next `rows-per-second * interval` rows, up to its
//!   `number-of-rows` or forever (an unbounded one); a `nexmark` table likewise, the rows of
//!   its kind among `first-event.rate * interval` events, up to its `events.num` or forever;
//! - a `postgres-cdc` table gives each round the transactions committed since the last (the
//!   first round of `'initial'` its snapshot too), kept in a file of the materialized table's
//!   own for replay ([`super::postgres`]).
//!
//! **Positions and resume**: each snapshot's manifest records the input its rounds read
//! (`rounds`: their number; `file:<table>:<path>`: the round that read a file; per generated
//! table `rows:<table>` the rows made and `round-rows:<table>` the rows a round takes; per
//! postgres-cdc table `lsn:<table>` the LSN its rounds read to, its rounds' files as `file:`; in
//! these keys a table name's `%` and `:` are written `%25` and `%3A`, so that the first `:`
//! after the table ends it, whatever the name holds). A run
//! that starts (the first, after `RESUME`, after a crash or a stop) reads those rounds again,
//! in order and batched as they were, which rebuilds the state the published snapshot was
//! computed from, and then goes on with new input: nothing is lost or counted twice, and
//! results that depend on arrival order (a keep-first deduplication) are the same as in an
//! uninterrupted run. A file read before that is gone is an error naming it. Rows read after
//! the last snapshot are read again by the next run (they were never published).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::create::identifier;
use super::positions::Positions;
use super::postgres::PostgresFeed;
use super::refresh::{partition_columns, partition_text, write_rows};
use crate::io::{Generated, TypedSource};
use crate::materialized::{sleep_until, RefreshMode, RefreshStatus, SystemClock};
use crate::repr::Row;
use crate::sql::SqlError;
use crate::table::live::{Keep, LiveRun, RoundInput};
use crate::table::{TableEnv, TableError};
use crate::warehouse::{
    current, Manifest, MaterializedTableEntry, RefreshRecord, RefreshTrigger, SnapshotWriter,
};

/// How often rounds run when no monitored table sets it.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// Where a scanned table's input comes from.
pub(crate) enum Feed {
    /// Read once, in the first round.
    Once(FileTable),
    /// A monitored directory.
    Monitored(FileTable),
    /// A generated table (datagen, nexmark).
    Rows(Generated),
    /// A postgres-cdc table: each round's changes, written to a file of the materialized
    /// table's own when it has one.
    Postgres(Box<PostgresFeed>),
}

impl Feed {
    /// Whether the last round left input it had already (a change stream read to its round's
    /// limit): the next round runs at once.
    pub(crate) fn is_behind(&self) -> bool {
        matches!(self, Feed::Postgres(feed) if feed.is_behind())
    }
}

/// A filesystem table's path, schema, format and whether it is a changelog.
pub(crate) struct FileTable {
    pub(super) path: String,
    pub(super) schema: crate::repr::Schema,
    pub(super) format: crate::io::Format,
    pub(super) changelog: bool,
}

impl TableEnv {
    /// Runs the CONTINUOUS refresh of materialized table `table` until `stop` is set or the
    /// table is suspended, dropped or redefined (looked at every round), calling `published`
    /// with each snapshot's record. Returns when the workers have stopped; the last published
    /// snapshot stays current.
    ///
    /// The definition runs as a live dataflow that takes new input in rounds, one every
    /// `'source.monitor-interval'` (the least of the tables it reads; 1 s without one): a
    /// filesystem table with that option is a directory whose new files each round reads, each
    /// once and whole; another filesystem table is read once; a `datagen` table gives each
    /// round its next `rows-per-second x interval` rows (a `nexmark` table: the rows of its
    /// kind among `first-event.rate x interval` events), bounded or not. The result of a
    /// complete round is published as a snapshot when waiting for the next round would let
    /// more than the freshness pass since the last snapshot. The snapshot's
    /// manifest records the rounds' input, and a run first reads those rounds again, batched as
    /// they were: nothing is lost or counted twice across stops, suspensions and crashes
    /// (`docs/materialized-tables.md`, "CONTINUOUS").
    ///
    /// A table's run has one owner: the run holds the table's owner lock in the warehouse
    /// (`owners/`) for its whole life, and a second run, in this process or another, is
    /// refused while it does.
    ///
    /// Errors: the table is not a CONTINUOUS materialized table of this environment's
    /// warehouse; another run holds it (the message names the lock file); its definition reads a source it cannot read continuously; a round read a
    /// malformed row or the plan refused one (the first is named: nothing is published from
    /// that round on); a file cannot be read; a snapshot cannot be written.
    ///
    /// ```
    /// # use differential_temporal::table::tempfile_dir::Dir;
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use differential_temporal::table::TableEnv;
    ///
    /// let dir = Dir::new();
    /// let orders = dir.write("orders.csv", "id,amount\n1,10\n2,5\n");
    /// let env = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    /// env.execute_sql(&format!("
    ///     CREATE TABLE orders (id INT, amount INT) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
    ///     CREATE MATERIALIZED TABLE total FRESHNESS = INTERVAL '10' SECOND AS SELECT SUM(amount) AS s FROM orders;")).unwrap();
    /// // A server runs until told to stop; this one stops after its first snapshot.
    /// let stop = AtomicBool::new(false);
    /// env.run_continuous_refresh("total", &stop, |snapshot| {
    ///     assert_eq!(snapshot.rows, 1);
    ///     stop.store(true, Ordering::SeqCst);
    /// })
    /// .unwrap();
    /// let total = env.sql_query("SELECT * FROM total").unwrap().execute().unwrap();
    /// assert_eq!(total.rows_as_text(), ["15"]);
    /// ```
    pub fn run_continuous_refresh(
        &self,
        table: &str,
        stop: &AtomicBool,
        mut published: impl FnMut(&RefreshRecord),
    ) -> Result<(), SqlError> {
        let invalid = |m: String| SqlError::from(TableError::Invalid(m));
        let warehouse = self
            .warehouse()
            .ok_or_else(|| invalid(format!("materialized table '{table}' has no warehouse")))?;
        // Read under the lock, so that what a crashed statement left is resolved before this
        // run writes to the table's directory.
        let entry = warehouse
            .update(|catalog| Ok::<_, SqlError>(catalog.materialized.get(table).cloned()))?
            .ok_or_else(|| invalid(crate::materialized::missing_table(&identifier(table))))?;
        if entry.refresh_mode != RefreshMode::Continuous {
            return Err(invalid(format!(
                "materialized table {} is refreshed in FULL mode, by its schedule",
                identifier(table)
            )));
        }
        // One run a table: two would read its inputs twice (a replication slot, split).
        let _owner = warehouse.try_own(table)?.map_err(|lock| {
            invalid(format!(
                "materialized table {} is refreshed by another run (it holds {}): a table's continuous refresh has one owner; stop that run first",
                identifier(table),
                lock.display()
            ))
        })?;
        let plan = crate::sql::query_plan(self, &entry.definition)?;
        let dir = warehouse.table_dir(table, &entry)?;
        let (feeds, interval) = self.feeds(&plan, Some(&dir))?;
        let workers = crate::table::live::workers(&self.options().timely_args)?;
        let mut positions = Positions::read(&current(&dir)?.input_positions, &feeds, interval);
        let options = self.options();
        let tables = feeds.keys().cloned().collect();
        let by = partition_columns(&entry);
        let run = LiveRun::start(&plan, tables, Keep::Table(by), workers, &options)?;
        // Replay the published rounds, then go on with new input.
        let replayed = positions.rounds;
        for round in 0..replayed {
            run.push_round(positions.replay(round, &feeds)?);
        }
        if replayed > 0 && !run.wait_for(replayed - 1, stop)? {
            return Ok(run.close()?);
        }
        check_problems(&run, table)?;
        let freshness = entry.freshness.duration();
        let mut last_publish: Option<Instant> = None;
        let mut unpublished = false;
        loop {
            let started = Instant::now();
            if stop.load(Ordering::SeqCst) || !still_running(self, table, &entry.definition)? {
                break;
            }
            run.check()?;
            let inputs = positions.next_round(&feeds)?;
            if !inputs.is_empty() {
                let round = run.push_round(inputs);
                if !run.wait_for(round, stop)? {
                    break;
                }
                check_problems(&run, table)?;
                unpublished = true;
            }
            // The next round's result would come one interval later (at once when a source
            // is behind): publish now if that would be later than the freshness allows.
            let behind = feeds.values().any(Feed::is_behind);
            let next = if behind { Duration::ZERO } else { interval };
            let due = |at: Instant| at.elapsed() + next >= freshness;
            if unpublished && last_publish.is_none_or(due) {
                let first = last_publish.is_none();
                let record = publish(self, table, &run, &positions, first)?;
                positions.confirm(&feeds)?;
                published(&record);
                last_publish = Some(Instant::now());
                unpublished = false;
            }
            let left = next.saturating_sub(started.elapsed());
            sleep_until(&SystemClock, i64::MAX, left, stop);
        }
        Ok(run.close()?)
    }

    /// How a live run of `plan` reads each table it scans, and how often its rounds run:
    /// the live run of the materialized table in `dir`, or (`None`) a live query.
    pub(crate) fn feeds(
        &self,
        plan: &crate::plan::RelExpr,
        dir: Option<&std::path::Path>,
    ) -> Result<(BTreeMap<String, Feed>, Duration), SqlError> {
        let mut feeds = BTreeMap::new();
        for name in plan.scans() {
            feeds.insert(name.to_string(), self.feed(name, dir)?);
        }
        let interval = feeds
            .keys()
            .filter_map(|name| self.monitor_interval(name))
            .min()
            .unwrap_or(DEFAULT_INTERVAL);
        Ok((feeds, interval))
    }

    /// How a live run of the materialized table in `dir` (`None`: a live query) reads the
    /// table `name`.
    fn feed(&self, name: &str, dir: Option<&std::path::Path>) -> Result<Feed, SqlError> {
        let source = self.source(name)?;
        if let Some(postgres) = &source.postgres {
            let files = dir.map(|dir| input_dir(dir, name));
            let feed = PostgresFeed::new(postgres.clone(), files.as_deref())?;
            return Ok(Feed::Postgres(Box::new(feed)));
        }
        let spec = |source: crate::table::TableSource| FileTable {
            path: source.path,
            schema: source.schema,
            format: source.format,
            changelog: source.changelog,
        };
        Ok(match &source.generated {
            Some(generated) => Feed::Rows(generated.clone()),
            None if self.monitor_interval(name).is_some() => Feed::Monitored(spec(source)),
            None => Feed::Once(spec(source)),
        })
    }
}

/// The directory, under the materialized table's data directory `dir`, of its copy of the
/// source `name`'s input: `input/<file_name(name)>` ([`crate::warehouse::file_name`]: a name
/// is never a path). A copy made before names were escaped so
/// (`input/<name with % and : escaped>`) is read where it is when that is a plain name.
fn input_dir(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let input = dir.join(crate::warehouse::INPUT_DIR);
    let escaped = input.join(crate::warehouse::file_name(name));
    let old = super::positions::escape(name);
    let plain = !old.is_empty() && old != "." && old != ".." && !old.contains(['/', '\0']);
    if plain && !escaped.exists() && input.join(&old).is_dir() {
        return input.join(old);
    }
    escaped
}

/// The round input of `files` (new files of `table`).
///
/// Errors: a file cannot be opened, or is a changelog (has an `op` column) in a table that is
/// not, or the other way round (the plan was made for the table's kind).
pub(super) fn open(
    table: &str,
    spec: &FileTable,
    files: &[String],
) -> Result<RoundInput, SqlError> {
    let (sources, _) =
        TypedSource::open_files(&spec.path, files, Some(spec.schema.clone()), &spec.format)
            .map_err(TableError::from)?;
    if let Some(odd) = sources.iter().find(|s| s.is_changelog() != spec.changelog) {
        let (is, table_is) = if spec.changelog {
            ("has no \"op\" column", "a changelog")
        } else {
            ("has an \"op\" column", "append-only")
        };
        return Err(TableError::Invalid(format!(
            "the file {} {is}, but table '{table}' is {table_is}: the files of a table are all changelogs or all append-only",
            odd.path()
        ))
        .into());
    }
    Ok(RoundInput::Files(table.to_string(), sources))
}

/// Whether `table` is still ACTIVATED with the definition `definition` in the catalog.
fn still_running(env: &TableEnv, table: &str, definition: &str) -> Result<bool, SqlError> {
    let Some(warehouse) = env.warehouse() else {
        return Ok(false);
    };
    Ok(warehouse
        .catalog()?
        .materialized
        .get(table)
        .is_some_and(|e| e.status == RefreshStatus::Activated && e.definition == definition))
}

/// Fails with the first malformed or refused row of the complete rounds, if any.
fn check_problems(run: &LiveRun, table: &str) -> Result<(), SqlError> {
    let problems = run.problems();
    match problems.first() {
        None => Ok(()),
        Some(first) => Err(TableError::Invalid(format!(
            "continuous refresh of {} read {} bad row(s), the first: {first}",
            identifier(table),
            problems.len()
        ))
        .into()),
    }
}

/// Publishes the run's current result as a new snapshot of `table` with `positions`, under
/// the warehouse's lock ([`write_changed`]; `first`: the run's first snapshot); its record.
fn publish(
    env: &TableEnv,
    table: &str,
    run: &LiveRun,
    positions: &Positions,
    first: bool,
) -> Result<RefreshRecord, SqlError> {
    let warehouse = env.warehouse().expect("the run checked it");
    let now = env.clock().now_ms();
    warehouse.update(|catalog| {
        let entry = catalog.materialized.get(table).ok_or_else(|| {
            TableError::Invalid(crate::materialized::missing_table(&identifier(table)))
        })?;
        let dir = warehouse.table_dir(table, entry)?;
        let previous = current(&dir)?;
        let mut writer = SnapshotWriter::begin(&dir, Some(&previous))?;
        let rows = write_changed(&mut writer, entry, run, (&previous, first))?;
        writer.set_input_positions(positions.record());
        let manifest = writer.publish(now, None, Vec::new())?;
        Ok(RefreshRecord {
            trigger: RefreshTrigger::Continuous,
            schedule_time: None,
            refresh_time_ms: now,
            partition: Vec::new(),
            snapshot_id: manifest.snapshot_id,
            rows,
        })
    })
}

/// Writes the snapshot of `run`'s result into `writer`, partition-wise: of a PARTITIONED BY
/// table, the files of the `previous` snapshot whose partition no round changed since it are
/// kept as they are (hard links) and only the changed partitions are written anew; a table
/// without partitions, and a run's `first` snapshot (its state was rebuilt by replaying the
/// rounds), is written whole. Returns the snapshot's rows.
///
/// Cost: the rows of the changed partitions, plus formatting each partition key once (keys
/// that format alike, a float's -0.0 and 0.0, share a partition's files and are rewritten
/// together).
fn write_changed(
    writer: &mut SnapshotWriter,
    entry: &MaterializedTableEntry,
    run: &LiveRun,
    (previous, first): (&Manifest, bool),
) -> Result<u64, SqlError> {
    let columns = partition_columns(entry);
    let changed = run.take_changed();
    if first || columns.is_empty() {
        let rows = run.rows_of(None);
        write_rows(writer, entry, &rows.iter().collect::<Vec<_>>())?;
        return Ok(rows.len() as u64);
    }
    let text = |key: &Row| partition_text(entry, &columns, key);
    let changed: BTreeSet<Vec<Option<String>>> =
        changed.iter().map(text).collect::<Result<_, _>>()?;
    let mut keys = Vec::new();
    for key in run.partitions() {
        if changed.contains(&text(&key)?) {
            keys.push(key);
        }
    }
    let mut kept = 0;
    for file in &previous.files {
        let values: Vec<Option<String>> = file.partition.iter().map(|(_, v)| v.clone()).collect();
        // A file without partition values is the header-only file of an empty table.
        if !values.is_empty() && !changed.contains(&values) {
            writer.keep_file(previous, file)?;
            kept += file.rows;
        }
    }
    let rows = run.rows_of(Some(&keys));
    write_rows(writer, entry, &rows.iter().collect::<Vec<_>>())?;
    Ok(kept + rows.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::input_dir;

    /// A source's copy lies at its escaped name under `input/` (issue 45: `../x` stays inside);
    /// a copy an earlier build made at the old name is read there while it is a plain name.
    #[test]
    fn a_source_copy_lies_at_its_escaped_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join(crate::warehouse::INPUT_DIR);
        let at = |name: &str| {
            let path = input_dir(dir.path(), name);
            path.strip_prefix(&input).unwrap().display().to_string()
        };
        assert_eq!(at("orders"), "orders");
        assert_eq!(at("../x"), "%2E%2E%2Fx");
        assert_eq!(at("a b"), "a%20b");
        std::fs::create_dir_all(input.join("a b")).unwrap();
        std::fs::create_dir_all(input.join("..")).unwrap();
        assert_eq!(at("a b"), "a b");
        assert_eq!(at(".."), "%2E%2E");
    }
}

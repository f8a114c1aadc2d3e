//! CONTINUOUS refreshes: a materialized table's definition runs as a live dataflow
//! ([`LiveRun`]) over sources that keep growing, and a snapshot of its result (a complete
//! round: never part of one) is published as soon as a round completes once `freshness` has
//! passed since the last snapshot, so snapshots are at most one freshness interval plus one
//! round behind their input.
//!
//! Sources, read in **rounds** (one every `interval`, the least `'source.monitor-interval'` of
//! the monitored tables the definition reads, 1 s without one):
//! - a filesystem table with `'source.monitor-interval'` is a monitored directory: each round
//!   lists it and reads the files it gained, each once and whole (as Flink's continuous file
//!   source: write a file elsewhere and move it in; a file that changes after it was read is
//!   not read again);
//! - a filesystem table without it (or a materialized table) is read once, in the first round;
//! - a `datagen` table gives each round its next `rows-per-second * interval` rows, up to its
//!   `number-of-rows`;
//! - a `nexmark` table is refused.
//!
//! **Positions and resume**: each snapshot's manifest records the input its rounds read
//! (`rounds`: their number; `file:<table>:<path>`: the round that read a file; per datagen
//! table `rows:<table>` the rows made and `round-rows:<table>` the rows a round takes). A run
//! that starts (the first, after `RESUME`, after a crash or a stop) reads those rounds again,
//! in order and batched as they were, which rebuilds the state the published snapshot was
//! computed from, and then goes on with new input: nothing is lost or counted twice, and
//! results that depend on arrival order (a keep-first deduplication) are the same as in an
//! uninterrupted run. A file read before that is gone is an error naming it. Rows read after
//! the last snapshot are read again by the next run (they were never published).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::error::SqlError;
use super::mt_create::identifier;
use super::mt_refresh::write_rows;
use crate::io::directory::files_now;
use crate::io::{DatagenSource, Generated, TypedSource};
use crate::materialized::{RefreshMode, RefreshStatus};
use crate::table::live::{LiveRun, RoundInput};
use crate::table::{TableEnv, TableError};
use crate::warehouse::{current, RefreshRecord, RefreshTrigger, SnapshotWriter};

/// How often rounds run when no monitored table sets it.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// Where a scanned table's input comes from.
enum Feed {
    /// Read once, in the first round.
    Once(FileTable),
    /// A monitored directory.
    Monitored(FileTable),
    /// A datagen table.
    Rows(std::sync::Arc<DatagenSource>),
}

/// A filesystem table's path, schema and format.
struct FileTable {
    path: String,
    schema: crate::repr::Schema,
    format: crate::io::Format,
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
    /// round its next `rows-per-second x interval` rows. The result of a complete round is
    /// published as a snapshot once the freshness has passed since the last one. The snapshot's
    /// manifest records the rounds' input, and a run first reads those rounds again, batched as
    /// they were: nothing is lost or counted twice across stops, suspensions and crashes
    /// (README, "Materialized tables").
    ///
    /// Errors: the table is not a CONTINUOUS materialized table of this environment's
    /// warehouse; its definition reads a source it cannot read continuously; a round read a
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
        let entry = warehouse
            .catalog()?
            .materialized
            .get(table)
            .cloned()
            .ok_or_else(|| invalid(crate::materialized::missing_table(&identifier(table))))?;
        if entry.refresh_mode != RefreshMode::Continuous {
            return Err(invalid(format!(
                "materialized table {} is refreshed in FULL mode, by its schedule",
                identifier(table)
            )));
        }
        let query = self.sql_query(&entry.definition)?;
        let plan = query
            .plan()
            .map_err(|e| TableError::Invalid(e.to_string()))?
            .clone();
        let mut feeds = BTreeMap::new();
        for name in plan.scans() {
            feeds.insert(name.to_string(), self.feed(name)?);
        }
        let interval = feeds
            .keys()
            .filter_map(|name| self.monitor_interval(name))
            .min()
            .unwrap_or(DEFAULT_INTERVAL);
        let workers = crate::table::live::workers(&self.options().timely_args)?;
        let dir = warehouse.table_dir(table);
        let mut positions = Positions::read(&current(&dir)?.input_positions, &feeds, interval);
        let options = self.options();
        let run = LiveRun::start(&plan, feeds.keys().cloned().collect(), workers, &options)?;
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
            if unpublished && last_publish.is_none_or(|at| at.elapsed() >= freshness) {
                let record = publish(self, table, &run, &positions)?;
                published(&record);
                last_publish = Some(Instant::now());
                unpublished = false;
            }
            sleep(interval.saturating_sub(started.elapsed()), stop);
        }
        Ok(run.close()?)
    }

    /// How a live run reads the table `name`.
    fn feed(&self, name: &str) -> Result<Feed, SqlError> {
        let source = self.source(name)?;
        let spec = |source: crate::table::TableSource| FileTable {
            path: source.path,
            schema: source.schema,
            format: source.format,
        };
        Ok(match &source.generated {
            Some(Generated::Datagen(d)) => Feed::Rows(std::sync::Arc::clone(d)),
            Some(Generated::Nexmark(_)) => {
                return Err(TableError::Invalid(format!(
                    "a CONTINUOUS materialized table cannot read the nexmark table '{name}' yet"
                ))
                .into())
            }
            None if self.monitor_interval(name).is_some() => Feed::Monitored(spec(source)),
            None => Feed::Once(spec(source)),
        })
    }
}

/// What the rounds have read so far (see the [module docs](self)), as a manifest records it.
struct Positions {
    rounds: u64,
    /// Per table, each file read and its round.
    files: BTreeMap<String, BTreeMap<String, u64>>,
    /// Per datagen table, rows made and rows a round takes.
    rows: BTreeMap<String, (u64, u64)>,
}

impl Positions {
    /// The positions a manifest recorded; for a datagen table not in them, a round takes
    /// `rows-per-second * interval` rows (at least one).
    fn read(
        recorded: &BTreeMap<String, u64>,
        feeds: &BTreeMap<String, Feed>,
        interval: Duration,
    ) -> Positions {
        let mut positions = Positions {
            rounds: recorded.get("rounds").copied().unwrap_or(0),
            files: BTreeMap::new(),
            rows: BTreeMap::new(),
        };
        for (key, &value) in recorded {
            if let Some((table, path)) = key.strip_prefix("file:").and_then(|k| k.split_once(':')) {
                let files = positions.files.entry(table.to_string()).or_default();
                files.insert(path.to_string(), value);
            }
        }
        for (name, feed) in feeds {
            if let Feed::Rows(source) = feed {
                let per_round = (source.rows_per_second() as f64 * interval.as_secs_f64()) as u64;
                let made = recorded.get(&format!("rows:{name}")).copied().unwrap_or(0);
                let per_round = recorded
                    .get(&format!("round-rows:{name}"))
                    .copied()
                    .unwrap_or(per_round.max(1));
                positions.rows.insert(name.clone(), (made, per_round));
            }
        }
        positions
    }

    /// As a manifest records them.
    fn record(&self) -> BTreeMap<String, u64> {
        let mut recorded = BTreeMap::from([("rounds".to_string(), self.rounds)]);
        for (table, files) in &self.files {
            for (path, round) in files {
                recorded.insert(format!("file:{table}:{path}"), *round);
            }
        }
        for (table, (made, per_round)) in &self.rows {
            recorded.insert(format!("rows:{table}"), *made);
            recorded.insert(format!("round-rows:{table}"), *per_round);
        }
        recorded
    }

    /// The input of published round `round`, read again.
    fn replay(
        &self,
        round: u64,
        feeds: &BTreeMap<String, Feed>,
    ) -> Result<Vec<RoundInput>, SqlError> {
        let mut inputs = Vec::new();
        for (table, feed) in feeds {
            match feed {
                Feed::Once(spec) | Feed::Monitored(spec) => {
                    let files: Vec<String> = self
                        .files
                        .get(table)
                        .into_iter()
                        .flatten()
                        .filter(|(_, &r)| r == round)
                        .map(|(path, _)| path.clone())
                        .collect();
                    if let Some(missing) = files.iter().find(|f| !std::path::Path::new(f).is_file())
                    {
                        return Err(TableError::Invalid(format!(
                            "the file {missing} of table '{table}', read by the published snapshot, is gone: the table's state cannot be rebuilt (refresh it from scratch: drop and create it)"
                        ))
                        .into());
                    }
                    if !files.is_empty() {
                        inputs.push(open(table, spec, &files)?);
                    }
                }
                Feed::Rows(source) => {
                    let (made, per_round) = self.rows[table];
                    let from = round.saturating_mul(per_round);
                    if from < made {
                        let to = (from + per_round).min(made);
                        inputs.push(RoundInput::Rows(table.clone(), source.clone(), from..to));
                    }
                }
            }
        }
        Ok(inputs)
    }

    /// The input of the next round (none: nothing new), recorded as read.
    fn next_round(&mut self, feeds: &BTreeMap<String, Feed>) -> Result<Vec<RoundInput>, SqlError> {
        let round = self.rounds;
        let mut inputs = Vec::new();
        for (table, feed) in feeds {
            match feed {
                Feed::Once(spec) | Feed::Monitored(spec) => {
                    let read = self.files.entry(table.clone()).or_default();
                    let once_done = matches!(feed, Feed::Once(_)) && !read.is_empty();
                    if once_done {
                        continue;
                    }
                    let new: Vec<String> = files_now(&spec.path)
                        .map_err(TableError::from)?
                        .into_iter()
                        .filter(|f| !read.contains_key(f))
                        .collect();
                    if new.is_empty() {
                        continue;
                    }
                    inputs.push(open(table, spec, &new)?);
                    read.extend(new.into_iter().map(|f| (f, round)));
                }
                Feed::Rows(source) => {
                    let (made, per_round) = self.rows.get_mut(table).expect("read() saw it");
                    let to = made.saturating_add(*per_round).min(source.rows());
                    if to > *made {
                        inputs.push(RoundInput::Rows(table.clone(), source.clone(), *made..to));
                        *made = to;
                    }
                }
            }
        }
        if !inputs.is_empty() {
            self.rounds += 1;
        }
        Ok(inputs)
    }
}

/// The round input of `files` (new files of `table`).
fn open(table: &str, spec: &FileTable, files: &[String]) -> Result<RoundInput, SqlError> {
    let (sources, _) =
        TypedSource::open_files(&spec.path, files, Some(spec.schema.clone()), &spec.format)
            .map_err(TableError::from)?;
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
/// the warehouse's lock; its record.
fn publish(
    env: &TableEnv,
    table: &str,
    run: &LiveRun,
    positions: &Positions,
) -> Result<RefreshRecord, SqlError> {
    let warehouse = env.warehouse().expect("the run checked it");
    let now = env.clock().now_ms();
    warehouse.update(|catalog| {
        let entry = catalog.materialized.get(table).ok_or_else(|| {
            TableError::Invalid(crate::materialized::missing_table(&identifier(table)))
        })?;
        let rows = run.snapshot();
        let rows: Vec<&crate::repr::Row> = rows.iter().collect();
        let dir = warehouse.table_dir(table);
        let previous = current(&dir)?;
        let mut writer = SnapshotWriter::begin(&dir, Some(&previous))?;
        write_rows(&mut writer, entry, &rows)?;
        writer.set_input_positions(positions.record());
        let manifest = writer.publish(now, None, Vec::new())?;
        Ok(RefreshRecord {
            trigger: RefreshTrigger::Continuous,
            schedule_time: None,
            refresh_time_ms: now,
            partition: Vec::new(),
            snapshot_id: manifest.snapshot_id,
            rows: rows.len() as u64,
        })
    })
}

/// Sleeps `time`, or until `stop` is set (looked at every 20 ms).
fn sleep(time: Duration, stop: &AtomicBool) {
    let until = Instant::now() + time;
    while !stop.load(Ordering::SeqCst) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

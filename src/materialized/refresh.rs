//! FULL refreshes: the definition run as a bounded dataflow (the same [`Table::execute`] as
//! any query) and its rows written as a new snapshot that replaces the whole table or one
//! partition ([`SnapshotWriter`]); the periodic ones are due at the schedule times of the
//! table's freshness by the environment's [`Clock`](crate::materialized::Clock).
//!
//! A refresh runs under the warehouse's lock, so two processes never refresh one table at
//! once, and a periodic refresh that another process already ran for a schedule time is
//! skipped.

use std::collections::HashMap;

use super::create::identifier;
use crate::materialized::{
    due_schedule_times, format_schedule_time, formatter_column, next_schedule_time,
    period_partition, refresh_query, RefreshMode, RefreshSchedule, RefreshStatus,
};
use crate::repr::cast::format_datum;
use crate::repr::{Datum, DatumVec, Row};
use crate::sql::SqlError;
use crate::table::{Table, TableEnv, TableError};
use crate::warehouse::{
    current, MaterializedTableEntry, RefreshRecord, RefreshTrigger, SnapshotWriter,
};

/// What starts a refresh: a schedule time (periodic) or a statement (manual, with its
/// partition spec).
pub(super) enum Trigger {
    Periodic(i64),
    Manual(Vec<(String, String)>),
}

impl TableEnv {
    /// Runs every due periodic refresh of the warehouse's ACTIVATED FULL tables, oldest
    /// schedule time first, and returns them: for each schedule time after the table's last
    /// one (or its creation) up to the clock's now, the refresh of the partition that
    /// `partition.fields.<f>.date-formatter` derives from it (Flink's periodic workflow:
    /// semantics D7, D8); a table without formatters is overwritten whole, once, for the
    /// latest schedule time. A SUSPENDED table is skipped; on `RESUME` its missed schedule
    /// times are caught up.
    ///
    /// Errors: a refresh that fails (its catalog entry is then unchanged: the next call tries
    /// that schedule time again).
    ///
    /// ```
    /// # use differential_temporal::table::tempfile_dir::Dir;
    /// use std::sync::Arc;
    /// use differential_temporal::materialized::ManualClock;
    /// use differential_temporal::table::TableEnv;
    ///
    /// let dir = Dir::new();
    /// let orders = dir.write("orders.csv", "id,amount\n1,10\n2,5\n");
    /// let clock = ManualClock::at("2024-01-01 00:10:00").unwrap();
    /// let env = TableEnv::new().with_clock(Arc::new(clock.clone())).with_warehouse(dir.path("wh")).unwrap();
    /// env.execute_sql(&format!("
    ///     CREATE TABLE orders (id INT, amount INT) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
    ///     CREATE MATERIALIZED TABLE total FRESHNESS = INTERVAL '1' HOUR AS SELECT SUM(amount) AS s FROM orders;")).unwrap();
    /// assert!(env.run_scheduled_refreshes().unwrap().is_empty());
    /// clock.advance_ms(3_600_000);
    /// let done = env.run_scheduled_refreshes().unwrap();
    /// assert_eq!(done[0].1.schedule_time.as_deref(), Some("2024-01-01 01:00:00"));
    /// assert_eq!(env.sql_query("SELECT * FROM total").unwrap().execute().unwrap().rows_as_text(), ["15"]);
    /// ```
    pub fn run_scheduled_refreshes(&self) -> Result<Vec<(String, RefreshRecord)>, SqlError> {
        let mut done = Vec::new();
        for (name, time) in self.refresh_schedule()?.due {
            if let Some(record) = self.run_periodic_refresh(&name, time)? {
                done.push((name, record));
            }
        }
        Ok(done)
    }

    /// The periodic refreshes [`run_scheduled_refreshes`](TableEnv::run_scheduled_refreshes)
    /// would run now (from the catalog as the warehouse holds it, for the tables registered
    /// in this environment), and the next schedule time after now: what a scheduler such as
    /// `dtemporal serve` runs one by one, and how long it may sleep. Empty without a
    /// warehouse.
    ///
    /// Errors: the catalog cannot be read.
    ///
    /// ```
    /// # use differential_temporal::table::tempfile_dir::Dir;
    /// use std::sync::Arc;
    /// use differential_temporal::materialized::ManualClock;
    /// use differential_temporal::table::TableEnv;
    ///
    /// let dir = Dir::new();
    /// let orders = dir.write("orders.csv", "id,amount\n1,10\n");
    /// let clock = ManualClock::at("2024-01-01 00:10:00").unwrap();
    /// let env = TableEnv::new().with_clock(Arc::new(clock.clone())).with_warehouse(dir.path("wh")).unwrap();
    /// env.execute_sql(&format!("
    ///     CREATE TABLE orders (id INT, amount INT) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
    ///     CREATE MATERIALIZED TABLE total FRESHNESS = INTERVAL '1' HOUR AS SELECT SUM(amount) AS s FROM orders;")).unwrap();
    /// clock.advance_ms(3_600_000);
    /// let schedule = env.refresh_schedule().unwrap();
    /// assert_eq!(schedule.due, [("total".to_string(), 1_704_070_800_000)]); // 01:00:00
    /// assert_eq!(schedule.next_ms, Some(1_704_074_400_000)); // 02:00:00
    /// ```
    pub fn refresh_schedule(&self) -> Result<RefreshSchedule, SqlError> {
        let mut schedule = RefreshSchedule::default();
        let Some(warehouse) = self.warehouse() else {
            return Ok(schedule);
        };
        let now = self.clock().now_ms();
        for (name, entry) in warehouse.catalog()?.materialized {
            if entry.refresh_mode != RefreshMode::Full
                || entry.status != RefreshStatus::Activated
                || !self.is_registered(&name)
            {
                continue;
            }
            let next = next_schedule_time(entry.freshness, now);
            schedule.next_ms = Some(schedule.next_ms.map_or(next, |n| n.min(next)));
            let after = entry.last_schedule_ms.unwrap_or(entry.created_at_ms);
            let mut due = due_schedule_times(entry.freshness, after, now);
            if formatters(&entry).is_empty() {
                due = due.pop().into_iter().collect();
            }
            schedule
                .due
                .extend(due.into_iter().map(|time| (name.clone(), time)));
        }
        Ok(schedule)
    }

    /// Runs the periodic refresh of materialized table `table` for the schedule time
    /// `schedule_ms` (ms since the epoch, one of [`refresh_schedule`](TableEnv::refresh_schedule)'s)
    /// and publishes its snapshot. `None`: it is no longer due (another process ran it, or
    /// the table was suspended or dropped meanwhile).
    ///
    /// Errors: the refresh fails (its catalog entry is then unchanged, so that schedule time
    /// stays due).
    pub fn run_periodic_refresh(
        &self,
        table: &str,
        schedule_ms: i64,
    ) -> Result<Option<RefreshRecord>, SqlError> {
        refresh(self, table, Trigger::Periodic(schedule_ms))
    }
}

/// The `partition.fields.<f>.date-formatter` options of a table: `(f, pattern)` in order.
fn formatters(entry: &MaterializedTableEntry) -> Vec<(String, String)> {
    entry
        .options
        .iter()
        .filter_map(|(k, v)| formatter_column(k).map(|c| (c.to_string(), v.clone())))
        .collect()
}

/// Runs one refresh of `name` and publishes its snapshot; `None` when a periodic refresh is no
/// longer due (another process ran it, or the table was suspended or dropped meanwhile).
pub(super) fn refresh(
    env: &TableEnv,
    name: &str,
    trigger: Trigger,
) -> Result<Option<RefreshRecord>, SqlError> {
    let warehouse = env.warehouse().ok_or_else(|| {
        TableError::Invalid(format!("materialized table '{name}' has no warehouse"))
    })?;
    let now = env.clock().now_ms();
    warehouse.update(|catalog| {
        let Some(entry) = catalog.materialized.get_mut(name) else {
            return match trigger {
                // Dropped since its schedule was read.
                Trigger::Periodic(_) => Ok(None),
                Trigger::Manual(_) => Err(TableError::Invalid(
                    crate::materialized::missing_table(&identifier(name)),
                )
                .into()),
            };
        };
        let (spec, schedule_time) = match &trigger {
            Trigger::Periodic(time) => {
                if entry.status != RefreshStatus::Activated
                    || entry.last_schedule_ms.is_some_and(|last| last >= *time)
                {
                    return Ok(None);
                }
                let at = format_schedule_time(*time);
                let spec = period_partition(&identifier(name), Some(&at), entry.freshness, &formatters(entry))
                    .map_err(TableError::Invalid)?;
                (spec, Some(at))
            }
            Trigger::Manual(spec) => (spec.clone(), None),
        };
        let plan = crate::sql::query_plan(env, &refresh_query(&entry.definition, &spec))?;
        let result = Table::new(env, Ok(plan)).execute()?;
        if let Some(bad) = result.malformed().first() {
            return Err(TableError::Invalid(format!(
                "refresh of {} read {} malformed input row(s), the first: {bad}",
                identifier(name),
                result.malformed().len()
            ))
            .into());
        }
        if let Some((_, refused)) = result.refused().first() {
            return Err(TableError::Invalid(format!(
                "refresh of {} refused {} row(s), the first: {refused:?}",
                identifier(name),
                result.refused().len()
            ))
            .into());
        }
        let types = |s: &crate::repr::Schema| s.fields.iter().map(|f| (f.name.clone(), f.ty.clone())).collect::<Vec<_>>();
        if types(result.schema()) != types(&entry.schema) {
            return Err(TableError::Invalid(format!(
                "the definition of {} now gives the columns {} instead of the table's {}: a table it reads was redefined",
                identifier(name),
                result.schema(),
                entry.schema
            ))
            .into());
        }
        let dir = warehouse.table_dir(name, entry)?;
        let previous = current(&dir)?;
        let mut writer = SnapshotWriter::begin(&dir, Some(&previous))?;
        for file in &previous.files {
            let in_spec = spec.iter().all(|(k, v)| {
                file.partition.iter().any(|(c, value)| c == k && value.as_deref() == Some(v))
            });
            if file.rows > 0 && !spec.is_empty() && !in_spec {
                writer.keep_file(&previous, file)?;
            }
        }
        let rows = result.final_rows();
        write_rows(&mut writer, entry, &rows)?;
        let manifest = writer.publish(now, schedule_time.clone(), spec.clone())?;
        let record = RefreshRecord {
            trigger: match trigger {
                Trigger::Periodic(_) => RefreshTrigger::Periodic,
                Trigger::Manual(_) => RefreshTrigger::Manual,
            },
            schedule_time,
            refresh_time_ms: now,
            partition: spec,
            snapshot_id: manifest.snapshot_id,
            rows: rows.len() as u64,
        };
        if let Trigger::Periodic(time) = trigger {
            entry.last_schedule_ms = Some(time);
        }
        entry.history.push(record.clone());
        Ok(Some(record))
    })
}

/// Writes `rows` of the table `entry` into `writer`, a file per partition; a snapshot is a
/// directory of at least one file, so a table without rows (and no file kept) gets one with
/// only a header.
pub(super) fn write_rows(
    writer: &mut SnapshotWriter,
    entry: &MaterializedTableEntry,
    rows: &[&Row],
) -> Result<(), SqlError> {
    for (values, rows) in partitions(entry, rows)? {
        let partition = entry.partition_keys.iter().cloned().zip(values).collect();
        writer.write_file(&entry.schema, partition, &rows)?;
    }
    if writer.file_count() == 0 {
        writer.write_file(&entry.schema, Vec::new(), &[])?;
    }
    Ok(())
}

/// The positions of `entry`'s partition columns in its schema, in `PARTITIONED BY` order.
pub(super) fn partition_columns(entry: &MaterializedTableEntry) -> Vec<usize> {
    let fields = &entry.schema.fields;
    entry
        .partition_keys
        .iter()
        .filter_map(|k| fields.iter().position(|f| &f.name == k))
        .collect()
}

/// The values of a partition key (the partition `columns`' datums, packed) as text, as a
/// partition's files name them (`None` for NULL).
pub(super) fn partition_text(
    entry: &MaterializedTableEntry,
    columns: &[usize],
    key: &Row,
) -> Result<Vec<Option<String>>, TableError> {
    let fields = &entry.schema.fields;
    key.iter()
        .zip(columns)
        .map(|(datum, &k)| match datum {
            Datum::Null => Ok(None),
            d => {
                let mut text = String::new();
                format_datum(d, &fields[k].ty.data_type, &mut text)
                    .map_err(|e| TableError::Invalid(e.to_string()))?;
                Ok(Some(text))
            }
        })
        .collect()
}

/// `rows` grouped by the values of `entry`'s partition columns: each partition's values as
/// text (as its files name them; `None` for NULL) with its rows, in the order of that text.
/// Rows are grouped by their packed partition key, so a partition's values are formatted once;
/// within a partition they keep their order in `rows`.
fn partitions<'r>(
    entry: &MaterializedTableEntry,
    rows: &[&'r Row],
) -> Result<Vec<(Vec<Option<String>>, Vec<&'r Row>)>, TableError> {
    let keys = partition_columns(entry);
    let mut groups: HashMap<Row, Vec<&Row>> = HashMap::new();
    let mut datums = DatumVec::new();
    for &row in rows {
        let datums = datums.borrow_with(row);
        let key = Row::pack(keys.iter().map(|&k| datums[k]));
        groups.entry(key).or_default().push(row);
    }
    let mut partitions = groups
        .into_iter()
        .map(|(key, rows)| Ok((partition_text(entry, &keys, &key)?, rows)))
        .collect::<Result<Vec<_>, TableError>>()?;
    partitions.sort_by(|a, b| a.0.cmp(&b.0));
    // Keys that differ in bytes but format alike (a float's -0.0 and 0.0) are one partition.
    partitions.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1.append(&mut later.1);
        }
        same
    });
    Ok(partitions)
}

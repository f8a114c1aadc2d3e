//! The versioned table: every version of every key, readable as of any event time or as a
//! history of validity intervals (Flink versioned tables, semantics rules A1-A5).
//!
//! Shapes: a versioned table is built from a collection of `(key, Version { time, seq, row })`
//! records ([`versions_from_changelog`] makes one from an upsert changelog). It is the shared
//! arrangement of [`arrange_versions`]: readers ([`VersionedTable::as_of`],
//! [`VersionedTable::history`], temporal joins via [`VersionedTable::arranged`]) all read the same
//! trace, none copies it.
//!
//! Semantics, per key `k`:
//!
//! * A1: each version is stamped with the row's own event time (never arrival time).
//! * A2: a version at time `t` is valid on `[t, t_next)`, `t_next` the next distinct version
//!   time of `k`; a delete version at `t` means `k` has no row on `[t, t_next)`.
//! * A3: as of `T`, `k` has the row of the version with the greatest `(time, seq)` such that
//!   `time <= T` (inclusive: a version stamped exactly `T`, delete included, is visible at `T`);
//!   no row if there is none or if it is a delete.
//! * A4: at most one version per `(key, time)`: the greatest `seq` wins (arrival order, not
//!   content, decides ties). Two versions with equal `(time, seq)` are malformed input; the one
//!   first in [`VersionVal`] order wins (a delete before a row, then the smaller row).
//! * A5: the changelog is read in Flink's ONLY_UPDATE_AFTER form: `-U` rows never become versions.
//!
//! A version is present while its accumulated count is positive: retracting a version (diff
//! `-1` of a record previously inserted) removes it, and every reader corrects its output.
//! Results are exact at every system time and do not depend on the number of workers or on
//! how input was cut into epochs.
//!
//! [`VersionVal`]: crate::version::VersionVal

mod operator;
pub mod reference;
#[cfg(test)]
mod tests;

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::{ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};

use crate::changelog::Changelog;
use crate::version::{arrange_versions, Version, VersionTrace};
use crate::{Change, RowKind, Seq, SysTime};

/// One row of a versioned table's history: a non-delete version and its validity interval.
///
/// Ordered by `(valid_from, valid_to, seq, row)`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct HistoryRow<E, V> {
    /// Event time from which the row is valid (the version's time), inclusive.
    pub valid_from: E,
    /// Event time at which the row stops being valid (the key's next distinct version time,
    /// a delete included), exclusive; `None` while the row is current.
    pub valid_to: Option<E>,
    /// Source sequence number of the version.
    pub seq: Seq,
    /// The row.
    pub row: V,
}

/// Turns an upsert changelog into versions (rules A1, A5).
///
/// Input: `(key, Change { seq, kind, row })` records; `time_of(row)` is the row's event time.
/// Output: `(key, Version)` records with the same diffs: `+I`/`+U` become a row version at the
/// row's own event time, `-D` a delete version at the `-D` row's own event time, and `-U` rows
/// are dropped: the build side is read in ONLY_UPDATE_AFTER form, as Flink's planner asks of a
/// temporal join's build side (rule A5). A `-D` of a key with no row is harmless: the key is
/// absent either way (rule A12). Cost: one `flat_map`, no state.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::testing::{batch, run_unary};
/// use differential_temporal_operators::versioned::versions_from_changelog;
/// use differential_temporal_operators::{Change, RowKind, Version};
///
/// // Rows are (event time, price).
/// let changelog = vec![
///     (1u8, Change::new(0, RowKind::Insert, (1i64, 10i64))),
///     (1, Change::new(1, RowKind::UpdateBefore, (1, 10))),
///     (1, Change::new(2, RowKind::UpdateAfter, (5, 12))),
///     (1, Change::new(3, RowKind::Delete, (9, 12))),
/// ];
/// let out = run_unary(1, batch(&changelog, &[]), |c| versions_from_changelog(c, |r| r.0));
/// let versions: Vec<_> = out.into_iter().map(|((_, v), _, _)| v).collect();
/// assert_eq!(
///     versions,
///     vec![Version::row(1, 0, (1, 10)), Version::row(5, 2, (5, 12)), Version::delete(9, 3)]
/// );
/// ```
pub fn versions_from_changelog<'s, K, E, V, F>(
    changelog: VecCollection<'s, SysTime, (K, Change<V>)>,
    time_of: F,
) -> VecCollection<'s, SysTime, (K, Version<E, V>)>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
    F: Fn(&V) -> E + 'static,
{
    changelog.flat_map(move |(key, change)| {
        let time = time_of(&change.row);
        version_of_change(change, time).ok().map(|v| (key, v))
    })
}

/// The version one changelog record makes, `time` its row's event time (the step of
/// [`versions_from_changelog`], for callers that read the time while keying the row): `+I`/`+U`
/// a row version, `-D` a delete version; a `-U` makes none (rule A5) and is given back as
/// `Err`.
pub fn version_of_change<E, V>(change: Change<V>, time: E) -> Result<Version<E, V>, Change<V>> {
    match change.kind {
        RowKind::Insert | RowKind::UpdateAfter => Ok(Version::row(time, change.seq, change.row)),
        RowKind::Delete => Ok(Version::delete(time, change.seq)),
        RowKind::UpdateBefore => Err(change),
    }
}

/// A versioned table: the versions of every key, arranged by key, newest first.
///
/// Key `K` (the primary key), event time `E`, row `V`. Build it with [`VersionedTable::new`]
/// from `(key, version)` records, or with [`VersionedTable::from_arranged`] over an arrangement
/// made by [`arrange_versions`]. Every reader shares the one arrangement; each holds its own
/// trace handle and advances its compaction as it consumes batches. Drop the table (or every
/// clone of [`VersionedTable::arranged`]) once the dataflow is built, or its handle pins the
/// trace's compaction.
pub struct VersionedTable<'s, K, E, V>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    arranged: Arranged<'s, VersionTrace<K, E, V>>,
}

impl<'s, K, E, V> VersionedTable<'s, K, E, V>
where
    K: ExchangeData + Hashable,
    E: ExchangeData,
    V: ExchangeData,
{
    /// Arranges `versions` (`(key, version)` records) into a versioned table named `name`.
    pub fn new(versions: VecCollection<'s, SysTime, (K, Version<E, V>)>, name: &str) -> Self {
        Self::from_arranged(arrange_versions(versions, name))
    }

    /// A versioned table over an existing versions arrangement (shared, not copied).
    pub fn from_arranged(arranged: Arranged<'s, VersionTrace<K, E, V>>) -> Self {
        VersionedTable { arranged }
    }

    /// The arrangement: key `K`, values [`VersionVal`](crate::VersionVal), newest first. Joins
    /// and other readers use it directly (clone it: clones share the trace).
    pub fn arranged(&self) -> &Arranged<'s, VersionTrace<K, E, V>> {
        &self.arranged
    }

    /// The snapshot of the table as of event time `t` (rule A3): `(key, row)` for every key
    /// whose version valid at `t` is a row, each with diff `+1`.
    ///
    /// Incremental: at each system time, only keys with new versions are looked up, each with
    /// one `seek_val` in the trace (O(log n) per changed key, plus the retracted versions
    /// stepped over), and only the difference is emitted.
    ///
    /// # Examples
    ///
    /// ```
    /// use differential_temporal_operators::testing::{batch, content_at, run_unary};
    /// use differential_temporal_operators::versioned::VersionedTable;
    /// use differential_temporal_operators::Version;
    ///
    /// // Key 'a' has rows 10 (from time 1) and 50 (from time 5); key 'b' is deleted at 4.
    /// let versions = vec![
    ///     ('a', Version::row(1i64, 0, 10)),
    ///     ('a', Version::row(5, 1, 50)),
    ///     ('b', Version::row(3, 2, 30)),
    ///     ('b', Version::delete(4, 3)),
    /// ];
    /// // Second epoch: a late version of 'a' at time 2 (seq 4) changes the snapshot as of 3.
    /// let late = vec![('a', Version::row(2i64, 4, 20))];
    /// let epochs = vec![batch(&versions, &[]).remove(0), batch(&late, &[]).remove(0)];
    /// let out = run_unary(2, epochs, |v| VersionedTable::new(v, "Products").as_of(3));
    /// assert_eq!(content_at(&out, 0), vec![(('a', 10), 1), (('b', 30), 1)]);
    /// assert_eq!(content_at(&out, 1), vec![(('a', 20), 1), (('b', 30), 1)]);
    /// ```
    pub fn as_of(&self, t: E) -> VecCollection<'s, SysTime, (K, V)> {
        self.as_of_named(t, "AsOf")
    }

    /// [`as_of`](Self::as_of) with a name for the dataflow operator.
    pub fn as_of_named(&self, t: E, name: &str) -> VecCollection<'s, SysTime, (K, V)> {
        operator::as_of(&self.arranged, t, name)
    }

    /// The table's history (rule A2): `(key, HistoryRow)` for every effective non-delete
    /// version (the greatest `seq` of its `(key, time)`, rule A4), valid on
    /// `[valid_from, valid_to)`, each with diff `+1`.
    ///
    /// Incremental: at each system time, only keys with new versions are revisited, and within
    /// a key only the rows from the last version before the oldest changed event time onwards:
    /// cost O(log n + versions of the key newer than that point) per changed key. Versions
    /// arriving in event-time order therefore cost O(1) each; a late version costs the number
    /// of its key's versions newer than it.
    ///
    /// # Examples
    ///
    /// ```
    /// use differential_temporal_operators::testing::{batch, run_unary};
    /// use differential_temporal_operators::versioned::{HistoryRow, VersionedTable};
    /// use differential_temporal_operators::Version;
    ///
    /// let versions = vec![
    ///     ('a', Version::row(1i64, 0, 10)),
    ///     ('a', Version::delete(4, 1)),
    ///     ('a', Version::row(6, 2, 60)),
    /// ];
    /// let out = run_unary(1, batch(&versions, &[]), |v| VersionedTable::new(v, "T").history());
    /// let rows: Vec<_> = out.into_iter().map(|((_, h), _, _)| h).collect();
    /// assert_eq!(
    ///     rows,
    ///     vec![
    ///         HistoryRow { valid_from: 1, valid_to: Some(4), seq: 0, row: 10 },
    ///         HistoryRow { valid_from: 6, valid_to: None, seq: 2, row: 60 },
    ///     ]
    /// );
    /// ```
    pub fn history(&self) -> VecCollection<'s, SysTime, (K, HistoryRow<E, V>)> {
        self.history_named("History")
    }

    /// [`history`](Self::history) with a name for the dataflow operator.
    pub fn history_named(&self, name: &str) -> VecCollection<'s, SysTime, (K, HistoryRow<E, V>)> {
        operator::history(&self.arranged, name)
    }
}

impl<'s, K, V> Changelog<'s, K, V>
where
    K: ExchangeData + Hashable,
    V: ExchangeData,
{
    /// The versioned table of this upsert changelog ([`versions_from_changelog`] then
    /// [`VersionedTable::new`]): `time_of(row)` is a row's event time, `name` names the
    /// arrangement. A revised record (diff `-1`) retracts its version.
    ///
    /// ```
    /// use differential_temporal_operators::changelog::Changelog;
    /// use differential_temporal_operators::testing::{content_at, run_unary};
    /// use differential_temporal_operators::{Change, RowKind::*};
    ///
    /// // Rates (event time, rate) of one currency; the rate of time 5 arrives first.
    /// let rates = vec![vec![
    ///     (('E', Change::new(0, Insert, (5i64, 116i64))), 1),
    ///     (('E', Change::new(1, UpdateAfter, (1, 114))), 1),
    /// ]];
    /// let out = run_unary(2, rates, |r| Changelog::new(r).versioned(|r| r.0, "Rates").as_of(3));
    /// assert_eq!(content_at(&out, 0), vec![(('E', (1, 114)), 1)]);
    /// ```
    pub fn versioned<E, F>(self, time_of: F, name: &str) -> VersionedTable<'s, K, E, V>
    where
        E: ExchangeData,
        F: Fn(&V) -> E + 'static,
    {
        VersionedTable::new(versions_from_changelog(self.into_changes(), time_of), name)
    }
}
